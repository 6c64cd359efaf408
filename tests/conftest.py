"""Shared fixtures: a CLI runner that separates stdout from stderr, sample paths."""

from __future__ import annotations

import os
from collections.abc import Callable
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
