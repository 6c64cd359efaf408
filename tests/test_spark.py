"""engine: spark gives the Polars engine's report: every family, segments, weights, ties, errors.

One local Spark session (``local[2]``, 4 shuffle partitions) serves every Spark test. Each case
writes small random files, runs the same config on both engines and compares the whole JSON
report (values to floating-point tolerance; counts, notes, segments and gates exactly).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import yaml

from evalcli.config import parse_config
from evalcli.errors import ConfigError, InputDataError, MetricError, UserError
from evalcli.result import RunResult, to_dict
from evalcli.runner import run_config

pytestmark = pytest.mark.spark


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one local SparkSession of the test run; evalcli attaches to it (it is active)."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("evalcli-tests")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# --------------------------------------------------------------------------- helpers

def write(df: pl.DataFrame, folder: Path, name: str, fmt: str = "parquet") -> str:
    path = folder / f"{name}.{fmt}"
    if fmt == "parquet":
        df.write_parquet(path)
    elif fmt == "csv":
        df.write_csv(path)
    elif fmt == "jsonl":
        df.write_ndjson(path)
    else:  # pragma: no cover - test helper
        raise ValueError(fmt)
    return str(path)


def run(cfg: dict[str, Any], folder: Path, engine: str) -> RunResult:
    return run_config(parse_config({**cfg, "engine": engine}, "test", folder))


def close(a: Any, b: Any, where: str = "") -> None:
    """Equal reports: floats to 1e-9 relative, everything else exactly."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, int | float) and isinstance(b, int | float), (where, a, b)
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (where, a, b)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), (where, sorted(a), sorted(b))
        for k in a:
            close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (where, a, b)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            close(x, y, f"{where}[{i}]")
    else:
        assert a == b, (where, a, b)


def same(cfg: dict[str, Any], folder: Path) -> RunResult:
    """Run ``cfg`` on both engines; assert the reports agree; return the Spark result."""
    expected = run(cfg, folder, "polars")
    got = run(cfg, folder, "spark")
    assert got.engine == "spark"
    a, b = to_dict(expected), to_dict(got)
    a.pop("engine"), b.pop("engine")
    close(json.loads(json.dumps(a)), json.loads(json.dumps(b)))
    return got


def errors_alike(cfg: dict[str, Any], folder: Path) -> str:
    """Both engines refuse ``cfg`` with the same error; return the message."""
    with pytest.raises(UserError) as polars_err:
        run(cfg, folder, "polars")
    with pytest.raises(UserError) as spark_err:
        run(cfg, folder, "spark")
    assert type(spark_err.value) is type(polars_err.value)
    assert str(spark_err.value) == str(polars_err.value)
    return str(spark_err.value)


# --------------------------------------------------------------------------- random data

def binary_frames(seed: int, n: int = 400) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, n)
    score = np.clip(0.35 * label + rng.normal(0.35, 0.25, n), 0, 1).round(2)  # ties
    region = rng.choice(["north", "south", "east"], n).astype(object)
    region[:5] = "west"
    label[:5] = 1  # a segment with one class: AUROC undefined there, never 0
    pred = pl.DataFrame({"id": rng.permutation(n), "score": score,
                         "prediction": (score >= 0.6).astype(int), "region": region})
    truth = pl.DataFrame({"id": pred["id"], "label": label,
                          "weight": rng.choice([0.0, 0.5, 1.0, 2.5], n),
                          "tier": rng.choice([1, 2], n)})
    return pred, truth.sample(fraction=1.0, shuffle=True, seed=seed)


