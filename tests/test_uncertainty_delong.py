"""DeLong for AUROC, one system and two on the same rows: pROC's worked example (its own aSAH
data and the values its test suite expects), a direct O(n m) implementation written here from
DeLong, DeLong & Clarke-Pearson (1988) against the fast algorithm of Sun & Xu (2014), scikit-learn's
AUROC, and the undefined cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from evalcli.uncertainty.intervals import auroc_delong, delong_interval, delong_interval_counts
from evalcli.uncertainty.paired import paired_delong_test


def numbers(text: str) -> list[float]:
    return [float(v) for v in text.split()]


# pROC's aSAH data set (Turck et al. 2010, Intensive Care Medicine 36(1), 107-115; shipped
# with pROC): 113 patients, outcome Poor = 1 (41), and three predictors of it. wfns is an
# ordinal 1-5 scale, so it has many ties.
ASAH_OUTCOME = [int(c) for c in (
    "000011010010110010111010000000001001101100000000011000100010100111011011110001101000000100"
    "00000000001111110001000")]
ASAH_S100B = numbers("""
    0.13 0.14 0.1 0.04 0.13 0.1 0.47 0.16 0.18 0.1 0.12 0.1 0.44 0.71 0.04 0.08 0.49 0.04 0.07
    0.33 0.09 0.09 0.07 0.11 0.07 0.17 0.07 0.11 0.13 0.19 0.05 0.16 0.41 0.14 0.34 0.35 0.48
    0.09 0.96 0.25 0.5 0.46 0.16 0.07 0.43 0.45 0.11 0.08 0.09 0.86 0.52 0.08 0.06 0.13 2.07 0.1
    0.14 0.15 0.07 0.06 0.77 0.05 0.09 0.3 0.03 0.09 0.04 0.23 0.7 0.09 0.27 0.71 0.08 0.26 0.08
    0.16 0.09 0.13 0.1 0.08 0.11 0.33 0.11 0.28 0.07 0.1 0.32 0.22 0.07 0.05 0.24 0.38 0.1 0.15
    0.08 0.14 0.1 0.07 0.04 0.19 0.56 0.14 0.58 0.32 0.82 0.74 0.15 0.47 0.17 0.44 0.15 0.5 0.48
    """)
ASAH_WFNS = numbers("""
    1 1 1 1 3 2 5 4 1 2 5 2 5 5 1 2 5 2 2 5 2 1 1 1 1 2 1 2 1 1 3 4 2 1 4 5 4 1 4 2 5 5 1 1 2 4
    1 1 2 5 5 2 1 2 5 1 2 2 2 1 5 1 1 2 5 2 1 4 5 2 4 4 1 4 1 2 1 4 2 1 2 3 2 4 2 1 4 5 1 1 5 4
    2 2 1 1 1 3 1 2 5 2 2 5 5 5 2 4 4 5 1 1 1
    """)
ASAH_NDKA = numbers("""
    3.01 8.54 8.09 10.42 17.4 12.75 6 13.2 15.54 6.01 15.96 17.86 5.18 8.9 13.41 20.75 11.6
    16.11 32.37 54.82 32.41 49.94 40.34 9.47 6.29 12.53 6.54 6.3 80.3 12.8 9.8 9.81 9.85 18.21
    5.03 14.04 21.93 8.02 7.42 8.38 6.59 9.63 13.12 7.96 14.34 41.43 7.63 7.06 12.59 13.56 3.87
    9.44 7.66 12.98 419.19 27.19 22.27 9.95 21.22 11.73 10.4 58.83 6.39 11.09 12.22 13.67 17.21
    22.63 12.9 9.7 21.57 8.23 72.57 15.54 10.51 10.6 14.57 5.19 9.63 4.61 21.48 17.3 12.71 9.44
    11.07 19.46 10.83 5.37 11.97 7.75 9.83 10.55 28.49 8.53 12.57 12.9 46.83 11.68 12.67 9.01
    9.57 34.06 11.72 14.26 47.61 11.67 24.58 10.33 13.87 15.89 22.43 6.79 13.45
    """)

# What pROC's own tests expect (xrobin/pROC, tests/testthat/): test-var.R (var, DeLong),
# test-ci.auc.R (ci.auc of ndka), test-roc.test.R (roc.test(roc1, roc2): DeLong's paired
# test, Z = (AUC1 - AUC2) / se, with a confidence interval of AUC1 - AUC2); AUCs from
# helper-deLongPlacementsCpp-expected.R.
PROC_AUC = {"s100b": 0.731368563685637, "wfns": 0.823678861788618, "ndka": 0.611957994579946}
PROC_VAR = {"s100b": 0.00266868245717244, "wfns": 0.00146991470882363,
            "ndka": 0.0031908105493913}
PROC_CI_NDKA = (0.501244999271703, 0.722670989888189)
PROC_ROC_TEST = [  # (roc1, roc2, Z, p, conf.int of AUC1 - AUC2)
    ("wfns", "s100b", 2.20898359144091, 0.0271757822291882,
     (0.0104061769564846, 0.174214419249478)),
    ("wfns", "ndka", 2.79777591868904, 0.00514557970691098,
     (0.0634011709339876, 0.3600405634833566)),
    ("ndka", "s100b", -1.39077002573558, 0.164295175223054,
     (-0.2876917446341914, 0.0488706064228094)),
]
# pROC prints (its documentation and every tutorial): "Area under the curve: 0.7314",
# "95% CI: 0.6301-0.8326 (DeLong)" for roc(aSAH$outcome, aSAH$s100b, ci = TRUE).
PROC_PRINTED_S100B = (0.7314, 0.6301, 0.8326)


def asah(name: str) -> tuple[np.ndarray, np.ndarray]:
    y = np.array(ASAH_OUTCOME)
    x = np.array({"s100b": ASAH_S100B, "wfns": ASAH_WFNS, "ndka": ASAH_NDKA}[name])
    return x[y == 1], x[y == 0]


def test_the_data_is_procs():
    assert len(ASAH_OUTCOME) == len(ASAH_S100B) == len(ASAH_WFNS) == len(ASAH_NDKA) == 113
    assert sum(ASAH_OUTCOME) == 41


@pytest.mark.parametrize("name", ["s100b", "wfns", "ndka"])
def test_auc_and_variance_are_procs(name):
    aucs, covariance = auroc_delong(*asah(name))
    assert aucs[0] == pytest.approx(PROC_AUC[name], abs=1e-12)
    assert covariance[0, 0] == pytest.approx(PROC_VAR[name], rel=1e-12)
    i = delong_interval(*asah(name))
    assert i.std_error == pytest.approx(math.sqrt(PROC_VAR[name]), rel=1e-12)


def test_interval_is_procs():
    i = delong_interval(*asah("ndka"))
    assert abs(i.low - PROC_CI_NDKA[0]) < 1e-9 and abs(i.high - PROC_CI_NDKA[1]) < 1e-9
    printed = delong_interval(*asah("s100b"))
    assert tuple(round(v, 4) for v in (printed.estimate, printed.low, printed.high)) == (
        PROC_PRINTED_S100B)


@pytest.mark.parametrize(("roc1", "roc2", "z", "p", "ci"), PROC_ROC_TEST)
def test_paired_test_is_procs_roc_test(roc1, roc2, z, p, ci):
    pos_b, neg_b = asah(roc1)  # pROC tests roc1 - roc2: roc1 is our b, roc2 our a
    pos_a, neg_a = asah(roc2)
    r = paired_delong_test(pos_a, neg_a, pos_b, neg_b)
    assert r.statistic == pytest.approx(z, rel=1e-9)
    assert r.p_value == pytest.approx(p, rel=1e-9)
    assert abs(r.interval.low - ci[0]) < 1e-9 and abs(r.interval.high - ci[1]) < 1e-9
    assert r.estimate == pytest.approx(PROC_AUC[roc1] - PROC_AUC[roc2], abs=1e-12)
    swapped = paired_delong_test(pos_b, neg_b, pos_a, neg_a)
    assert swapped.statistic == pytest.approx(-z, rel=1e-9) and swapped.p_value == r.p_value


def test_identical_systems_give_z_0_and_p_1_as_proc():
    pos, neg = asah("wfns")
    r = paired_delong_test(pos, neg, pos, neg)
    assert (r.statistic, r.p_value, r.estimate) == (0.0, 1.0, 0.0)


# --- the direct O(n m) implementation from the 1988 paper -------------------------------------

def delong_by_definition(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """psi(X, Y) = 1 if X > Y, 1/2 if equal, 0 if less; V10(X_i) = mean_j psi(X_i, Y_j),
    V01(Y_j) = mean_i psi(X_i, Y_j); S10, S01 the sample covariances of the components across
    the k systems; S = S10 / m + S01 / n (DeLong et al. 1988, eqs. 2-5)."""
    k, m = pos.shape
    n = neg.shape[1]
    v10 = np.empty((k, m))
    v01 = np.empty((k, n))
    for r in range(k):
        psi = np.zeros((m, n))
        for i in range(m):
            for j in range(n):
                psi[i, j] = 1.0 if pos[r, i] > neg[r, j] else 0.5 if pos[r, i] == neg[r, j] else 0
        v10[r] = psi.mean(axis=1)
        v01[r] = psi.mean(axis=0)
    theta = v10.mean(axis=1)
    s10 = np.atleast_2d(np.cov(v10))
    s01 = np.atleast_2d(np.cov(v01))
    return theta, s10 / m + s01 / n


@pytest.mark.parametrize("seed", range(6))
def test_fast_algorithm_equals_the_definition_with_ties(seed):
    rng = np.random.default_rng(seed)
    m, n = rng.integers(2, 60, 2)
    signal = rng.normal(size=(2, m)) + 0.8
    pos = np.round(signal, 1 if seed % 2 else 0)  # rounding makes ties in and across classes
    neg = np.round(rng.normal(size=(2, n)), 1 if seed % 2 else 0)
    pos[1] = np.round(0.6 * pos[0] + rng.normal(size=m), 1)  # a correlated second system
    theta, covariance = auroc_delong(pos, neg)
    ref_theta, ref_covariance = delong_by_definition(pos, neg)
    np.testing.assert_allclose(theta, ref_theta, rtol=0, atol=1e-12)
    np.testing.assert_allclose(covariance, ref_covariance, rtol=1e-10, atol=1e-15)
    labels = np.r_[np.ones(m), np.zeros(n)]
    for r in range(2):
        assert theta[r] == pytest.approx(roc_auc_score(labels, np.r_[pos[r], neg[r]]), abs=1e-12)


def test_fast_algorithm_on_large_inputs_matches_mann_whitney():
    rng = np.random.default_rng(7)
    pos, neg = rng.normal(0.5, 1, 20_000).round(2), rng.normal(0, 1, 30_000).round(2)
    auc, _ = auroc_delong(pos, neg)
    u = stats.mannwhitneyu(pos, neg).statistic
    assert auc[0] == pytest.approx(u / (pos.size * neg.size), abs=1e-12)


def test_two_systems_sorted_in_threads_equal_one_after_the_other(monkeypatch):
    """Above ``PARALLEL_ROWS`` rows the systems' sorts run in threads, and the systems may come
    as a list of vectors (not stacked): the same AUROCs and covariance as one system after the
    other, and as ``np.cov`` of the stacked components."""
    from evalcli.uncertainty import intervals

    rng = np.random.default_rng(11)
    m, n = 90_000, 130_000
    pos = rng.normal(0.6, 1, (2, m)).round(3)
    neg = rng.normal(0.0, 1, (2, n)).round(3)
    pos[1] = (0.7 * pos[0] + rng.normal(0, 0.5, m)).round(3)
    assert m + n >= intervals.PARALLEL_ROWS
    threaded = auroc_delong([pos[0], pos[1]], [neg[0], neg[1]])
    monkeypatch.setattr(intervals, "PARALLEL_ROWS", 10**12)
    serial = auroc_delong(pos, neg)
    assert threaded[0].tolist() == serial[0].tolist()
    np.testing.assert_allclose(threaded[1], serial[1], rtol=1e-12, atol=0)
    labels = np.r_[np.ones(m), np.zeros(n)]
    for r in range(2):
        assert threaded[0][r] == pytest.approx(roc_auc_score(labels, np.r_[pos[r], neg[r]]),
                                               abs=1e-12)
        v10, v01 = intervals._placements(pos[r], neg[r])
        assert threaded[1][r, r] == pytest.approx(v10.var(ddof=1) / m + v01.var(ddof=1) / n,
                                                  rel=1e-12)


# --- from counts per distinct score (the engine's mergeable statistic) -------------------------

def counts_per_score(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scores = np.unique(np.r_[pos, neg])
    return (np.searchsorted(scores, pos)[:, None] == np.arange(scores.size)).sum(0), (
        np.searchsorted(scores, neg)[:, None] == np.arange(scores.size)).sum(0)


@pytest.mark.parametrize("name", ["s100b", "wfns", "ndka"])
def test_counts_per_score_give_procs_interval(name):
    i = delong_interval_counts(*counts_per_score(*asah(name)))
    assert i.estimate == pytest.approx(PROC_AUC[name], abs=1e-12)
    assert i.std_error == pytest.approx(math.sqrt(PROC_VAR[name]), rel=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_counts_per_score_equal_the_rows(seed):
    rng = np.random.default_rng(seed)
    pos = np.round(rng.normal(0.7, 1, rng.integers(2, 200)), 1)
    neg = np.round(rng.normal(0, 1, rng.integers(2, 200)), 1)
    rows, counts = delong_interval(pos, neg), delong_interval_counts(*counts_per_score(pos, neg))
    for field in ("estimate", "low", "high", "std_error"):
        assert getattr(counts, field) == pytest.approx(getattr(rows, field), abs=1e-12)


def test_counts_per_score_edge_cases():
    assert "only one class" in delong_interval_counts([0, 0], [3, 1]).reason
    one = delong_interval_counts([1, 0], [0, 3])
    assert one.estimate == 0.0 and "at least 2" in one.reason
    assert not delong_interval_counts([np.nan, 1], [1, 1]).defined
    with pytest.raises(ValueError):
        delong_interval_counts([1, 2], [1])


# --- undefined and degenerate cases -----------------------------------------------------------

def test_one_class_is_undefined_with_a_reason():
    i = delong_interval([], [0.2, 0.4])
    assert (i.estimate, i.low, i.high) == (None, None, None)
    assert i.reason == "only one class: no positive rows, AUROC is undefined"
    r = paired_delong_test([0.3, 0.5], [], [0.1, 0.2], [])
    assert r.p_value is None and "only one class" in r.reason


def test_nan_scores_are_undefined():
    assert delong_interval([0.3, float("nan")], [0.1, 0.2]).reason == (
        "NaN scores: AUROC is undefined")
    assert paired_delong_test([0.3, 0.5], [0.1, 0.2], [0.3, float("nan")], [0.1, 0.2]
                              ).reason == "NaN scores: AUROC is undefined"


def test_a_single_positive_has_an_auc_but_no_variance():
    i = delong_interval([0.7], [0.1, 0.9, 0.3])
    assert i.estimate == pytest.approx(2 / 3) and not i.defined
    assert "at least 2" in i.reason
    with pytest.raises(ValueError):
        auroc_delong([0.7], [0.1, 0.9])


def test_all_scores_tied_and_perfect_separation():
    tied = delong_interval([0.5, 0.5, 0.5], [0.5, 0.5])
    assert (tied.estimate, tied.low, tied.high, tied.std_error) == (0.5, 0.5, 0.5, 0.0)
    assert tied.note == "DeLong's variance is 0: the interval has no width"
    perfect = delong_interval([0.9, 0.8], [0.1, 0.2, 0.3])
    assert (perfect.estimate, perfect.low, perfect.high) == (1.0, 1.0, 1.0)
    constant_vs_perfect = paired_delong_test([0.9, 0.8], [0.1, 0.2], [0.5, 0.5], [0.5, 0.5])
    assert constant_vs_perfect.p_value is None and "normal approximation" in (
        constant_vs_perfect.reason)


def test_misaligned_systems_are_a_bug():
    with pytest.raises(ValueError):
        paired_delong_test([0.1, 0.2], [0.3, 0.4], [0.1], [0.3, 0.4])
