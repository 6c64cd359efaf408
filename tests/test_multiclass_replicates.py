"""A bootstrap replicate's multiclass score metrics take NumPy paths (a thousand small tables
per run: a Polars query per table cost more to plan than to run). Each must give what the
point value's Polars path gives on the same table: the same bits for the sums of whole weights
(counts, ROC areas), the last digits otherwise (another order of addition).

The Polars paths themselves are checked against scikit-learn in ``test_multiclass.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcli.metrics.base import Memo, Statistics
from evalcli.metrics.binary.calibration import bin_counts
from evalcli.metrics.multiclass import metrics as mm
from evalcli.metrics.multiclass.stats import CLASS_SCORES, CLASS_VS_REST, RANKS, SUMS

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
WHOLE = [0.0, 1.0, 2.0, 3.0]
FRACTIONAL = [0.0, 0.1, 0.3, 1.0, 2.5]


@st.composite
def class_tables(draw: Any) -> tuple[pl.DataFrame, bool]:
    """A (class, label, s) table as the engine gives one: each row's score of every class,
    summed per key into weight and rows; few distinct scores (ties), zero weights, int or
    text classes (multilabel's label may be no class at all: "")."""
    text = draw(st.booleans())
    names = ["a", "b", "c", ""] if text else [0, 1, 2, 7]
    whole = draw(st.booleans())
    score = st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0])
    rows = draw(st.lists(st.tuples(st.sampled_from(names), st.tuples(score, score, score),
                                   st.sampled_from(WHOLE if whole else FRACTIONAL)),
                         min_size=1, max_size=12))
    long = [(c, label, s, w) for label, scores, w in rows
            for c, s in zip(names[:3], scores, strict=True)]
    df = pl.DataFrame(long, schema={"class": pl.String if text else pl.Int64,
                                    "label": pl.String if text else pl.Int64,
                                    "s": pl.Float64, "w": pl.Float64}, orient="row")
    return df.group_by("class", "label", "s").agg(pl.col("w").sum(),
                                                  pl.len().cast(pl.Int64).alias("n")), whole


def vs_rest(df: pl.DataFrame) -> pl.DataFrame:
    """The one-vs-rest table of a (class, label, s) table: (class, pos, s)."""
    return df.group_by("class", (pl.col("label") == pl.col("class")).alias("pos"), "s").agg(
        pl.col("w").sum(), pl.col("n").sum())


def same(a: Any, b: Any, exact: bool) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (a, b)
        for k in a:  # average precision's terms are fractions: summed in another order
            same(a[k], b[k], exact and k != "ap")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (a, b)
        for x, y in zip(a, b, strict=True):
            same(x, y, exact)
    elif isinstance(a, float | int) and not isinstance(a, bool):
        if exact:
            assert float(a) == float(b), (a, b)
        else:
            assert float(a) == pytest.approx(float(b), rel=1e-12, abs=1e-12)
    else:
        assert a == b


@SETTINGS
@given(class_tables())
def test_replicate_curves_equal_the_polars_curves(drawn: tuple[pl.DataFrame, bool]) -> None:
    """Per class (P, N, the ROC and AP sums), per pair of classes and the pooled (micro)
    curve: the counts and ROC sums exactly for whole weights."""
    df, whole = drawn
    ordered = mm._ordered(df)
    if not ordered.height:
        return
    for part in ("classes", "pairs", "micro"):
        runs = mm._runs(df, part == "micro")
        assert runs is not None
        got = mm._curves_arrays(runs, part)
        want = mm._curves(ordered, part)
        if part == "pairs":  # the keys of the Polars rows only
            want = {k: {"num": v["num"], "N": v["N"]} for k, v in want.items()}
        same(got, want, whole)
        if part == "pairs":
            continue
        # the one-vs-rest table (the true classes other than the scored one as one): the
        # same curves, from either path
        rest = vs_rest(df)
        runs = mm._runs(rest, part == "micro")
        assert runs is not None
        same(mm._curves_arrays(runs, part), want, whole)
        same(mm._curves(mm._ordered(rest), part), want, whole)


def _stats(table: pl.DataFrame, replicate: bool) -> Statistics:
    return Statistics({CLASS_SCORES: table, CLASS_VS_REST: vs_rest(table),
                       SUMS: {f"{SUMS}.unnormed": 0.0}}, Memo(), replicate=replicate)


@SETTINGS
@given(class_tables())
def test_replicate_score_values_equal_the_point_values(drawn: tuple[pl.DataFrame, bool]
                                                        ) -> None:
    """The values (and their notes and details) of AUROC one-vs-rest and one-vs-one and of
    average precision, every average, from a replicate's statistics and from the point
    value's: undefined where the other is, the same classes left out; AUROC's the same bits
    for whole weights."""
    df, whole = drawn
    cases = [(mm._auroc_value, {"multi_class": m, "average": a})
             for m, a in (("ovr", "macro"), ("ovr", "weighted"), ("ovr", "micro"),
                          ("ovo", "macro"), ("ovo", "weighted"))]
    cases += [(mm._ap_value, {"average": a}) for a in ("macro", "weighted", "micro")]
    for fn, params in cases:
        got = fn(_stats(df, True), params)
        want = fn(_stats(df, False), params)
        assert (got.value is None) == (want.value is None), (params, got, want)
        exact = whole and fn is mm._auroc_value  # (AP: fractions, added in another order)
        if got.value is not None:
            same(got.value, want.value, exact)
        assert got.notes == want.notes
        same(got.details, want.details, exact)


