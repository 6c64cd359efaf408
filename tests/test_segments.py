"""Segments (group_by): per-segment values equal each segment evaluated alone; per-segment gates."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from evalcli.config import parse_config
from evalcli.errors import ConfigError
from evalcli.report import ReportFormat, render
from evalcli.result import RunResult
from evalcli.runner import run_config

BINARY = ["accuracy", "precision", "recall", "f1", "mcc", "balanced_accuracy", "auroc",
          "auprc", "average_precision", "log_loss", "brier", "peak_f1"]
REGRESSION = ["mse", "rmse", "mae", "r2", "explained_variance", "mape", "max_error",
              "median_absolute_error"]


def _run(tmp_path: Path, df: pl.DataFrame, task: str, metrics: list[Any],
         **cfg: Any) -> RunResult:
    path = tmp_path / f"data_{len(list(tmp_path.iterdir()))}.parquet"
    df.write_parquet(path)
    config = {"task": task, "predictions": str(path), "metrics": metrics, **cfg}
    return run_config(parse_config(config, "test", tmp_path))


def _binary_frame(seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = 300
    region = rng.choice(["north", "south", "east"], n)
    label = rng.integers(0, 2, n)
    score = np.clip(0.5 * label + rng.normal(0.25, 0.25, n), 0, 1).round(2)  # ties on purpose
    tier = rng.choice([1, 2], n)
    weight = rng.uniform(0.5, 2.0, n)
    df = pl.DataFrame({"id": np.arange(n), "region": region, "tier": tier, "label": label,
                       "score": score, "weight": weight})
    # a segment with positives only: AUROC is undefined there, never 0
    extra = pl.DataFrame({"id": [n, n + 1], "region": ["west", "west"], "tier": [1, 1],
                          "label": [1, 1], "score": [0.9, 0.2], "weight": [1.0, 1.0]})
    return pl.concat([df, extra.cast(df.schema)])


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_binary_segments_equal_each_segment_alone(tmp_path, weighted):
    df = _binary_frame()
    cols = {"weight": "weight"} if weighted else {}
    r = _run(tmp_path, df, "binary", BINARY, group_by=["region", "tier"], columns=cols)
    assert [s.label for s in r.segments] == sorted(
        f"region={a}, tier={b}" for a, b in df.select("region", "tier").unique().rows())
    for seg in r.segments:
        part = df.filter((pl.col("region") == seg.key["region"])
                         & (pl.col("tier") == seg.key["tier"]))
        alone = _run(tmp_path, part, "binary", BINARY, columns=cols)
        assert seg.rows == part.height
        for m, ref in zip(seg.metrics, alone.metrics, strict=True):
            assert m.id == ref.id
            assert _close(m.value, ref.value), (seg.label, m.id, m.value, ref.value)
            assert m.notes == ref.notes
            assert m.details == ref.details


def test_regression_segments_equal_each_segment_alone(tmp_path):
    rng = np.random.default_rng(3)
    n = 200
    y = rng.normal(10, 3, n)
    df = pl.DataFrame({"group": rng.choice(["a", "b", "c"], n), "label": y,
                       "prediction": y + rng.normal(0, 1, n)})
    # a one-row segment: R² has a constant target there (reported with a note, not as data)
    df = pl.concat([df, pl.DataFrame({"group": ["d"], "label": [4.0], "prediction": [5.0]})])
    r = _run(tmp_path, df, "regression", REGRESSION, group_by="group")
    assert len(r.segments) == 4
    for seg in r.segments:
        alone = _run(tmp_path, df.filter(pl.col("group") == seg.key["group"]), "regression",
                     REGRESSION)
        for m, ref in zip(seg.metrics, alone.metrics, strict=True):
            assert _close(m.value, ref.value), (seg.label, m.id)
            assert m.notes == ref.notes


def test_undefined_segment_values_are_reported_as_such(tmp_path):
    r = _run(tmp_path, _binary_frame(), "binary", ["auroc", "precision[zero_division=nan]"],
             group_by="region")
    west = next(s for s in r.segments if s.key["region"] == "west")
    auroc = west.metrics[0]
    assert auroc.value is None and auroc.notes == ["undefined: no negative labels"]
    report = json.loads(render(r, ReportFormat.json))
    seg = next(s for s in report["segments"] if s["key"] == {"region": "west"})
    assert seg["metrics"][0]["value"] is None
    assert seg["metrics"][0]["notes"] == ["undefined: no negative labels"]
    table = render(r, ReportFormat.table)
    west_line = next(line for line in table.splitlines() if line.strip().startswith("west"))
    assert west_line.split()[:3] == ["west", "2", "n/a"]
    assert "undefined: no negative labels" in table


def test_gate_on_every_segment_names_the_failing_segment(tmp_path):
    df = _binary_frame()
    entry = {"metric": "auroc", "min": 0.5, "segments": {"min": 0.6}}
    r = _run(tmp_path, df, "binary", [entry], group_by="region")
    assert r.metrics[0].passed is True
    assert not r.passed
    # west has no negatives: undefined, so its gate cannot pass; it is named
    assert r.failures == ["auroc [region=west]: the value is undefined, so the gate cannot pass "
                          "(gate >= 0.6)"]
    for seg in r.segments:
        assert seg.metrics[0].gate is not None and seg.metrics[0].gate.segment == "*"


def test_gate_on_a_listed_segment_only(tmp_path):
    df = _binary_frame()
    values = {s.key["region"]: s.metrics[0].value
              for s in _run(tmp_path, df, "binary", ["accuracy"], group_by="region").segments}
    south = values["south"]
    entry = {"metric": "accuracy", "segments": {"region = south": {"min": south + 0.01},
                                                "*": {"min": 0.0}}}
    r = _run(tmp_path, df, "binary", [entry], group_by="region")
    assert r.failures == [f"accuracy [region=south]: {south:.6g} is below the minimum "
                          f"{south + 0.01:g} (gate >= {south + 0.01:g})"]
    assert r.metrics[0].gate is None  # no overall gate
    gates = {s.label: s.metrics[0].gate for s in r.segments}
    assert gates["region=south"].min == south + 0.01  # the named gate beats '*'
    assert gates["region=north"].min == 0.0


def test_gate_on_a_segment_not_in_the_data_fails(tmp_path):
    entry = {"metric": "accuracy", "segments": {"region=nowhere": {"min": 0.1}}}
    r = _run(tmp_path, _binary_frame(), "binary", [entry], group_by="region")
    assert not r.passed
    assert r.failures[0].startswith("accuracy [region=nowhere]: the segment is not in the data")


def test_segment_gates_without_group_by_are_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="no group_by"):
        _run(tmp_path, _binary_frame(), "binary", [{"metric": "auroc", "segments": {"min": 1}}])


def test_segment_label_must_name_the_group_by_columns(tmp_path):
    entry = {"metric": "auroc", "segments": {"country=FR": {"min": 0.5}}}
    with pytest.raises(ConfigError, match="group_by column"):
        _run(tmp_path, _binary_frame(), "binary", [entry], group_by="region")


def test_segment_gate_needs_a_bound(tmp_path):
    entry = {"metric": "auroc", "segments": {"region=west": {}}}
    with pytest.raises(ConfigError, match="no min or max"):
        _run(tmp_path, _binary_frame(), "binary", [entry], group_by="region")


def test_unknown_key_in_a_segment_gate(tmp_path):
    entry = {"metric": "auroc", "segments": {"*": {"mni": 0.5}}}
    with pytest.raises(ConfigError, match="unknown key"):
        _run(tmp_path, _binary_frame(), "binary", [entry], group_by="region")


def test_no_gate_reports_segment_failures_without_failing(tmp_path):
    df = _binary_frame()
    path = tmp_path / "d.parquet"
    df.write_parquet(path)
    cfg = parse_config({"task": "binary", "predictions": str(path), "group_by": "region",
                        "metrics": [{"metric": "auroc", "segments": {"min": 0.6}}]},
                       "test", tmp_path)
    r = run_config(cfg, gating=False)
    assert r.passed and r.failures


def test_cli_group_by_on_compare(cli, tmp_path):
    path = tmp_path / "scored.csv"
    _binary_frame().write_csv(path)
    out = cli("compare", str(path), "--group-by", "region", "-m", "auroc", "-f", "json")
    assert out.exit_code == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["group_by"] == ["region"]
    assert {s["key"]["region"] for s in report["segments"]} == {"north", "south", "east",
                                                                 "west"}
