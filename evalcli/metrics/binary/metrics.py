"""Binary classification: the task contract and its metrics.

Statistics (shared by every metric that needs them, computed in one pass):

- ``confusion``: weighted tp, fp, fn, tn at a threshold (or from the hard ``prediction``);
- ``score_counts``: weighted positives and negatives per distinct score, from which AUROC,
  AUPRC, average precision, peak F1 and the curves are exact (ties count as scikit-learn does:
  rows with equal scores move together);
- ``proba``: weighted sums of log loss and squared error, for log loss and Brier.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import polars as pl

from evalcli.errors import ConfigError, MetricError
from evalcli.metrics.base import (
    AggStat,
    Check,
    Context,
    FrameStat,
    Metric,
    MetricValue,
    Param,
    Params,
    Stat,
    StatValues,
    memo_of,
)
from evalcli.metrics.stats import (
    WEIGHTED_TOP,
    CombineOp,
    exact_sum,
    is_weighted,
    log_loss_top,
    run_totals,
    sum_by,
    table_build,
    weight_sum,
)
from evalcli.metrics.task import SETS_ELSEWHERE, Additions, Asks, Planned, Role, Task, TaskInput

FAMILY = "binary"
F64 = pl.Float64


# --------------------------------------------------------------------------- the task

def _is_numeric(dtype: pl.DataType) -> bool:
    return dtype.is_numeric()


def _kind(dtype: pl.DataType) -> str:
    return "bool" if dtype == pl.Boolean else "number" if _is_numeric(dtype) else "text"


def _uses_positive(role: str, t: TaskInput) -> bool:
    """Whether ``positive`` maps this role's values: the label's always; the prediction's when
    it is coded like the label (a 0/1 prediction beside "yes"/"no" labels is read as 0/1)."""
    if t.options.get("positive") is None or role not in t.schema:
        return False
    return role == "label" or _kind(t.schema[role]) == _kind(t.schema["label"])


def _binary_rule(role: str, t: TaskInput) -> Check | None:
    """Labels (and hard predictions) must be 0/1 or booleans, unless ``positive`` names one."""
    dtype = t.schema.get(role)
    if dtype is None or _uses_positive(role, t) or dtype == pl.Boolean:
        return None
    col = pl.col(role)
    if _is_numeric(dtype):
        return Check(
            f"{role}_binary",
            role,
            # == rather than is_in: is_in refuses a float column against integer values
            lambda: (col != 0) & (col != 1),
            f"the {role} column must hold 0 and 1 (or true/false) for a binary task",
            "map the labels to 0/1, set 'positive: <value>' under 'options:' to name the "
            "positive class, or use task: multiclass",
        )
    return Check(
        f"{role}_binary",
        role,
        lambda: col.is_not_null(),
        f"the {role} column holds {dtype} values; a binary task needs 0/1, booleans, "
        "or a named positive class",
        "set 'positive: <value>' under 'options:' (for example positive: yes)",
    )


_TRUE, _FALSE = ("true", "1", "yes", "1.0"), ("false", "0", "no", "0.0")


def _positive_value(role: str, t: TaskInput) -> Any:
    """The ``positive`` option as a value of the role's column type; an error if it cannot be.

    A boolean column's positive must read as true or false (anything else would silently
    make False the positive class); a numeric column's must be a number.
    """
    positive, dtype = t.options.get("positive"), t.schema[role]
    text = str(positive).strip()
    if dtype == pl.Boolean:
        if text.lower() not in _TRUE + _FALSE:
            raise ConfigError(f"positive: {text!r} cannot name a class of the {role} column, "
                              "which holds true/false values",
                              hint="write positive: true (or false), or leave it out")
        return text.lower() in _TRUE
    if _is_numeric(dtype):
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"positive: {text!r} is not a number, and the {role} column "
                              f"holds {dtype} numbers",
                              hint="name the positive class as it is written in the column "
                              "(e.g. positive: 1)") from None
    return text


def _checks(t: TaskInput) -> list[Check]:
    for role in ("label", "prediction"):
        if role in t.roles and _uses_positive(role, t):
            _positive_value(role, t)  # raises when the option cannot name a class
    out = [c for role in ("label", "prediction") if role in t.roles
           if (c := _binary_rule(role, t)) is not None]
    if t.options.get("positive") is not None and _uses_positive("label", t):
        out.append(_positive_present(t))
    if "score" in t.roles:
        dtype = t.schema["score"]
        if not _is_numeric(dtype):
            out.append(Check("score_numeric", "score", lambda: pl.col("score").is_not_null(),
                             f"the score column holds {dtype} values, not numbers",
                             "point 'score' at the column of probabilities or scores"))
        else:
            out.append(Check("score_finite", "score",
                             lambda: pl.col("score").cast(F64).is_infinite(),
                             "the score column holds infinite values",
                             "replace them, or clip the scores"))
    return out


def _positive_present(t: TaskInput) -> Check:
    """The named positive class must occur: a typo (``positive: Yes`` for ``yes``) would make
    every row negative and every number wrong without a word."""
    roles = [r for r in ("label", "prediction") if r in t.roles and _uses_positive(r, t)]

    def witness() -> pl.Expr:
        return pl.any_horizontal([_to01(r, t) == 1.0 for r in roles])

    shown = str(t.options.get("positive"))
    return Check(
        "positive_present", "label", witness,
        f"options.positive {shown[:100]!r} matches no value of the label column"
        + (" nor of the prediction column" if len(roles) > 1 else ""),
        "set 'positive:' to a value as it is written in the label column (case and spaces "
        "count), or --positive VALUE",
        require_some=True,
    )


def _to01(role: str, t: TaskInput) -> pl.Expr:
    col = pl.col(role)
    if _uses_positive(role, t):
        pos = _positive_value(role, t)
        if isinstance(pos, str):
            col = col.cast(pl.String)
        out: pl.Expr = (col == pos).cast(F64).alias(role)
        return out
    return col.cast(F64, strict=False).alias(role)


def _normalize(lf: pl.LazyFrame, t: TaskInput) -> pl.LazyFrame:
    exprs = [_to01("label", t)]
    if "prediction" in t.roles:
        exprs.append(_to01("prediction", t))
    if "score" in t.roles:
        exprs.append(pl.col("score").cast(F64))
    return lf.with_columns(exprs)




# --------------------------------------------------------------------------- statistics

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
    return FrameStat(SCORE_COUNTS, build, partial(sum_by, by=["score"]))


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


# --------------------------------------------------------------------------- curves

def _extras(ctx: Context, metrics: Planned, asks: Asks) -> dict[str, Stat]:
    """The curves' statistic, when curves are asked for and there are scores: the counts per
    score (the statistic AUROC and AUPRC already use, so with those metrics nothing more is
    computed)."""
    if not asks.curves or "score" not in ctx.roles:
        return {}
    return {SCORE_COUNTS: score_counts({}, ctx)}


def _finish(values: Mapping[str, Any], asks: Asks) -> Additions:
    counts = values.get(SCORE_COUNTS)
    return Additions(curves=curves(counts) if isinstance(counts, pl.DataFrame) else {})


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
    pts = cur.select(pl.col("score").alias("threshold"), (pl.col("fp") / n).alias("fpr"),
                     (pl.col("tp") / p).alias("tpr"))
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


# --------------------------------------------------------------------------- the task

TASK = Task(
    name=FAMILY,
    summary="two classes: label 0/1 (or a named positive class), a score and/or a hard prediction",
    roles=(
        Role("label", "the true class: 0/1, true/false, or any value with 'positive' set", True,
             elsewhere=SETS_ELSEWHERE),
        Role("score", "the model's score or probability of the positive class", numeric=True),
        Role("prediction", "the hard prediction: coded like the label, or 0/1",
             elsewhere=SETS_ELSEWHERE),
    ),
    options=(
        Param("positive", str, None, "the label value of the positive class (for string labels)",
              nullable=True),
    ),
    checks=_checks,
    normalize=_normalize,
    requires_any=(frozenset({"score", "prediction"}),),
    extras=_extras,
    finish=_finish,
)
TASKS = [TASK]


# --------------------------------------------------------------------------- values

def _counts(stats: StatValues, params: Params, roles: Any = None) -> dict[str, float]:
    for key, v in stats.items():
        if key.startswith("binary.confusion["):
            return {c: float(v[f"{key}.{c}"]) for c in ("tp", "fp", "fn", "tn")}
    raise KeyError("binary.confusion")  # pragma: no cover - the engine always provides it


ZERO_DIVISION = Param(
    "zero_division", str, "0",
    "value when the denominator is 0: 0 or 1 (with a note), or nan (undefined)",
    choices=("0", "1", "nan"),
)
THRESHOLD = Param(
    "threshold", float, None,
    "a score >= threshold predicts positive; unset: the prediction column if there is one, "
    "else 0.5",
    nullable=True,
)


def _fallback(num: float, den: float, params: Params, what: str) -> MetricValue:
    if den != 0:
        return MetricValue(num / den)
    zd = params.get("zero_division", "0")
    note = f"{what} is 0 (zero_division={zd})"
    if zd == "nan":
        return MetricValue(None, notes=[note + ": undefined"])
    return MetricValue(float(zd), notes=[note + f": reported as {zd}"])


def _ratio(num: Callable[[dict[str, float]], float], den: Callable[[dict[str, float]], float],
           what: str) -> Callable[[StatValues, Params], MetricValue]:
    def value(stats: StatValues, params: Params) -> MetricValue:
        c = _counts(stats, params)
        return _fallback(num(c), den(c), params, what)

    return value


def _fbeta_value(stats: StatValues, params: Params) -> MetricValue:
    c = _counts(stats, params)
    b2 = params.get("beta", 1.0) ** 2
    num = (1 + b2) * c["tp"]
    return _fallback(num, num + b2 * c["fn"] + c["fp"], params, "(1+β²)·tp + β²·fn + fp")


def _mcc_value(stats: StatValues, params: Params) -> MetricValue:
    c = _counts(stats, params)
    tp, fp, fn, tn = c["tp"], c["fp"], c["fn"], c["tn"]
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    if den == 0:
        return MetricValue(0.0, notes=["a row or column of the confusion matrix is empty: "
                                       "reported as 0, as scikit-learn does"])
    return MetricValue((tp * tn - fp * fn) / math.sqrt(den))


def _balanced_value(stats: StatValues, params: Params) -> MetricValue:
    c = _counts(stats, params)
    rates = []
    if c["tp"] + c["fn"] > 0:
        rates.append(c["tp"] / (c["tp"] + c["fn"]))
    if c["tn"] + c["fp"] > 0:
        rates.append(c["tn"] / (c["tn"] + c["fp"]))
    if not rates:
        return MetricValue(None, notes=["no rows"])
    notes = [] if len(rates) == 2 else [
        "only one class in the labels: the mean of the one defined recall (as scikit-learn)"]
    return MetricValue(sum(rates) / len(rates), notes=notes)


def _curve_areas(stats: StatValues) -> dict[str, Any]:
    """Every curve metric of the counts per score, in one pass over them (they share the
    cumulative sums; a run evaluates them all over one table of up to a row per input row:
    the run's memo keeps what the first computed).

    Cumulative tp/fp run from the highest score down. Scores carried only by zero-weight rows
    are left out: they would add a point with 0/0 precision (and a peak-F1 threshold no row
    supports); as in scikit-learn, a zero weight is the same as no row.
    """
    table: pl.DataFrame = stats[SCORE_COUNTS]
    return memo_of(stats).get(table, ("curve areas",), lambda: _areas(table))


def _areas(table: pl.DataFrame) -> dict[str, Any]:
    # the rows in one order (highest score first) and in one chunk: the sums below add in a
    # fixed way, so another engine's table of the same counts, in other chunks, gives the same
    # bits (a column's sum adds chunk by chunk; adding row after row would cost more than
    # the copy)
    df = table
    if not df.get_column("score").is_sorted(descending=True):  # the engine sorts it (O(n) check)
        df = df.sort("score", descending=True)
    if df.n_chunks() > 1:
        df = df.rechunk()
    cur = df.lazy().filter((pl.col("pos") + pl.col("neg")) > 0)
    p, n = (float(v or 0.0) for v in df.select(pl.col("pos").sum(), pl.col("neg").sum()).row(0))
    tp, fp, pos, neg = pl.col("tp"), pl.col("fp"), pl.col("pos"), pl.col("neg")
    cur = cur.with_columns(pos.cum_sum().alias("tp"), neg.cum_sum().alias("fp")) \
        .with_columns((tp / (tp + fp)).alias("prec"))
    prec = pl.col("prec")
    cur = cur.with_columns((2 * tp / (tp + fp + p)).alias("f1"))
    f1 = pl.col("f1")
    # each distinct score is one step of the curves: AUROC's trapezoid over it is
    # neg·(tp before it + pos/2); AP adds pos·precision; Spark's AUPRC is the trapezoid
    # between this precision and the previous one (the first point's own, at recall 0)
    out: dict[str, Any] = cur.select(
        pl.len().alias("rows"),
        ((neg * (tp - pos / 2)).sum() / (p * n)).alias("auroc"),
        ((pos * (prec + prec.shift(1).fill_null(prec.first()))).sum() / (2 * p)).alias("auprc"),
        ((pos * prec).sum() / p).alias("ap"),
        # the highest threshold reaching the maximum (no NaN: the denominator is at least
        # p > 0); not arg_max, whose choice among equal maxima the streaming engine leaves open
        f1.max().alias("peak_f1"),
        pl.col("score").filter(f1 == f1.max()).max().alias("peak_threshold"),
    # in-memory: the streaming engine adds the parts of a sum in whatever order its threads
    # finish, so the last digit could change from run to run
    ).collect(engine="in-memory").row(0, named=True) if p > 0 and df.height else {"rows": df.height}
    out["p"], out["n"] = p, n
    return out


def _curve_metric(stats: StatValues, name: str, need_neg: bool = True) -> MetricValue:
    c = _curve_areas(stats)
    if not c["rows"] or c["p"] + c["n"] <= 0:
        return MetricValue(None, notes=["no rows"])
    if float(c["p"]) <= 0:
        return MetricValue(None, notes=["undefined: no positive labels"])
    if need_neg and float(c["n"]) <= 0:
        return MetricValue(None, notes=["undefined: no negative labels"])
    if name == "peak_f1":
        return MetricValue(float(c[name]), details={"threshold": float(c["peak_threshold"])})
    return MetricValue(float(c[name]))


def _auroc_value(stats: StatValues, params: Params) -> MetricValue:
    return _curve_metric(stats, "auroc")


def _auprc_value(stats: StatValues, params: Params) -> MetricValue:
    return _curve_metric(stats, "auprc", need_neg=False)


def _ap_value(stats: StatValues, params: Params) -> MetricValue:
    return _curve_metric(stats, "ap", need_neg=False)


def _peak_f1_value(stats: StatValues, params: Params) -> MetricValue:
    return _curve_metric(stats, "peak_f1", need_neg=False)


def _proba_sum(stats: StatValues, name: str) -> tuple[float, float]:
    for key, v in stats.items():
        if key.startswith("binary.proba["):
            return float(v[f"{key}.{name}"]), float(v[f"{key}.w"])
    raise KeyError("binary.proba")  # pragma: no cover


def _mean_of(name: str) -> Callable[[StatValues, Params], MetricValue]:
    def value(stats: StatValues, params: Params) -> MetricValue:
        s, w = _proba_sum(stats, name)
        if w > 0:
            return MetricValue(s / w)
        return MetricValue(None, notes=["no rows (or zero weight)"])

    return value


PROBABILITY = Check(
    "score_probability", "score",
    lambda: (pl.col("score") < 0) | (pl.col("score") > 1),
    "log_loss and brier need probabilities, but the score column holds values outside [0, 1]",
    "give calibrated probabilities (for example apply a sigmoid), or drop log_loss/brier",
)


# --------------------------------------------------------------------------- declarations

SCORE = frozenset({"score"})
HARD = frozenset({"score", "prediction"})
PEERS_COUNTS = "scikit-learn (sklearn.metrics) and Spark MLlib, with zero_division as scikit-learn"


def _confusion_stats(p: Params, c: Context) -> Sequence[Stat]:
    return [confusion(p, c)]


def _score_stats(p: Params, c: Context) -> Sequence[Stat]:
    return [score_counts(p, c)]


def _proba_stats(p: Params, c: Context) -> Sequence[Stat]:
    return [proba(p, c)]


def _count_metric(name: str, summary: str, formula: str, value: Callable[..., MetricValue],
                  *, zero_division: bool = True, direction: str = "higher",
                  aliases: tuple[str, ...] = (), extra: tuple[Param, ...] = (),
                  conventions: str = "", in_default_set: bool = True,
                  rng: tuple[float, float] = (0.0, 1.0), example: str = "") -> Metric:
    params = (THRESHOLD, *extra, *((ZERO_DIVISION,) if zero_division else ()))
    return Metric(
        name=name, family=FAMILY, summary=summary, formula=formula,
        direction=direction,  # type: ignore[arg-type]
        needs=(HARD,), stats=_confusion_stats, value=value, params=params,
        conventions=conventions or (
            "Counts are weighted by the weight column. Hard predictions are score >= threshold "
            "when a threshold is set; without one, the prediction column if given, else "
            "score >= 0.5."
            + (" When the denominator is 0 the value is zero_division (0 by default, with a "
               "note), as scikit-learn's zero_division." if zero_division else "")),
        peer=PEERS_COUNTS, aliases=aliases, range=rng, in_default_set=in_default_set,
        example=example,
    )


METRICS: list[Metric] = [
    _count_metric("accuracy", "share of rows whose hard prediction equals the label",
                  "(tp + tn) / (tp + fp + fn + tn)",
                  _ratio(lambda c: c["tp"] + c["tn"], lambda c: sum(c.values()), "the row count"),
                  example="""
                  >>> from evalcli import evaluate
                  >>> evaluate({"task": "binary", "metrics": ["accuracy"]},  # score >= 0.5
                  ...          predictions={"label": [1, 0, 1, 0],
                  ...                       "score": [0.9, 0.6, 0.4, 0.2]}).values()
                  {'accuracy': 0.5}
                  """),
    _count_metric("precision", "share of predicted positives that are positive (PPV)",
                  "tp / (tp + fp)",
                  _ratio(lambda c: c["tp"], lambda c: c["tp"] + c["fp"], "tp + fp"),
                  aliases=("ppv",), example="""
                  >>> from evalcli import evaluate
                  >>> r = evaluate({"task": "binary", "metrics": ["precision"]},
                  ...              predictions={"label": [1, 0, 1], "score": [0.4, 0.2, 0.1]})
                  >>> r.values(), r.metric("precision").notes  # nothing predicted positive
                  ({'precision': 0.0}, ['tp + fp is 0 (zero_division=0): reported as 0'])
                  """),
    _count_metric("recall", "share of positives predicted positive (TPR, sensitivity)",
                  "tp / (tp + fn)",
                  _ratio(lambda c: c["tp"], lambda c: c["tp"] + c["fn"], "tp + fn"),
                  aliases=("tpr", "sensitivity"), example="""
                  >>> from evalcli import evaluate
                  >>> evaluate({"task": "binary",
                  ...           "metrics": ["recall", {"metric": "recall", "threshold": 0.3}]},
                  ...          predictions={"label": [1, 0, 1, 1],
                  ...                       "score": [0.9, 0.6, 0.4, 0.2]}).values()
                  {'recall': 0.3333333333333333,
                   'recall[threshold=0.3]': 0.6666666666666666}
                  """),
    _count_metric("specificity", "share of negatives predicted negative (TNR)",
                  "tn / (tn + fp)",
                  _ratio(lambda c: c["tn"], lambda c: c["tn"] + c["fp"], "tn + fp"),
                  aliases=("tnr",), example="""
                  >>> from evalcli import evaluate
                  >>> evaluate({"task": "binary", "metrics": ["specificity"]},
                  ...          predictions={"label": [0, 0, 0, 1],
                  ...                       "prediction": [0, 1, 0, 1]}).values()
                  {'specificity': 0.6666666666666666}
                  """),
    _count_metric("fpr", "share of negatives predicted positive (false positive rate)",
                  "fp / (fp + tn)",
                  _ratio(lambda c: c["fp"], lambda c: c["fp"] + c["tn"], "fp + tn"),
                  direction="lower", aliases=("false_positive_rate", "fall_out"),
                  example="""
                  >>> from evalcli import evaluate
                  >>> evaluate({"task": "binary", "metrics": ["fpr"], "columns": {"weight": "w"}},
                  ...          predictions={"label": [0, 0, 1], "score": [0.7, 0.2, 0.9],
                  ...                       "w": [3, 1, 1]}).values()  # fp 3 of weight 4
                  {'fpr': 0.75}
                  """),
    _count_metric("f1", "harmonic mean of precision and recall",
                  "2·tp / (2·tp + fp + fn)",
                  _ratio(lambda c: 2 * c["tp"], lambda c: 2 * c["tp"] + c["fp"] + c["fn"],
                         "2·tp + fp + fn"),
                  aliases=("f1_score",), example="""
                  >>> from evalcli import evaluate
                  >>> r = evaluate({"task": "binary",
                  ...               "metrics": [{"metric": "f1", "zero_division": "nan"}]},
                  ...              predictions={"label": [0, 0, 0], "prediction": [0, 0, 0]})
                  >>> r.values(), r.metric("f1[zero_division=nan]").notes
                  ({'f1[zero_division=nan]': None},
                   ['2·tp + fp + fn is 0 (zero_division=nan): undefined'])
                  """),
    _count_metric("fbeta", "F-measure weighting recall beta times as much as precision",
                  "(1+β²)·tp / ((1+β²)·tp + β²·fn + fp)", _fbeta_value,
                  extra=(Param("beta", float, 1.0, "weight of recall relative to precision",
                               gt=0),),
                  aliases=("f_beta", "fbeta_score"), in_default_set=False,
                  example="""
                  >>> from evalcli import evaluate
                  >>> evaluate({"task": "binary", "metrics": [{"metric": "fbeta", "beta": 2}]},
                  ...          predictions={"label": [1, 1, 1, 0], "prediction": [1, 0, 0, 0]}
                  ...          ).values()  # precision 1, recall 1/3: 5·(1/3) / (4 + 1/3)
                  {'fbeta[beta=2]': 0.38461538461538464}
                  """),
    _count_metric("mcc", "Matthews correlation coefficient between labels and predictions",
                  "(tp·tn − fp·fn) / √((tp+fp)(tp+fn)(tn+fp)(tn+fn))", _mcc_value,
                  zero_division=False, aliases=("matthews_corrcoef",), rng=(-1.0, 1.0),
                  conventions="Weighted counts. When a row or column of the confusion matrix "
                  "is empty the value is 0, with a note, as scikit-learn's matthews_corrcoef.",
                  example="""
                  >>> from evalcli import evaluate
                  >>> r = evaluate({"task": "binary", "metrics": ["mcc"]},
                  ...              predictions={"label": [1, 0, 1], "prediction": [1, 1, 1]})
                  >>> r.values(), r.metric("mcc").notes
                  ({'mcc': 0.0},
                   ['a row or column of the confusion matrix is empty: reported as 0, as
                     scikit-learn does'])
                  """),
    _count_metric("balanced_accuracy", "mean of recall and specificity",
                  "(tp/(tp+fn) + tn/(tn+fp)) / 2", _balanced_value, zero_division=False,
                  conventions="Weighted counts. With one class in the labels, the mean of "
                  "the defined recall only, as scikit-learn's balanced_accuracy_score.",
                  example="""
                  >>> from evalcli import evaluate
                  >>> r = evaluate({"task": "binary", "metrics": ["balanced_accuracy"]},
                  ...              predictions={"label": [1, 1, 1], "prediction": [1, 0, 1]})
                  >>> r.values(), r.metric("balanced_accuracy").notes
                  ({'balanced_accuracy': 0.6666666666666666},
                   ['only one class in the labels: the mean of the one defined recall
                     (as scikit-learn)'])
                  """),
    Metric(
        "auroc", FAMILY, "area under the ROC curve (exact, from counts per distinct score)",
        "Σ_i (FPR_i − FPR_{i−1})·(TPR_i + TPR_{i−1})/2 over distinct scores, highest first",
        "higher", (SCORE,), _score_stats, _auroc_value,
        conventions="Exact: one ROC point per distinct score, so tied scores form one "
        "diagonal segment (a tie counts 1/2), as scikit-learn's roc_auc_score and Spark's "
        "areaUnderROC. Undefined (with a note) when only one class is present.",
        peer="scikit-learn roc_auc_score; Spark MLlib areaUnderROC",
        aliases=("roc_auc", "auc"), range=(0.0, 1.0),
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "binary", "metrics": ["auroc"]},  # the tie at 0.8 counts 1/2
        ...          predictions={"label": [1, 0, 1, 0], "score": [0.8, 0.8, 0.6, 0.2]}).values()
        {'auroc': 0.625}
        """,
    ),
    Metric(
        "auprc", FAMILY, "area under the precision-recall curve, trapezoidal (as Spark MLlib)",
        "Σ_i (R_i − R_{i−1})·(P_i + P_{i−1})/2, with the point (0, P_1) first",
        "higher", (SCORE,), _score_stats, _auprc_value,
        conventions="Trapezoidal interpolation between the PR points of distinct scores, "
        "starting at (recall 0, precision of the top score), as Spark MLlib's "
        "BinaryClassificationMetrics.areaUnderPR. This is not scikit-learn's "
        "average_precision_score (see average_precision). Undefined with no positives.",
        peer="Spark MLlib areaUnderPR", aliases=("pr_auc", "area_under_pr"), range=(0.0, 1.0),
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "binary", "metrics": ["auprc", "average_precision"]},
        ...          predictions={"label": [1, 0, 1, 0], "score": [0.9, 0.8, 0.7, 0.1]}).values()
        {'auprc': 0.7916666666666666, 'average_precision': 0.8333333333333333}
        """,
    ),
    Metric(
        "average_precision", FAMILY, "average precision: step-wise area under the PR curve",
        "Σ_i (R_i − R_{i−1})·P_i over distinct scores, highest first",
        "higher", (SCORE,), _score_stats, _ap_value,
        conventions="Step interpolation (no trapezoid), as scikit-learn's "
        "average_precision_score. Undefined (with a note) when there are no positives.",
        peer="scikit-learn average_precision_score", aliases=("ap",), range=(0.0, 1.0),
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "binary", "metrics": ["average_precision"]},  # 0.5 is one step
        ...          predictions={"label": [1, 0, 1], "score": [0.5, 0.5, 0.2]}).values()
        {'average_precision': 0.5833333333333333}
        """,
    ),
    Metric(
        "peak_f1", FAMILY, "maximum F1 over all score thresholds, with the threshold reaching it",
        "max_t 2·tp(t) / (2·tp(t) + fp(t) + fn(t)), predicting positive when score >= t",
        "higher", (SCORE,), _score_stats, _peak_f1_value,
        conventions="Thresholds are the distinct scores; at equal F1 the highest threshold "
        "is reported (details.threshold).",
        peer="the F1-maximising threshold search common in multi-label evaluation",
        aliases=("max_f1", "best_f1"), range=(0.0, 1.0),
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "binary", "metrics": ["peak_f1"]},
        ...              predictions={"label": [1, 0, 1, 0], "score": [0.9, 0.8, 0.7, 0.1]})
        >>> r.values(), r.metric("peak_f1").details
        ({'peak_f1': 0.8}, {'threshold': 0.7})
        """,
    ),
    Metric(
        "log_loss", FAMILY, "mean negative log-likelihood of the labels under the scores",
        "−Σ w·(y·log p + (1−y)·log(1−p)) / Σ w, with p clipped to [eps, 1−eps]",
        "lower", (SCORE,), _proba_stats, _mean_of("logloss"),
        params=(Param("eps", float, EPS64, "clipping of probabilities away from 0 and 1",
                      gt=0, lt=0.5),),
        conventions="Scores must be probabilities in [0, 1] (an error otherwise). Clipped "
        "at float64 machine epsilon by default, as scikit-learn's log_loss since 1.5.",
        peer="scikit-learn log_loss", aliases=("logloss", "cross_entropy"), range=(0.0, None),
        checks=(PROBABILITY,),
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "binary", "metrics": ["log_loss"]},  # p = 0 on a positive:
        ...          predictions={"label": [1, 0], "score": [0.0, 0.0]}).values()  # −log(ε) / 2
        {'log_loss': 18.021826694558577}
        """,
    ),
    Metric(
        "brier", FAMILY, "mean squared difference between probability and label",
        "Σ w·(p − y)² / Σ w",
        "lower", (SCORE,), _proba_stats, _mean_of("sq"),
        conventions="Scores must be probabilities in [0, 1] (an error otherwise).",
        peer="scikit-learn brier_score_loss", aliases=("brier_score",), range=(0.0, 1.0),
        checks=(PROBABILITY,),
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "binary", "metrics": ["brier"], "columns": {"weight": "w"}},
        ...          predictions={"label": [1, 0], "score": [0.8, 0.4], "w": [1, 3]}
        ...          ).values()  # (1·0.2² + 3·0.4²) / 4
        {'brier': 0.13}
        """,
    ),
]
