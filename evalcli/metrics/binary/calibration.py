"""Binary classification's calibration: expected and maximum calibration error (ECE, MCE) of
the score read as the probability of the positive class.

Both come from the counts per distinct score (:func:`.stats.score_counts`), the statistic the
curve metrics and the operating points already use: no pass over the data of their own. A
distinct score ``s`` with weighted positives ``pos`` and negatives ``neg`` carries weight
``pos + neg``, positives ``pos`` and a weighted score sum ``s·(pos + neg)``; a bin adds those of
its scores. The bins are a function of the score, so rows with tied scores always share a bin.

Bins are scikit-learn's ``calibration_curve``'s: the inner edges ``e_1 < ... < e_(B−1)`` and a
score ``s`` goes to bin ``#{b : e_b < s}`` (``numpy.searchsorted(edges[1:-1], s)``, side
"left"): the bins are right-closed, [0, e_1], (e_1, e_2], ..., (e_(B−1), 1].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

import polars as pl

from evalcli.metrics.base import Metric, MetricValue, Param, Params, StatValues, memo_of
from evalcli.metrics.binary.metrics import PROBABILITY, SCORE, _score_stats
from evalcli.metrics.binary.operating import Points, points
from evalcli.metrics.binary.task import FAMILY

if TYPE_CHECKING:
    import numpy as np

def uniform_edges(bins: int) -> list[float]:
    """Equal-width edges over [0, 1], bit for bit ``numpy.linspace(0, 1, bins + 1)``.

    >>> uniform_edges(4)
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    step = 1.0 / bins
    return [i * step for i in range(bins)] + [1.0]


def _lerp(a: float, b: float, t: float) -> float:
    # numpy's _lerp (np.percentile's linear interpolation), the same floating-point operations
    d = b - a
    return b - d * (1 - t) if t >= 0.5 else a + d * t


def quantile_edges(score: np.ndarray, weight: np.ndarray, bins: int) -> list[float]:
    """The edges of ``bins`` quantile bins of ``score`` (distinct, ascending) carrying
    ``weight``: numpy.percentile's linear quantiles of the rows, a weight counting as that
    many rows. Edge ``b`` is at position ``v = (W − 1)·q_b`` (``q_b = b/B``) of the rows sorted
    by score, from 0: between ``x_⌊v⌋`` and the next row's score, linearly, where ``x_j`` is
    the lowest score whose cumulative weight exceeds ``j``. Unweighted (or integer weights)
    this is ``numpy.percentile(scores, linspace(0, 100, B + 1))`` over the (repeated) rows,
    scikit-learn's quantile strategy.

    >>> import numpy as np
    >>> quantile_edges(np.array([0.1, 0.2, 0.4, 0.8]), np.array([1.0, 1.0, 1.0, 1.0]), 2)
    [0.1, 0.30000000000000004, 0.8]
    >>> quantile_edges(np.array([0.1, 0.2, 0.4, 0.8]), np.array([3.0, 1.0, 1.0, 1.0]), 2)
    [0.1, 0.15000000000000002, 0.8]
    """
    import numpy as np
    cum = np.cumsum(weight)
    total = float(cum[-1])
    last = score.size - 1

    def x(j: float) -> float:  # the score of the row at position j (from 0)
        return float(score[min(int(np.searchsorted(cum, j, side="right")), last)])

    out = []
    for q in uniform_edges(bins):
        v = (total - 1) * (q * 100 / 100)  # numpy.percentile's q·100 / 100, then (n − 1)·q
        k = max(math.floor(v), 0)
        t = min(max(v - k, 0.0), 1.0)
        out.append(_lerp(x(k), x(k + 1), t))
    return out


class Bins(NamedTuple):
    """The non-empty bins of counts per score: their index (from 0), weight ``w``, weighted
    positives ``pos`` and weighted score sum ``score_sum``, one entry per bin. Arrays, not a
    frame: a bootstrap bins a table per replicate and segment (:meth:`frame` for a report)."""

    bin: np.ndarray
    w: np.ndarray
    pos: np.ndarray
    score_sum: np.ndarray

    def frame(self) -> pl.DataFrame:
        """The bins as a frame, one row per bin."""
        return pl.DataFrame(self._asdict())


