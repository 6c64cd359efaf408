"""Registry-wide properties of every metric (after scikit-learn's metrics/tests/test_common.py).

Every built-in metric must be classified in ``TRAITS`` below, and every family needs a data
generator in ``FAMILY_DATA``: a test fails, saying exactly what to add, when a family module
registers a metric nobody classified. Then generic checks run over every metric, through the
real pipeline (files, config, alignment, one-pass engine):

- the id is stable (defaults give the bare name; an id round-trips through the config);
- every parameter is declared with a help line and a default its own check accepts;
- direction, summary and formula are set;
- on random data the value is within the declared ``range``;
- the value does not depend on the order of the rows;
- a weight column of ones gives the values of no weights;
- for metrics whose weights count rows: integer weights equal duplicated rows, and a zero
  weight equals no row;
- statistics of segments combined give the statistics of the whole (the mergeable-statistics
  contract that segments, streaming and Spark rely on);
- for metrics classified symmetric: swapping truth and prediction leaves the value unchanged.
"""

from __future__ import annotations

import atexit
import math
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl
import pytest

from evalcli.config import parse_config
from evalcli.engine import core, polars_engine
from evalcli.engine.plan import bind
from evalcli.metrics.base import AggStat, Context, Metric, metric_id
from evalcli.metrics.registry import get_registry
from evalcli.metrics.stats import combine_columns
from evalcli.runner import prepare, run_config

TMP = Path(tempfile.mkdtemp(prefix="evalcli-common-"))
atexit.register(shutil.rmtree, TMP, ignore_errors=True)


# --------------------------------------------------------------------------- classification

@dataclass(frozen=True)
class Traits:
    """How a metric behaves, for the generic checks.

    weights:
        ``"rows"``: a weight counts rows (integer weights equal duplicated rows, a zero weight
        equals no row); ``"other"``: weights mean something else, or nothing (only "ones
        equal no weights" is checked).
    symmetric:
        ``True``/``False``: whether swapping the truth and the prediction columns leaves the
        value unchanged; ``None``: not applicable (the metric needs scores, or the two sides
        are not interchangeable).
    params:
        parameters to give when the defaults do not make a runnable metric.
    """

    weights: Literal["rows", "other"]
    symmetric: bool | None
    params: Mapping[str, Any] | None = None


ROWS, SYM, ASYM = "rows", True, False

