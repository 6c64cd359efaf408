"""Multilabel metrics from per-label scores: auroc and average_precision, per label (one binary
problem per scored label: the example is positive when the label is in its true set) and
averaged as scikit-learn's roc_auc_score and average_precision_score on an indicator matrix:
macro, weighted, micro (one curve of every (example, label) pair) and samples (per example over
its labels, then the weighted mean).

The per-label curves come from the multiclass family's table and code
(:func:`~evalcli.metrics.multiclass.metrics.curves_of`, :func:`~evalcli.metrics.multiclass.
metrics.ovr`): a table of weight and rows per (scored label, whether true, score), here with the
``label`` column equal to the scored label when it is true and ``""`` (no label's name) when not.
The samples average has a statistic of its own: per example, its AUROC from the mid-ranks of
its scores and its average precision from the ranks among all and among the positive labels,
summed with the weights (exact sums).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import polars as pl

from evalcli.metrics.base import (
    Context,
    FrameStat,
    Metric,
    MetricValue,
    Param,
    Params,
    Stat,
    StatValues,
)
from evalcli.metrics.multiclass.metrics import curves_of, ovr
from evalcli.metrics.multilabel.stats import _ratio_sum
from evalcli.metrics.multilabel.task import FAMILY, label_order, label_scores
from evalcli.metrics.stats import is_weighted, sum_by, weight_sum
from evalcli.metrics.task import TaskInput

LABEL_SCORES = "multilabel.label_scores"
SAMPLE_AREAS = "multilabel.sample_areas"
ROW = "__example"


def _pairs(lf: pl.LazyFrame, keys: list[str], ctx: Context) -> pl.LazyFrame:
    """One row per (example, scored label): the segment keys, the example's weight and number
    (``__example``), the label (``class``, text), its score ``s`` and ``pos`` (it is true)."""
    sc = label_scores(TaskInput(ctx.options, ctx.roles, dict(lf.collect_schema())))
    scores = pl.concat_list(sc.fields) if sc.fields is not None else sc.list
    idx = pl.int_ranges(0, scores.list.len(), dtype=pl.Int64)
    out = lf.with_row_index(ROW).select(*keys, ROW, "weight", pl.col("label").alias("__set"),
                                        scores.alias("s"), idx.alias("class")) \
        .explode(["s", "class"])
    cls = pl.col("class")
    named = cls.replace_strict(list(range(len(sc.classes))), sc.classes,
                               return_dtype=pl.String) if sc.classes is not None else \
        cls.cast(pl.String)
    return out.with_columns(named.alias("class")).with_columns(
        pl.col("__set").list.contains(pl.col("class")).alias("pos")).drop("__set")


def _label_scores_build(lf: pl.LazyFrame, keys: list[str], ctx: Context,
                        weighted: bool = False) -> pl.LazyFrame:
    pos, cls = pl.col("pos"), pl.col("class")
    return _pairs(lf, keys, ctx).with_columns(
        pl.when(pos).then(cls).otherwise(pl.lit("")).alias("label")
    ).group_by([*keys, "class", "label", "s"]).agg(
        *weight_sum(pl.col("weight"), "w", weighted), pl.len().cast(pl.Int64).alias("n"))


def label_score_table(params: Params, ctx: Context) -> FrameStat:
    """Weight and rows per (scored label, true or not, score): each label's ROC and
    precision-recall curve, and the pooled (micro) one."""
    return FrameStat(LABEL_SCORES, partial(_label_scores_build, ctx=ctx,
                                           weighted=is_weighted(ctx)),
                     partial(sum_by, by=["class", "label", "s"]))


SAMPLE_COLUMNS = ("w", "rows", "roc", "roc_undef", "ap", "no_pos")


def _sample_areas_build(lf: pl.LazyFrame, keys: list[str], ctx: Context,
                        weighted: bool = False) -> pl.LazyFrame:
    """Per example over its scored labels (rows of weight 0 count nowhere, as scikit-learn
    forces their value to 0): AUROC = (Σ_pos midrank − m(m+1)/2) / (m·(n − m)), m positives of n,
    ties counting 1/2; AP = (1/m) Σ_pos (positives scored ≥ s) / (labels scored ≥ s), the
    precision at each positive's score, tied ones together (scikit-learn's step-wise AP). Then
    per segment: Σw, the rows, Σw·AUROC and Σw·AP where defined, and the rows where not."""
    ex = [*keys, ROW]
    s, pos = pl.col("s"), pl.col("pos")
    m, n = pos.sum().over(ex), pl.len().over(ex)
    at = (m - s.rank("min").over([*ex, "pos"]) + 1) / (n - s.rank("min").over(ex) + 1)
    per = _pairs(lf, keys, ctx).with_columns(
        s.rank("average").over(ex).alias("mid"), at.alias("prec")
    ).group_by(ex).agg(
        pl.col("weight").first().alias("weight"), pos.sum().cast(pl.Float64).alias("m"),
        pl.len().cast(pl.Float64).alias("k"),
        pl.col("mid").filter(pos).sum().alias("mid"), pl.col("prec").filter(pos).sum()
        .alias("prec"))
    m_, k, w = pl.col("m"), pl.col("k"), pl.col("weight")
    defined = (m_ > 0) & (m_ < k)
    roc = pl.when(defined).then((pl.col("mid") - m_ * (m_ + 1) / 2) / (m_ * (k - m_))) \
        .otherwise(0.0)
    ap = pl.when(m_ > 0).then(pl.col("prec") / m_).otherwise(0.0)
    # a zero-weight example stays a row of its group (the bootstrap's groups are those of the
    # rows) but counts nowhere
    sums = [*weight_sum(w, "w", weighted), pl.len().cast(pl.Float64).alias("rows"),
            *_ratio_sum(roc, "roc", weighted),
            (~defined & (w != 0)).sum().cast(pl.Float64).alias("roc_undef"),
            *_ratio_sum(ap, "ap", weighted),
            ((m_ == 0) & (w != 0)).sum().cast(pl.Float64).alias("no_pos")]
    return per.group_by(keys).agg(*sums) if keys else per.select(*sums)


def sample_areas(params: Params, ctx: Context) -> FrameStat:
    """The weighted sums of the examples' AUROC and AP (the samples average)."""
    return FrameStat(SAMPLE_AREAS, partial(_sample_areas_build, ctx=ctx,
                                           weighted=is_weighted(ctx)),
                     partial(sum_by, by=[]))


