"""Regression's statistics: ``moments`` (total weight, weighted means and centred sums of squares
of the target and of the error, sums of absolute and relative errors, maximum error), from exact
sums of terms exact per row (the target's square by Dekker's product), combined in exact
arithmetic: the same rows give the same bits however they are split, and R² keeps every digit on
targets with large means; ``spread`` (the predictions' centred sum of squares, exact the same
way; only Spark's explained variance asks for it); ``abs_errors`` (weight per distinct absolute
error) gives the exact (weighted) median.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from functools import partial
from typing import Any

import polars as pl

from evalcli.metrics.base import AggStat, Context, FrameStat, Params, Stat
from evalcli.metrics.stats import (
    Scale,
    exact_sum,
    exact_total,
    is_weighted,
    sum_by,
    table_build,
    to_float,
    two_product,
    two_square,
    weight_sum,
)

F64 = pl.Float64
EPS64 = 2.220446049250313e-16

MOMENTS = "regression.moments"
ABS_ERRORS = "regression.abs_errors"


def _times(base: pl.Expr, f: Callable[[Any], Any]) -> Scale:
    return (base, f)


# fl(a²) <= a²·(1 + 2^-52) and its error <= 2^-53·fl(a²); a product likewise
TINY = 2.0**-52


def _square_terms(x: pl.Expr, name: str, weighted: bool) -> dict[str, tuple[pl.Expr, Scale, int]]:
    """The terms of Σw·x and Σw·x² (``name``, ``name2`` and their rounding errors), each exact
    per row (Dekker's product): their sums are exactly those of the data's values."""
    xm = x.abs().max()
    x2, x2_err = two_square(x)
    if not weighted:
        return {name: (x, xm, 2), f"{name}2": (x2, _times(xm, lambda v: v * v * 2.0), 3),
                f"{name}2_err": (x2_err, _times(xm, lambda v: v * v * TINY), 2)}
    w = pl.col("weight")
    wx, wx_err = two_product(w, x)
    wx2, wx2_err = two_product(w, x2)
    wx2e, wx2e_err = two_product(w, x2_err)
    wxm, wx2m = (w * x.abs()).max(), (w * x * x).max()
    return {name: (wx, _times(wxm, lambda v: v * 2.0), 2),
            f"{name}_err": (wx_err, _times(wxm, lambda v: v * TINY), 2),
            f"{name}2": (wx2, _times(wx2m, lambda v: v * 4.0), 3),
            f"{name}2_err": (wx2_err, _times(wx2m, lambda v: v * TINY * 2.0), 2),
            f"{name}2_err2": (wx2e, _times(wx2m, lambda v: v * TINY * 2.0), 2),
            f"{name}2_err3": (wx2e_err, _times(wx2m, lambda v: v * TINY * TINY * 2.0), 2)}


def _square_names(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The terms that add up to Σw·x and to Σw·x² (see :func:`_square_terms`)."""
    return (name, f"{name}_err"), (f"{name}2", f"{name}2_err", f"{name}2_err2", f"{name}2_err3")


def _terms(weighted: bool) -> dict[str, tuple[pl.Expr, Scale, int]]:
    """The sums of the moments, each term exact per row so that the sums are exactly those
    of the data's values: Σw, Σw·y and Σw·y² (with the products' rounding errors: Dekker's
    product), Σw·e, Σw·e², Σw·|e|, Σw·|e|/max(|y|, ε). With each, a bound of its size (where
    its grid starts) and its limbs (two for terms on the scale of the values, three for
    squares, whose small values have bits far below the largest).

    The centred sum of squares of the target is then Σw·y² − (Σw·y)²/Σw in exact arithmetic:
    with a mean of 1e9 and a spread of 1e-3 it keeps every digit (a float Σy² would keep
    none), and it does not depend on a pivot, a split into parts or the order of the rows.
    The errors' sum of squares is left rounded per row: Var(e) only needs to be exact
    relative to Var(y) (explained variance is 1 − Var(e)/Var(y), off by at most 2^-52·(1−R²)),
    except that it is exactly 0 when the error is constant (its smallest and largest value,
    kept beside, are equal): a constant target then gives 1, as scikit-learn.
    """
    y, w = pl.col("label"), pl.col("weight")
    e = y - pl.col("prediction")
    ape = e.abs() / pl.max_horizontal(y.abs(), pl.lit(EPS64))
    em = e.abs().max()
    if not weighted:
        return {**_square_terms(y, "y", weighted), "e": (e, em, 2),
                "e2": (e**2, _times(em, lambda v: v * v * 2.0), 3), "ae": (e.abs(), em, 2),
                "ape": (ape, ape.max(), 3)}
    wem = (w * e.abs()).max()
    return {"w": (w, w.max(), 2), **_square_terms(y, "y", weighted),
            "e": (w * e, _times(wem, lambda v: v * 2.0), 2),
            "e2": (w * e**2, _times((w * e * e).max(), lambda v: v * 4.0), 3),
            "ae": (w * e.abs(), _times(wem, lambda v: v * 2.0), 2),
            "ape": (w * ape, (w * ape).max(), 3)}


def _moment_exprs(weighted: bool) -> Callable[[], list[pl.Expr]]:
    def exprs() -> list[pl.Expr]:
        y, w = pl.col("label"), pl.col("weight")
        e = y - pl.col("prediction")
        k = MOMENTS
        out = [
            pl.len().cast(F64).alias(f"{k}.n"),
            # the rows that carry weight: a zero weight is no row (a Poisson draw of 0)
            e.abs().filter(w > 0).max().alias(f"{k}.max_e"),
            # the smallest and largest error: Var(e) is exactly 0 when they are equal (the
            # rounded Σw·e² cannot tell a constant error from a small spread)
            e.filter(w > 0).min().alias(f"{k}.lo_e"),
            e.filter(w > 0).max().alias(f"{k}.hi_e"),
        ]
        # each sum's grid at its own scale (targets and errors have any unit)
        for name, (x, scale, limbs) in _terms(weighted).items():
            out += exact_sum(x, f"{k}.{name}", top=None, limbs=limbs, scale=scale)
        return out

    return exprs


Moments = dict[str, "Fraction | float"]


def _from_sums(total: Callable[..., Fraction | float], has: Callable[[str], bool], n: float,
               exactly: bool) -> Moments:
    """The moments' sums from ``total`` (the exact sum of the named sums present: ``has``)
    and the row count ``n``."""
    w = total("w") if has("w") else Fraction(int(n)) if exactly else n
    y_names, y2_names = _square_names("y")
    return {"w": w, "n": n, "sy": total(*y_names), "sy2": total(*y2_names),
            "se": total("e"), "se2": total("e2"), "sae": total("ae"), "sape": total("ape")}


def _part_moments(rows: list[dict[str, Any]], columns: Sequence[str], exactly: bool = True
                  ) -> Moments:
    """The exact sums of one segment's parts: from the partial columns of the pass, or from
    moments already combined (a part's weight, means and centred sums of squares). Not
    ``exactly``: the same sums as floats (for sums beyond the float range, see
    :func:`_combine_moments`)."""
    k = MOMENTS

    def has(name: str) -> bool:
        return f"{k}.{name}#x:j" in columns

    def total(*names: str) -> Fraction | float:
        out = sum((exact_total(rows, f"{k}.{n}") for n in names if has(n)), Fraction(0))
        return out if exactly else to_float(out)

    def exact(v: Any) -> Fraction | float:
        f = math.nan if v is None else float(v)
        return Fraction(f) if math.isfinite(f) and exactly else f

    n = sum(float(r[f"{k}.n"] or 0.0) for r in rows)
    if has("y"):
        return _from_sums(total, has, n, exactly)
    zero: Fraction | float = Fraction(0) if exactly else 0.0
    out: Moments = {"w": zero, "n": n, "sy": zero, "sy2": zero, "se": zero, "se2": zero,
                    "sae": zero, "sape": zero}
    for r in rows:  # Σy = w·mean, Σy² = M2 + w·mean², exactly
        w = exact(r[f"{k}.w"])
        if not w:
            continue
        sy, se = w * exact(r[f"{k}.mean_y"]), w * exact(r[f"{k}.mean_e"])
        for name, v in (("w", w), ("sy", sy), ("sy2", exact(r[f"{k}.m2_y"]) + sy * sy / w),
                        ("se", se), ("sae", exact(r[f"{k}.sae"])),
                        ("sape", exact(r[f"{k}.sape"]))):
            out[name] = out[name] + v
        out["se2"] = out["se2"] + exact(r[f"{k}.sse"])
    return out


def _moments_of(m: Moments, constant_e: bool) -> dict[str, float]:
    """Weight, means and centred sums of squares from the sums (exact when they are
    Fractions, rounded once)."""
    w, sy, sy2, se, se2 = m["w"], m["sy"], m["sy2"], m["se"], m["se2"]
    return {
        "w": to_float(w), "n": float(m["n"]),
        "mean_y": to_float(sy / w) if w else math.nan,
        "m2_y": to_float(sy2 - sy * sy / w) if w else 0.0,
        "mean_e": to_float(se / w) if w else math.nan,
        "m2_e": to_float(se2 - se * se / w) if w and not constant_e else 0.0,
        "sse": to_float(se2), "sae": to_float(m["sae"]), "sape": to_float(m["sape"]),
    }


def _segment_moments(sums: Callable[[bool], Moments], maxes: Sequence[float],
                     los: Sequence[float], his: Sequence[float]) -> dict[str, Any]:
    """One segment's row of moments from its sums (``sums(exactly)``) and the extremes of
    its parts' errors."""
    k = MOMENTS
    constant_e = bool(los) and min(los) == max(his)
    try:
        moments = _moments_of(sums(True), constant_e)
    except OverflowError:  # a sum beyond the float range (errors of 1e154 and more):
        # the same formulas in floats, which give ±inf or nan as any float formula would
        moments = _moments_of(sums(False), constant_e)
    row: dict[str, Any] = {f"{k}.{name}": v for name, v in moments.items()}
    row.update({
        f"{k}.max_e": max(maxes) if maxes else None,
        f"{k}.lo_e": min(los) if los else None,
        f"{k}.hi_e": max(his) if his else None,
    })
    return row


def _combine_moments(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Moments of each segment from the exact sums of its parts, in exact arithmetic:
    weight, mean and centred sum of squares of the target and of the error, the sums of
    squared, absolute and relative errors, the largest error."""
    k = MOMENTS
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for part in df.iter_rows(named=True):
        groups.setdefault(tuple(part[c] for c in keys), []).append(part)
    out = []
    for key, rows in groups.items():
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row.update(_segment_moments(
            partial(_part_moments, rows, df.columns),
            [r[f"{k}.max_e"] for r in rows if r[f"{k}.max_e"] is not None],
            [r[f"{k}.lo_e"] for r in rows if r.get(f"{k}.lo_e") is not None],
            [r[f"{k}.hi_e"] for r in rows if r.get(f"{k}.hi_e") is not None]))
        out.append(row)
    schema = {c: pl.Float64 for c in (f"{k}.{n}" for n in (
        "w", "n", "mean_y", "m2_y", "mean_e", "m2_e", "sse", "sae", "sape", "max_e", "lo_e",
        "hi_e"))}
    return pl.DataFrame(out, schema={**df.select(keys).schema, **schema}) if out else \
        pl.DataFrame(schema={**df.select(keys).schema, **schema})


def _replicate_sum(v: float) -> Fraction | float:
    """A replicate's sum as :func:`exact_total` reads it when it is the one value kept aside
    of a part (NaN: no value, 0)."""
    return Fraction(0) if v != v else v if math.isinf(v) else Fraction(v)


def _given(v: float) -> list[float]:
    return [] if v != v else [float(v)]


def _replicate_total(sums: Mapping[str, list[float]], i: int, exactly: bool, *names: str
                     ) -> Fraction | float:
    """Replicate ``i``'s exact total of the named sums present in ``sums`` (by short name, a
    value per replicate), as a part's ``exact_total`` would read it; not ``exactly``: rounded
    to a float."""
    got = sum((_replicate_sum(sums[x][i]) for x in names if x in sums), Fraction(0))
    return got if exactly else to_float(got)


def _replicate_count(sums: Mapping[str, list[float]], i: int) -> float:
    """Replicate ``i``'s row count (NaN: none, 0)."""
    n = sums["n"][i]
    return 0.0 if n != n else float(n)


def _short(cols: Mapping[str, Any], key: str) -> dict[str, list[float]]:
    """The replicates' columns of statistic ``key`` by short name, as lists."""
    return {c[len(key) + 1:]: v.tolist() for c, v in cols.items()}


def _replicate_sums(sums: Mapping[str, list[float]], i: int, exactly: bool) -> Moments:
    return _from_sums(partial(_replicate_total, sums, i, exactly), sums.__contains__,
                      _replicate_count(sums, i), exactly)


def _replicate_moments(cols: Mapping[str, Any]) -> list[dict[str, Any]]:
    """:func:`_combine_moments` of each bootstrap replicate (see ``AggStat.replicates``): the
    same arithmetic on each replicate's sums, without a frame of parts to read them from."""
    sums = _short(cols, MOMENTS)
    return [_segment_moments(partial(_replicate_sums, sums, i), _given(sums["max_e"][i]),
                             _given(sums["lo_e"][i]), _given(sums["hi_e"][i]))
            for i in range(len(sums["n"]))]


def moments(p: Params, c: Context) -> Sequence[Stat]:
    weighted = is_weighted(c)
    return [AggStat(MOMENTS, _moment_exprs(weighted), _combine_moments,
                    extremes={f"{MOMENTS}.max_e": "max", f"{MOMENTS}.lo_e": "min",
                              f"{MOMENTS}.hi_e": "max"}, replicates=_replicate_moments)]


SPREAD = "regression.spread"


def _spread_exprs(weighted: bool) -> Callable[[], list[pl.Expr]]:
    """Σw (or the row count), Σw·ŷ and Σw·ŷ², exactly (the terms of the target's)."""
    def exprs() -> list[pl.Expr]:
        k = SPREAD
        terms = _square_terms(pl.col("prediction"), "p", weighted)
        if weighted:
            w = pl.col("weight")
            terms = {"w": (w, w.max(), 2), **terms}
        out = [pl.len().cast(F64).alias(f"{k}.n")]
        for name, (x, scale, limbs) in terms.items():
            out += exact_sum(x, f"{k}.{name}", top=None, limbs=limbs, scale=scale)
        return out

    return exprs


def _spread_of(total: Callable[..., Fraction | float], has: Callable[[str], bool],
               n: float) -> dict[str, float]:
    """Total weight and the predictions' centred sum of squares from the exact sums
    (``total`` of the named sums present: ``has``) and the row count ``n``."""
    k = SPREAD
    sp_names, sp2_names = _square_names("p")
    w = total("w") if has("w") else Fraction(n)
    sp, sp2 = total(*sp_names), total(*sp2_names)
    try:
        m2 = to_float(sp2 - sp * sp / w) if w else 0.0
    except OverflowError:  # beyond the float range: the same formula in floats
        fw, fsp = to_float(w), to_float(sp)
        m2 = to_float(sp2) - fsp * fsp / fw
    return {f"{k}.w": to_float(w), f"{k}.m2_p": m2}


def _combine_spread(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Each segment's total weight and the predictions' centred sum of squares
    Σw·(ŷ − ŷ̄)² = Σw·ŷ² − (Σw·ŷ)²/Σw, in exact arithmetic (rounded once)."""
    k = SPREAD
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for part in df.iter_rows(named=True):
        groups.setdefault(tuple(part[c] for c in keys), []).append(part)

    def has(name: str) -> bool:
        return f"{k}.{name}#x:j" in df.columns

    out = []
    for key, rows in groups.items():
        def total(*names: str, rows: list[dict[str, Any]] = rows) -> Fraction | float:
            return sum((exact_total(rows, f"{k}.{n}") for n in names if has(n)), Fraction(0))

        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row.update(_spread_of(total, has, sum(float(r[f"{k}.n"] or 0.0) for r in rows)))
        out.append(row)
    schema: dict[str, Any] = {**df.select(keys).schema, f"{k}.w": F64, f"{k}.m2_p": F64}
    return pl.DataFrame(out, schema=schema) if out else pl.DataFrame(schema=schema)


def _replicate_spread(cols: Mapping[str, Any]) -> list[dict[str, Any]]:
    """:func:`_combine_spread` of each bootstrap replicate (see ``AggStat.replicates``)."""
    sums = _short(cols, SPREAD)
    return [_spread_of(partial(_replicate_total, sums, i, True), sums.__contains__,
                       _replicate_count(sums, i)) for i in range(len(sums["n"]))]


def spread(p: Params, c: Context) -> Sequence[Stat]:
    """The predictions' weighted centred sum of squares (Spark's explained variance)."""
    return [AggStat(SPREAD, _spread_exprs(is_weighted(c)), _combine_spread,
                    replicates=_replicate_spread)]


def _abs_errors_build(lf: pl.LazyFrame, keys: list[str], weighted: bool = False
                      ) -> pl.LazyFrame:
    return lf.group_by([*keys, (pl.col("label") - pl.col("prediction")).abs().alias("abs_e")]).agg(
        *weight_sum(pl.col("weight"), "w", weighted)
    )


def _abs_errors_sorted(lf: pl.LazyFrame, keys: list[str], weighted: bool = False
                       ) -> pl.LazyFrame:
    # in memory: sort the rows and group the sorted runs (cheaper than hashing 10^7 distinct
    # errors and then sorting them for the median); the streaming engine groups first
    abs_e = (pl.col("label") - pl.col("prediction")).abs().alias("abs_e")
    return (
        lf.select(*keys, abs_e, "weight").sort([*keys, "abs_e"])
        .group_by([*keys, "abs_e"], maintain_order=True)
        .agg(*weight_sum(pl.col("weight"), "w", weighted))
    )


def _abs_errors_values(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """Unweighted, no segments, in memory: not the whole table of errors but its middle
    value(s), from the errors sorted as one column of values (10^7 rows: 0.5 s; counting the
    runs of equal errors as well costs 0.8 s, two selections 0.8 s): the middle one carrying
    every row when the count is odd, else the two middle ones carrying half each. The median of
    this table is the median of all the errors (numpy's: the mean of the two middle values).
    Only the median reads this table, and this path never combines parts.

    >>> lf = pl.LazyFrame({"label": [1.0, 5.0, 2.0, 9.0], "prediction": [0.0, 0.0, 0.0, 0.0]})
    >>> _abs_errors_values(lf, []).collect().rows()
    [(2.0, 2.0), (5.0, 2.0)]
    >>> _abs_errors_values(lf.head(3), []).collect().rows()
    [(2.0, 3.0)]
    >>> _abs_errors_values(lf.head(0), []).collect().rows()
    []
    """
    abs_e = (pl.col("label") - pl.col("prediction")).abs().sort().alias("abs_e")
    n = pl.len()
    picked = 2 - n % 2  # two middle values when the count is even, one when odd
    return lf.select(abs_e).select(
        pl.col("abs_e").slice((n - 1) // 2, picked),
        (n.cast(pl.Float64) / picked.cast(pl.Float64)).alias("w"),
    )


def abs_errors(p: Params, c: Context) -> Sequence[Stat]:
    weighted = is_weighted(c)
    build = table_build(c, partial(_abs_errors_build, weighted=weighted),
                        partial(_abs_errors_sorted, weighted=weighted), _abs_errors_values)
    return [FrameStat(ABS_ERRORS, build, partial(sum_by, by=["abs_e"]))]
