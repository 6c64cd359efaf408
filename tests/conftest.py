"""Shared fixtures: a CLI runner that separates stdout from stderr, sample paths."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_data"
CONFIGS = ROOT / "configs"


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def cli() -> Callable[..., CliResult]:
    """Run ``evalcli ARGS`` in-process; returns exit code, stdout and stderr apart."""
    from evalcli.cli import app

    def invoke(*args: str) -> CliResult:
        runner = CliRunner()
        env = {"NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb"}
        r = runner.invoke(app, list(args), env=env, catch_exceptions=False)
        return CliResult(r.exit_code, r.stdout, r.stderr)

    return invoke


@pytest.fixture(autouse=True)
def _no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    os.environ.setdefault("COLUMNS", "200")


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_stay_in_the_session(tmp_path_factory: pytest.TempPathFactory
                                         ) -> Iterator[None]:
    """Temporary files of evalcli itself (the traceback of an internal error, exit 3) go to
    the session's folder, in this process and in the processes the tests start."""
    import tempfile

    folder = tmp_path_factory.mktemp("tmp")
    saved = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = str(folder)
    os.environ["TMPDIR"] = str(folder)
    try:
        yield
    finally:
        tempfile.tempdir = saved[0]
        if saved[1] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[1]