# --------------------------------------------------------------------------- values

def _samples_value(stats: StatValues, what: str, zero_ap: bool) -> MetricValue:
    df: pl.DataFrame = stats[SAMPLE_AREAS]
    v = {c: float(df[c].sum()) if df.height else 0.0 for c in SAMPLE_COLUMNS}
    if v["w"] <= 0:
        return MetricValue(None, notes=["no examples (or zero total weight)"])
    details = {"average": "samples"}
    if what == "roc":
        if v["roc_undef"]:
            return MetricValue(None, details, [
                f"undefined: {int(v['roc_undef'])} example(s) have only true or only false "
                "scored labels, whose AUROC is not defined (scikit-learn's roc_auc_score is "
                "NaN)"])
        return MetricValue(v["roc"] / v["w"], details)
    if v["no_pos"] and not zero_ap:
        return MetricValue(None, details, [
            f"undefined: {int(v['no_pos'])} example(s) have no true label, whose average "
            "precision is 0/0 (no_positive=zero counts them 0, as scikit-learn)"])
    notes = [f"{int(v['no_pos'])} example(s) with no true label: average precision 0, as "
             "scikit-learn's (no_positive=zero)"] if v["no_pos"] else []
    return MetricValue(v["ap"] / v["w"], details, notes)


def _value(what: str) -> Any:
    def value(stats: StatValues, params: Params) -> MetricValue:
        average = params.get("average", "macro")
        zero_ap = params.get("no_positive", "undefined") == "zero"
        if average == "samples":
            return _samples_value(stats, what, zero_ap)
        c = curves_of(stats, "classes", *(("micro",) if average == "micro" else ()),
                      key=LABEL_SCORES)
        if not c["rows"]:
            return MetricValue(None, notes=["no examples (or zero total weight)"])
        mv = ovr(c, what, average, noun="label", keys=label_order, zero_ap=zero_ap)
        mv.details.pop("multi_class", None)
        return mv

    return value


def _stats(p: Params, c: Context) -> list[Stat]:
    if p.get("average") == "samples":
        return [sample_areas(p, c)]
    return [label_score_table(p, c)]


# --------------------------------------------------------------------------- declarations

AVERAGE = Param(
    "average", str, "macro",
    "macro (mean over the scored labels), weighted (mean weighted by each label's true count), "
    "micro (one curve of every (example, label) pair) or samples (per example over its "
    "labels, then the mean), as scikit-learn's average", choices=("macro", "weighted", "micro",
                                                                   "samples"))
NO_POSITIVE = Param(
    "no_positive", str, "undefined",
    "average precision of a label never true (or, with average=samples, of an example with no "
    "true label): undefined (the average is then null, with a note) or zero (0, with a note, "
    "as scikit-learn's average_precision_score, which warns)", choices=("undefined", "zero"))
