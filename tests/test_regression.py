"""Regression metrics against scikit-learn 1.9, through the pipeline (files -> config -> run).

Conventions checked explicitly: a constant target (scikit-learn's ``force_finite``), R² on one
row (undefined, as scikit-learn), the weighted median (scikit-learn's averaged inverted CDF),
MAPE's epsilon floor, max error over the rows that carry weight, and numerically hard data
(a large mean with a small variance).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from evalcli.errors import InputDataError
from tests._pipeline import run, values

ALL = ["mse", "rmse", "mae", "r2", "explained_variance", "mape", "max_error",
       "median_absolute_error"]
Arr = np.ndarray


def sk_reference(y: Arr, p: Arr, w: Arr | None) -> dict[str, float]:
    kw = {"sample_weight": w}
    keep = np.ones(len(y), bool) if w is None else w > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "mse": skm.mean_squared_error(y, p, **kw),
            "rmse": skm.root_mean_squared_error(y, p, **kw),
            "mae": skm.mean_absolute_error(y, p, **kw),
            "r2": skm.r2_score(y, p, **kw),
            "explained_variance": skm.explained_variance_score(y, p, **kw),
            "mape": skm.mean_absolute_percentage_error(y, p, **kw),
            # scikit-learn's max_error takes no weights: the rows that carry weight
            "max_error": skm.max_error(y[keep], p[keep]),
            "median_absolute_error": skm.median_absolute_error(y, p, **kw),
        }


def frame(y: Sequence[float], p: Sequence[float], w: Sequence[float] | None = None
          ) -> pl.DataFrame:
    data = {"label": pl.Series([float(v) for v in y]),
            "prediction": pl.Series([float(v) for v in p])}
    if w is not None:
        data["w"] = pl.Series([float(v) for v in w])
    return pl.DataFrame(data)


def ours(y: Sequence[float], p: Sequence[float], w: Sequence[float] | None = None,
         metrics: Sequence[object] = ALL, **kw: object) -> dict[str, float | None]:
    if w is not None:
        kw["columns"] = {"weight": "w"}
    return values(run(frame(y, p, w), "regression", metrics, **kw))


def assert_matches(got: dict[str, float | None], ref: dict[str, float],
                   rel: float = 1e-9) -> None:
    for mid, expected in ref.items():
        if math.isnan(expected):
            assert got[mid] is None, f"{mid}: expected undefined, got {got[mid]}"
        else:
            assert got[mid] is not None, mid
            assert got[mid] == pytest.approx(expected, rel=rel, abs=1e-9), mid


# --------------------------------------------------------------------------- property tests

FLOATS = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def regression_data(draw: st.DrawFn) -> tuple[Arr, Arr, Arr | None]:
    n = draw(st.integers(2, 40))
    # small integers: ties in the errors, medians exactly on boundaries
    vals = st.integers(-5, 5).map(float) if draw(st.booleans()) else FLOATS
    y = draw(st.lists(vals, min_size=n, max_size=n))
    p = draw(st.lists(vals, min_size=n, max_size=n))
    w = None
    if draw(st.booleans()):
        w = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n))
    return np.array(y), np.array(p), None if w is None else np.array(w)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(regression_data())
def test_every_metric_matches_scikit_learn(data: tuple[Arr, Arr, Arr | None]) -> None:
    y, p, w = data
    assume(w is None or w.sum() > 0)
    got = ours(y.tolist(), p.tolist(), None if w is None else w.tolist())
    ref = sk_reference(y, p, w)
    # R² and explained variance: a relative error of 1e-9 on a ratio of sums whose
    # denominator may be tiny; compare on the scale of 1 instead. Where the exact denominator
    # is 0, scikit-learn's answer depends on whether its float numerator rounds to exactly 0
    # (a residue of 1e-26 turns explained variance 1.0 into 0.0), so the reference there is
    # the same convention computed in exact arithmetic.
    exact = exact_ratios(y, p, w)
    for mid in ("r2", "explained_variance"):
        e = ref.pop(mid)
        num, den = exact[mid]
        if den == 0:
            e = 1.0 if num == 0 else 0.0  # scikit-learn's force_finite convention
        assert got[mid] == pytest.approx(e, rel=1e-7, abs=1e-7), mid
    assert_matches(got, ref)


def exact_ratios(y: Arr, p: Arr, w: Arr | None) -> dict[str, tuple[Fraction, Fraction]]:
    """R² and explained variance as (numerator, denominator) of 1 − num/den, in exact
    rational arithmetic (scikit-learn's definitions, weights included)."""
    ws = [Fraction(1)] * len(y) if w is None else [Fraction(float(v)) for v in w]
    ys = [Fraction(float(v)) for v in y]
    rs = [Fraction(float(a)) - Fraction(float(b)) for a, b in zip(y, p, strict=True)]
    total = sum(ws)

    def mean(xs: list[Fraction]) -> Fraction:
        return sum(wi * x for wi, x in zip(ws, xs, strict=True)) / total

    def ss(xs: list[Fraction], around: Fraction) -> Fraction:
        return sum(wi * (x - around) ** 2 for wi, x in zip(ws, xs, strict=True))

    var_y = ss(ys, mean(ys))
    return {"r2": (ss(rs, Fraction(0)), var_y), "explained_variance": (ss(rs, mean(rs)), var_y)}


# --------------------------------------------------------------------------- conventions

@pytest.mark.parametrize("p,r2,ev", [
    ([3.0, 3.0, 3.0, 3.0], 1.0, 1.0),  # exact
    ([3.0, 2.0, 3.0, 3.0], 0.0, 0.0),  # errors
    ([2.0, 2.0, 2.0, 2.0], 0.0, 1.0),  # a constant offset: explained variance is perfect
])
def test_constant_target_follows_force_finite(p: list[float], r2: float, ev: float) -> None:
    y = [3.0] * 4
    r = run(frame(y, p), "regression", ["r2", "explained_variance"])
    assert r.metric("r2").value == r2 == skm.r2_score(y, p)
    assert r.metric("explained_variance").value == ev == skm.explained_variance_score(y, p)
    assert all(m.notes for m in r.metrics)  # the convention is said, not silent


def test_r2_of_one_row_is_undefined_like_scikit_learn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(skm.r2_score([1.0], [2.0]))
    r = run(frame([1.0], [2.0]), "regression", ALL)
    assert r.metric("r2").value is None and r.metric("r2").notes
    assert r.metric("mse").value == 1.0
    assert r.metric("median_absolute_error").value == 1.0


def test_numerically_hard_target_large_mean_small_variance() -> None:
    """Mean 1e9, spread 1e-3: naive sums of squares lose every digit; R² must not."""
    rng = np.random.default_rng(3)
    y = 1e9 + rng.normal(0, 1e-3, 200)
    p = y + rng.normal(0, 5e-4, 200)
    got = ours(y.tolist(), p.tolist(), metrics=["r2", "explained_variance", "mse"])
    # exact rational arithmetic on the float inputs
    yf, pf = [Fraction(v) for v in y], [Fraction(v) for v in p]
    mean = sum(yf) / len(yf)
    ss_tot = sum((a - mean) ** 2 for a in yf)
    ss_res = sum((a - b) ** 2 for a, b in zip(yf, pf, strict=True))
    exact_r2 = float(1 - ss_res / ss_tot)
    assert got["r2"] == pytest.approx(exact_r2, rel=1e-9)
    assert got["r2"] == pytest.approx(skm.r2_score(y, p), rel=1e-7)
    assert got["explained_variance"] == pytest.approx(skm.explained_variance_score(y, p),
                                                      rel=1e-7)


def test_numerically_hard_weighted() -> None:
    rng = np.random.default_rng(4)
    y = 5e8 + rng.normal(0, 1e-2, 100)
    p = y + rng.normal(0, 5e-3, 100)
    w = rng.integers(1, 4, 100).astype(float)
    got = ours(y.tolist(), p.tolist(), w.tolist(), metrics=["r2"])
    assert got["r2"] == pytest.approx(skm.r2_score(y, p, sample_weight=w), rel=1e-7)


def test_median_absolute_error_weighted_matches_scikit_learn_definition() -> None:
    # scikit-learn 1.9 uses the weighted "averaged inverted CDF": when half the weight falls
    # exactly on a boundary, the mean of the two neighbouring values
    y = [0.0, 0.0, 0.0, 0.0]
    p = [1.0, 2.0, 3.0, 4.0]
    assert ours(y, p, [1, 1, 1, 1], ["median_absolute_error"])["median_absolute_error"] == 2.5
    assert skm.median_absolute_error(y, p, sample_weight=[1, 1, 1, 1]) == 2.5
    # the half falls inside the weight of 3.0: that value
    assert ours(y, p, [1, 1, 3, 1], ["median_absolute_error"])["median_absolute_error"] == 3.0
    assert skm.median_absolute_error(y, p, sample_weight=[1, 1, 3, 1]) == 3.0
    # a boundary reached through fractional weights (0.1 + 0.2 is not 0.3 in floating point)
    y3, p3, w3 = [0.0] * 3, [1.0, 2.0, 3.0], [0.1, 0.2, 0.3]
    got = ours(y3, p3, w3, ["median_absolute_error"])["median_absolute_error"]
    assert got == pytest.approx(skm.median_absolute_error(y3, p3, sample_weight=w3))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.0, 2.5, 7.0]),
                          st.sampled_from([-1.0, 0.0, 0.1, 0.2, 0.3, 1.0, 2.0, 3.0])),
                max_size=12))