def reliability(pts: Points, bins: int, strategy: str) -> Bins:
    """The non-empty bins of a table of counts per score (:class:`Bins`).

    >>> t = pl.DataFrame({"score": [0.9, 0.8, 0.3, 0.1], "pos": [1.0, 0.0, 1.0, 0.0],
    ...                   "neg": [0.0, 1.0, 0.0, 1.0]})
    >>> from evalcli.metrics.binary.stats import SCORE_COUNTS
    >>> reliability(points({SCORE_COUNTS: t}), 2, "uniform").frame().rows()
    [(0, 2.0, 1.0, 0.4), (1, 2.0, 1.0, 1.7000000000000002)]
    """
    # ascending, in the order of the points (highest first) reversed: the same bits from any
    # engine's table of the same counts
    score = pts.score[::-1]
    pos = pts.pos[::-1]
    weight = pos + pts.neg[::-1]
    return bin_counts(score, pos, weight, bins, strategy)


def bin_counts(score: np.ndarray, pos: np.ndarray, weight: np.ndarray, bins: int,
               strategy: str) -> Bins:
    """:func:`reliability` of counts per distinct score given as arrays, ``score``
    ascending (the multiclass calibration metrics bin their confidences with it). No score
    (no row, or zero weight only; a bootstrap replicate that draws none of a segment's
    rows): no bin.

    >>> import numpy as np
    >>> bin_counts(*(np.array([]) for _ in range(3)), 4, "quantile").bin.size
    0
    """
    import numpy as np
    if not score.size:
        empty = np.array([], dtype=np.float64)
        return Bins(np.array([], dtype=np.int64), empty, empty, empty)
    edges = uniform_edges(bins) if strategy == "uniform" else \
        quantile_edges(score, weight, bins)
    at = np.searchsorted(np.array(edges[1:-1], dtype=np.float64), score, side="left")
    w = np.bincount(at, weights=weight, minlength=bins)
    keep = np.flatnonzero(w > 0)
    return Bins(keep.astype(np.int64), w[keep],
                np.bincount(at, weights=pos, minlength=bins)[keep],
                np.bincount(at, weights=score * weight, minlength=bins)[keep])


def _bins_of(stats: StatValues, params: Params) -> Bins:
    pts = points(stats)
    bins, strategy = int(params["bins"]), str(params["strategy"])
    return memo_of(stats).get(pts, ("calibration bins", bins, strategy),
                              lambda: reliability(pts, bins, strategy))


def calibration_of(table: Bins, kind: str) -> MetricValue:
    """ECE (``kind`` ece) or MCE of :func:`reliability`'s bins."""
    import numpy as np
    if not table.bin.size:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    w, pos, ssum = table.w, table.pos, table.score_sum
    gap = np.abs(pos - ssum)  # W_b · |positive rate − mean score| of each bin
    used = {"bins_used": int(table.bin.size)}
    if kind == "ece":
        return MetricValue(math.fsum(gap) / math.fsum(w), details=used)
    err = gap / w
    i = int(np.flatnonzero(err == err.max())[0])  # the lowest bin reaching the maximum
    return MetricValue(float(err[i]), details={
        **used, "bin": int(table.bin[i]), "mean_score": float(ssum[i] / w[i]),
        "positive_rate": float(pos[i] / w[i]), "weight": float(w[i])})


def _calibration_value(kind: str) -> Callable[[StatValues, Params], MetricValue]:
    def value(stats: StatValues, params: Params) -> MetricValue:
        return calibration_of(_bins_of(stats, params), kind)

    return value


# --------------------------------------------------------------------------- declarations

CALIBRATION_PROBABILITY = replace(  # log_loss's rule, in ece's and mce's words
    PROBABILITY, name="calibration_probability",
    message="ece and mce need probabilities, but the score column holds values outside [0, 1]",
    hint="give calibrated probabilities (for example apply a sigmoid), or drop ece/mce")

