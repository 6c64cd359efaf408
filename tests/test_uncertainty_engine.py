"""The intervals the engine computes (issue 13 §1, §4), checked against an independent bootstrap.

The reference here is written from the definition, not from evalcli's code path: the units'
random groups from :func:`evalcli.uncertainty.groups.unit_group` (the documented hash), the
replicate weights from :func:`~evalcli.uncertainty.groups.replicate_weights` over the groups
present, each replicate's metric from scikit-learn with every row weighted by how often its group
was drawn, and the percentile bounds from ``numpy.quantile``. Then: the same bounds from every
input format, row order and engine; coverage of the 95% intervals on simulated data with a
known truth (a proportion, AUROC, a ranking mean, clustered rows with the right and the wrong
unit); and the errors a user can make.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from scipy import stats
from sklearn import metrics as skm
from statsmodels.stats.proportion import proportion_confint

from evalcli import evaluate
from evalcli.engine.resample import DRAWS
from evalcli.uncertainty.groups import mix_int, replicate_weights, unit_group
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
R = 1000


def row_weights(ids: pl.Series, seed: int = 0, groups: int = 1000,
                replicates: int = R) -> np.ndarray:
    """(replicates x rows): how often each row's group is drawn in each replicate."""
    g = pl.DataFrame({"u": ids}).select(unit_group(pl.col("u"), ids.dtype, groups, seed)
                                        )["u"].to_numpy().astype(np.int64)
    present = np.unique(g)
    w = replicate_weights(present.size, replicates, seed=mix_int(seed ^ DRAWS))
    return w[:, np.searchsorted(present, g)].astype(float)


