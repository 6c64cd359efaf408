"""Multilabel classification's metrics: the values from the statistics (:mod:`.stats`) and the
declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from evalcli.metrics.base import (
    Context,
    Metric,
    MetricValue,
    Param,
    Params,
    Stat,
    StatValues,
    absent_label,
)
from evalcli.metrics.multiclass.metrics import average_labels
from evalcli.metrics.multilabel.stats import (
    BY_LABEL,
    EXAMPLE_COLUMNS,
    EXAMPLES,
    by_label,
    examples,
    fbeta_sum,
)
from evalcli.metrics.multilabel.task import FAMILY, label_order

# --------------------------------------------------------------------------- values

ZERO_DIVISION = Param(
    "zero_division", str, "0",
    "value of a ratio whose denominator is 0 (an empty set, a label never predicted): 0 or 1 "
    "(with a note), or nan (left out of the average, as scikit-learn's zero_division=np.nan)",
    choices=("0", "1", "nan"),
)
AVERAGE = Param(
    "average", str, "samples",
    "samples (per example, then the mean: Spark MLlib's precision/recall/f1Measure), micro "
    "(pooled counts: Spark's micro*), macro (mean over labels) or weighted (mean over labels "
    "weighted by true count)", choices=("samples", "micro", "macro", "weighted"),
)
LABEL = Param("label", str, None, "one label: its own value (Spark MLlib's precision(label) "
              "...) instead of an average", nullable=True)
BETA = Param("beta", float, 1.0, "weight of recall relative to precision", gt=0)


def _ex(stats: StatValues) -> dict[str, float]:
    v = stats[EXAMPLES]
    return {c: float(v[f"{EXAMPLES}.{c}"] or 0.0) for c in EXAMPLE_COLUMNS}


def _fallback(zd: str) -> float | None:
    return None if zd == "nan" else float(zd)


def _samples(total: float, w: float, undef_w: float, undef_n: float, zd: str,
             what: str) -> MetricValue:
    """Mean over examples of a ratio that is undefined on ``undef`` examples."""
    if w == 0:
        return MetricValue(None, notes=["no examples (or zero total weight)"])
    notes = []
    fb = _fallback(zd)
    if undef_n:
        treat = "left out of the mean" if fb is None else f"counted as {zd}"
        notes.append(f"{int(undef_n)} example(s) with {what}: {treat} (zero_division={zd})")
    if fb is None:
        if w - undef_w <= 0:
            return MetricValue(None, notes=[*notes, "no example with a defined value"])
        return MetricValue(total / (w - undef_w), notes=notes)
    return MetricValue((total + fb * undef_w) / w, notes=notes)


def _micro(num: float, den: float, zd: str, what: str) -> MetricValue:
    if den != 0:
        return MetricValue(num / den)
    return MetricValue(_fallback(zd), notes=[f"pooled {what} is 0/0 (zero_division={zd})"])


LabelRatio = Callable[[dict[str, float], Params], tuple[float, float]]


def _labels_average(stats: StatValues, params: Params, ratio: LabelRatio,
                    what: str) -> MetricValue:
    """One label's value, or the macro / weighted mean over the labels seen."""
    df: pl.DataFrame = stats[BY_LABEL]
    zd = params.get("zero_division", "0")
    fb = _fallback(zd)
    rows = {r["class"]: r for r in sorted(df.iter_rows(named=True),
                                          key=lambda r: label_order(r["class"]))}
    if params.get("label") is not None:
        k = str(params["label"])
        r = rows.get(k, {"tp": 0.0, "true": 0.0, "pred": 0.0})
        num, den = ratio(r, params)
        one = {"label": k, "support": r["true"], "numerator": num, "denominator": den}
        if den != 0:
            return MetricValue(num / den, details=one)
        absent = "" if k in rows else f"label {k!r} occurs in neither truth nor predictions; "
        mv = MetricValue(fb, details=one,
                         notes=[f"{absent}{what} of {k!r} is 0/0 (zero_division={zd})"])
        if absent:
            raise absent_label("label", k, list(rows), mv)
        return mv
    labels = [k for k, r in rows.items() if r["true_n"] or r["pred_n"]]
    average = params.get("average", "samples")
    by_label, undefined = [], []
    for k in labels:
        num, den = ratio(rows[k], params)
        if den == 0:
            undefined.append(k)
        by_label.append({"label": k, "value": num / den if den else fb,
                         "support": rows[k]["true"]})
    details: dict[str, Any] = {"average": average, "by_label": by_label}
    notes = []
    if undefined:
        shown = ", ".join(map(repr, undefined[:5])) + (" ..." if len(undefined) > 5 else "")
        treat = "left out of the average" if fb is None else f"counted as {zd}"
        notes.append(f"{what} is 0/0 for {len(undefined)} label(s) ({shown}): {treat} "
                     f"(zero_division={zd})")
    return average_labels(by_label, average, details, notes)


