"""The terminal table at 80 and 120 columns (issue 16, items 3-5): golden files of every sample
config and of ``diff``, and properties that hold at any width — no line wider than the
terminal, every metric id, value and header whole on one line, the footer's facts unbroken.

Regenerate after an intended change: ``EVALCLI_UPDATE_GOLDEN=1 pytest tests/test_terminal_width.py``
and review the diff of ``tests/golden/terminal/``.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalcli.cli import app
from evalcli.report import alignment_facts, format_value
from evalcli.report.table import render_text
from evalcli.result import AlignmentInfo, Gate, InputInfo, MetricResult, RunResult, SegmentResult
from tests.conftest import CONFIGS

GOLDEN = Path(__file__).parent / "golden" / "terminal"
WIDTHS = (80, 120)
SAMPLE_CONFIGS = sorted(p.name for p in CONFIGS.glob("*.yaml"))


def evalcli(width: int, *args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args), env={"NO_COLOR": "1", "COLUMNS": str(width),
                                                "TERM": "dumb"})
    return r.exit_code, r.stdout, r.stderr


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("EVALCLI_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {name}: EVALCLI_UPDATE_GOLDEN=1 writes it"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from the golden file"


def lines_of(text: str) -> list[str]:
    return text.splitlines()


def assert_fits(text: str, width: int) -> None:
    for line in lines_of(text):
        assert len(line) <= width, f"{len(line)} > {width}: {line!r}"
    assert "…" not in text  # nothing cut


def assert_whole(text: str, *tokens: str) -> None:
    """Each token (a metric id, a number, a header) sits whole on some line."""
    lines = lines_of(text)
    for token in tokens:
        assert any(token in line for line in lines), f"{token!r} is broken or missing"


def assert_row(text: str, *cells: str, stacked: bool = False) -> None:
    """Some line holds all ``cells``, in this order (an id and its value stay on one row);
    ``stacked``: or the first cell's line and the next one (an id on a line of its own)."""
    pattern = ".*".join(re.escape(c) for c in cells)
    lines = lines_of(text)
    rows = lines + ([f"{a} {b}" for a, b in itertools.pairwise(lines)
                     if cells[0] in a] if stacked else [])
    assert any(re.search(pattern, row) for row in rows), f"no row with {cells}"


def check_report(text: str, report: dict[str, Any], width: int) -> None:
    assert_fits(text, width)
    for m in report["metrics"]:
        value = m["value"]
        matrix = isinstance((m.get("details") or {}).get("matrix"), list)
        if isinstance(value, int | float) and not isinstance(value, bool) and not matrix:
            assert_row(text, m["id"], format_value(value))
        else:
            assert_whole(text, m["id"])
        if m.get("gate"):
            assert_whole(text, "status")
    for seg in report.get("segments", []):
        for m in seg["metrics"]:
            assert_whole(text, m["id"])
            if isinstance(m["value"], int | float):
                assert_whole(text, format_value(m["value"]))
    for fact in _facts(report):
        assert_whole(text, fact)


def _facts(report: dict[str, Any]) -> list[str]:
    a = report["alignment"]
    if "queries_in_both" in a:
        return [f"queries: {a['queries_in_both']:,} in both files"]
    return [f"rows evaluated: {a['matched'] - a['dropped_nulls']:,}"]


# --------------------------------------------------------------------------- sample configs

@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each sample config's JSON report (run once)."""
    folder = tmp_path_factory.mktemp("reports")
    out = {}
    for name in SAMPLE_CONFIGS:
        path = folder / f"{name}.json"
        code, _, err = evalcli(120, "run", str(CONFIGS / name), "-f", "none", "-q",
                               "-o", str(path))
        assert code in (0, 1), err
        out[name] = json.loads(path.read_text())
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("config", SAMPLE_CONFIGS)
def test_sample_config_at_width(config, width, reports):
    code, text, err = evalcli(width, "run", str(CONFIGS / config))
    assert code in (0, 1), err
    check_report(text, reports[config], width)
    check_golden(f"{config.removesuffix('.yaml')}-{width}.txt", text)


# --------------------------------------------------------------------------- diff

@pytest.fixture
def diff_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, str]:
    """The shipped accepted report, a fresh run of its config, and a run whose log loss got
    worse and AUROC better (names relative to the working folder, for stable titles)."""
    monkeypatch.chdir(tmp_path)
    accepted = json.loads((CONFIGS / "binary-baseline-accepted.json").read_text())
    Path("accepted.json").write_text(json.dumps(accepted))
    code, _, err = evalcli(120, "run", str(CONFIGS / "binary-baseline.yaml"), "-f", "none",
                           "-q", "--no-gate", "-o", "fresh.json")
    assert code == 0, err
    moved = json.loads(Path("fresh.json").read_text())
    for m in moved["metrics"]:
        m["value"] = {"log_loss": 0.1585, "auroc": 0.9971}.get(m["id"], m["value"])
    Path("moved.json").write_text(json.dumps(moved))
    return "accepted.json", "fresh.json", "moved.json"


GATES = ("--max-drop", "0.005", "--max-relative-drop", "log_loss=0.05")


@pytest.mark.parametrize("width", WIDTHS)
def test_diff_of_a_fresh_run_with_the_shipped_baseline(width, diff_reports):
    accepted, fresh, _ = diff_reports
    code, text, err = evalcli(width, "diff", accepted, fresh, *GATES)
    assert code == 0, err
    assert_fits(text, width)
    assert "e-1" not in text and "+0.00%" not in text and "-0.00%" not in text
    for id_ in ("auroc", "average_precision", "log_loss", "recall[threshold=0.3]"):
        assert_row(text, id_, "= 0.0000", "0.00%")
    assert_whole(text, "status", "candidate − baseline")
    check_golden(f"diff-fresh-{width}.txt", text)


