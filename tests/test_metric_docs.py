"""The metric documentation is the registry's.

- Every built-in metric declares an ``example``: a doctest that computes it with
  ``evalcli.evaluate`` and shows the value. Each runs here (doctest's parser and runner), and
  each value it shows is checked against an independent reference (scikit-learn, ranx, numpy)
  or, where no peer computes the convention, against the arithmetic written out below: the
  inputs the example passes are recorded and handed to the reference, so the example cannot
  show a value that only evalcli computes.
- ``docs/metrics.md`` is exactly what ``evalcli metrics --markdown`` prints for the built-ins.
- The README's metric lists name exactly the registered metrics of each family.
"""

from __future__ import annotations

import doctest
import inspect
import io
import itertools
import math
import re
import tempfile
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import sklearn.metrics as skm
from typer.testing import CliRunner

import evalcli
import evalcli.api
from evalcli.cli import app
from evalcli.metrics import registry
from evalcli.metrics.base import Metric
from evalcli.metrics.registry import builtin_registry
from evalcli.result import RunResult

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [  # the references' warnings on the examples' edge cases, on purpose
    pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true:UserWarning"),
    pytest.mark.filterwarnings("ignore:The y_prob values do not sum to one:UserWarning"),
]

BUILTINS: dict[str, Metric] = {f"{m.family}/{m.name}": m for m in builtin_registry()}


# --------------------------------------------------------------------------- running an example

@dataclass
class Call:
    """One ``evalcli.evaluate`` call an example made: what it passed and what it got."""

    config: Mapping[str, Any]
    predictions: pl.DataFrame | None
    truth: pl.DataFrame | None
    result: RunResult

    def col(self, name: str, frame: str = "predictions") -> np.ndarray:
        df = self.predictions if frame == "predictions" else self.truth
        assert df is not None
        return df.get_column(self.config.get("columns", {}).get(name, name)).to_numpy()

    def weights(self) -> np.ndarray | None:
        """The weight column the config names, if any."""
        name = self.config.get("columns", {}).get("weight")
        return None if name is None or self.predictions is None else \
            self.predictions.get_column(name).to_numpy()

    def yp(self) -> tuple[np.ndarray, np.ndarray]:
        return self.col("label"), self.col("prediction")


def _frame(value: Any) -> pl.DataFrame | None:
    if value is None or isinstance(value, pl.DataFrame):
        return value
    if isinstance(value, pl.LazyFrame):
        return value.collect()
    return pl.DataFrame(dict(value))


def run_example(metric: Metric, monkeypatch: pytest.MonkeyPatch,
                tmp_path: Path | None = None) -> list[Call]:
    """Run ``metric.example`` as a doctest; fail with doctest's report; return its calls.

    The side files an example writes into ``tempfile.mkdtemp()`` go to ``tmp_path``."""
    assert metric.example.strip(), (
        f"{metric.family}/{metric.name} has no example: add example=\"\"\" >>> ... \"\"\" to its "
        "declaration (a doctest calling evalcli.evaluate on a few rows, see the others)")
    calls: list[Call] = []
    real = evalcli.api.evaluate

    def recording(config: Any, *, predictions: Any = None, truth: Any = None,
                  gating: bool = True) -> RunResult:
        result = real(config, predictions=predictions, truth=truth, gating=gating)
        calls.append(Call(dict(config), _frame(predictions), _frame(truth), result))
        return result

    monkeypatch.setattr(evalcli, "evaluate", recording)
    if tmp_path is not None:
        monkeypatch.setattr(tempfile, "mkdtemp", lambda *a, **k: str(tmp_path))
    name = f"{metric.family}/{metric.name}"
    test = doctest.DocTestParser().get_doctest(
        inspect.cleandoc(metric.example), {}, name, f"<example of {name}>", 0)
    report = io.StringIO()
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    outcome = runner.run(test, out=report.write)
    assert outcome.failed == 0, f"the example of {name} fails:\n{report.getvalue()}"
    assert any(m.metric == metric.name and m.family == metric.family
               for c in calls for m in c.result.metrics), (
        f"the example of {name} must compute it with `from evalcli import evaluate`")
    return calls


# --------------------------------------------------------------------------- references
# Each takes a recorded call and returns what it must give: values by metric id, and
# (id, detail) -> value for the details an example shows. NaN (scikit-learn's undefined)
# stands for None.

Expected = Mapping[Any, Any]
Reference = Callable[[Call], Expected]


def _reg(fn: Callable[..., float], *ids: str) -> Reference:
    """A scikit-learn regression metric with the example's weights, under each id."""
    def ref(c: Call) -> Expected:
        y, p = c.yp()
        return {i: fn(y, p, sample_weight=c.weights()) for i in ids}
    return ref


def _r2_through_origin(c: Call) -> float:
    """Spark's R² through the origin (RegressionMetrics(throughOrigin=true)), written out:
    1 − Σ w·(y − ŷ)² / Σ w·y²; checked against Spark itself in tests/test_spark_mllib.py."""
    y, p = c.yp()
    w = np.ones(len(y)) if c.weights() is None else c.weights()
    return float(1 - np.sum(w * (y - p) ** 2) / np.sum(w * y * y))


def _max_error(c: Call) -> Expected:
    y, p = c.yp()
    w = c.weights()
    keep = np.ones(len(y), bool) if w is None else w > 0  # a zero weight is no row
    return {"max_error": skm.max_error(y[keep], p[keep])}


def _hard(c: Call, params: Mapping[str, Any]) -> np.ndarray:
    """Binary hard predictions: score >= threshold when one is set, else the prediction
    column, else score >= 0.5."""
    if params.get("threshold") is not None:
        return (c.col("score") >= params["threshold"]).astype(int)
    if c.predictions is not None and "prediction" in c.predictions.columns:
        return c.col("prediction")
    return (c.col("score") >= 0.5).astype(int)


def _per_metric(fn: Callable[[Call, Mapping[str, Any]], Any]) -> Reference:
    """``fn(call, params)`` for each metric the call computed, by id."""
    return lambda c: {m.id: fn(c, m.params) for m in c.result.metrics}


def _counts(fn: Callable[..., float], **kw: Any) -> Reference:
    """A scikit-learn metric of labels and hard predictions, with the example's weights."""
    def ref(c: Call, params: Mapping[str, Any]) -> float:
        extra = dict(kw)
        takes = inspect.signature(fn).parameters
        if "zero_division" in params and "zero_division" in takes:
            extra["zero_division"] = {"0": 0.0, "1": 1.0, "nan": np.nan}[params["zero_division"]]
        if "beta" in params:
            extra["beta"] = params["beta"]
        return fn(c.col("label"), _hard(c, params), sample_weight=c.weights(), **extra)
    return _per_metric(ref)


def _fpr(y: np.ndarray, p: np.ndarray, sample_weight: Any = None, **kw: Any) -> float:
    tn, fp, _, _ = skm.confusion_matrix(y, p, sample_weight=sample_weight, labels=[0, 1]).ravel()
    return float(fp / (fp + tn))


def _scores(fn: Callable[..., float], **kw: Any) -> Reference:
    """A scikit-learn metric of labels and scores, with the example's weights."""
    return _per_metric(lambda c, _: fn(c.col("label"), c.col("score"),
                                       sample_weight=c.weights(), **kw))


