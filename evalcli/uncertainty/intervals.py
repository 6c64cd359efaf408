"""Confidence intervals: bootstrap (percentile, BCa), normal and t, Wilson, DeLong for AUROC.

Every function returns an :class:`Interval`. When the data cannot give one (one class only, a
single value, NaN), the interval's bounds are ``None`` and ``reason`` says why; when it can, but
with a caveat (no variation, bounds clipped to [0, 1], replicates left out), ``note`` says so.
A level outside (0, 1) or arrays of the wrong shape are the caller's bug: ``ValueError``.

References: Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13-14 (percentile
and BCa intervals); Wilson (1927); DeLong, DeLong & Clarke-Pearson (1988), Biometrics 44(3),
837-845, with the O(n log n) algorithm of Sun & Xu (2014), IEEE Signal Processing Letters 21(11),
1389-1393.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import special  # type: ignore[import-untyped]

__all__ = [
    "Interval",
    "NanPolicy",
    "auroc_delong",
    "bca_interval",
    "delong_interval",
    "delong_interval_counts",
    "jackknife_acceleration",
    "mean_t_interval",
    "normal_interval",
    "percentile_interval",
    "t_interval",
    "wilson_interval",
    "wilson_interval_clustered",
]

NanPolicy = Literal["propagate", "omit"]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval for one value, or the reason there is none.

    ``std_error`` is the estimate's standard error (for a bootstrap, the replicates' standard
    deviation); ``mc_error`` the Monte-Carlo standard error of the bounds when they come from
    random replicates (``None`` for closed forms).
    """

    estimate: float | None
    low: float | None
    high: float | None
    level: float
    method: str
    std_error: float | None = None
    mc_error: float | None = None
    reason: str | None = None
    note: str | None = None

    @property
    def defined(self) -> bool:
        """Whether the interval has bounds.

        >>> wilson_interval(0, 0).defined
        False
        """
        return self.low is not None and self.high is not None

    def to_dict(self) -> dict[str, float | str | None]:
        """The report's ``ci`` object: low, high, level, method (and reason or note if any).

        >>> normal_interval(0.5, 0.0, level=0.9).to_dict()
        {'low': 0.5, 'high': 0.5, 'level': 0.9, 'method': 'normal'}
        """
        out: dict[str, float | str | None] = {
            "low": self.low, "high": self.high, "level": self.level, "method": self.method}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.note is not None:
            out["note"] = self.note
        return out


