"""Binary classification's metrics: the values from the statistics (:mod:`.stats`) and the
declarations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from evalcli.metrics.base import (
    Check,
    Context,
    Metric,
    MetricValue,
    Param,
    Params,
    Stat,
    StatValues,
    memo_of,
)
from evalcli.metrics.binary.conventions import (
    NO_POSITIVE_AP,
    NUM_BINS,
    SINGLE_CLASS_PR,
    SINGLE_CLASS_ROC,
    Convention,
    effective,
    num_bins,
)
from evalcli.metrics.binary.stats import (
    EPS64,
    SCORE_COUNTS,
    confusion,
    proba,
    score_counts,
    spark_bins,
)
from evalcli.metrics.binary.task import FAMILY
from evalcli.metrics.task import options_of

if TYPE_CHECKING:
    from evalcli.uncertainty.intervals import Interval

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


def _share(num: Callable[[dict[str, float]], float], den: Callable[[dict[str, float]], float],
           what: str) -> Callable[[StatValues, Params], MetricValue]:
    """:func:`_ratio` of a share of rows (a binomial proportion): its closed-form interval is
    Wilson's (see :func:`_wilson`)."""
    value = _ratio(num, den, what)
    value.wilson = _wilson(num, den)  # type: ignore[attr-defined]
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


def _curve_areas(stats: StatValues, bins: int = 0) -> dict[str, Any]:
    """Every curve metric of the counts per score, in one pass over them (they share the
    cumulative sums; a run evaluates them all over one table of up to a row per input row:
    the run's memo keeps what the first computed).

    Cumulative tp/fp run from the highest score down. Scores carried only by zero-weight rows
    are left out: they would add a point with 0/0 precision (and a peak-F1 threshold no row
    supports); as in scikit-learn, a zero weight is the same as no row.

    ``bins`` > 0: on the table down-sampled as Spark's numBins (:func:`.stats.spark_bins`).
    """
    table: pl.DataFrame = stats[SCORE_COUNTS]
    fast = getattr(stats, "replicate", False)

    def compute() -> dict[str, Any]:
        t = spark_bins(table, bins)
        return _areas_numpy(t) if fast else _areas(t)

    return memo_of(stats).get(table, ("curve areas", bins) if bins else ("curve areas",),
                              compute)


