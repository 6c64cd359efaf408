"""Golden files of the Markdown and JUnit reports, from a hand-built result; JUnit read back.

Regenerate after an intended change: ``EVALCLI_UPDATE_GOLDEN=1 pytest tests/test_report_golden.py``
and review the diff of ``tests/golden/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml, Skipped

from evalcli._version import __version__
from evalcli.decide.diff import Gates, diff_reports
from evalcli.decide.gates import evaluate_gates
from evalcli.report import ReportFormat, render
from evalcli.result import (
    AlignmentInfo,
    ChangeGate,
    Gate,
    InputInfo,
    MetricResult,
    RunResult,
    SegmentResult,
    to_dict,
)

GOLDEN = Path(__file__).parent / "golden"


def _m(id_: str, value: float | None, gate: Gate | None = None, direction: str = "higher",
       notes: list[str] | None = None, details: dict[str, object] | None = None,
       params: dict[str, object] | None = None, caption: str | None = None) -> MetricResult:
    return MetricResult(id=id_, metric=id_.split("[")[0].split("@")[0], family="binary",
                        params=params or {}, direction=direction, value=value,
                        details=details or {}, notes=notes or [], gate=gate, caption=caption)


def sample_result(gating: bool = True, baseline: bool = True) -> RunResult:
    """A binary run with overall, per-segment and baseline gates; one of each fails."""
    metrics = [
        _m("auroc", 0.912345, Gate(min=0.9)),
        _m("log_loss", 0.41, Gate(max=0.4), direction="lower"),
        _m("precision[threshold=0.7]", 0.0, params={"threshold": 0.7},
           notes=["tp + fp is 0 (zero_division=0): reported as 0"]),
        _m("peak_f1", 0.8, details={"threshold": 0.42}, caption="at threshold 0.42"),
    ]
    segments = [
        SegmentResult({"region": "north"}, 120, [
            _m("auroc", 0.93), _m("log_loss", 0.35, direction="lower"),
            _m("precision[threshold=0.7]", 0.5), _m("peak_f1", 0.82)]),
        SegmentResult({"region": "west|x"}, 3, [
            _m("auroc", None, notes=["undefined: no negative labels"]),
            _m("log_loss", 0.2, direction="lower"), _m("precision[threshold=0.7]", 1.0),
            _m("peak_f1", 1.0)]),
    ]
    r = RunResult(
        task="binary", engine="polars",
        predictions=InputInfo("preds.csv", 123, {"score": "p"}),
        truth=InputInfo("truth.csv", 125, {"label": "y"}),
        alignment=AlignmentInfo(matched=123, only_in_predictions=0, only_in_truth=2,
                                unmatched_policy="drop"),
        metrics=metrics, group_by=["region"], segments=segments, gating=gating,
    )
    evaluate_gates(r, {"auroc": {"*": Gate(min=0.85, segment="*")}})
    if baseline:
        base = to_dict(r)
        for m in base["metrics"]:
            m["value"] = {"auroc": 0.93, "log_loss": 0.40}.get(m["id"], m["value"])
        d = diff_reports(base, to_dict(r), Gates(ChangeGate(max_drop=0.01),
                                                 {"log_loss": ChangeGate(max_drop=0.05)}),
                         base_name="accepted.json", cand_name="this run")
        r.baseline = d
        r.failures += d.failures
        r.passed = not r.failures if gating else True
    if not gating:
        for m in r.metrics:
            m.passed = None
    return r


def _check_golden(name: str, text: str) -> None:
    text = text.replace(f"evalcli {__version__}", "evalcli VERSION").replace(
        f'value="{__version__}"', 'value="VERSION"')
    path = GOLDEN / name
    if os.environ.get("EVALCLI_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from the golden file"


def test_markdown_golden():
    _check_golden("report.md", render(sample_result(), ReportFormat.markdown))


def test_markdown_gating_off_golden():
    _check_golden("report-no-gate.md",
                  render(sample_result(gating=False, baseline=False), ReportFormat.markdown))


def test_junit_golden():
    _check_golden("report.xml", render(sample_result(), ReportFormat.junit))


def test_markdown_puts_the_verdict_first_and_failures_last():
    md = render(sample_result(), ReportFormat.markdown)
    assert md.splitlines()[0] == "## ❌ evalcli · binary — 3 of 8 gates failed"
    sections = [line for line in md.splitlines() if line.startswith("#")]
    assert sections[-1] == "### Failures"
    # a pipe inside a segment value does not break the table
    assert "| west\\|x | 3 | n/a ❌ |" in md


@pytest.fixture
def junit(tmp_path: Path) -> JUnitXml:
    path = tmp_path / "report.xml"
    path.write_text(render(sample_result(), ReportFormat.junit), encoding="utf-8")
    return JUnitXml.fromfile(str(path))


def test_junit_is_read_by_a_junit_reader(junit):
    suites = {s.name: s for s in junit}
    assert set(suites) == {"evalcli.binary", "evalcli.binary.segments",
                           "evalcli.binary.baseline"}
    assert (junit.tests, junit.failures, junit.errors, junit.skipped) == (8, 3, 0, 0)
    main = suites["evalcli.binary"]
    cases = {c.name: c for c in main}
    assert set(cases) == {"auroc >= 0.9", "log_loss <= 0.4"}
    assert cases["auroc >= 0.9"].is_passed
    (failure,) = cases["log_loss <= 0.4"].result
    assert isinstance(failure, Failure)
    assert failure.message == "log_loss: 0.41 is above the maximum 0.4 (gate <= 0.4)"
    props = {p.name: p.value for p in main.properties()}
    assert props["metric.precision[threshold=0.7]"] == "0"
    assert props["task"] == "binary"


def test_junit_segment_and_baseline_cases(junit):
    suites = {s.name: s for s in junit}
    seg = {c.name: c for c in suites["evalcli.binary.segments"]}
    assert set(seg) == {"auroc [region=north] >= 0.85", "auroc [region=west|x] >= 0.85"}
    (failure,) = seg["auroc [region=west|x] >= 0.85"].result
    assert "undefined" in failure.message
    base = {c.name: c for c in suites["evalcli.binary.baseline"]}
    (failure,) = base["auroc vs baseline: drop <= 0.01"].result
    assert failure.message.startswith("auroc vs baseline: worse by 0.01766 (0.93 → 0.912345")
    assert base["log_loss vs baseline: drop <= 0.05"].is_passed


def test_junit_with_gating_off_skips_instead_of_failing(tmp_path):
    path = tmp_path / "r.xml"
    path.write_text(render(sample_result(gating=False), ReportFormat.junit), encoding="utf-8")
    xml = JUnitXml.fromfile(str(path))
    assert xml.failures == 0 and xml.skipped == 3
    skipped = [c for s in xml for c in s if c.result and isinstance(c.result[0], Skipped)]
    assert all(c.result[0].message.startswith("gating off (would fail:") for c in skipped)


def test_junit_without_gates_is_an_empty_valid_suite(tmp_path):
    r = sample_result(baseline=False)
    for m in r.metrics:
        m.gate = None
    evaluate_gates(r, {})
    path = tmp_path / "r.xml"
    path.write_text(render(r, ReportFormat.junit), encoding="utf-8")
    xml = JUnitXml.fromfile(str(path))
    assert xml.tests == 0 and [s.name for s in xml] == ["evalcli.binary"]


def test_reports_from_the_cli_are_written_atomically_side_by_side(cli, tmp_path):
    from tests.conftest import CONFIGS

    paths = [tmp_path / n for n in ("r.json", "r.md", "r.xml")]
    out = cli("run", str(CONFIGS / "binary-gated.yaml"), "-f", "none",
              *(a for p in paths for a in ("-o", str(p))))
    assert out.exit_code == 0, out.stderr
    assert all(p.exists() for p in paths)
    assert not list(tmp_path.glob(".*.tmp"))
    xml = JUnitXml.fromfile(str(paths[2]))
    assert (xml.tests, xml.failures) == (4, 0)
    assert paths[1].read_text().startswith("## ✅ evalcli · binary — passed (4 gates)")
    assert out.stderr.strip().splitlines()[-1] == "passed: 7 metrics, 4 gates"
