"""Paired tests against independent references: scipy.stats (``ttest_rel``, ``wilcoxon``,
``permutation_test``, ``binomtest``, ``false_discovery_control``), statsmodels (``mcnemar``,
``multipletests``), ranx's ``compare`` (Student's t and Fisher's randomization) on the same runs,
and enumeration written here; closed forms to 1e-9, Monte-Carlo p-values within their stated
error; the undefined cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from evalcli.uncertainty.groups import replicate_sums, replicate_weights
from evalcli.uncertainty.paired import (
    adjust_p_values,
    mcnemar_test,
    paired_bootstrap_test,
    paired_t_test,
    sign_flip_test,
    wilcoxon_test,
)

TOL = 1e-9


def per_query(seed: int, n: int, shift: float = 0.02, ties: bool = False
              ) -> tuple[np.ndarray, np.ndarray]:
    """Two systems' per-query values in [0, 1], correlated as real runs are."""
    rng = np.random.default_rng(seed)
    a = rng.beta(2, 3, n)
    b = np.clip(a + rng.normal(shift, 0.08, n), 0, 1)
    if ties:
        a, b = np.round(a, 1), np.round(b, 1)
    return a, b


# --- paired t ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("seed", "n"), [(0, 2), (1, 5), (2, 40), (3, 2000)])
def test_paired_t_matches_scipy(seed, n):
    a, b = per_query(seed, n)
    r = paired_t_test(a, b, level=0.9)
    ref = stats.ttest_rel(b, a)
    assert r.statistic == pytest.approx(ref.statistic, rel=TOL)
    assert r.p_value == pytest.approx(ref.pvalue, rel=TOL, abs=1e-300)
    low, high = ref.confidence_interval(0.9)
    assert abs(r.interval.low - low) < TOL and abs(r.interval.high - high) < TOL
    assert r.estimate == pytest.approx(float((b - a).mean()), abs=1e-15) and r.n == n


def test_paired_t_edge_cases():
    assert paired_t_test([0.4], [0.5]).reason == "fewer than two pairs: the t-test needs two"
    same = paired_t_test([0.1, 0.5, 0.9], [0.1, 0.5, 0.9])
    assert same.p_value is None and "do not vary" in same.reason and same.estimate == 0.0
    nan = paired_t_test([0.1, np.nan, 0.3], [0.2, 0.3, 0.5])
    assert nan.reason == "1 of 3 pairs have a NaN value"
    omitted = paired_t_test([0.1, np.nan, 0.3, 0.2], [0.2, 0.3, 0.5, 0.25], nan_policy="omit")
    ref = stats.ttest_rel([0.2, 0.5, 0.25], [0.1, 0.3, 0.2])
    assert omitted.p_value == pytest.approx(ref.pvalue, rel=TOL) and omitted.n == 3
    with pytest.raises(ValueError):
        paired_t_test([0.1, 0.2], [0.1])


# --- Wilcoxon ----------------------------------------------------------------------------------

WILCOXON_CASES = [  # (seed, n, ties, the branch scipy's defaults take)
    (10, 8, False, "wilcoxon-exact"),
    (11, 20, False, "wilcoxon-exact"),
    (12, 50, False, "wilcoxon-exact"),
    (13, 51, False, "wilcoxon-normal"),
    (14, 10, True, "wilcoxon-permutation"),
    (15, 13, True, "wilcoxon-permutation"),
    (16, 14, True, "wilcoxon-normal"),
    (17, 45, True, "wilcoxon-normal"),
    (18, 400, True, "wilcoxon-normal"),
]


@pytest.mark.parametrize(("seed", "n", "ties", "branch"), WILCOXON_CASES)
def test_wilcoxon_matches_scipys_defaults(seed, n, ties, branch):
    a, b = per_query(seed, n, shift=0.03, ties=ties)
    if ties:
        b[:2] = a[:2]  # and zero differences
    r = wilcoxon_test(a, b)
    ref = stats.wilcoxon(b, a)
    assert r.test == branch
    assert r.statistic == pytest.approx(ref.statistic, abs=TOL)
    assert r.p_value == pytest.approx(ref.pvalue, rel=TOL, abs=1e-300)


def test_wilcoxon_edge_cases():
    assert wilcoxon_test([], []).reason == "no pairs"
    zero = wilcoxon_test([0.2, 0.3], [0.2, 0.3])
    assert zero.p_value is None and "every difference is zero" in zero.reason
    one = wilcoxon_test([0.2], [0.5])
    ref = stats.wilcoxon([0.5], [0.2])
    assert one.p_value == pytest.approx(ref.pvalue) and one.statistic == ref.statistic
    assert wilcoxon_test([0.2, np.nan], [0.5, 0.1]).p_value is None


# --- sign-flip randomization --------------------------------------------------------------------

def enumerate_sign_flips(d: np.ndarray) -> float:
    """Share of all 2**n sign patterns whose |mean| reaches the observed |mean|."""
    observed = abs(d.mean())
    hits = sum(abs((np.array(signs) * d).mean()) >= observed - 1e-12
               for signs in itertools.product((1, -1), repeat=d.size))
    return hits / 2**d.size