def test_replicate_curves_fall_back_when_class_and_label_types_differ() -> None:
    df = pl.DataFrame({"class": [0, 1, 0, 1], "label": [0, 0, 1, 1], "s": [0.4, 0.6, 0.3, 0.7],
                       "w": [1.0, 1.0, 2.0, 1.0], "n": [1, 1, 2, 1]},
                      schema_overrides={"class": pl.Int32})
    assert mm._runs(df, False) is None
    assert mm.curves_of(_stats(df, True), "classes") == mm.curves_of(_stats(df, False),
                                                                     "classes")


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(1, 3), st.integers(2, 5),
                          st.sampled_from(FRACTIONAL)), min_size=1, max_size=20),
       st.integers(1, 5), st.sampled_from(["expected", "optimistic", "pessimistic"]))
def test_replicate_top_k_equals_the_point_value(rows: list[tuple[int, int, int, float]],
                                                k: int, ties: str) -> None:
    df = pl.DataFrame(rows, schema={"above": pl.Int64, "tied": pl.Int64,
                                    "classes": pl.Int64, "w": pl.Float64}, orient="row")
    df = df.group_by("above", "tied", "classes").agg(pl.col("w").sum())
    params = {"k": k, "ties": ties}
    got = mm._top_k_value(Statistics({RANKS: df}, Memo(), replicate=True), params)
    want = mm._top_k_value(Statistics({RANKS: df}, Memo()), params)
    assert (got.value is None) == (want.value is None)
    if want.value is not None:
        assert got.value == pytest.approx(want.value, rel=1e-12, abs=1e-15)
    assert got.notes == want.notes


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from([0.1, 0.25, 0.5, 0.7, 0.95, 1.0]), st.booleans(),
                          st.sampled_from(FRACTIONAL)), min_size=1, max_size=20),
       st.sampled_from(["uniform", "quantile"]))
def test_top_label_bins_sorted_as_arrays_are_the_polars_sorted_bins(
        rows: list[tuple[float, bool, float]], strategy: str) -> None:
    """The top label's table sorted by arrays gives the bins, bit for bit, that the Polars
    sort (confidence, then wrong before right) gave."""
    df = pl.DataFrame(rows, schema={"conf": pl.Float64, "correct": pl.Boolean,
                                    "w": pl.Float64}, orient="row")
    df = df.group_by("conf", "correct").agg(pl.col("w").sum())
    got = mm._top_label(df, 4, strategy)
    ref = df.filter(pl.col("w") != 0).sort("conf", "correct")
    w = ref["w"].to_numpy()
    right = np.where(ref["correct"].to_numpy(), w, 0.0)
    score, at = np.unique(ref["conf"].to_numpy(), return_inverse=True)
    want = bin_counts(score, np.bincount(at, weights=right, minlength=score.size),
                      np.bincount(at, weights=w, minlength=score.size), 4, strategy)
    for a, b in zip(got, want, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))



@SETTINGS
@given(class_tables(), st.sampled_from(["uniform", "quantile"]))
def test_classwise_bins_sorted_as_arrays_are_the_polars_sorted_bins(
        drawn: tuple[pl.DataFrame, bool], strategy: str) -> None:
    """Each class's bins of its own score (classwise ECE and MCE), from the table sorted as
    arrays (integer and text classes) and from the Polars sort (other types: here the same
    classes as categoricals, or as floats), bit for bit."""
    df = vs_rest(drawn[0])
    got = mm._classwise(df, 3, strategy)
    as_polars = df.with_columns(pl.col("class").cast(pl.Categorical)) \
        if df.schema["class"] == pl.String else df.with_columns(pl.col("class").cast(pl.Float64))
    assert mm._coded(as_polars) is None  # (the other path)
    want = dict(mm._classwise(as_polars, 3, strategy))
    assert [name for name, _ in got] == sorted(want)
    for name, bins in got:
        for a, b in zip(bins, want[name], strict=True):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b)
            else:
                assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def test_classwise_calibration_of_a_weightless_segment_is_undefined_not_a_crash(
        tmp_path: Any) -> None:
    """ECE and MCE classwise over a segment whose rows all weigh 0 (and under the bootstrap,
    a replicate that draws none of a segment's rows): no class has a bin, so no value. It
    crashed (exit 3, a zip of unequal lengths) before; the other segment's values are the
    rows' own."""
    from evalcli.api import evaluate

    pred = pl.DataFrame({"id": [1, 2, 3, 4, 5], "p_0": [0.8, 0.3, 0.6, 0.4, 0.9],
                         "p_1": [0.2, 0.7, 0.4, 0.6, 0.1]})
    truth = pl.DataFrame({"id": [1, 2, 3, 4, 5], "label": [0, 1, 0, 1, 1],
                          "w": [1.0, 1.0, 0.0, 0.0, 2.0], "seg": ["a", "a", "b", "b", "a"]})
    r = evaluate({"task": "multiclass", "options": {"score_prefix": "p_"},
                  "columns": {"weight": "w"}, "group_by": ["seg"],
                  "metrics": [{"metric": "ece", "kind": "classwise", "bins": 2},
                              {"metric": "mce", "kind": "classwise", "bins": 2}],
                  "uncertainty": {"method": "bootstrap", "replicates": 100}},
                 predictions=pred, truth=truth)
    segs = {s.key["seg"]: s for s in r.segments}
    assert all(m.value is None for m in segs["b"].metrics)
    assert all(m.value is not None and m.value > 0 for m in segs["a"].metrics)


