"""The terminal experience: stdout stays the report, stderr the messages; quiet, verbose, TTY."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
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


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """stderr as a terminal 80 columns wide: what it shows lands in the returned buffer."""
    import evalcli.cli.common as common

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=80, no_color=True, highlight=False)
    monkeypatch.setattr(common, "stderr", lambda: console)
    monkeypatch.setattr(common, "_stderr_is_terminal", lambda: True)
    return buf


def test_progress_on_a_terminal_shows_the_phase_the_inputs_and_the_time(terminal, tmp_path):
    pq = tmp_path / "preds.parquet"
    import polars as pl

    pl.DataFrame({"id": range(1234), "score": [0.5] * 1234}).write_parquet(pq)
    csv = tmp_path / "truth.csv"
    csv.write_text("id,label\n" + "".join(f"{i},1\n" for i in range(1234)))
    with progress(inputs=[str(pq), str(csv)]) as say:
        say("computing 3 metric(s)")
    shown = terminal.getvalue()
    assert "computing 3 metric(s)" in shown
    assert f"inputs: 1,234 rows + {_kb(csv)}" in shown  # the Parquet footer; the CSV's size
    assert "0:00:0" in shown  # elapsed time
    assert shown.rstrip().endswith("\x1b[2K") or "\x1b[1A" in shown  # cleared at the end
    assert say.elapsed is not None and say.elapsed >= 0


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def _kb(path: Path) -> str:
    return f"{path.stat().st_size / 1e3:.1f} kB"


def test_input_facts_read_nothing_but_a_parquet_footer(tmp_path, monkeypatch):
    """A CSV is never opened for a count (that would be a second pass over the data)."""
    from evalcli.cli.common import input_facts

    csv = tmp_path / "big.csv"
    csv.write_text("a\n" * 5000)
    opened: list[str] = []
    import builtins

    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: opened.append(str(f)) or
                        real_open(f, *a, **k))
    assert input_facts([str(csv), str(tmp_path), "https://host/x.csv", "-"]) == "inputs: 10.0 kB"
    assert opened == []


def test_the_summary_line_on_a_terminal_says_what_was_evaluated_and_how_long(cli, terminal):
    out = cli("run", str(CONFIGS / "binary-gated.yaml"), "-f", "none")
    assert out.exit_code == 0
    last = _plain(terminal.getvalue()).rstrip().splitlines()[-1]
    assert re.fullmatch(r"passed: 7 metrics, 4 gates · 228 rows in \d+\.\d\d s", last), last
    ranking = cli("run", str(CONFIGS / "ranking-lists.yaml"), "-f", "none")
    assert ranking.exit_code == 0
    last = _plain(terminal.getvalue()).rstrip().splitlines()[-1]
    assert re.fullmatch(r"done: 4 metrics, no gates · 39 queries in \d+\.\d\d s", last), last


def test_quiet_shows_nothing_even_on_a_terminal(cli, terminal):
    out = cli("run", str(CONFIGS / "binary-gated.yaml"), "-f", "none", "-q")
    assert out.exit_code == 0 and out.stderr == "" and terminal.getvalue() == ""


def test_no_color_is_respected(cli):
    out = cli("run", str(CONFIGS / "binary-gated.yaml"))
    assert "\x1b[" not in out.stdout and "\x1b[" not in out.stderr


def test_an_interval_note_several_metrics_share_is_one_footnote():
    """An interval's note that several metrics carry (binned replicates) is numbered and
    written once under the table, as their shared notes are; a caption (the threshold) and
    a note of one metric stay beside the value."""
    from evalcli.report import ReportFormat, render
    from evalcli.result import CI, AlignmentInfo, InputInfo, MetricResult, RunResult

    note = "replicates on binned scores, shifted by the binning error of the value"
    ms = [MetricResult(name, name, "binary", {}, "higher", 0.9,
                       ci=CI(0.85, 0.95, 0.95, "percentile", note=note))
          for name in ("auroc", "average_precision")]
    ms.append(MetricResult("peak_f1", "peak_f1", "binary", {}, "higher", 0.7,
                           caption="at threshold 0.42",
                           ci=CI(0.6, 0.8, 0.95, "percentile", note=note)))
    ms.append(MetricResult("ece", "ece", "binary", {}, "lower", 0.1,
                           ci=CI(None, None, 0.95, "percentile", reason="too few rows")))
    r = RunResult(task="binary", engine="polars", predictions=InputInfo("p.csv", 10),
                  truth=None, alignment=AlignmentInfo(10, 0, 0, "error"), metrics=ms)
    text = render(r, ReportFormat.table)
    assert text.count(note) == 1 and f"[1] interval: {note}" in text
    rows = {line.split()[0]: line for line in text.splitlines()
            if line.strip() and line.split()[0] in ("auroc", "average_precision", "peak_f1",
                                                    "ece")}
    assert rows["auroc"].rstrip().endswith("[1]")
    assert rows["average_precision"].rstrip().endswith("[1]")
    assert "at threshold 0.42" in rows["peak_f1"] and "[1]" in rows["peak_f1"]
    assert "no interval: too few rows" in rows["ece"]


def test_quiet_intervals_over_a_weightless_segment_print_nothing_on_stderr(tmp_path):
    """A segment whose rows all weigh 0 has no extreme in any replicate (regression's
    largest error): NumPy warned of the all-NaN slice on stderr, through -q. A fresh process,
    as a user runs it (pytest would catch the warning itself)."""
    import subprocess
    import sys

    import polars as pl

    path = tmp_path / "r.csv"
    pl.DataFrame({"id": range(12), "label": [float(i % 5) for i in range(12)],
                  "prediction": [i % 5 + 0.5 for i in range(12)],
                  "w": [0.0] * 4 + [1.5] * 8,
                  "seg": ["z"] * 4 + ["a"] * 8}).write_csv(path)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"task: regression\npredictions: {path}\ncolumns: {{weight: w}}\n"
                   "group_by: [seg]\nmetrics: [mae, max_error]\n")
    out = subprocess.run([sys.executable, "-m", "evalcli", "run", str(cfg), "--ci",
                          "--ci-method", "bootstrap", "-q", "-f", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert json.loads(out.stdout)["segments"]
