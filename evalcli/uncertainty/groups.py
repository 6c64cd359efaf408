"""Units to random groups, and the replicate weights that resample the groups.

The bootstrap rides on the run's mergeable statistics: each unit (a row, a query, a user...) is
hashed, with a seed, into one of ``G`` groups; the group is one more key of the single pass that
computes the statistics (as a segment is); the driver then forms each of ``R`` replicates by
weighting the groups (:func:`replicate_weights`) and summing their statistics
(:func:`replicate_sums`), and finalizes each replicate's metric from the sums. The
leave-one-group-out sums (:func:`jackknife_sums`) give BCa its acceleration.

The hash is defined here, not borrowed: ``pl.Expr.hash`` is stable only within one Polars version
(its documentation says so), and a driver and its Spark executors, or a stored baseline report
and today's run, may not share one. :func:`unit_key` is SplitMix64's finalizer (Steele, Lea &
Flood 2014) written with Polars integer arithmetic, which wraps modulo 2**64 on every engine;
``tests/test_uncertainty_groups.py`` pins it to a pure-Python reference and to fixed values.

A unit is identified by its value **as text**, so the same id read as an integer from CSV and as
a string from JSON is one unit:

- a whole number that fits a signed 64-bit integer (an integer column, a float column's whole
  values, or text in canonical decimal form: ``"42"``, ``"-7"``, ``"0"``; not ``"042"``,
  ``"+7"``, ``"-0"`` or ``"42.0"``) has the key ``mix(value mod 2**64)``;
- any other text has a key from its UTF-8 bytes, cut into 8-byte chunks ``c_k`` read as
  big-endian integers (the last one may be shorter):
  ``mix(mix(len(bytes) ^ TEXT) + sum_k mix(c_k + mix(k ^ CHUNK)))``, sums modulo 2**64;
- other types (dates, booleans, non-whole floats, decimals) are hashed as Polars writes them as
  text (``2024-01-31``, ``true``, ``0.5``), so they are stable as long as that text is; binary
  values are hashed as their bytes. A null unit has a null key and a null group: the caller
  decides what a missing unit means.

The group of a unit is ``mix(key ^ mix(seed ^ SEED)) mod G``: one seed gives one partition, the
same on every engine, input format and partitioning.

Cost (one core, 10**6 units): about 0.05 s for integer ids and 0.5 s for short text ids (each
8 bytes of text costs about a tenth of a second); the engine may hash each distinct unit once
(a query's rows share its id) rather than every row.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = [
    "Scheme",
    "group_count",
    "jackknife_sums",
    "mix",
    "mix_int",
    "replicate_sums",
    "replicate_weights",
    "unit_group",
    "unit_key",
    "units_group",
]

Scheme = Literal["multinomial", "poisson"]

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
# Domain tags, so that a text's length, a chunk's position and the seed never collide.
TEXT = 0x7465787420757466  # b"text utf"
CHUNK = 0x6368756E6B206174  # b"chunk at"
SEED = 0x6576616C63692073  # b"evalci s"
_CHUNK = 8  # bytes per chunk, read big-endian as one UInt64
_UNROLLED = 4  # chunks sliced at fixed offsets (32 bytes); longer text goes through a list
_U64 = pl.UInt64


def _u64(value: int) -> pl.Expr:
    return pl.lit(value & _MASK, dtype=_U64)


def mix(x: pl.Expr) -> pl.Expr:
    """SplitMix64's output function of ``x + 0x9E3779B97F4A7C15``, as a UInt64 expression.

    ``z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB;
    z ^= z >> 31``, every operation modulo 2**64. Each step reads the previous one through a
    struct field, so the expression grows linearly when mixes nest (written naively, each step
    would copy its input twice, and nested mixes would be evaluated exponentially often).

    >>> pl.select(mix(pl.lit(0, dtype=pl.UInt64))).item()  # SplitMix64's first output, seed 0
    16294208416658607535
    """
    z = pl.field("z")
    return (pl.struct((x.cast(_U64) + _u64(_GOLDEN)).alias("z"))
            .struct.with_fields(((z ^ (z // _u64(1 << 30))) * _u64(_M1)).alias("z"))
            .struct.with_fields(((z ^ (z // _u64(1 << 27))) * _u64(_M2)).alias("z"))
            .struct.with_fields((z ^ (z // _u64(1 << 31))).alias("z"))
            .struct.field("z"))


def mix_int(value: int) -> int:
    """:func:`mix` on one Python integer (modulo 2**64).

    >>> mix_int(0)
    16294208416658607535
    """
    z = (value + _GOLDEN) & _MASK
    z = ((z ^ (z >> 30)) * _M1) & _MASK
    z = ((z ^ (z >> 27)) * _M2) & _MASK
    return z ^ (z >> 31)


def _named_as(result: pl.Expr, unit: pl.Expr) -> pl.Expr:
    """``result`` under the unit expression's output name (``mix`` would name it ``z``)."""
    name = unit.meta.output_name(raise_if_undetermined=False)
    return result if name is None else result.alias(name)


