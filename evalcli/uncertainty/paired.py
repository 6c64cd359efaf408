"""Paired comparison of two systems on the same units, and corrections for many comparisons.

Every test compares system ``b`` (the candidate) with system ``a`` (the baseline) on the same
units and reports the difference ``b - a`` (``estimate``), a two-sided p-value for "no
difference", and for some tests an interval for the difference. Undefined cases (one value, one
class, NaN, differences that never vary) give a :class:`PairedResult` whose ``p_value`` is
``None`` and whose ``reason`` says why.

- :func:`paired_t_test`, :func:`wilcoxon_test`, :func:`sign_flip_test`: per-unit values (a
  ranking metric per query); the t-test and SciPy's Wilcoxon defaults; Fisher's randomization
  test by sign flips (exact when every flip can be enumerated), with its Monte-Carlo error.
- :func:`mcnemar_test`: accuracy-type proportions on the same rows.
- :func:`paired_delong_test`: two AUROCs on the same rows (DeLong et al. 1988).
- :func:`paired_bootstrap_test`: any metric, from the two systems' replicates under the same
  replicate weights (the random groups of :mod:`evalcli.uncertainty.groups`).
- :func:`adjust_p_values`: Holm (default), Bonferroni, Benjamini-Hochberg, none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import special  # type: ignore[import-untyped]

from evalcli.uncertainty.intervals import (
    Interval,
    NanPolicy,
    auroc_delong,
    mean_t_interval,
    percentile_interval,
)

__all__ = [
    "Correction",
    "McNemarMethod",
    "PairedResult",
    "adjust_p_values",
    "mcnemar_test",
    "paired_bootstrap_test",
    "paired_delong_test",
    "paired_t_test",
    "sign_flip_test",
    "wilcoxon_test",
]

Correction = Literal["holm", "bonferroni", "bh", "none"]
McNemarMethod = Literal["auto", "exact", "chi2"]
FloatArray = npt.NDArray[np.float64]
_TABLE_SLICE = 512  # blocks of 8 values per look-up step: 1 MB of table, cache-resident


@dataclass(frozen=True)
class PairedResult:
    """One paired comparison: the difference ``b - a``, the test's statistic and p-value.

    ``test`` names the test and its variant (``paired-t``, ``wilcoxon-exact``,
    ``sign-flip``, ``mcnemar-chi2``, ``delong-paired``, ``bootstrap-paired``...);
    ``statistic`` is its statistic (t, W = min(R+, R-), z, chi-square, the smaller discordant
    count, or the mean difference for sign flips and the bootstrap); ``n`` the pairs it saw
    (units or rows; replicates for the bootstrap). ``interval`` is the difference's confidence
    interval when the test gives one; ``mc_error`` the Monte-Carlo standard error of a
    p-value from random resamples (0 when every resample was enumerated).
    """

    test: str
    estimate: float | None
    statistic: float | None
    p_value: float | None
    n: int
    interval: Interval | None = None
    mc_error: float | None = None
    reason: str | None = None
    note: str | None = None

    @property
    def defined(self) -> bool:
        """Whether the test gave a p-value.

        >>> paired_t_test([0.5], [0.6]).defined
        False
        """
        return self.p_value is not None


def _pairs(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"a and b must be one-dimensional and of the same length, got shapes "
                         f"{x.shape} and {y.shape}")
    return y - x


def _differences(test: str, a: npt.ArrayLike, b: npt.ArrayLike, nan_policy: NanPolicy
                 ) -> tuple[FloatArray, str | None] | PairedResult:
    d = _pairs(a, b)
    missing = int(np.isnan(d).sum())
    if not missing:
        return d, None
    if nan_policy == "propagate":
        return PairedResult(test, None, None, None, d.size,
                            reason=f"{missing} of {d.size} pairs have a NaN value")
    return d[~np.isnan(d)], f"{missing} pairs with a NaN value left out"


def paired_t_test(a: npt.ArrayLike, b: npt.ArrayLike, level: float = 0.95, *,
                  nan_policy: NanPolicy = "propagate") -> PairedResult:
    """Student's paired t-test on per-unit values: ``t = mean(d) / (sd(d) / sqrt(n))``,
    ``d = b - a``, ``n - 1`` degrees of freedom; the interval is the t interval of ``mean(d)``.

    >>> r = paired_t_test([0.2, 0.4, 0.5, 0.3, 0.6], [0.3, 0.5, 0.5, 0.5, 0.7])
    >>> round(r.estimate, 3), round(r.statistic, 4), round(r.p_value, 4)
    (0.1, 3.1623, 0.0341)
    >>> paired_t_test([0.2, 0.4], [0.3, 0.5]).reason
    'the differences do not vary: the t statistic is undefined'
    """
    test = "paired-t"
    got = _differences(test, a, b, nan_policy)
    if isinstance(got, PairedResult):
        return got
    d, note = got
    interval = mean_t_interval(d, level)
    n = d.size
    if n < 2:
        return PairedResult(test, interval.estimate, None, None, n, interval,
                            reason="fewer than two pairs: the t-test needs two", note=note)
    if interval.estimate is None or interval.std_error is None:  # NaN can't reach here
        return PairedResult(test, None, None, None, n, interval, reason=interval.reason,
                            note=note)
    if interval.std_error == 0.0:
        return PairedResult(test, interval.estimate, None, None, n, interval,
                            reason="the differences do not vary: the t statistic is undefined",
                            note=note)
    t = interval.estimate / interval.std_error
    p = min(1.0, 2.0 * float(special.stdtr(n - 1, -abs(t))))
    return PairedResult(test, interval.estimate, t, p, n, interval, note=note)


def _signed_rank_distribution(n: int) -> npt.NDArray[np.int64]:
    """How many of the 2**n sign patterns give each signed-rank sum 0..n(n+1)/2."""
    counts = np.zeros(n * (n + 1) // 2 + 1, dtype=np.int64)
    counts[0] = 1
    for k in range(1, n + 1):  # add rank k: a subset-sum recurrence over ranks, not rows
        counts[k:] = counts[k:] + counts[:-k].copy()
    return counts


def wilcoxon_test(a: npt.ArrayLike, b: npt.ArrayLike, *,
                  nan_policy: NanPolicy = "propagate") -> PairedResult:
    """Wilcoxon's signed-rank test on ``d = b - a``, as ``scipy.stats.wilcoxon``'s defaults.

    Zero differences are dropped before ranking (``zero_method="wilcox"``), ties get midranks,
    and the p-value is two-sided, without continuity correction: exact (the signed-rank
    distribution) when there are at most 50 pairs and neither zeros nor ties; the exact
    sign-flip distribution of the statistic when there are zeros or ties and at most 13 pairs;
    the normal approximation with the tie correction otherwise. ``statistic`` is
    ``min(R+, R-)``, as SciPy reports; ``estimate`` the mean difference.

    >>> r = wilcoxon_test([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0.2, 0.4, 0.2, 0.8, 1.0, 1.2])
    >>> r.statistic, round(r.p_value, 4), r.test
    (1.0, 0.0625, 'wilcoxon-exact')
    """
    got = _differences("wilcoxon", a, b, nan_policy)
    if isinstance(got, PairedResult):
        return got
    d, note = got
    n_all = d.size
    if n_all == 0:
        return PairedResult("wilcoxon", None, None, None, 0, reason="no pairs", note=note)
    estimate = float(d.mean())
    nonzero = d[d != 0.0]
    count = nonzero.size
    if count == 0:
        return PairedResult("wilcoxon", estimate, None, None, n_all, note=note,
                            reason="every difference is zero: the signed-rank test is undefined")
    magnitude = np.abs(nonzero)
    order = np.argsort(magnitude, kind="mergesort")
    ordered = magnitude[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1], [True])))
    ties = np.diff(starts)
    ranks = np.empty(count)
    ranks[order] = np.repeat((starts[:-1] + starts[1:] + 1) / 2.0, ties)
    r_plus = float(ranks[nonzero > 0].sum())
    r_minus = float(ranks[nonzero < 0].sum())
    has_ties_or_zeros = bool((ties > 1).any()) or count < n_all
    if n_all <= 50 and not has_ties_or_zeros:
        test = "wilcoxon-exact"
        counts = _signed_rank_distribution(count).astype(np.float64) / 2.0**count
        low = float(counts[: math.ceil(r_plus) + 1].sum())  # P(R+ <= r+)
        high = float(counts[math.floor(r_plus):].sum())  # P(R+ >= r+)
        p = min(1.0, 2.0 * min(low, high))
    elif n_all <= 13:
        test = "wilcoxon-permutation"
        bits = (np.arange(2**count)[:, None] >> np.arange(count)[None, :]) & 1
        null = bits.astype(np.float64) @ ranks  # R+ under each sign pattern of the non-zeros
        gamma = abs(r_plus) * 100.0 * np.finfo(np.float64).eps
        low = float(np.count_nonzero(null <= r_plus + gamma)) / null.size
        high = float(np.count_nonzero(null >= r_plus - gamma)) / null.size
        p = min(1.0, 2.0 * min(low, high))
    else:
        test = "wilcoxon-normal"
        mean = count * (count + 1) / 4.0
        variance = (count * (count + 1) * (2 * count + 1) - float((ties**3 - ties).sum()) / 2.0
                    ) / 24.0
        z = (r_plus - mean) / math.sqrt(variance)
        p = min(1.0, 2.0 * float(special.ndtr(-abs(z))))
    return PairedResult(test, estimate, min(r_plus, r_minus), p, n_all, note=note)


def _byte_table(d: FloatArray) -> FloatArray:
    """For each block of 8 values of ``d``, the 256 sums ``sum_j b_j d_j`` over the bits ``b``
    of a byte (bit ``j`` goes with value ``8 k + j``): a ``(ceil(n / 8), 256)`` table."""
    blocks = -(-d.size // 8)
    padded = np.zeros(blocks * 8)
    padded[: d.size] = d
    patterns = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)
    table: FloatArray = padded.reshape(blocks, 8) @ patterns.T
    return table


def _flipped_sums(table: FloatArray, rng: np.random.Generator, rows: int) -> FloatArray:
    """``sum_i b_i d_i`` for ``rows`` random bit vectors ``b``, drawn from the generator's raw
    64-bit stream (stable across NumPy versions) one byte per block of the table: a pattern
    costs ``n / 8`` look-ups instead of ``n`` multiply-adds, and no bit is unpacked. The
    look-ups go a slice of blocks at a time, for all patterns, so the slice of the table they
    read stays in the processor's cache."""
    blocks = table.shape[0]
    words = -(-blocks // 8)
    raw = rng.bit_generator.random_raw(rows * words).astype("<u8", copy=False)
    data = raw.view(np.uint8).reshape(rows, words * 8)
    out = np.zeros(rows)
    for start in range(0, blocks, _TABLE_SLICE):  # a few steps per 10**4 values, not per row
        stop = min(blocks, start + _TABLE_SLICE)
        part = table[start:stop]
        out += part[np.arange(stop - start)[:, None], data[:, start:stop].T].sum(axis=0)
    return out


def sign_flip_test(a: npt.ArrayLike, b: npt.ArrayLike, *, permutations: int = 10_000,
                   seed: int = 0, nan_policy: NanPolicy = "propagate") -> PairedResult:
    """Fisher's randomization test of the mean difference, by flipping the signs of ``d``.

    Under "no difference" each pair's two values are exchangeable, so ``d`` and ``-d`` are
    equally likely. The p-value is the share of sign patterns whose ``|mean|`` is at least the
    observed one: over all ``2**n`` patterns when that is at most ``permutations`` (exact,
    ``mc_error`` 0), else over ``permutations`` random patterns from ``PCG64(seed)``, counted
    with the observed one, ``(1 + hits) / (1 + permutations)`` (never 0, valid at any size),
    with Monte-Carlo error ``sqrt(p (1 - p) / permutations)``. This is the test ranx calls
    ``fisher`` (Smucker, Allan & Carterette 2007).

    >>> r = sign_flip_test([0.2, 0.4, 0.5, 0.3, 0.6], [0.3, 0.5, 0.5, 0.5, 0.7])
    >>> r.p_value, r.mc_error, r.test
    (0.125, 0.0, 'sign-flip-exact')
    >>> a = np.linspace(0.2, 0.8, 40)
    >>> r = sign_flip_test(a, a + np.sin(np.arange(40)) / 10 + 0.03, seed=1)
    >>> round(r.p_value, 3), round(r.mc_error, 4), r.test
    (0.007, 0.0008, 'sign-flip')
    """
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations}")
    got = _differences("sign-flip", a, b, nan_policy)
    if isinstance(got, PairedResult):
        return got
    d, note = got
    n = d.size
    if n == 0:
        return PairedResult("sign-flip", None, None, None, 0, reason="no pairs", note=note)
    observed = float(d.mean())
    total = float(d.sum())
    gamma = 1e-9 * float(np.abs(d).sum())  # rounding of sums, far below any real difference
    threshold = abs(total) - gamma
    exact = n < 63 and 2**n <= permutations
    rows = 2**n if exact else permutations
    rng = np.random.Generator(np.random.PCG64(seed))
    # patterns per step: about 16 MB of bits (MC) or of the enumerated 0/1 matrix (exact)
    chunk = max(1, (1 << 24) // -(-n // 8)) if not exact else max(1, (1 << 21) // n)
    table = np.empty((0, 256)) if exact else _byte_table(d)
    hits = 0
    for start in range(0, rows, chunk):
        size = min(chunk, rows - start)
        if exact:
            index = np.arange(start, start + size, dtype=np.int64)
            bits = ((index[:, None] >> np.arange(n)[None, :]) & 1).astype(np.float64)
            picked = bits @ d
        else:
            picked = _flipped_sums(table, rng, size)
        flipped = total - 2.0 * picked  # sum of s_i d_i with s_i = 1 - 2 b_i
        hits += int(np.count_nonzero(np.abs(flipped) >= threshold))
    if exact:
        return PairedResult("sign-flip-exact", observed, observed, hits / rows, n, mc_error=0.0,
                            note=note)
    p = (1 + hits) / (1 + rows)
    return PairedResult("sign-flip", observed, observed, p, n,
                        mc_error=math.sqrt(p * (1.0 - p) / rows), note=note)


def mcnemar_test(a_only: int, b_only: int, total: int, level: float = 0.95, *,
                 method: McNemarMethod = "auto", correction: bool = False) -> PairedResult:
    """McNemar's test for two proportions on the same rows (accuracy, recall...).

    ``a_only`` rows are right under ``a`` only, ``b_only`` under ``b`` only, of ``total``
    paired rows; the difference is ``(b_only - a_only) / total``. Only the discordant rows
    carry evidence: under "no difference" ``b_only`` is Binomial(``a_only + b_only``, 1/2).
    ``exact``: twice the smaller binomial tail (capped at 1); ``chi2``:
    ``(|b - a| - c)^2 / (a + b)`` on 1 degree of freedom, with ``c = 1`` under ``correction``
    (Edwards; ``|b - a| - 1`` floored at 0) and 0 otherwise, the default (the uncorrected
    test holds its level better: Fagerland, Lydersen & Laake 2013). ``auto`` is exact below 25
    discordant rows, else chi-square. The interval is Agresti & Min's (2005) Wald interval for
    the difference with 1/2 added to each of the four cells.

    >>> r = mcnemar_test(a_only=3, b_only=12, total=100)
    >>> r.test, r.estimate, round(r.p_value, 4)
    ('mcnemar-exact', 0.09, 0.0352)
    >>> round(r.interval.low, 4), round(r.interval.high, 4)
    (0.0133, 0.1632)
    >>> mcnemar_test(a_only=30, b_only=52, total=400).test
    'mcnemar-chi2'
    """
    if min(a_only, b_only) < 0 or a_only + b_only > total:
        raise ValueError(f"need 0 <= a_only, b_only and a_only + b_only <= total, got "
                         f"{a_only}, {b_only} and {total}")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    discordant = a_only + b_only
    if method == "auto":
        method = "exact" if discordant < 25 else "chi2"
    test = f"mcnemar-{method}"
    if total == 0:
        return PairedResult(test, None, None, None, 0, reason="no rows")
    estimate = (b_only - a_only) / total
    # Agresti & Min: add 1/2 to each cell; n grows by 2.
    n_adj = total + 2.0
    p12, p21 = (a_only + 0.5) / n_adj, (b_only + 0.5) / n_adj
    se_adj = math.sqrt(max(0.0, (p12 + p21 - (p21 - p12) ** 2) / n_adj))
    half = float(special.ndtri(0.5 + level / 2.0)) * se_adj
    center = p21 - p12
    interval = Interval(estimate, max(-1.0, center - half), min(1.0, center + half), level,
                        "agresti-min", std_error=math.sqrt(max(
                            0.0, (discordant / total - estimate**2) / total)))
    if discordant == 0:
        return PairedResult(test, estimate, 0.0, 1.0, total, interval,
                            note="no discordant rows: no evidence of a difference")
    if method == "exact":
        smaller = min(a_only, b_only)
        p = min(1.0, 2.0 * float(special.bdtr(smaller, discordant, 0.5)))
        return PairedResult(test, estimate, float(smaller), p, total, interval)
    if method != "chi2":
        raise ValueError(f"method must be 'auto', 'exact' or 'chi2', got {method!r}")
    gap = max(0.0, abs(b_only - a_only) - (1.0 if correction else 0.0))
    statistic = gap * gap / discordant
    p = float(special.chdtrc(1, statistic))
    return PairedResult(test, estimate, statistic, p, total, interval)


def paired_delong_test(positives_a: npt.ArrayLike, negatives_a: npt.ArrayLike,
                       positives_b: npt.ArrayLike, negatives_b: npt.ArrayLike,
                       level: float = 0.95) -> PairedResult:
    """DeLong's test for two AUROCs on the same rows: ``z = (AUC_b - AUC_a) / se``.

    ``positives_a[i]`` and ``positives_b[i]`` are the two systems' scores for the same positive
    row (likewise the negatives); ``se^2 = S_aa + S_bb - 2 S_ab`` from DeLong's covariance
    (:func:`evalcli.uncertainty.intervals.auroc_delong`); the interval is
    ``delta +- z * se``, as pROC's ``roc.test``. Identical systems give ``z = 0, p = 1``.
    The work is :func:`delong_components` (the sorts; once for any number of levels), then
    :func:`paired_delong_result` at the level.

    >>> r = paired_delong_test([0.9, 0.8, 0.6, 0.7], [0.1, 0.4, 0.65, 0.5],
    ...                        [0.9, 0.5, 0.6, 0.2], [0.1, 0.4, 0.65, 0.5])
    >>> round(r.estimate, 4), round(r.statistic, 4), round(r.p_value, 4)
    (-0.2812, -1.3466, 0.1781)
    """
    return paired_delong_result(
        delong_components(positives_a, negatives_a, positives_b, negatives_b), level)


@dataclass(frozen=True)
class DelongComponents:
    """What DeLong's paired test needs from the rows: both AUROCs, their 2 x 2 covariance,
    and the numbers of positive and negative rows."""

    aucs: FloatArray
    covariance: FloatArray
    rows: int


def delong_components(positives_a: npt.ArrayLike, negatives_a: npt.ArrayLike,
                      positives_b: npt.ArrayLike, negatives_b: npt.ArrayLike
                      ) -> DelongComponents | PairedResult:
    """The level-free part of :func:`paired_delong_test` (one sort per system): its
    components, or the undefined result when the test does not apply."""
    test = "delong-paired"
    xs = [np.asarray(v, dtype=np.float64) for v in (positives_a, positives_b)]
    ys = [np.asarray(v, dtype=np.float64) for v in (negatives_a, negatives_b)]
    if any(v.ndim != 1 for v in (*xs, *ys)) or xs[0].shape != xs[1].shape or (
            ys[0].shape != ys[1].shape):
        raise ValueError("each system needs one score per row, the same positive and negative "
                         f"rows: got {[v.shape for v in xs]} and {[v.shape for v in ys]}")
    m, n = xs[0].size, ys[0].size
    if m == 0 or n == 0:
        return PairedResult(test, None, None, None, m + n,
                            reason=f"only one class: {m} positive and {n} negative rows, "
                            "AUROC is undefined")
    if any(np.isnan(v).any() for v in (*xs, *ys)):
        return PairedResult(test, None, None, None, m + n,
                            reason="NaN scores: AUROC is undefined")
    if m < 2 or n < 2:
        return PairedResult(test, None, None, None, m + n,
                            reason=f"{m} positive and {n} negative rows: DeLong's variance "
                            "needs at least 2 of each")
    aucs, s = auroc_delong(xs, ys)
    return DelongComponents(aucs, s, m + n)


def paired_delong_result(parts: DelongComponents | PairedResult, level: float = 0.95
                         ) -> PairedResult:
    """:func:`paired_delong_test` at ``level`` from its :func:`delong_components`."""
    test = "delong-paired"
    if isinstance(parts, PairedResult):
        return parts
    aucs, s, rows = parts.aucs, parts.covariance, parts.rows
    delta = float(aucs[1] - aucs[0])
    variance = max(0.0, float(s[0, 0] + s[1, 1] - 2.0 * s[0, 1]))
    if variance == 0.0:
        if delta == 0.0:
            interval = Interval(delta, 0.0, 0.0, level, "delong-paired", std_error=0.0)
            return PairedResult(test, 0.0, 0.0, 1.0, rows, interval,
                                note="the two systems rank the rows alike: no difference")
        return PairedResult(test, delta, None, None, rows,
                            reason="DeLong's variance of the difference is 0 with a non-zero "
                            "difference: the normal approximation does not apply")
    se = math.sqrt(variance)
    z = delta / se
    half = float(special.ndtri(0.5 + level / 2.0)) * se
    interval = Interval(delta, delta - half, delta + half, level, "delong-paired", std_error=se)
    return PairedResult(test, delta, z, min(1.0, 2.0 * float(special.ndtr(-abs(z)))), rows,
                        interval)


def paired_bootstrap_test(replicates_a: npt.ArrayLike, replicates_b: npt.ArrayLike,
                          estimate_a: float, estimate_b: float, level: float = 0.95, *,
                          max_undefined: float = 0.1) -> PairedResult:
    """The paired bootstrap: both systems' replicates under the same replicate weights.

    ``replicates_a[r]`` and ``replicates_b[r]`` are the metric of each system finalized from
    replicate ``r``'s summed group statistics (the same weights for both, so the pairing by
    unit is kept). The interval is the percentile interval of ``b - a``; the p-value inverts
    it: ``2 (1 + min(#{d_r <= 0}, #{d_r >= 0})) / (1 + R)``, capped at 1, so that ``p <= 1 -
    level`` exactly when 0 is outside the interval (up to one replicate). Its Monte-Carlo
    error is ``sqrt(p (1 - p) / R)``.

    >>> rng = np.random.default_rng(0)
    >>> ra = rng.normal(0.80, 0.010, 1000)
    >>> rb = ra + rng.normal(0.02, 0.005, 1000)
    >>> r = paired_bootstrap_test(ra, rb, 0.80, 0.82)
    >>> round(r.estimate, 4), round(r.interval.low, 3), round(r.interval.high, 3), r.p_value
    (0.02, 0.01, 0.03, 0.001998001998001998)
    """
    ra = np.asarray(replicates_a, dtype=np.float64)
    rb = np.asarray(replicates_b, dtype=np.float64)
    if ra.ndim != 1 or ra.shape != rb.shape:
        raise ValueError(f"the replicates must be two vectors of the same length, got shapes "
                         f"{ra.shape} and {rb.shape}")
    test = "bootstrap-paired"
    delta = float(estimate_b) - float(estimate_a)
    d = rb - ra
    interval = percentile_interval(d, delta, level, max_undefined=max_undefined,
                                   method="bootstrap-paired")
    if not interval.defined:
        return PairedResult(test, None if math.isnan(delta) else delta, None, None, d.size,
                            interval, reason=interval.reason)
    kept = d[~np.isnan(d)]
    extreme = min(np.count_nonzero(kept <= 0.0), np.count_nonzero(kept >= 0.0))
    p = min(1.0, 2.0 * float(1 + extreme) / (1 + kept.size))
    return PairedResult(test, delta, delta, p, kept.size, interval,
                        mc_error=math.sqrt(p * (1.0 - p) / kept.size), note=interval.note)


def adjust_p_values(p_values: npt.ArrayLike, method: Correction = "holm") -> FloatArray:
    """P-values adjusted for multiple comparisons (systems x metrics), in the input's order.

    ``holm`` (the default; controls the family-wise error under any dependence, uniformly
    more powerful than ``bonferroni``), ``bonferroni`` (``m p``), ``bh`` (Benjamini-Hochberg:
    controls the false discovery rate), ``none``. NaN p-values (undefined tests) stay NaN and
    do not count in ``m``. Adjusted values are capped at 1.

    >>> adjust_p_values([0.01, 0.04, 0.03, float("nan")]).tolist()
    [0.03, 0.06, 0.06, nan]
    >>> adjust_p_values([0.01, 0.04, 0.03], "bh").tolist()
    [0.03, 0.04, 0.04]
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p_values must be one-dimensional, got shape {p.shape}")
    valid = ~np.isnan(p)
    if ((p[valid] < 0.0) | (p[valid] > 1.0)).any():
        raise ValueError("p-values must lie in [0, 1]")
    out = p.copy()
    values = p[valid]
    m = values.size
    if method == "none" or m == 0:
        return out
    if method == "bonferroni":
        adjusted = np.minimum(1.0, m * values)
    elif method in ("holm", "bh"):
        order = np.argsort(values, kind="mergesort")
        ranked = values[order]
        if method == "holm":
            scaled = np.maximum.accumulate((m - np.arange(m)) * ranked)
        else:
            scaled = np.minimum.accumulate((m / np.arange(1, m + 1) * ranked)[::-1])[::-1]
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(1.0, scaled)
    else:
        raise ValueError(f"method must be 'holm', 'bonferroni', 'bh' or 'none', got {method!r}")
    out[valid] = adjusted
    return out