def _check_level(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return float(level)


def _undefined(estimate: float | None, level: float, method: str, reason: str) -> Interval:
    return Interval(estimate, None, None, level, method, reason=reason)


def _finite_or_none(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _vector(values: npt.ArrayLike, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    return array


def _z(level: float) -> float:
    return float(special.ndtri(0.5 + level / 2.0))


def normal_interval(estimate: float, std_error: float, level: float = 0.95, *,
                    method: str = "normal") -> Interval:
    """``estimate +- z * std_error`` with ``z`` the normal quantile at ``(1 + level) / 2``.

    >>> i = normal_interval(0.8, 0.02)
    >>> round(i.low, 4), round(i.high, 4)
    (0.7608, 0.8392)
    """
    level = _check_level(level)
    if math.isnan(estimate) or math.isnan(std_error) or std_error < 0:
        return _undefined(_finite_or_none(estimate), level, method,
                          f"no standard error (estimate {estimate}, standard error {std_error})")
    half = _z(level) * std_error
    return Interval(float(estimate), estimate - half, estimate + half, level, method,
                    std_error=float(std_error))


def t_interval(estimate: float, std_error: float, df: float, level: float = 0.95, *,
               method: str = "t") -> Interval:
    """``estimate +- t * std_error`` with ``t`` Student's quantile at ``(1 + level) / 2``.

    >>> i = t_interval(10.0, 1.0, df=5)
    >>> round(i.low, 4), round(i.high, 4)
    (7.4294, 12.5706)
    """
    level = _check_level(level)
    if math.isnan(estimate) or math.isnan(std_error) or std_error < 0 or not df > 0:
        return _undefined(_finite_or_none(estimate), level, method,
                          f"no standard error (estimate {estimate}, standard error {std_error}, "
                          f"{df} degrees of freedom)")
    half = float(special.stdtrit(df, 0.5 + level / 2.0)) * std_error
    return Interval(float(estimate), estimate - half, estimate + half, level, method,
                    std_error=float(std_error))


def mean_t_interval(values: npt.ArrayLike, level: float = 0.95, *,
                    nan_policy: NanPolicy = "propagate") -> Interval:
    """The t interval for the mean of per-unit values (a ranking metric's per-query values).

    ``mean +- t(n - 1) * s / sqrt(n)``, ``s`` the sample standard deviation. NaN values make it
    undefined, or are left out with ``nan_policy="omit"`` (said in the note).

    >>> i = mean_t_interval([0.2, 0.4, 0.9, 0.5])
    >>> round(i.estimate, 4), round(i.low, 4), round(i.high, 4), round(i.std_error, 4)
    (0.5, 0.0316, 0.9684, 0.1472)
    >>> mean_t_interval([0.7]).reason
    'one value: its variance cannot be estimated'
    >>> mean_t_interval([0.5, 0.5, 0.5]).note
    'all values are equal: the interval has no width'
    """
    level = _check_level(level)
    x = _vector(values, "values")
    method = "t"
    missing = int(np.isnan(x).sum())
    note = None
    if missing:
        if nan_policy == "propagate":
            return _undefined(None, level, method, f"{missing} of {x.size} values are NaN")
        x = x[~np.isnan(x)]
        note = f"{missing} NaN values left out"
    n = x.size
    if n == 0:
        return _undefined(None, level, method, "no values")
    if n == 1:
        return _undefined(float(x[0]), level, method,
                          "one value: its variance cannot be estimated")
    if x.min() == x.max():  # exactly, not up to the rounding of a mean and a variance
        mean = float(x[0])
        return Interval(mean, mean, mean, level, method, std_error=0.0,
                        note=_join(note, "all values are equal: the interval has no width"))
    mean = float(x.mean())
    std_error = float(x.std(ddof=1)) / math.sqrt(n)
    interval = t_interval(mean, std_error, n - 1, level)
    return Interval(mean, interval.low, interval.high, level, method, std_error=std_error,
                    note=note)


def _join(*notes: str | None) -> str | None:
    kept = [n for n in notes if n]
    return "; ".join(kept) if kept else None


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    z2 = z * z
    denominator = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denominator
    # at p = 0 (or 1) the bound is exactly 0 (or 1); the formula leaves a rounding residue
    low = 0.0 if p == 0.0 else max(0.0, center - half)
    high = 1.0 if p == 1.0 else min(1.0, center + half)
    return low, high


def wilson_interval(successes: float, total: float, level: float = 0.95) -> Interval:
    """Wilson's score interval for a proportion ``successes / total`` (accuracy, recall...).

    ``(p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``; good coverage down to small
    ``n`` and at ``p`` near 0 or 1, where the normal (Wald) interval fails. ``std_error`` is
    ``sqrt(p(1-p)/n)``. The counts are of independent rows; for weighted rows, or rows
    clustered in users or queries, use :func:`wilson_interval_clustered`.

    >>> i = wilson_interval(81, 100)
    >>> round(i.low, 4), round(i.high, 4)
    (0.7222, 0.8749)
    >>> wilson_interval(0, 20).low, round(wilson_interval(0, 20).high, 4)
    (0.0, 0.1611)
    >>> wilson_interval(0, 0).reason
    'no rows: the proportion is undefined'
    """
    level = _check_level(level)
    method = "wilson"
    if math.isnan(successes) or math.isnan(total):
        return _undefined(None, level, method, "the counts are NaN")
    if total < 0 or successes < 0 or successes > total:
        raise ValueError(f"need 0 <= successes <= total, got {successes} of {total}")
    if total == 0:
        return _undefined(None, level, method, "no rows: the proportion is undefined")
    p = successes / total
    low, high = _wilson(p, total, _z(level))
    return Interval(p, low, high, level, method, std_error=math.sqrt(p * (1.0 - p) / total))


def wilson_interval_clustered(successes: npt.ArrayLike, totals: npt.ArrayLike,
                              level: float = 0.95) -> Interval:
    """Wilson's interval at the effective sample size of clustered or weighted rows.

    ``successes[c]`` and ``totals[c]`` are the sums over cluster ``c`` (a user, or one of the
    random groups of whole units) of ``w * y`` and ``w`` (``w = 1`` unweighted). The proportion
    ``p = sum(successes) / sum(totals)`` is a ratio estimator; its variance by linearization
    with the clusters as independent units (Cochran 1977, 6.13; the sandwich estimator with
    the small-sample factor ``C / (C - 1)``) is
    ``V = C / (C - 1) * sum_c (successes[c] - p * totals[c])^2 / sum(totals)^2``,
    and the design effect gives the effective number of rows ``n_eff = p (1 - p) / V``, at
    which Wilson's interval is taken (Korn & Graubard 1998). With every row its own cluster
    and no weights, ``n_eff = n - 1``: the plain interval, a hair wider. When the clusters do not
    vary (``V = 0``, e.g. ``p`` is 0 or 1), ``n_eff`` is the number of clusters (conservative).

    >>> hits = [9, 1, 8, 0, 10, 2]   # 6 users with 10 rows each: success clusters by user
    >>> rows = [10, 10, 10, 10, 10, 10]
    >>> clustered = wilson_interval_clustered(hits, rows)
    >>> naive = wilson_interval(sum(hits), sum(rows))
    >>> round(clustered.high - clustered.low, 3), round(naive.high - naive.low, 3)
    (0.582, 0.245)
    """
    level = _check_level(level)
    method = "wilson-clustered"
    s = _vector(successes, "successes")
    t = _vector(totals, "totals")
    if s.shape != t.shape:
        raise ValueError(f"successes and totals differ in length: {s.size} and {t.size}")
    if np.isnan(s).any() or np.isnan(t).any():
        return _undefined(None, level, method, "the counts are NaN")
    if (t < 0).any() or (s < 0).any() or (s > t).any():
        raise ValueError("need 0 <= successes <= totals in every cluster")
    kept = t > 0
    s, t = s[kept], t[kept]
    clusters, total = s.size, float(t.sum())
    if clusters == 0:
        return _undefined(None, level, method, "no rows: the proportion is undefined")
    p = float(s.sum()) / total
    if clusters < 2:
        return _undefined(p, level, method, "one cluster: the variance cannot be estimated")
    variance = clusters / (clusters - 1) * float(((s - p * t) ** 2).sum()) / total**2
    note = None
    if variance > 0.0:
        n_eff = p * (1.0 - p) / variance
    else:
        n_eff = float(clusters)
        variance = p * (1.0 - p) / n_eff
        note = "no variation between clusters: the number of clusters is used as the sample size"
    low, high = _wilson(p, n_eff, _z(level))
    return Interval(p, low, high, level, method, std_error=math.sqrt(variance), note=note)


def _placements(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """DeLong's structural components of one system from one sort of its ``m + n`` scores:
    ``V10_i = (negatives below x_i + negatives equal to x_i / 2) / n`` per positive and
    ``V01_j = (positives above y_j + positives equal to y_j / 2) / m`` per negative, in the
    input order. (Sun & Xu write them with midranks, ``(Tz - Tx) / n``: the same numbers; one
    sort whose order within ties does not matter replaces their three stable ones.)

    >>> v10, v01 = _placements(np.array([0.9, 0.5]), np.array([0.5, 0.1, 0.7]))
    >>> v10.tolist(), v01.tolist()
    ([1.0, 0.5], [0.75, 1.0, 0.5])
    """
    m, n = x.size, y.size
    z = np.concatenate((x, y))
    order = np.argsort(z)
    ordered = z[order]
    positive = order < m
    new_run = np.empty(z.size, dtype=bool)
    new_run[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new_run[1:])
    del ordered
    # (counts in 32 bits where they fit: fewer fresh pages to fault in, 10^7 rows at a time)
    count: Any = np.int32 if z.size < 2**31 else np.int64
    pos_cum = np.cumsum(positive, dtype=count)  # positives at or before each place
    out = np.empty(z.size, dtype=np.float64)
    if new_run.all():  # no ties (continuous scores): each place is its own run
        neg_below = np.arange(z.size, dtype=count) - (pos_cum - positive)
        out[order] = np.where(positive, neg_below / n, (m - pos_cum) / m)
        return out[:m], out[m:]
    starts = np.flatnonzero(new_run)
    ends = np.append(starts[1:], z.size) - 1
    pos_before = pos_cum[starts] - positive[starts]
    pos_in = pos_cum[ends] - pos_before
    neg_in = ends - starts + 1 - pos_in
    # each run's two values side by side (a negative's, a positive's), gathered once by
    # (run, class) instead of two full-length repeats and a choice between them
    values = np.empty((starts.size, 2))
    values[:, 0] = (m - pos_cum[ends] + 0.5 * pos_in) / m  # positives above, ties half
    values[:, 1] = (starts - pos_before + 0.5 * neg_in) / n  # negatives below, ties half
    del pos_cum
    at = np.cumsum(new_run, dtype=count)
    at -= 1
    at *= 2
    at += positive
    out[order] = values.ravel()[at]
    return out[:m], out[m:]


def auroc_delong(positive_scores: npt.ArrayLike, negative_scores: npt.ArrayLike
                 ) -> tuple[FloatArray, FloatArray]:
    """AUROCs and DeLong's covariance matrix, by the fast algorithm of Sun & Xu (2014).

    ``positive_scores`` is ``(m,)`` or ``(k, m)``: the scores ``k`` systems give the same ``m``
    positive rows (same order in every system), ``negative_scores`` likewise ``(n,)`` or
    ``(k, n)``. With midranks ``Tz`` over all ``m + n`` scores, ``Tx`` within the positives and
    ``Ty`` within the negatives, the structural components are ``V10 = (Tz_x - Tx) / n`` per
    positive and ``V01 = 1 - (Tz_y - Ty) / m`` per negative (computed as placements from one
    sort per system, :func:`_placements`), ``AUC = mean(V10)``, and
    ``S = cov(V10) / m + cov(V01) / n`` (covariances across systems, ``ddof = 1``). Ties count
    1/2. Needs ``m, n >= 2`` and no NaN (the callers check; see :func:`delong_interval`).

    >>> auc, cov = auroc_delong([0.9, 0.4], [0.6, 0.1])
    >>> auc.tolist(), cov.tolist()
    ([0.75], [[0.125]])
    """
    xs, ys = _systems(positive_scores), _systems(negative_scores)
    if len(xs) != len(ys) or any(v.ndim != 1 for v in (*xs, *ys)) or \
            len({v.size for v in xs}) > 1 or len({v.size for v in ys}) > 1:
        raise ValueError(f"scores must be (k, m) and (k, n) for the same k systems; got "
                         f"{[v.shape for v in xs]} and {[v.shape for v in ys]}")
    m, n = xs[0].size, ys[0].size
    if m < 2 or n < 2:
        raise ValueError(f"DeLong's variance needs at least 2 positives and 2 negatives, got "
                         f"{m} and {n}")
    # one sort per system (k is 1 or 2), never a loop over rows; NumPy's sort lets go of the
    # GIL, so two systems' sorts run on two cores (10^7 rows: 1.5 s instead of 2.9 s)
    if len(xs) > 1 and m + n >= PARALLEL_ROWS:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(len(xs), os.cpu_count() or 1)) as pool:
            placed = list(pool.map(_placements, xs, ys))
    else:
        placed = [_placements(a, b) for a, b in zip(xs, ys, strict=True)]
    auc = np.array([v10.mean() for v10, _ in placed])
    covariance = _covariance([v10 for v10, _ in placed]) / m + \
        _covariance([v01 for _, v01 in placed]) / n
    return auc, covariance


PARALLEL_ROWS = 200_000
"""Rows from which :func:`auroc_delong` sorts several systems' scores in threads."""


def _systems(scores: npt.ArrayLike | Sequence[npt.ArrayLike]) -> list[FloatArray]:
    """One float vector per system: the rows of a ``(k, m)`` array or a list of ``k``
    vectors (kept as they are, not stacked: no copy of 10^7 scores), or one vector."""
    if isinstance(scores, list | tuple) and scores and all(np.ndim(v) == 1 for v in scores):
        return [np.asarray(v, dtype=np.float64) for v in scores]
    return list(np.atleast_2d(np.asarray(scores, dtype=np.float64)))


def _covariance(vectors: Sequence[FloatArray]) -> FloatArray:
    """The ``k x k`` sample covariance (``ddof = 1``) of ``k`` equally long vectors, as
    ``np.cov`` of their stack computes it (centred, then dot products), without the stack."""
    centred = [v - v.mean() for v in vectors]
    k = len(centred)
    out = np.empty((k, k))
    for i in range(k):
        for j in range(i, k):
            out[i, j] = out[j, i] = float(np.dot(centred[i], centred[j])) / (centred[i].size - 1)
    return out


def _scores_problem(x: FloatArray, y: FloatArray) -> str | None:
    if x.size == 0 or y.size == 0:
        which = "positive" if x.size == 0 else "negative"
        return f"only one class: no {which} rows, AUROC is undefined"
    if np.isnan(x).any() or np.isnan(y).any():
        return "NaN scores: AUROC is undefined"
    return None


def delong_interval(positive_scores: npt.ArrayLike, negative_scores: npt.ArrayLike,
                    level: float = 0.95) -> Interval:
    """AUROC with DeLong's standard error and normal interval, clipped to [0, 1] as pROC does.

    >>> i = delong_interval([0.9, 0.8, 0.35, 0.7], [0.1, 0.4, 0.3, 0.8, 0.2])
    >>> round(i.estimate, 4), round(i.std_error, 4), round(i.low, 4), i.high
    (0.825, 0.1493, 0.5324, 1.0)
    >>> i.note
    'the normal interval was clipped to [0, 1]'
    >>> delong_interval([0.2, 0.3], []).reason
    'only one class: no negative rows, AUROC is undefined'
    """
    level = _check_level(level)
    method = "delong"
    x = _vector(positive_scores, "positive_scores")
    y = _vector(negative_scores, "negative_scores")
    problem = _scores_problem(x, y)
    if problem:
        return _undefined(None, level, method, problem)
    if x.size < 2 or y.size < 2:
        auc = float(((x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])).mean())
        return _undefined(auc, level, method, f"{x.size} positive and {y.size} negative rows: "
                          "DeLong's variance needs at least 2 of each")
    aucs, covariance = auroc_delong(x, y)
    return _delong_result(float(aucs[0]), float(covariance[0, 0]), level)


def delong_interval_counts(positive_counts: npt.ArrayLike, negative_counts: npt.ArrayLike,
                           level: float = 0.95) -> Interval:
    """:func:`delong_interval` from counts per distinct score, in ascending order of score.

    The mergeable statistic of AUROC (how many positive and negative rows have each distinct
    score) is enough for DeLong's variance: every positive at score ``j`` has the component
    ``V10_j = (negatives below j + negatives at j / 2) / n`` and every negative
    ``V01_j = (positives above j + positives at j / 2) / m``, so the variances are weighted
    sums over the ``k`` distinct scores, O(k) after the engine's group-by. Equals
    :func:`delong_interval` on the rows the counts describe.

    The rows of :func:`delong_interval`'s example, by distinct score
    (0.1, 0.2, 0.3, 0.35, 0.4, 0.7, 0.8, 0.9):

    >>> i = delong_interval_counts([0, 0, 0, 1, 0, 1, 1, 1], [1, 1, 1, 0, 1, 0, 1, 0])
    >>> round(i.estimate, 4), round(i.std_error, 4)
    (0.825, 0.1493)
    """
    level = _check_level(level)
    method = "delong"
    p = _vector(positive_counts, "positive_counts")
    q = _vector(negative_counts, "negative_counts")
    if p.shape != q.shape:
        raise ValueError(f"one positive and one negative count per distinct score, got "
                         f"{p.size} and {q.size}")
    if np.isnan(p).any() or np.isnan(q).any() or (p < 0).any() or (q < 0).any():
        return _undefined(None, level, method, "the counts are NaN or negative")
    m, n = float(p.sum()), float(q.sum())
    if m == 0 or n == 0:
        which = "positive" if m == 0 else "negative"
        return _undefined(None, level, method, f"only one class: no {which} rows, AUROC is "
                          "undefined")
    below = np.cumsum(q) - q  # negatives with a lower score
    above = m - np.cumsum(p)  # positives with a higher score
    v10 = (below + 0.5 * q) / n
    v01 = (above + 0.5 * p) / m
    auc = float(p @ v10) / m
    if m < 2 or n < 2:
        return _undefined(auc, level, method, f"{m:g} positive and {n:g} negative rows: "
                          "DeLong's variance needs at least 2 of each")
    s10 = float(p @ (v10 - auc) ** 2) / (m - 1)
    s01 = float(q @ (v01 - auc) ** 2) / (n - 1)
    return _delong_result(auc, s10 / m + s01 / n, level)


def _delong_result(auc: float, variance: float, level: float) -> Interval:
    method = "delong"
    variance = max(0.0, variance)
    std_error = math.sqrt(variance)
    half = _z(level) * std_error
    low, high = auc - half, auc + half
    note = None
    if variance == 0.0:
        note = "DeLong's variance is 0: the interval has no width"
    elif low < 0.0 or high > 1.0:
        low, high = max(0.0, low), min(1.0, high)
        note = "the normal interval was clipped to [0, 1]"
    return Interval(auc, low, high, level, method, std_error=std_error, note=note)


def _replicates(replicates: npt.ArrayLike, estimate: float | None, level: float, method: str,
                max_undefined: float) -> tuple[FloatArray, str | None] | Interval:
    """The finite replicate values, and a note on those left out; or why there are none."""
    r = _vector(replicates, "replicates")
    if estimate is None or math.isnan(estimate):
        return _undefined(None, level, method, "the estimate is undefined")
    missing = int(np.isnan(r).sum())
    if r.size - missing < 2:
        return _undefined(float(estimate), level, method,
                          f"{r.size - missing} of {r.size} replicates have a value")
    if missing > max_undefined * r.size:
        return _undefined(float(estimate), level, method,
                          f"{missing} of {r.size} replicates have no value (more than "
                          f"{max_undefined:.0%}): the resampled data often lacks what the "
                          "metric needs")
    note = (f"{missing} of {r.size} replicates had no value and were left out"
            if missing else None)
    return r[~np.isnan(r)], note


def _quantile_mc_error(r: FloatArray, probabilities: tuple[float, float]) -> float:
    """Monte-Carlo standard error of sample quantiles, distribution-free: half the distance
    between the quantiles one binomial standard deviation, ``sqrt(q (1 - q) / B)``, either side
    (the order-statistic interval of the quantile), the larger of the two bounds'."""
    errors = []
    for q in probabilities:
        spread = math.sqrt(q * (1.0 - q) / r.size)
        lo, hi = np.quantile(r, [max(0.0, q - spread), min(1.0, q + spread)])
        errors.append((float(hi) - float(lo)) / 2.0)
    return max(errors)


def _spread(r: FloatArray) -> float:
    """The replicates' standard deviation; exactly 0 when they are all equal."""
    return 0.0 if r.min() == r.max() else float(r.std(ddof=1))


def percentile_interval(replicates: npt.ArrayLike, estimate: float, level: float = 0.95, *,
                        max_undefined: float = 0.1, method: str = "bootstrap") -> Interval:
    """The percentile bootstrap interval: the replicates' quantiles at ``(1 -+ level) / 2``.

    Quantiles interpolate linearly (NumPy's and SciPy's default). Replicates that are NaN (a
    resample without positives, say) are left out and counted in the note; more than
    ``max_undefined`` of them make the interval undefined. ``std_error`` is the replicates'
    standard deviation; ``mc_error`` the bounds' Monte-Carlo standard error.

    >>> reps = np.random.default_rng(0).normal(0.8, 0.01, 2000)
    >>> i = percentile_interval(reps, estimate=0.8)
    >>> round(i.low, 3), round(i.high, 3), round(i.std_error, 3), i.mc_error < 0.002
    (0.781, 0.819, 0.01, True)
    """
    level = _check_level(level)
    got = _replicates(replicates, estimate, level, method, max_undefined)
    if isinstance(got, Interval):
        return got
    r, note = got
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(r, [alpha, 1.0 - alpha])
    return Interval(float(estimate), float(low), float(high), level, method,
                    std_error=_spread(r),
                    mc_error=_quantile_mc_error(r, (alpha, 1.0 - alpha)), note=note)


def jackknife_acceleration(jackknife: npt.ArrayLike) -> float:
    """BCa's acceleration from leave-one-out values: ``sum d^3 / (6 (sum d^2)^(3/2))``,
    ``d = mean - value`` (Efron & Tibshirani 14.15); 0 when the values do not vary.

    >>> round(jackknife_acceleration([1.0, 2.0, 4.0, 9.0]), 4)
    -0.064
    """
    values = _vector(jackknife, "jackknife")
    d = values.mean() - values
    squares = float((d * d).sum())
    if squares == 0.0:
        return 0.0
    return float((d**3).sum()) / (6.0 * squares * math.sqrt(squares))


def bca_interval(replicates: npt.ArrayLike, estimate: float, jackknife: npt.ArrayLike,
                 level: float = 0.95, *, max_undefined: float = 0.1) -> Interval:
    """The bias-corrected and accelerated (BCa) bootstrap interval.

    ``z0 = Phi^-1(share of replicates below the estimate, ties half)``; the acceleration from
    ``jackknife`` (the statistic with each group left out in turn, see
    :func:`evalcli.uncertainty.groups.jackknife_sums`); the bounds are the replicates'
    quantiles at ``Phi(z0 + (z0 + z_a) / (1 - a (z0 + z_a)))`` for ``z_a`` at ``(1 -+ level)/2``
    (Efron & Tibshirani 14.10; the computation of ``scipy.stats.bootstrap(method="BCa")``).

    >>> rng = np.random.default_rng(1)
    >>> data = rng.exponential(1.0, 60)
    >>> reps = rng.choice(data, (4000, 60)).mean(axis=1)
    >>> jack = (data.sum() - data) / 59
    >>> i = bca_interval(reps, float(data.mean()), jack)
    >>> round(i.low, 2), round(i.high, 2)
    (0.86, 1.6)
    """
    level = _check_level(level)
    method = "bca"
    got = _replicates(replicates, estimate, level, method, max_undefined)
    if isinstance(got, Interval):
        return got
    r, note = got
    jack = _vector(jackknife, "jackknife")
    if jack.size < 2 or np.isnan(jack).any():
        return _undefined(float(estimate), level, method,
                          "the leave-one-out values are missing or NaN: no acceleration")
    share = (np.count_nonzero(r < estimate) + np.count_nonzero(r <= estimate)) / (2.0 * r.size)
    if share in (0.0, 1.0):
        return _undefined(float(estimate), level, method,
                          "the estimate lies outside the replicates: no bias correction")
    z0 = float(special.ndtri(share))
    a = jackknife_acceleration(jack)
    alpha = (1.0 - level) / 2.0
    probabilities = []
    for z_alpha in (float(special.ndtri(alpha)), float(special.ndtri(1.0 - alpha))):
        shifted = z0 + z_alpha
        probabilities.append(float(special.ndtr(z0 + shifted / (1.0 - a * shifted))))
    low, high = np.quantile(r, probabilities)
    return Interval(float(estimate), float(low), float(high), level, method,
                    std_error=_spread(r),
                    mc_error=_quantile_mc_error(r, (probabilities[0], probabilities[1])),
                    note=note)
