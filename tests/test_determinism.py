"""The same rows give the same bits: whatever the input format, the reader's chunks, the row
order and the engine (issue 19, item 6).

A float sum depends on the order of its additions, and readers chunk files differently (CSV
in blocks, Parquet by row group), the streaming engine adds in thread order, Spark by
partition. Every float sum of every family is therefore an exact sum
(:func:`evalcli.metrics.stats.exact_sum`): digits on a binary grid added as integers, the
values the grid cannot hold kept aside, everything added exactly and rounded once.

1. The issue's case: 5,000 rows per family written as CSV, TSV, CSV.gz, JSONL, Parquet with
   several row-group sizes, and shuffled, give byte-identical JSON reports (every metric,
   overall and per segment, weighted and not) on engines polars and streaming, and on Spark
   with one and with three partitions.
2. The exact sum itself: for random floats (huge, tiny, subnormal, negative, cancelling) it is
   ``math.fsum`` of the values, and any split of the values into parts gives the same bits.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evalcli.config import parse_config
from evalcli.metrics import stats
from evalcli.result import to_dict
from evalcli.runner import run_config

N = 5000
SEED = 19

# --------------------------------------------------------------------------- the data


def _binary(rng: np.random.Generator) -> pl.DataFrame:
    label = rng.integers(0, 2, N)
    score = np.clip(0.3 * label + rng.beta(2, 3, N), 0.0, 1.0)
    score[rng.random(N) < 0.1] = 0.5  # ties
    score[:40] = 1e-9  # confident, for log loss and Brier terms far below 1
    return pl.DataFrame({"label": label, "score": score,
                         "prediction": (rng.random(N) < score).astype(int)})


def _multiclass(rng: np.random.Generator) -> pl.DataFrame:
    k = 5
    label = rng.integers(0, k, N)
    raw = rng.gamma(1.0, 1.0, (N, k))
    raw[np.arange(N), label] += rng.gamma(2.0, 1.0, N)
    p = raw / raw.sum(axis=1, keepdims=True)
    return pl.DataFrame({"label": label, **{f"p_{c}": p[:, c] for c in range(k)}})


def _multilabel(rng: np.random.Generator) -> pl.DataFrame:
    names = ["a", "b", "c", "d", "e", "f"]

    def sets(p: float) -> list[str]:
        return ["|".join(x for x in names if rng.random() < p) for _ in range(N)]

    return pl.DataFrame({"label": sets(0.3), "prediction": sets(0.35)})


def _regression(rng: np.random.Generator) -> pl.DataFrame:
    y = 1e4 + rng.normal(0, 37.0, N) * rng.random(N)
    y[:10] = 0.0  # MAPE's floored denominator
    return pl.DataFrame({"label": y, "prediction": y + rng.standard_t(3, N) * 5.0})


def _ranking(rng: np.random.Generator) -> tuple[pl.DataFrame, pl.DataFrame]:
    q = np.repeat(np.arange(N // 25), 25)
    item = np.tile(np.arange(25), N // 25) + rng.integers(0, 40, N) * 100
    score = rng.random(N).round(2)  # ties
    rel = rng.integers(0, 4, N) * (rng.random(N) < 0.4)
    preds = pl.DataFrame({"query": q, "item": item, "score": score})
    truth = pl.DataFrame({"query": q, "item": item, "relevance": rel}).filter(
        pl.col("relevance") > 0)
    return preds, truth


def _with_common(df: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    """An id, a segment and non-integer weights (whose sums are not exact as floats)."""
    return df.with_columns(
        pl.Series("id", rng.permutation(df.height)),
        pl.Series("part", rng.choice(["x", "y", "z"], df.height)),
        pl.Series("w", rng.choice([0.1, 0.3, 1.7, 2.2, 0.0], df.height)
                  * rng.uniform(0.5, 1.5, df.height)),
    )


def _data() -> dict[str, tuple[pl.DataFrame, pl.DataFrame | None]]:
    rng = np.random.default_rng(SEED)
    preds, truth = _ranking(rng)
    out: dict[str, tuple[pl.DataFrame, pl.DataFrame | None]] = {
        "binary": (_with_common(_binary(rng), rng), None),
        "multiclass": (_with_common(_multiclass(rng), rng), None),
        "multilabel": (_with_common(_multilabel(rng), rng), None),
        "regression": (_with_common(_regression(rng), rng), None),
        "ranking": (_with_common(preds, rng), truth),
    }
    return out


OPTIONS: dict[str, dict[str, Any]] = {
    "multiclass": {"score_prefix": "p_"},
    "multilabel": {"delimiter": "|"},
}
METRICS: dict[str, list[Any]] = {
    # every metric the columns allow (the default set), plus parameterized ones
    "binary": [],
    "multiclass": [],
    "multilabel": [],
    "regression": [],
    "ranking": ["ndcg@10", "ndcg", "dcg@5", "map", "map@10", "mrr", "precision@10",
                "recall@10", "f1@10", "hit_rate@10", "micro_recall@10", "r_precision", "auc",
                {"metric": "ndcg@10", "ties": "id"}, "novelty@10", "catalog_coverage@10",
                "intra_list_similarity@10", "diversity@10"],
}
FAMILIES = list(METRICS)

# --------------------------------------------------------------------------- the variants


def _write(df: pl.DataFrame, folder: Path, name: str, how: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    if how.startswith("parquet"):
        path = folder / f"{name}.parquet"
        size = int(how.split(":")[1]) if ":" in how else None
        df.write_parquet(path, row_group_size=size)
    elif how == "csv":
        path = folder / f"{name}.csv"
        df.write_csv(path)
    elif how == "tsv":
        path = folder / f"{name}.tsv"
        df.write_csv(path, separator="\t")
    elif how == "csv.gz":
        path = folder / f"{name}.csv.gz"
        path.write_bytes(gzip.compress(df.write_csv().encode()))
    elif how == "jsonl":
        path = folder / f"{name}.jsonl"
        df.write_ndjson(path)
    else:  # pragma: no cover - test helper
        raise ValueError(how)
    return str(path)


def _shuffled(df: pl.DataFrame, seed: int) -> pl.DataFrame:
    return df.sample(fraction=1.0, shuffle=True, seed=seed)


# (name, format, how the rows are ordered)
VARIANTS: list[tuple[str, str, Callable[[pl.DataFrame], pl.DataFrame]]] = [
    ("parquet", "parquet", lambda df: df),
    ("parquet-rg97", "parquet:97", lambda df: df),
    ("parquet-rg1000", "parquet:1000", lambda df: df),
    ("csv", "csv", lambda df: df),
    ("tsv", "tsv", lambda df: df),
    ("csv.gz", "csv.gz", lambda df: df),
    ("jsonl", "jsonl", lambda df: df),
    ("shuffled-parquet", "parquet:333", lambda df: _shuffled(df, 1)),
    ("shuffled-csv", "csv", lambda df: _shuffled(df, 2)),
]


IN_PROCESS_ONLY = ("novelty", "catalog_coverage", "intra_list_similarity", "diversity")
"""Metrics that run on the in-process engines only (they read side files)."""


def _features(folder: Path) -> str:
    """Item feature vectors for the ranking family's intra-list similarity (a side file)."""
    rng = np.random.default_rng(SEED + 1)
    items = np.unique(_data()["ranking"][0]["item"].to_numpy())
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "features.parquet"
    pl.DataFrame({"item": items, "features": rng.normal(0, 1, (len(items), 4)).tolist()}
                 ).write_parquet(path)
    return str(path)


