"""What binary classification adds to a run: the ROC and precision-recall curves (``--curves``,
the HTML report's figures), from the counts per score (:func:`.stats.score_counts`) computed in
the run's one pass (the statistic AUROC and AUPRC already use, so with those metrics nothing
more is computed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from evalcli.metrics.base import Context, Stat
from evalcli.metrics.binary.stats import SCORE_COUNTS, score_counts
from evalcli.metrics.stats import as_column
from evalcli.metrics.task import Additions, Asks, Planned


def curve_stats(ctx: Context, metrics: Planned, asks: Asks) -> dict[str, Stat]:
    """The curves' statistic, when curves are asked for and there are scores: the counts per
    score (the statistic AUROC and AUPRC already use, so with those metrics nothing more is
    computed)."""
    if not asks.curves or "score" not in ctx.roles:
        return {}
    return {SCORE_COUNTS: score_counts({}, ctx)}


AREAS = {"roc": [("auroc", "AUROC")],
         "pr": [("auprc", "AUPRC"), ("average_precision", "average precision")]}
"""The metrics that summarise each curve and their legend names: AUPRC (the trapezoid) is not
average precision (the step sum), and the two differ in the fourth digit."""


def curve_tables(values: Mapping[str, Any], asks: Asks) -> Additions:
    counts = values.get(SCORE_COUNTS)
    drawn = curves(counts) if isinstance(counts, pl.DataFrame) else {}
    return Additions(curves=drawn, areas={name: AREAS[name] for name in drawn if name in AREAS})


def curves(counts: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The ROC and precision-recall points (those defined) of a table of counts per score."""
    out: dict[str, pl.DataFrame] = {}
    for name, fn in (("roc", roc_points), ("pr", pr_points)):
        df = fn(counts)
        if df is not None:
            out[name] = df
    return out


def roc_points(counts: pl.DataFrame) -> pl.DataFrame | None:
    """ROC points from weighted counts per distinct score; ``None`` with one class only.

    One point per distinct score ``t`` (highest first), predicting positive when
    ``score >= t``: ``fpr = fp(t) / N``, ``tpr = tp(t) / P``, preceded by (0, 0) at
    ``t = +inf``. Counts are weighted by the weight column.

    >>> counts = pl.DataFrame({"score": [0.9, 0.4, 0.1], "pos": [1.0, 1.0, 0.0],
    ...                        "neg": [0.0, 1.0, 1.0]})
    >>> roc_points(counts).rows()
    [(inf, 0.0, 0.0), (0.9, 0.0, 0.5), (0.4, 0.5, 1.0), (0.1, 1.0, 1.0)]
    """
    cur = _cumulative(counts)
    p, n = _totals(cur)
    if p <= 0 or n <= 0:
        return None
    fp, tp = pl.col("fp"), pl.col("tp")
    pts = cur.select(pl.col("score").alias("threshold"), (fp / as_column(n, fp)).alias("fpr"),
                     (tp / as_column(p, tp)).alias("tpr"))
    start = pl.DataFrame({"threshold": [float("inf")], "fpr": [0.0], "tpr": [0.0]},
                         schema=pts.schema)
    return pl.concat([start, pts])


def pr_points(counts: pl.DataFrame) -> pl.DataFrame | None:
    """Precision-recall points, one per distinct score; ``None`` without positives.

    At the ROC's thresholds: ``recall = tp(t) / P``, ``precision = tp(t) / (tp(t) + fp(t))``.

    >>> counts = pl.DataFrame({"score": [0.9, 0.4, 0.1], "pos": [1.0, 1.0, 0.0],
    ...                        "neg": [0.0, 1.0, 1.0]})
    >>> [(t, r, round(p, 4)) for t, r, p in pr_points(counts).rows()]
    [(0.9, 0.5, 1.0), (0.4, 1.0, 0.6667), (0.1, 1.0, 0.5)]
    """
    cur = _cumulative(counts)
    p, _ = _totals(cur)
    if p <= 0:
        return None
    tp = pl.col("tp")
    return cur.select(pl.col("score").alias("threshold"), (tp / as_column(p, tp)).alias("recall"),
                      (pl.col("tp") / (pl.col("tp") + pl.col("fp"))).alias("precision"))


def _cumulative(counts: pl.DataFrame) -> pl.DataFrame:
    return counts.sort("score", descending=True).select(
        pl.col("score").cast(pl.Float64), pl.col("pos").cum_sum().alias("tp"),
        pl.col("neg").cum_sum().alias("fp"))


def _totals(cur: pl.DataFrame) -> tuple[float, float]:
    if cur.height == 0:
        return 0.0, 0.0
    return float(cur["tp"][-1]), float(cur["fp"][-1])
