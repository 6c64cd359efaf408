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

from evalcli.decide.gates import check_confident
from evalcli.result import CI, Gate
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
    # min with require_confidence: pass only when the lower bound meets the minimum
    (Gate(min=0.9, require_confidence=0.95), 0.95, (0.90, 0.97), True),
    (Gate(min=0.9, require_confidence=0.95), 0.95, (0.89, 0.97), False),
    # max with require_confidence: pass only when the upper bound meets the maximum
    (Gate(max=0.2, require_confidence=0.95), 0.15, (0.10, 0.20), True),
    (Gate(max=0.2, require_confidence=0.95), 0.15, (0.10, 0.21), False),
    # both bounds
    (Gate(min=0.1, max=0.2, require_confidence=0.9), 0.15, (0.12, 0.18), True),
    (Gate(min=0.1, max=0.2, require_confidence=0.9), 0.15, (0.09, 0.18), False),
])
def test_decisions(gate: Gate, value: float, bounds: tuple[float, float], passed: bool) -> None:
    ok, why, verdict = check_confident(value, gate, ci(*bounds))
    assert ok is passed
    assert (why is None) is passed
    assert verdict.startswith("pass" if passed else "fail")


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
    assert len(rep["failures"]) == 2


def test_confidence_turns_intervals_on(cli: Cli, files: Path) -> None:
    (files / "t.yaml").write_text("task: binary\npredictions: d.csv\nmetrics:\n"
                                  "  - {metric: auroc, min: 0.5, require_confidence: 0.99}\n"
                                  "  - log_loss\n")
    r = cli("run", str(files / "t.yaml"), "-f", "json")
    rep = json.loads(r.stdout)
    assert rep["uncertainty"]["level"] == 0.95
    assert rep["metrics"][0]["gate_ci"]["method"] == "delong"
    assert rep["metrics"][1]["ci"]["method"] == "percentile"