TRAITS: dict[str, Traits] = {
    # binary: counts, curves and probabilities, all weighted as scikit-learn's sample_weight
    "binary/accuracy": Traits(ROWS, SYM),
    "binary/precision": Traits(ROWS, ASYM),
    "binary/recall": Traits(ROWS, ASYM),
    "binary/specificity": Traits(ROWS, ASYM),
    "binary/fpr": Traits(ROWS, ASYM),
    "binary/f1": Traits(ROWS, SYM),
    "binary/fbeta": Traits(ROWS, ASYM, {"beta": 2.0}),
    "binary/mcc": Traits(ROWS, SYM),
    "binary/balanced_accuracy": Traits(ROWS, ASYM),
    "binary/auroc": Traits(ROWS, None),
    "binary/auprc": Traits(ROWS, None),
    "binary/average_precision": Traits(ROWS, None),
    "binary/peak_f1": Traits(ROWS, None),
    "binary/log_loss": Traits(ROWS, None),
    "binary/brier": Traits(ROWS, None),
    "binary/recall_at_precision": Traits(ROWS, None, {"min_precision": 0.6}),
    "binary/precision_at_recall": Traits(ROWS, None, {"min_recall": 0.8}),
    "binary/sensitivity_at_specificity": Traits(ROWS, None, {"min_specificity": 0.8}),
    "binary/specificity_at_sensitivity": Traits(ROWS, None, {"min_sensitivity": 0.8}),
    "binary/min_cost": Traits(ROWS, None),
    "binary/precision_at_top": Traits(ROWS, None, {"fraction": 0.1}),
    "binary/lift_at_top": Traits(ROWS, None, {"fraction": 0.1}),
    "binary/lift_table": Traits(ROWS, None),
    "binary/ece": Traits(ROWS, None),
    "binary/mce": Traits(ROWS, None),
    # regression
    "regression/mse": Traits(ROWS, SYM),
    "regression/rmse": Traits(ROWS, SYM),
    "regression/mae": Traits(ROWS, SYM),
    "regression/r2": Traits(ROWS, ASYM),
    "regression/explained_variance": Traits(ROWS, ASYM),
    "regression/mape": Traits(ROWS, ASYM),
    "regression/max_error": Traits(ROWS, SYM),
    "regression/median_absolute_error": Traits(ROWS, SYM),
    # multiclass
    "multiclass/confusion_matrix": Traits(ROWS, None),  # the value is the total; the matrix
    # is in the details
    "multiclass/accuracy": Traits(ROWS, SYM),
    "multiclass/precision": Traits(ROWS, ASYM),
    "multiclass/recall": Traits(ROWS, ASYM),
    "multiclass/f1": Traits(ROWS, SYM),  # macro: each class's F1 swaps fp and fn
    "multiclass/fbeta": Traits(ROWS, ASYM, {"beta": 2.0}),
    "multiclass/fpr": Traits(ROWS, ASYM),
    "multiclass/cohen_kappa": Traits(ROWS, SYM),
    "multiclass/mcc": Traits(ROWS, SYM),
    "multiclass/balanced_accuracy": Traits(ROWS, ASYM),
    "multiclass/hamming_loss": Traits(ROWS, SYM),
    "multiclass/top_k_accuracy": Traits(ROWS, None, {"k": 2}),
    "multiclass/log_loss": Traits(ROWS, None),
    "multiclass/auroc": Traits(ROWS, None),
    "multiclass/average_precision": Traits(ROWS, None),
    "multiclass/ece": Traits(ROWS, None),
    "multiclass/mce": Traits(ROWS, None),
    # multilabel
    "multilabel/precision": Traits(ROWS, ASYM),
    "multilabel/recall": Traits(ROWS, ASYM),
    "multilabel/f1": Traits(ROWS, SYM),
    "multilabel/fbeta": Traits(ROWS, ASYM, {"beta": 2.0}),
    "multilabel/accuracy": Traits(ROWS, SYM),
    "multilabel/subset_accuracy": Traits(ROWS, SYM),
    "multilabel/hamming_loss": Traits(ROWS, SYM),
    "multilabel/auroc": Traits(ROWS, None),
    "multilabel/average_precision": Traits(ROWS, None),
    # ranking: means over queries; a weight is the query's weight
    "ranking/precision": Traits("other", None),
    "ranking/recall": Traits("other", None),
    "ranking/f1": Traits("other", None),
    "ranking/hit_rate": Traits("other", None),
    "ranking/hits": Traits("other", None),
    "ranking/micro_recall": Traits("other", None),
    "ranking/mrr": Traits("other", None),
    "ranking/map": Traits("other", None),
    "ranking/ndcg": Traits("other", None),
    "ranking/dcg": Traits("other", None),
    "ranking/r_precision": Traits("other", None),
    "ranking/auc": Traits("other", None),
    "ranking/bpref": Traits("other", None),
    "ranking/gm_map": Traits("other", None),
    "ranking/gm_bpref": Traits("other", None),
    "ranking/iprec_at_recall": Traits("other", None, {"recall": 0.3}),
    "ranking/iprec_11pt_avg": Traits("other", None),
    "ranking/rprec_mult": Traits("other", None, {"mult": 1.5}),
    "ranking/relative_precision": Traits("other", None),
    "ranking/set_map": Traits("other", None),
    "ranking/utility": Traits("other", None),
    "ranking/bin_g": Traits("other", None),
    "ranking/g": Traits("other", None),
    "ranking/ndcg_rel": Traits("other", None),
    "ranking/rndcg": Traits("other", None),
    "ranking/rbp": Traits("other", None),
    "ranking/rbp_resid": Traits("other", None),
    "ranking/unjudged_fraction": Traits("other", None),
    "ranking/infap": Traits("other", None),
    "ranking/prefs": Traits("other", None),
    "ranking/num_prefs": Traits("other", None),
    "ranking/map_avgjg": Traits("other", None),
    "ranking/precision_avgjg": Traits("other", None, params={"k": 3}),
    "ranking/rprec_mult_avgjg": Traits("other", None, params={"mult": 1.0}),
    **{f"ranking/{name}": Traits("other", None)  # counts: weights play no part
       for name in ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret")},
    "ranking/catalog_coverage": Traits("other", None, {"k": 3}),  # weights play no part
    "ranking/novelty": Traits("other", None, {"k": 3}),
    "ranking/intra_list_similarity": Traits("other", None, {"k": 3}),
    "ranking/diversity": Traits("other", None, {"k": 3}),
    "ranking/serendipity": Traits("other", None, {"k": 3}),
    "ranking/distributional_coverage": Traits("other", None, {"k": 3}),
    "ranking/gini": Traits("other", None, {"k": 3}),
    "ranking/average_recommendation_popularity": Traits("other", None, {"k": 3}),
}


# --------------------------------------------------------------------------- data per family

@dataclass(frozen=True)
class Data:
    """One file's worth of random data for a family, and the config keys it needs."""

    frame: pl.DataFrame
    config: Mapping[str, Any]
    swap: tuple[str, str] | None = ("label", "prediction")
    """The truth and prediction columns, swapped by the symmetry check (None: no check)."""
    symmetric_needs_no_score: bool = True
    """Drop the score column for the symmetry check (hard predictions only)."""


def _binary(rng: np.random.Generator, n: int) -> Data:
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = np.where(rng.random(n) < 0.5, np.round(rng.random(n), 1), rng.random(n))
    # predictions right 70% or 30% of the time: negative correlations appear too
    wrong = rng.random(n) < rng.choice([0.3, 0.7])
    p = np.where(wrong, 1 - y, y)
    return Data(pl.DataFrame({"label": y, "score": s, "prediction": p}), {})


def _regression(rng: np.random.Generator, n: int) -> Data:
    y = rng.normal(10, 3, n)
    return Data(pl.DataFrame({"label": y, "prediction": y + rng.normal(0, 2, n)}), {})


def _multiclass(rng: np.random.Generator, n: int) -> Data:
    k = 3
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    s = rng.random((n, k)) + 1e-3
    s /= s.sum(axis=1, keepdims=True)
    p = rng.integers(0, k, n)
    p[:k] = np.arange(k)
    return Data(pl.DataFrame({"label": y, "prediction": p,
                              "score": [list(map(float, r)) for r in s]}), {})


def _multilabel(rng: np.random.Generator, n: int) -> Data:
    labels = np.array(["a", "b", "c", "d"])

    def sets() -> list[list[str]]:
        return [sorted(labels[rng.random(4) < 0.4].tolist()) for _ in range(n)]

    ls = pl.List(pl.String)
    scores = [list(map(float, r)) for r in np.round(rng.random((n, 4)), 1)]  # ties
    return Data(pl.DataFrame({"label": pl.Series(sets(), dtype=ls),
                              "prediction": pl.Series(sets(), dtype=ls), "score": scores}),
                {"options": {"classes": labels.tolist()}, "columns": {"score": "score"}},
                symmetric_needs_no_score=False)  # the config names it; set metrics ignore it


def _ranking(rng: np.random.Generator, n: int) -> Data:
    # one file: 6 scored items per query (scores with ties), relevance 0-2 or unjudged (null)
    pos = np.arange(n) % 6
    query = np.arange(n) // 6
    item = [f"i{(7 * j + 3 * q) % 20:02d}" for j, q in zip(pos, query, strict=True)]
    rel = [None if u < 0.3 else float(v) for u, v in zip(rng.random(n), rng.integers(0, 3, n),
                                                        strict=True)]
    features = TMP / f"features{rng.integers(1 << 30)}.parquet"
    pl.DataFrame({"item": [f"i{i:02d}" for i in range(20)],
                  "features": [list(map(float, v)) for v in rng.normal(size=(20, 3))]}
                 ).write_parquet(features)
    frame = pl.DataFrame({"query": [f"q{q}" for q in query], "item": item,
                          "score": np.round(rng.random(n), 1),
                          "relevance": pl.Series(rel, dtype=pl.Float64)})
    train = TMP / f"train{rng.integers(1 << 30)}.parquet"  # past interactions of half the users
    pl.DataFrame({"user": [f"q{q}" for q in rng.integers(0, max(2, n // 12), 3 * n // 6 + 1)],
                  "item": [f"i{i:02d}" for i in rng.integers(0, 20, 3 * n // 6 + 1)]}
                 ).write_parquet(train)
    return Data(frame, {"options": {"item_features_file": str(features),
                                    "train_file": str(train)}}, swap=None)


FAMILY_DATA: dict[str, Callable[[np.random.Generator, int], Data]] = {
    "ranking": _ranking,
    "binary": _binary,
    "regression": _regression,
    "multiclass": _multiclass,
    "multilabel": _multilabel,
}


# --------------------------------------------------------------------------- helpers

def _builtin() -> list[Metric]:
    return [m for m in get_registry() if m.origin == "built-in"]


def _key(m: Metric) -> str:
    return f"{m.family}/{m.name}"


def _traits(m: Metric) -> Traits:
    return TRAITS[_key(m)]


def _params(m: Metric) -> dict[str, Any]:
    """Parameters the classification gives (an unclassified metric fails elsewhere)."""
    traits = TRAITS.get(_key(m))
    return dict(traits.params or {}) if traits else {}


def _entry(m: Metric) -> dict[str, Any]:
    return {"metric": m.name, **_params(m)}


def _families() -> list[str]:
    return sorted({m.family for m in _builtin()})


_N = [0]


def _write(df: pl.DataFrame) -> str:
    _N[0] += 1
    path = TMP / f"d{_N[0]}.parquet"
    df.write_parquet(path)
    return str(path)


def _config(family: str, df: pl.DataFrame, metrics: Sequence[Metric],
            extra: Mapping[str, Any], **more: Any) -> Any:
    cfg = {"task": family, "predictions": _write(df), "metrics": [_entry(m) for m in metrics],
           **extra, **more}
    return parse_config(cfg, "test", TMP)


def _values(family: str, df: pl.DataFrame, metrics: Sequence[Metric],
            extra: Mapping[str, Any], **more: Any) -> dict[str, float | None]:
    result = run_config(_config(family, df, metrics, extra, **more))
    return {m.metric: m.value for m in result.metrics}


def _same(a: float | None, b: float | None, rel: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def _assert_same(got: Mapping[str, float | None], ref: Mapping[str, float | None],
                 what: str) -> None:
    bad = {k: (got[k], ref[k]) for k in ref if not _same(got[k], ref[k])}
    assert not bad, f"{what}: {bad}"


def _metrics(family: str) -> list[Metric]:
    return [m for m in _builtin() if m.family == family and _key(m) in TRAITS]


def _data(family: str, seed: int = 0, n: int = 60) -> Data:
    return FAMILY_DATA[family](np.random.default_rng(seed), n)


# --------------------------------------------------------------------------- exhaustiveness

def test_every_builtin_metric_is_classified() -> None:
    missing = [m for m in _builtin() if _key(m) not in TRAITS]
    lines = "\n".join(
        f'    "{_key(m)}": Traits(weights=..., symmetric=...),  # {m.summary}' for m in missing)
    assert not missing, (
        f"{len(missing)} metric(s) are not classified. Add to TRAITS in "
        f"tests/test_registry_common.py (weights: 'rows' if integer weights equal duplicated "
        f"rows, else 'other'; symmetric: True/False if swapping truth and prediction "
        f"keeps/changes the value, None if not applicable; params= when the defaults do not "
        f"run):\n{lines}")


def test_classification_lists_no_vanished_metric() -> None:
    registered = {_key(m) for m in _builtin()}
    stale = sorted(set(TRAITS) - registered)
    assert not stale, f"TRAITS in tests/test_registry_common.py names unregistered metrics: {stale}"


def test_every_family_has_a_data_generator() -> None:
    missing = [f for f in _families() if f not in FAMILY_DATA]
    assert not missing, (
        f"no random-data generator for {missing}: add 'def _<family>(rng, n) -> Data' "
        "returning one file's frame (columns named by the task's roles) and the config keys "
        "it needs, and register it in FAMILY_DATA in tests/test_registry_common.py")


# --------------------------------------------------------------------------- declarations

@pytest.mark.parametrize("metric", _builtin(), ids=_key)
def test_declaration_is_complete(metric: Metric) -> None:
    assert metric.direction in ("higher", "lower")
    assert metric.summary.strip() and metric.formula.strip()
    assert metric.peer.strip(), "say which peer's definition the default matches"
    lo, hi = metric.range
    assert lo is None or hi is None or lo < hi
    names = [p.name for p in metric.params]
    assert len(names) == len(set(names))
    for p in metric.params:
        assert p.help.strip(), f"parameter {p.name} has no help line"
        if p.default is None:
            continue
        assert p.check(p.default) == p.default, f"default of {p.name} fails its own check"


@pytest.mark.parametrize(
    "metric", [m for m in _builtin() if _key(m) in TRAITS],  # the rest fail the classification
    ids=_key)
def test_id_is_stable(metric: Metric) -> None:
    from evalcli.config import MetricEntry
    from evalcli.engine.plan import plan_metric

    if any(p.default is None and not p.nullable for p in metric.params):
        params = metric.resolve(_params(metric))
    else:
        defaults = metric.resolve({})
        bare = metric_id(metric, defaults)
        cut = defaults.get(metric.cutoff) if metric.cutoff else None
        assert bare == (metric.name if cut is None else f"{metric.name}@{cut}")
        params = metric.resolve(_params(metric))
    mid = metric_id(metric, params)
    assert metric_id(metric, dict(params)) == mid  # deterministic
    # the id, written in a config, plans to the same metric and parameters
    again = plan_metric(metric, MetricEntry.model_validate(mid), "test")
    assert again.id == mid and again.params == params


# --------------------------------------------------------------------------- values

FAMILIES = sorted(f for f in {m.family for m in get_registry() if m.origin == "built-in"}
                  if f in FAMILY_DATA)
"""Every family with built-in metrics and a data generator (one without a generator fails
test_every_family_has_a_data_generator)."""
ROW_WEIGHTED = [f for f in FAMILIES if any(_traits(m).weights == "rows" for m in _metrics(f))]
"""Families with metrics whose weights count rows (integer weights = duplicated rows)."""
SWAPPABLE = [f for f in FAMILIES if _data(f, 9).swap is not None]
"""Families where truth and prediction are interchangeable columns."""


@pytest.mark.parametrize("family", FAMILIES)
def test_values_within_declared_range(family: str) -> None:
    metrics = _metrics(family)
    for seed in range(6):
        d = _data(family, seed)
        got = _values(family, d.frame, metrics, d.config)
        for m in metrics:
            v = got[m.name]
            lo, hi = m.range
            assert v is None or ((lo is None or v >= lo - 1e-12) and
                                 (hi is None or v <= hi + 1e-12)), \
                f"{_key(m)} = {v} outside its declared range {m.range} (seed {seed})"


@pytest.mark.parametrize("family", FAMILIES)
def test_row_order_does_not_matter(family: str) -> None:
    metrics = _metrics(family)
    d = _data(family, 1)
    ref = _values(family, d.frame, metrics, d.config)
    shuffled = d.frame.sample(fraction=1.0, shuffle=True, seed=3)
    _assert_same(_values(family, shuffled, metrics, d.config), ref, "shuffled rows")


@pytest.mark.parametrize("family", FAMILIES)
def test_weights_of_one_equal_no_weights(family: str) -> None:
    metrics = _metrics(family)
    d = _data(family, 2)
    ref = _values(family, d.frame, metrics, d.config)
    ones = d.frame.with_columns(pl.lit(1.0).alias("w"))
    got = _values(family, ones, metrics, d.config,
                  columns={**d.config.get("columns", {}), "weight": "w"})
    _assert_same(got, ref, "weight column of ones")


@pytest.mark.parametrize("family", ROW_WEIGHTED)
def test_integer_weights_equal_duplicated_rows(family: str) -> None:
    metrics = [m for m in _metrics(family) if _traits(m).weights == "rows"]
    d = _data(family, 3, n=40)
    w = np.random.default_rng(5).integers(1, 4, d.frame.height)
    weighted = d.frame.with_columns(pl.Series("w", w.astype(float)))
    cols = {**d.config.get("columns", {}), "weight": "w"}
    got = _values(family, weighted, metrics, d.config, columns=cols)
    dup = d.frame.select(pl.all().repeat_by(pl.Series(w)).explode())
    _assert_same(got, _values(family, dup, metrics, d.config), "integer weights vs duplicates")


@pytest.mark.parametrize("family", ROW_WEIGHTED)
def test_zero_weight_equals_no_row(family: str) -> None:
    metrics = [m for m in _metrics(family) if _traits(m).weights == "rows"]
    d = _data(family, 4, n=50)
    rng = np.random.default_rng(6)
    w = rng.choice([0.0, 1.0, 2.0], d.frame.height)
    w[: min(10, d.frame.height)] = 1.0  # keep the rows that make every class present
    weighted = d.frame.with_columns(pl.Series("w", w))
    cols = {**d.config.get("columns", {}), "weight": "w"}
    got = _values(family, weighted, metrics, d.config, columns=cols)
    kept = weighted.filter(pl.col("w") > 0)
    ref = _values(family, kept, metrics, d.config, columns=cols)
    _assert_same(got, ref, "zero weights vs rows left out")


@pytest.mark.parametrize("family", SWAPPABLE)
def test_symmetric_metrics(family: str) -> None:
    all_metrics = _metrics(family)
    d = _data(family, 9)
    assert d.swap is not None
    frame = d.frame.drop("score", strict=False) if d.symmetric_needs_no_score else d.frame
    metrics = [m for m in all_metrics if _traits(m).symmetric is not None]
    a, b = d.swap
    ref = _values(family, frame, metrics, d.config)
    swapped = frame.rename({a: "__t"}).rename({b: a}).rename({"__t": b})
    got = _values(family, swapped, metrics, d.config)
    for m in metrics:
        same = _same(got[m.name], ref[m.name])
        assert same == _traits(m).symmetric, (
            f"{_key(m)}: classified symmetric={_traits(m).symmetric}, but swapping "
            f"{a} and {b} gives {got[m.name]} vs {ref[m.name]}")


@pytest.mark.parametrize("family", FAMILIES)
def test_segment_statistics_combine_into_the_whole(family: str) -> None:
    """Partial statistics of segments, combined, give the overall value of every metric."""
    metrics = _metrics(family)
    d = _data(family, 10, n=90)
    seg = np.random.default_rng(11).integers(0, 3, d.frame.height)
    frame = d.frame.with_columns(pl.Series("__part", seg))
    cfg = _config(family, frame, metrics, d.config, group_by=["__part"])
    prep = prepare(cfg)
    make_ctx = getattr(core, "run_context", None)
    ctx = make_ctx(prep.plan, prep.aligned) if make_ctx else Context(
        prep.plan.task.name, prep.aligned.roles, prep.plan.options)
    stats = bind(prep.plan, ctx)
    computed = polars_engine.compute(prep.plan, prep.aligned, stats, "polars")
    assert len(computed.segments) == 3
    combined: dict[str, Any] = {}
    for key, st in stats.items():
        parts = [values[key] for _, _, values in computed.segments]
        if isinstance(st, AggStat):
            df = pl.DataFrame([dict(p) for p in parts])
            merge = st.combine
            df = merge(df, []) if callable(merge) else combine_columns(df, [], merge)
            combined[key] = df.row(0, named=True)
        else:
            combined[key] = st.combine(pl.concat(parts, how="vertical_relaxed"), [])
    overall = {r.metric: r.value for r in core.values(prep.plan, computed.overall, ctx)}
    merged = {r.metric: r.value for r in core.values(prep.plan, combined, ctx)}
    _assert_same(merged, overall, "segments combined vs whole")


# --------------------------------------------------------------------------- peer names

def _averaged() -> list[tuple[Metric, str]]:
    """Every built-in metric with an ``average`` choice, and each of its averages."""
    return [(m, c) for m in _builtin() for p in m.params if p.name == "average"
            for c in p.choices or ()]


def test_averaged_metrics_exist_for_the_peer_names() -> None:
    families = {m.family for m, _ in _averaged()}
    assert {"multiclass", "multilabel"} <= families
    averages = [c for m, c in _averaged() if (m.family, m.name) == ("multiclass", "precision")]
    assert averages == ["micro", "macro", "weighted"]


@pytest.mark.parametrize(("metric", "average"), _averaged(),
                         ids=lambda x: x if isinstance(x, str) else _key(x))
def test_peer_names_of_averages_plan_to_the_parameterized_metric(metric: Metric,
                                                                 average: str) -> None:
    """``micro_precision`` (Spark MLlib's microPrecision) and ``precision_micro``
    (scikit-learn's scorer name) are precision with average=micro: the same metric, parameters
    and canonical id as ``precision[average=micro]``."""
    from evalcli.config import MetricEntry
    from evalcli.engine.plan import make_plan

    reg = get_registry()
    expected = metric.resolve({**_params(metric), "average": average})
    for name in (f"{average}_{metric.name}", f"{metric.name}_{average}"):
        entry = MetricEntry.model_validate({"metric": name, **_params(metric)})
        (pm,) = make_plan(reg, metric.family, [entry], {}).metrics
        assert pm.metric is reg.get(metric.family, metric.name), name
        assert pm.params == expected, name
        assert pm.id == metric_id(metric, expected), name
        assert reg.get(metric.family, name) is pm.metric  # 'evalcli metrics show NAME'


def test_a_peer_name_gives_the_values_of_the_parameterized_metric() -> None:
    d = _data("multilabel", 12)
    cfg = {"task": "multilabel", "predictions": _write(d.frame),
           "metrics": ["micro_precision", "macro_f1", "recall_weighted", "precision"]}
    result = run_config(parse_config(cfg, "test", TMP))
    ids = [m.id for m in result.metrics]
    assert ids == ["precision[average=micro]", "f1[average=macro]", "recall[average=weighted]",
                   "precision"]
    assert [m.metric for m in result.metrics] == ["precision", "f1", "recall", "precision"]
    cfg["metrics"] = ["precision[average=micro]", "f1[average=macro]",
                      "recall[average=weighted]", "precision"]
    again = run_config(parse_config(cfg, "test", TMP))
    assert [m.value for m in again.metrics] == [m.value for m in result.metrics]
    assert result.metrics[0].value != result.metrics[3].value  # micro is not samples here


@pytest.mark.parametrize(("family", "name", "match"), [
    ("multilabel", "micro_precison", r"Did you mean 'precision\[average=micro\]'\?"),
    ("multilabel", "microPrecision", r"Did you mean 'precision\[average=micro\]'\?"),
    ("multiclass", "weightedrecall", r"Did you mean 'recall\[average=weighted\]'\?"),
    ("multilabel", "f1_sample", r"Did you mean 'f1\[average=samples\]'\?"),
    ("binary", "micro_precision",
     r"unknown binary metric 'micro_precision'\..*precision\[average=micro\] is a multiclass "
     r"and multilabel metric"),
])
def test_suggestions_show_the_full_form(family: str, name: str, match: str) -> None:
    from evalcli.config import MetricEntry
    from evalcli.engine.plan import make_plan
    from evalcli.errors import MetricError

    with pytest.raises(MetricError, match=match):
        make_plan(get_registry(), family, [MetricEntry.model_validate(name)], {})


def test_a_peer_name_and_a_contrary_parameter_disagree() -> None:
    from evalcli.config import MetricEntry
    from evalcli.engine.plan import make_plan
    from evalcli.errors import ConfigError, MetricError

    reg = get_registry()
    with pytest.raises(MetricError, match=r"'micro_precision' is precision\[average=micro\]; "
                                          r"average=macro disagrees"):
        make_plan(reg, "multilabel", [MetricEntry.model_validate(
            {"metric": "micro_precision", "average": "macro"})], {})
    (pm,) = make_plan(reg, "multilabel", [MetricEntry.model_validate(
        {"metric": "micro_precision", "average": "micro", "min": 0.5})], {}).metrics
    assert pm.id == "precision[average=micro]" and pm.gate is not None
    with pytest.raises(ConfigError, match=r"'precision\[average=micro\]' is listed twice"):
        make_plan(reg, "multilabel", [MetricEntry.model_validate("micro_precision"),
                                      MetricEntry.model_validate("precision[average=micro]")],
                  {})


def test_a_metric_named_like_a_peer_name_wins() -> None:
    """Peer names never shadow a metric or alias that holds the name (a plugin's own
    ``micro_precision``, ranking's ``micro_recall``)."""
    from dataclasses import replace

    reg = get_registry().copy()
    mine = replace(reg.get("multiclass", "accuracy"), name="micro_precision", aliases=())
    reg.register(mine, "plugin file mine.py")
    assert reg.get("multiclass", "micro_precision").origin == "plugin file mine.py"
    assert reg.resolve("multiclass", "micro_precision") == (
        reg.get("multiclass", "micro_precision"), {})
    assert reg.resolve("multiclass", "precision_micro")[1] == {"average": "micro"}
    assert reg.resolve("ranking", "micro_recall") == (reg.get("ranking", "micro_recall"), {})


def test_metrics_show_takes_a_peer_name(cli) -> None:
    r = cli("metrics", "show", "micro_precision", "--family", "multilabel")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("precision (multilabel)"), r.stdout[:200]
