"""Intervals against independent references: scipy.stats (the normal and t distributions,
``bootstrap``), statsmodels' ``proportion_confint(method="wilson")``; closed forms to 1e-9;
Monte-Carlo results within their stated Monte-Carlo error; the undefined cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evalcli.uncertainty.groups import jackknife_sums, replicate_sums, replicate_weights
from evalcli.uncertainty.intervals import (
    Interval,
    bca_interval,
    jackknife_acceleration,
    mean_t_interval,
    normal_interval,
    percentile_interval,
    t_interval,
    wilson_interval,
    wilson_interval_clustered,
)

TOL = 1e-9


def close(interval: Interval, low: float, high: float, tol: float = TOL) -> bool:
    return (interval.low is not None and interval.high is not None
            and abs(interval.low - low) <= tol and abs(interval.high - high) <= tol)


# --- normal and t ------------------------------------------------------------------------------

@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99, 0.999])
def test_normal_and_t_match_scipy(level):
    i = normal_interval(0.37, 0.021, level)
    assert close(i, *stats.norm.interval(level, loc=0.37, scale=0.021))
    for df in (1, 4, 29, 1000):
        i = t_interval(-1.5, 0.3, df, level)
        assert close(i, *stats.t.interval(level, df, loc=-1.5, scale=0.3))
        assert i.std_error == 0.3 and i.method == "t"


@pytest.mark.parametrize("n", [2, 3, 10, 200])
def test_mean_t_interval_matches_scipy(n):
    x = np.random.default_rng(n).beta(0.5, 2.0, n)
    i = mean_t_interval(x, 0.9)
    ref = stats.t.interval(0.9, n - 1, loc=x.mean(), scale=stats.sem(x))
    assert close(i, *ref)
    assert i.estimate == pytest.approx(x.mean(), abs=TOL)
    assert i.std_error == pytest.approx(stats.sem(x), abs=TOL)


def test_mean_t_interval_edge_cases():
    assert mean_t_interval([]).reason == "no values"
    one = mean_t_interval([0.3])
    assert one.estimate == 0.3 and not one.defined and "one value" in one.reason
    same = mean_t_interval([0.4] * 7)
    assert (same.low, same.high, same.std_error) == (0.4, 0.4, 0.0) and "no width" in same.note
    nan = mean_t_interval([0.1, float("nan"), 0.3])
    assert not nan.defined and nan.reason == "1 of 3 values are NaN"
    omitted = mean_t_interval([0.1, float("nan"), 0.3], nan_policy="omit")
    assert close(omitted, *stats.t.interval(0.95, 1, loc=0.2, scale=stats.sem([0.1, 0.3])))
    assert omitted.note == "1 NaN values left out"
    with pytest.raises(ValueError):
        mean_t_interval([1.0, 2.0], level=1.0)


# --- Wilson ----------------------------------------------------------------------------------

@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
@pytest.mark.parametrize(("count", "nobs"), [(0, 1), (1, 1), (0, 20), (20, 20), (1, 3), (81, 100),
                                             (7, 1000), (999, 1000), (12345, 20000), (2.5, 7.0)])
def test_wilson_matches_statsmodels(count, nobs, level):
    i = wilson_interval(count, nobs, level)
    assert close(i, *proportion_confint(count, nobs, alpha=1 - level, method="wilson"))
    assert i.estimate == count / nobs
    assert i.std_error == pytest.approx(math.sqrt(i.estimate * (1 - i.estimate) / nobs))


def test_wilson_edge_cases():
    assert wilson_interval(0, 0).reason == "no rows: the proportion is undefined"
    assert not wilson_interval(float("nan"), 10).defined
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_clustered_wilson_with_singleton_clusters_is_wilson_on_n_minus_one():
    y = np.random.default_rng(3).random(400) < 0.3
    i = wilson_interval_clustered(y.astype(float), np.ones(400))
    n_eff = 399
    ref = proportion_confint(y.mean() * n_eff, n_eff, alpha=0.05, method="wilson")
    assert close(i, *ref)
    assert i.estimate == pytest.approx(y.mean(), abs=TOL)


def test_clustered_wilson_variance_is_the_ratio_estimators():
    # The linearized variance of sum(s) / sum(t) with clusters as units, written out here.
    rng = np.random.default_rng(4)
    t = rng.integers(1, 30, 60).astype(float)
    s = rng.binomial(t.astype(int), rng.beta(2, 3, 60)).astype(float)
    p = s.sum() / t.sum()
    c = t.size
    residual = s - p * t
    variance = c / (c - 1) * (residual @ residual) / t.sum() ** 2
    i = wilson_interval_clustered(s, t)
    assert i.std_error == pytest.approx(math.sqrt(variance), rel=1e-12)
    n_eff = p * (1 - p) / variance
    assert close(i, *proportion_confint(p * n_eff, n_eff, alpha=0.05, method="wilson"))


def test_clustered_wilson_edge_cases():
    assert not wilson_interval_clustered([3.0], [10.0]).defined  # one cluster
    assert wilson_interval_clustered([], []).reason == "no rows: the proportion is undefined"
    none = wilson_interval_clustered([0.0, 0.0, 0.0], [5.0, 5.0, 4.0])
    assert none.estimate == 0.0 and none.low == 0.0 and "number of clusters" in none.note
    assert close(none, *proportion_confint(0, 3, method="wilson"))
    empty_clusters_ignored = wilson_interval_clustered([1.0, 0.0, 2.0], [3.0, 0.0, 4.0])
    assert empty_clusters_ignored == wilson_interval_clustered([1.0, 2.0], [3.0, 4.0])
    with pytest.raises(ValueError):
        wilson_interval_clustered([2.0], [1.0, 3.0])


# --- bootstrap intervals against scipy.stats.bootstrap ---------------------------------------

def test_percentile_equals_scipy_on_scipys_own_replicates():
    x = np.random.default_rng(5).lognormal(0, 1, 80)
    res = stats.bootstrap((x,), np.mean, n_resamples=3000, method="percentile",
                          rng=np.random.default_rng(6), confidence_level=0.9)
    i = percentile_interval(res.bootstrap_distribution, float(x.mean()), 0.9)
    assert close(i, *res.confidence_interval)
    assert i.std_error == pytest.approx(res.standard_error, abs=TOL)


@pytest.mark.parametrize("statistic", [np.mean, np.std])
def test_bca_equals_scipy_on_scipys_own_replicates(statistic):
    """With groups of one unit, the group jackknife is scipy's delete-one jackknife."""
    x = np.random.default_rng(7).exponential(1.0, 60)
    res = stats.bootstrap((x,), statistic, n_resamples=3000, method="BCa",
                          rng=np.random.default_rng(8))
    jack = np.array([statistic(np.delete(x, i)) for i in range(x.size)])
    i = bca_interval(res.bootstrap_distribution, float(statistic(x)), jack)
    assert close(i, *res.confidence_interval)