def _fb(params: Params) -> float:
    return float(params.get("beta", 1.0)) ** 2


RATIOS: dict[str, LabelRatio] = {
    "precision": lambda r, p: (r["tp"], r["pred"]),
    "recall": lambda r, p: (r["tp"], r["true"]),
    "fbeta": lambda r, p: ((1 + _fb(p)) * r["tp"],
                           (1 + _fb(p)) * r["tp"] + _fb(p) * (r["true"] - r["tp"])
                           + (r["pred"] - r["tp"])),
    "jaccard": lambda r, p: (r["tp"], r["true"] + r["pred"] - r["tp"]),
}


def _fbeta_key(params: Params) -> str:
    return f"multilabel.fbeta[beta={params.get('beta', 1.0)!r}]"


def _value(kind: str) -> Callable[[StatValues, Params], MetricValue]:
    what = {"precision": "precision", "recall": "recall", "fbeta": "F",
            "jaccard": "Jaccard index"}[kind]

    def value(stats: StatValues, params: Params) -> MetricValue:
        average = params.get("average", "samples")
        zd = params.get("zero_division", "0")
        if params.get("label") is not None or average in ("macro", "weighted"):
            return _labels_average(stats, params, RATIOS[kind], what)
        e = _ex(stats)
        b2 = _fb(params)
        if average == "micro":
            num, den = {
                "precision": (e["inter"], e["pred"]),
                "recall": (e["inter"], e["true"]),
                "fbeta": ((1 + b2) * e["inter"], b2 * e["true"] + e["pred"]),
                "jaccard": (e["inter"], e["true"] + e["pred"] - e["inter"]),
            }[kind]
            return _micro(num, den, zd, what)
        if kind == "precision":
            return _samples(e["prec"], e["w"], e["prec_undef"], e["prec_undef_n"], zd,
                            "an empty prediction set")
        if kind == "recall":
            return _samples(e["rec"], e["w"], e["rec_undef"], e["rec_undef_n"], zd,
                            "an empty label set")
        total = e["jac"] if kind == "jaccard" else float(stats[_fbeta_key(params)][
            f"{_fbeta_key(params)}.f"] or 0.0)
        return _samples(total, e["w"], e["both_empty"], e["both_empty_n"], zd,
                        "empty label and prediction sets")

    return value


def _stats_for(kind: str) -> Callable[[Params, Context], Sequence[Stat]]:
    def stats(params: Params, ctx: Context) -> Sequence[Stat]:
        if params.get("label") is not None or params.get("average") in ("macro", "weighted"):
            return [by_label(params, ctx)]
        out: list[Stat] = [examples(params, ctx)]
        if kind == "fbeta" and params.get("average", "samples") == "samples":
            out.append(fbeta_sum(params, ctx))
        return out

    return stats


def _subset_value(stats: StatValues, params: Params) -> MetricValue:
    e = _ex(stats)
    if e["w"] == 0:
        return MetricValue(None, notes=["no examples (or zero total weight)"])
    return MetricValue(e["exact"] / e["w"])


def _hamming_value(stats: StatValues, params: Params) -> MetricValue:
    e = _ex(stats)
    df: pl.DataFrame = stats[BY_LABEL]
    space = params.get("label_space", "union")
    n = params.get("n_labels")
    if n is None:
        seen = pl.col("true_n") > 0
        if space == "union":
            seen = seen | (pl.col("pred_n") > 0)
        n = int(df.select(seen.sum()).item() or 0)
    if e["w"] == 0:
        return MetricValue(None, notes=["no examples (or zero total weight)"])
    if n == 0:
        return MetricValue(None, notes=["no labels in the " + (
            "truth" if space == "truth" else "truth or predictions")])
    return MetricValue(e["xor"] / (e["w"] * n), details={"labels": n})


def _hamming_stats(params: Params, ctx: Context) -> Sequence[Stat]:
    return [examples(params, ctx), by_label(params, ctx)]


def _examples_stats(params: Params, ctx: Context) -> Sequence[Stat]:
    return [examples(params, ctx)]


