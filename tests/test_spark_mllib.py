"""engine: spark against Spark MLlib's own evaluators, where the definitions coincide.

The references are ``pyspark.mllib.evaluation`` (BinaryClassificationMetrics,
MulticlassMetrics, MultilabelMetrics, RegressionMetrics) run on the same rows, in the same
Spark session; evalcli's documented peer settings are chosen where MLlib differs by default
(log loss epsilon, Hamming loss label space). Random data with ties and weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from evalcli.config import parse_config
from evalcli.runner import run_config
from tests.test_spark import spark, write  # noqa: F401 - the session fixture

pytestmark = pytest.mark.spark
REL = 1e-9


def evalcli_values(cfg: dict[str, Any], folder: Path) -> dict[str, float | None]:
    result = run_config(parse_config({**cfg, "engine": "spark"}, "test", folder))
    assert result.engine == "spark"
    return {m.id: m.value for m in result.metrics}


def test_binary_auroc_auprc_match_binary_classification_metrics(spark, tmp_path):  # noqa: F811
    from pyspark.mllib.evaluation import BinaryClassificationMetrics

    rng = np.random.default_rng(21)
    n = 500
    label = rng.integers(0, 2, n).astype(float)
    score = np.clip(0.3 * label + rng.normal(0.4, 0.2, n), 0, 1).round(2)  # many ties
    weight = rng.choice([0.5, 1.0, 2.0, 3.0], n)
    df = pl.DataFrame({"label": label.astype(int), "score": score, "weight": weight})
    got = evalcli_values({"task": "binary", "predictions": write(df, tmp_path, "d"),
                          "columns": {"weight": "weight"}, "metrics": ["auroc", "auprc"]},
                         tmp_path)
    rows = list(zip(score.tolist(), label.tolist(), weight.tolist(), strict=True))
    ref = BinaryClassificationMetrics(spark.sparkContext.parallelize(rows, 2))
    assert got["auroc"] == pytest.approx(ref.areaUnderROC, rel=REL)
    assert got["auprc"] == pytest.approx(ref.areaUnderPR, rel=REL)


def test_multiclass_matches_multiclass_metrics(spark, tmp_path):  # noqa: F811
    from pyspark.mllib.evaluation import MulticlassMetrics

    rng = np.random.default_rng(22)
    n, k = 400, 4
    label = rng.integers(0, k, n)
    logits = rng.normal(0, 1, (n, k))
    logits[np.arange(n), label] += 1.0
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    prediction = probs.argmax(1)
    weight = rng.uniform(0.2, 2.0, n).round(3)
    df = pl.DataFrame({"label": label, "prediction": prediction, "weight": weight,
                       "score": probs.tolist()})
    metrics: list[Any] = [
        "accuracy", {"metric": "precision", "average": "weighted"},
        {"metric": "recall", "average": "weighted"}, {"metric": "f1", "average": "weighted"},
        {"metric": "fpr", "average": "weighted"}, "hamming_loss",
        {"metric": "log_loss", "eps": 1e-15},
    ]
    for c in range(k):
        metrics += [{"metric": "precision", "label": str(c)}, {"metric": "recall", "label": str(c)},
                    {"metric": "fbeta", "label": str(c), "beta": 0.5},
                    {"metric": "fpr", "label": str(c)}]
    got = evalcli_values({"task": "multiclass", "predictions": write(df, tmp_path, "d"),
                          "columns": {"weight": "weight"}, "metrics": metrics}, tmp_path)
    rows = [(float(p), float(y), float(w), list(map(float, pr)))
            for p, y, w, pr in zip(prediction, label, weight, probs, strict=True)]
    ref = MulticlassMetrics(spark.sparkContext.parallelize(rows, 2))
    expected = {
        "accuracy": ref.accuracy, "precision[average=weighted]": ref.weightedPrecision,
        "recall[average=weighted]": ref.weightedRecall,
        "f1[average=weighted]": ref.weightedFMeasure(),
        "fpr[average=weighted]": ref.weightedFalsePositiveRate,
        "hamming_loss": ref.call("hammingLoss"),
        "log_loss[eps=1e-15]": ref.logLoss(eps=1e-15),
    }
    for c in range(k):
        expected[f"precision[label={c}]"] = ref.precision(float(c))
        expected[f"recall[label={c}]"] = ref.recall(float(c))
        expected[f"fbeta[beta=0.5,label={c}]"] = ref.fMeasure(float(c), 0.5)
        expected[f"fpr[label={c}]"] = ref.falsePositiveRate(float(c))
    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        assert got[key] == pytest.approx(want, rel=REL), key


def test_multilabel_matches_multilabel_metrics(spark, tmp_path):  # noqa: F811
    from pyspark.mllib.evaluation import MultilabelMetrics

    rng = np.random.default_rng(23)
    truth, pred = [], []
    for _ in range(300):
        t = sorted({int(x) for x in rng.integers(0, 6, rng.integers(1, 4))})  # never empty
        p = sorted({x for x in t if rng.random() < 0.7}
                   | {int(x) for x in rng.integers(0, 6, rng.integers(0, 2))})
        truth.append(t)
        pred.append(p)
    df = pl.DataFrame({"label": truth, "prediction": pred},
                      schema={"label": pl.List(pl.Int64), "prediction": pl.List(pl.Int64)})
    metrics: list[Any] = ["precision", "recall", "f1", "accuracy", "subset_accuracy",
                          "hamming_loss", {"metric": "precision", "average": "micro"},
                          {"metric": "recall", "average": "micro"},
                          {"metric": "f1", "average": "micro"}]
    labels = sorted({x for t in truth for x in t})
    for c in labels:
        metrics += [{"metric": m, "label": str(c)} for m in ("precision", "recall", "f1")]
    got = evalcli_values({"task": "multilabel", "predictions": write(df, tmp_path, "d"),
                          "metrics": metrics}, tmp_path)
    rows = [([float(x) for x in p], [float(x) for x in t]) for p, t in zip(pred, truth,
                                                                          strict=True)]
    ref = MultilabelMetrics(spark.sparkContext.parallelize(rows, 2))
    expected = {
        "precision": ref.precision(), "recall": ref.recall(), "f1": ref.f1Measure(),
        "accuracy": ref.accuracy, "subset_accuracy": ref.subsetAccuracy,
        "hamming_loss": ref.hammingLoss, "precision[average=micro]": ref.microPrecision,
        "recall[average=micro]": ref.microRecall, "f1[average=micro]": ref.microF1Measure,
    }
    for c in labels:
        expected[f"precision[label={c}]"] = ref.precision(float(c))
        expected[f"recall[label={c}]"] = ref.recall(float(c))
        expected[f"f1[label={c}]"] = ref.f1Measure(float(c))
    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        assert got[key] == pytest.approx(want, rel=REL), key


SPARK_DOCS = [  # Spark MLlib's guide (mllib-evaluation-metrics): (predictions, labels)
    ([0.0, 1.0], [0.0, 2.0]), ([0.0, 2.0], [0.0, 1.0]), ([], [0.0]), ([2.0], [2.0]),
    ([2.0, 0.0], [2.0, 0.0]), ([0.0, 1.0, 2.0], [0.0, 1.0]), ([1.0], [1.0, 2.0]),
]


@pytest.mark.parametrize("layout", ["list", "delimited", "long"])
def test_multilabel_documented_example_in_every_layout(spark, tmp_path, layout):  # noqa: F811
    """The guide's example as it is written (doc 2 predicts nothing: in the long layout it has
    no prediction row) gives MultilabelMetrics' values in each layout."""
    from pyspark.mllib.evaluation import MultilabelMetrics

    pred = [[int(x) for x in p] for p, _ in SPARK_DOCS]
    true = [[int(x) for x in t] for _, t in SPARK_DOCS]
    ids = list(range(len(SPARK_DOCS)))
    cfg: dict[str, Any] = {"task": "multilabel", "options": {"layout": layout}}
    if layout == "list":
        df = pl.DataFrame({"id": ids, "label": true, "prediction": pred},
                          schema_overrides={"label": pl.List(pl.Int64),
                                            "prediction": pl.List(pl.Int64)})
        cfg["predictions"] = write(df, tmp_path, "d")
    elif layout == "delimited":
        df = pl.DataFrame({"id": ids, "label": ["|".join(map(str, t)) for t in true],
                           "prediction": ["|".join(map(str, p)) for p in pred]})
        cfg["predictions"] = write(df, tmp_path, "d", "csv")
    else:
        cfg["predictions"] = write(pl.DataFrame(
            {"id": [i for i in ids for _ in pred[i]], "prediction": [x for p in pred for x in p]}),
            tmp_path, "p", "csv")
        cfg["truth"] = write(pl.DataFrame(
            {"id": [i for i in ids for _ in true[i]], "label": [x for t in true for x in t]}),
            tmp_path, "t", "csv")
    metrics: list[Any] = ["precision", "recall", "f1", "accuracy", "subset_accuracy",
                          "hamming_loss", {"metric": "precision", "average": "micro"},
                          {"metric": "recall", "average": "micro"},
                          {"metric": "f1", "average": "micro"}]
    for c in range(3):
        metrics += [{"metric": m, "label": str(c)} for m in ("precision", "recall", "f1")]
    got = evalcli_values({**cfg, "metrics": metrics}, tmp_path)
    ref = MultilabelMetrics(spark.sparkContext.parallelize(SPARK_DOCS, 2))
    expected = {
        "precision": ref.precision(), "recall": ref.recall(), "f1": ref.f1Measure(),
        "accuracy": ref.accuracy, "subset_accuracy": ref.subsetAccuracy,
        "hamming_loss": ref.hammingLoss, "precision[average=micro]": ref.microPrecision,
        "recall[average=micro]": ref.microRecall, "f1[average=micro]": ref.microF1Measure,
    }
    for c in range(3):
        expected[f"precision[label={c}]"] = ref.precision(float(c))
        expected[f"recall[label={c}]"] = ref.recall(float(c))
        expected[f"f1[label={c}]"] = ref.f1Measure(float(c))
    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        assert got[key] == pytest.approx(want, rel=REL), key