def bounds(reps: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def binary_data(n: int = 400, seed: int = 1, weights: bool = False) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(np.clip(0.3 * y + rng.uniform(0, 0.7, n), 0.001, 0.999), 3)  # ties
    cols: dict[str, Any] = {"id": rng.permutation(n) + 1000, "label": y, "score": s,
                            "region": rng.choice(["eu", "us"], n)}
    if weights:
        cols["w"] = rng.uniform(0.2, 3.0, n)
    return pl.DataFrame(cols)


def ci_of(result: Any, id_: str) -> tuple[float, float]:
    m = result.metric(id_)
    assert m.ci is not None and m.ci.defined, (id_, m.ci)
    return m.ci.low, m.ci.high


# --------------------------------------------------------------------------- reference bootstrap

@pytest.mark.parametrize("weighted", [False, True])
def test_binary_bootstrap_equals_a_weighted_sklearn_bootstrap(weighted: bool) -> None:
    df = binary_data(weights=weighted)
    truth, pred = df.select("id", "label"), df.select("id", "score", *(["w"] if weighted
                                                                       else []))
    cfg = {"task": "binary", "metrics": ["accuracy", "precision", "auroc", "log_loss", "f1"],
           "uncertainty": {"method": "bootstrap"},
           **({"columns": {"weight": "w"}} if weighted else {})}
    r = evaluate(cfg, predictions=pred, truth=truth)
    w = row_weights(df["id"])
    if weighted:
        w = w * df["w"].to_numpy()[None, :]
    y, s = df["label"].to_numpy(), df["score"].to_numpy()
    hard = (s >= 0.5).astype(int)
    refs: dict[str, Callable[[np.ndarray], float]] = {
        "accuracy": lambda sw: skm.accuracy_score(y, hard, sample_weight=sw),
        "precision": lambda sw: skm.precision_score(y, hard, sample_weight=sw, zero_division=0),
        "auroc": lambda sw: skm.roc_auc_score(y, s, sample_weight=sw),
        "log_loss": lambda sw: skm.log_loss(y, s, sample_weight=sw),
        "f1": lambda sw: skm.f1_score(y, hard, sample_weight=sw, zero_division=0),
    }
    for id_, fn in refs.items():
        keep = [i for i in range(R) if w[i].sum() > 0]
        reps = np.array([fn(w[i]) for i in keep])
        lo, hi = bounds(reps)
        got = ci_of(r, id_)
        assert got[0] == pytest.approx(lo, abs=1e-9), id_
        assert got[1] == pytest.approx(hi, abs=1e-9), id_
        assert r.metric(id_).ci.std_error == pytest.approx(reps.std(ddof=1), rel=1e-6)


@pytest.mark.parametrize("weighted", [False, True])
def test_binary_score_table_rounded_in_the_pass_or_by_the_driver_alike(monkeypatch,
                                                                       weighted: bool) -> None:
    """The per-group table of scores is rounded in the pass when the estimated number of
    distinct scores is well above the threshold, else by the driver: the same intervals either
    way (here 2,300 distinct scores, between the threshold and the estimate's margin)."""
    from evalcli.metrics.binary import stats as bstats
    from evalcli.metrics.stats import COARSE_ABOVE

    rng = np.random.default_rng(4)
    n = 6000
    grid = rng.random(2300)
    score = grid[rng.integers(0, grid.size, n)]
    label = (rng.random(n) < score).astype(int)
    df = pl.DataFrame({"id": np.arange(n), "label": label, "score": score,
                       "w": rng.integers(1, 4, n).astype(float)})
    assert COARSE_ABOVE < df["score"].n_unique() < COARSE_ABOVE * bstats.APPROX_MARGIN
    cfg = {"task": "binary", "metrics": ["auroc", "average_precision", "peak_f1"],
           "uncertainty": {"method": "bootstrap", "replicates": 300},
           **({"columns": {"weight": "w"}} if weighted else {})}
    got = {}
    for margin in (0.0, 1e9):  # the pass rounds; the driver rounds
        monkeypatch.setattr(bstats, "APPROX_MARGIN", margin)
        r = evaluate(cfg, predictions=df, gating=False)
        got[margin] = [(m.value, m.ci) for m in r.metrics]
    assert got[0.0] == got[1e9]
    assert all(ci is not None and ci.low is not None for _, ci in got[0.0])


def test_coarse_grid_is_the_rounding_to_seven_significant_bits() -> None:
    """``coarse`` rounds on the float's bits; the reference is the arithmetic definition
    (``round(x / 2^(floor(log2 |x|) - 7)) * step``, ties to even) in NumPy. Equal over the
    normal range, monotone, and the special values kept."""
    from evalcli.metrics.stats import coarse

    rng = np.random.default_rng(5)
    x = np.concatenate([rng.random(20_000), -rng.random(5_000) * 1e5,
                        rng.normal(0, 1e-200, 5_000), 2.0 ** rng.integers(-60, 60, 1_000),
                        (129 + 0.5 + np.arange(0, 126, 2)) / 128,  # exact ties, both ways
                        np.array([1.0 - 2**-53, 2.0**-1022, 1.7976931348623157e308])])
    got = pl.DataFrame({"x": x}).select(coarse(pl.col("x"))).to_series().to_numpy()
    step = 2.0 ** (np.floor(np.log2(np.abs(x))) - 7)
    with np.errstate(over="ignore"):
        want = np.round(x / step) * step
    assert np.array_equal(got, want)
    order = np.argsort(x, kind="stable")
    assert (np.diff(got[order]) >= 0).all()
    special = pl.DataFrame({"x": [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 5e-324]})
    out = special.select(coarse(pl.col("x"))).to_series().to_list()
    assert out[:4] == [0.0, 0.0, float("inf"), -float("inf")]
    assert np.isnan(out[4]) and 0.0 <= out[5] <= 5e-324
    assert str(np.float64(out[1])) == "0.0"  # -0.0 is +0.0: one zero in the tables


def test_regression_bootstrap_equals_sklearn() -> None:
    rng = np.random.default_rng(4)
    n = 300
    y = rng.normal(10, 3, n)
    df = pl.DataFrame({"id": np.arange(n), "label": y, "prediction": y + rng.normal(0, 2, n)})
    r = evaluate({"task": "regression", "metrics": ["rmse", "mae", "r2", "max_error"],
                  "uncertainty": {}}, predictions=df)
    # one file without ids: the unit is the row's place in the file
    w = row_weights(pl.Series("u", np.arange(n), dtype=pl.UInt32))
    yh = df["prediction"].to_numpy()
    refs = {"rmse": lambda sw: np.sqrt(skm.mean_squared_error(y, yh, sample_weight=sw)),
            "mae": lambda sw: skm.mean_absolute_error(y, yh, sample_weight=sw),
            "r2": lambda sw: skm.r2_score(y, yh, sample_weight=sw),
            "max_error": lambda sw: float(np.abs(y - yh)[sw > 0].max())}
    for id_, fn in refs.items():
        lo, hi = bounds(np.array([fn(w[i]) for i in range(R)]))
        got = ci_of(r, id_)
        assert got == pytest.approx((lo, hi), abs=1e-9), id_


def test_segment_bootstrap_uses_the_whole_runs_draws() -> None:
    df = binary_data(seed=2)
    r = evaluate({"task": "binary", "metrics": ["log_loss"], "group_by": ["region"],
                  "uncertainty": {}}, predictions=df.select("id", "score", "region"),
                 truth=df.select("id", "label"))
    w = row_weights(df["id"])
    for seg in r.segments:
        mask = (df["region"] == seg.key["region"]).to_numpy()
        y, s = df["label"].to_numpy()[mask], df["score"].to_numpy()[mask]
        reps = np.array([skm.log_loss(y, s, sample_weight=w[i, mask]) for i in range(R)
                         if w[i, mask].sum() > 0])
        m = seg.metrics[0]
        assert (m.ci.low, m.ci.high) == pytest.approx(bounds(reps), abs=1e-9)


def test_segment_replicates_only_for_the_metrics_the_bootstrap_is_for(monkeypatch) -> None:
    """A segment's replicates are computed for the metrics without a closed form only: a
    metric with one (AUROC: DeLong) is not evaluated once per replicate and segment for
    nothing (100 segments and 21 metrics, one of them bootstrapped: 40 s, now 5 s). The
    intervals are those of each metric alone."""
    from dataclasses import replace

    from evalcli.metrics.registry import get_registry

    registry = get_registry()
    key = next(k for k, m in registry.metrics.items() if m.name == "auroc"
               and m.family == "binary")
    calls = [0]
    real = registry.metrics[key].value

    def counted(stats: Any, params: Any) -> Any:
        calls[0] += 1
        return real(stats, params)

    df = binary_data(seed=3).with_columns(
        pl.Series("region", [f"r{i % 8}" for i in range(400)]))
    cfg: dict[str, Any] = {"task": "binary", "group_by": ["region"],
                           "uncertainty": {"replicates": 200}}
    inputs = {"predictions": df.select("id", "score", "region"), "truth": df.select("id", "label")}
    alone = {m: evaluate({**cfg, "metrics": [m]}, **inputs) for m in ("auroc", "log_loss")}
    monkeypatch.setitem(registry.metrics, key, replace(registry.metrics[key], value=counted))
    both = evaluate({**cfg, "metrics": ["auroc", "log_loss"]}, **inputs)
    assert calls[0] < 2 * 201  # the whole run's replicates, not 8 segments' more
    for seg, *singles in zip(both.segments, alone["auroc"].segments,
                             alone["log_loss"].segments, strict=True):
        for m, single in zip(seg.metrics, singles, strict=True):
            assert m.ci is not None and m.ci.defined
            assert (m.ci.low, m.ci.high, m.ci.method) == (
                single.metrics[0].ci.low, single.metrics[0].ci.high, single.metrics[0].ci.method)


def test_a_multiclass_score_table_is_binned_to_a_bounded_size(monkeypatch) -> None:
    """Per-class scores (tables keyed by class, true class or whether it is the class, and
    score) are merged into bins for the replicates, so a replicate's table stays within about
    KEYS rows instead of growing with the data (2 x 10^4 rows of 5 classes took 5 GB and
    23 s, then 1 GB and 5 s). One-vs-one's table (class, true class) merges consecutive
    scores: its intervals stay those of the exact tables up to the binning (the replicates
    are shifted by the point value's binning error), and say so. The one-vs-rest table keeps
    each class's ranking of its rows against the others' (here: every class has fewer
    distinct scores than its bins): AUROC's and average precision's intervals are the exact
    tables', with no note."""
    from evalcli.engine import resample

    rng = np.random.default_rng(21)
    n, k = 3000, 4
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += 1.2
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    df = pl.DataFrame({"id": np.arange(n), "label": y,
                       **{f"p_{c}": p[:, c] for c in range(k)}})
    cfg: dict[str, Any] = {"task": "multiclass", "options": {"score_prefix": "p_"},
                           "metrics": ["auroc", "average_precision",
                                       {"metric": "auroc", "multi_class": "ovo"}],
                           "uncertainty": {"replicates": 300}}
    sizes: list[int] = []
    real = resample._stacked

    def spy(*args: Any) -> Any:
        got = real(*args)
        sizes.append(0 if got is None else got.array.shape[1])
        return got

    monkeypatch.setattr(resample, "_stacked", spy)
    binned = evaluate(cfg, predictions=df)
    assert 0 < max(sizes) <= resample.KEYS
    sizes.clear()
    monkeypatch.setattr(resample, "KEYS", 10**9)
    exact = evaluate(cfg, predictions=df)
    assert max(sizes) > 4 * resample.BINS  # (every distinct score: n x k rows)
    for b, e in zip(binned.metrics, exact.metrics, strict=True):
        assert b.value == e.value and b.ci is not None and e.ci is not None
        assert "binned" not in (e.ci.note or "")
        if b.params.get("multi_class") == "ovo":
            assert "binned" in (b.ci.note or "")
            assert (b.ci.low, b.ci.high) == pytest.approx((e.ci.low, e.ci.high), abs=2e-3)
        else:
            assert "binned" not in (b.ci.note or ""), b.id
            assert (b.ci.low, b.ci.high) == pytest.approx((e.ci.low, e.ci.high), abs=1e-12)


def test_quantile_calibration_of_a_segment_a_replicate_leaves_empty() -> None:
    """ECE and MCE with quantile bins, for a segment of one row and one of zero-weight rows
    only: a replicate that draws none of a segment's rows (or only zero weights) has no
    bins, so no value; it crashed (exit 3) on the empty quantile edges before. Point values
    stay those of the segment's rows."""
    df = binary_data(seed=8, weights=True).with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("one"))
        .when(pl.int_range(pl.len()) < 6).then(pl.lit("weightless"))
        .otherwise(pl.col("region")).alias("part"),
        pl.when((pl.int_range(pl.len()) > 0) & (pl.int_range(pl.len()) < 6)).then(0.0)
        .otherwise(pl.col("w")).alias("w"))
    r = evaluate({"task": "binary", "group_by": ["part"],
                  "metrics": [{"metric": "ece", "strategy": "quantile"},
                              {"metric": "mce", "strategy": "quantile", "bins": 5}],
                  "uncertainty": {"method": "bootstrap", "replicates": 200},
                  "columns": {"weight": "w"}},
                 predictions=df.select("id", "score", "part", "w"),
                 truth=df.select("id", "label"))
    segs = {s.key["part"]: s for s in r.segments}
    one = df.row(0, named=True)
    gap = abs(one["label"] - one["score"])
    assert [m.value for m in segs["one"].metrics] == [pytest.approx(gap, abs=1e-12)] * 2
    assert all(m.ci is not None and not m.ci.defined and m.ci.reason
               for m in segs["one"].metrics)
    assert all(m.value is None for m in segs["weightless"].metrics)
    for key in ("eu", "us"):
        assert all(m.ci is not None and m.ci.defined for m in segs[key].metrics)


