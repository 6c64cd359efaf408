"""Curves as data: ROC and precision-recall points (binary), residuals (regression).

They come from small statistics computed in the same pass as the metrics (see
``run_polars(extra=...)``): the weighted positives and negatives per distinct score (the
statistic AUROC and AUPRC already use, so with those metrics nothing more is computed), and the
weight per residual ``y − ŷ`` rounded to 3 significant digits (a table of at most a few thousand
rows, whatever the input's size; enough for a histogram, not for a metric).

ROC points, one per distinct score ``t`` (highest first), predicting positive when
``score >= t``: ``fpr = fp(t) / N``, ``tpr = tp(t) / P``, preceded by (0, 0) at ``t = +inf``.
PR points at the same thresholds: ``recall = tp(t) / P``, ``precision = tp(t) / (tp(t) + fp(t))``.
Counts are weighted by the weight column.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import polars as pl

from evalcli.metrics.base import Context, FrameStat, Stat
from evalcli.metrics.binary import SCORE_COUNTS, score_counts
from evalcli.metrics.stats import sum_by

RESIDUALS = "report.residuals"


def _residuals_build(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    e = (pl.col("label").cast(pl.Float64) - pl.col("prediction").cast(pl.Float64))
    return lf.group_by([*keys, e.round_sig_figs(3).alias("residual")]).agg(
        pl.col("weight").sum().alias("weight"))


def residuals_stat() -> FrameStat:
    """Weight per residual (label − prediction) rounded to 3 significant digits."""
    return FrameStat(RESIDUALS, _residuals_build, partial(sum_by, by=["residual"]))


def display_stats(task: str, roles: frozenset[str], options: Mapping[str, Any]) -> dict[str, Stat]:
    """The statistics behind the curves of a task (empty when the task has none)."""
    if task == "binary" and "score" in roles:
        st = score_counts({}, Context(task, roles, options))
        return {st.key: st}
    if task == "regression" and {"label", "prediction"} <= roles:
        return {RESIDUALS: residuals_stat()}
    return {}


def roc_points(counts: pl.DataFrame) -> pl.DataFrame | None:
    """ROC points from weighted counts per distinct score; ``None`` with one class only.

    >>> counts = pl.DataFrame({"score": [0.9, 0.4, 0.1], "pos": [1.0, 1.0, 0.0],
    ...                        "neg": [0.0, 1.0, 1.0]})
    >>> roc_points(counts).rows()
    [(inf, 0.0, 0.0), (0.9, 0.0, 0.5), (0.4, 0.5, 1.0), (0.1, 1.0, 1.0)]
    """
    cur = _cumulative(counts)
    p, n = _totals(cur)
    if p <= 0 or n <= 0:
        return None
    pts = cur.select(pl.col("score").alias("threshold"), (pl.col("fp") / n).alias("fpr"),
                     (pl.col("tp") / p).alias("tpr"))
    start = pl.DataFrame({"threshold": [float("inf")], "fpr": [0.0], "tpr": [0.0]},
                         schema=pts.schema)
    return pl.concat([start, pts])


def pr_points(counts: pl.DataFrame) -> pl.DataFrame | None:
    """Precision-recall points, one per distinct score; ``None`` without positives.

    >>> counts = pl.DataFrame({"score": [0.9, 0.4, 0.1], "pos": [1.0, 1.0, 0.0],
    ...                        "neg": [0.0, 1.0, 1.0]})
    >>> [(t, r, round(p, 4)) for t, r, p in pr_points(counts).rows()]
    [(0.9, 0.5, 1.0), (0.4, 1.0, 0.6667), (0.1, 1.0, 0.5)]
    """
    cur = _cumulative(counts)
    p, _ = _totals(cur)
    if p <= 0:
        return None
    return cur.select(pl.col("score").alias("threshold"), (pl.col("tp") / p).alias("recall"),
                      (pl.col("tp") / (pl.col("tp") + pl.col("fp"))).alias("precision"))


def _cumulative(counts: pl.DataFrame) -> pl.DataFrame:
    return counts.sort("score", descending=True).select(
        pl.col("score").cast(pl.Float64), pl.col("pos").cum_sum().alias("tp"),
        pl.col("neg").cum_sum().alias("fp"))


def _totals(cur: pl.DataFrame) -> tuple[float, float]:
    if cur.height == 0:
        return 0.0, 0.0
    return float(cur["tp"][-1]), float(cur["fp"][-1])


def curves_from(stats: Mapping[str, Any]) -> dict[str, pl.DataFrame]:
    """Curve tables by name (``roc``, ``pr``, ``residuals``) from the computed statistics."""
    out: dict[str, pl.DataFrame] = {}
    counts = stats.get(SCORE_COUNTS)
    if isinstance(counts, pl.DataFrame):
        for name, fn in (("roc", roc_points), ("pr", pr_points)):
            df = fn(counts)
            if df is not None:
                out[name] = df
    res = stats.get(RESIDUALS)
    if isinstance(res, pl.DataFrame) and res.height:
        out["residuals"] = res.sort("residual")
    return out