def test_regression_matches_regression_metrics(spark, tmp_path):  # noqa: F811
    from pyspark.mllib.evaluation import RegressionMetrics

    rng = np.random.default_rng(24)
    n = 400
    y = rng.normal(10, 4, n).round(2)
    yhat = (y + rng.normal(0, 1.5, n)).round(1)
    weight = rng.uniform(0.1, 2.0, n)
    df = pl.DataFrame({"label": y, "prediction": yhat, "w": weight})
    path = write(df, tmp_path, "d")
    got = evalcli_values({"task": "regression", "predictions": path,
                          "columns": {"weight": "w"},
                          "metrics": ["mse", "rmse", "mae"]}, tmp_path)
    rows = list(zip(yhat.tolist(), y.tolist(), weight.tolist(), strict=True))
    ref = RegressionMetrics(spark.sparkContext.parallelize(rows, 2))
    assert got["mse"] == pytest.approx(ref.meanSquaredError, rel=REL)
    assert got["rmse"] == pytest.approx(ref.rootMeanSquaredError, rel=REL)
    assert got["mae"] == pytest.approx(ref.meanAbsoluteError, rel=REL)
    # R²: MLlib's weighted total sum of squares is an unbiased-variance estimate times
    # (Σw − 1), not Σw·(y − ȳ)²; the definitions coincide for unit weights
    got = evalcli_values({"task": "regression", "predictions": path, "metrics": ["r2"]},
                         tmp_path)
    unit = RegressionMetrics(spark.sparkContext.parallelize(
        list(zip(yhat.tolist(), y.tolist(), strict=True)), 2))
    assert got["r2"] == pytest.approx(unit.r2, rel=REL)
    # R² through the origin, weighted: Spark ML's RegressionEvaluator(throughOrigin=True)
    from pyspark.ml.evaluation import RegressionEvaluator

    frame = spark.createDataFrame(list(zip(y.tolist(), yhat.tolist(), weight.tolist(),
                                           strict=True)), ["label", "prediction", "w"])
    spark_r2 = RegressionEvaluator(metricName="r2", throughOrigin=True, weightCol="w"
                                   ).evaluate(frame)
    got = evalcli_values({"task": "regression", "predictions": path, "columns": {"weight": "w"},
                          "metrics": [{"metric": "r2", "through_origin": True}]}, tmp_path)
    assert got["r2[through_origin=true]"] == pytest.approx(spark_r2, rel=REL)