BINARY_METRICS: list[Any] = [
    "accuracy", "precision", "recall", "specificity", "fpr", "f1", {"metric": "fbeta", "beta": 2},
    "mcc", "balanced_accuracy", {"metric": "auroc", "min": 0.99}, "auprc", "average_precision",
    "peak_f1", "log_loss", "brier", {"metric": "recall", "threshold": 0.3, "min": 0.5},
    {"metric": "precision", "threshold": 0.99},
]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_binary_two_files_segments_weights_ties(spark, tmp_path, fmt):
    pred, truth = binary_frames(1)
    cfg = {"task": "binary", "predictions": write(pred, tmp_path, "p", fmt),
           "truth": write(truth, tmp_path, "t", fmt), "columns": {"weight": "weight"},
           "metrics": BINARY_METRICS, "group_by": ["region", "tier"]}
    got = same(cfg, tmp_path)
    assert len(got.segments) == 8
    assert not got.passed  # the auroc gate fails on both engines alike


def test_binary_operating_points(spark, tmp_path):
    """Recall at a precision, the cost-optimal threshold and the top fraction read the counts
    per score the Spark engine combines: the same values, thresholds and notes."""
    pred, truth = binary_frames(6, 300)
    cfg = {"task": "binary", "predictions": write(pred, tmp_path, "p"),
           "truth": write(truth, tmp_path, "t"), "columns": {"weight": "weight"},
           "group_by": ["region"], "metrics": [
               "recall_at_precision[min_precision=0.7]", "precision_at_recall[min_recall=0.8]",
               "sensitivity_at_specificity[min_specificity=0.9]",
               "specificity_at_sensitivity[min_sensitivity=0.9]", "min_cost[fn_cost=5]",
               "precision_at_top@0.1", "lift_at_top@0.1"]}
    got = same(cfg, tmp_path)
    assert all(m.details.get("threshold") is not None for m in got.metrics[:4])


def test_binary_calibration(spark, tmp_path):
    """ECE and MCE (uniform and quantile bins) read the counts per score the Spark engine
    combines: the same values and details."""
    pred, truth = binary_frames(8, 300)
    cfg = {"task": "binary", "predictions": write(pred, tmp_path, "p"),
           "truth": write(truth, tmp_path, "t"), "columns": {"weight": "weight"},
           "group_by": ["region"], "metrics": [
               "ece", "mce", {"metric": "ece", "bins": 5, "strategy": "quantile"},
               {"metric": "mce", "bins": 5, "strategy": "quantile"}]}
    got = same(cfg, tmp_path)
    assert all(m.value is not None for m in got.metrics)


def test_binary_one_file_default_metrics_and_curves(spark, tmp_path):
    pred, truth = binary_frames(2, 300)
    df = pred.join(truth, on="id")
    cfg = {"task": "binary", "predictions": write(df, tmp_path, "d", "jsonl"),
           "group_by": ["region"]}
    expected = run(cfg, tmp_path, "polars")
    got = same(cfg, tmp_path)
    assert [m.id for m in got.metrics] == [m.id for m in expected.metrics]
    got = run_config(parse_config({**cfg, "engine": "spark"}, "t", tmp_path), curves=True)
    want = run_config(parse_config(cfg, "t", tmp_path), curves=True)
    assert sorted(got.curves) == sorted(want.curves)
    for name in want.curves:
        close(want.curves[name].to_dicts(), got.curves[name].to_dicts(), name)


def test_binary_unmatched_and_null_rows_dropped(spark, tmp_path):
    pred, truth = binary_frames(3, 300)
    pred = pred.with_columns(pl.when(pl.col("id") % 17 == 0).then(None)
                             .otherwise(pl.col("score")).alias("score"))
    cfg = {"task": "binary", "predictions": write(pred.head(280), tmp_path, "p"),
           "truth": write(truth.tail(290), tmp_path, "t"),
           "alignment": {"unmatched": "drop", "nulls": "drop"}, "metrics": ["auroc", "brier"]}
    got = same(cfg, tmp_path)
    assert got.alignment.dropped_nulls > 0
    assert got.alignment.only_in_predictions > 0 and got.alignment.only_in_truth > 0