def _auprc(y: np.ndarray, s: np.ndarray, sample_weight: Any = None) -> float:
    """Spark MLlib's areaUnderPR: the trapezoid over scikit-learn's PR points (one per
    distinct score), starting at (recall 0, precision of the top score)."""
    precision, recall, _ = skm.precision_recall_curve(y, s, sample_weight=sample_weight)
    precision, recall = precision[:-1][::-1], recall[:-1][::-1]  # drop sklearn's (0, 1) end
    return float(np.trapezoid(np.r_[precision[0], precision], np.r_[0.0, recall]))


def _peak_f1(c: Call) -> Expected:
    y, s = c.col("label"), c.col("score")
    f1 = {t: skm.f1_score(y, s >= t, sample_weight=c.weights()) for t in np.unique(s)}
    best = max(f1.values())
    return {"peak_f1": best, ("peak_f1", "threshold"): max(t for t in f1 if f1[t] == best)}


def _curve_points(c: Call, curve: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(precision, recall, thresholds) from scikit-learn's precision_recall_curve, or
    (specificity, sensitivity, thresholds) from its roc_curve, one point per distinct score
    (every threshold kept; the ends without a score dropped)."""
    y, s, w = c.col("label"), c.col("score"), c.weights()
    if curve == "pr":
        precision, recall, thr = skm.precision_recall_curve(y, s, sample_weight=w,
                                                            drop_intermediate=False)
        return precision[:-1], recall[:-1], thr
    fpr, tpr, thr = skm.roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    return 1 - fpr[1:], tpr[1:], thr[1:]


OPERATING = {  # metric: (curve, index of the value, index of the bound, bound's name)
    "recall_at_precision": ("pr", 1, 0, "precision"),
    "precision_at_recall": ("pr", 0, 1, "recall"),
    "sensitivity_at_specificity": ("roc", 1, 0, "specificity"),
    "specificity_at_sensitivity": ("roc", 0, 1, "sensitivity"),
}


def _operating(c: Call) -> Expected:
    """The best value over scikit-learn's curve points whose bound reaches the level; at
    equal value the best bound, then the highest threshold; nan when none does."""
    out: dict[Any, Any] = {}
    for m in c.result.metrics:
        curve, vi, bi, bound = OPERATING[m.metric]
        pts = _curve_points(c, curve)
        level = next(v for k, v in m.params.items() if k.startswith("min_"))
        ok = [(pts[vi][i], pts[bi][i], pts[2][i]) for i in range(len(pts[2]))
              if pts[bi][i] >= level]
        if not ok:
            out[m.id] = np.nan
            continue
        v, b, t = max(ok)
        out.update({m.id: v, (m.id, "threshold"): t, (m.id, bound): b})
    return out


def _cost_and_top(c: Call) -> Expected:
    """min_cost over scikit-learn's ROC counts (its first point predicts nothing: threshold
    None); precision and lift in the top fraction, the cumulative positives interpolated at
    fraction·Σw inside the tied block the cut falls in (expected over tie orders)."""
    y, w = c.col("label"), c.weights()
    ww = np.ones(len(y)) if w is None else w
    p, n = ww[y == 1].sum(), ww[y == 0].sum()
    fpr, tpr, thr = skm.roc_curve(y, c.col("score"), sample_weight=w, drop_intermediate=False)
    fps, tps = fpr * n, tpr * p
    out: dict[Any, Any] = {}
    for m in c.result.metrics:
        if m.metric == "min_cost":
            cost = m.params["fp_cost"] * fps + m.params["fn_cost"] * (p - tps)
            i = int(np.argmin(cost))  # the first minimum: the highest threshold
            out.update({m.id: cost[i] / (p + n),
                        (m.id, "threshold"): None if i == 0 else float(thr[i]),
                        (m.id, "fp"): fps[i], (m.id, "fn"): p - tps[i]})
        else:
            k = m.params["fraction"] * (p + n)
            precision = np.interp(k, tps + fps, tps) / k
            out[m.id] = precision / (p / (p + n)) if m.metric == "lift_at_top" else precision
    return out


def _lift_table(c: Call) -> Expected:
    """Cumulative gain and lift at the cuts j/groups: scikit-learn's ROC counts, the positives
    interpolated at j/groups·Σw inside the tied block a cut falls in (scikit-plot's
    cumulative_gain_curve read at the cuts when no score is tied)."""
    y, w = c.col("label"), c.weights()
    ww = np.ones(len(y)) if w is None else w
    p, n = ww[y == 1].sum(), ww[y == 0].sum()
    fpr, tpr, _ = skm.roc_curve(y, c.col("score"), sample_weight=w, drop_intermediate=False)
    out: dict[Any, Any] = {}
    for m in c.result.metrics:
        fraction = np.arange(1, m.params["groups"] + 1) / m.params["groups"]
        gain = np.interp(fraction * (p + n), tpr * p + fpr * n, tpr * p) / p
        out[m.id] = gain[0] / fraction[0]
        out[(m.id, "base_rate")] = p / (p + n)
    return out


def _calibration(c: Call) -> Expected:
    """ECE and MCE from scikit-learn's calibration_curve (per-bin positive rate and mean score
    of the non-empty bins) and the bins' row counts, binned as it bins (unweighted)."""
    from sklearn.calibration import calibration_curve

    assert c.weights() is None
    y, s = c.col("label"), c.col("score")
    out: dict[Any, Any] = {}
    for m in c.result.metrics:
        bins, strategy = m.params["bins"], m.params["strategy"]
        rate, mean = calibration_curve(y, s, n_bins=bins, strategy=strategy)
        edges = (np.linspace(0, 1, bins + 1) if strategy == "uniform" else
                 np.percentile(s, np.linspace(0, 1, bins + 1) * 100))
        counts = np.bincount(np.searchsorted(edges[1:-1], s), minlength=bins)
        gap = np.abs(rate - mean)
        out[m.id] = (float((counts[counts > 0] * gap).sum() / len(s)) if m.metric == "ece"
                     else float(gap.max()))
    return out


ZERO_DIVISION = {"0": 0.0, "1": 1.0, "nan": np.nan}


def _class_scores(c: Call) -> tuple[list[Any], np.ndarray]:
    """Multiclass scores as (classes, rows × classes): wide columns named by a prefix, or a
    list column in the order of ``options.classes``."""
    options = c.config.get("options", {})
    assert c.predictions is not None
    if "score_prefix" in options:
        cols = [n for n in c.predictions.columns if n.startswith(options["score_prefix"])]
        return ([n.removeprefix(options["score_prefix"]) for n in cols],
                c.predictions.select(cols).to_numpy())
    return list(options["classes"]), np.array(c.predictions.get_column("score").to_list())


def _class_pred(c: Call) -> np.ndarray:
    """The predicted class: the prediction column, else the best-scored class."""
    assert c.predictions is not None
    if "prediction" in c.predictions.columns:
        return c.col("prediction")
    classes, scores = _class_scores(c)
    return np.array(classes)[scores.argmax(axis=1)]


def _by_label(fn: Callable[..., Any]) -> Reference:
    """A scikit-learn per-label metric under the metric's average, label and labels."""
    def ref(c: Call, params: Mapping[str, Any]) -> float:
        kw: dict[str, Any] = {"sample_weight": c.weights(),
                              "zero_division": ZERO_DIVISION[params["zero_division"]]}
        if "beta" in params:
            kw["beta"] = params["beta"]
        y, p = c.col("label"), _class_pred(c)
        if params.get("label") is not None:
            return float(fn(y, p, labels=[params["label"]], average=None, **kw)[0])
        return float(fn(y, p, labels=params.get("labels"), average=params["average"], **kw))
    return _per_metric(ref)