def test_a_segments_replicate_sums_use_the_columns_of_its_groups_only() -> None:
    """A segment's sums over the groups each replicate draws multiply only the weights of the
    groups its rows hold (not every group of the run with zeros for the others: 100 segments
    of 10 queries and 627 groups made each product 60 times larger, and under load spun
    BLAS threads: 39 s instead of 5). Equal to the full product up to rounding; the whole
    run, which holds every group, uses the weights themselves."""
    from evalcli.engine.resample import _held

    rng = np.random.default_rng(5)
    weights = rng.multinomial(40, np.full(40, 1 / 40), size=50).astype(np.float64)
    g_pos = np.array([12, 3, 7, 7, 39])
    w, local = _held(weights, g_pos)
    assert w.shape == (50, 4) and (w[:, local] == weights[:, g_pos]).all()
    x = rng.normal(size=g_pos.size)
    full = np.zeros(40)
    np.add.at(full, g_pos, x)
    assert np.allclose(w @ np.bincount(local, weights=x, minlength=4), weights @ full,
                       rtol=1e-13, atol=0)
    every, same = _held(weights, np.arange(40)[::-1])
    assert every is weights and (same == np.arange(40)[::-1]).all()
    assert _held(weights, np.array([], dtype=np.int64))[0].shape == (50, 0)