def test_median_absolute_error_polars_and_numpy_parts_agree(rows: list[tuple[float, float]]
                                                            ) -> None:
    """The weighted median's parts from one Polars query (a plain run, which loads no NumPy)
    and from NumPy (a bootstrap's replicates) are the same bits: ties, boundaries reached
    through fractional weights, zero and negative weights, no row. The value is the averaged
    inverted CDF of the rows of positive weight in exact decimal arithmetic (scikit-learn's
    definition; scikit-learn itself may miss a boundary by an ulp: 0.1 + 2.0 against half of
    4.2)."""
    from evalcli.metrics.regression.metrics import _median_numpy, _median_polars

    df = pl.DataFrame({"abs_e": [e for e, _ in rows], "w": [w for _, w in rows]},
                      schema={"abs_e": pl.Float64, "w": pl.Float64}).sort("abs_e")
    assert _median_polars(df) == _median_numpy(df)
    kept = sorted((e, Fraction(str(w))) for e, w in rows if w > 0)
    total, high, lower, at, upper = _median_numpy(df)
    if not kept:
        assert total == 0.0
        return
    half, cum, want = sum(w for _, w in kept) / 2, Fraction(0), None
    for i, (e, w) in enumerate(kept):
        cum += w
        if cum >= half:
            nxt = next(x for x, _ in kept[i + 1:]) if cum == half else e
            want = (e + nxt) / 2 if cum == half else e
            break
    assert (lower if at > high else (lower + upper) / 2) == pytest.approx(want, abs=1e-15)


