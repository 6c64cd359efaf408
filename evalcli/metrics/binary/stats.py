"""Binary classification's statistics (shared by every metric that needs them, computed in one
pass):

- ``confusion``: weighted tp, fp, fn, tn at a threshold (or from the hard ``prediction``);
- ``score_counts``: weighted positives and negatives per distinct score, from which AUROC,
  AUPRC, average precision, peak F1 and the curves are exact (ties count as scikit-learn does:
  rows with equal scores move together);
- ``proba``: weighted sums of log loss and squared error, for log loss and Brier.
"""

from __future__ import annotations

from functools import partial

import polars as pl

from evalcli.errors import MetricError
from evalcli.metrics.base import AggStat, Context, FrameStat, Params
from evalcli.metrics.stats import (
    COARSE_ABOVE,
    WEIGHTED_TOP,
    CombineOp,
    coarse_bits,
    exact_sum,
    is_weighted,
    log_loss_top,
    packed_pair,
    run_totals,
    sum_by,
    table_build,
    unpacked_pair,
    weight_sum,
)

F64 = pl.Float64


DEFAULT_THRESHOLD = 0.5


def _hard(ctx: Context, threshold: float | None) -> tuple[pl.Expr, str]:
    """The hard prediction: the prediction column, unless a threshold is set or it is absent."""
    if threshold is None and "prediction" in ctx.roles:
        return pl.col("prediction"), "prediction"
    if "score" not in ctx.roles:
        raise MetricError(
            f"threshold={threshold!r} applies to scores, and the inputs have only hard "
            "predictions (no score column)",
            hint="name the score column under 'columns: {score: ...}' (or --score), or drop "
            "the threshold")
    t = DEFAULT_THRESHOLD if threshold is None else threshold
    return (pl.col("score") >= t).cast(F64), f"score>={t!r}"


def confusion(params: Params, ctx: Context) -> AggStat:
    """Weighted confusion counts; from the hard prediction if given, else score >= threshold."""
    yhat, src = _hard(ctx, params.get("threshold"))
    key = f"binary.confusion[{src}]"
    y, w = pl.col("label"), pl.col("weight")
    weighted = is_weighted(ctx)
    cells = {"tp": y * yhat, "fp": (1 - y) * yhat, "fn": y * (1 - yhat),
             "tn": (1 - y) * (1 - yhat)}

    def exprs() -> list[pl.Expr]:
        return [e for c, cell in cells.items()
                for e in weight_sum(w * cell, f"{key}.{c}", weighted)]

    op: CombineOp = "exact_sum" if weighted else "sum"
    return AggStat(key, exprs, {f"{key}.{c}": op for c in cells})


SCORE_COUNTS = "binary.score_counts"


def _score_counts_build(lf: pl.LazyFrame, keys: list[str], weighted: bool = False
                        ) -> pl.LazyFrame:
    # grouped (memory ~ distinct scores, so it streams), then sorted by score, highest first,
    # inside the engine's one pass: the curve metrics find the rows in order and skip their sort
    y, w = pl.col("label"), pl.col("weight")
    return lf.group_by([*keys, "score"]).agg(
        *weight_sum(w * y, "pos", weighted), *weight_sum(w * (1 - y), "neg", weighted)
    ).sort([*keys, "score"], descending=True)


def _score_counts_sorted(lf: pl.LazyFrame, keys: list[str], weighted: bool = False
                         ) -> pl.LazyFrame:
    # in memory, with many distinct scores, sorting the rows and grouping the sorted runs is
    # cheaper than hashing (10^7 distinct scores: 1.3 s instead of 2.0 s), but it holds every
    # row: the streaming engine groups first (memory ~ distinct scores)
    y, w = pl.col("label"), pl.col("weight")
    return (
        lf.select(*keys, "score", (w * y).alias("pos"), (w * (1 - y)).alias("neg"))
        .sort([*keys, "score"], descending=True)
        .group_by([*keys, "score"], maintain_order=True)
        .agg(*weight_sum(pl.col("pos"), "pos", weighted),
             *weight_sum(pl.col("neg"), "neg", weighted))
    )


