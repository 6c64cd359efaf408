"""The terminal experience: stdout stays the report, stderr the messages; quiet, verbose, TTY."""

from __future__ import annotations

import io
import json

from rich.console import Console

from evalcli.cli.common import progress
from tests.conftest import CONFIGS


def test_json_stdout_is_clean_and_the_summary_is_on_stderr(cli, tmp_path):
    out = cli("run", str(CONFIGS / "binary-segments.yaml"), "-f", "json")
    assert out.exit_code == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["group_by"] == ["size"]
    assert out.stderr.strip() == "passed: 4 metrics, 5 gates"


def test_quiet_prints_nothing_on_stderr(cli, tmp_path):
    out = cli("run", str(CONFIGS / "binary-gated.yaml"), "-q", "-o", str(tmp_path / "r.md"))
    assert out.exit_code == 0 and out.stderr == ""
    assert (tmp_path / "r.md").exists()


def test_verbose_prints_the_steps_with_their_time(cli):
    out = cli("run", str(CONFIGS / "binary-gated.yaml"), "-v", "-f", "none")
    assert out.exit_code == 0
    lines = out.stderr.strip().splitlines()
    assert lines[0].startswith("reading the inputs' schemas and aligning them: ")
    assert lines[1].startswith("computing 7 metric(s) in one pass: ")
    assert lines[-1] == "passed: 7 metrics, 4 gates"


def test_failed_gates_summary_and_exit_code(cli, tmp_path):
    strict = tmp_path / "strict.yaml"
    strict.write_text((CONFIGS / "binary-segments.yaml").read_text().replace(
        "min: 0.9}", "min: 0.995}").replace("predictions: ../", f"predictions: {CONFIGS}/../")
        .replace("truth: ../", f"truth: {CONFIGS}/../"))
    out = cli("run", str(strict), "-f", "none")
    assert out.exit_code == 1
    assert out.stderr.strip().splitlines()[-1] == "FAILED: 2 of 5 gates failed (4 metrics)"


def test_bundled_baseline_config_passes(cli):
    out = cli("run", str(CONFIGS / "binary-baseline.yaml"))
    assert out.exit_code == 0, out.stderr
    assert "compared with the baseline binary-baseline-accepted.json" in out.stdout


def test_no_progress_display_without_a_terminal():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False)
    import evalcli.cli.common as common

    original = common.stderr
    common.stderr = lambda: console  # type: ignore[assignment]
    try:
        with progress() as say:
            say("computing")
    finally:
        common.stderr = original  # type: ignore[assignment]
    assert buf.getvalue() == ""


def test_progress_spinner_on_a_terminal_is_transient():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=80)
    import evalcli.cli.common as common

    original, is_terminal = common.stderr, common._stderr_is_terminal
    common.stderr = lambda: console  # type: ignore[assignment]
    common._stderr_is_terminal = lambda: True  # type: ignore[assignment]
    try:
        with progress() as say:
            say("computing 3 metric(s)")
    finally:
        common.stderr = original  # type: ignore[assignment]
        common._stderr_is_terminal = is_terminal  # type: ignore[assignment]
    assert "computing 3 metric(s)" in buf.getvalue()  # drawn, then cleared


def test_no_color_is_respected(cli):
    out = cli("run", str(CONFIGS / "binary-gated.yaml"))
    assert "\x1b[" not in out.stdout and "\x1b[" not in out.stderr