def _mc_fpr(y: np.ndarray, p: np.ndarray, labels: Any = None, average: str | None = "macro",
            sample_weight: Any = None, zero_division: float = 0.0) -> Any:
    """FPR by label from scikit-learn's one-vs-rest confusion matrices."""
    mcm = skm.multilabel_confusion_matrix(y, p, sample_weight=sample_weight, labels=labels)
    tn, fp, support = mcm[:, 0, 0], mcm[:, 0, 1], mcm[:, 1, :].sum(axis=1)
    per = fp / (fp + tn)
    if average is None:
        return per
    if average == "micro":
        return fp.sum() / (fp.sum() + tn.sum())
    return float(np.average(per, weights=support if average == "weighted" else None))


def _top_k(c: Call, params: Mapping[str, Any]) -> float:
    """Top-k accuracy with ties written out: a true class with `above` classes scored higher
    and `tied` scored equal (itself included) is in the top k with chance
    clip((k − above) / tied, 0, 1) (expected), or when above < k (optimistic), or when
    above + tied <= k (pessimistic)."""
    classes, scores = _class_scores(c)
    y = c.col("label")
    true = scores[np.arange(len(y)), [classes.index(v) for v in y]][:, None]
    above, tied = (scores > true).sum(axis=1), (scores == true).sum(axis=1)
    k = params["k"]
    hit = {"expected": np.clip((k - above) / tied, 0, 1), "optimistic": above < k,
           "pessimistic": above + tied <= k}[params["ties"]]
    return float(np.average(hit, weights=c.weights()))


def _mc_curves(c: Call) -> Expected:
    """scikit-learn's roc_auc_score (multi_class, average; labels: the scored classes in order)
    and average_precision_score on one-hot truth (per-class values: tests/test_multiclass.py)."""
    options = c.config.get("options", {})
    if "score_prefix" in options or "classes" in options:
        classes, scores = _class_scores(c)
    else:  # a list column of integer classes: position i is class i
        assert c.predictions is not None
        scores = np.array(c.predictions.get_column("score").to_list())
        classes = list(range(scores.shape[1]))
    order = sorted(range(len(classes)), key=lambda i: classes[i])
    classes, scores = [classes[i] for i in order], scores[:, order]
    y = c.col("label")
    onehot = (np.asarray(y)[:, None] == np.array(classes)[None, :]).astype(float)
    out: dict[Any, Any] = {}
    for m in c.result.metrics:
        if "multi_class" in m.params:  # auroc
            kw = {"multi_class": m.params["multi_class"], "labels": classes}
            out[m.id] = skm.roc_auc_score(y, scores, average=m.params["average"],
                                          sample_weight=c.weights(), **kw)
        else:
            out[m.id] = skm.average_precision_score(onehot, scores, average=m.params["average"],
                                                    sample_weight=c.weights())
    return out


def _mc_calibration(c: Call) -> Expected:
    """Top-label: calibration_curve on (top class right, top score) with the bins' row counts;
    classwise: the mean (ECE) or maximum (MCE) of each class's calibration_curve one-vs-rest
    (unweighted; both checked at length in tests/test_multiclass.py)."""
    from sklearn.calibration import calibration_curve

    assert c.weights() is None and c.predictions is not None
    scores = np.array(c.predictions.get_column("score").to_list())
    y = np.asarray(c.col("label"))

    def binned(t: Any, s: Any, bins: int, strategy: str) -> tuple[float, float]:
        rate, mean = calibration_curve(t, s, n_bins=bins, strategy=strategy)
        edges = (np.linspace(0, 1, bins + 1) if strategy == "uniform" else
                 np.percentile(s, np.linspace(0, 1, bins + 1) * 100))
        counts = np.bincount(np.searchsorted(edges[1:-1], s), minlength=bins)
        gap = np.abs(rate - mean)
        return float((counts[counts > 0] * gap).sum() / len(s)), float(gap.max())

    out: dict[Any, Any] = {}
    for m in c.result.metrics:
        bins, strategy, i = m.params["bins"], m.params["strategy"], int(m.metric == "mce")
        if m.params["kind"] == "top_label":
            out[m.id] = binned((scores.argmax(axis=1) == y).astype(int), scores.max(axis=1),
                               bins, strategy)[i]
        else:
            per = [binned((y == k).astype(int), scores[:, k], bins, strategy)[i]
                   for k in range(scores.shape[1])]
            out[m.id] = float(np.mean(per)) if i == 0 else max(per)
    return out


def _confusion(c: Call) -> Expected:
    y, p = c.col("label"), _class_pred(c)
    labels = sorted(set(y) | set(p))
    w = c.weights()
    return {"confusion_matrix": float(len(y) if w is None else w.sum()),
            ("confusion_matrix", "labels"): labels,
            ("confusion_matrix", "matrix"): skm.confusion_matrix(
                y, p, labels=labels, sample_weight=w).tolist()}


def _mc_table(fn: Callable[..., float], params: Callable[[Mapping[str, Any]], dict[str, Any]]
              = lambda _: {}) -> Reference:
    """A scikit-learn metric of the true and the predicted classes, with weights."""
    return _per_metric(lambda c, ps: fn(c.col("label"), _class_pred(c),
                                        sample_weight=c.weights(), **params(ps)))


def _label_sets(c: Call) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Multilabel truth and predictions as indicator matrices over every label seen."""
    from sklearn.preprocessing import MultiLabelBinarizer

    true, pred = c.col("label").tolist(), c.col("prediction").tolist()
    labels = sorted({v for s in true + pred for v in s})
    mlb = MultiLabelBinarizer(classes=labels)
    return mlb.fit_transform(true), mlb.transform(pred), labels


def _ml(fn: Callable[..., Any]) -> Reference:
    """A scikit-learn metric on indicator matrices under the metric's average and label."""
    def ref(c: Call, params: Mapping[str, Any]) -> float:
        y, p, labels = _label_sets(c)
        kw: dict[str, Any] = {"sample_weight": c.weights(),
                              "zero_division": ZERO_DIVISION[params["zero_division"]]}
        if "beta" in params:
            kw["beta"] = params["beta"]
        if params.get("label") is not None:
            return float(fn(y, p, labels=[labels.index(params["label"])], average=None,
                            **kw)[0])
        return float(fn(y, p, average=params["average"], **kw))
    return _per_metric(ref)


def _ml_hamming(c: Call, params: Mapping[str, Any]) -> float:
    """scikit-learn's hamming_loss over the union of labels; over the truth's labels (Spark)
    or n_labels, the same wrong pairs over N·|labels|."""
    y, p, _ = _label_sets(c)
    if params["n_labels"] is None and params["label_space"] == "union":
        return float(skm.hamming_loss(y, p, sample_weight=c.weights()))
    n = params["n_labels"] or int((y.sum(axis=0) > 0).sum())
    return float(np.average((y != p).sum(axis=1), weights=c.weights()) / n)