PARAMS = (
    Param("bins", int, 10, "number of score bins", ge=1, le=100_000),
    Param("strategy", str, "uniform", "uniform: bins of equal width over [0, 1]; quantile: "
          "bins of (about) equal weight, edges at quantiles of the scores",
          choices=("uniform", "quantile")),
)
BINNING = (
    "Scores must be probabilities in [0, 1] (an error otherwise). Bins as scikit-learn's "
    "calibration_curve: a score goes to the bin numpy.searchsorted(edges[1:-1], score) (side "
    "left), so bins are right-closed, [0, e_1], (e_1, e_2], ..., (e_(B−1), 1]: with "
    "bins=10, a score of exactly 0.1 is in the first bin, 0 in the first and 1.0 in the "
    "last (torchmetrics puts an edge in the upper bin). strategy=uniform: edges "
    "numpy.linspace(0, 1, B + 1). strategy=quantile: edges numpy.percentile(scores, "
    "linspace(0, 100, B + 1)) (linear), with weights counting as rows: edge b at position "
    "(W − 1)·b/B of the rows sorted by score (a row of weight w spanning w positions), so "
    "integer weights equal repeated rows; equal edges leave bins empty. Either way a bin "
    "is a range of scores, so tied scores are never split across bins. Empty bins count "
    "nothing. Weighted: W_b is the bin's weight, its mean score Σ w·s / W_b and its "
    "positive rate Σ w·y / W_b. ")
PEER = ("the ECE/MCE of Naeini et al. 2015 and Guo et al. 2017, over scikit-learn's "
        "calibration_curve bins (checked against its per-bin means, uniform and quantile)")


METRICS: list[Metric] = [
    Metric(
        "ece", FAMILY, "expected calibration error: the weighted mean gap between the mean "
        "score and the positive rate of each score bin",
        "Σ_b (W_b / W) · |p̄_b − ȳ_b| over the non-empty bins b; p̄_b, ȳ_b the weighted mean "
        "score and positive rate in bin b",
        "lower", (SCORE,), _score_stats, _calibration_value("ece"), params=PARAMS,
        conventions=BINNING + "details.bins_used counts the non-empty bins.",
        peer=PEER, aliases=("expected_calibration_error",), range=(0.0, 1.0),
        in_default_set=False, checks=(CALIBRATION_PROBABILITY,),
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "binary", "metrics": [{"metric": "ece", "bins": 2}]},
        ...          predictions={"label": [0, 1, 0, 1], "score": [0.1, 0.5, 0.8, 0.9]}
        ...          ).values()  # [0, 0.5]: mean 0.3, rate 0.5; (0.5, 1]: 0.85 and 0.5
        {'ece[bins=2]': 0.275}
        """,
    ),
    Metric(
        "mce", FAMILY, "maximum calibration error: the largest gap between the mean score "
        "and the positive rate of a score bin",
        "max_b |p̄_b − ȳ_b| over the non-empty bins b; p̄_b, ȳ_b the weighted mean score and "
        "positive rate in bin b",
        "lower", (SCORE,), _score_stats, _calibration_value("mce"), params=PARAMS,
        conventions=BINNING + "details: bins_used, and the bin reaching the maximum (bin, "
        "from 0; the lowest at equal gaps) with its mean_score, positive_rate and weight.",
        peer=PEER, aliases=("maximum_calibration_error",), range=(0.0, 1.0),
        in_default_set=False, checks=(CALIBRATION_PROBABILITY,),
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "binary", "metrics": [
        ...     {"metric": "mce", "bins": 4, "strategy": "quantile"}]},
        ...     predictions={"label": [0, 0, 1, 0, 1, 1, 1, 1],
        ...                  "score": [0.1, 0.2, 0.2, 0.4, 0.6, 0.7, 0.9, 0.9]})
        >>> r.values()  # inner edges 0.2, 0.5, 0.75: (0.2, 0.5] holds 0.4 (a negative)
        {'mce[bins=4,strategy=quantile]': 0.4}
        """,
    ),
]