NEEDS = (frozenset({"label"}), frozenset({"score"}))
PEER = "scikit-learn roc_auc_score / average_precision_score on a label indicator matrix"
CURVES = (
    "The score column is named under columns (score: ...) or packed from one column per "
    "label (options.score_columns / score_prefix). One binary problem per scored label (the "
    "labels of the score column are the label space; "
    "every true label needs a score, else exit 2): positive when the label is in the "
    "example's true set; the predicted sets are not used. Curves over the examples sorted by "
    "the label's score, highest first, tied scores one step. Weights are scikit-learn's "
    "sample_weight (zero-weight examples count as absent). details.by_label holds each "
    "label's value and true count (support). ")
METRICS: list[Metric] = [
    Metric(
        "auroc", FAMILY, "area under the ROC curve of each label's scores, averaged",
        "AUC_ℓ = P(s_ℓ(x⁺) > s_ℓ(x⁻)) + ½·P(tie), x⁺ an example with ℓ true, x⁻ one without; "
        "macro (1/L)·Σ AUC_ℓ, weighted Σ n_ℓ·AUC_ℓ / Σ n_ℓ, micro one curve of all (example, "
        "label) pairs, samples Σ_i w_i·AUC_i / Σ w_i with AUC_i over example i's labels",
        "higher", NEEDS, _stats, _value("roc"), params=(AVERAGE,),
        conventions=CURVES + "A label never true, or true on every example, has no AUROC "
        "(null in details.by_label): the macro average is then undefined (null, with a note; "
        "scikit-learn's roc_auc_score gives NaN with a warning); the weighted average gives a "
        "label never true weight 0, as scikit-learn. With average=samples an example whose "
        "scored labels are all true or all false makes the average undefined (null, with a "
        "note), as scikit-learn's NaN; zero-weight examples are left out, as scikit-learn.",
        peer=PEER + " (average=macro|weighted|micro|samples)", aliases=("roc_auc", "auc"),
        range=(0.0, 1.0), in_default_set=False,
        example="""
        >>> from evalcli import evaluate
        >>> rows = {"label": [["a"], ["b"], ["a", "b"], []],
        ...         "prediction": [["a"], ["b"], ["a"], ["c"]],
        ...         "score": [{"a": 0.9, "b": 0.1, "c": 0.2}, {"a": 0.3, "b": 0.8, "c": 0.1},
        ...                   {"a": 0.6, "b": 0.4, "c": 0.5}, {"a": 0.2, "b": 0.3, "c": 0.9}]}
        >>> r = evaluate({"task": "multilabel", "columns": {"score": "score"}, "metrics": [
        ...     "auroc", {"metric": "auroc", "average": "micro"}]}, predictions=rows)
        >>> r.values()  # c is never true: no AUROC, so no macro average
        {'auroc': None, 'auroc[average=micro]': 0.859375}
        >>> [(d["label"], d["value"]) for d in r.metric("auroc").details["by_label"]]
        [('a', 1.0), ('b', 1.0), ('c', None)]
        """,
    ),
    Metric(
        "average_precision", FAMILY, "average precision of each label's scores, averaged",
        "AP_ℓ = Σ_n (R_n − R_{n−1})·P_n over the distinct thresholds of s_ℓ, ℓ true positive; "
        "macro (1/L)·Σ AP_ℓ, weighted Σ n_ℓ·AP_ℓ / Σ n_ℓ, micro one curve of all (example, "
        "label) pairs, samples Σ_i w_i·AP_i / Σ w_i with AP_i over example i's labels",
        "higher", NEEDS, _stats, _value("ap"), params=(AVERAGE, NO_POSITIVE),
        conventions=CURVES + "Step interpolation, as scikit-learn's average_precision_score. "
        "A label never true (with average=samples: an example with no true label) has no "
        "average precision: undefined by default (the average is null, with a note), 0 with "
        "no_positive=zero, as scikit-learn (which warns); the weighted average gives a label "
        "never true weight 0 either way.",
        peer=PEER + " (average=macro|weighted|micro|samples)", aliases=("ap",),
        range=(0.0, 1.0), in_default_set=False,
        example="""
        >>> from evalcli import evaluate
        >>> rows = {"label": [["a"], ["b"], ["a", "b"], []],
        ...         "prediction": [["a"], ["b"], ["a"], ["c"]],
        ...         "score": [{"a": 0.9, "b": 0.1, "c": 0.2}, {"a": 0.3, "b": 0.8, "c": 0.1},
        ...                   {"a": 0.6, "b": 0.4, "c": 0.5}, {"a": 0.2, "b": 0.3, "c": 0.9}]}
        >>> evaluate({"task": "multilabel", "columns": {"score": "score"}, "metrics": [
        ...     {"metric": "average_precision", "no_positive": "zero"},
        ...     {"metric": "average_precision", "average": "samples", "no_positive": "zero"}]},
        ...     predictions=rows).values()  # c never true: 0; the last example: 0
        {'average_precision[no_positive=zero]': 0.6666666666666666, \
'average_precision[average=samples,no_positive=zero]': 0.7083333333333333}
        """,
    ),
]
