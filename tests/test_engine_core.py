"""The engine core on several parts (what the Spark engine does with its partitions, without
Spark): the parts' statistics combine into the whole input's, bit for bit, and a broken rule
gets the same error however the rows are split."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from evalcli.config import Config, parse_config
from evalcli.engine import core
from evalcli.engine.plan import bind
from evalcli.errors import InputDataError
from evalcli.runner import override, prepare, run_config


def _frames(family: str, n: int = 600) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(7)
    ids = rng.permutation(n)
    region = rng.choice(["north", "south", "east"], n)
    if family == "binary":
        label = rng.integers(0, 2, n)
        pred = {"score": np.clip(0.3 * label + rng.normal(0.35, 0.25, n), 0, 1).round(2)}
    else:  # targets far from 0 with a small spread: the exact sums' grids matter
        label = 1e6 + rng.normal(0, 1e-3, n)
        pred = {"prediction": label + rng.normal(0, 1e-4, n)}
    truth = pl.DataFrame({"id": ids, "label": label, "weight": rng.exponential(1.0, n)})
    return pl.DataFrame({"id": ids, **pred, "region": region}), truth


def _config(family: str, pred: pl.DataFrame, truth: pl.DataFrame, folder: Path,
            **more: Any) -> Config:
    pred.write_parquet(folder / "p.parquet")
    truth.write_parquet(folder / "t.parquet")
    return parse_config({"task": family, "predictions": str(folder / "p.parquet"),
                         "truth": str(folder / "t.parquet"), "group_by": ["region"],
                         "columns": {"weight": "weight"}, **more}, "test", folder)


def _in_parts(cfg: Config, pred: pl.DataFrame, truth: pl.DataFrame, folder: Path, n: int
              ) -> tuple[list[Any], list[Any]]:
    """The run's metrics and segments from ``n`` parts, each key's rows in one part."""
    whole = prepare(cfg)
    ctx = core.run_context(whole.plan, whole.aligned, "spark")
    stats = bind(whole.plan, ctx)
    parts = []
    for i in range(n):
        p, t = folder / f"p{i}.parquet", folder / f"t{i}.parquet"
        pred.filter(pl.col("id") % n == i).write_parquet(p)
        truth.filter(pl.col("id") % n == i).write_parquet(t)
        a = prepare(override(cfg, predictions=str(p), truth=str(t))).aligned
        parts.append(core.partials(whole.plan, a, stats, whole=False))
    core.verdict(whole.plan, whole.aligned, parts)
    overall, segments = core.combine(stats, whole.aligned, parts)
    return (core.values(whole.plan, overall, ctx),
            [(key, rows, core.values(whole.plan, st, ctx, segment=True))
             for key, rows, st in segments])


def _same(a: float | None, b: float | None) -> bool:
    return a == b or (a is not None and b is not None and math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("family", ["binary", "regression"])
def test_parts_combine_into_the_whole_bit_for_bit(family: str, tmp_path: Path) -> None:
    pred, truth = _frames(family)
    cfg = _config(family, pred, truth, tmp_path)
    expected = run_config(cfg, gating=False)
    metrics, segments = _in_parts(cfg, pred, truth, tmp_path, 3)
    assert [m.id for m in metrics] == [m.id for m in expected.metrics]
    for got, want in zip(metrics, expected.metrics, strict=True):
        assert _same(got.value, want.value), (got.id, got.value, want.value)
    assert [(k, r) for k, r, _ in segments] == [(s.key, s.rows) for s in expected.segments]
    for (_, _, got_seg), want_seg in zip(segments, expected.segments, strict=True):
        for got, want in zip(got_seg, want_seg.metrics, strict=True):
            assert _same(got.value, want.value), (got.id, got.value, want.value)


def test_a_broken_rule_gets_the_same_error_however_the_rows_are_split(tmp_path: Path) -> None:
    pred, truth = _frames("binary")
    bad = truth.with_columns(pl.when(pl.col("id").is_in([7, 3, 500])).then(None)
                             .otherwise(pl.col("label")).alias("label"))
    cfg = _config("binary", pred, bad, tmp_path)
    with pytest.raises(InputDataError) as whole:
        run_config(cfg)
    assert "3 row(s) with a null or NaN label" in str(whole.value)
    assert "first at id=3" in str(whole.value)
    for n in (2, 5):
        with pytest.raises(InputDataError) as split:
            _in_parts(cfg, pred, bad, tmp_path, n)
        assert str(split.value) == str(whole.value)


def _executors(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which Polars executor each in-memory pass of the process is collected on."""
    used: list[str] = []
    real = core.pass_engine

    def spy(pendings: Any) -> Any:
        used.append(real(pendings))
        return used[-1]

    monkeypatch.setattr(core, "pass_engine", spy)
    monkeypatch.setattr(core, "_STREAMING_FAILED", [])
    monkeypatch.setattr(core, "STREAMING_ROWS", 100)  # (these inputs have 600 rows)
    return used


@pytest.mark.parametrize("family", ["binary", "regression"])
def test_clean_rows_pass_on_the_streaming_executor_with_the_same_values(
        family: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass whose rows break no rule is collected on Polars' streaming executor (faster); on
    the in-memory one it gives the same values, intervals and segments to the last bit."""
    pred, truth = _frames(family)
    cfg = _config(family, pred, truth, tmp_path, uncertainty={"replicates": 200})
    used = _executors(monkeypatch)
    fast = run_config(cfg, gating=False)
    assert used == ["streaming"]
    monkeypatch.setattr(core, "_STREAMING_FAILED", ["as if a streaming pass had failed"])
    slow = run_config(cfg, gating=False)
    assert used == ["streaming", "in-memory"]
    assert fast.to_dict() == slow.to_dict()


def test_a_pass_over_bad_rows_runs_in_memory_and_a_failed_streaming_pass_ends_streaming(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pred, truth = _frames("binary")
    bad = truth.with_columns(pl.when(pl.col("id") == 3).then(None)
                             .otherwise(pl.col("label")).alias("label"))
    used = _executors(monkeypatch)
    with pytest.raises(InputDataError, match="null or NaN label"):
        run_config(_config("binary", pred, bad, tmp_path))
    assert used == ["in-memory"]
    # a streaming pass that fails all the same (simulated): the error is the same, and every
    # later pass of the process runs on the in-memory executor
    real = pl.collect_all

    def failing(queries: Any, **kw: Any) -> Any:
        if kw.get("engine") == "streaming":
            raise pl.exceptions.ComputeError("simulated failure")
        return real(queries, **kw)

    monkeypatch.setattr(pl, "collect_all", failing)
    cfg = _config("binary", pred, truth, tmp_path)
    with pytest.raises(Exception, match="simulated failure"):
        run_config(cfg, gating=False)
    assert used[1:] == ["streaming"] and core._STREAMING_FAILED
    monkeypatch.setattr(pl, "collect_all", real)
    assert run_config(cfg, gating=False).metrics
    assert used[2:] == ["in-memory"]
    # fewer rows than STREAMING_ROWS: in memory, where the in-memory executor is as fast
    monkeypatch.setattr(core, "_STREAMING_FAILED", [])
    monkeypatch.setattr(core, "STREAMING_ROWS", 601)
    run_config(cfg, gating=False)
    assert used[3:] == ["in-memory"]