# --------------------------------------------------------------------------- declarations

BOTH = (frozenset({"label"}), frozenset({"prediction"}))
PEERS = "Spark MLlib MultilabelMetrics (average=samples and micro, by label); scikit-learn " \
    "on label-indicator matrices (every average)"
WEIGHTS = ("Weighted by the weight column as scikit-learn's sample_weight (Spark MLlib's "
           "MultilabelMetrics has no weights).")
AVERAGES = (
    "average=samples computes the ratio per example and takes the (weighted) mean, as Spark "
    "MLlib's document-based metrics and scikit-learn's average='samples'; micro pools |L∩P|, "
    "|L| and |P| over examples (Spark's micro*); macro and weighted average the per-label "
    "values over every label seen in truth or predictions, weighted by true count for "
    "weighted (scikit-learn). 'label' gives one label's value (Spark's metric(label)); the "
    "per-label values of macro/weighted are in details.by_label. ")


def _set_metric(kind: str, name: str, summary: str, formula: str, empty: str, *,
                aliases: tuple[str, ...] = (), extra: tuple[Param, ...] = (),
                default_set: bool = True, example: str = "") -> Metric:
    return Metric(
        name=name, family=FAMILY, summary=summary, formula=formula, direction="higher",
        needs=BOTH, stats=_stats_for(kind), value=_value(kind),
        params=(AVERAGE, LABEL, *extra, ZERO_DIVISION),
        conventions=AVERAGES + empty + " " + WEIGHTS, peer=PEERS, aliases=aliases,
        range=(0.0, 1.0), in_default_set=default_set, example=example,
    )


