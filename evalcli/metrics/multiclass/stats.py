"""Multiclass classification's statistics (shared by every metric that needs them, computed in
the run's one pass):

- ``multiclass.confusion``: the weighted confusion table, total weight and row count per
  (label, prediction) pair. Every count metric derives from it: the confusion matrix, accuracy,
  precision, recall, F-beta and FPR by label and averaged, Cohen's kappa, MCC, balanced
  accuracy, Hamming loss. Tables of two parts combine by adding per pair;
- ``multiclass.score_ranks``: weight per (number of classes scored above the true class,
  number scored equal to it): top-k accuracy for any k and tie rule;
- ``multiclass.proba``: weighted sums of −log p(true class), for log loss.

Weights follow Spark MLlib's weighted ``MulticlassMetrics`` (and scikit-learn's
``sample_weight``): every count is a sum of weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import polars as pl

from evalcli.errors import MetricError
from evalcli.metrics.base import AggStat, Context, FrameStat, Params, StatValues, memo_of
from evalcli.metrics.multiclass.task import as_class
from evalcli.metrics.stats import (
    WEIGHTED_TOP,
    exact_sum,
    is_weighted,
    log_loss_top,
    sum_by,
    weight_sum,
)

F64 = pl.Float64


CONFUSION = "multiclass.confusion"
RANKS = "multiclass.score_ranks"


def _confusion_build(lf: pl.LazyFrame, keys: list[str], weighted: bool = False
                     ) -> pl.LazyFrame:
    return lf.group_by([*keys, "label", "prediction"]).agg(
        *weight_sum(pl.col("weight"), "w", weighted), pl.len().cast(pl.Int64).alias("n"))


def confusion(params: Params, ctx: Context) -> FrameStat:
    """The weighted confusion table: weight (an exact sum) and rows per (label, prediction)."""
    return FrameStat(CONFUSION, partial(_confusion_build, weighted=is_weighted(ctx)),
                     partial(sum_by, by=["label", "prediction"]))


def _ranks_build(lf: pl.LazyFrame, keys: list[str], weighted: bool = False) -> pl.LazyFrame:
    return lf.group_by([*keys, pl.col("__above").alias("above"), pl.col("__tied").alias("tied"),
                        pl.col("__classes").alias("classes")]).agg(
        *weight_sum(pl.col("weight"), "w", weighted))


def score_ranks(params: Params, ctx: Context) -> FrameStat:
    """Weight per (classes scored above the true class, classes scored equal to it)."""
    return FrameStat(RANKS, partial(_ranks_build, weighted=is_weighted(ctx)),
                     partial(sum_by, by=["above", "tied", "classes"]))


EPS64 = 2.220446049250313e-16
"""float64 machine epsilon: the clipping scikit-learn's log_loss applies."""
SUM_TOLERANCE = 1e-4


def proba(params: Params, ctx: Context) -> AggStat:
    """Weighted sums for log loss: −log of the clipped true-class probability."""
    eps = params.get("eps", EPS64)
    key = f"multiclass.proba[eps={eps!r}]"
    w = pl.col("weight")
    weighted = is_weighted(ctx)
    # an exact sum: a term is at most −log(eps) (36 at the default); weighted, 2^62
    top = WEIGHTED_TOP if weighted else log_loss_top(eps)
    limbs = 4 if weighted else 3

    def exprs() -> list[pl.Expr]:
        p = pl.col("__p_true").clip(eps, 1 - eps)
        return [
            *exact_sum(-w * p.log() if weighted else -p.log(), f"{key}.logloss", top=top,
                       limbs=limbs, bounded=not weighted),
            *weight_sum(w, f"{key}.w", weighted),
            pl.col("__outside").sum().cast(F64).alias(f"{key}.outside"),
            ((pl.col("__sum") - 1).abs() > SUM_TOLERANCE).sum().cast(F64)
            .alias(f"{key}.unnormed"),
        ]

    return AggStat(key, exprs, {f"{key}.logloss": "exact_sum",
                                f"{key}.w": "exact_sum" if weighted else "sum",
                                f"{key}.outside": "sum", f"{key}.unnormed": "sum"})


# --------------------------------------------------------------------------- per-class counts