def test_ranking_matches_ranking_metrics(spark, tmp_path):  # noqa: F811
    """compat: spark (MAP@k over min(k, |relevant|), exponential NDCG gain, binary relevance
    here) against RankingMetrics on the same ranked lists; distinct scores, no ties."""
    from pyspark.mllib.evaluation import RankingMetrics

    rng = np.random.default_rng(25)
    pred_rows, truth_rows, lists = [], [], []
    for q in range(80):
        ranked = [f"i{x:02d}" for x in rng.choice(50, 12, replace=False)]
        relevant = [f"i{x:02d}" for x in rng.choice(50, int(rng.integers(1, 8)), replace=False)]
        pred_rows += [(q, item, 1.0 - r / 100) for r, item in enumerate(ranked)]
        truth_rows += [(q, item, 1) for item in relevant]
        lists.append((ranked, relevant))
    pred = pl.DataFrame(pred_rows, orient="row", schema=["query", "item", "score"])
    truth = pl.DataFrame(truth_rows, orient="row", schema=["query", "item", "relevance"])
    metrics = ["map", "map@5", "precision@5", "precision@20", "recall@5", "ndcg@5", "ndcg@20"]
    got = evalcli_values({"task": "ranking", "predictions": write(pred, tmp_path, "p"),
                          "truth": write(truth, tmp_path, "t"), "options": {"compat": "spark"},
                          "metrics": metrics}, tmp_path)
    ref = RankingMetrics(spark.sparkContext.parallelize(lists, 2))
    expected = {
        "map": ref.meanAveragePrecision, "map@5": ref.meanAveragePrecisionAt(5),
        "precision@5": ref.precisionAt(5), "precision@20": ref.precisionAt(20),
        "recall@5": ref.recallAt(5), "ndcg@5": ref.ndcgAt(5), "ndcg@20": ref.ndcgAt(20),
    }
    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        assert got[key] == pytest.approx(want, rel=REL), key


