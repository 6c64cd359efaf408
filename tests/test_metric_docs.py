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

pytestmark = pytest.mark.filterwarnings(
    "ignore:y_pred contains classes not in y_true:UserWarning")  # a reference's, on purpose

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


REFERENCES: dict[str, Reference] = {
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