def _areas_numpy(table: pl.DataFrame) -> dict[str, Any]:
    """:func:`_areas` in NumPy, for a bootstrap replicate's small table (no query to plan:
    20 times faster on 2,000 scores; sums in another order, so the last digits may differ).

    >>> t = pl.DataFrame({"score": [0.9, 0.8, 0.3, 0.1], "pos": [1.0, 1.0, 0.0, 1.0],
    ...                   "neg": [0.0, 1.0, 2.0, 0.0]})
    >>> a, b = _areas(t), _areas_numpy(t)
    >>> all(abs(a[k] - b[k]) < 1e-12 for k in ("auroc", "auprc", "ap", "peak_f1"))
    True
    """
    import numpy as np

    score, pos, neg = (table[c].cast(pl.Float64).to_numpy() for c in ("score", "pos", "neg"))
    order = np.argsort(-score, kind="stable")
    keep = order[(pos[order] + neg[order]) > 0]
    score, pos, neg = score[keep], pos[keep], neg[keep]
    p, n = float(pos.sum()), float(neg.sum())
    out: dict[str, Any] = {"rows": int(keep.sum()), "p": p, "n": n}
    if p <= 0 or not score.size:
        return out
    tp, fp = np.cumsum(pos), np.cumsum(neg)
    prec = tp / (tp + fp)
    f1 = 2 * tp / (tp + fp + p)
    prev = np.concatenate(([prec[0]], prec[:-1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        out["auroc"] = float((neg * (tp - pos / 2)).sum() / (p * n))
    out["auprc"] = float((pos * (prec + prev)).sum() / (2 * p))
    out["ap"] = float((pos * prec).sum() / p)
    out["peak_f1"] = float(f1.max())
    out["peak_threshold"] = float(score[f1 == f1.max()].max())
    return out


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


OneClass = Mapping[str, tuple[float, str]]
"""A curve metric's value when a class is missing (``"positive"``, ``"negative"``): the value
and why, from the convention in force."""


def _one_class(params: Params, stats: StatValues, conv: Convention, setting: str,
               values: OneClass) -> OneClass:
    """``values`` when ``conv`` is at ``setting`` (by the metric's parameter or the compat
    preset), else nothing (the metric is then undefined with one class)."""
    return values if effective(conv, params, options_of(stats)) == setting else {}


def _curve_metric(stats: StatValues, name: str, need_neg: bool = True,
                  one_class: OneClass | None = None, bins: int = 0) -> MetricValue:
    c = _curve_areas(stats, bins)
    if not c["rows"] or c["p"] + c["n"] <= 0:
        return MetricValue(None, notes=["no rows"])
    for missing, absent in (("positive", float(c["p"]) <= 0),
                            ("negative", need_neg and float(c["n"]) <= 0)):
        if not absent:
            continue
        if one_class and missing in one_class:
            v, why = one_class[missing]
            return MetricValue(v, notes=[f"no {missing} labels: reported as {v} ({why})"])
        return MetricValue(None, notes=[f"undefined: no {missing} labels"])
    if name == "peak_f1":
        t = float(c["peak_threshold"])
        return MetricValue(float(c[name]), details={"threshold": t},
                           caption=f"at threshold {t:.6g}")
    return MetricValue(float(c[name]))


NUM_BINS_DOC = (
    "num_bins: unset is the task option num_bins, else 0 (every distinct score); num_bins > 0 "
    "matches Spark MLlib's BinaryClassificationMetrics(scoreAndLabels, numBins).{} (the "
    "consecutive distinct scores grouped into chunks of floor(distinct / num_bins), each at "
    "its lowest score, the area taken on that curve; Spark's result with its scores in one "
    "partition). Spark ML's BinaryClassificationEvaluator has numBins 1000 by default.")

SPARK_ROC = "single_class=spark, as Spark MLlib's areaUnderROC: its {} rate is 0 without {}"


def _auroc_value(stats: StatValues, params: Params) -> MetricValue:
    return _curve_metric(stats, "auroc", one_class=_one_class(
        params, stats, SINGLE_CLASS_ROC, "spark",
        {"positive": (0.0, SPARK_ROC.format("true positive", "positives")),
         "negative": (1.0, SPARK_ROC.format("false positive", "negatives"))}),
        bins=num_bins(params, options_of(stats)))


def _auprc_value(stats: StatValues, params: Params) -> MetricValue:
    return _curve_metric(stats, "auprc", need_neg=False, one_class=_one_class(
        params, stats, SINGLE_CLASS_PR, "spark",
        {"positive": (0.0, "single_class=spark, as Spark MLlib's areaUnderPR: its recall and "
                           "precision are 0 without positives")}),
        bins=num_bins(params, options_of(stats)))


def _ap_value(stats: StatValues, params: Params) -> MetricValue:
    return _curve_metric(stats, "ap", need_neg=False, one_class=_one_class(
        params, stats, NO_POSITIVE_AP, "zero",
        {"positive": (0.0, "no_positive=zero, as scikit-learn's average_precision_score, "
                           "which warns that recall is set to one")}))


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


def _wilson(num: Callable[[dict[str, float]], float], den: Callable[[dict[str, float]], float]
            ) -> Callable[[StatValues, Params, float, bool], Interval | None]:
    """The Wilson score interval of a share of unweighted counts (``None`` with weights: the
    bootstrap then)."""
    def interval(stats: StatValues, params: Params, level: float, unweighted: bool
                 ) -> Interval | None:
        from evalcli.uncertainty.intervals import wilson_interval

        if not unweighted:
            return None
        c = _counts(stats, params)
        return wilson_interval(num(c), den(c), level)

    return interval


def _delong(stats: StatValues, params: Params, level: float, unweighted: bool
            ) -> Interval | None:
    """DeLong's interval from the counts of positives and negatives per distinct score
    (unweighted; ``None`` with weights: the bootstrap then)."""
    from evalcli.uncertainty.intervals import delong_interval_counts

    if not unweighted:
        return None
    table = stats[SCORE_COUNTS].sort("score")
    return delong_interval_counts(table["pos"].to_numpy(), table["neg"].to_numpy(), level)


WILSON = "Wilson score interval (method: auto, unweighted rows); else the bootstrap"


def _count_metric(name: str, summary: str, formula: str, value: Callable[..., MetricValue],
                  *, zero_division: bool = True, direction: str = "higher",
                  aliases: tuple[str, ...] = (), extra: tuple[Param, ...] = (),
                  conventions: str = "", in_default_set: bool = True,
                  rng: tuple[float, float] = (0.0, 1.0), example: str = "",
                  interval: Callable[[StatValues, Params, float, bool], Interval | None]
                  | None = None) -> Metric:
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
        example=example, interval=interval or getattr(value, "wilson", None),
        interval_doc=WILSON if (interval or getattr(value, "wilson", None)) else "",
    )


METRICS: list[Metric] = [
    _count_metric("accuracy", "share of rows whose hard prediction equals the label",
                  "(tp + tn) / (tp + fp + fn + tn)",
                  _share(lambda c: c["tp"] + c["tn"], lambda c: sum(c.values()), "the row count"),
                  example="""
                  >>> from evalcli import evaluate
                  >>> evaluate({"task": "binary", "metrics": ["accuracy"]},  # score >= 0.5
                  ...          predictions={"label": [1, 0, 1, 0],
                  ...                       "score": [0.9, 0.6, 0.4, 0.2]}).values()
                  {'accuracy': 0.5}
                  """),
    _count_metric("precision", "share of predicted positives that are positive (PPV)",
                  "tp / (tp + fp)",
                  _share(lambda c: c["tp"], lambda c: c["tp"] + c["fp"], "tp + fp"),
                  aliases=("ppv",), example="""
                  >>> from evalcli import evaluate
                  >>> r = evaluate({"task": "binary", "metrics": ["precision"]},
                  ...              predictions={"label": [1, 0, 1], "score": [0.4, 0.2, 0.1]})
                  >>> r.values(), r.metric("precision").notes  # nothing predicted positive
                  ({'precision': 0.0}, ['tp + fp is 0 (zero_division=0): reported as 0'])
                  """),
    _count_metric("recall", "share of positives predicted positive (TPR, sensitivity)",
                  "tp / (tp + fn)",
                  _share(lambda c: c["tp"], lambda c: c["tp"] + c["fn"], "tp + fn"),
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
                  _share(lambda c: c["tn"], lambda c: c["tn"] + c["fp"], "tn + fp"),
                  aliases=("tnr",), example="""
                  >>> from evalcli import evaluate
                  >>> evaluate({"task": "binary", "metrics": ["specificity"]},
                  ...          predictions={"label": [0, 0, 0, 1],
                  ...                       "prediction": [0, 1, 0, 1]}).values()
                  {'specificity': 0.6666666666666666}
                  """),
    _count_metric("fpr", "share of negatives predicted positive (false positive rate)",
                  "fp / (fp + tn)",
                  _share(lambda c: c["fp"], lambda c: c["fp"] + c["tn"], "fp + tn"),
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
        params=(SINGLE_CLASS_ROC.param, NUM_BINS),
        conventions="Exact: one ROC point per distinct score, so tied scores form one "
        "diagonal segment (a tie counts 1/2), as scikit-learn's roc_auc_score and Spark's "
        "areaUnderROC. With only one class in the labels: " + SINGLE_CLASS_ROC.text()
        + " " + NUM_BINS_DOC.format("areaUnderROC"),
        peer="scikit-learn roc_auc_score; Spark MLlib areaUnderROC",
        aliases=("roc_auc", "auc"), range=(0.0, 1.0), interval=_delong,
        interval_doc="DeLong's normal interval from the counts per distinct score, clipped "
        "to [0, 1] as pROC (method: auto, unweighted rows); else the bootstrap",
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
        "average_precision_score (see average_precision). 1.0 with only positives (as "
        "Spark). With no positive label: " + SINGLE_CLASS_PR.text() + " "
        + NUM_BINS_DOC.format("areaUnderPR"),
        params=(SINGLE_CLASS_PR.param, NUM_BINS),
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
        params=(NO_POSITIVE_AP.param,),
        conventions="Step interpolation (no trapezoid), as scikit-learn's "
        "average_precision_score. 1.0 with only positives (as scikit-learn). With no positive "
        "label: " + NO_POSITIVE_AP.text(),
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
