"""explained_variance's two definitions (issue 17 item 4): ``ratio`` (scikit-learn's
explained_variance_score, the default) and ``spark`` (Spark MLlib's
RegressionMetrics.explainedVariance, SSreg / Σw with SSreg = Σw·(ŷ − ȳ)²), set by the parameter
``definition`` or by the task option ``compat``.

References: a worked example written out in exact fractions from Spark's documented formula;
pyspark's RegressionMetrics and RegressionEvaluator(metricName="var") on the same rows (weighted
and not; whole run and per segment; the polars, streaming and spark engines); a bootstrap written
from the definition (each replicate's SSreg / Σw with the rows weighted by their group's draws).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from sklearn import metrics as skm

from evalcli import evaluate
from evalcli.config import parse_config
from evalcli.runner import run_config
from tests.test_spark import spark, write  # noqa: F401 - the session fixture
from tests.test_uncertainty_engine import R, bounds, ci_of, row_weights

SPARK_EV = {"metric": "explained_variance", "definition": "spark"}
SPARK_ID = "explained_variance[definition=spark]"


def spark_ev(y: np.ndarray, p: np.ndarray, w: np.ndarray | None = None) -> Fraction:
    """Spark's definition in exact arithmetic: Σw·(ŷ − ȳ)² / Σw, ȳ = Σw·y / Σw."""
    ws = [Fraction(1)] * len(y) if w is None else [Fraction(float(v)) for v in w]
    ys, ps = [Fraction(float(v)) for v in y], [Fraction(float(v)) for v in p]
    total = sum(ws, Fraction(0))
    mean = sum((a * b for a, b in zip(ws, ys, strict=True)), Fraction(0)) / total
    return sum((a * (b - mean) ** 2 for a, b in zip(ws, ps, strict=True)), Fraction(0)) / total


def _frame(n: int, seed: int, weighted: bool) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.normal(10, 4, n).round(2)
    cols: dict[str, Any] = {"id": np.arange(n), "label": y,
                            "prediction": (0.8 * y + rng.normal(1, 1.5, n)).round(1),
                            "group": rng.choice(["a", "b", "c"], n)}
    if weighted:
        cols["w"] = rng.choice([0.0, 0.5, 1.0, 2.5], n)
    return pl.DataFrame(cols)


# --------------------------------------------------------------------------- worked example

def test_worked_example_unweighted_and_weighted() -> None:
    y, p = [1.0, 2.0, 3.0, 6.0], [2.0, 2.0, 5.0, 4.0]
    # unweighted: ȳ = 3; SSreg = 1 + 1 + 4 + 1 = 7; 7 / 4
    got = evaluate({"task": "regression", "metrics": [SPARK_EV]},
                   predictions={"label": y, "prediction": p}).values()
    assert got == {SPARK_ID: 1.75}
    # weights 1, 2, 1, 0.5: Σw = 4.5, ȳ = (1 + 4 + 3 + 3) / 4.5 = 22/9;
    # SSreg = 1·(4/9)² + 2·(4/9)² + 1·(23/9)² + 0.5·(14/9)² = (16 + 32 + 529 + 98) / 81 = 25/3;
    # SSreg / Σw = (25/3) / (9/2) = 50/27
    got = evaluate({"task": "regression", "metrics": [SPARK_EV], "columns": {"weight": "w"}},
                   predictions={"label": y, "prediction": p, "w": [1.0, 2.0, 1.0, 0.5]}
                   ).values()
    assert got[SPARK_ID] == pytest.approx(float(Fraction(50, 27)), rel=1e-15)  # rounded twice


def test_perfect_predictions_give_the_target_variance_constant_predictions_zero() -> None:
    y = [1.0, 2.0, 3.0, 6.0]  # population variance: (4 + 1 + 0 + 9) / 4 = 3.5
    got = evaluate({"task": "regression", "metrics": [SPARK_EV]},
                   predictions={"label": y, "prediction": y}).values()
    assert got == {SPARK_ID: 3.5}
    got = evaluate({"task": "regression", "metrics": [SPARK_EV]},
                   predictions={"label": y, "prediction": [3.0] * 4}).values()
    assert got == {SPARK_ID: 0.0}


def test_no_weight_is_undefined() -> None:
    r = evaluate({"task": "regression", "metrics": [SPARK_EV], "columns": {"weight": "w"}},
                 predictions={"label": [1.0, 2.0], "prediction": [1.0, 3.0], "w": [0.0, 0.0]})
    m = r.metric(SPARK_ID)
    assert m.value is None and m.notes == ["no rows (or zero total weight)"]


def test_large_mean_small_spread_keeps_every_digit() -> None:
    rng = np.random.default_rng(3)
    n = 500
    y = 1e9 + rng.normal(0, 1e-3, n)
    p = y + rng.normal(0, 1e-4, n) + 2e-4
    w = rng.uniform(0.5, 2.0, n)
    for weights in (None, w):
        cfg: dict[str, Any] = {"task": "regression", "metrics": [SPARK_EV]}
        data: dict[str, Any] = {"label": y, "prediction": p}
        if weights is not None:
            cfg["columns"], data["w"] = {"weight": "w"}, weights
        got = evaluate(cfg, predictions=data).values()[SPARK_ID]
        assert got == pytest.approx(float(spark_ev(y, p, weights)), rel=1e-12)