def test_binary_no_rows_left(spark, tmp_path):
    pred, truth = binary_frames(4, 50)
    msg = errors_alike({"task": "binary", "predictions": write(pred, tmp_path, "p"),
                        "truth": write(truth.with_columns(pl.col("id") + 1000), tmp_path, "t"),
                        "alignment": {"unmatched": "drop"}, "metrics": ["auroc"]}, tmp_path)
    assert "no rows to evaluate" in msg


def test_binary_string_labels_positive_option(spark, tmp_path):
    pred, truth = binary_frames(5, 200)
    truth = truth.with_columns(pl.when(pl.col("label") == 1).then(pl.lit("yes"))
                               .otherwise(pl.lit("no")).alias("label"))
    cfg = {"task": "binary", "predictions": write(pred.drop("prediction"), tmp_path, "p"),
           "truth": write(truth, tmp_path, "t", "csv"), "options": {"positive": "yes"},
           "metrics": ["auroc", "f1", "log_loss"]}
    same(cfg, tmp_path)


def regression_frame(seed: int, n: int = 400) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.normal(50, 20, n).round(1)
    y[:3] = 0.0  # MAPE's epsilon floor
    return pl.DataFrame({
        "id": np.arange(n), "label": y, "prediction": (y + rng.normal(0, 5, n)).round(0),
        "weight": rng.uniform(0.1, 3.0, n), "site": rng.choice(["a", "b", "c", "d"], n),
    })


@pytest.mark.parametrize("weighted", [False, True])
def test_regression_segments(spark, tmp_path, weighted):
    df = regression_frame(6)
    cfg: dict[str, Any] = {
        "task": "regression", "predictions": write(df.select("id", "prediction", "site"),
                                                   tmp_path, "p"),
        "truth": write(df.select("id", "label", "weight").reverse(), tmp_path, "t"),
        "group_by": ["site"],
        "metrics": ["mse", {"metric": "rmse", "max": 1.0}, "mae", "r2", "explained_variance",
                    "mape", "max_error", "median_absolute_error"],
    }
    if weighted:
        cfg["columns"] = {"weight": "weight"}
    same(cfg, tmp_path)


def multiclass_frames(seed: int, n: int = 400) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    classes = np.array(["cat", "dog", "owl", "yak"])
    label = rng.integers(0, 4, n)
    logits = rng.normal(0, 1, (n, 4))
    logits[np.arange(n), label] += 1.2
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    probs = probs.round(2)
    probs[:, 3] = 1 - probs[:, :3].sum(1)
    pred = pl.DataFrame({"id": np.arange(n), "prediction": classes[probs.argmax(1)],
                         **{f"p_{c}": probs[:, i] for i, c in enumerate(classes)},
                         "group": rng.choice(["x", "y"], n)})
    truth = pl.DataFrame({"id": np.arange(n), "label": classes[label],
                          "weight": rng.uniform(0.2, 2.0, n)})
    return pred, truth.sample(fraction=1.0, shuffle=True, seed=seed)


def test_multiclass_scores_segments_weights(spark, tmp_path):
    pred, truth = multiclass_frames(7)
    cfg = {"task": "multiclass", "predictions": write(pred, tmp_path, "p"),
           "truth": write(truth, tmp_path, "t"), "columns": {"weight": "weight"},
           "options": {"score_prefix": "p_"}, "group_by": ["group"],
           "metrics": ["confusion_matrix", "accuracy", "precision", "recall", "f1",
                       {"metric": "f1", "average": "weighted"},
                       {"metric": "f1", "average": "micro"},
                       {"metric": "precision", "label": "owl"},
                       {"metric": "fbeta", "beta": 0.5}, "fpr", "cohen_kappa",
                       {"metric": "cohen_kappa", "weights": "quadratic"}, "mcc",
                       "balanced_accuracy", "hamming_loss", "top_k_accuracy",
                       {"metric": "top_k_accuracy", "k": 3}, "log_loss", "auroc",
                       {"metric": "auroc", "multi_class": "ovo", "average": "weighted"},
                       {"metric": "auroc", "average": "micro"}, "average_precision"]}
    same(cfg, tmp_path)