METRICS: list[Metric] = [
    _set_metric(
        "precision", "precision",
        "share of predicted labels that are true (per example, or pooled, or by label)",
        "samples: (1/N) Σ_i |P_i ∩ L_i| / |P_i|; micro: Σ|P∩L| / Σ|P|; "
        "label ℓ: tp_ℓ / predicted_ℓ",
        "An empty prediction set makes an example's precision 0/0: zero_division, 0 by "
        "default (with a note), as Spark MLlib (0) and scikit-learn's default.",
        aliases=("ppv",), example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "multilabel", "metrics": ["precision"]},
        ...              predictions={"label": [["a", "b"], ["c"]], "prediction": [["a"], []]})
        >>> r.values(), r.metric("precision").notes  # (1 + 0) / 2
        ({'precision': 0.5},
         ['1 example(s) with an empty prediction set: counted as 0 (zero_division=0)'])
        """),
    _set_metric(
        "recall", "recall",
        "share of true labels that are predicted (per example, or pooled, or by label)",
        "samples: (1/N) Σ_i |P_i ∩ L_i| / |L_i|; micro: Σ|P∩L| / Σ|L|; "
        "label ℓ: tp_ℓ / true_ℓ",
        "An empty label set makes an example's recall 0/0: zero_division, 0 by default (with a "
        "note), as scikit-learn. Spark MLlib divides anyway, so one such example makes its "
        "recall NaN; zero_division=nan leaves such examples out instead.",
        aliases=("tpr", "sensitivity"), example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multilabel", "metrics": ["recall", "micro_recall"]},
        ...          predictions={"label": [["a", "b"], ["c"]],
        ...                       "prediction": [["a"], ["c", "d"]]}).values()  # (1/2 + 1) / 2
        {'recall': 0.75, 'recall[average=micro]': 0.6666666666666666}
        """),
    _set_metric(
        "fbeta", "f1",
        "F1 of predicted and true label sets (per example, or pooled, or by label)",
        "samples: (1/N) Σ_i 2|P_i ∩ L_i| / (|P_i| + |L_i|); micro: 2Σ|P∩L| / (Σ|P| + Σ|L|); "
        "label ℓ: 2tp_ℓ / (2tp_ℓ + fp_ℓ + fn_ℓ)",
        "Both sets empty makes an example's F1 0/0: zero_division, 0 by default (with a note), "
        "as scikit-learn; Spark MLlib gives NaN there (zero_division=nan leaves such examples "
        "out). Spark's documentation prints the per-example term as 2|P∩L|/(|P|·|L|); its code "
        "(and this) uses |P| + |L|.",
        aliases=("f1_score", "f1_measure"), example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multilabel",
        ...           "metrics": ["f1", {"metric": "f1", "zero_division": "nan"}]},
        ...          predictions={"label": [["a", "b"], []], "prediction": [["a"], []]}
        ...          ).values()  # 2/3 and, for two empty sets, 0/0
        {'f1': 0.3333333333333333, 'f1[zero_division=nan]': 0.6666666666666666}
        """),
    _set_metric(
        "fbeta", "fbeta", "F-beta of predicted and true label sets",
        "samples: (1/N) Σ_i (1+β²)|P_i ∩ L_i| / (β²|L_i| + |P_i|); micro and by label from "
        "the pooled counts", "Both sets empty: zero_division (0 by default, with a note).",
        aliases=("f_beta", "fbeta_score"), extra=(BETA,), default_set=False, example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multilabel",
        ...           "metrics": [{"metric": "fbeta", "beta": 2, "average": "micro"}]},
        ...          predictions={"label": [["a", "b"], ["c"]],
        ...                       "prediction": [["a"], ["c", "d"]]}).values()  # 5·2 / (4·3 + 3)
        {'fbeta[average=micro,beta=2]': 0.6666666666666666}
        """),
    _set_metric(
        "jaccard", "accuracy",
        "Jaccard index of predicted and true label sets (Spark MLlib's accuracy)",
        "samples: (1/N) Σ_i |L_i ∩ P_i| / |L_i ∪ P_i|; micro: Σ|L∩P| / Σ|L∪P|; "
        "label ℓ: tp_ℓ / (tp_ℓ + fp_ℓ + fn_ℓ)",
        "Both sets empty makes an example's index 0/0: zero_division, 0 by default (with a "
        "note), as scikit-learn's jaccard_score; Spark MLlib gives NaN there.",
        aliases=("jaccard", "jaccard_score"), example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multilabel", "metrics": ["accuracy"]},  # (1/2 + 1/2) / 2
        ...          predictions={"label": [["a", "b"], ["c"]],
        ...                       "prediction": [["a"], ["c", "d"]]}).values()
        {'accuracy': 0.5}
        """),
    Metric(
        "subset_accuracy", FAMILY, "share of examples whose predicted set equals the true set",
        "(1/N) Σ_i [P_i = L_i]", "higher", BOTH, _examples_stats, _subset_value,
        conventions="Sets are compared, so order and duplicates do not matter (Spark MLlib "
        "compares its arrays element by element); two empty sets are equal, as scikit-learn's "
        "accuracy_score on indicator matrices. " + WEIGHTS,
        peer="Spark MLlib MultilabelMetrics.subsetAccuracy; scikit-learn accuracy_score",
        aliases=("exact_match", "exact_match_ratio"), range=(0.0, 1.0),
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multilabel", "metrics": ["subset_accuracy"]},  # sets: b, a = a, b
        ...          predictions={"label": [["a", "b"], ["c"]],
        ...                       "prediction": [["b", "a"], ["c", "d"]]}).values()
        {'subset_accuracy': 0.5}
        """,
    ),
    Metric(
        "hamming_loss", FAMILY, "share of (example, label) pairs predicted wrongly",
        "(1 / (N·|𝓛|)) Σ_i |L_i| + |P_i| − 2|L_i ∩ P_i|", "lower", BOTH, _hamming_stats,
        _hamming_value,
        params=(Param("label_space", str, "union",
                      "|𝓛|: labels seen in truth or predictions (union, as scikit-learn on a "
                      "binarizer fitted to both) or in the truth only (truth, as Spark MLlib)",
                      choices=("union", "truth")),
                Param("n_labels", int, None, "|𝓛| given outright (e.g. the size of the label "
                      "vocabulary); overrides label_space", nullable=True, ge=1)),
        conventions="With label_space=truth (Spark MLlib) predicted labels that are never "
        "true still count as errors in the numerator, so the value can exceed 1. details.labels "
        "gives |𝓛|. " + WEIGHTS,
        peer="scikit-learn hamming_loss (label_space=union); Spark MLlib "
        "MultilabelMetrics.hammingLoss (label_space=truth)",
        aliases=("hamming",), range=(0.0, None),
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multilabel", "metrics": [
        ...     "hamming_loss", {"metric": "hamming_loss", "label_space": "truth"}]},
        ...     predictions={"label": [["a"], ["b"]], "prediction": [["a", "c"], ["b"]]}
        ...     ).values()  # one wrong pair of 2 examples × 3 labels, or × 2 (a, b)
        {'hamming_loss': 0.16666666666666666, 'hamming_loss[label_space=truth]': 0.25}
        """,
    ),
]
