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
import math
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pytest
import sklearn.metrics as skm

import evalcli
import evalcli.api
from evalcli.metrics.base import Metric
from evalcli.metrics.registry import builtin_registry
from evalcli.result import RunResult

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


def run_example(metric: Metric, monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    """Run ``metric.example`` as a doctest; fail with doctest's report; return its calls."""
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
    name = f"{metric.family}/{metric.name}"
    test = doctest.DocTestParser().get_doctest(
        textwrap.dedent(metric.example), {}, name, f"<example of {name}>", 0)
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


REFERENCES: dict[str, Reference] = {
    # multilabel: scikit-learn on indicator matrices; Spark's label space by hand
    "multilabel/precision": _ml(skm.precision_score),
    "multilabel/recall": _ml(skm.recall_score),
    "multilabel/f1": _ml(skm.f1_score),
    "multilabel/fbeta": _ml(skm.fbeta_score),
    "multilabel/accuracy": _ml(skm.jaccard_score),
    "multilabel/subset_accuracy": lambda c: {"subset_accuracy": skm.accuracy_score(
        *_label_sets(c)[:2], sample_weight=c.weights())},
    "multilabel/hamming_loss": _per_metric(_ml_hamming),
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
    # regression: scikit-learn
    "regression/mse": _reg(skm.mean_squared_error, "mse"),
    "regression/rmse": _reg(skm.root_mean_squared_error, "rmse"),
    "regression/mae": _reg(skm.mean_absolute_error, "mae"),
    "regression/r2": _reg(skm.r2_score, "r2"),
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
def test_the_example_runs_and_shows_reference_values(key: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    metric = BUILTINS[key]
    calls = run_example(metric, monkeypatch)
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