def test_ranking_graded_truth_matches_ranking_metrics(spark, tmp_path):  # noqa: F811
    """compat: spark on graded truth with grade-0 rows (issue 17 item 6): RankingMetrics on
    (pred, labels, relevance) triples counts every listed label as relevant for precision,
    recall and MAP (relevant: listed). pyspark 4.3's Python RankingMetrics passes the
    relevance list on but its ndcgAt stays binary over the listed items (probed: labels all of
    grade 0 give the binary value), so NDCG is checked as gain: binary here; Scala's graded
    ndcgAt (2^rel − 1, Spark >= 3.4) is what compat: spark's exponential gain follows."""
    from pyspark.mllib.evaluation import RankingMetrics

    rng = np.random.default_rng(26)
    pred_rows, truth_rows, triples = [], [], []
    for q in range(60):
        ranked = [f"i{x:02d}" for x in rng.choice(40, 10, replace=False)]
        listed = [f"i{x:02d}" for x in rng.choice(40, int(rng.integers(1, 9)), replace=False)]
        grades = [float(g) for g in rng.integers(0, 4, len(listed))]  # many grade 0
        pred_rows += [(q, item, 1.0 - r / 100) for r, item in enumerate(ranked)]
        truth_rows += [(q, item, g) for item, g in zip(listed, grades, strict=True)]
        triples.append((ranked, listed, grades))
    pred = pl.DataFrame(pred_rows, orient="row", schema=["query", "item", "score"])
    truth = pl.DataFrame(truth_rows, orient="row", schema=["query", "item", "relevance"])
    metrics: list[Any] = ["map", "map@5", "precision@5", "recall@5", "recall@20",
                          {"metric": "ndcg@5", "gain": "binary"},
                          {"metric": "ndcg@20", "gain": "binary"}]
    cfg = {"task": "ranking", "predictions": write(pred, tmp_path, "p"),
           "truth": write(truth, tmp_path, "t"), "options": {"compat": "spark"},
           "metrics": metrics}
    got = evalcli_values(cfg, tmp_path)
    ref = RankingMetrics(spark.sparkContext.parallelize(triples, 2))
    expected = {
        "map": ref.meanAveragePrecision, "map@5": ref.meanAveragePrecisionAt(5),
        "precision@5": ref.precisionAt(5), "recall@5": ref.recallAt(5),
        "recall@20": ref.recallAt(20), "ndcg@5[gain=binary]": ref.ndcgAt(5),
        "ndcg@20[gain=binary]": ref.ndcgAt(20),
    }
    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        assert got[key] == pytest.approx(want, rel=REL), key
    # the threshold convention (evalcli's default) differs where grade-0 rows are recommended
    cfg["metrics"] = [{"metric": "precision@5", "relevant": "threshold"}]
    assert evalcli_values(cfg, tmp_path)["precision@5[relevant=threshold]"] < expected[
        "precision@5"]
