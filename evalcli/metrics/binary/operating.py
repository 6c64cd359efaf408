"""Binary classification's operating points: the best value reachable under a constraint
(recall at a minimum precision, sensitivity at a minimum specificity, ...), the cost-optimal
threshold, and precision and lift in the top fraction of the scores.

Every value here comes from the counts per distinct score (:func:`.stats.score_counts`), the
statistic AUROC, average precision and peak F1 already use: no pass over the data of their
own. The run's memo keeps one table of cumulative counts per table of counts, which all of
them read (:func:`points`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from evalcli.metrics.base import Metric, MetricValue, Param, Params, StatValues, memo_of
from evalcli.metrics.binary.metrics import SCORE, _score_stats
from evalcli.metrics.binary.stats import SCORE_COUNTS
from evalcli.metrics.binary.task import FAMILY

if TYPE_CHECKING:
    import numpy as np
F64 = pl.Float64


# --------------------------------------------------------------------------- the points

@dataclass(frozen=True, eq=False)
class Points:
    """The operating points of a table of counts per score: one entry per distinct score that
    carries weight, highest first, with its own ``pos`` and ``neg`` and the cumulative ``tp``
    and ``fp`` of predicting positive when ``score >= threshold``; ``p`` and ``n`` are the
    weights of the positives and the negatives (the last cumulative counts, so that the lowest
    threshold's recall is exactly 1). Arrays, not a frame: a bootstrap reads a table of points
    per replicate and segment (:attr:`table` builds the frame when asked)."""

    score: np.ndarray
    pos: np.ndarray
    neg: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    p: float
    n: float

    @property
    def size(self) -> int:
        """The number of points."""
        return int(self.score.size)

    @functools.cached_property
    def table(self) -> pl.DataFrame:
        """The points as a frame (columns :data:`SCHEMA`)."""
        return pl.DataFrame({c: getattr(self, c) for c in SCHEMA},
                            schema={c: F64 for c in SCHEMA})


def points(stats: StatValues) -> Points:
    """The run's operating points of the counts per score (computed once per table: the run's
    memo keeps them for every metric that reads them).

    >>> t = pl.DataFrame({"score": [0.2, 0.9, 0.5, 0.7], "pos": [1.0, 1.0, 0.0, 0.0],
    ...                   "neg": [1.0, 0.0, 0.0, 2.0]})
    >>> pts = points({SCORE_COUNTS: t})
    >>> pts.table.select("score", "tp", "fp").rows(), pts.p, pts.n
    ([(0.9, 1.0, 0.0), (0.7, 1.0, 2.0), (0.2, 2.0, 3.0)], 2.0, 3.0)
    """
    table: pl.DataFrame = stats[SCORE_COUNTS]
    return memo_of(stats).get(table, ("operating points",), lambda: _cumulate(table))


SCHEMA = ("score", "pos", "neg", "tp", "fp")
"""The columns of :attr:`Points.table`."""


def _cumulate(table: pl.DataFrame) -> Points:
    # one order (highest score first): the running sums add row after row, so another
    # engine's table of the same counts gives the same bits. Scores carried only by
    # zero-weight rows are left out (a zero weight is no row, as in scikit-learn). In NumPy:
    # no query to plan, for a bootstrap's table per replicate; the running sums add row
    # after row as Polars' do.
    import numpy as np
    score, pos, neg = (table.get_column(c).cast(F64).to_numpy() for c in ("score", "pos", "neg"))
    if score.size > 1 and not bool((score[:-1] >= score[1:]).all()):
        if bool((score[:-1] < score[1:]).all()):  # distinct, ascending (a replicate's table)
            score, pos, neg = score[::-1], pos[::-1], neg[::-1]
        else:  # (NaN, repeated scores: Polars' order, as the pass's tables have it)
            df = table.sort("score", descending=True)
            score, pos, neg = (df.get_column(c).cast(F64).to_numpy()
                               for c in ("score", "pos", "neg"))
    keep = (pos + neg) > 0
    if not keep.all():
        score, pos, neg = score[keep], pos[keep], neg[keep]
    score, pos, neg = (np.ascontiguousarray(a) for a in (score, pos, neg))
    tp, fp = pos.cumsum(), neg.cumsum()
    if not score.size:
        return Points(score, pos, neg, tp, fp, 0.0, 0.0)
    return Points(score, pos, neg, tp, fp, float(tp[-1]), float(fp[-1]))


def _undefined(pts: Points, *, positives: bool, negatives: bool) -> MetricValue | None:
    """The value when the points cannot define the metric (the notes of the curve metrics)."""
    if not pts.size:
        return MetricValue(None, notes=["no rows"])
    if positives and pts.p <= 0:
        return MetricValue(None, notes=["undefined: no positive labels"])
    if negatives and pts.n <= 0:
        return MetricValue(None, notes=["undefined: no negative labels"])
    return None


def _at(t: float | None) -> str:
    return "predicting no row positive" if t is None else f"at threshold {t:.6g}"


# --------------------------------------------------------------------------- constrained optima

@dataclass(frozen=True)
class Constrained:
    """Maximise rate ``value`` over the thresholds where rate ``bound`` is at least a level.

    ``value`` and ``bound`` name rates of the points (:func:`_rate`); at equal ``value`` the
    threshold with the higher ``bound`` is reported (the highest threshold at equal both).
    ``negatives``: the rates need negatives too."""

    value: str
    bound: str
    level_param: str
    negatives: bool


def _rate(name: str, tp: np.ndarray, fp: np.ndarray, p: float, n: float) -> np.ndarray:
    """A rate at each point. In NumPy, which divides element by element (a threshold's
    value is then the correctly rounded quotient: Polars may divide by a scalar as a
    multiplication by its reciprocal, and 14 / 17.5 would give 0.7999999999999999, missing a
    level of 0.8 that scikit-learn's curve reaches), and with no query to plan: a bootstrap
    evaluates these once per replicate (0.7 ms each as Polars queries)."""
    if name == "precision":
        out: np.ndarray = tp / (tp + fp)
    elif name in ("recall", "sensitivity"):
        out = tp / p
    else:
        out = (n - fp) / n
    return out


def _constrained_value(spec: Constrained) -> Callable[[StatValues, Params], MetricValue]:
    def value(stats: StatValues, params: Params) -> MetricValue:
        pts = points(stats)
        bad = _undefined(pts, positives=True, negatives=spec.negatives)
        if bad is not None:
            return bad
        level = float(params[spec.level_param])
        score, tp, fp = pts.score, pts.tp, pts.fp
        v = _rate(spec.value, tp, fp, pts.p, pts.n)
        b = _rate(spec.bound, tp, fp, pts.p, pts.n)
        ok = b >= level
        if not ok.any():
            high = float(b.max())
            note = (f"undefined: no threshold reaches {spec.bound} >= {level:g} (the highest "
                    f"is {high:.6g}, at threshold {float(score[b == high].max()):.6g})")
            if spec.bound == "specificity":
                note += f"; only predicting no row positive does, with {spec.value} 0"
            return MetricValue(None, notes=[note])
        # the best value; at equal value the best bound; at equal both the highest threshold
        v, b, score = v[ok], b[ok], score[ok]
        at = v == v.max()
        b_at = b[at].max()
        best = at & (b == b_at)
        t = float(score[best].max())
        return MetricValue(float(v[best][0]), details={"threshold": t, spec.bound: float(b_at)},
                           caption=_at(t))

    return value


CONSTRAINED = {
    "recall_at_precision": Constrained("recall", "precision", "min_precision", False),
    "precision_at_recall": Constrained("precision", "recall", "min_recall", False),
    "sensitivity_at_specificity": Constrained("sensitivity", "specificity", "min_specificity",
                                              True),
    "specificity_at_sensitivity": Constrained("specificity", "sensitivity", "min_sensitivity",
                                              True),
}


# --------------------------------------------------------------------------- cost

def _min_cost_value(stats: StatValues, params: Params) -> MetricValue:
    pts = points(stats)
    if not pts.size:
        return MetricValue(None, notes=["no rows"])
    c_fp, c_fn = float(params["fp_cost"]), float(params["fn_cost"])
    total = pts.p + pts.n
    score, tp, fp = pts.score, pts.tp, pts.fp
    fn = pts.p - tp
    cost = c_fp * fp + c_fn * fn
    i = int(cost.argmin())  # the first lowest: the highest threshold
    none = c_fn * pts.p  # predicting no row positive: every positive missed
    if none <= float(cost[i]):
        return MetricValue(none / total, details={"threshold": None, "fp": 0.0, "fn": pts.p},
                           caption=_at(None))
    return MetricValue(float(cost[i]) / total,
                       details={"threshold": float(score[i]), "fp": float(fp[i]),
                                "fn": float(fn[i])},
                       caption=_at(float(score[i])))


# --------------------------------------------------------------------------- top fraction

def _top(pts: Points, fraction: float) -> tuple[float, float, float]:
    """The weight ``k`` of the top ``fraction``, the (expected) weight of positives in it, and
    the lowest score in it. The rows tied at the cut count in part: the share of their weight
    the top still holds (the expected value over the orders of the tied rows)."""
    k = fraction * (pts.p + pts.n)
    m = pts.tp + pts.fp
    reached = (m >= k).nonzero()[0]
    i = int(reached[0]) if reached.size else pts.size - 1  # (k rounded above the total)
    score, pos, neg, tp = (float(a[i]) for a in (pts.score, pts.pos, pts.neg, pts.tp))
    before = float(m[i]) - pos - neg
    share = min(max((k - before) / (pos + neg), 0.0), 1.0)
    return k, (tp - pos) + pos * share, float(score)


def _precision_at_top_value(stats: StatValues, params: Params) -> MetricValue:
    pts = points(stats)
    bad = _undefined(pts, positives=False, negatives=False)
    if bad is not None:
        return bad
    k, hits, t = _top(pts, float(params["fraction"]))
    return MetricValue(hits / k, details={"threshold": t, "top_weight": k}, caption=_at(t))


def _lift_at_top_value(stats: StatValues, params: Params) -> MetricValue:
    pts = points(stats)
    bad = _undefined(pts, positives=True, negatives=False)
    if bad is not None:
        return bad
    k, hits, t = _top(pts, float(params["fraction"]))
    base = pts.p / (pts.p + pts.n)
    return MetricValue((hits / k) / base,
                       details={"threshold": t, "top_weight": k, "precision": hits / k,
                                "base_rate": base},
                       caption=_at(t))


def gain_table(pts: Points, groups: int) -> pl.DataFrame:
    """Cumulative gain and lift by group: the rows ranked by score (highest first) cut into
    ``groups`` equal shares of the weight (deciles with 10), one row per cut ``j`` at the top
    fraction ``j/groups``, as :func:`_top` counts it (the rows tied at a cut count in part: the
    expected value over the orders of tied rows). Columns: ``group`` (from 1), ``fraction``,
    ``threshold`` (the lowest score in the top), ``weight`` and ``positives`` (cumulative),
    ``gain`` (the share of all positives in the top), ``lift`` (gain / fraction, computed as
    lift_at_top computes it: the top's precision over the base rate),
    ``group_rate`` (the positive rate of the group alone) and ``group_lift`` (that rate over
    the base rate). Needs rows and positives.

    >>> t = pl.DataFrame({"score": [0.9, 0.8, 0.1], "pos": [1.0, 1.0, 0.0],
    ...                   "neg": [0.0, 1.0, 1.0]})
    >>> # the top half: 0.9 and half the weight tied at 0.8, so half its positive
    >>> gain_table(points({SCORE_COUNTS: t}), 2).select("positives", "gain", "lift").rows()
    [(1.5, 0.75, 1.5), (2.0, 1.0, 1.0)]
    """
    return pl.DataFrame(_gains(pts, groups))


def _gains(pts: Points, groups: int) -> dict[str, np.ndarray]:
    """:func:`gain_table`'s columns, as arrays (no frame: lift_table's value in a bootstrap's
    replicates)."""
    import numpy as np
    pos, neg, tp, score = pts.pos, pts.neg, pts.tp, pts.score
    m = tp + pts.fp
    total = pts.p + pts.n
    fraction = np.array([j / groups for j in range(1, groups + 1)])
    k = fraction * total  # the same floating-point operations as _top's
    at = np.minimum(np.searchsorted(m, k, side="left"), m.size - 1)
    before = m[at] - pos[at] - neg[at]
    share = np.clip((k - before) / (pos[at] + neg[at]), 0.0, 1.0)
    hits = (tp[at] - pos[at]) + pos[at] * share
    hits[-1] = pts.p  # the whole population holds every positive, exactly
    k[-1] = total
    base = pts.p / total
    group_w = np.diff(k, prepend=0.0)
    group_rate = np.diff(hits, prepend=0.0) / group_w
    gain = hits / pts.p
    return {
        "group": np.arange(1, groups + 1, dtype=np.int64), "fraction": fraction,
        "threshold": score[at], "weight": k, "positives": hits, "gain": gain,
        "lift": (hits / k) / base, "group_rate": group_rate, "group_lift": group_rate / base}


def _lift_table_value(stats: StatValues, params: Params) -> MetricValue:
    pts = points(stats)
    bad = _undefined(pts, positives=True, negatives=False)
    if bad is not None:
        return bad
    groups = int(params["groups"])
    table = memo_of(stats).get(pts, ("gain table", groups), lambda: _gains(pts, groups))
    rows = [dict(zip(table, r, strict=True)) for r in zip(*(a.tolist() for a in table.values()),
                                                           strict=True)]
    return MetricValue(rows[0]["lift"],
                       details={"base_rate": pts.p / (pts.p + pts.n), "groups": rows},
                       caption=_at(rows[0]["threshold"]))


# --------------------------------------------------------------------------- declarations

def _level(name: str, rate: str) -> Param:
    return Param(name, float, None, f"the lowest {rate} an operating point may have, from 0 "
                 "to 1", ge=0.0, le=1.0)


FRACTION = Param("fraction", float, None, "the share of the rows (of the weight) with the "
                 "highest scores, from 0 (excluded) to 1: 0.01 is the top 1% (the cut-off: "
                 "lift@0.01 is lift_at_top[fraction=0.01])", gt=0.0, le=1.0)
THRESHOLDS = ("Thresholds are the distinct scores (a row is predicted positive when score >= "
              "threshold); the threshold reaching the value is in details.threshold, with the "
              "constrained rate there. ")
PEER_AT = ("torchmetrics' {} and Keras' {} (there over a grid of thresholds, here exact over "
           "every distinct score); scikit-learn's {} gives the same points")


def _constrained_metric(name: str, summary: str, formula: str, other: str, aliases: tuple[str,
                        ...], peer: str, example: str) -> Metric:
    spec = CONSTRAINED[name]
    no_point = (
        "Undefined, with a note naming the best " + spec.bound + " reached, when no threshold "
        "reaches the level (torchmetrics and Keras report 0 there)")
    if spec.bound == "specificity":
        no_point += ("; predicting no row positive always does, with " + spec.value + " 0, "
                     "and is not counted as a threshold")
    return Metric(
        name, FAMILY, summary, formula, "higher", (SCORE,), _score_stats,
        _constrained_value(spec),
        params=(_level(spec.level_param, spec.bound),),
        conventions=THRESHOLDS + f"At equal {spec.value}, the threshold with the highest "
        f"{spec.bound} is reported. " + no_point + ". Undefined "
        "without positives" + (" or negatives" if spec.negatives else "") + ". Weighted "
        "counts.",
        peer=peer, aliases=aliases, range=(0.0, 1.0), in_default_set=False, example=example,
    )


METRICS: list[Metric] = [
    _constrained_metric(
        "recall_at_precision", "highest recall over the thresholds whose precision is at least "
        "min_precision, with the threshold reaching it",
        "max_t tp(t)/P over the t with tp(t)/(tp(t)+fp(t)) >= min_precision", "precision",
        ("recall_at_fixed_precision",),
        PEER_AT.format("BinaryRecallAtFixedPrecision", "RecallAtPrecision",
                       "precision_recall_curve"),
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "binary", "metrics": ["recall_at_precision[min_precision=0.65]"]},
        ...              predictions={"label": [1, 0, 1, 0, 1], "score": [0.9, 0.8, 0.7, 0.6, 0.1]})
        >>> r.values(), r.metric("recall_at_precision[min_precision=0.65]").details
        ({'recall_at_precision[min_precision=0.65]': 0.6666666666666666},
         {'threshold': 0.7, 'precision': 0.6666666666666666})
        """),
    _constrained_metric(
        "precision_at_recall", "highest precision over the thresholds whose recall is at least "
        "min_recall, with the threshold reaching it",
        "max_t tp(t)/(tp(t)+fp(t)) over the t with tp(t)/P >= min_recall", "recall",
        ("precision_at_fixed_recall",),
        PEER_AT.format("BinaryPrecisionAtFixedRecall", "PrecisionAtRecall",
                       "precision_recall_curve"),
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "binary", "metrics": ["precision_at_recall[min_recall=0.5]"]},
        ...              predictions={"label": [1, 0, 1, 1, 0], "score": [0.9, 0.8, 0.8, 0.3, 0.2]})
        >>> r.values(), r.metric("precision_at_recall[min_recall=0.5]").details  # 0.8 is a tie
        ({'precision_at_recall[min_recall=0.5]': 0.75}, {'threshold': 0.3, 'recall': 1.0})
        """),
    _constrained_metric(
        "sensitivity_at_specificity", "highest sensitivity (recall) over the thresholds whose "
        "specificity is at least min_specificity, with the threshold reaching it",
        "max_t tp(t)/P over the t with (N − fp(t))/N >= min_specificity", "specificity",
        ("tpr_at_specificity",),
        PEER_AT.format("BinarySensitivityAtSpecificity", "SensitivityAtSpecificity",
                       "roc_curve"),
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "binary", "metrics": [
        ...     {"metric": "sensitivity_at_specificity", "min_specificity": 0.99}]},
        ...     predictions={"label": [1, 0, 1, 0], "score": [0.3, 0.9, 0.2, 0.1]})
        >>> r.values(), r.metric("sensitivity_at_specificity[min_specificity=0.99]").notes
        ({'sensitivity_at_specificity[min_specificity=0.99]': None},
         ['undefined: no threshold reaches specificity >= 0.99 (the highest is 0.5, at
           threshold 0.9); only predicting no row positive does, with sensitivity 0'])
        """),
    _constrained_metric(
        "specificity_at_sensitivity", "highest specificity over the thresholds whose "
        "sensitivity (recall) is at least min_sensitivity, with the threshold reaching it",
        "max_t (N − fp(t))/N over the t with tp(t)/P >= min_sensitivity", "sensitivity",
        ("tnr_at_sensitivity",),
        PEER_AT.format("BinarySpecificityAtSensitivity", "SpecificityAtSensitivity",
                       "roc_curve"),
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "binary", "metrics": [
        ...     {"metric": "specificity_at_sensitivity", "min_sensitivity": 0.5}]},
        ...     predictions={"label": [1, 0, 1, 0, 0], "score": [0.8, 0.9, 0.4, 0.3, 0.1]},
        ...     ).metric("specificity_at_sensitivity[min_sensitivity=0.5]")
        >>> r.value, r.details  # 0.8 and 0.4 both reach 2/3: 0.4 has the higher sensitivity
        (0.6666666666666666, {'threshold': 0.4, 'sensitivity': 1.0})
        """),
    Metric(
        "min_cost", FAMILY, "lowest mean cost of the errors over all thresholds, with the "
        "cost-optimal threshold",
        "min_t (fp_cost·fp(t) + fn_cost·fn(t)) / Σ w, over the distinct scores and predicting "
        "no row positive",
        "lower", (SCORE,), _score_stats, _min_cost_value,
        params=(Param("fp_cost", float, 1.0, "cost of a false positive", gt=0.0),
                Param("fn_cost", float, 1.0, "cost of a false negative", gt=0.0)),
        conventions="The mean cost per row (per unit of weight), so segments and data sets of "
        "other sizes compare. Thresholds are the distinct scores (score >= threshold predicts "
        "positive) and predicting no row positive (details.threshold null); at equal cost the "
        "highest threshold is reported, with its weighted fp and fn in details. At the "
        "default costs it is the lowest error rate, 1 − the best accuracy. The Bayes-optimal "
        "threshold of calibrated probabilities is fp_cost / (fp_cost + fn_cost); this one is "
        "the empirical optimum on the data.",
        peer="the empirical minimum of a cost curve (Drummond & Holte), what scikit-learn's "
        "TunedThresholdClassifierCV maximises with a cost scorer (there over a grid of "
        "thresholds, cross-validated); checked against scikit-learn's roc_curve counts",
        aliases=("min_expected_cost",), range=(0.0, None), in_default_set=False,
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "binary", "metrics": [{"metric": "min_cost", "fn_cost": 5}]},
        ...              predictions={"label": [1, 0, 1, 0, 0], "score": [0.9, 0.8, 0.4, 0.3, 0.1]})
        >>> r.values(), r.metric("min_cost[fn_cost=5]").details  # at 0.4: one fp (1), no fn
        ({'min_cost[fn_cost=5]': 0.2}, {'threshold': 0.4, 'fp': 1.0, 'fn': 0.0})
        """,
    ),
    Metric(
        "precision_at_top", FAMILY, "precision among the rows with the highest scores, the top "
        "fraction of them",
        "(positives in the top fraction·Σw of weight) / (fraction·Σw), rows by score, highest "
        "first",
        "higher", (SCORE,), _score_stats, _precision_at_top_value,
        params=(FRACTION,), cutoff="fraction",
        conventions="The top holds fraction·Σw of weight (fraction·N rows, unweighted), not "
        "rounded to whole rows. The rows whose score equals the lowest score in the top count "
        "in part: the share of their weight the top still holds, with that share of their "
        "positives (the expected value over the orders of tied rows). So the value does not "
        "depend on the order of the rows, and integer weights equal duplicated rows. "
        "details.threshold is the lowest score in the top, details.top_weight its weight.",
        peer="precision@k of the retrieval literature at k = fraction·N, with tied scores "
        "counted as their expectation (no peer library computes this at a fraction; checked "
        "against scikit-learn's roc_curve counts, interpolated within tied scores)",
        aliases=("precision_at_fraction", "top_precision"), range=(0.0, 1.0),
        in_default_set=False,
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "binary", "metrics": ["precision_at_top@0.25"]},
        ...              predictions={"label": [1, 0, 1, 0, 0, 0, 1, 0],
        ...                           "score": [0.9, 0.7, 0.7, 0.7, 0.5, 0.3, 0.2, 0.1]})
        >>> r.values()  # the top 2 rows: 0.9 (+) and one of the three at 0.7 (1 of 3 positive)
        {'precision_at_top@0.25': 0.6666666666666666}
        """,
    ),
    Metric(
        "lift_at_top", FAMILY, "precision in the top fraction of the scores over the share of "
        "positives (lift)",
        "precision_at_top(fraction) / (P / Σw)",
        "higher", (SCORE,), _score_stats, _lift_at_top_value,
        params=(FRACTION,), cutoff="fraction",
        conventions="precision_at_top over the base rate: 1 is no better than picking rows "
        "at random, 1/base rate is every row of the top positive. Ties count in part as in "
        "precision_at_top. Undefined without positives. details holds the threshold, the "
        "top's weight, its precision and the base rate.",
        peer="the lift of marketing lift charts (scikit-plot's plot_lift_curve at one "
        "fraction); checked against scikit-learn's roc_curve counts",
        aliases=("lift",), range=(0.0, None), in_default_set=False,
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "binary", "metrics": ["lift@0.2"]},
        ...              predictions={"label": [1, 1, 0, 0, 0, 0, 1, 0, 0, 0],
        ...                           "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]})
        >>> r.values()  # precision 1 in the top 2 rows, base rate 3/10
        {'lift_at_top@0.2': 3.3333333333333335}
        """,
    ),
    Metric(
        "lift_table", FAMILY, "cumulative gain and lift by group (deciles by default) of the "
        "rows ranked by score; the value is the top group's lift",
        "for the top fraction f_j = j/groups (j = 1..groups) of the weight, highest scores "
        "first: gain_j = (positives in the top) / P, lift_j = gain_j / f_j; value lift_1",
        "higher", (SCORE,), _score_stats, _lift_table_value,
        params=(Param("groups", int, 10, "number of equal shares of the weight the ranked "
                      "rows are cut into: 10 gives deciles, 20 ventiles", ge=1, le=1000),),
        conventions="The cut j holds j/groups·Σw of weight (not rounded to whole rows); "
        "the rows tied at a cut count in part, as in precision_at_top and lift_at_top (the "
        "expected value over the orders of tied rows), so the value is lift_at_top at "
        "fraction 1/groups and integer weights equal duplicated rows. details.groups holds "
        "one row per cut: group (from 1), fraction, threshold (the lowest score in the top), "
        "weight and positives (cumulative), gain, lift (cumulative), group_rate (the positive "
        "rate of the group alone) and group_lift (group_rate over the base rate); "
        "details.base_rate = P / Σw. The last row has gain 1 and lift 1. --curves writes the "
        "rows (file gain) and the HTML report draws the gain and lift charts. Undefined "
        "without positives.",
        peer="the cumulative gain and lift charts of scikit-plot (plot_cumulative_gain, "
        "plot_lift_curve) read at the group cuts, and the decile lift table of marketing "
        "analytics; checked against scikit-learn's roc_curve counts, interpolated within tied "
        "scores",
        aliases=("gain_table", "decile_lift", "cumulative_gain"), range=(0.0, None),
        in_default_set=False,
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "binary", "metrics": [{"metric": "lift_table", "groups": 5}]},
        ...              predictions={"label": [1, 1, 0, 1, 0, 0, 1, 0, 0, 0],
        ...                           "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]})
        >>> r.values()  # the top 2 rows are both positive; base rate 4/10
        {'lift_table[groups=5]': 2.5}
        >>> [(g["fraction"], g["gain"], g["lift"]) for g in r.metric(
        ...     "lift_table[groups=5]").details["groups"]][:3]
        [(0.2, 0.5, 2.5), (0.4, 0.75, 1.875), (0.6, 0.75, 1.25)]
        """,
    ),
]