def multilabel_sets(seed: int, n: int = 300) -> tuple[list[list[str]], list[list[str]]]:
    rng = np.random.default_rng(seed)
    names = ["art", "bio", "cs", "eco", "law", "med"]
    truth, pred = [], []
    for _ in range(n):
        t = [x for x in names if rng.random() < 0.3]
        p = [x for x in names if (x in t and rng.random() < 0.7) or rng.random() < 0.1]
        truth.append(t)
        pred.append(p)
    return truth, pred


MULTILABEL_METRICS: list[Any] = [
    "precision", "recall", "f1", "accuracy", "subset_accuracy", "hamming_loss",
    {"metric": "f1", "average": "micro"}, {"metric": "precision", "average": "macro"},
    {"metric": "recall", "label": "cs"}, {"metric": "fbeta", "beta": 2},
]


def test_multilabel_delimited_one_file_segments(spark, tmp_path):
    truth, pred = multilabel_sets(8)
    df = pl.DataFrame({"id": list(range(len(truth))),
                       "label": ["|".join(t) for t in truth],
                       "prediction": ["|".join(p) for p in pred],
                       "half": [i % 2 for i in range(len(truth))]})
    cfg = {"task": "multilabel", "predictions": write(df, tmp_path, "d", "csv"),
           "group_by": ["half"], "metrics": MULTILABEL_METRICS}
    same(cfg, tmp_path)


def test_multilabel_long_layout_two_files(spark, tmp_path):
    truth, pred = multilabel_sets(9, 200)
    t_rows = [(i, x) for i, xs in enumerate(truth) for x in xs]
    p_rows = [(i, x) for i, xs in enumerate(pred) for x in xs]
    tdf = pl.DataFrame(t_rows, schema={"id": pl.Int64, "label": pl.String}, orient="row")
    pdf = pl.DataFrame(p_rows, schema={"id": pl.Int64, "prediction": pl.String}, orient="row")
    cfg = {"task": "multilabel", "predictions": write(pdf, tmp_path, "p"),
           "truth": write(tdf.sample(fraction=1.0, shuffle=True, seed=1), tmp_path, "t"),
           "options": {"layout": "long"}, "alignment": {"unmatched": "drop"},
           "metrics": MULTILABEL_METRICS}
    got = same(cfg, tmp_path)
    assert got.alignment.matched > 100


# --------------------------------------------------------------------------- errors alike

def test_duplicate_keys_same_error(spark, tmp_path):
    pred, truth = binary_frames(10, 100)
    truth = pl.concat([truth, truth.head(2)])
    msg = errors_alike({"task": "binary", "predictions": write(pred, tmp_path, "p"),
                        "truth": write(truth, tmp_path, "t")}, tmp_path)
    assert "2 duplicated key(s) in the truth" in msg


def test_unmatched_rows_same_error(spark, tmp_path):
    pred, truth = binary_frames(11, 100)
    msg = errors_alike({"task": "binary", "predictions": write(pred, tmp_path, "p"),
                        "truth": write(truth.tail(95), tmp_path, "t")}, tmp_path)
    assert "5 row(s) only in" in msg


def test_null_and_check_violations_same_error(spark, tmp_path):
    pred, truth = binary_frames(12, 100)
    bad = truth.with_columns(pl.when(pl.col("id").is_in([7, 3])).then(None)
                             .otherwise(pl.col("label")).alias("label"))
    msg = errors_alike({"task": "binary", "predictions": write(pred, tmp_path, "p"),
                        "truth": write(bad, tmp_path, "t")}, tmp_path)
    assert "2 row(s) with a null or NaN label" in msg and "first at id=3" in msg
    bad = truth.with_columns(pl.when(pl.col("id") == 9).then(2)
                             .otherwise(pl.col("label")).alias("label"))
    msg = errors_alike({"task": "binary", "predictions": write(pred, tmp_path, "p2"),
                        "truth": write(bad, tmp_path, "t2")}, tmp_path)
    assert "must hold 0 and 1" in msg and "first at id=9" in msg


