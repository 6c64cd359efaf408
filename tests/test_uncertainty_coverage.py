"""Coverage on simulated data with a known truth: over many simulated test sets, how often the
95% interval contains the true value. Each case asserts 93-97%; with S simulated sets the
coverage's own standard error is sqrt(0.95 * 0.05 / S) (0.5 points at S = 2000, 0.7 at 1000,
1.0 at 500), given in each message. The clustered case shows what a wrong ``unit`` does: rows of
a user resampled as if independent give intervals far too narrow.

Seeds are fixed, so the numbers are the same on every run.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from scipy import special

from evalcli.uncertainty.groups import group_count, replicate_sums, replicate_weights, unit_group
from evalcli.uncertainty.intervals import (
    Interval,
    bca_interval,
    delong_interval,
    mean_t_interval,
    percentile_interval,
    wilson_interval,
    wilson_interval_clustered,
)
from evalcli.uncertainty.paired import mcnemar_test

LEVEL = 0.95


def coverage(intervals: list[Interval], truth: float) -> float:
    assert all(i.defined for i in intervals)
    return float(np.mean([i.low <= truth <= i.high for i in intervals]))


def check(name: str, rate: float, sets: int, low: float = 0.93, high: float = 0.97) -> None:
    se = math.sqrt(0.95 * 0.05 / sets)
    assert low <= rate <= high, f"{name}: {rate:.3f} of {sets} sets (standard error {se:.3f})"


def test_wilson_covers_a_proportion():
    sets, n, p = 2000, 200, 0.3
    hits = np.random.default_rng(1).binomial(n, p, sets)
    check("wilson", coverage([wilson_interval(h, n, LEVEL) for h in hits], p), sets)


def test_t_covers_the_mean_of_per_query_values():
    # an nDCG-like per-query value: 0 for 30% of queries, else Beta(2, 2); the mean is 0.35
    sets, queries = 2000, 100
    rng = np.random.default_rng(2)
    values = np.where(rng.random((sets, queries)) < 0.3, 0.0, rng.beta(2, 2, (sets, queries)))
    check("t", coverage([mean_t_interval(v, LEVEL) for v in values], 0.35), sets)


def test_delong_covers_auroc():
    # binormal scores: positives N(1, 1), negatives N(0, 1); AUROC = Phi(1 / sqrt 2)
    sets, m, n = 1000, 60, 90
    truth = float(special.ndtr(1 / math.sqrt(2)))
    rng = np.random.default_rng(3)
    intervals = [delong_interval(rng.normal(1, 1, m), rng.normal(0, 1, n), LEVEL)
                 for _ in range(sets)]
    check("delong", coverage(intervals, truth), sets)


def test_agresti_min_covers_a_paired_difference_of_accuracies():
    # each row: a right with 0.75, b right with 0.80, correlated through a shared difficulty
    sets, rows = 2000, 300
    rng = np.random.default_rng(4)
    out = []
    for _ in range(sets):
        hard = rng.random(rows) < 0.5
        a = rng.random(rows) < np.where(hard, 0.6, 0.9)
        b = rng.random(rows) < np.where(hard, 0.7, 0.9)
        out.append(mcnemar_test(int((a & ~b).sum()), int((b & ~a).sum()), rows).interval)
    check("agresti-min", coverage(out, 0.05), sets)


def group_bootstrap(frame: pl.DataFrame, unit: str, value: str, count: str, seed: int,
                    replicates: int = 1000) -> tuple[Interval, Interval]:
    """The engine's recipe: hash units into groups (seeded), sum statistics per group, weight
    the groups per replicate, finalize the ratio sum(value) / sum(count) per replicate."""
    groups = group_count(frame[unit].n_unique())
    per_group = (frame.group_by(unit_group(pl.col(unit), frame.schema[unit], groups, seed)
                                .alias("group"))
                 .agg(pl.col(value).sum(), pl.col(count).sum()).sort("group"))
    stats = per_group.select(value, count).to_numpy()
    sums = replicate_sums(replicate_weights(stats.shape[0], replicates, seed), stats)
    estimate = float(stats[:, 0].sum() / stats[:, 1].sum())
    jack = stats.sum(axis=0) - stats
    reps = sums[:, 0] / sums[:, 1]
    return (percentile_interval(reps, estimate, LEVEL),
            bca_interval(reps, estimate, jack[:, 0] / jack[:, 1], LEVEL))


def test_group_bootstrap_covers_a_mean_over_queries():
    # per-query values with a skew (exponential, mean 0.2); the unit is the query
    sets, queries = 500, 300
    rng = np.random.default_rng(5)
    ids = np.arange(queries) * 7 + 1000  # integer query ids (text ids: test_uncertainty_groups)
    percentile, bca = [], []
    for s in range(sets):
        frame = pl.DataFrame({"query": ids, "value": rng.exponential(0.2, queries),
                              "one": np.ones(queries)})
        p, b = group_bootstrap(frame, "query", "value", "one", seed=s)
        percentile.append(p)
        bca.append(b)
    check("group bootstrap (percentile)", coverage(percentile, 0.2), sets)
    check("group bootstrap (BCa)", coverage(bca, 0.2), sets)


def test_clustered_rows_need_the_right_unit():
    """100 users with 5-40 rows each; each user's rows are right with the user's own rate
    (Beta(2, 3), mean 0.4), so rows of a user are alike. Accuracy over rows estimates 0.4.
    Resampling users (unit: user_id) or Wilson at the clusters' effective size covers; Wilson
    over rows and resampling rows as if independent (the wrong unit) do not."""
    sets, users = 400, 100
    rng = np.random.default_rng(6)
    by_user, clustered, naive, by_row = [], [], [], []
    for s in range(sets):
        rows = rng.integers(5, 41, users)
        user = np.repeat(np.arange(users), rows)
        hit = (rng.random(user.size) < np.repeat(rng.beta(2, 3, users), rows)).astype(float)
        right = np.bincount(user, hit, users)
        frame = pl.DataFrame({"user_id": user, "row_id": np.arange(user.size), "hit": hit,
                              "one": np.ones(user.size)})
        by_user.append(group_bootstrap(frame, "user_id", "hit", "one", seed=s)[0])
        # the wrong unit under-covers by far; 200 replicates show it as well as 1000
        by_row.append(group_bootstrap(frame, "row_id", "hit", "one", seed=s, replicates=200)[0])
        clustered.append(wilson_interval_clustered(right, rows, LEVEL))
        naive.append(wilson_interval(float(right.sum()), float(rows.sum()), LEVEL))
    check("group bootstrap, unit = user", coverage(by_user, 0.4), sets)
    check("clustered Wilson, clusters = users", coverage(clustered, 0.4), sets)
    wrong_rows, wrong_wilson = coverage(by_row, 0.4), coverage(naive, 0.4)
    assert wrong_rows < 0.8, f"rows resampled as independent covered {wrong_rows:.3f}"
    assert wrong_wilson < 0.8, f"Wilson over rows covered {wrong_wilson:.3f}"