def _config(family: str, pred: str, truth: str | None, weighted: bool,
            spark: bool = False) -> dict[str, Any]:
    metrics = [m for m in METRICS[family]
               if not (spark and str(m).startswith(IN_PROCESS_ONLY))]
    cfg: dict[str, Any] = {"task": family, "predictions": pred, "metrics": metrics,
                           "group_by": ["part"]}
    if truth is not None:
        cfg["truth"] = truth
        cfg["alignment"] = {"unmatched": "drop"}
    if weighted:
        cfg["columns"] = {"weight": "w"}
    if family in OPTIONS:
        cfg["options"] = OPTIONS[family]
    if family == "ranking" and not spark:
        cfg["options"] = {"item_features_file": str(Path(pred).parent.parent / "features.parquet")}
    return cfg


def _canonical(report: dict[str, Any]) -> str:
    """The JSON report without what names the files or the engine, every float as its bits."""
    for side in report["inputs"].values():
        if isinstance(side, dict):
            side.pop("path", None)
    report.pop("engine", None)
    return json.dumps(report, sort_keys=True, default=repr)


def _report(cfg: dict[str, Any], base: Path, engine: str) -> str:
    result = run_config(parse_config({**cfg, "engine": engine}, "test", base), gating=False)
    return _canonical(to_dict(result))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory
          ) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(family, variant) -> the predictions path (and the truth's, for ranking)."""
    base = tmp_path_factory.mktemp("determinism")
    out = {}
    _features(base / "ranking")
    for family, (preds, truth) in _data().items():
        for name, how, order in VARIANTS:
            folder = base / family / name
            pred = _write(order(preds), folder, "predictions", how)
            tpath = _write(order(truth), folder, "truth", how) if truth is not None else None
            out[(family, name)] = (pred, tpath)
    return out


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("engine", ["polars", "streaming"])
@pytest.mark.parametrize("family", FAMILIES)
def test_same_rows_give_the_same_bits_in_every_format_and_order(
        files: dict[tuple[str, str], tuple[str, str | None]], tmp_path: Path, family: str,
        engine: str, weighted: bool) -> None:
    reports = {}
    for name, _, _ in VARIANTS:
        pred, truth = files[(family, name)]
        reports[name] = _report(_config(family, pred, truth, weighted), tmp_path, engine)
    ref = reports["parquet"]
    differ = [name for name, rep in reports.items() if rep != ref]
    assert not differ, f"{family} ({engine}): reports differ from Parquet's for {differ}: " \
        + _first_difference(json.loads(ref), json.loads(reports[differ[0]]))


def test_engines_agree_bit_for_bit(files: dict[tuple[str, str], tuple[str, str | None]],
                                   tmp_path: Path) -> None:
    for family in FAMILIES:
        for weighted in (False, True):
            pred, truth = files[(family, "csv")]
            cfg = _config(family, pred, truth, weighted)
            a, b = (_report(cfg, tmp_path, e) for e in ("polars", "streaming"))
            assert a == b, f"{family}: " + _first_difference(json.loads(a), json.loads(b))


def test_the_data_exercises_float_sums(files: dict[tuple[str, str], tuple[str, str | None]],
                                       tmp_path: Path) -> None:
    """Guard: the reports hold real values, and a plain float sum of these rows does depend
    on the order (so the test above could fail)."""
    pred, _ = files[("binary", "csv")]
    rep = json.loads(_report(_config("binary", pred, None, True), tmp_path, "polars"))
    values = {m["id"]: m["value"] for m in rep["metrics"]}
    assert 0.1 < values["log_loss"] < 2 and 0.01 < values["brier"] < 0.5
    df = pl.read_csv(pred)
    terms = (-(df["w"] * (df["label"] * df["score"].clip(1e-15, 1).log()
                          + (1 - df["label"]) * (1 - df["score"]).clip(1e-15, 1).log()))
             ).to_list()
    orders = {sum(terms), sum(reversed(terms)), sum(sorted(terms)), math.fsum(terms)}
    assert len(orders) > 1


def _first_difference(a: Any, b: Any, where: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{where}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                label = x.get("id", i) if isinstance(x, dict) else i
                return _first_difference(x, y, f"{where}[{label}]")
    return f"{where}: {a!r} != {b!r}"


# --------------------------------------------------------------------------- Spark


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """A local SparkSession (evalcli attaches to the active one)."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("evalcli-determinism")
               .config("spark.sql.shuffle.partitions", "3")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session


@pytest.mark.spark
@pytest.mark.parametrize("family", FAMILIES)
def test_spark_gives_the_same_bits_with_one_or_three_partitions(
        spark: Any, files: dict[tuple[str, str], tuple[str, str | None]], tmp_path: Path,
        family: str) -> None:
    """Spark adds per partition and combines on the driver: with one partition or three
    (and the rows in another order), the polars engine's report, bit for bit."""
    want = {w: _report(_config(family, *files[(family, "parquet-rg97")], w, spark=True),
                       tmp_path, "polars") for w in (False, True)}
    for partitions, variant, weights in (("1", "parquet-rg97", (True,)),
                                         ("3", "shuffled-csv", (False, True))):
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
        # one file is read in as many splits as its size allows: small splits, several parts
        spark.conf.set("spark.sql.files.maxPartitionBytes", "1m" if partitions == "1" else "20k")
        pred, truth = files[(family, variant)]
        for weighted in weights:
            got = _report(_config(family, pred, truth, weighted, spark=True), tmp_path, "spark")
            assert got == want[weighted], (
                f"{family} on Spark ({partitions} partitions, {variant}, weighted={weighted}): "
                + _first_difference(json.loads(want[weighted]), json.loads(got)))


# --------------------------------------------------------------------------- the exact sum

FINITE = st.floats(allow_nan=False, allow_infinity=False)
SCALED = st.builds(math.ldexp, st.floats(-1.0, 1.0), st.integers(-1074, 1023))
SUBNORMAL = st.integers(-(2**52), 2**52).map(lambda m: m * 5e-324)
ONE = st.one_of(FINITE, SCALED, SUBNORMAL, st.sampled_from(
    [0.0, -0.0, 1e308, -1e308, 1.7976931348623157e308, 0.1, 0.2, 0.3, 2.0**-1074]))
# the large values cancel (each comes with its negation), so that the small ones decide: a
# sum that rounds parts, or adds in some order, loses them
CANCELLING = st.builds(lambda big, small: [*big, *(-x for x in big), *small],
                       st.lists(ONE, max_size=15), st.lists(ONE, max_size=10))
VALUES = st.one_of(st.lists(ONE, max_size=40), CANCELLING)


def _fsum(xs: list[float]) -> float | None:
    try:
        return math.fsum(xs)
    except OverflowError:  # the exact sum is beyond float64: nothing to compare
        return None


def _parts(xs: list[float], cuts: list[int]) -> list[list[float]]:
    cuts = sorted({min(c, len(xs)) for c in cuts})
    bounds = [0, *cuts, len(xs)]
    return [xs[a:b] for a, b in itertools.pairwise(bounds)]


GRIDS = [{}, {"top": None}, {"top": 62, "limbs": 4}, {"top": 0, "limbs": 1},
         {"top": -40, "limbs": 2}]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VALUES, st.lists(st.integers(0, 40), max_size=4), st.sampled_from(GRIDS),
       st.sampled_from(["plain", "staged", "inline"]), st.randoms(use_true_random=False))
@example([1e300, 1.0, -1e300], [1], {}, "plain", random.Random(0))
@example([0.1] * 10 + [-1.0, 2.0**-1074], [3, 7], {"top": None}, "staged", random.Random(1))
@example([1e300, 0.1, -1e300, 2.0**-1074], [2], {"top": 0, "limbs": 1}, "inline",
         random.Random(2))
def test_exact_sum_is_fsum_whatever_the_split(xs: list[float], cuts: list[int],
                                              grid: dict[str, Any], staged: str,
                                              rnd: Any) -> None:
    want = _fsum(xs)
    if want is None:
        return
    if grid.get("top", 6) is None and staged != "plain" and any(abs(x) > 2.0**1021 for x in xs):
        return  # a sum placed at the data holds values up to 2^1021 (documented)
    if grid.get("top", 6) is None and staged == "inline":
        return  # (a statistic stages its own sums on a fixed grid only)
    shuffled = list(xs)
    rnd.shuffle(shuffled)
    rows = []
    for part in _parts(shuffled, cuts):
        lf = pl.LazyFrame({"x": part}, schema={"x": pl.Float64})
        if staged == "staged":  # as the engine runs them: row-level steps as columns, values
            with stats.staged() as s:  # aside fetched
                aggs = stats.exact_sum(pl.col("x"), "s", **grid)
            rows.append(s.collect(lf, aggs).row(0, named=True))
        elif staged == "inline":  # as a statistic stages its own: values aside listed
            with stats.staged(inline_aside=True) as s:
                aggs = stats.exact_sum(pl.col("x"), "s", **grid)
            rows.append(s.apply(lf).select(aggs).collect().row(0, named=True))
        else:
            aggs = stats.exact_sum(pl.col("x"), "s", **grid)
            rows.append(lf.select(aggs).collect().row(0, named=True))
    got = stats.exact_value(rows, "s")
    assert got == want, (got, want)
    # the same through the combine op the engines use
    merged = stats.combine_columns(pl.DataFrame(rows), [], {"s": "exact_sum"})
    assert merged["s"][0] == got


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.lists(st.tuples(st.integers(0, 3), ONE), max_size=60),
                 CANCELLING.map(lambda xs: [(i % 3, x) for i, x in enumerate(xs)])),
       st.lists(st.integers(0, 60), max_size=3), st.sampled_from(GRIDS))
