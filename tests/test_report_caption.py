"""A fact a metric states beside its value (its caption: peak F1's threshold) reaches every
report the same way, through the result, whatever the metric: no writer names one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

import evalcli
from evalcli.report import ReportFormat, render
from evalcli.result import AlignmentInfo, Gate, InputInfo, MetricResult, RunResult

WRITERS = sorted((Path(evalcli.__file__).parent / "report").glob("*.py"))


def _result(caption: str | None) -> RunResult:
    m = MetricResult(id="lift@7", metric="lift", family="binary", params={"k": 7},
                     direction="higher", value=2.5, details={"k": 7}, notes=["a note"],
                     gate=Gate(min=3.0), caption=caption)
    r = RunResult(task="binary", engine="polars", predictions=InputInfo("p.csv", 10),
                  truth=None, alignment=AlignmentInfo(10, 0, 0, "error"), metrics=[m],
                  passed=False, failures=["lift@7: 2.5 is below the minimum 3 (gate >= 3)"])
    m.passed, m.failure = False, "2.5 is below the minimum 3"
    return r


@pytest.mark.parametrize("fmt", [ReportFormat.table, ReportFormat.markdown,
                                 ReportFormat.html, ReportFormat.junit])
def test_every_writer_shows_a_caption_before_the_notes(fmt: ReportFormat) -> None:
    text = render(_result("at the 7th item"), fmt)
    assert re.search(r"at the 7th item\s*;\s*a note", text), text
    assert "at the 7th item" not in render(_result(None), fmt)


def test_the_json_report_leaves_the_caption_out() -> None:
    """The fact behind a caption is in ``details``; the JSON holds it once."""
    assert render(_result("at the 7th item"), ReportFormat.json) == \
        render(_result(None), ReportFormat.json)


def test_peak_f1_states_its_threshold_as_its_caption() -> None:
    r = evalcli.evaluate({"task": "binary", "metrics": ["peak_f1"]},
                         predictions=pl.DataFrame({"label": [0, 1, 1, 0],
                                                   "score": [0.1, 0.8, 0.4, 0.35]}))
    m = r.metric("peak_f1")
    assert m.caption == f"at threshold {m.details['threshold']:.6g}" == "at threshold 0.4"
    assert "caption" not in json.dumps(r.to_dict())


def test_no_writer_names_a_metric_to_caption_it() -> None:
    for path in WRITERS:
        assert not re.search(r"\.metric\s*==\s", path.read_text()), path.name


def test_no_writer_names_a_curves_summary() -> None:
    """The metrics that label a curve (AUROC on the ROC curve, AUPRC and average precision on
    the PR curve) come from the family (``Additions.areas``), not from names in a writer."""
    for path in WRITERS:
        text = path.read_text()
        for name in ("auroc", "auprc", "average_precision"):
            assert f'"{name}"' not in text, (path.name, name)


@pytest.mark.parametrize("fmt", [ReportFormat.table, ReportFormat.markdown,
                                 ReportFormat.html])
def test_a_note_several_metrics_share_is_written_once_as_a_footnote(fmt: ReportFormat
                                                                    ) -> None:
    """The binned-scores note of an interval, on every row of a run with scores, is one
    numbered footnote in every report with a table (a note of one metric stays beside it)."""
    from evalcli.result import CI

    shared = "replicates on binned scores, shifted by the binning error of the value"
    ms = [MetricResult(id=i, metric=i, family="binary", params={}, direction="higher",
                       value=0.8, notes=notes,
                       ci=CI(0.7, 0.9, 0.95, "percentile", note=shared))
          for i, notes in (("auroc", []), ("average_precision", ["only mine"]),
                           ("log_loss", []))]
    r = RunResult(task="binary", engine="polars", predictions=InputInfo("p.csv", 10),
                  truth=None, alignment=AlignmentInfo(10, 0, 0, "error"), metrics=ms,
                  passed=True, failures=[])
    text = re.sub(r' title="[^"]*"', "", render(r, fmt))  # (HTML's hover text on the CI)
    assert text.count("binning error") == 1, text
    assert text.count("[1]") == 4 and "only mine" in text, text