def test_ratio_metrics_replicates_are_divided_as_arrays(monkeypatch) -> None:
    """A mean over queries (Metric.ratio) divides its replicates' sums as arrays: its value
    is not called once per replicate and segment (21 metrics, 100 segments: 2 million calls,
    36 s, now 3 s), and its intervals are those of the value called per replicate, bit for
    bit, micro recall's (Σ hits / Σ R) and a count's (a total, no divisor) included."""
    from dataclasses import replace

    from evalcli.metrics.registry import get_registry

    rng = np.random.default_rng(12)
    q, k = 90, 12
    truth = pl.DataFrame({"query": np.repeat(np.arange(q), k), "item": np.tile(np.arange(k), q),
                          "relevance": rng.integers(0, 3, q * k) * (np.arange(q * k) % 7 > 0)})
    run = truth.select("query", "item").with_columns(
        score=pl.Series(truth["relevance"].to_numpy() + rng.normal(0, 1.5, q * k)),
        seg=pl.Series([f"s{i // k % 6}" for i in range(q * k)]))
    cfg: dict[str, Any] = {"task": "ranking", "group_by": ["seg"],
                           "metrics": ["ndcg@5", "map", "micro_recall", "r_precision", "auc",
                                       "num_rel_ret"],
                           "uncertainty": {"method": "bootstrap", "replicates": 150}}
    registry = get_registry()
    names = ("ndcg", "map", "micro_recall", "r_precision", "auc", "num_rel_ret")
    keys = [key for key, m in registry.metrics.items()
            if m.family == "ranking" and m.name in names]
    assert len(keys) == len(names) and all(registry.metrics[key].ratio for key in keys)
    calls = [0]

    def counting(real: Any) -> Any:
        def value(stats: Any, params: Any) -> Any:
            calls[0] += 1
            return real(stats, params)
        return value

    for key in keys:
        m = registry.metrics[key]
        monkeypatch.setitem(registry.metrics, key, replace(m, value=counting(m.value)))
    arrays = evaluate(cfg, predictions=run, truth=truth)
    assert calls[0] < 6 * 7 * 2  # the point values (overall and 6 segments), no replicate
    for key in keys:  # the same metrics, each replicate through value
        monkeypatch.setitem(registry.metrics, key, replace(registry.metrics[key], ratio=None))
    each = evaluate(cfg, predictions=run, truth=truth)
    assert calls[0] > 6 * 7 * 150
    for got, want in zip([arrays, *arrays.segments], [each, *each.segments], strict=True):
        for m, w in zip(got.metrics, want.metrics, strict=True):
            assert m.ci is not None and m.ci.defined, m.id
            assert (m.ci.low, m.ci.high, m.ci.std_error, m.ci.mc_error) == (
                w.ci.low, w.ci.high, w.ci.std_error, w.ci.mc_error), m.id