class Counts:
    """Per-class weighted counts from the confusion table (a small frame, never the rows).

    ``classes`` are the sorted classes of truth ∪ predictions (rows of weight 0 count, as
    scikit-learn's ``unique_labels``); ``cell[(label, prediction)]`` the weighted cells.
    """

    def __init__(self, df: pl.DataFrame) -> None:
        self.dtype = df.schema["label"]
        self.cell: dict[tuple[Any, Any], float] = {}
        self.tp: dict[Any, float] = {}
        self.true: dict[Any, float] = {}
        self.pred: dict[Any, float] = {}
        self.rows = 0
        for y, yhat, w, n in _in_order(df):
            self.cell[(y, yhat)] = self.cell.get((y, yhat), 0.0) + w
            self.true[y] = self.true.get(y, 0.0) + w
            self.pred[yhat] = self.pred.get(yhat, 0.0) + w
            if y == yhat:
                self.tp[y] = self.tp.get(y, 0.0) + w
            self.rows += n
        self.total = sum(self.true.values())
        self.classes = sorted(set(self.true) | set(self.pred))

    def labels(self, params: Params) -> list[Any]:
        """The ``labels`` parameter in the class dtype, or the classes present."""
        given = params.get("labels")
        if given is None:
            return list(self.classes)
        out = []
        for v in _split_list(given):
            c = as_class(v, self.dtype)
            if c is None:
                raise MetricError(f"parameter 'labels': {v!r} is not a class; the classes are "
                                  f"integers here ({', '.join(map(str, self.classes[:10]))})")
            if c not in out:
                out.append(c)
        return out

    def one(self, label: Any) -> Any:
        c = as_class(label, self.dtype)
        if c is None:
            raise MetricError(f"parameter 'label': {label!r} is not a class; the classes are "
                              f"integers here ({', '.join(map(str, self.classes[:10]))})")
        return c

    def matrix(self, labels: Sequence[Any]) -> list[list[float]]:
        return [[self.cell.get((y, p), 0.0) for p in labels] for y in labels]

    def fp(self, c: Any) -> float:
        return self.pred.get(c, 0.0) - self.tp.get(c, 0.0)

    def fn(self, c: Any) -> float:
        return self.true.get(c, 0.0) - self.tp.get(c, 0.0)


def _in_order(df: pl.DataFrame) -> list[tuple[Any, Any, float, int]]:
    """A confusion table's rows (label, prediction, weight, count) in a fixed order, by label
    then prediction, nulls last: the per-class sums add in that order. Sorted in Python
    (no query: a bootstrap builds the counts once per replicate and segment) when the
    classes are integers, text or flags; Polars orders any other type (NaN, categories).

    >>> t = pl.DataFrame({"label": ["b", None, "a", "b"], "prediction": [None, "a", "b", "a"],
    ...                   "w": [1.0, 2.0, 3.0, 4.0], "n": [1, 1, 1, 1]})
    >>> [r[:2] for r in _in_order(t)]
    [('a', 'b'), ('b', 'a'), ('b', None), (None, 'a')]
    """
    cols = ("label", "prediction", "w", "n")
    if not all(t.is_integer() or t in (pl.String, pl.Boolean)
               for t in (df.schema["label"], df.schema["prediction"])):
        return df.sort("label", "prediction", nulls_last=True).select(cols).rows()
    rows = zip(*(df.get_column(c).to_list() for c in cols), strict=True)
    return sorted(rows, key=lambda r: (r[0] is None, r[0], r[1] is None, r[1]))


def _split_list(values: Sequence[Any]) -> list[Any]:
    """``labels`` as given; ``a|b`` (the form metric ids use) is split.

    >>> _split_list(("a|b", "c")), _split_list((1, 2))
    (['a', 'b', 'c'], [1, 2])
    """
    out: list[Any] = []
    for v in values:
        out += v.split("|") if isinstance(v, str) else [v]
    return out


def counts_of(stats: StatValues) -> Counts:
    """The counts of the run's confusion table, built once for every metric that reads them
    (the run's memo; a bootstrap builds them once per replicate, not once per metric)."""
    table: pl.DataFrame = stats[CONFUSION]
    return memo_of(stats).get(table, ("counts",), lambda: Counts(table))


def as_number(x: float) -> float | int:
    return int(x) if float(x).is_integer() else float(x)