def _score_counts_merged(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """Unweighted rows, no segments: the positives' scores and the negatives' scores are each
    sorted as one column of values, then merged (a linear pass): a sort that carries the label
    beside the score moves twice the memory (10^7 rows: 1.1 s instead of 1.5 s). The per-score
    counts are the cumulative counts at the last row of each run of equal scores, differenced.
    Scores are sorted negated (ascending, as the merge wants); zeros of either sign are one.

    >>> lf = pl.LazyFrame({"score": [0.2, -0.0, 0.9, 0.2, 0.0, -1.5],
    ...                    "label": [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]})
    >>> _score_counts_merged(lf, []).collect().rows()
    [(0.9, 1.0, 0.0), (0.2, 1.0, 1.0), (0.0, 1.0, 1.0), (-1.5, 0.0, 1.0)]
    """
    score = pl.col("score")
    negated = pl.when(score == 0.0).then(0.0).otherwise(-score).sort().alias("__s")
    # the label as one byte beside the 8-byte score (its running total is Int64, then F64)
    side = [lf.filter(pl.col("label") == v).select(negated, pl.lit(v, dtype=pl.UInt8)
                                                     .alias("__l"))
            for v in (1, 0)]
    s = pl.col("__s")
    tp = pl.col("__l").cum_sum().cast(F64)
    rows = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(F64)
    merged = side[0].merge_sorted(side[1], key="__s") \
        .with_columns(pl.when(s == 0.0).then(0.0).otherwise(-s).alias("score"))
    return run_totals(merged, "score", {"pos": tp, "neg": rows - tp})


def score_counts(params: Params, ctx: Context) -> FrameStat:
    """Weighted positives and negatives per distinct score, highest score first (exact sums
    of the weights per score when weighted)."""
    weighted = is_weighted(ctx)
    build = table_build(ctx, partial(_score_counts_build, weighted=weighted),
                        partial(_score_counts_sorted, weighted=weighted), _score_counts_merged)
    return FrameStat(SCORE_COUNTS, build, partial(sum_by, by=["score"]),
                     group_build=partial(_score_counts_coarse, weighted=weighted))


APPROX_MARGIN = 1.25
"""How far above ``COARSE_ABOVE`` the estimated number of distinct scores must be for the
pass to round the bootstrap's per-group table itself (see :func:`_score_counts_coarse`)."""


def _score_counts_coarse(lf: pl.LazyFrame, keys: list[str], weighted: bool = False
                         ) -> pl.LazyFrame:
    """The bootstrap's per-group table: positives and negatives per score, hashed rather than
    sorted; the scores rounded to 7 significant bits when there are more than a few thousand
    distinct ones (fewer: exact).

    The last key (the random group, an unsigned 32-bit number) and the score's bits are packed
    into one Int128 key, unpacked after the group-by: a hash on one integer column, not on two
    columns of which one is a float (10^7 rows, 1,000 groups: 0.45 s instead of 1.05 s).

    "More" is judged by Polars' HyperLogLog estimate (0.04 s at 10^7 rows; the exact count
    took 0.36 s), with a margin of 25% over ``COARSE_ABOVE``: its error is about 1% (at most
    1.3% measured near the threshold), so the table is rounded here only where the exact count
    is above the threshold too. Between the two the table stays exact and the driver rounds it
    (``resample._frame_replicates`` rounds any table with more distinct scores than
    ``COARSE_ABOVE``, a no-op on rounded ones): the same replicates either way, and the same as
    an engine in parts (Spark), whose tables are exact."""
    y, w = pl.col("label"), pl.col("weight")
    score = pl.col("score")
    many = score.approx_n_unique() > int(COARSE_ABOVE * APPROX_MARGIN)
    bits = pl.when(many).then(coarse_bits(score)).otherwise(coarse_bits(score, 52))
    *outer, last = keys
    group_type = lf.collect_schema()[last]
    group, score_bits = unpacked_pair(pl.col("__k"))
    return (lf.select(*outer, packed_pair(pl.col(last), bits).alias("__k"),
                      (w * y).alias("pos"),
                      (w * (1 - y)).alias("neg"))
            .group_by([*outer, "__k"])
            .agg(*weight_sum(pl.col("pos"), "pos", weighted),
                 *weight_sum(pl.col("neg"), "neg", weighted))
            .select(*outer, group.cast(group_type).alias(last),
                    score_bits.reinterpret(dtype=F64).alias("score"),
                    pl.all().exclude([*outer, "__k"])))


def proba(params: Params, ctx: Context) -> AggStat:
    """Weighted sums for log loss (clipped at ``eps``) and the Brier score: exact sums."""
    eps = params.get("eps", EPS64)
    key = f"binary.proba[eps={eps!r}]"
    y, w, p = pl.col("label"), pl.col("weight"), pl.col("score")
    weighted = is_weighted(ctx)
    # exact sums, on a grid from the largest term down: a log-loss term is at most −log(eps)
    # (36 at the default), a squared error at most 1; weighted, any weight up to 2^62
    limbs = 4 if weighted else 3
    ll_top = WEIGHTED_TOP if weighted else log_loss_top(eps)
    sq_top = WEIGHTED_TOP if weighted else 0

    def exprs() -> list[pl.Expr]:
        pc = p.clip(eps, 1 - eps)
        ll = -(y * pc.log() + (1 - y) * (1 - pc).log())
        sq = (p - y) ** 2
        return [
            *exact_sum(w * ll if weighted else ll, f"{key}.logloss", top=ll_top, limbs=limbs,
                       bounded=not weighted),
            *exact_sum(w * sq if weighted else sq, f"{key}.sq", top=sq_top, limbs=limbs,
                       bounded=not weighted),
            *weight_sum(w, f"{key}.w", weighted),
        ]

    return AggStat(key, exprs, {f"{key}.logloss": "exact_sum", f"{key}.sq": "exact_sum",
                                f"{key}.w": "exact_sum" if weighted else "sum"})


EPS64 = 2.220446049250313e-16
"""float64 machine epsilon: the clipping scikit-learn's log_loss applies since 1.5."""


def spark_bins(counts: pl.DataFrame, num_bins: int) -> pl.DataFrame:
    """The counts per score down-sampled as Spark MLlib's ``BinaryClassificationMetrics(
    scoreAndLabels, numBins)``: with ``num_bins`` > 0, the distinct scores (highest first,
    those carried by zero-weight rows only included, as Spark counts them) are cut into
    consecutive chunks of ``floor(distinct / num_bins)`` scores, the last chunk holding the
    rest; each chunk is one point, its threshold the chunk's lowest score and its counts the
    chunk's sums. When the chunk size is below 2 (``num_bins`` above half the distinct
    scores) or ``num_bins`` is 0 the table is returned as it is, as Spark does. (Spark cuts
    each partition of its sorted table apart; this is its result with one partition.)

    >>> t = pl.DataFrame({"score": [0.9, 0.8, 0.7, 0.6, 0.5], "pos": [1.0, 0.0, 1.0, 1.0, 0.0],
    ...                   "neg": [0.0, 1.0, 0.0, 0.0, 2.0]})
    >>> spark_bins(t, 2).rows()  # chunks of 5 // 2 = 2 scores, then the rest
    [(0.8, 1.0, 1.0), (0.6, 2.0, 0.0), (0.5, 0.0, 2.0)]
    >>> spark_bins(t, 3).equals(t)  # 5 // 3 = 1: no down-sampling
    True
    """
    if num_bins <= 0:
        return counts
    grouping = counts.height // num_bins
    if grouping < 2:
        return counts
    df = counts
    if not df.get_column("score").is_sorted(descending=True):
        df = df.sort("score", descending=True)
    rest = [c for c in df.columns if c != "score"]
    return (df.with_row_index("_row")
            .group_by((pl.col("_row") // grouping).alias("_bin"), maintain_order=True)
            .agg(pl.col("score").last(), *(pl.col(c).sum() for c in rest))
            .sort("_bin").drop("_bin").select(df.columns))