@pytest.mark.parametrize("seed", range(4))
def test_exact_sign_flip_equals_enumeration_and_scipy(seed):
    a, b = per_query(20 + seed, 11, shift=0.04, ties=seed % 2 == 1)
    r = sign_flip_test(a, b)
    assert r.test == "sign-flip-exact" and r.mc_error == 0.0
    assert r.p_value == pytest.approx(enumerate_sign_flips(b - a), abs=1e-15)
    d = b - a
    if d.mean() != 0:
        ref = stats.permutation_test((d,), np.mean, permutation_type="samples",
                                     vectorized=True, n_resamples=10**4)
        assert r.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_monte_carlo_sign_flip_is_within_its_error_of_the_exact_p():
    a, b = per_query(30, 16, shift=0.03)
    exact = sign_flip_test(a, b, permutations=2**16)
    assert exact.test == "sign-flip-exact"
    for seed in range(3):
        mc = sign_flip_test(a, b, permutations=4000, seed=seed)
        assert mc.test == "sign-flip" and mc.mc_error > 0
        assert abs(mc.p_value - exact.p_value) < 4 * mc.mc_error
    assert sign_flip_test(a, b, permutations=4000, seed=1) == sign_flip_test(
        a, b, permutations=4000, seed=1)
    assert sign_flip_test(a, b, permutations=4000, seed=1).p_value != sign_flip_test(
        a, b, permutations=4000, seed=2).p_value


def test_sign_flip_edge_cases():
    same = sign_flip_test([0.3, 0.4, 0.5], [0.3, 0.4, 0.5])
    assert (same.p_value, same.estimate) == (1.0, 0.0)  # every pattern ties with no difference
    assert sign_flip_test([], []).reason == "no pairs"
    assert sign_flip_test([0.3, np.nan], [0.2, 0.1]).p_value is None
    one = sign_flip_test([0.3], [0.5])
    assert (one.p_value, one.test) == (1.0, "sign-flip-exact")


# --- ranx's compare on the same runs ------------------------------------------------------------

def ranx_runs(seed: int, queries: int = 60):
    import ranx  # in the test extra: a missing one fails, never skips

    rng = np.random.default_rng(seed)
    qrels, run_a, run_b = {}, {}, {}
    for q in range(queries):
        docs = [f"d{j}" for j in range(30)]
        rel = rng.random(30) < 0.2
        rel[rng.integers(30)] = True
        qrels[f"q{q}"] = {d: 1 for d, r in zip(docs, rel, strict=True) if r}
        base = rel * 0.6 + rng.random(30)
        run_a[f"q{q}"] = dict(zip(docs, map(float, base), strict=True))
        better = base + rel * rng.normal(0.15, 0.3, 30) + rng.normal(0, 0.3, 30)
        run_b[f"q{q}"] = dict(zip(docs, map(float, better), strict=True))
    return ranx.Qrels(qrels), ranx.Run(run_a, name="a"), ranx.Run(run_b, name="b")


def test_ranx_student_and_fisher_on_the_same_runs():
    import ranx

    qrels, run_a, run_b = ranx_runs(40)
    metric = "ndcg@10"
    a = np.asarray(ranx.evaluate(qrels, run_a, metric, return_mean=False))
    b = np.asarray(ranx.evaluate(qrels, run_b, metric, return_mean=False))
    student = ranx.compare(qrels, [run_a, run_b], [metric], stat_test="student")
    ours = paired_t_test(a, b)
    assert ours.p_value == pytest.approx(student.comparisons["a", "b"][metric]["p_value"],
                                         rel=TOL)
    permutations = 20_000
    fisher = ranx.compare(qrels, [run_a, run_b], [metric], stat_test="fisher",
                          n_permutations=permutations, random_seed=7)
    theirs = fisher.comparisons["a", "b"][metric]["p_value"]
    ours = sign_flip_test(a, b, permutations=permutations, seed=7)
    # Two independent Monte-Carlo estimates of the same p (ranx counts hits / B, we
    # (1 + hits) / (1 + B)): their difference has standard deviation about sqrt(2) mc_error.
    assert abs(ours.p_value - theirs) < 4 * math.sqrt(2) * ours.mc_error + 1 / permutations
    assert 0.001 < ours.p_value < 0.5  # the case tests something


# --- McNemar ----------------------------------------------------------------------------------

MCNEMAR_CASES = [(0, 1), (3, 12), (12, 3), (5, 5), (10, 14), (30, 52), (200, 260), (0, 40)]