def _ml_scores(c: Call, fn: Callable[..., Any]) -> Expected:
    """scikit-learn on the indicator matrix of the scored labels (the score struct's fields)
    under each metric's average; average precision with no_positive=undefined is NaN where a
    label (samples: an example) has no positive, scikit-learn's 0 otherwise."""
    assert c.predictions is not None
    rows = c.predictions.get_column("score").to_list()
    labels = list(rows[0])
    y = np.array([[int(k in t) for k in labels] for t in c.col("label").tolist()])
    s = np.array([[r[k] for k in labels] for r in rows])
    out: Expected = {}
    for m in c.result.metrics:
        average = m.params["average"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = float(fn(y, s, average=average, sample_weight=c.weights()))
        empty = (y.sum(axis=1) == 0) if average == "samples" else (y.sum(axis=0) == 0)
        if m.params.get("no_positive") == "undefined" and average != "weighted" and (
                empty.any() if average != "micro" else not y.any()):
            v = math.nan
        out[m.id] = v
    return out


# ranking: each query's value from trec_eval (pytrec_eval) on the example's lists, then the
# mean over queries with evalcli's default policies written out: queries with relevant items
# and no predictions count 0 (missing=zero), judged queries without a relevant item are left
# out (no_relevant=drop), unjudged queries are left out (trec_eval ignores them too).

Lists = dict[str, dict[str, float]]


def _lists(c: Call) -> tuple[Lists, Lists]:
    """The run (query -> item -> score; a list column's order as descending scores) and the
    qrels (query -> item -> relevance, 1 when absent)."""
    run: Lists = {}
    assert c.predictions is not None
    for row in c.predictions.iter_rows(named=True):
        q = str(row["query"])
        if isinstance(row["item"], list):
            run[q] = {str(i): float(len(row["item"]) - n) for n, i in enumerate(row["item"])}
        else:
            run.setdefault(q, {})[str(row["item"])] = float(row["score"])
    qrels: Lists = {}
    for row in (c.truth.iter_rows(named=True) if c.truth is not None else []):
        qrels.setdefault(str(row["query"]), {})[str(row["item"])] = float(
            row.get("relevance", 1))
    return run, qrels


def _orders(scores: dict[str, float]) -> list[dict[str, float]]:
    """Every strict order of the items consistent with the scores (tied items permuted), as
    distinct scores: the random tie order that ties=average takes the expectation over."""
    groups = [sorted(i for i in scores if scores[i] == v) for v in sorted(set(scores.values()))]
    out = []
    for perm in itertools.product(*(itertools.permutations(g) for g in groups)):
        flat = [i for g in perm for i in g]  # lowest score first
        out.append({i: float(n) for n, i in enumerate(flat)})
    return out


def _trec(measure: str, c: Call, params: Mapping[str, Any],
          qrels_gain: Callable[[float], float] = lambda r: r) -> dict[str, float]:
    """trec_eval's ``measure`` per query, averaged over the tie orders unless ties=id
    (trec_eval's own: item id descending)."""
    import pytrec_eval

    run, qrels = _lists(c)
    qrels = {q: {i: int(qrels_gain(r)) for i, r in items.items()} for q, items in qrels.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {measure})
    out = {}
    for q in run:
        if q not in qrels:
            continue
        orders = [run[q]] if params.get("ties") == "id" else _orders(run[q])
        out[q] = float(np.mean([_one(evaluator.evaluate({q: o})[q], measure) for o in orders]))
    return out


def _one(values: Mapping[str, float], measure: str) -> float:
    """The value of ``measure``; a measure with parameters (``relative_P.2``) gives one value
    under its printed name (``relative_P_2``)."""
    if measure in values:
        return values[measure]
    (value,) = values.values()
    return value


def _relevant(c: Call) -> dict[str, int]:
    return {q: sum(r >= 1 for r in items.values()) for q, items in _lists(c)[1].items()}


def _mean_over_queries(c: Call, per_query: Mapping[str, float],
                       params: Mapping[str, Any]) -> float:
    """evalcli's defaults, or trec_eval's (compat: trec_eval: missing queries left out)."""
    run = _lists(c)[0]
    values = []
    for q, n_rel in _relevant(c).items():
        if n_rel == 0:
            continue  # no_relevant=drop
        if q not in run:
            if params.get("compat") != "trec_eval":
                values.append(0.0)  # missing=zero
            continue
        values.append(per_query[q])
    return float(np.mean(values))


def _ranking(measure: Callable[[Mapping[str, Any]], str],
             adjust: Callable[[Call, str, float, Mapping[str, Any]], float]
             = lambda c, q, v, ps: v) -> Reference:
    """A trec_eval measure (named from the params), adjusted per query where a parameter
    changes the definition, then averaged."""
    def ref(c: Call, params: Mapping[str, Any]) -> float:
        per_query = {q: adjust(c, q, v, params)
                     for q, v in _trec(measure(params), c, params).items()}
        return _mean_over_queries(c, per_query, params)
    return _per_metric(ref)


def _count_sum(measure: str) -> Reference:
    """A trec_eval count (pytrec_eval) per query, summed over the queries evalcli's defaults
    keep: those with relevant items in both files, and (missing=zero, unless compat:
    trec_eval) a query with relevant items and no predictions, which adds its relevant items
    and counts as a query (trec_eval -c)."""
    def ref(c: Call, params: Mapping[str, Any]) -> float:
        import pytrec_eval

        run, qrels = _lists(c)
        judged = {q: {i: int(r) for i, r in items.items()} for q, items in qrels.items()}
        per = pytrec_eval.RelevanceEvaluator(judged, {measure}).evaluate(run)
        total = 0.0
        for q, n_rel in _relevant(c).items():
            if n_rel == 0:
                continue  # no_relevant=drop
            if q in run:
                total += per[q][measure]
            elif params.get("compat") != "trec_eval":
                total += {"num_q": 1.0, "num_rel": float(n_rel)}.get(measure, 0.0)
        return total
    return _per_metric(ref)


def _precision_list(c: Call, q: str, v: float, ps: Mapping[str, Any]) -> float:
    """denominator=list: hits@k over min(k, list length) instead of k."""
    n = len(_lists(c)[0][q])
    return v * ps["k"] / min(ps["k"], n) if ps.get("denominator") == "list" else v


def _map_min_k(c: Call, q: str, v: float, ps: Mapping[str, Any]) -> float:
    """denominator=min_k_relevant: AP@k's sum over min(k, R) instead of R."""
    r = _relevant(c)[q]
    return v * r / min(ps["k"], r) if ps.get("denominator") == "min_k_relevant" else v


def _f1(c: Call, params: Mapping[str, Any]) -> float:
    k = params["k"]
    p, r = _trec(f"P_{k}", c, params), _trec(f"recall_{k}", c, params)
    return _mean_over_queries(
        c, {q: 2 * p[q] * r[q] / (p[q] + r[q]) if p[q] + r[q] else 0.0 for q in p}, params)


def _micro_recall(c: Call, params: Mapping[str, Any]) -> float:
    k = params["k"]
    hits = {q: v * k for q, v in _trec(f"P_{k}", c, params).items()}
    rel = _relevant(c)
    return sum(hits.get(q, 0.0) for q in rel) / sum(rel.values())


def _ndcg(c: Call, params: Mapping[str, Any]) -> float:
    """trec_eval's ndcg uses the relevance as the gain: exponential gain is trec_eval on
    relevances mapped to 2^rel − 1. A gains table: trec_eval's ndcg_cut takes none, so NDCG@k
    is written out (:func:`_dcg_by_hand`, no ties in the example)."""
    if params.get("gains"):
        return _mean_over_queries(c, _dcg_by_hand(c, params, normalized=True), params)
    gain = (lambda r: 2 ** r - 1) if params.get("gain") == "exponential" else (lambda r: r)
    per_query = _trec(f"ndcg_cut_{params['k']}", c, params, gain)
    return _mean_over_queries(c, per_query, params)


def _dcg_by_hand(c: Call, params: Mapping[str, Any], normalized: bool = False
                 ) -> dict[str, float]:
    """DCG@k per query: Σ_{i<=k} gain_i / log_b(i + 1), gain_i the gains table's value for the
    item's relevance or else the relevance; over the ideal DCG@k (the judged items' positive
    gains best first) when ``normalized``."""
    run, qrels = _lists(c)
    table = params.get("gains") or {}
    base = params.get("log_base", 2.0)

    def gain(r: float) -> float:
        return float(table.get(r, r))

    per_query = {}
    for q, scores in run.items():
        top = sorted(scores, key=lambda i: -scores[i])[:params["k"]]
        dcg = sum(gain(qrels[q].get(i, 0)) / math.log(n + 2, base) for n, i in enumerate(top))
        ideal = sorted((g for g in map(gain, qrels[q].values()) if g > 0), reverse=True)
        idcg = sum(g / math.log(n + 2, base) for n, g in enumerate(ideal[:params["k"]]))
        per_query[q] = dcg / idcg if normalized else dcg
    return per_query


def _dcg(c: Call, params: Mapping[str, Any]) -> float:
    """DCG@k written out (no ties in the example); at log_base b, scikit-learn's dcg_score
    (log_base=b) of each query's list."""
    if params.get("log_base", 2.0) != 2.0 and not params.get("gains"):
        run, qrels = _lists(c)
        per_query = {}
        for q, scores in run.items():
            items = list(scores)
            per_query[q] = float(skm.dcg_score(
                [[qrels[q].get(i, 0) for i in items]], [[scores[i] for i in items]],
                k=params["k"], log_base=params["log_base"]))
        return _mean_over_queries(c, per_query, params)
    return _mean_over_queries(c, _dcg_by_hand(c, params), params)


def _auc(c: Call, params: Mapping[str, Any]) -> float:
    """Pairs (relevant, other recommended) in the right order; relevant items not
    recommended rank last (bottom) or are left out (ignore); a tie counts 1/2."""
    run, qrels = _lists(c)
    values = []
    for q, scores in run.items():
        relevant = [i for i, r in qrels.get(q, {}).items() if r >= 1]
        if params["unscored_relevant"] == "ignore":
            relevant = [i for i in relevant if i in scores]
        others = [i for i in scores if i not in relevant]
        low = min(scores.values()) - 1
        pairs = [(scores.get(i, low), scores[j]) for i in relevant for j in others]
        if pairs:
            values.append(sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in pairs)
                          / len(pairs))
    return float(np.mean(values))