# --------------------------------------------------------------------------- per-class scores

CLASS_SCORES = "multiclass.class_scores"
SUMS = "multiclass.score_sums"


CLASS_VS_REST = "multiclass.class_vs_rest"


def _class_scores_build(lf: pl.LazyFrame, keys: list[str], ctx: Context,
                        weighted: bool = False, vs_rest: bool = False) -> pl.LazyFrame:
    """Every row's score of every class: one row per (scored class, true class, score) with
    its weight and row count (memory ~ classes² × distinct scores, so it streams);
    ``vs_rest``: per (scored class, whether it is the true class, score) instead."""
    from evalcli.metrics.multiclass.task import Scores
    from evalcli.metrics.task import TaskInput

    schema = lf.collect_schema()
    sc = Scores(TaskInput(ctx.options, ctx.roles, dict(schema)))
    scores = pl.concat_list(sc.fields) if sc.fields is not None else sc.list
    out = lf.select(*keys, "label", "weight", scores.alias("s"),
                    pl.int_ranges(0, scores.list.len(), dtype=pl.Int64).alias("class")) \
        .explode(["s", "class"])
    if sc.classes is not None:
        out = out.with_columns(pl.col("class").replace_strict(
            list(range(len(sc.classes))), sc.classes, return_dtype=schema["label"]))
    truth = (pl.col("label") == pl.col("class")).alias("pos") if vs_rest else pl.col("label")
    return out.group_by([*keys, "class", truth, "s"]).agg(
        *weight_sum(pl.col("weight"), "w", weighted), pl.len().cast(pl.Int64).alias("n"))


def class_scores(params: Params, ctx: Context) -> FrameStat:
    """Weight and rows per (scored class, true class, score): every one-vs-rest and
    one-vs-one ROC and precision-recall curve of the classes comes from it."""
    return FrameStat(CLASS_SCORES, partial(_class_scores_build, ctx=ctx,
                                           weighted=is_weighted(ctx)),
                     partial(sum_by, by=["class", "label", "s"]))


def _ranking_bins(table: pl.DataFrame, limit: int) -> Any:
    """The one-vs-rest table's scores merged for the bootstrap (see ``FrameStat.merge``)
    so that each class's curve keeps its ranking: every row of the other classes (a
    negative) stays above, tied with or below each of the class's own rows (a positive) as
    it was. Per class: its distinct positive scores, or, beyond ``limit`` of them, bins of
    consecutive ones at their mean; each negative tied with one of those (within a bin's
    range) takes its value, and the others are merged into bins of consecutive values cut
    at every positive (about ``limit`` in all), each at its mean (strictly between the
    positives around it). The one-vs-rest AUROC and average precision of a class with at
    most ``limit`` distinct positive scores are then exact in every replicate; calibration
    bins and the pooled (micro) curve only approximately so. ``None`` when no score moves."""
    import numpy as np
    s = table.get_column("s").cast(pl.Float64).to_numpy()
    pos = table.get_column("pos").fill_null(False).to_numpy()
    cls = table.select(pl.col("class").rank("dense").fill_null(0)).to_series().to_numpy()
    out = s.copy()
    order = np.argsort(cls, kind="stable")
    cuts = np.flatnonzero(np.diff(cls[order])) + 1
    for idx in np.split(order, cuts):
        own = idx[pos[idx]]
        ps = np.unique(s[own])
        bins = min(ps.size, limit)
        of = np.arange(ps.size) * bins // max(1, ps.size)  # (each distinct value its own bin
        lo = ps[np.searchsorted(of, np.arange(bins))]       # up to the limit)
        hi = ps[np.searchsorted(of, np.arange(bins), side="right") - 1]
        mean = np.bincount(of, weights=ps, minlength=bins) / np.maximum(
            np.bincount(of, minlength=bins), 1)
        if ps.size > limit:
            out[own] = mean[of[np.searchsorted(ps, s[own])]]
        neg = idx[~pos[idx]]
        if not neg.size:
            continue
        v = s[neg]
        j = np.searchsorted(hi, v)  # the first bin of positives whose top is >= v
        tied = j < bins
        tied[tied] = lo[j[tied]] <= v[tied]
        out[neg[tied]] = mean[j[tied]]
        free, jf, vf = neg[~tied], j[~tied], v[~tied]
        if not free.size:
            continue
        nu, at = np.unique(vf, return_inverse=True)
        # (the cuts at the positives already make up to bins + 1 groups: about ``limit``
        # in all, as many as the positives')
        sub = np.arange(nu.size)[at] * max(1, min(nu.size, limit - bins - 1)) // nu.size
        _, cell = np.unique(jf * (limit + 1) + sub, return_inverse=True)
        # each cell at its mean, within its smallest and largest value (a cell of one value
        # keeps it exactly: a sum of k copies divided by k may be off by an ulp, which would
        # break a tie with another class's row in the pooled curve)
        low = np.full(cell.max() + 1, np.inf)
        high = np.full(cell.max() + 1, -np.inf)
        np.minimum.at(low, cell, vf)
        np.maximum.at(high, cell, vf)
        mean = np.clip(np.bincount(cell, weights=vf) / np.bincount(cell), low, high)
        out[free] = np.where(low == high, low, mean)[cell]
    return None if np.array_equal(out, s, equal_nan=True) else out