def test_acceleration_is_efrons():
    jack = np.random.default_rng(9).normal(size=25) ** 2
    d = jack.mean() - jack
    assert jackknife_acceleration(jack) == pytest.approx(
        (d**3).sum() / (6 * ((d**2).sum()) ** 1.5), rel=1e-12)
    assert jackknife_acceleration([2.0, 2.0, 2.0]) == 0.0


def test_bootstrap_edge_cases():
    reps = np.random.default_rng(10).normal(size=1000)
    assert percentile_interval(reps, float("nan")).reason == "the estimate is undefined"
    few = reps.copy()
    few[:50] = np.nan
    i = percentile_interval(few, 0.0)
    assert i.defined and i.note == "50 of 1000 replicates had no value and were left out"
    many = reps.copy()
    many[:200] = np.nan
    assert not percentile_interval(many, 0.0).defined
    assert percentile_interval(many, 0.0, max_undefined=0.25).defined
    assert not percentile_interval([np.nan, 1.0], 1.0).defined
    flat = percentile_interval(np.full(100, 0.7), 0.7)
    assert (flat.low, flat.high, flat.std_error) == (0.7, 0.7, 0.0)
    outside = bca_interval(np.linspace(1, 2, 100), 0.5, [0.4, 0.5, 0.6])
    assert not outside.defined and "outside" in outside.reason
    assert not bca_interval(reps, 0.0, [np.nan, 1.0, 2.0]).defined


# --- the group bootstrap against scipy's unit bootstrap, within Monte-Carlo error -------------

def group_bootstrap_of_a_mean(x: np.ndarray, replicates: int, seed: int) -> Interval:
    """Units are their own groups here: per-group sums (value, count) and replicate weights."""
    stats_per_group = np.column_stack([x, np.ones_like(x)])
    sums = replicate_sums(replicate_weights(x.size, replicates, seed), stats_per_group)
    return percentile_interval(sums[:, 0] / sums[:, 1], float(x.mean()))


def test_group_bootstrap_agrees_with_scipy_within_monte_carlo_error():
    x = np.random.default_rng(11).gamma(0.5, 2.0, 300)
    ours = group_bootstrap_of_a_mean(x, 4000, seed=1)
    ref = stats.bootstrap((x,), np.mean, n_resamples=4000, method="percentile",
                          rng=np.random.default_rng(12))
    # two independent Monte-Carlo estimates: their difference has sd sqrt(2) * mc_error
    limit = 4 * math.sqrt(2) * ours.mc_error
    assert abs(ours.low - ref.confidence_interval.low) < limit
    assert abs(ours.high - ref.confidence_interval.high) < limit
    assert ours.std_error == pytest.approx(ref.standard_error, rel=0.1)


def test_the_stated_monte_carlo_error_is_the_real_one():
    """Repeat the bootstrap with 150 seeds: the bounds' spread is what mc_error says (the
    ratio's sampling error over 150 repeats is about 6%; accepted within 0.75-1.33)."""
    x = np.random.default_rng(13).normal(size=200)
    runs = [group_bootstrap_of_a_mean(x, 1000, seed) for seed in range(150)]
    lows = np.array([r.low for r in runs])
    stated = np.mean([r.mc_error for r in runs])
    assert 0.75 < lows.std(ddof=1) / stated < 1.33


def test_bca_from_groups_uses_the_group_jackknife():
    rng = np.random.default_rng(14)
    x = rng.exponential(1.0, 400)
    groups = rng.integers(0, 100, 400)
    per_group = np.column_stack([np.bincount(groups, x, 100), np.bincount(groups, None, 100)])
    sums = replicate_sums(replicate_weights(100, 2000, seed=3), per_group)
    jack = jackknife_sums(per_group)
    i = bca_interval(sums[:, 0] / sums[:, 1], float(x.mean()), jack[:, 0] / jack[:, 1])
    p = percentile_interval(sums[:, 0] / sums[:, 1], float(x.mean()))
    assert i.defined and i.method == "bca" and i.low < x.mean() < i.high
    # a right-skewed mean: BCa shifts the interval right of the percentile one
    assert i.low > p.low and i.high > p.high