def test_ranking_t_interval_and_bootstrap(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    q, k = 60, 15
    truth = pl.DataFrame({"query": np.repeat(np.arange(q), k), "item": np.tile(np.arange(k), q),
                          "relevance": rng.integers(0, 3, q * k)})
    run = truth.select("query", "item").with_columns(
        score=pl.Series(truth["relevance"].to_numpy() + rng.normal(0, 1.2, q * k)))
    cfg: dict[str, Any] = {"task": "ranking", "metrics": ["ndcg@10", "mrr"],
                           "per_query": str(tmp_path / "pq.parquet")}
    auto = evaluate({**cfg, "uncertainty": {}}, predictions=run, truth=truth)
    pq = pl.read_parquet(tmp_path / "pq.parquet").sort("query")
    for id_ in ("ndcg@10", "mrr"):
        v = pq[id_].to_numpy()
        lo, hi = stats.t.interval(0.95, v.size - 1, loc=v.mean(), scale=stats.sem(v))
        m = auto.metric(id_)
        assert m.ci.method == "t"
        assert (m.ci.low, m.ci.high) == pytest.approx((lo, min(hi, 1.0)), abs=1e-12)
    boot = evaluate({**cfg, "uncertainty": {"method": "bootstrap"}}, predictions=run,
                    truth=truth)
    w = row_weights(pq["query"])
    for id_ in ("ndcg@10", "mrr"):
        v = pq[id_].to_numpy()
        reps = (w @ v) / w.sum(axis=1)
        assert ci_of(boot, id_) == pytest.approx(bounds(reps), abs=1e-9)


def test_wilson_and_delong_closed_forms() -> None:
    df = binary_data(seed=6)
    r = evaluate({"task": "binary", "metrics": ["accuracy", "recall", "auroc"],
                  "uncertainty": {"level": 0.9}},
                 predictions=df.select("id", "score"), truth=df.select("id", "label"))
    y, s = df["label"].to_numpy(), df["score"].to_numpy()
    hard = s >= 0.5
    lo, hi = proportion_confint(int((hard == y).sum()), y.size, alpha=0.1, method="wilson")
    assert r.metric("accuracy").ci.method == "wilson"
    assert ci_of(r, "accuracy") == pytest.approx((lo, hi), abs=1e-12)
    lo, hi = proportion_confint(int((hard & (y == 1)).sum()), int(y.sum()), alpha=0.1,
                                method="wilson")
    assert ci_of(r, "recall") == pytest.approx((lo, hi), abs=1e-12)
    from evalcli.uncertainty.intervals import delong_interval

    ref = delong_interval(s[y == 1], s[y == 0], 0.9)
    assert r.metric("auroc").ci.method == "delong"
    assert ci_of(r, "auroc") == pytest.approx((ref.low, ref.high), abs=1e-12)


# --------------------------------------------------------------------------- determinism

def _bounds_of(cli: Cli, config: Path, *args: str) -> list[tuple[str, Any, Any]]:
    r = cli("run", str(config), "-f", "json", *args)
    assert r.exit_code == 0, r.stderr
    return [(m["id"], m["ci"]["low"], m["ci"]["high"]) for m in json.loads(r.stdout)["metrics"]]


def test_same_intervals_from_every_format_order_and_engine(cli: Cli, tmp_path: Path) -> None:
    df = binary_data(n=3000, seed=8)  # more distinct scores than the bins: binned replicates
    df = df.with_columns(pl.col("score") + pl.Series(np.arange(3000) * 1e-7))
    df.select("id", "label").write_csv(tmp_path / "t.csv")
    df.select("id", "score").write_csv(tmp_path / "p.csv")
    df.select("id", "score").sample(fraction=1.0, shuffle=True, seed=3).write_parquet(
        tmp_path / "p.parquet", row_group_size=700)
    base = ("task: binary\ntruth: t.csv\nmetrics: [accuracy, auroc, average_precision, "
            "log_loss, brier]\nuncertainty: {method: bootstrap, replicates: 400}\n")
    (tmp_path / "csv.yaml").write_text("predictions: p.csv\n" + base)
    (tmp_path / "pq.yaml").write_text("predictions: p.parquet\n" + base)
    ref = _bounds_of(cli, tmp_path / "csv.yaml")
    assert _bounds_of(cli, tmp_path / "pq.yaml") == ref
    assert _bounds_of(cli, tmp_path / "csv.yaml", "--engine", "streaming") == ref
    other = _bounds_of(cli, tmp_path / "csv.yaml", "--seed", "1")
    assert other != ref and [x[0] for x in other] == [x[0] for x in ref]


def test_same_intervals_on_spark(cli: Cli, tmp_path: Path) -> None:
    # more distinct scores than the bootstrap's grid keeps exact: the single-part engines round
    # them in the pass, Spark's partitions cannot tell and the driver rounds them, alike
    df = binary_data(n=3000, seed=12)
    df = df.with_columns(pl.col("score") + pl.Series(np.arange(3000) * 1e-7))
    df.select("id", "label").write_csv(tmp_path / "t.csv")
    df.select("id", "score").write_csv(tmp_path / "p.csv")
    (tmp_path / "c.yaml").write_text(
        "task: binary\npredictions: p.csv\ntruth: t.csv\nmetrics: [accuracy, auroc, "
        "average_precision, log_loss]\nuncertainty: {method: bootstrap, replicates: 300}\n"
        "spark: {master: 'local[2]', conf: {spark.sql.shuffle.partitions: 3}}\n")
    ref = _bounds_of(cli, tmp_path / "c.yaml")
    assert _bounds_of(cli, tmp_path / "c.yaml", "--engine", "spark") == ref


# --------------------------------------------------------------------------- coverage

def _coverage(hits: list[bool]) -> float:
    return sum(hits) / len(hits)


TOL = (0.915, 0.985)
"""Over 200 simulated sets a 95% interval's coverage has a binomial standard deviation of 1.5
points: 91.5-98.5% is about ±2.3 standard deviations."""


def test_coverage_proportion_auroc_and_ranking_mean() -> None:
    rng = np.random.default_rng(2026)
    sets = 200
    acc_hits, auc_hits, boot_hits, mean_hits = [], [], [], []
    for _ in range(sets):
        n = 150
        y = rng.integers(0, 2, n)
        # binormal scores with a known AUROC: Phi(d / sqrt(2)) for a shift d
        d = 1.0
        s = rng.normal(0, 1, n) + d * y
        true_auc = stats.norm.cdf(d / np.sqrt(2))
        hard_p = 0.8  # each row right with probability 0.8: accuracy's truth
        pred = np.where(rng.uniform(0, 1, n) < hard_p, y, 1 - y)
        df = pl.DataFrame({"label": y, "score": s, "prediction": pred})
        r = evaluate({"task": "binary", "metrics": ["accuracy", "auroc"],
                      "uncertainty": {"replicates": 200}}, predictions=df)
        lo, hi = ci_of(r, "accuracy")
        acc_hits.append(lo <= hard_p <= hi)
        lo, hi = ci_of(r, "auroc")
        auc_hits.append(lo <= true_auc <= hi)
        rb = evaluate({"task": "binary", "metrics": ["auroc"],
                       "uncertainty": {"replicates": 200, "method": "bootstrap",
                                       "seed": int(rng.integers(1 << 30))}}, predictions=df)
        lo, hi = ci_of(rb, "auroc")
        boot_hits.append(lo <= true_auc <= hi)
    for name, hits in (("accuracy (wilson)", acc_hits), ("auroc (delong)", auc_hits),
                       ("auroc (bootstrap)", boot_hits)):
        assert TOL[0] <= _coverage(hits) <= TOL[1], (name, _coverage(hits))
    # a ranking mean: per-query values of known mean: the top item is relevant with p = 0.6
    # (the second item always is, so that every query has a relevant item and counts)
    for _ in range(sets):
        q = 80
        rel = (rng.uniform(0, 1, q) < 0.6).astype(int)
        truth = pl.DataFrame({"query": np.repeat(np.arange(q), 2),
                              "item": np.tile([0, 1], q),
                              "relevance": np.column_stack([rel, np.ones(q, int)]).ravel()})
        run = truth.select("query", "item").with_columns(
            score=pl.when(pl.col("item") == 0).then(1.0).otherwise(0.5))
        r = evaluate({"task": "ranking", "metrics": ["hit_rate@1"], "uncertainty": {}},
                     predictions=run, truth=truth)
        m = r.metric("hit_rate@1")
        mean_hits.append(m.ci.low <= 0.6 <= m.ci.high)
    assert TOL[0] <= _coverage(mean_hits) <= TOL[1], _coverage(mean_hits)


def test_coverage_clustered_rows_needs_the_unit() -> None:
    """Rows of one user share the user's skill: resampling users covers, resampling rows
    is far too narrow."""
    rng = np.random.default_rng(77)
    right, wrong = [], []
    for _ in range(120):
        users, per = 40, 25
        skill = np.clip(rng.normal(0.75, 0.15, users), 0.05, 0.99)
        p = np.repeat(skill, per)
        correct = rng.uniform(0, 1, users * per) < p
        y = rng.integers(0, 2, users * per)
        df = pl.DataFrame({"user": np.repeat(np.arange(users), per), "label": y,
                           "prediction": np.where(correct, y, 1 - y)})
        truth = 0.75  # E[skill] (the clip moves it by less than 1e-4)
        for unit, hits in (("user", right), ("rows", wrong)):
            r = evaluate({"task": "binary", "metrics": ["accuracy"],
                          "uncertainty": {"unit": unit, "replicates": 200}}, predictions=df)
            lo, hi = ci_of(r, "accuracy")
            hits.append(lo <= truth <= hi)
    assert 0.88 <= _coverage(right) <= 0.99, _coverage(right)
    assert _coverage(wrong) < 0.75, _coverage(wrong)


# --------------------------------------------------------------------------- BCa, errors

def test_bca_differs_from_percentile_on_skewed_data() -> None:
    rng = np.random.default_rng(3)
    n = 200
    y = rng.exponential(1.0, n) ** 2
    df = pl.DataFrame({"label": y, "prediction": np.zeros(n)})
    pct = evaluate({"task": "regression", "metrics": ["mse"],
                    "uncertainty": {"method": "bootstrap"}}, predictions=df).metric("mse").ci
    bca = evaluate({"task": "regression", "metrics": ["mse"],
                    "uncertainty": {"method": "bca"}}, predictions=df).metric("mse").ci
    assert bca.method == "bca" and bca.defined and pct.defined
    assert bca.high > pct.high  # right-skewed: BCa moves the interval up


@pytest.mark.parametrize(("text", "args", "pattern"), [
    ("uncertainty: {unit: nosuch}\n", (), "unit column 'nosuch' is in neither input"),
    ("", ("--ci-level", "1.5"), "--ci-level"),
    ("", ("--replicates", "5"), "--replicates"),
])
def test_user_errors(cli: Cli, tmp_path: Path, text: str, args: tuple[str, ...],
                     pattern: str) -> None:
    binary_data().write_csv(tmp_path / "d.csv")
    (tmp_path / "c.yaml").write_text("task: binary\npredictions: d.csv\nmetrics: [auroc]\n"
                                     + text)
    r = cli("run", str(tmp_path / "c.yaml"), *args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and pattern in " ".join(r.stderr.split())


def test_ranking_unit_errors(cli: Cli, tmp_path: Path) -> None:
    truth = pl.DataFrame({"query": [1, 1, 2, 2], "item": [1, 2, 1, 2], "relevance": [1, 0, 0, 1],
                          "user": ["a", "b", "c", "c"]})
    truth.write_csv(tmp_path / "t.csv")
    truth.select("query", "item", score=pl.lit(0.5)).write_csv(tmp_path / "p.csv")
    base = "task: ranking\npredictions: p.csv\ntruth: t.csv\nmetrics: [mrr]\n"
    (tmp_path / "a.yaml").write_text(base + "uncertainty: {unit: user}\n")
    r = cli("run", str(tmp_path / "a.yaml"))
    assert r.exit_code == 2 and "rows of one query hold 2 values of 'user'" in \
        " ".join(r.stderr.split())
    (tmp_path / "b.yaml").write_text(base + "uncertainty: {unit: rows}\n")
    r = cli("run", str(tmp_path / "b.yaml"))
    assert r.exit_code == 2 and "unit: rows would split" in " ".join(r.stderr.split())
    assert "means over queries" in " ".join(r.stderr.split())


def test_ranking_unit_from_one_file_covers_the_others_rows() -> None:
    """A unit column of one file has no value on the rows only the other file holds (a judged
    item not recommended, an item recommended but not judged): those rows take their query's
    unit, so a unit of the truth, or the query column itself, resamples whole queries. Before,
    they read as a second value of the unit ("the rows of one query hold 2 values")."""
    rng = np.random.default_rng(4)
    q = np.repeat(np.arange(120), 6)
    items = np.tile(np.arange(6), 120)
    run = pl.DataFrame({"query": q, "item": items, "score": rng.random(q.size)})
    keep = rng.random(q.size) < 0.6  # judged: some recommended items, and one unrecommended
    truth = pl.DataFrame({"query": q[keep], "item": items[keep],
                          "relevance": rng.integers(0, 2, int(keep.sum()))})
    truth = pl.concat([truth, pl.DataFrame({"query": np.arange(120), "item": [99] * 120,
                                            "relevance": [1] * 120})])
    truth = truth.with_columns(user=pl.col("query").cast(pl.String) + "u")
    cfg: dict[str, Any] = {"task": "ranking", "metrics": ["micro_recall", "ndcg@3"]}
    base = evaluate({**cfg, "uncertainty": {"method": "bootstrap"}}, predictions=run,
                    truth=truth.drop("user"))
    by_query = evaluate({**cfg, "uncertainty": {"method": "bootstrap", "unit": "query"}},
                        predictions=run, truth=truth.drop("user"))
    by_user = evaluate({**cfg, "uncertainty": {"method": "bootstrap", "unit": "user"}},
                       predictions=run, truth=truth)
    for id_ in ("micro_recall", "ndcg@3"):
        assert ci_of(by_query, id_) == ci_of(base, id_)
        lo, hi = ci_of(by_user, id_)
        assert lo < base.metric(id_).value < hi


@pytest.mark.parametrize("density", [0.001, 0.05, 0.5])
def test_replicate_tables_sum_the_cells_the_groups_hold(density) -> None:
    """A table's replicate sums (weightings x groups times groups x table rows) multiply only
    the cells the groups hold when they are few (a sparse matrix), else one dense product:
    either way every weighting's sum per table row and column, exact for whole values
    (here), and repeated cells added."""
    from evalcli.engine import resample

    rng = np.random.default_rng(int(density * 1000))
    n_rep, n_groups, size = 30, 40, 50
    n = max(1, int(density * n_groups * size))
    g_pos = rng.integers(0, n_groups, n)
    k_pos = rng.integers(0, size, n)
    values = rng.integers(-3, 4, (n, 2)).astype(np.float64)
    weights = rng.integers(0, 4, (n_rep, n_groups)).astype(np.float64)
    x = np.zeros((n_groups, size, 2))
    np.add.at(x, (g_pos, k_pos), values)
    want = np.einsum("rg,gkv->rkv", weights, x)
    got = resample._weighted(weights, g_pos, k_pos, values, size)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_replicates_shifted_by_the_binning_error_stay_in_the_metrics_range(method) -> None:
    """Replicates on binned tables are shifted by the value's binning error; a metric at the
    top of its range (a calibration error near 1) could then get a bound past 1. It is cut to
    the range, with a note, as a closed form's is."""
    from types import SimpleNamespace

    from evalcli.engine.resample import intervals_for

    r = 200
    rng = np.random.default_rng(3)
    # replicates of the binned table near 0.99, its own value 0.985; the exact value 0.9995
    binned = np.clip(0.99 + rng.normal(0, 0.006, r), 0, 1)
    jack = np.clip(0.985 + rng.normal(0, 0.001, 40), 0, 1)
    rep = np.concatenate([binned, [0.985], jack])[:, None]
    rs = SimpleNamespace(level=0.95, extra_levels=[], method=method)
    metric = SimpleNamespace(range=(0.0, 1.0))
    plan = SimpleNamespace(resampling=rs, metrics=[SimpleNamespace(metric=metric)])
    result = SimpleNamespace(value=0.9995, ci=None, intervals={})
    intervals_for(plan, [result], [None], rep, SimpleNamespace(replicates=r), True,  # type: ignore[arg-type]
                  [True])
    ci = result.ci
    assert ci is not None and ci.low is not None and ci.high is not None
    assert ci.high == 1.0 and 0.98 < ci.low < 0.9995
    assert "shifted by the binning error" in ci.note and "cut to the metric's range" in ci.note
    if method == "percentile":
        # replicates biased above the binned value: the whole shifted interval beyond 1 is
        # cut to [1, 1], not to a low above its high (found in review)
        biased = np.concatenate([np.clip(0.995 + rng.normal(0, 0.002, r), 0, 1), [0.985]])
        result = SimpleNamespace(value=0.9995, ci=None, intervals={})
        intervals_for(plan, [result], [None], biased[:, None],  # type: ignore[arg-type]
                      SimpleNamespace(replicates=r), True, [True])
        assert (result.ci.low, result.ci.high) == (1.0, 1.0)


@pytest.mark.parametrize("method", ["bootstrap", "bca"])
@pytest.mark.parametrize("rows", [
    {"label": [1.0], "prediction": [1.0]},                        # one row, errors of 0
    {"label": [1.0, 2.0, 3.0], "prediction": [1.0, 2.5, 3.0], "w": [0.0, 0.0, 1.0]},
    {"label": [1e308, -1e308, 1e308, 0.0], "prediction": [-1e308, 1e308, 0.0, 1e308]},
])
def test_regression_replicates_of_zeros_and_extremes_are_values_not_crashes(
        cli: Cli, tmp_path: Path, method: str, rows: dict[str, list[float]]) -> None:
    """Exact sums whose values are all 0 (their last limbs lie below the smallest float,
    where 0 * 2^1074 is NaN) or beyond the largest float: the replicates are values or
    undefined, never an internal error (it was exit 3 for a one-row run with --ci), and a
    quiet run prints nothing on stderr (no NumPy overflow warnings)."""
    pl.DataFrame(rows).write_parquet(tmp_path / "p.parquet")
    weight = "columns: {weight: w}\n" if "w" in rows else ""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"task: regression\npredictions: p.parquet\n{weight}"
                   f"metrics: [rmse, mae, r2, mape, explained_variance]\n"
                   f"uncertainty: {{method: {method}}}\n")
    r = cli("run", str(cfg), "-q", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ""
    rep = json.loads(r.stdout)
    for m in rep["metrics"]:
        ci = m["ci"]
        assert ci.get("reason") is not None or ci["low"] <= ci["high"], m