def class_vs_rest(params: Params, ctx: Context) -> FrameStat:
    """Weight and rows per (scored class, whether it is the row's class, score): the
    one-vs-rest curves and calibration of the classes. The classes' table, with the true
    classes other than the scored one as one: a bootstrap draws it per replicate, as
    2 x classes x bins rows instead of classes² x bins (5,000 rows of 100 classes with
    --ci: 0.7 GB, where the full table took 11 GB)."""
    return FrameStat(CLASS_VS_REST, partial(_class_scores_build, ctx=ctx,
                                            weighted=is_weighted(ctx), vs_rest=True),
                     partial(sum_by, by=["class", "pos", "s"]), merge=_ranking_bins)


def score_sums(params: Params, ctx: Context) -> AggStat:
    """Rows whose scores do not sum to 1 as numpy.allclose(1, sum) tells (scikit-learn's test
    for multiclass roc_auc_score: |1 − sum| ≤ 1e-8 + 1e-5·|sum|)."""
    s = pl.col("__sum")

    def exprs() -> list[pl.Expr]:
        return [((1 - s).abs() > 1e-8 + 1e-5 * s.abs()).sum().cast(F64)
                .alias(f"{SUMS}.unnormed")]

    return AggStat(SUMS, exprs, {f"{SUMS}.unnormed": "sum"})


TOP_LABEL = "multiclass.top_label"


def _top_label_build(lf: pl.LazyFrame, keys: list[str], ctx: Context,
                     weighted: bool = False) -> pl.LazyFrame:
    """Per row the top label's score (the highest score, its class the first on a tie, as
    numpy.argmax) and whether that class is the true class: weight and rows per (confidence,
    correct)."""
    from evalcli.metrics.multiclass.task import Scores, _label_index
    from evalcli.metrics.task import TaskInput

    t = TaskInput(ctx.options, ctx.roles, dict(lf.collect_schema()))
    sc = Scores(t)
    top = pl.max_horizontal(sc.fields) if sc.fields is not None else sc.list.list.max()
    return lf.select(*keys, "weight", top.alias("conf"),
                     (sc.arg_max() == _label_index(t)).fill_null(False).alias("correct")) \
        .group_by([*keys, "conf", "correct"]).agg(
            *weight_sum(pl.col("weight"), "w", weighted), pl.len().cast(pl.Int64).alias("n"))


def top_label(params: Params, ctx: Context) -> FrameStat:
    """Weight and rows per (top-label confidence, top label correct): top-label calibration."""
    return FrameStat(TOP_LABEL, partial(_top_label_build, ctx=ctx, weighted=is_weighted(ctx)),
                     partial(sum_by, by=["conf", "correct"]))


OUTSIDE = "multiclass.outside"


def outside(params: Params, ctx: Context) -> AggStat:
    """Rows with a per-class score outside [0, 1] (calibration needs probabilities)."""
    def exprs() -> list[pl.Expr]:
        return [pl.col("__outside").sum().cast(F64).alias(f"{OUTSIDE}.rows")]

    return AggStat(OUTSIDE, exprs, {f"{OUTSIDE}.rows": "sum"})
