"""Gates that decide with a stated confidence (issue 13 §3): ``confidence`` fails only when
the value is significantly on the wrong side of the threshold, ``require_confidence`` passes only
when it is significantly on the right side; both by the one-sided bound at that confidence,
which is the bound of the two-sided interval at ``2c - 1`` (checked against statsmodels'
Wilson interval)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.proportion import proportion_confint

from evalcli.decide.gates import apply_gates, check_confident, check_gate, plain_verdict
from evalcli.result import CI, Gate, MetricResult
from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def ci(lo: float | None, hi: float | None, reason: str | None = None) -> CI:
    return CI(lo, hi, 0.9, "wilson", reason=reason)


@pytest.mark.parametrize(("gate", "value", "bounds", "passed"), [
    # min with confidence: fail only when the upper bound is below the minimum
    (Gate(min=0.9, confidence=0.95), 0.85, (0.80, 0.89), False),
    (Gate(min=0.9, confidence=0.95), 0.85, (0.80, 0.90), True),   # the bound at the threshold
    (Gate(min=0.9, confidence=0.95), 0.95, (0.92, 0.97), True),
    # max with confidence: fail only when the lower bound is above the maximum
    (Gate(max=0.2, confidence=0.95), 0.25, (0.21, 0.30), False),
    (Gate(max=0.2, confidence=0.95), 0.25, (0.19, 0.30), True),
    (Gate(max=0.2, confidence=0.95), 0.25, (0.20, 0.30), True),   # the bound at the threshold
    (Gate(max=0.2, confidence=0.95), 0.15, (0.10, 0.19), True),
    # min with require_confidence: pass only when the lower bound meets the minimum
    (Gate(min=0.9, require_confidence=0.95), 0.95, (0.90, 0.97), True),
    (Gate(min=0.9, require_confidence=0.95), 0.95, (0.89, 0.97), False),
    (Gate(min=0.9, require_confidence=0.95), 0.85, (0.80, 0.89), False),
    # max with require_confidence: pass only when the upper bound meets the maximum
    (Gate(max=0.2, require_confidence=0.95), 0.15, (0.10, 0.20), True),
    (Gate(max=0.2, require_confidence=0.95), 0.15, (0.10, 0.21), False),
    # both bounds
    (Gate(min=0.1, max=0.2, require_confidence=0.9), 0.15, (0.12, 0.18), True),
    (Gate(min=0.1, max=0.2, require_confidence=0.9), 0.15, (0.09, 0.18), False),
    (Gate(min=0.1, max=0.2, require_confidence=0.9), 0.15, (0.12, 0.21), False),
    (Gate(min=0.1, max=0.2, require_confidence=0.9), 0.15, (0.10, 0.20), True),
    (Gate(min=0.1, max=0.2, confidence=0.9), 0.25, (0.19, 0.30), True),
    (Gate(min=0.1, max=0.2, confidence=0.9), 0.05, (0.01, 0.09), False),
])
def test_decisions(gate: Gate, value: float, bounds: tuple[float, float], passed: bool) -> None:
    ok, why, verdict = check_confident(value, gate, ci(*bounds))
    assert ok is passed
    assert (why is None) is passed
    assert verdict.startswith("pass" if passed else "fail")
    # check_gate decides the same way when handed the interval
    assert check_gate(value, gate, ci(*bounds)) == (ok, why)


@pytest.mark.parametrize(("gate", "value", "bounds", "failure", "verdict"), [
    (Gate(min=0.9, confidence=0.95), 0.86, (0.84, 0.88),
     "0.86 is significantly below the minimum 0.9: its one-sided 95% upper bound is 0.88",
     "fail: 0.86 is significantly below 0.9: the one-sided 95% upper bound 0.88 < 0.9"),
    (Gate(min=0.9, confidence=0.95), 0.884, (0.861, 0.912), None,
     "pass: 0.884 is below 0.9 but not significantly: the one-sided 95% upper bound "
     "0.912 >= 0.9"),
    (Gate(min=0.9, confidence=0.95), 0.93, (0.91, 0.95), None,
     "pass: 0.93 >= 0.9; one-sided 95% bounds [0.91, 0.95]"),
    (Gate(max=0.2, confidence=0.975), 0.26, (0.21, 0.31),
     "0.26 is significantly above the maximum 0.2: its one-sided 97.5% lower bound is 0.21",
     "fail: 0.26 is significantly above 0.2: the one-sided 97.5% lower bound 0.21 > 0.2"),
    (Gate(max=0.2, confidence=0.95), 0.22, (0.18, 0.26), None,
     "pass: 0.22 is above 0.2 but not significantly: the one-sided 95% lower bound "
     "0.18 <= 0.2"),
    (Gate(min=0.9, require_confidence=0.95), 0.93, (0.89, 0.96),
     "0.93 is not shown to meet the minimum 0.9 at 95%: its one-sided lower bound is 0.89",
     "fail: 0.93 is not shown to be >= 0.9 at 95%: the one-sided lower bound 0.89 < 0.9"),
    (Gate(max=0.2, require_confidence=0.9), 0.15, (0.11, 0.21),
     "0.15 is not shown to meet the maximum 0.2 at 90%: its one-sided upper bound is 0.21",
     "fail: 0.15 is not shown to be <= 0.2 at 90%: the one-sided upper bound 0.21 > 0.2"),
    (Gate(min=0.1, max=0.2, require_confidence=0.9), 0.15, (0.12, 0.18), None,
     "pass: 0.15 is shown to meet the gate at 90%: the one-sided lower bound 0.12 >= 0.1 "
     "and upper bound 0.18 <= 0.2"),
])
def test_messages_state_value_bound_threshold_and_confidence(
        gate: Gate, value: float, bounds: tuple[float, float], failure: str | None,
        verdict: str) -> None:
    assert check_confident(value, gate, ci(*bounds)) == (failure is None, failure, verdict)


def test_plain_gates_keep_their_point_decision() -> None:
    assert check_gate(0.89, Gate(min=0.9)) == (False, "0.89 is below the minimum 0.9")
    assert check_gate(0.89, Gate(min=0.9), ci(0.85, 0.95)) == check_gate(0.89, Gate(min=0.9))
    assert check_gate(0.21, Gate(max=0.2)) == (False, "0.21 is above the maximum 0.2")
    assert plain_verdict(0.9, Gate(min=0.9)) == "pass: 0.9 >= 0.9"
    assert plain_verdict(0.25, Gate(min=0.1, max=0.2)) == "fail: 0.25 > 0.2"
    assert plain_verdict(0.05, Gate(min=0.1, max=0.2)) == "fail: 0.05 < 0.1"


def _metric(value: float | None, gate: Gate, bounds: tuple[float, float] | None,
            level: float = 0.9) -> MetricResult:
    m = MetricResult(id="auroc", metric="auroc", family="binary", params={},
                     direction="higher", value=value, gate=gate)
    if bounds is not None:
        m.ci = CI(bounds[0], bounds[1], level, "delong")
    return m


def test_apply_gates_decides_by_the_interval_at_the_gate_level() -> None:
    gate = Gate(min=0.9, confidence=0.95)
    # the run's interval is at 0.95; the gate needs 0.90: it is in `intervals`
    m = _metric(0.884, gate, (0.85, 0.92), level=0.95)
    m.intervals[0.9] = CI(0.86, 0.905, 0.9, "delong")
    assert apply_gates([m], " [region=EU]") == []
    assert m.gate_ci is m.intervals[0.9]
    assert m.passed is True and m.failure is None
    assert m.verdict is not None and "upper bound 0.905 >= 0.9" in m.verdict
    assert any("not significantly" in n and "0.905" in n for n in m.notes)
    # only the 95% interval, whose upper bound is above the minimum: the gate cannot decide
    m = _metric(0.884, gate, (0.85, 0.92), level=0.95)
    failures = apply_gates([m], " [region=EU]")
    assert m.gate_ci is None and m.passed is False
    assert failures == ["auroc [region=EU]: the value has no interval, so the gate cannot "
                        "decide at 95% confidence (gate >= 0.9 (fail only if significant at "
                        "95%))"]


def test_apply_gates_undefined_value_and_interval() -> None:
    gate = Gate(min=0.9, require_confidence=0.95)
    undefined = _metric(None, gate, None)
    undefined.ci = CI(None, None, 0.9, "delong", reason="one class only")
    no_bounds = _metric(0.97, gate, None)
    no_bounds.ci = CI(None, None, 0.9, "delong", reason="one class only")
    plain = _metric(None, Gate(min=0.9), None)
    failures = apply_gates([undefined, no_bounds, plain])
    assert [m.passed for m in (undefined, no_bounds, plain)] == [False, False, False]
    assert failures[0].startswith("auroc: the value is undefined, so the gate cannot pass")
    assert "no interval (one class only)" in failures[1]
    assert failures[2].startswith("auroc: the value is undefined")
    assert no_bounds.verdict is not None and no_bounds.verdict.startswith("fail")
    assert plain.verdict is None and plain.gate_ci is None


def test_no_interval_or_value_never_passes() -> None:
    for gate in (Gate(min=0.9, confidence=0.95), Gate(min=0.9, require_confidence=0.95)):
        ok, why, _ = check_confident(0.95, gate, None)
        assert not ok and "no interval" in (why or "")
        ok, why, _ = check_confident(0.95, gate, ci(None, None, "one class only"))
        assert not ok and "one class only" in (why or "")
        ok, why, _ = check_confident(None, gate, ci(0.9, 0.99))
        assert not ok and "undefined" in (why or "")


@pytest.fixture
def files(tmp_path: Path) -> Path:
    rng = np.random.default_rng(11)
    n = 300
    y = rng.integers(0, 2, n)
    s = np.clip(0.35 * y + rng.uniform(0, 0.65, n), 0, 1)
    pl.DataFrame({"id": range(n), "label": y, "score": s}).write_csv(tmp_path / "d.csv")
    return tmp_path


def test_run_decides_by_the_one_sided_bound(cli: Cli, files: Path) -> None:
    d = pl.read_csv(files / "d.csv")
    hits = int(((d["score"] >= 0.5).cast(int) == d["label"]).sum())
    acc = hits / d.height
    lo90, hi90 = proportion_confint(hits, d.height, alpha=0.10, method="wilson")
    base = "task: binary\npredictions: d.csv\nmetrics:\n"
    # a minimum just above the point value but below the one-sided 95% upper bound: passes
    mid = (acc + hi90) / 2
    (files / "a.yaml").write_text(base + f"  - {{metric: accuracy, min: {mid}, "
                                  "confidence: 0.95}\n")
    r = cli("run", str(files / "a.yaml"), "-f", "json")
    assert r.exit_code == 0, r.stderr
    m = json.loads(r.stdout)["metrics"][0]
    assert m["gate_ci"]["level"] == pytest.approx(0.9)
    assert m["gate_ci"]["low"] == pytest.approx(lo90, abs=1e-12)
    assert m["gate_ci"]["high"] == pytest.approx(hi90, abs=1e-12)
    assert m["passed"] is True and "not significantly" in " ".join(m["notes"])
    assert m["ci"]["level"] == 0.95  # the report's own interval stays at the run's level
    # above the upper bound: fails, and says why
    (files / "b.yaml").write_text(base + f"  - {{metric: accuracy, min: {hi90 + 0.001}, "
                                  "confidence: 0.95}\n")
    r = cli("run", str(files / "b.yaml"), "-f", "json")
    assert r.exit_code == 1
    rep = json.loads(r.stdout)
    assert "significantly below" in rep["failures"][0]
    assert f"{hi90:.6g}" in rep["failures"][0]
    # require_confidence: a minimum between the lower bound and the value fails
    (files / "c.yaml").write_text(base + f"  - {{metric: accuracy, min: {(lo90 + acc) / 2}, "
                                  "require_confidence: 0.95}\n")
    r = cli("run", str(files / "c.yaml"), "-f", "json")
    assert r.exit_code == 1
    assert "not shown to meet" in json.loads(r.stdout)["failures"][0]


def test_segment_gates_with_confidence(cli: Cli, files: Path) -> None:
    d = pl.read_csv(files / "d.csv").with_columns(
        (pl.col("id") % 2).cast(pl.String).alias("half"))
    d.write_csv(files / "s.csv")
    (files / "s.yaml").write_text(
        "task: binary\npredictions: s.csv\ngroup_by: [half]\nmetrics:\n"
        "  - metric: accuracy\n    segments: {min: 0.99, require_confidence: 0.9}\n")
    r = cli("run", str(files / "s.yaml"), "-f", "json")
    assert r.exit_code == 1
    rep = json.loads(r.stdout)
    for seg in rep["segments"]:
        m = seg["metrics"][0]
        assert m["gate"]["require_confidence"] == 0.9
        assert m["gate_ci"]["level"] == pytest.approx(0.8)
        assert m["passed"] is False
        assert m["verdict"].startswith("fail: ") and "at 90%" in m["verdict"]
    assert sorted(f.split(":")[0] for f in rep["failures"]) == ["accuracy [half=0]",
                                                                "accuracy [half=1]"]
    assert all("not shown to meet the minimum 0.99 at 90%" in f for f in rep["failures"])
    # one named segment, a confidence gate whose minimum is above the segment's value but
    # below its one-sided 95% upper bound (Wilson at 90%): passes, and says so
    half = d.filter(pl.col("half") == "0")
    hits = int(((half["score"] >= 0.5).cast(int) == half["label"]).sum())
    _, hi90 = proportion_confint(hits, half.height, alpha=0.10, method="wilson")
    mid = (hits / half.height + hi90) / 2
    (files / "n.yaml").write_text(
        "task: binary\npredictions: s.csv\ngroup_by: [half]\nmetrics:\n"
        f"  - metric: accuracy\n    segments: {{'half=0': {{min: {mid}, confidence: 0.95}}}}\n")
    r = cli("run", str(files / "n.yaml"), "-f", "json")
    assert r.exit_code == 0, r.stderr
    seg = next(g for g in json.loads(r.stdout)["segments"] if str(g["key"]["half"]) == "0")
    m = seg["metrics"][0]
    assert m["passed"] is True
    assert m["gate_ci"]["high"] == pytest.approx(hi90, abs=1e-12)
    assert "but not significantly" in m["verdict"] and f"{hi90:.6g}" in m["verdict"]


def test_confidence_turns_intervals_on(cli: Cli, files: Path) -> None:
    (files / "t.yaml").write_text("task: binary\npredictions: d.csv\nmetrics:\n"
                                  "  - {metric: auroc, min: 0.5, require_confidence: 0.99}\n"
                                  "  - log_loss\n")
    r = cli("run", str(files / "t.yaml"), "-f", "json")
    rep = json.loads(r.stdout)
    assert rep["uncertainty"]["level"] == 0.95
    assert rep["metrics"][0]["gate_ci"]["method"] == "delong"
    assert rep["metrics"][1]["ci"]["method"] == "percentile"
