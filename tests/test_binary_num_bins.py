"""auroc's and auprc's ``num_bins`` and the task option ``num_bins`` (issue 17 item 2) against
Spark MLlib's ``BinaryClassificationMetrics(scoreAndLabels, numBins)`` itself: the areas and
the ``roc()`` / ``pr()`` points, with and without weights, for several numBins (below, near
and above half the distinct scores, and above their count).

Spark cuts each partition of its sorted counts apart, so the reference runs in its own local
Spark with one partition (a subprocess: the test session's Spark has two).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from evalcli import evaluate
from evalcli.config import parse_config
from evalcli.metrics.binary.stats import spark_bins
from evalcli.metrics.registry import get_registry
from evalcli.runner import run_config
from tests.test_spark import write

KS = [0, 1, 2, 7, 10, 33, 60, 80, 1000]

REFERENCE = r'''
import json, sys
from pyspark.sql import SparkSession
rows, ks = json.load(sys.stdin)
spark = (SparkSession.builder.master("local[1]").config("spark.default.parallelism", "1")
         .config("spark.sql.shuffle.partitions", "1").config("spark.ui.enabled", "false")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
jvm = spark.sparkContext._jvm
enc = jvm.org.apache.spark.sql.Encoders
cols = ["s", "l", "w"][:len(rows[0])]
df = spark.createDataFrame([tuple(r) for r in rows], cols).coalesce(1)
types = [enc.DOUBLE() for _ in cols]
rdd = getattr(df._jdf, "as")(enc.tuple(*types)).rdd()
pts = lambda r: [[t._1(), t._2()] for t in r.toJavaRDD().collect()]
out = {}
for k in ks:
    m = jvm.org.apache.spark.mllib.evaluation.BinaryClassificationMetrics(rdd, k)
    out[k] = {"auroc": m.areaUnderROC(), "auprc": m.areaUnderPR(), "roc": pts(m.roc()),
              "pr": pts(m.pr()), "thresholds": list(m.thresholds().toJavaRDD().collect())}
spark.stop()
print("RESULT" + json.dumps(out))
'''


def _data(weighted: bool) -> pl.DataFrame:
    rng = np.random.default_rng(17)
    n = 240
    label = rng.integers(0, 2, n)
    score = np.clip(0.3 * label + rng.normal(0.4, 0.2, n), 0, 1).round(3)  # ~170 distinct, ties
    df = pl.DataFrame({"label": label, "score": score})
    if weighted:
        df = df.with_columns(w=pl.Series(rng.choice([0.5, 1.0, 2.0, 3.0], n)))
    return df


def _spark(df: pl.DataFrame, ks: list[int]) -> dict[int, dict[str, Any]]:
    rows = [[float(v) for v in r] for r in df.select("score", pl.col("label"),
                                                      *(["w"] if "w" in df.columns else []))
            .rows()]
    proc = subprocess.run([sys.executable, "-c", REFERENCE], input=json.dumps([rows, ks]),
                          capture_output=True, text=True, timeout=300, check=True)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
    return {int(k): v for k, v in json.loads(line[len("RESULT"):]).items()}


def _run(df: pl.DataFrame, tmp_path: Path, k: int) -> Any:
    cfg: dict[str, Any] = {
        "task": "binary", "predictions": write(df, tmp_path, f"p{k}"),
        "options": {"compat": "spark", "num_bins": k},
        "metrics": ["auroc", "auprc", {"metric": "auroc", "num_bins": 0}]}
    if "w" in df.columns:
        cfg["columns"] = {"weight": "w"}
    return run_config(parse_config(cfg, "test", tmp_path), curves=True)


@pytest.mark.spark
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_num_bins_equals_spark(tmp_path, weighted):
    """Values (to the last bits: Spark adds its trapezoids in another order) and every
    roc()/pr() point and threshold exactly, for each numBins."""
    df = _data(weighted)
    ref = _spark(df, KS)
    distinct = df["score"].n_unique()
    assert distinct > 2 * 60  # 60 bins still down-sample, 80 and 1000 do not
    for k in KS:
        result = _run(df, tmp_path, k)
        got = {m.id: m.value for m in result.metrics}
        assert got["auroc"] == pytest.approx(ref[k]["auroc"], rel=1e-12, abs=0.0), k
        assert got["auprc"] == pytest.approx(ref[k]["auprc"], rel=1e-12, abs=0.0), k
        assert got["auroc[num_bins=0]"] == pytest.approx(ref[0]["auroc"], rel=1e-12), k
        roc, pr = result.curves["roc"], result.curves["pr"]
        assert [list(r) for r in roc.select("fpr", "tpr").rows()] == ref[k]["roc"], k
        assert [list(r) for r in pr.select("recall", "precision").rows()] == ref[k]["pr"], k
        assert pr["threshold"].to_list()[1:] == ref[k]["thresholds"], k
        if 0 < k <= distinct // 2:
            assert len(ref[k]["thresholds"]) < distinct
        else:
            assert len(ref[k]["thresholds"]) == distinct


def test_num_bins_known_answer():
    """Spark 4.0's values on eight scores (checked with pyspark): 8 // 3 = 2 scores a chunk,
    each at its lower score; numBins 5 is above half the scores, so nothing is grouped."""
    data = {"label": [1, 0, 1, 1, 0, 0, 1, 0],
            "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]}
    metrics: list[Any] = [{"metric": m, "num_bins": k} for m in ("auroc", "auprc")
                          for k in (2, 3, 5)]
    got = evaluate({"task": "binary", "metrics": metrics}, predictions=data).values()
    assert got == {"auroc[num_bins=2]": 0.75, "auroc[num_bins=3]": 0.625,
                   "auroc[num_bins=5]": 0.6875, "auprc[num_bins=2]": 0.71875,
                   "auprc[num_bins=3]": 0.5625,
                   "auprc[num_bins=5]": pytest.approx(0.706845238095238, rel=1e-15)}
    counts = pl.DataFrame({"score": data["score"], "pos": [float(v) for v in data["label"]],
                           "neg": [1.0 - v for v in data["label"]]})
    assert spark_bins(counts, 3)["score"].to_list() == [0.8, 0.6, 0.4, 0.2]


def test_option_is_the_default_and_metrics_show_states_it():
    data = {"label": [1, 0, 1, 1, 0, 0, 1, 0],
            "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]}
    r = evaluate({"task": "binary", "options": {"num_bins": 2}, "metrics": [
        "auroc", {"metric": "auroc", "num_bins": 0}]}, predictions=data)
    assert r.values() == {"auroc": 0.75, "auroc[num_bins=0]": 0.6875}
    for name in ("auroc", "auprc"):
        metric = get_registry().get("binary", name)
        param = {p.name: p for p in metric.params}["num_bins"]
        assert "Spark MLlib's BinaryClassificationMetrics(scoreAndLabels, numBins)" in param.help
        assert "numBins" in (metric.conventions or "")