def test_mape_zero_target_is_huge_but_finite_like_scikit_learn() -> None:
    y, p = [0.0, 1.0, 2.0], [0.5, 1.0, 2.0]
    got = ours(y, p, metrics=["mape"])["mape"]
    assert got == pytest.approx(skm.mean_absolute_percentage_error(y, p))
    assert got > 1e14


def test_max_error_ignores_zero_weight_rows() -> None:
    y, p, w = [0.0, 0.0, 0.0], [1.0, 10.0, 2.0], [1.0, 0.0, 1.0]
    assert ours(y, p, w, ["max_error"])["max_error"] == 2.0
    assert ours(y, p, [1.0, 5.0, 1.0], ["max_error"])["max_error"] == 10.0


def test_zero_weights_equal_dropping_rows() -> None:
    y, p, w = [1.0, 2.0, 3.0, 4.0, 9.0], [1.5, 2.0, 2.0, 5.0, 0.0], [1.0, 2.0, 0.0, 1.0, 0.0]
    got = ours(y, p, w)
    dropped = ours([1.0, 2.0, 4.0], [1.5, 2.0, 5.0], [1.0, 2.0, 1.0])
    for mid in ALL:
        assert got[mid] == pytest.approx(dropped[mid]), mid


def test_all_zero_weights_are_undefined() -> None:
    r = run(frame([1.0, 2.0], [1.0, 3.0], [0.0, 0.0]), "regression", ALL,
            columns={"weight": "w"})
    for m in r.metrics:
        assert m.value is None and m.notes, m.id


def test_integer_columns() -> None:
    df = pl.DataFrame({"label": [1, 2, 3, 4], "prediction": [1, 3, 2, 4]})
    got = values(run(df, "regression", ALL))
    assert_matches(got, sk_reference(np.array([1., 2, 3, 4]), np.array([1., 3, 2, 4]), None))


# --------------------------------------------------------------------------- bad input

def test_string_target_is_an_error() -> None:
    df = pl.DataFrame({"label": ["a", "b"], "prediction": [1.0, 2.0]})
    with pytest.raises(InputDataError, match=r"label column holds String.*needs numbers"):
        run(df, "regression", ["mse"])