def _integer_key(signed: pl.Expr) -> pl.Expr:
    return mix(signed.cast(pl.Int64).reinterpret(signed=False))


def _chunk(hexed: pl.Expr) -> pl.Expr:
    return hexed.str.to_integer(base=16, dtype=_U64, strict=False)


def _bytes_key(data: pl.Expr) -> pl.Expr:
    """The key of binary values: ``mix(mix(len ^ TEXT) + sum_k mix(c_k + mix(k ^ CHUNK)))``.

    The first ``_UNROLLED`` chunks are sliced at fixed offsets (a missing chunk is null, which
    the horizontal sum skips); longer values add their remaining chunks through a list.
    """
    size = data.bin.size("b").cast(_U64)
    terms = [mix(_chunk(data.bin.slice(_CHUNK * k, _CHUNK).bin.encode("hex"))
                 + _u64(mix_int(k ^ CHUNK)))
             for k in range(_UNROLLED)]
    rest = (data.bin.slice(_CHUNK * _UNROLLED).bin.encode("hex")
            .str.extract_all(f"[0-9a-f]{{1,{2 * _CHUNK}}}"))
    values = rest.list.eval(_chunk(pl.element()))
    positions = pl.int_ranges(_UNROLLED, _UNROLLED + rest.list.len(), dtype=_U64)
    tail = (values + positions.list.eval(mix(pl.element() ^ _u64(CHUNK)))).list.eval(
        mix(pl.element())).list.sum()
    return mix(mix(size ^ _u64(TEXT)) + pl.sum_horizontal([*terms, tail]))


def _text_key(text: pl.Expr) -> pl.Expr:
    as_int = text.str.to_integer(base=10, strict=False)
    canonical = text.str.contains(r"^(?:0|-?[1-9][0-9]{0,18})$") & as_int.is_not_null()
    return (pl.when(canonical).then(_integer_key(as_int))
            .otherwise(_bytes_key(text.cast(pl.Binary))))


def unit_key(unit: pl.Expr, dtype: pl.DataType | type[pl.DataType]) -> pl.Expr:
    """The 64-bit key of each unit (UInt64), from its value as text; see the module's rules.

    ``dtype`` is the unit column's type in the frame (``lf.collect_schema()[name]``): it picks
    the cheapest path that gives the same key as the text would.

    >>> ids = pl.DataFrame({"as_int": [42, -7], "as_text": ["42", "-7"]})
    >>> keys = ids.select(unit_key(pl.col("as_int"), pl.Int64),
    ...                   unit_key(pl.col("as_text"), pl.String))
    >>> keys["as_int"].to_list() == keys["as_text"].to_list()
    True
    >>> pl.select(unit_key(pl.lit("user-1"), pl.String)).item()
    12450814784178761541
    """
    return _named_as(_unit_key(unit, dtype), unit)


