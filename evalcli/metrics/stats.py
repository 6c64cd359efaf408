"""Helpers shared by the metric families: combining partial statistics, curves from counts.

Everything here works on small frames of statistics, never on the rows of the input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

import polars as pl

if TYPE_CHECKING:
    from evalcli.metrics.base import Context

CombineOp = Literal["sum", "max", "min"]


def combine_columns(
    df: pl.DataFrame, keys: list[str], ops: Mapping[str, CombineOp]
) -> pl.DataFrame:
    """Combine partial rows column by column with ``sum``, ``max`` or ``min``.

    >>> parts = pl.DataFrame({"tp": [1.0, 2.0], "mx": [3.0, 1.0]})
    >>> combine_columns(parts, [], {"tp": "sum", "mx": "max"}).row(0)
    (3.0, 3.0)
    """
    exprs = [getattr(pl.col(c), op)().alias(c) for c, op in ops.items()]
    if keys:
        return df.group_by(keys, maintain_order=True).agg(exprs)
    return df.select(exprs)


def sum_by(df: pl.DataFrame, keys: list[str], by: list[str]) -> pl.DataFrame:
    """Combine partial count tables (e.g. weights per distinct score) by adding per ``by`` value."""
    group = [*keys, *by]
    values = [c for c in df.columns if c not in group]
    return df.group_by(group).agg([pl.col(c).sum() for c in values])


def combine_moments(
    df: pl.DataFrame, keys: list[str], groups: Mapping[str, tuple[str, str]], weight: str
) -> pl.DataFrame:
    """Combine (weight, mean, M2) triples with Chan et al.'s parallel formula.

    ``groups`` maps a name to its (mean column, M2 column); ``weight`` is the column of total
    weight of each part. Other columns are summed. Exact up to rounding, with no cancellation
    from raw sums of squares.

    >>> parts = pl.DataFrame({"w": [2.0, 2.0], "m": [1.0, 3.0], "s": [0.0, 0.0]})
    >>> combine_moments(parts, [], {"y": ("m", "s")}, "w").row(0)
    (4.0, 2.0, 4.0)
    >>> with_empty = pl.DataFrame({"w": [2.0, 0.0], "m": [1.0, float("nan")], "s": [0.5, 0.0]})
    >>> combine_moments(with_empty, [], {"y": ("m", "s")}, "w").row(0)
    (2.0, 1.0, 0.5)
    """
    # a part with no weight has an undefined (NaN) mean; it must add nothing, not spoil the sum
    empty = pl.col(weight) <= 0
    df = df.with_columns(pl.when(empty).then(0.0).otherwise(pl.col(c)).alias(c)
                         for pair in groups.values() for c in pair)
    w = pl.col(weight)
    total = w.sum()
    exprs: list[pl.Expr] = [total.alias(weight)]
    moment_cols = set()
    for mean_c, m2_c in groups.values():
        moment_cols |= {mean_c, m2_c}
        mean = (w * pl.col(mean_c)).sum() / total
        exprs.append(mean.alias(mean_c))
        exprs.append((pl.col(m2_c).sum() + (w * (pl.col(mean_c) - mean) ** 2).sum()).alias(m2_c))
    others = [c for c in df.columns if c not in {*keys, weight, *moment_cols}]
    exprs += [pl.col(c).sum().alias(c) for c in others]
    if keys:
        return df.group_by(keys, maintain_order=True).agg(exprs)
    return df.select(exprs)


def run_totals(lf: pl.LazyFrame, key: str, cumulative: Mapping[str, pl.Expr]) -> pl.LazyFrame:
    """One row per run of equal ``key`` values in rows sorted by ``key``, with each run's total
    of every ``cumulative`` expression (a running total over the rows, e.g. ``cum_sum()``).

    The totals are the running totals at each run's last row, differenced: no hashing, no
    sort, two linear passes. ``key`` must hold no NaN (NaN equals NaN here).

    >>> lf = pl.LazyFrame({"x": [3.0, 3.0, 2.0, 1.0, 1.0, 1.0]})
    >>> rows = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    >>> run_totals(lf, "x", {"n": rows}).collect().rows()
    [(3.0, 2.0), (2.0, 1.0), (1.0, 3.0)]
    """
    k = pl.col(key)
    return (
        lf.select(k, *(e.alias(name) for name, e in cumulative.items()))
        .filter(k != k.shift(-1, fill_value=float("nan")))
        .select(k, *(pl.col(c).diff().fill_null(pl.col(c).first()).alias(c) for c in cumulative))
    )


Build = Callable[[pl.LazyFrame, list[str]], pl.LazyFrame]


def table_build(ctx: Context, grouped: Build, sorted_rows: Build, unweighted: Build) -> Build:
    """Which plan builds a table of weights per distinct value (a score, an error): the hash
    group-by on the streaming engine (memory ~ distinct values); in memory, a sort of the rows
    carrying the weight, or, unweighted and without segments (``keys`` empty), ``unweighted``,
    which sorts one column of values only."""
    if ctx.options.get("__engine__") != "polars":
        return grouped
    if "weight" in ctx.roles:
        return sorted_rows

    def build(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        return sorted_rows(lf, keys) if keys else unweighted(lf, keys)

    return build


def product01(x: pl.Expr) -> pl.Expr:
    """The product of factors in [0, 1], as an aggregation: exactly 0 when a factor is 0,
    else exp Σ log (exactly 1 when every factor is; a grouped ``product()`` costs about fifteen
    times a grouped sum). Within rounding of the product otherwise.

    >>> df = pl.DataFrame({"g": [1, 1, 2, 2, 3], "x": [0.5, 0.5, 1.0, 0.0, 1.0]})
    >>> df.group_by("g", maintain_order=True).agg(product01(pl.col("x"))).rows()
    [(1, 0.25), (2, 0.0), (3, 1.0)]
    """
    return pl.when((x <= 0).any()).then(0.0).otherwise(x.log().sum().exp())