def test_exact_sum_per_group_and_tables_whatever_the_split(
        rows: list[tuple[int, float]], cuts: list[int], grid: dict[str, Any]) -> None:
    keys, xs = [g for g, _ in rows], [x for _, x in rows]
    df = pl.DataFrame({"g": keys, "x": xs}, schema={"g": pl.Int64, "x": pl.Float64})
    want = {g: _fsum([x for k, x in rows if k == g]) for g in set(keys)}
    if not rows or any(v is None for v in want.values()):
        return
    tables = []
    for split in (cuts, []):
        bounds = [0, *sorted({min(c, df.height) for c in split}), df.height]
        parts = [df[a:b] for a, b in itertools.pairwise(bounds)]
        partial = pl.concat([p.group_by("g").agg(stats.exact_sum(pl.col("x"), "s", **grid))
                             for p in parts])
        combined = stats.combine_columns(partial, ["g"], {"s": "exact_sum"})
        assert dict(combined.iter_rows()) == want
        if grid.get("top", 6) is not None:  # tables keep one grid (a static top)
            tables.append(stats.sum_by(partial, [], ["g"]).sort("g"))
    if tables:
        assert tables[0].equals(tables[1])  # the vectorized value: the same bits per split


@pytest.mark.parametrize(("label", "prediction", "weight"), [
    ([0.0, 0.0], [1.32, 0.0], [0.5, 0.0]),  # found by hypothesis: one row carries weight
    ([3.0, 3.0, 3.0], [3.1, 3.1, 3.1], [1.0, 0.7, 2.3]),
    ([1e9, 1e9], [1e9 + 0.3, 1e9 + 0.3], [1.0, 1.0]),
])
def test_a_constant_error_has_no_variance(label, prediction, weight):
    """Var(e) comes from rounded per-row squares, so a constant error could leave a residue
    that flips scikit-learn's force_finite rule on a constant target (1.0 becomes 0.0)."""
    from sklearn.metrics import explained_variance_score

    import evalcli

    got = evalcli.evaluate(
        {"task": "regression", "metrics": ["explained_variance"], "columns": {"weight": "w"}},
        predictions={"label": label, "prediction": prediction, "w": weight}).values()
    assert got["explained_variance"] == explained_variance_score(
        label, prediction, sample_weight=weight) == 1.0