def _unit_key(unit: pl.Expr, dtype: pl.DataType | type[pl.DataType]) -> pl.Expr:
    if dtype == pl.Null:
        return unit.cast(_U64)  # all null, one per row
    if dtype == pl.UInt64:  # beyond Int64's range it is text, as the string would be
        return (pl.when(unit < pl.lit(1 << 63, dtype=_U64))
                .then(_integer_key(unit.cast(pl.Int64, strict=False)))
                .otherwise(_text_key(unit.cast(pl.String))))
    if dtype.is_integer():
        return _integer_key(unit)
    if dtype.is_float():
        whole = unit.is_finite() & (unit.floor() == unit) & (unit >= -(2.0**63)) & (
            unit < 2.0**63)
        return (pl.when(whole).then(_integer_key(unit.cast(pl.Int64, strict=False)))
                .otherwise(_text_key(unit.cast(pl.String))))
    if dtype == pl.Binary:
        return _bytes_key(unit)
    return _text_key(unit.cast(pl.String))


def unit_group(unit: pl.Expr, dtype: pl.DataType | type[pl.DataType], groups: int,
               seed: int = 0) -> pl.Expr:
    """The random group (UInt32 in ``[0, groups)``) of each unit, for a seed.

    >>> frame = pl.DataFrame({"query": ["q1", "q2", "q3", "q1"]})
    >>> frame.select(unit_group(pl.col("query"), pl.String, groups=4, seed=0))["query"].to_list()
    [3, 2, 0, 3]
    """
    if groups < 1:
        raise ValueError(f"groups must be at least 1, got {groups}")
    if groups > 2**32:
        raise ValueError(f"groups must be at most 2**32, got {groups}")
    salt = mix_int((seed & _MASK) ^ SEED)
    return _named_as((mix(_unit_key(unit, dtype) ^ _u64(salt)) % _u64(groups)).cast(pl.UInt32),
                     unit)


UNITS = 0x756E697473206F66  # b"units of": the key of a unit made of several columns


def units_group(units: list[tuple[pl.Expr, pl.DataType | type[pl.DataType]]], groups: int,
                seed: int = 0) -> pl.Expr:
    """:func:`unit_group` of a unit identified by one column or several (a join key of two
    columns): several keys combine in order, ``mix(... mix(mix(k1 ^ UNITS) + k2) ...)``.

    >>> frame = pl.DataFrame({"query": ["q1", "q2", "q3", "q1"]})
    >>> one = frame.select(units_group([(pl.col("query"), pl.String)], 4, 0))
    >>> one.to_series().to_list() == frame.select(unit_group(pl.col("query"), pl.String, 4, 0)
    ...                                            ).to_series().to_list()
    True
    """
    if len(units) == 1:
        return unit_group(units[0][0], units[0][1], groups, seed)
    if groups < 1 or groups > 2**32:
        raise ValueError(f"groups must be in [1, 2**32], got {groups}")
    key: pl.Expr | None = None
    for expr, dtype in units:
        k = _unit_key(expr, dtype)
        key = mix(k ^ _u64(UNITS)) if key is None else mix(key + k)
    assert key is not None
    salt = mix_int((seed & _MASK) ^ SEED)
    return (mix(key ^ _u64(salt)) % _u64(groups)).cast(pl.UInt32)


def group_count(units: int, target: int = 1000) -> int:
    """How many groups to hash ``units`` units into: ``target``, at most one per unit.

    >>> group_count(120_000), group_count(37), group_count(0)
    (1000, 37, 1)
    """
    if target < 1:
        raise ValueError(f"target must be at least 1, got {target}")
    return max(1, min(target, units))