def test_one_file_check_violation_names_a_value(spark, tmp_path):
    pred, truth = binary_frames(13, 60)
    df = pred.join(truth, on="id").with_columns(pl.lit(3.5).alias("score"))
    cfg = {"task": "binary", "predictions": write(df, tmp_path, "d"), "metrics": ["log_loss"]}
    with pytest.raises(InputDataError, match=r"outside \[0, 1\]: 60 row\(s\), e.g. score=3.5"):
        run(cfg, tmp_path, "spark")


# --------------------------------------------------------------------------- config, setup

def test_unsupported_metric_is_refused_before_reading(spark, tmp_path):
    plugin = tmp_path / "polars_only.py"
    plugin.write_text(
        "import polars as pl\n"
        "from evalcli.metrics.base import AggStat, Metric, MetricValue\n"
        "def _stats(p, c):\n"
        "    return [AggStat('x.n', lambda: [pl.len().alias('x.n.n')], {'x.n.n': 'sum'})]\n"
        "METRICS = [Metric('row_count', 'binary', 'rows', 'n', 'higher', (), _stats,\n"
        "                  lambda s, p: MetricValue(float(s['x.n']['x.n.n'])),\n"
        "                  engines=frozenset({'polars'}))]\n")
    cfg = {"task": "binary", "predictions": str(tmp_path / "missing.parquet"),
           "plugins": [str(plugin)], "metrics": ["auroc", "row_count"]}
    with pytest.raises(MetricError, match="'row_count' cannot run on engine spark"):
        run(cfg, tmp_path, "spark")


def test_plugin_metric_runs_on_the_executors(spark, tmp_path):
    plugin = tmp_path / "mean_score.py"
    plugin.write_text(
        "import polars as pl\n"
        "from evalcli.plugin import mean_metric\n"
        "METRICS = [mean_metric('mean_score', 'binary', summary='mean score', formula='x',\n"
        "                       direction='higher', needs=['score'],\n"
        "                       row=lambda p, c: pl.col('score'))]\n")
    pred, truth = binary_frames(14, 120)
    cfg = {"task": "binary", "predictions": write(pred, tmp_path, "p"),
           "truth": write(truth, tmp_path, "t"), "plugins": [str(plugin)],
           "columns": {"weight": "weight"},  # optional roles are opt-in
           "metrics": ["mean_score", "auroc"], "group_by": ["region"]}
    got = same(cfg, tmp_path)
    both = pred.join(truth, on="id")
    want = (both["score"] * both["weight"]).sum() / both["weight"].sum()
    assert got.metric("mean_score").value == pytest.approx(want, rel=1e-12)


def test_missing_pyspark_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    pred, _ = binary_frames(15, 20)
    cfg = {"task": "binary", "predictions": write(pred, tmp_path, "p"), "metrics": ["auroc"],
           "columns": {"label": "prediction"}}
    with pytest.raises(ConfigError, match=r"pip install 'evalcli\[spark\]'"):
        run(cfg, tmp_path, "spark")


def test_attach_required_without_a_session(monkeypatch):
    from pyspark.sql import SparkSession

    from evalcli.config import SparkSettings
    from evalcli.engine.spark_engine import session

    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    with pytest.raises(ConfigError, match="no SparkSession is active"):
        session(SparkSettings(attach="required"))


def test_spark_settings_validated():
    with pytest.raises(ConfigError, match=r"unknown key 'spark.mastr'.*Did you mean 'master'"):
        parse_config({"task": "binary", "predictions": "x.csv", "engine": "spark",
                      "spark": {"mastr": "local[2]"}}, "test", Path("."))
    cfg = parse_config({"task": "binary", "predictions": "x.csv", "engine": "spark",
                        "spark": {"conf": {"spark.executor.memory": "2g"}}}, "t", Path("."))
    assert cfg.spark.master == "local[*]" and cfg.spark.attach == "auto"