def test_sums_beyond_the_float_range_do_not_crash():
    """Found by the fuzz battery: errors of 2.3e154 square beyond the float range; the exact
    moments then overflowed converting back (an internal error, exit 3). The moments fall
    back to float arithmetic: the other metrics keep their values."""
    from sklearn.metrics import max_error, mean_absolute_error

    import evalcli

    label, prediction = [0.0, 0.0, 0.0], [0.0, 0.0, 2.3223004552785474e154]
    got = evalcli.evaluate({"task": "regression", "metrics": ["mse", "mae", "max_error"]},
                           predictions={"label": label, "prediction": prediction}).values()
    assert got["mae"] == mean_absolute_error(label, prediction)
    assert got["max_error"] == max_error(label, prediction)
    assert got["mse"] is None or got["mse"] == float("inf")


@pytest.mark.parametrize("engine", ["polars", "streaming"])
def test_a_quotient_is_correctly_rounded_on_every_engine(engine: str) -> None:
    """7 hits in the top 10 is precision 0.7, not 7 x (1/10) = 0.7000000000000001 (Polars 2.1
    divides a column by a scalar through its reciprocal on one engine only); a ROC point at 3
    false positives of 5 is 0.6."""
    from evalcli import evaluate
    from evalcli.metrics.binary.extras import roc_points

    items = [f"i{j}" for j in range(10)]
    r = evaluate({"task": "ranking", "metrics": ["precision@10"], "engine": engine},
                 predictions={"query": [1], "item": [items]},
                 truth={"query": [1] * 7, "item": items[:7]})
    assert r.values()["precision@10"] == 0.7
    counts = pl.DataFrame({"score": [0.9, 0.8, 0.7], "pos": [1.0, 0.0, 4.0],
                           "neg": [0.0, 3.0, 2.0]})
    pts = roc_points(counts)
    assert pts is not None
    assert pts["fpr"].to_list() == [0.0, 0.0, 0.6, 1.0]
    assert pts["tpr"].to_list() == [0.0, 0.2, 0.2, 1.0]