# --------------------------------------------------------------------------- presets

def test_compat_sets_the_definition_and_an_explicit_parameter_wins() -> None:
    df = _frame(200, 1, weighted=False)
    y, p = df["label"].to_numpy(), df["prediction"].to_numpy()
    spark_value, sk_value = float(spark_ev(y, p)), skm.explained_variance_score(y, p)
    cases = [({}, "explained_variance", sk_value),
             ({"compat": "sklearn"}, "explained_variance", sk_value),
             ({"compat": "spark"}, "explained_variance", spark_value),
             ({"compat": "spark"}, {"metric": "explained_variance", "definition": "ratio"},
              sk_value),
             ({"compat": "sklearn"}, SPARK_EV, spark_value)]
    for options, metric, want in cases:
        got = evaluate({"task": "regression", "options": options, "metrics": [metric]},
                       predictions=df.select("label", "prediction")).values()
        (value,) = got.values()
        assert value == pytest.approx(want, rel=1e-12), (options, metric)


# --------------------------------------------------------------------------- bootstrap

@pytest.mark.parametrize("weighted", [False, True])
def test_bootstrap_equals_a_bootstrap_of_the_definition(weighted: bool) -> None:
    df = _frame(300, 4, weighted)
    cfg: dict[str, Any] = {"task": "regression", "metrics": [SPARK_EV],
                           "uncertainty": {"method": "bootstrap"}}
    if weighted:
        cfg["columns"] = {"weight": "w"}
    r = evaluate(cfg, predictions=df.drop("group"), truth=None)
    w = row_weights(pl.Series("u", np.arange(df.height), dtype=pl.UInt32))
    if weighted:
        w = w * df["w"].to_numpy()[None, :]
    y, p = df["label"].to_numpy(), df["prediction"].to_numpy()

    def ev(sw: np.ndarray) -> float:
        mean = np.average(y, weights=sw)
        return float(np.sum(sw * (p - mean) ** 2) / sw.sum())

    reps = np.array([ev(w[i]) for i in range(R) if w[i].sum() > 0])
    assert ci_of(r, SPARK_ID) == pytest.approx(bounds(reps), abs=1e-9)


# --------------------------------------------------------------------------- Spark MLlib

def _run(df: pl.DataFrame, folder: Path, engine: str, weighted: bool,
         metrics: list[Any], **extra: Any) -> Any:
    cfg: dict[str, Any] = {"task": "regression", "engine": engine, "metrics": metrics,
                           "predictions": write(df, folder, f"d-{engine}-{weighted}"), **extra}
    if weighted:
        cfg["columns"] = {"weight": "w"}
    return run_config(parse_config(cfg, "test", folder))


@pytest.mark.spark
@pytest.mark.parametrize("weighted", [False, True])
def test_equals_spark_regression_metrics(spark, tmp_path, weighted):  # noqa: F811
    from pyspark.ml.evaluation import RegressionEvaluator
    from pyspark.mllib.evaluation import RegressionMetrics

    df = _frame(600, 7 + weighted, weighted)

    def reference(part: pl.DataFrame) -> tuple[float, float]:
        y, p = part["label"].to_list(), part["prediction"].to_list()
        w = part["w"].to_list() if weighted else [1.0] * part.height
        rows = list(zip(p, y, w, strict=True)) if weighted else list(zip(p, y, strict=True))
        mllib = RegressionMetrics(spark.sparkContext.parallelize(rows, 2)).explainedVariance
        frame = spark.createDataFrame(list(zip(y, p, w, strict=True)),
                                      ["label", "prediction", "w"])
        kw = {"weightCol": "w"} if weighted else {}
        ml = RegressionEvaluator(metricName="var", **kw).evaluate(frame)
        return mllib, ml

    whole = reference(df)
    assert whole[0] == pytest.approx(whole[1], rel=1e-12)  # the two Spark APIs agree
    for engine in ("polars", "streaming", "spark"):
        for metrics, extra in (([SPARK_EV], {}),
                               (["explained_variance"], {"options": {"compat": "spark"}})):
            r = _run(df, tmp_path, engine, weighted, metrics, group_by=["group"], **extra)
            assert r.engine == engine
            (m,) = r.metrics
            assert m.value == pytest.approx(whole[0], rel=1e-9), (engine, m.id)
            assert len(r.segments) == 3
            for seg in r.segments:
                want = reference(df.filter(pl.col("group") == seg.key["group"]))[0]
                assert seg.metrics[0].value == pytest.approx(want, rel=1e-9), (engine, seg.key)


@pytest.mark.parametrize("weighted", [False, True])
def test_streaming_engine_agrees(weighted: bool) -> None:
    from tests.test_streaming import both_engines

    df = _frame(3000, 12, weighted)
    cfg: dict[str, Any] = {"task": "regression", "metrics": [SPARK_EV, "explained_variance"],
                           "group_by": ["group"]}
    if weighted:
        cfg["columns"] = {"weight": "w"}
    report = both_engines(cfg, df.drop("id"))
    y, p = df["label"].to_numpy(), df["prediction"].to_numpy()
    w = df["w"].to_numpy() if weighted else None
    got = {m["id"]: m["value"] for m in report["metrics"]}
    assert got[SPARK_ID] == pytest.approx(float(spark_ev(y, p, w)), rel=1e-12)