def replicate_weights(groups: int, replicates: int, seed: int = 0,
                      scheme: Scheme = "multinomial") -> npt.NDArray[np.int64]:
    """An ``(replicates, groups)`` matrix of counts: how often each replicate draws each group.

    ``multinomial``: each replicate draws ``groups`` groups with replacement (each row sums to
    ``groups``), the classic bootstrap over groups. ``poisson``: each count is Poisson(1),
    independently (rows sum to ``groups`` on average), which needs no coordination between
    parts of the data. ``groups`` is the number of non-empty groups; give the engine's groups
    present, in a fixed order (e.g. sorted by group id).

    Deterministic for a seed: the draws come from the raw 64-bit stream of
    ``numpy.random.Generator(PCG64(seed))`` (a stream NumPy keeps stable across versions,
    unlike its distribution methods), turned into uniforms ``u`` with 53 random bits: a
    multinomial draw is the group ``floor(u * groups)`` (bias below ``groups / 2**53``), a
    Poisson(1) count inverts its distribution function at ``u``. A million counts (1,000 x
    1,000) take about 10 ms.

    >>> w = replicate_weights(groups=5, replicates=3, seed=0)
    >>> w.tolist()
    [[2, 1, 0, 1, 1], [0, 0, 1, 2, 2], [2, 0, 0, 1, 2]]
    >>> w.sum(axis=1).tolist()
    [5, 5, 5]
    >>> replicate_weights(groups=5, replicates=2, seed=0, scheme="poisson").tolist()
    [[1, 0, 0, 0, 2], [2, 1, 1, 1, 3]]
    """
    if groups < 1 or replicates < 1:
        raise ValueError(f"groups and replicates must be at least 1, got {groups} and "
                         f"{replicates}")
    if scheme not in ("multinomial", "poisson"):
        raise ValueError(f"scheme must be 'multinomial' or 'poisson', got {scheme!r}")
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator
    raw = bits.random_raw(replicates * groups)
    uniform = (raw >> np.uint64(11)).astype(np.float64) * 2.0**-53  # in [0, 1), 53 bits
    if scheme == "multinomial":
        drawn = np.minimum((uniform * groups).astype(np.int64), groups - 1)
        drawn = drawn.reshape(replicates, groups)
        drawn += (np.arange(replicates, dtype=np.int64) * groups)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=replicates * groups)
        return counts.reshape(replicates, groups).astype(np.int64, copy=False)
    else:
        k = np.arange(40)
        log_pmf = -1.0 - np.cumsum(np.log(np.maximum(k, 1)))  # log(e^-1 / k!)
        cdf = np.cumsum(np.exp(log_pmf))
        cdf[-1] = 1.0  # P(count > 39) < 1e-47; no uniform in [0, 1) falls past the table
        counts = np.searchsorted(cdf, uniform, side="right")
        return counts.reshape(replicates, groups).astype(np.int64, copy=False)


def replicate_sums(weights: npt.ArrayLike, group_statistics: npt.ArrayLike
                   ) -> npt.NDArray[np.float64]:
    """Each replicate's statistics: ``weights (R x G) @ group_statistics (G x k)`` -> ``R x k``.

    >>> stats = np.array([[3.0, 4.0], [1.0, 2.0], [0.0, 5.0]])  # per group: hits, rows
    >>> replicate_sums([[1, 2, 0], [0, 0, 3]], stats).tolist()
    [[5.0, 8.0], [0.0, 15.0]]
    """
    w = np.asarray(weights, dtype=np.float64)
    s = np.asarray(group_statistics, dtype=np.float64)
    if w.ndim != 2 or s.ndim not in (1, 2) or w.shape[1] != s.shape[0]:
        raise ValueError(f"weights must be (replicates, groups) and statistics (groups, k); "
                         f"got {w.shape} and {s.shape}")
    out: npt.NDArray[np.float64] = w @ s
    return out


def jackknife_sums(group_statistics: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The statistics with each group left out in turn: ``total - group`` (``G x k``).

    >>> jackknife_sums([[3.0, 4.0], [1.0, 2.0], [0.0, 5.0]]).tolist()
    [[1.0, 7.0], [3.0, 9.0], [4.0, 6.0]]
    """
    s = np.asarray(group_statistics, dtype=np.float64)
    out: npt.NDArray[np.float64] = s.sum(axis=0, keepdims=True) - s
    return out