def _by_name(refs: Mapping[str, Callable[[Call, Mapping[str, Any]], float]]) -> Reference:
    """Each metric the call computed, by the reference of its name."""
    return lambda c: {m.id: refs[m.metric](c, m.params) for m in c.result.metrics}


def _mean_of(measure: str) -> Callable[[Call, Mapping[str, Any]], float]:
    return lambda c, ps: _mean_over_queries(c, _trec(measure, c, ps), ps)


def _geometric(measure: str) -> Callable[[Call, Mapping[str, Any]], float]:
    """trec_eval's gm_map, gm_bpref: pytrec_eval's per-query term log max(v, 0.00001), the
    exp of their mean (a query with relevant items and no predictions: log 0.00001)."""
    def ref(c: Call, params: Mapping[str, Any]) -> float:
        logs = _trec(measure, c, params)
        run = _lists(c)[0]
        terms = [logs[q] if q in run else math.log(1e-5)
                 for q, n_rel in _relevant(c).items()
                 if n_rel and (q in run or params.get("compat") != "trec_eval")]
        return math.exp(sum(terms) / len(terms))
    return ref


def _iprec_at(c: Call, params: Mapping[str, Any], level: float) -> dict[str, float]:
    """trec_eval's interpolated precision at ``level`` per query. pytrec_eval copies trec_eval
    9, whose level takes (long)(x·R + 0.9) relevant items; trec_eval 10 (rounding=nearest)
    takes lround(x·R): pytrec_eval is asked at the level x' that gives that count."""
    import pytrec_eval

    run, qrels = _lists(c)
    out = {}
    for q, n_rel in _relevant(c).items():
        if q not in run:
            continue
        x = level
        if params.get("rounding", "nearest") == "nearest":
            cut = math.floor(level * n_rel + 0.5)
            x = (cut - 0.85) / n_rel if cut else 0.0
        measure = f"iprec_at_recall.{x!r}"
        judged = {q: {i: int(r) for i, r in qrels[q].items()}}
        (value,) = pytrec_eval.RelevanceEvaluator(judged, {measure}).evaluate(
            {q: run[q]})[q].values()
        out[q] = value
    return out


def _iprec(c: Call, params: Mapping[str, Any]) -> float:
    return _mean_over_queries(c, _iprec_at(c, params, params["recall"]), params)


def _11pt(c: Call, params: Mapping[str, Any]) -> float:
    eleven = [i / 10 for i in range(11)]  # trec_eval's levels when none are given
    levels = [_iprec_at(c, params, x) for x in params["levels"] or eleven]
    return _mean_over_queries(
        c, {q: sum(v[q] for v in levels) / len(levels) for q in levels[0]}, params)


def _rprec_mult(c: Call, params: Mapping[str, Any]) -> float:
    return _mean_over_queries(c, _trec(f"Rprec_mult.{params['mult']!r}", c, params), params)


def _relative_p(c: Call, params: Mapping[str, Any]) -> float:
    measure = "set_relative_P" if params["k"] is None else f"relative_P.{params['k']}"
    return _mean_over_queries(c, _trec(measure, c, params), params)


def _utility(c: Call, params: Mapping[str, Any]) -> float:
    """trec_eval's utility (pytrec_eval parses no negative coefficient: the formula on its
    counts num_rel_ret, num_ret, num_rel)."""
    got, ret, rel = (_trec(m, c, params) for m in ("num_rel_ret", "num_ret", "num_rel"))
    return _mean_over_queries(c, {
        q: params["rel_ret"] * got[q] + params["nonrel_ret"] * (ret[q] - got[q])
        + params["rel_missed"] * (rel[q] - got[q])
        + params["nonrel_missed"] * (params["num_docs"] + got[q] - ret[q] - rel[q])
        for q in got}, params)