def test_infinite_prediction_is_an_error() -> None:
    with pytest.raises(InputDataError, match=r"infinite.*1 row\(s\).*data row 2"):
        ours([1.0, 2.0], [1.0, math.inf])


def test_nan_target_is_an_error_unless_dropped() -> None:
    with pytest.raises(InputDataError, match=r"1 row\(s\) with a null or NaN label"):
        ours([1.0, math.nan, 3.0], [1.0, 2.0, 3.0])
    r = run(frame([1.0, math.nan, 3.0], [1.0, 2.0, 4.0]), "regression", ["mae"],
            alignment={"nulls": "drop"})
    assert r.alignment.dropped_nulls == 1
    assert r.metrics[0].value == pytest.approx(0.5)


def test_missing_prediction_column_names_the_role() -> None:
    df = pl.DataFrame({"label": [1.0, 2.0], "predicted": [1.0, 2.0]})
    with pytest.raises(InputDataError, match=r"no column 'prediction'.*Did you mean 'predicted'"):
        run(df, "regression", ["mse"])


def test_constant_target_with_errors_too_small_to_square() -> None:
    """A constant target and a prediction 1.5e-213 off: its squared error underflows to 0 in
    floats, but the predictions are not exact, so R² and explained variance are 0 (scikit-
    learn's force_finite convention in exact arithmetic, as the property test above); exact
    predictions, or errors all equal, still give 1."""
    got = ours([0.0, 0.0], [0.0, 1.4947385e-213])
    assert (got["r2"], got["explained_variance"]) == (0.0, 0.0)
    got = ours([0.0, 0.0], [0.0, 0.0])
    assert (got["r2"], got["explained_variance"]) == (1.0, 1.0)
    got = ours([2.0, 2.0], [1.0, 1.0])  # errors all 1: no spread, but not exact
    assert (got["r2"], got["explained_variance"]) == (0.0, 1.0)


@settings(max_examples=60, deadline=None)
@given(st.booleans(), st.integers(0, 2**32 - 1),
       st.sampled_from([1.0, 1e6, 1e154, 1e300]))
def test_replicate_moments_are_what_the_combine_gives_per_replicate(
        weighted: bool, seed: int, scale: float) -> None:
    """The moments and the spread of every bootstrap replicate at once (AggStat.replicates)
    are, bit for bit, what the statistic's combine gives on a frame of one part per
    replicate: sums of any size (beyond the float range's square root too), no row (NaN
    sums), infinite sums, an error constant in a replicate, weighted or not."""
    import numpy as np

    from evalcli.engine.resample import _combined
    from evalcli.metrics.base import Context
    from evalcli.metrics.regression.stats import moments, spread
    from evalcli.metrics.stats import exact_names

    rng = np.random.default_rng(seed)
    roles = frozenset({"label", "prediction", *(("weight",) if weighted else ())})
    ctx = Context(family="regression", roles=roles)
    for stat in (*moments({}, ctx), *spread({}, ctx)):
        assert stat.replicates is not None and callable(stat.combine)
        own = [e.meta.output_name() for e in stat.exprs()]
        exact = exact_names(own)
        n = 40
        out: dict[str, np.ndarray] = {}
        for name in own:
            if name in exact or "#" in name:
                continue
            out[name] = rng.integers(0, 5, n).astype(np.float64)  # counts
        for name in exact:
            out[name] = rng.normal(0, scale, n) * rng.integers(0, 3, n)
        for name in [c for c in out if c.endswith(("_e", ".lo_e", ".hi_e"))]:
            out[name] = rng.normal(0, 1, n)
        if any(c.endswith(".lo_e") for c in out):  # constant errors in some replicates
            lo = next(c for c in out if c.endswith(".lo_e"))
            hi = next(c for c in out if c.endswith(".hi_e"))
            out[hi][::3] = out[lo][::3]
        for col in out.values():  # no rows; an infinite sum
            col[5] = np.nan
        first = next(c for c in exact)
        out[first][7] = np.inf
        got = stat.replicates(out)
        want = _combined(stat, out, exact)
        assert len(got) == len(want) == n
        for a, b in zip(got, want, strict=True):
            assert set(a) == set(b)
            for k in a:
                x, y = a[k], b[k]
                assert (x is None and y is None) or x == y or (x != x and y != y), (k, x, y)