def test_cli_engine_option_json_on_stdout(spark, cli, tmp_path):
    pred, truth = binary_frames(16, 150)
    p, t = write(pred, tmp_path, "p"), write(truth, tmp_path, "t")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"task: binary\npredictions: {p}\ntruth: {t}\n"
                   "metrics: [{metric: auroc, min: 0.99}, f1]\n")
    r = cli("run", str(cfg), "--engine", "spark", "--format", "json")
    assert r.exit_code == 1, r.stderr
    report = json.loads(r.stdout)
    assert report["engine"] == "spark" and report["passed"] is False
    r = cli("compare", p, t, "--engine", "spark", "-m", "auroc", "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["engine"] == "spark"


# --------------------------------------------------------------------------- ranking

def ranking_frames(seed: int, queries: int = 60) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Scored recommendations (ties) and graded judgments; some queries without judgments,
    some without predictions, some without a relevant item; a per-query weight and segment."""
    rng = np.random.default_rng(seed)
    pred_rows, truth_rows = [], []
    for q in range(queries):
        items = rng.choice(40, 12, replace=False)
        weight = float(rng.choice([1.0, 2.0, 0.5]))
        tier = "gold" if q % 3 == 0 else "basic"
        if q % 11 != 5:  # q = 5, 16, ...: relevant items, no predictions
            for it in items[:10]:
                pred_rows.append((f"q{q:02d}", f"i{it:02d}", round(float(rng.random()), 1),
                                  weight, tier))
        if q % 13 != 7:  # q = 7, 20, ...: predictions, no judgments
            for it in items[rng.integers(0, 4):][:6]:
                truth_rows.append((f"q{q:02d}", f"i{it:02d}",
                                   0 if q % 17 == 3 else int(rng.integers(0, 4))))
    pred = pl.DataFrame(pred_rows, orient="row",
                        schema=["user", "item", "score", "weight", "tier"])
    truth = pl.DataFrame(truth_rows, orient="row", schema=["user", "item", "relevance"])
    return pred.sample(fraction=1.0, shuffle=True, seed=seed), truth


RANKING_METRICS: list[Any] = [
    {"metric": "ndcg@5", "min": 0.5}, "ndcg@10", {"metric": "ndcg@5", "gain": "exponential"},
    "dcg@3", "map", "map@5", {"metric": "map@5", "denominator": "min_k_relevant"}, "mrr",
    "precision@3", "recall@5", "f1@5", "hit_rate@3", "micro_recall@5", "r_precision", "auc",
    {"metric": "ndcg@5", "ties": "id"}, {"metric": "precision@5", "ties": "input"},
    {"metric": "map", "missing": "zero", "unjudged": "zero"},
]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_ranking_segments_weights_ties_policies(spark, tmp_path, fmt):
    pred, truth = ranking_frames(30)
    cfg = {"task": "ranking", "predictions": write(pred, tmp_path, "p", fmt),
           "truth": write(truth, tmp_path, "t", fmt),
           "columns": {"weight": "weight", "extra": {"query": "user"}},
           "group_by": ["tier"], "metrics": RANKING_METRICS}
    got = same(cfg, tmp_path)
    assert got.alignment.extra["queries_only_in_truth"] > 0
    # queries with judgments only have no tier (the segment column is the predictions')
    assert [s.key for s in got.segments] == [{"tier": "basic"}, {"tier": "gold"}, {"tier": None}]


def test_ranking_repeated_keys_left_out_are_counted_alike(spark, tmp_path):
    """compat: ranx keeps the last row of a repeated (query, item): Spark counts the rows it
    left out (summed over its partitions) as the in-memory engine does, and gets the same
    values."""
    pred, truth = ranking_frames(32)
    again = pred.sample(n=25, seed=1).with_columns(pl.col("score") + 0.05)
    pred = pl.concat([pred, again])
    cfg = {"task": "ranking", "predictions": write(pred, tmp_path, "p", "parquet"),
           "truth": write(truth, tmp_path, "t", "parquet"),
           "columns": {"extra": {"query": "user"}}, "options": {"compat": "ranx"},
           "metrics": ["ndcg@5", "map", "mrr"]}
    got = same(cfg, tmp_path)
    assert got.alignment.extra["duplicates_dropped"] == 25
    assert got.alignment.extra["duplicates_policy"] == "last"


def test_ranking_trec_eval_options(spark, tmp_path):
    """trec_eval's -M and -J (max_per_query, judged_only) on Spark, with a query whose retrieved
    items are all unjudged (scored 0 under -J, not dropped as missing)."""
    pred, truth = ranking_frames(31)
    pred = pl.concat([pred, pl.DataFrame({"user": ["zz", "zz"], "item": ["x1", "x2"],
                                          "score": [0.5, 0.4], "weight": [1.0, 1.0],
                                          "tier": ["gold", "gold"]})])
    truth = pl.concat([truth, pl.DataFrame({"user": ["zz"], "item": ["y1"], "relevance": [1]})])
    cfg = {"task": "ranking", "predictions": write(pred, tmp_path, "p", "parquet"),
           "truth": write(truth, tmp_path, "t", "parquet"),
           "columns": {"extra": {"query": "user"}},
           "options": {"compat": "trec_eval", "judged_only": True, "max_per_query": 8},
           "metrics": ["map", "ndcg", "precision@5", "num_ret", "num_q", "bpref"]}
    got = same(cfg, tmp_path)
    both = set(pred["user"]) & set(truth["user"])  # trec_eval's queries, "zz" (nothing judged
    assert "zz" in both and got.metric("num_q").value == len(both)  # retrieved) included


def test_ranking_trec_eval_preferences_and_judgment_groups(spark, tmp_path):
    """trec_eval's -R prefs and -R qrels_jg measures (side files joined in the plan) give the
    in-memory engine's report on Spark."""
    data = Path(__file__).parent / "data" / "trec_eval"
    same({"task": "ranking",
          "predictions": {"path": str(data / "prefs.results.test"), "format": "trec"},
          "truth": {"path": str(data / "prefs.test"), "format": "trec_prefs"},
          "options": {"compat": "trec_eval", "prefs_file": str(data / "prefs.test")},
          "metrics": ["prefs", "prefs[measure=pair_ret]", "num_prefs"]}, tmp_path)
    same({"task": "ranking",
          "predictions": {"path": str(data / "results.test"), "format": "trec"},
          "truth": {"path": str(data / "qrels.123"), "format": "trec_qrels_jg"},
          "options": {"compat": "trec_eval", "qrels_jg_file": str(data / "qrels.123")},
          "metrics": ["map_avgjg", "precision_avgjg@5", "rprec_mult_avgjg[mult=0.6]"]},
         tmp_path)


def test_ranking_sample_configs(spark, tmp_path):
    """The bundled list-column (JSONL, exploded) and TREC samples, every metric Spark runs."""
    from tests.conftest import CONFIGS

    for name in ("ranking-lists.yaml", "ranking-trec.yaml"):
        cfg = yaml.safe_load((CONFIGS / name).read_text())
        for key in ("predictions", "truth"):
            cfg[key] = str((CONFIGS / cfg[key]).resolve())
        same(cfg, tmp_path)
    # per-query values: the same table, in the same (query) order
    for engine in ("polars", "spark"):
        run({**cfg, "per_query": str(tmp_path / f"{engine}.csv")}, tmp_path, engine)
    from polars.testing import assert_frame_equal

    assert_frame_equal(pl.read_csv(tmp_path / "polars.csv"), pl.read_csv(tmp_path / "spark.csv"),
                       rel_tol=1e-9)


def test_ranking_beyond_accuracy_refused_before_reading(spark, tmp_path):
    cfg = {"task": "ranking", "predictions": str(tmp_path / "none.parquet"),
           "truth": str(tmp_path / "none.parquet"), "metrics": ["ndcg@10", "novelty@10"]}
    with pytest.raises(MetricError, match=r"'novelty@10' cannot run on engine spark"):
        run(cfg, tmp_path, "spark")


def test_api_inside_a_spark_application(spark, tmp_path):
    """evalcli called from Python where a SparkSession is active: attach: required uses it."""
    import evalcli

    df = regression_frame(31, 120)
    path = write(df, tmp_path, "d")
    result = evalcli.evaluate({"task": "regression", "predictions": path, "metrics": ["mae"],
                               "columns": {"weight": "weight"},  # optional roles are opt-in
                               "engine": "spark", "spark": {"attach": "required"}})
    assert result.engine == "spark"
    want = float((df["label"] - df["prediction"]).abs().dot(df["weight"]) / df["weight"].sum())
    assert result.values()["mae"] == pytest.approx(want, rel=1e-12)


# --------------------------------------------------------------------------- issue 19 (trust)

def test_a_positive_class_matching_no_label_is_the_same_error(spark: Any, tmp_path: Path
                                                              ) -> None:
    from evalcli.errors import InputDataError

    pred = pl.DataFrame({"id": [1, 2, 3, 4], "score": [0.9, 0.2, 0.6, 0.4]})
    truth = pl.DataFrame({"id": [1, 2, 3, 4], "label": ["yes", "no", "no", "yes"]})
    cfg = {"task": "binary", "predictions": write(pred, tmp_path, "p"),
           "truth": write(truth, tmp_path, "t"), "metrics": ["accuracy"],
           "options": {"positive": "Yes"}}
    messages = []
    for engine in ("polars", "spark"):
        with pytest.raises(InputDataError, match="matches no value of the label column") as e:
            run(cfg, tmp_path, engine)
        messages.append(str(e.value))
    assert messages[0] == messages[1] and "'no', 'yes'" in messages[1]
    ok = {**cfg, "options": {"positive": "yes"}}
    close(run(ok, tmp_path, "polars").to_dict()["metrics"],
          run(ok, tmp_path, "spark").to_dict()["metrics"])


def test_a_label_parameter_naming_no_class_is_the_same_error(spark: Any, tmp_path: Path
                                                             ) -> None:
    from evalcli.errors import MetricError

    df = pl.DataFrame({"id": [1, 2, 3, 4], "label": ["cat", "dog", "bird", "dog"],
                       "prediction": ["cat", "cat", "bird", "dog"], "g": ["a", "a", "b", "b"]})
    cfg = {"task": "multiclass", "predictions": write(df, tmp_path, "mc"),
           "metrics": ["recall[label=cta]"]}
    for engine in ("polars", "spark"):
        with pytest.raises(MetricError, match="Did you mean 'cat'"):
            run(cfg, tmp_path, engine)
    seg = {**cfg, "metrics": ["recall[label=bird]"], "group_by": ["g"]}
    a, b = (run(seg, tmp_path, e).to_dict() for e in ("polars", "spark"))
    close(a["segments"], b["segments"])
    assert {s["key"]["g"]: s["metrics"][0]["value"] for s in b["segments"]} == {"a": 0.0,
                                                                                 "b": 1.0}


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
def test_a_csv_in_another_encoding_reads_the_same(spark: Any, tmp_path: Path,
                                                  encoding: str) -> None:
    text = "id,label,score,city\n1,1,0.9,Málaga\n2,0,0.2,Zürich\n3,1,0.6,Málaga\n4,0,0.4,Köln\n"
    (tmp_path / "d.csv").write_bytes(text.encode(encoding))
    cfg = {"task": "binary", "predictions": {"path": "d.csv", "encoding": encoding},
           "metrics": ["accuracy", "auroc"], "group_by": ["city"]}
    a, b = (run(cfg, tmp_path, e).to_dict() for e in ("polars", "spark"))
    close(a["metrics"], b["metrics"])
    assert [s["key"]["city"] for s in b["segments"]] == ["Köln", "Málaga", "Zürich"]