@SETTINGS
@given(class_tables(), st.integers(1, 6))
def test_ranking_bins_keep_each_classs_one_vs_rest_curve(drawn: tuple[pl.DataFrame, bool],
                                                         limit: int) -> None:
    """The one-vs-rest table's scores merged for the bootstrap keep every class's ranking
    of its own rows against the others': with at most ``limit`` distinct positive scores in
    a class, its AUROC and average precision sums are those of the exact scores (the counts
    and ROC sums exactly for whole weights), however the rows are weighted; with more, the
    table still shrinks to about ``limit`` positive and ``limit`` other values a class."""
    from evalcli.metrics.multiclass.stats import _ranking_bins

    df, whole = drawn
    rest = vs_rest(df)
    # room for every score: none moves, not even by an ulp, when the bootstrap's groups
    # repeat a value (the mean of k copies may be off by one: a tie with another class's
    # row in the pooled curve breaks)
    assert _ranking_bins(pl.concat([rest] * 3), 10_000) is None
    merged = _ranking_bins(rest, limit)
    moved = rest if merged is None else rest.with_columns(pl.Series("s", merged))
    for c in rest["class"].unique().to_list():
        mine = rest.filter(pl.col("class") == c)
        positives = mine.filter(pl.col("pos"))["s"].n_unique()
        new = moved.filter(pl.col("class") == c)
        assert new.filter(pl.col("pos"))["s"].n_unique() <= limit
        assert new.filter(~pl.col("pos"))["s"].n_unique() <= 2 * limit + 1
        if positives > limit:
            continue
        for weights in (None, np.random.default_rng(len(mine)).integers(0, 3, mine.height)):
            a = mine if weights is None else mine.with_columns(w=pl.col("w") * weights)
            b = new if weights is None else new.with_columns(w=pl.col("w") * weights)
            if not mm._ordered(a).height:
                continue
            want = mm._curves(mm._ordered(a), "classes")
            got = mm._curves(mm._ordered(b), "classes")
            same({k: v for k, v in got.items()}, want, whole)


def test_an_area_rounded_above_one_is_one() -> None:
    """Sums of fractional weights may round a perfect curve's area to 1.0000000000000002
    (a 3-row segment of weights 0.3, 1.7 and 2.2 did, pooled): the value is 1, as a gate at
    1 expects, for each class's and the pooled area."""
    P, N = 0.1 + 0.2, 1.7  # P * N rounds below the sum that makes the area
    roc = P * N * (1 + 2**-52)
    c = {"classes": {"a": {"P": P, "N": N, "roc": roc, "ap": P * (1 + 2**-52)}},
         "micro": {"P": P, "N": N, "roc": roc, "ap": P * (1 + 2**-52)}}
    assert roc / (P * N) > 1.0
    for what in ("roc", "ap"):
        for average in ("macro", "micro"):
            got = mm.ovr(c, what, average)
            assert got.value == 1.0, (what, average, got.value)
            assert all(d["value"] <= 1.0 for d in got.details["by_label"])


@SETTINGS
@given(class_tables(), st.integers(0, 2**32 - 1))
def test_point_curves_add_in_one_order_whatever_the_rows_order(
        drawn: tuple[pl.DataFrame, bool], seed: int) -> None:
    """The Polars curves (the point values) add each score's rows in one order: the same
    bits whatever the order the table's rows come in. A hash group-by added them in the
    order of the rows (and of its threads): with fractional weights the pooled AUROC of 12
    classes changed in its last digit from one run to the next."""
    df, _ = drawn
    df = df.filter(pl.col("w") != 0)
    if not df.height:
        return
    rng = np.random.default_rng(seed)
    for table in (df, vs_rest(df)):
        want = {part: mm._curves(table, part) for part in ("classes", "micro")}
        for _ in range(3):
            shuffled = table[rng.permutation(table.height).tolist()]
            for part in ("classes", "micro"):
                got = mm._curves(shuffled, part)
                assert repr(got) == repr(want[part]), part