@pytest.mark.parametrize(("a_only", "b_only"), MCNEMAR_CASES)
def test_mcnemar_matches_statsmodels_and_binomtest(a_only, b_only):
    total = 1000
    table = [[total - a_only - b_only - 100, a_only], [b_only, 100]]
    exact = mcnemar_test(a_only, b_only, total, method="exact")
    ref = mcnemar(table, exact=True)
    assert exact.statistic == ref.statistic and exact.p_value == pytest.approx(ref.pvalue, rel=TOL)
    binom = stats.binomtest(b_only, a_only + b_only, 0.5).pvalue
    assert exact.p_value == pytest.approx(binom, rel=TOL)
    for correction in (False, True):
        chi2 = mcnemar_test(a_only, b_only, total, method="chi2", correction=correction)
        if correction and a_only == b_only:
            # statsmodels squares |b - c| - 1 = -1; the correction floors it at 0 here
            assert (chi2.statistic, chi2.p_value) == (0.0, 1.0)
            continue
        ref = mcnemar(table, exact=False, correction=correction)
        assert chi2.statistic == pytest.approx(ref.statistic, rel=TOL)
        assert chi2.p_value == pytest.approx(ref.pvalue, rel=TOL)
    auto = mcnemar_test(a_only, b_only, total)
    assert auto.test == ("mcnemar-exact" if a_only + b_only < 25 else "mcnemar-chi2")
    assert auto.estimate == (b_only - a_only) / total


def test_mcnemar_edge_cases():
    none = mcnemar_test(0, 0, 50)
    assert (none.p_value, none.estimate) == (1.0, 0.0) and "no discordant" in none.note
    assert mcnemar_test(0, 0, 0).reason == "no rows"
    with pytest.raises(ValueError):
        mcnemar_test(3, 4, 5)


# --- the paired bootstrap ---------------------------------------------------------------------

def paired_group_bootstrap(a: np.ndarray, b: np.ndarray, groups: np.ndarray, seed: int):
    g = int(groups.max()) + 1
    per_group = np.column_stack([np.bincount(groups, a, g), np.bincount(groups, b, g),
                                 np.bincount(groups, None, g)])
    sums = replicate_sums(replicate_weights(g, 2000, seed), per_group)
    return paired_bootstrap_test(sums[:, 0] / sums[:, 2], sums[:, 1] / sums[:, 2],
                                 float(a.mean()), float(b.mean()))


def test_paired_bootstrap_p_inverts_its_interval():
    for seed in range(30):
        a, b = per_query(100 + seed, 150, shift=0.01 * (seed % 4))
        groups = np.random.default_rng(seed).integers(0, 100, a.size)
        r = paired_group_bootstrap(a, b, groups, seed)
        outside = not (r.interval.low <= 0.0 <= r.interval.high)
        if abs(r.p_value - 0.05) > 2 / 2000:  # away from the one-replicate boundary
            assert outside == (r.p_value <= 0.05), (seed, r)


def test_paired_bootstrap_agrees_with_the_paired_t_on_a_mean():
    a, b = per_query(200, 800, shift=0.01)
    groups = np.arange(800) % 400
    r = paired_group_bootstrap(a, b, groups, seed=5)
    t = paired_t_test(a, b)
    assert r.estimate == pytest.approx(t.estimate, abs=1e-12)
    assert r.interval.std_error == pytest.approx(t.interval.std_error, rel=0.1)
    assert abs(r.interval.low - t.interval.low) < 4 * r.interval.mc_error + 0.1 * (
        t.interval.high - t.interval.low)
    assert r.mc_error == pytest.approx(math.sqrt(r.p_value * (1 - r.p_value) / 2000))


def test_paired_bootstrap_edge_cases():
    reps = np.random.default_rng(0).normal(size=100)
    bad = reps.copy()
    bad[:50] = np.nan
    r = paired_bootstrap_test(reps, bad, 0.0, 0.1)
    assert r.p_value is None and "replicates have no value" in r.reason
    with pytest.raises(ValueError):
        paired_bootstrap_test(reps, reps[:10], 0.0, 0.0)


# --- corrections ------------------------------------------------------------------------------

P_SETS = [
    [0.01, 0.04, 0.03, 0.2],
    [0.001, 0.001, 0.5, 1.0, 0.04, 0.049],
    list(np.random.default_rng(1).random(40) ** 3),
    [0.5],
]


@pytest.mark.parametrize("p", P_SETS)
@pytest.mark.parametrize(("ours", "theirs"), [("holm", "holm"), ("bonferroni", "bonferroni"),
                                              ("bh", "fdr_bh")])
def test_corrections_match_statsmodels(p, ours, theirs):
    got = adjust_p_values(p, ours)
    np.testing.assert_allclose(got, multipletests(p, method=theirs)[1], rtol=0, atol=1e-12)
    if ours == "bh":
        np.testing.assert_allclose(got, stats.false_discovery_control(p, method="bh"),
                                   rtol=0, atol=1e-12)


def test_corrections_leave_undefined_tests_out():
    p = [0.01, np.nan, 0.04, 0.03]
    got = adjust_p_values(p)
    assert np.isnan(got[1])
    np.testing.assert_allclose(got[[0, 2, 3]], multipletests([0.01, 0.04, 0.03], method="holm")[1])
    assert adjust_p_values([], "holm").size == 0
    assert adjust_p_values(p, "none")[3] == 0.03
    with pytest.raises(ValueError):
        adjust_p_values([1.5])
    with pytest.raises(ValueError):
        adjust_p_values([0.5], "sidak")  # type: ignore[arg-type]
