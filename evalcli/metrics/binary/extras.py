"""What binary classification adds to a run: the ROC and precision-recall curves (``--curves``,
the HTML report's figures), the reliability diagram of ece/mce and the gain table of
lift_table, from the counts per score (:func:`.stats.score_counts`) computed in
the run's one pass (the statistic AUROC and AUPRC already use, so with those metrics nothing
more is computed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from evalcli.metrics.base import Context, Stat
from evalcli.metrics.binary.conventions import CURVE_FRAMING, effective, num_bins
from evalcli.metrics.binary.stats import SCORE_COUNTS, score_counts, spark_bins
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
    framing = effective(CURVE_FRAMING, {}, asks.options)
    bins = num_bins({}, asks.options)
    drawn = curves(spark_bins(counts, bins), framing) if isinstance(counts, pl.DataFrame) \
        else {}
    if isinstance(counts, pl.DataFrame):
        drawn.update(metric_tables(counts, asks.metrics))
    return Additions(curves=drawn, areas={name: AREAS[name] for name in drawn if name in AREAS})


def metric_tables(counts: pl.DataFrame, metrics: Planned) -> dict[str, pl.DataFrame]:
    """The tables that follow the run's metrics: ``reliability`` (the bins of each binning of
    ece and mce: bins, strategy, bin, mean_score, fraction_positive, weight) and ``gain`` (the
    groups of each lift_table's, or deciles with lift_at_top alone: groups, then the columns
    of :func:`.operating.gain_table`). Each holds one block of rows per distinct parameter
    set, in the order of the metrics; a table is left out when undefined (no rows; for gain,
    no positives)."""
    from evalcli.metrics.binary.calibration import reliability
    from evalcli.metrics.binary.operating import gain_table, points
    from evalcli.metrics.binary.task import FAMILY

    binnings: list[tuple[int, str]] = []
    groups: list[int] = []
    for _id, metric, params in metrics:
        if metric.family != FAMILY:
            continue
        if metric.name in ("ece", "mce"):
            b = (int(params["bins"]), str(params["strategy"]))
            if b not in binnings:
                binnings.append(b)
        elif metric.name == "lift_table" and int(params["groups"]) not in groups:
            groups.append(int(params["groups"]))
    if not groups and any(m.family == FAMILY and m.name == "lift_at_top" for _, m, _ in metrics):
        groups.append(10)
    pts = points({SCORE_COUNTS: counts})
    out: dict[str, pl.DataFrame] = {}
    if binnings and pts.size:
        out["reliability"] = pl.concat([
            reliability(pts, bins, strategy).frame().select(
                pl.lit(bins, pl.Int64).alias("bins"), pl.lit(strategy).alias("strategy"),
                "bin", (pl.col("score_sum") / pl.col("w")).alias("mean_score"),
                (pl.col("pos") / pl.col("w")).alias("fraction_positive"),
                pl.col("w").alias("weight"))
            for bins, strategy in binnings])
    if groups and pts.size and pts.p > 0:
        out["gain"] = pl.concat([
            gain_table(pts, g).select(pl.lit(g, pl.Int64).alias("groups"), pl.all())
            for g in groups])
    return out


def curves(counts: pl.DataFrame, framing: str = "evalcli") -> dict[str, pl.DataFrame]:
    """The ROC and precision-recall points (those defined) of a table of counts per score,
    in evalcli's framing or Spark MLlib's (``framing``: the ``curve_framing`` option)."""
    fns = (("roc", spark_roc_points), ("pr", spark_pr_points)) if framing == "spark" \
        else (("roc", roc_points), ("pr", pr_points))
    out: dict[str, pl.DataFrame] = {}
    for name, fn in fns:
        df = fn(counts)
        if df is not None:
            out[name] = df
    return out


INF = float("inf")


def _rate(num: str, total: float) -> pl.Expr:
    """``num / total`` as an exact quotient; 0 when the total is 0, as Spark's rates."""
    col = pl.col(num)
    return pl.lit(0.0) if total <= 0 else col / as_column(total, col)


def spark_roc_points(counts: pl.DataFrame) -> pl.DataFrame | None:
    """ROC points framed as Spark MLlib's ``BinaryClassificationMetrics.roc()``; ``None``
    without rows.

    (0, 0) at threshold +inf, one point per distinct score (highest first), then (1, 1) at
    threshold −inf, even when the last score already reached it. With one class only the
    rate of the missing class is 0 (Spark's convention), so the curve is written then too.

    >>> counts = pl.DataFrame({"score": [0.9, 0.4], "pos": [1.0, 1.0], "neg": [0.0, 0.0]})
    >>> spark_roc_points(counts).rows()  # every label positive: the false positive rate is 0
    [(inf, 0.0, 0.0), (0.9, 0.0, 0.5), (0.4, 0.0, 1.0), (-inf, 1.0, 1.0)]
    """
    cur = _cumulative(counts)
    if cur.height == 0:
        return None
    p, n = _totals(cur)
    pts = cur.select(pl.col("score").alias("threshold"), _rate("fp", n).alias("fpr"),
                     _rate("tp", p).alias("tpr"))
    start = pl.DataFrame({"threshold": [INF, -INF], "fpr": [0.0, 1.0], "tpr": [0.0, 1.0]},
                         schema=pts.schema)
    return pl.concat([start.head(1), pts, start.tail(1)])


def spark_pr_points(counts: pl.DataFrame) -> pl.DataFrame | None:
    """Precision-recall points framed as Spark MLlib's ``BinaryClassificationMetrics.pr()``;
    ``None`` without rows.

    (recall 0, precision at the top score) at threshold +inf, then one point per distinct
    score. Without positives the recall is 0 (Spark's convention); where nothing is predicted
    positive (zero-weight rows only) the precision is 1.

    >>> counts = pl.DataFrame({"score": [0.9, 0.4, 0.1], "pos": [1.0, 1.0, 0.0],
    ...                        "neg": [0.0, 1.0, 1.0]})
    >>> [(t, r, round(p, 4)) for t, r, p in spark_pr_points(counts).rows()]
    [(inf, 0.0, 1.0), (0.9, 0.5, 1.0), (0.4, 1.0, 0.6667), (0.1, 1.0, 0.5)]
    """
    cur = _cumulative(counts)
    if cur.height == 0:
        return None
    p, _ = _totals(cur)
    tp, fp = pl.col("tp"), pl.col("fp")
    pts = cur.select(
        pl.col("score").alias("threshold"), _rate("tp", p).alias("recall"),
        pl.when(tp + fp > 0).then(tp / (tp + fp)).otherwise(1.0).alias("precision"))
    start = pl.DataFrame({"threshold": [INF], "recall": [0.0],
                          "precision": [pts["precision"][0]]}, schema=pts.schema)
    return pl.concat([start, pts])


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