def _prefs(c: Call, params: Mapping[str, Any]) -> float:
    """trec_eval's prefs measures on a qrels read as -R qrels_prefs (one judgment group of one
    sub-group per query, each relevance level a class), written out from form_prefs_counts.c
    and m_prefs_*.c: every pair of judged documents of different levels is a preference for
    the higher; the run in score order (ties: docno ascending)."""
    run, qrels = _lists(c)
    values = []
    for q, judged in qrels.items():
        if q not in run:
            continue
        order = sorted(run[q], key=lambda d: (-run[q][d], d))
        place = {d: i for i, d in enumerate(d for d in order if d in judged)}
        n: dict[str, float] = dict.fromkeys(
            ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur"), 0.0)
        pairs: dict[tuple[str, str], list[int]] = {}
        for a, la in judged.items():
            for b, lb in judged.items():
                if la <= lb:
                    continue
                pa, pb = place.get(a), place.get(b)
                if pa is not None and pb is not None:
                    n["poss_ret"] += 1
                    n["ful_ret"] += pa < pb
                elif pa is not None or pb is not None:
                    n["poss_imp"] += 1
                    n["ful_imp"] += pa is not None
                else:
                    n["notoccur"] += 1
                first, second = (a, b) if pb is None or (pa is not None and pa < pb) else (b, a)
                if pa is None and pb is None:
                    first, second = min(a, b), max(a, b)
                pairs.setdefault((first, second), [0, 0, (pa is not None) + (pb is not None)])
                pairs[(first, second)][0 if first == a else 1] += 1
        ful, poss = n["ful_ret"] + n["ful_imp"], n["poss_ret"] + n["poss_imp"] + n["notoccur"]
        ret = [f / (f + s) for f, s, k in pairs.values() if k == 2]
        imp = [f / (f + s) for f, s, k in pairs.values() if k >= 1]
        value = {
            "poss": poss, "ful": ful, "ful_ret": n["ful_ret"],
            "simp": ful / poss if poss else 0.0,
            "simp_ret": n["ful_ret"] / n["poss_ret"] if n["poss_ret"] else 0.0,
            "simp_imp": ful / (n["poss_ret"] + n["poss_imp"]) if n["poss_ret"] + n["poss_imp"]
            else 0.0,
            "pair": sum(imp) / len(pairs) if pairs else 0.0,
            "pair_ret": sum(ret) / len(ret) if ret else 0.0,
            "pair_imp": sum(imp) / len(imp) if imp else 0.0,
        }
        value["avgjg"], value["avgjg_ret"], value["avgjg_imp"] = (
            value["simp"], value["simp_ret"], value["simp_imp"])  # one judgment group
        values.append(value[params.get("measure", params.get("count"))])
    counted = "count" in params
    return float(sum(values)) if counted else sum(values) / len(values)


def _by_hand(measure: str) -> Callable[[Call, Mapping[str, Any]], float]:
    """trec_eval's rbp, rbp_resid and unj written out from its m_rbp.c, m_rbp_resid.c and
    m_unjudged.c (pytrec_eval has none of them), per query, averaged over the tie orders
    unless ties=id; unjudged: no truth row or a negative relevance."""
    def one(order: list[str], judged: Mapping[str, float], params: Mapping[str, Any]
            ) -> float:
        unjudged = [judged.get(i, -1.0) < 0 for i in order]
        if measure == "unjudged_fraction":
            k = params["k"]
            return sum(unjudged[:k]) / k if k is not None else sum(unjudged) / len(order)
        p = params["p"]
        if measure == "rbp_resid":
            tail = p ** len(order) + (1 - p) * sum(p ** n for n, u in enumerate(unjudged) if u)
            return tail if any(unjudged) else 0.0
        top = max([r for r in judged.values() if r >= 0], default=0.0)
        gains = [max(judged.get(i, 0.0), 0.0) / (top if top > 1 else 1.0) for i in order]
        return (1 - p) * sum(g * p ** n for n, g in enumerate(gains))

    def ref(c: Call, params: Mapping[str, Any]) -> float:
        run, qrels = _lists(c)
        per_query = {}
        for q, scores in run.items():
            if q not in qrels:
                continue
            orders = [scores] if params.get("ties") == "id" else _orders(scores)
            per_query[q] = float(np.mean([
                one(sorted(o, key=lambda i: (o[i], i), reverse=True), qrels[q], params)
                for o in orders]))
        return _mean_over_queries(c, per_query, params)
    return ref

def _top(c: Call, k: int) -> dict[str, list[str]]:
    run = _lists(c)[0]
    return {q: sorted(s, key=lambda i: -s[i])[:k] for q, s in run.items()}


def _coverage(c: Call, params: Mapping[str, Any]) -> float:
    run, qrels = _lists(c)
    catalog = {i for s in (*run.values(), *qrels.values()) for i in s}
    return len({i for top in _top(c, params["k"]).values() for i in top}) / len(catalog)


def _novelty(c: Call, params: Mapping[str, Any]) -> float:
    """−log2 p(i), p(i) the share of queries for which i is relevant; items nobody
    interacted with left out."""
    qrels = _lists(c)[1]
    p = {i: sum(i in s for s in qrels.values()) / len(qrels) for s in qrels.values() for i in s}
    per_query = [np.mean([-math.log2(p[i]) for i in top if i in p])
                 for top in _top(c, params["k"]).values()]
    return float(np.mean(per_query))


def _similarity(c: Call) -> Callable[[str, str], float]:
    """Cosine of the features file's vectors, or the similarity file's table (0 when
    absent)."""
    options = c.config["options"]
    if "item_features_file" in options:
        f = pl.read_csv(options["item_features_file"])
        vec = {r[0]: np.array(r[1:], float) for r in f.iter_rows()}
        return lambda a, b: float(vec[a] @ vec[b] / np.linalg.norm(vec[a]) /
                                  np.linalg.norm(vec[b]))
    table = {frozenset((a, b)): s for a, b, s in
             pl.read_csv(options["similarity_file"]).iter_rows()}
    return lambda a, b: table.get(frozenset((a, b)), 0.0)


def _ils(c: Call, params: Mapping[str, Any]) -> float:
    sim = _similarity(c)
    return float(np.mean([np.mean([sim(a, b) for a, b in itertools.combinations(top, 2)])
                          for top in _top(c, params["k"]).values()]))


def _places(c: Call, params: Mapping[str, Any]) -> dict[str, int]:
    """Top-k places per item (the examples have no ties)."""
    out: dict[str, int] = {}
    for top in _top(c, params["k"]).values():
        for i in top:
            out[i] = out.get(i, 0) + 1
    return out


def _entropy(c: Call, params: Mapping[str, Any]) -> float:
    """Shani and Gunawardana's eq. 21: −Σ p log2 p over the recommended items."""
    x = np.array(list(_places(c, params).values()), float)
    p = x / x.sum()
    return float(-(p * np.log2(p)).sum())


def _gini(c: Call, params: Mapping[str, Any]) -> float:
    """1/(n−1) Σ (2j − n − 1) p_j over the catalog (the examples' items), p ascending."""
    run, qrels = _lists(c)
    catalog = {i for s in (*run.values(), *qrels.values()) for i in s}
    places = _places(c, params)
    p = np.sort(np.array([places.get(i, 0) for i in catalog], float))
    p /= p.sum()
    n = len(p)
    return float(((2 * np.arange(1, n + 1) - n - 1) * p).sum() / (n - 1))


def _arp(c: Call, params: Mapping[str, Any]) -> float:
    """Abdollahpouri et al.: mean over users of the mean φ(i) of the top k, φ(i) the number
    of users for whom i is relevant (no training file in the example)."""
    qrels = _lists(c)[1]
    phi = {i: sum(i in s for s in qrels.values()) for s in qrels.values() for i in s}
    return float(np.mean([np.mean([phi.get(i, 0) for i in top])
                          for top in _top(c, params["k"]).values()]))


def _serendipity(c: Call, params: Mapping[str, Any]) -> float:
    """recommenders' user_serendipity averaged: co-occurrence cosine with each past item."""
    train = pl.read_csv(c.config["options"]["train_file"], infer_schema=False)
    history: dict[str, set[str]] = {}
    for u, i in train.select("user", "item").iter_rows():
        history.setdefault(u, set()).add(i)
    users = {i: {u for u, h in history.items() if i in h} for h in history.values() for i in h}

    def sim(a: str, b: str) -> float:
        ua, ub = users.get(a, set()), users.get(b, set())
        return len(ua & ub) / math.sqrt(len(ua) * len(ub)) if ua and ub else 0.0

    return float(np.mean([np.mean([1 - np.mean([sim(i, j) for j in history[q]]) for i in top])
                          for q, top in _top(c, params["k"]).items() if q in history]))


REFERENCES: dict[str, Reference] = {
    # ranking: trec_eval per query (ties averaged over every order), the rest by hand
    "ranking/precision": _ranking(lambda ps: f"P_{ps['k']}", _precision_list),
    "ranking/recall": _ranking(lambda ps: f"recall_{ps['k']}"),
    "ranking/f1": _per_metric(_f1),
    "ranking/hit_rate": _ranking(lambda ps: f"success_{ps['k']}"),
    "ranking/hits": _ranking(lambda ps: f"P_{ps['k']}", lambda c, q, v, ps: v * ps["k"]),
    "ranking/micro_recall": lambda c: {
        m.id: (_micro_recall(c, m.params) if m.metric == "micro_recall" else
               _ranking(lambda ps: f"recall_{ps['k']}")(c)[m.id]) for m in c.result.metrics},
    "ranking/mrr": _ranking(lambda ps: "recip_rank"),
    "ranking/map": _ranking(lambda ps: f"map_cut_{ps['k']}", _map_min_k),
    "ranking/ndcg": _per_metric(_ndcg),
    "ranking/dcg": _per_metric(_dcg),
    "ranking/r_precision": _ranking(lambda ps: "Rprec"),
    "ranking/bpref": _ranking(lambda ps: "bpref"),
    "ranking/gm_map": _by_name({"gm_map": _geometric("gm_map"), "map": _mean_of("map")}),
    "ranking/gm_bpref": _by_name({"gm_bpref": _geometric("gm_bpref"),
                                  "bpref": _mean_of("bpref")}),
    "ranking/iprec_at_recall": _per_metric(_iprec),
    "ranking/iprec_11pt_avg": _per_metric(_11pt),
    "ranking/rprec_mult": _per_metric(_rprec_mult),
    "ranking/relative_precision": _per_metric(_relative_p),
    "ranking/set_map": _ranking(lambda ps: "set_map"),
    "ranking/utility": _per_metric(_utility),
    "ranking/bin_g": _ranking(lambda ps: "binG"),
    "ranking/g": _ranking(lambda ps: "G"),
    "ranking/ndcg_rel": _ranking(lambda ps: "ndcg_rel"),
    "ranking/rndcg": _ranking(lambda ps: "Rndcg"),
    "ranking/rbp": _per_metric(_by_hand("rbp")),
    "ranking/rbp_resid": _per_metric(_by_hand("rbp_resid")),
    "ranking/unjudged_fraction": _per_metric(_by_hand("unjudged_fraction")),
    "ranking/infap": _by_name({"infap": _mean_of("infAP"), "map": _mean_of("map")}),
    "ranking/prefs": _per_metric(_prefs),
    "ranking/num_prefs": _per_metric(_prefs),
    # one judgment group (the truth): trec_eval's map, P_k and Rprec_mult
    "ranking/map_avgjg": _ranking(lambda ps: "map"),
    "ranking/precision_avgjg": _ranking(lambda ps: f"P_{ps['k']}"),
    "ranking/rprec_mult_avgjg": _per_metric(_rprec_mult),
    **{f"ranking/{name}": _count_sum(name) for name in
       ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret")},
    "ranking/auc": _per_metric(_auc),
    "ranking/catalog_coverage": _per_metric(_coverage),
    "ranking/novelty": _per_metric(_novelty),
    "ranking/intra_list_similarity": _per_metric(_ils),
    "ranking/diversity": _per_metric(lambda c, ps: 1 - _ils(c, ps)),
    "ranking/serendipity": _per_metric(_serendipity),
    "ranking/distributional_coverage": _per_metric(_entropy),
    "ranking/gini": _per_metric(_gini),
    "ranking/average_recommendation_popularity": _per_metric(_arp),
    # multilabel: scikit-learn on indicator matrices; Spark's label space by hand
    "multilabel/precision": _ml(skm.precision_score),
    "multilabel/recall": _ml(skm.recall_score),
    "multilabel/f1": _ml(skm.f1_score),
    "multilabel/fbeta": _ml(skm.fbeta_score),
    "multilabel/accuracy": _ml(skm.jaccard_score),
    "multilabel/subset_accuracy": lambda c: {"subset_accuracy": skm.accuracy_score(
        *_label_sets(c)[:2], sample_weight=c.weights())},
    "multilabel/hamming_loss": _per_metric(_ml_hamming),
    "multilabel/auroc": lambda c: _ml_scores(c, skm.roc_auc_score),
    "multilabel/average_precision": lambda c: _ml_scores(c, skm.average_precision_score),
    # multiclass: scikit-learn; FPR from its one-vs-rest matrices; top-k's ties by hand
    "multiclass/confusion_matrix": _confusion,
    "multiclass/accuracy": _mc_table(skm.accuracy_score),
    "multiclass/precision": _by_label(skm.precision_score),
    "multiclass/recall": _by_label(skm.recall_score),
    "multiclass/f1": _by_label(skm.f1_score),
    "multiclass/fbeta": _by_label(skm.fbeta_score),
    "multiclass/fpr": _by_label(_mc_fpr),
    "multiclass/cohen_kappa": _mc_table(
        skm.cohen_kappa_score,
        lambda ps: {"weights": None if ps["weights"] == "none" else ps["weights"]}),
    "multiclass/mcc": _mc_table(skm.matthews_corrcoef),
    "multiclass/balanced_accuracy": _mc_table(skm.balanced_accuracy_score,
                                              lambda ps: {"adjusted": ps["adjusted"]}),
    "multiclass/hamming_loss": _mc_table(skm.hamming_loss),
    "multiclass/top_k_accuracy": _per_metric(_top_k),
    "multiclass/auroc": _mc_curves,
    "multiclass/average_precision": _mc_curves,
    "multiclass/ece": _mc_calibration,
    "multiclass/mce": _mc_calibration,
    "multiclass/log_loss": lambda c: {"log_loss": skm.log_loss(
        c.col("label"), _class_scores(c)[1], labels=_class_scores(c)[0],
        sample_weight=c.weights())},
    # binary: scikit-learn; auprc is Spark's trapezoid over scikit-learn's PR points
    "binary/accuracy": _counts(skm.accuracy_score),
    "binary/precision": _counts(skm.precision_score),
    "binary/recall": _counts(skm.recall_score),
    "binary/specificity": _counts(skm.recall_score, pos_label=0),
    "binary/fpr": _counts(_fpr),
    "binary/f1": _counts(skm.f1_score),
    "binary/fbeta": _counts(skm.fbeta_score),
    "binary/mcc": _counts(skm.matthews_corrcoef),
    "binary/balanced_accuracy": _counts(skm.balanced_accuracy_score),
    "binary/auroc": _scores(skm.roc_auc_score),
    "binary/auprc": lambda c: {"auprc": _auprc(c.col("label"), c.col("score")),
                               "average_precision": skm.average_precision_score(
                                   c.col("label"), c.col("score"))},
    "binary/average_precision": _scores(skm.average_precision_score),
    "binary/peak_f1": _peak_f1,
    "binary/log_loss": _scores(skm.log_loss, labels=[0, 1]),
    "binary/brier": _scores(skm.brier_score_loss),
    **{f"binary/{name}": _operating for name in OPERATING},
    **{f"binary/{name}": _cost_and_top for name in ("min_cost", "precision_at_top",
                                                    "lift_at_top")},
    "binary/lift_table": _lift_table,
    "binary/ece": _calibration,
    "binary/mce": _calibration,
    # regression: scikit-learn
    "regression/mse": _reg(skm.mean_squared_error, "mse"),
    "regression/rmse": _reg(skm.root_mean_squared_error, "rmse"),
    "regression/mae": _reg(skm.mean_absolute_error, "mae"),
    "regression/r2": lambda c: {
        m.id: _r2_through_origin(c) if m.params.get("through_origin") else
        skm.r2_score(*c.yp(), sample_weight=c.weights()) for m in c.result.metrics},
    "regression/explained_variance": lambda c: {
        **_reg(skm.explained_variance_score, "explained_variance")(c),
        **_reg(skm.r2_score, "r2")(c)},
    "regression/mape": _reg(skm.mean_absolute_percentage_error, "mape"),
    "regression/max_error": _max_error,
    "regression/median_absolute_error": _reg(skm.median_absolute_error,
                                             "median_absolute_error"),
}


def _same(got: Any, want: Any) -> bool:
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got is None
    if isinstance(want, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(
            _same(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(want, str) or got is None:
        return bool(got == want)
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("key", sorted(BUILTINS))
def test_the_example_runs_and_shows_reference_values(key: str, monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    metric = BUILTINS[key]
    calls = run_example(metric, monkeypatch, tmp_path)
    assert key in REFERENCES, f"add a reference for {key}'s example to REFERENCES"
    for call in calls:
        want = REFERENCES[key](call)
        got: dict[Any, Any] = dict(call.result.values())
        for k in want:
            if isinstance(k, tuple):
                got[k] = call.result.metric(k[0]).details.get(k[1])
        assert {k for k in want if not isinstance(k, tuple)} == set(call.result.values()), (
            f"{key}: the reference gives {sorted(map(str, want))}, the example "
            f"{sorted(call.result.values())}")
        bad = {k: (got[k], w) for k, w in want.items() if not _same(got[k], w)}
        assert not bad, f"{key}: (evalcli, reference) differ: {bad} on {call.config}"


# --------------------------------------------------------------------------- the reference docs

REGENERATE = "evalcli metrics --markdown > docs/metrics.md"


@pytest.fixture
def builtins_only(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The CLI's registry without installed plugins, as docs/metrics.md documents it."""
    monkeypatch.setattr(registry, "_entry_points", lambda: [])
    registry.reset_registry()
    yield
    registry.reset_registry()


def cli(*args: str, columns: int = 100) -> str:
    r = CliRunner().invoke(app, list(args), env={"NO_COLOR": "1", "COLUMNS": str(columns),
                                                 "TERM": "dumb"})
    assert r.exit_code == 0, r.output
    return r.stdout


def test_docs_metrics_md_is_what_the_command_prints(builtins_only: Any) -> None:
    generated = cli("metrics", "--markdown")
    written = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert written == generated, (
        f"docs/metrics.md differs from the registry's reference: run `{REGENERATE}` "
        "(with no plugins installed) and commit the file")


def test_docs_presets_md_is_what_the_command_prints(builtins_only: Any) -> None:
    generated = cli("metrics", "--presets")
    written = (ROOT / "docs" / "presets.md").read_text(encoding="utf-8")
    assert written == generated, (
        "docs/presets.md differs from the families' convention declarations: run "
        "`evalcli metrics --presets > docs/presets.md` (with no plugins installed) and commit "
        "the file")


def test_the_presets_page_is_read_from_the_declarations_and_linked() -> None:
    """Every preset of every convention declared (ranking, binary) is in the page's family
    table, task options (duplicates, curve_framing) included; README and ranking.md link it."""
    from evalcli.metrics.binary import conventions as bc
    from evalcli.metrics.presets import family_presets
    from evalcli.metrics.ranking import conventions as rc

    reg = builtin_registry()
    for mod, fam in ((rc, "ranking"), (bc, "binary")):
        fp = family_presets(reg, fam)
        assert fp is not None and fp.peers == mod.COMPATS
        declared = [v for v in vars(mod).values() if isinstance(v, mod.Convention)]
        assert {(s.name, s.default, tuple(s.presets.items())) for s in fp.settings} == {
            (c.param.name, c.default, tuple(c.presets.items())) for c in declared}
    ranking = family_presets(reg, "ranking")
    binary = family_presets(reg, "binary")
    assert ranking is not None and binary is not None
    dup = next(s for s in ranking.settings if s.name == "duplicates")
    assert dup.task_option and dup.value("ranx") == "last" and dup.default == "error"
    framing = next(s for s in binary.settings if s.name == "curve_framing")
    assert framing.task_option and framing.value("spark") == "spark"
    text = (ROOT / "docs" / "presets.md").read_text(encoding="utf-8")
    assert "| `duplicates` | task option | `last` | `error` |" in text
    assert "| `curve_framing` | task option | `spark` | `evalcli` |" in text
    assert "](docs/presets.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](presets.md)" in (ROOT / "docs" / "ranking.md").read_text(encoding="utf-8")


def test_the_reference_lists_exactly_the_registered_metrics_with_their_aliases() -> None:
    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[([\w-]+)\]\(#([\w-]+)\) \| ([^|]*) \|", text, re.M)
    listed = {anchor: (name, tuple(a for a in aliases.strip().split(", ") if a))
              for name, anchor, aliases in rows}
    assert listed == {f"{m.family}-{m.name}": (m.name, m.aliases) for m in BUILTINS.values()}, (
        f"run `{REGENERATE}`")
    for anchor in listed:
        assert f'<a id="{anchor}"></a>' in text, anchor


README_SECTIONS = {"Binary classification": "binary", "Multiclass": "multiclass",
                   "Multilabel": "multilabel", "Regression": "regression",
                   "Ranking and recommendation": "ranking"}


def test_the_readme_lists_exactly_the_registered_metrics_of_each_family() -> None:
    """Each family section of the README links every metric of the family to its section of
    docs/metrics.md, and no other: a metric added, renamed or removed fails here."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    reference = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert "](docs/metrics.md)" in readme, "the README links the metric reference"
    sections = dict(re.findall(r"^## (.+?)\n(.*?)(?=^## |\Z)", readme, re.M | re.S))
    for title, family in README_SECTIONS.items():
        linked = re.findall(r"\]\(docs/metrics\.md#([\w-]+)\)", sections[title])
        registered = sorted(f"{family}-{m.name}" for m in BUILTINS.values()
                            if m.family == family)
        assert sorted(linked) == registered, (
            f"README section '{title}': link each metric of the family once, as "
            f"[name](docs/metrics.md#{family}-name); missing "
            f"{sorted(set(registered) - set(linked))}, not registered "
            f"{sorted(set(linked) - set(registered))}")
    for anchor in re.findall(r"\]\(docs/metrics\.md#([\w-]+)\)", readme):
        assert f'<a id="{anchor}"></a>' in reference, anchor


def test_metrics_show_prints_the_example(builtins_only: Any) -> None:
    text = cli("metrics", "show", "auroc", "--family", "binary", columns=120)
    example = inspect.cleandoc(BUILTINS["binary/auroc"].example).splitlines()
    assert "example:" in text
    assert [line.strip() for line in text.splitlines()[-len(example) - 1:] if line.strip()] == [
        line.strip() for line in example]