@pytest.mark.parametrize("width", WIDTHS)
def test_diff_with_changes(width, diff_reports):
    accepted, _, moved = diff_reports
    code, text, err = evalcli(width, "diff", accepted, moved, *GATES)
    assert code == 1, err
    assert_fits(text, width)
    assert_row(text, "log_loss", "0.1185", "0.1585", "▼ +0.0400", "+33.75%", "FAIL")
    assert_row(text, "auroc", "0.9947", "0.9971", "▲ +0.0024", "+0.24%", "pass")
    assert_whole(text, "(0.118503 → 0.1585, +33.75%)")
    check_golden(f"diff-moved-{width}.txt", text)


# --------------------------------------------------------------------------- wide results

def _m(id_: str, value: float | None, gate: Gate | None = None, notes: list[str] | None = None,
       details: dict[str, Any] | None = None) -> MetricResult:
    return MetricResult(id=id_, metric=id_.split("[")[0].split("@")[0], family="multiclass",
                        params={}, direction="higher", value=value, details=details or {},
                        notes=notes or [], gate=gate)


IDS = ["accuracy", "recall[label=a label with spaces]", "map@10[denominator=min_k_relevant]",
       "top_k_accuracy@3", "cohen_kappa[weights=quadratic]", "f1[average=weighted]",
       "precision[label=8]", "log_loss"]


def wide_result() -> RunResult:
    """A result wider than any terminal: long ids with spaces, 8 metrics over 6 segments, a
    15-class confusion matrix, long notes, a gate per segment."""
    labels = [f"class_{i}" for i in range(15)]
    matrix = [[(1000 * (i == j)) + i + j for j in range(15)] for i in range(15)]
    long_note = ("queries without a relevant item are left out of the mean "
                 "(no_relevant=drop); see 'evalcli metrics show map' for the conventions")
    metrics = [_m("confusion_matrix", None, details={"labels": labels, "matrix": matrix}),
               *(_m(id_, 0.5 + i / 100, Gate(min=0.4) if i % 3 == 0 else None,
                    notes=[long_note] if "map" in id_ else []) for i, id_ in enumerate(IDS))]
    segments = [SegmentResult({"region": f"region-{s}", "tier": "gold" if s % 2 else "silver"},
                              1000 + s, [_m("confusion_matrix", 1000 + s,
                                            details=metrics[0].details), *(
                                  _m(id_, None if (s, i) == (2, 1) else 0.4 + s / 50,
                                     Gate(min=0.45, segment="*") if i == 0 else None)
                                  for i, id_ in enumerate(IDS))]) for s in range(6)]
    r = RunResult(task="multiclass", engine="polars",
                  predictions=InputInfo("p.parquet", 6015, {}),
                  truth=InputInfo("t.parquet", 6015, {}),
                  alignment=AlignmentInfo(6015, 0, 0, "error"), metrics=metrics,
                  group_by=["region", "tier"], segments=segments)
    r.failures = ["accuracy [region=region-0, tier=silver]: 0.4 is below the minimum 0.45 "
                  "(gate >= 0.45)"]
    r.passed = False
    return r


@pytest.mark.parametrize("width", [60, 80, 100, 120, 160])
def test_a_wide_result_switches_layout_and_breaks_nothing(width):
    r = wide_result()
    text = render_text(r, width)
    assert_fits(text, width)
    assert_whole(text, *IDS, "status", "region-5", "1,005")
    for fact in alignment_facts(r):  # whole when it fits, else wrapped between words
        assert_whole(text, *([fact] if len(fact) <= width else fact.split()))
    for i, id_ in enumerate(IDS):
        assert_row(text, id_, format_value(0.5 + i / 100), stacked=width < 80)
    for label in ("class_0", "class_14"):  # the matrix, split over tables when too wide
        assert_whole(text, label)
    assert_whole(text, "1,000", "15×15")
    assert "1005.0000" not in text and "1,005.0000" not in text  # a matrix is not a number
    assert_whole(text, "(no_relevant=drop);")  # a note, wrapped between words


@pytest.mark.parametrize("width", WIDTHS)
def test_wide_result_golden(width):
    check_golden(f"wide-result-{width}.txt", render_text(wide_result(), width))


# --------------------------------------------------------------------------- metrics

@pytest.mark.parametrize("width", [60, *WIDTHS])
@pytest.mark.parametrize("args", [("metrics",), ("metrics", "show", "ndcg"),
                                  ("metrics", "show", "log_loss", "-f", "binary")])
def test_metric_listings_break_no_token(width, args):
    code, text, err = evalcli(width, *args)
    assert code == 0, err
    assert_fits(text, width)
    from evalcli.metrics.registry import get_registry

    reg = get_registry()
    shown = [m for m in reg if args[1:2] != ("show",) or m.name == args[2]]
    for m in shown:
        if args[1:2] == ("show",) and len(args) > 3 and m.family != args[4]:
            continue
        assert_whole(text, m.name, *m.aliases)
        for p in m.params:
            if args[1:2] == ("show",):
                assert_whole(text, p.name, repr(p.default))
            elif p.default is not None:
                assert_whole(text, f"{p.name}={p.default}")
