"""Confidence intervals from the single pass: random groups of units, resampled on the driver.

When a run asks for intervals (``uncertainty:``, ``--ci``), each unit (a row, a query, or the
value of a column such as ``user_id``) is hashed with the seed into one of ``G`` random groups
(:func:`evalcli.uncertainty.groups.unit_group`), and the pass computes every statistic per
group as well, exactly as it computes a segment (the group is one more key). Here, on the
driver:

1. each statistic's per-group partials become a matrix, groups by columns of numbers: an
   :class:`~evalcli.metrics.base.AggStat`'s columns, or a
   :class:`~evalcli.metrics.base.FrameStat`'s table pivoted on its ``by`` columns (a table of
   more than :data:`BINS` rows, e.g. weights per distinct score, is first merged into
   :data:`BINS` bins of consecutive values; a float key beside others, e.g. per-class scores,
   into as many as keep the table within :data:`KEYS` rows: the replicates only, the point
   value stays exact);
2. each replicate weights the groups (how often a multinomial resample of the present groups
   draws each one, :func:`~evalcli.uncertainty.groups.replicate_weights`): its statistics are
   the weighted sums (a matrix product), its maxima and minima over the groups drawn;
3. each replicate's metrics are the metrics' own ``value`` of those statistics, so a replicate
   follows every convention of the point value; a metric that declares its value a ratio of
   two sums of its table (:attr:`~evalcli.metrics.base.Metric.ratio`: a mean over queries)
   is divided as arrays, every replicate at once, with the same arithmetic;
4. each metric's interval: a closed form where the metric has one and the run resamples its
   natural unit (``method: auto``: Wilson, DeLong, t), else the percentile (or BCa) interval of
   the replicates. With binned tables, the replicates are shifted by the point value's binning
   error (the value of the binned table with every group once minus the exact value).

The same seed gives the same groups and the same draws on every engine and input format.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import polars as pl

from evalcli.engine.align import SEG, UNIT, Aligned
from evalcli.errors import ConfigError, MetricError
from evalcli.metrics import stats as stats_
from evalcli.metrics.base import (
    AbsentLabel,
    AggStat,
    Context,
    FrameStat,
    Memo,
    Stat,
)
from evalcli.metrics.task import TaskStatistics
from evalcli.result import CI, MetricResult

if TYPE_CHECKING:
    import numpy as np

    from evalcli.engine.plan import Plan, Resampling
    from evalcli.uncertainty.intervals import Interval

GROUP = SEG + "__group"
"""The column of a row's random group (named as a segment column, so that every frame a
family derives per query carries it as it carries the segments)."""
REP = "__rep"
BINS = 2048
"""A table of more rows than this (per distinct score, per distinct error) is merged into this
many bins of consecutive values for the replicates."""
KEYS = 4 * BINS
MIN_BINS = 16
"""A table keyed by a float and other columns (multiclass: class, label, score) has its float
merged into bins so that it keeps about KEYS rows, each key of the others at least MIN_BINS
bins."""
DRAWS = 0x5245504C  # b"REPL": the replicates' seed is mix(seed ^ DRAWS), not the groups'
NOT_RESAMPLED = ("no bootstrap for this metric: its statistics do not add up over groups of "
                 "units (e.g. a product over a catalog)")
MAX_UNDEFINED = 0.1
"""More replicates than this share without a value: no interval."""


# --------------------------------------------------------------------------- the pass

def partition_roles(stats: Mapping[str, Stat]) -> list[str]:
    """The roles whose rows must stay together (a query's): a unit must not split them."""
    out: list[str] = []
    for st in stats.values():
        for r in st.partition_by:
            if r not in out:
                out.append(r)
    return out


def unit_columns(plan: Plan, a: Aligned, stats: Mapping[str, Stat]) -> tuple[list[str], str]:
    """The columns that identify a unit, and the unit's name for the report (``rows``, the
    query column's name, or the column the config names). An empty list: the row's place."""
    rs = plan.resampling
    assert rs is not None
    together = partition_roles(stats)
    if rs.unit == "auto" and together:
        return together, "+".join(a.columns.get(r, r) for r in together)
    if rs.unit in ("auto", "rows"):
        if together:
            raise ConfigError(
                f"uncertainty: unit: rows would split the rows of a {a.columns.get(together[0])} "
                f"(the {plan.task.name} metrics are means over "
                f"{'/'.join(r[:-1] + 'ies' if r.endswith('y') else r + 's' for r in together)})",
                hint="use unit: auto (resample queries), or a column that is the same on every "
                "row of a query (e.g. user_id)")
        return list(a.ids), "rows"
    return [UNIT], rs.unit


def with_groups(plan: Plan, a: Aligned, lf: pl.LazyFrame, stats: Mapping[str, Stat],
                whole: bool) -> pl.LazyFrame:
    """``lf`` with each row's random group in :data:`GROUP`."""
    from evalcli.uncertainty.groups import units_group

    rs = plan.resampling
    assert rs is not None
    cols, _ = unit_columns(plan, a, stats)
    if not cols:
        if not whole:
            raise ConfigError(
                "uncertainty: resampling rows needs an id column on this engine (a row's place "
                "in the file is not known to each part)",
                hint="name the id column under 'columns: {id: ...}', or use engine: polars")
        lf = lf.with_row_index(GROUP)
        cols = [GROUP]
    together = partition_roles(stats)
    if cols == [UNIT] and together:
        # the rows of a query are one unit's: a row only the other file holds (a judged item
        # not recommended, when the unit column is the predictions') takes its query's
        lf = lf.with_columns(pl.col(UNIT).fill_null(pl.col(UNIT).max().over(together)))
    schema = lf.collect_schema()
    # rows without a unit value (a null user id) are one unit together: the group numbered
    # ``groups``, past the hashed ones
    return lf.with_columns(units_group([(pl.col(c), schema[c]) for c in cols], rs.groups,
                                       rs.seed).fill_null(rs.groups).alias(GROUP))


def unit_split_query(plan: Plan, a: Aligned, lf: pl.LazyFrame, stats: Mapping[str, Stat]
                     ) -> pl.LazyFrame | None:
    """A query for the first query whose rows hold two values of the unit column, when the
    unit is a column and the metrics are means over queries (else ``None``)."""
    together = partition_roles(stats)
    cols, _ = unit_columns(plan, a, stats)
    if cols != [UNIT] or not together:
        return None
    # (``lf`` comes from :func:`with_groups`: a query's rows of the other file hold its unit)
    return (lf.group_by(together).agg(pl.col(UNIT).n_unique().alias("__units"),
                                      pl.col(UNIT).first().alias("__unit"))
            .filter(pl.col("__units") > 1).sort(together).head(1))


def split_unit_error(plan: Plan, a: Aligned, df: pl.DataFrame) -> ConfigError:
    rs = plan.resampling
    assert rs is not None
    row = df.row(0, named=True)
    together = [c for c in df.columns if not c.startswith("__")]
    where = ", ".join(f"{a.columns.get(c, c)}={row[c]!r}" for c in together)
    return ConfigError(
        f"uncertainty: unit: {rs.unit}: the rows of one query hold {row['__units']} values of "
        f"'{rs.unit}' (first at {where})",
        hint="the unit must be the same on every row of a query (a user, a session); use "
        "unit: auto to resample queries")


# --------------------------------------------------------------------------- replicates

@dataclasses.dataclass
class Groups:
    """The groups present (sorted ids) and the rows of weights: the replicates, then one row
    weighting every group once (the binned point value), then the jackknife's rows."""

    ids: np.ndarray
    weights: np.ndarray
    replicates: int
    jackknife: bool


def draw(group_ids: Sequence[int], rs: Resampling) -> Groups:
    """The weights for the present groups (sorted by id)."""
    import numpy as np

    from evalcli.uncertainty.groups import mix_int, replicate_weights

    ids = np.asarray(sorted(set(group_ids)), dtype=np.int64)
    g = max(1, ids.size)
    w = replicate_weights(g, rs.replicates, seed=mix_int(rs.seed ^ DRAWS))
    rows = [w.astype(np.float64), np.ones((1, g))]
    jack = rs.method == "bca"
    if jack:
        rows.append(np.ones((g, g)) - np.eye(g))
    return Groups(ids, np.vstack(rows), rs.replicates, jack)


def _positions(ids: np.ndarray, values: pl.Series) -> np.ndarray:
    import numpy as np
    return np.searchsorted(ids, values.to_numpy().astype(np.int64))


def _held(weights: np.ndarray, g_pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns of ``weights`` of the groups that rows at ``g_pos`` (positions among the
    run's groups) hold, and each row's position among those columns. A segment holds few of
    the run's groups: its sums over the groups drawn need only their columns (100 segments
    of 10 queries each, 627 groups: each product 60 times smaller). The whole run's rows hold
    every group: ``weights`` itself."""
    import numpy as np
    held, local = np.unique(g_pos, return_inverse=True)
    if held.size == weights.shape[1]:
        return weights, g_pos
    return weights[:, held], local


def _agg_replicates(st: AggStat, df: pl.DataFrame, gr: Groups, weights: np.ndarray
                    ) -> list[Any]:
    """An AggStat's value in each row of ``weights`` from its per-group partial rows."""
    import numpy as np
    own = [c for c in df.columns if c.startswith(st.key + ".")]
    exact = stats_.exact_names(own)
    flat = _finalized(df.select(GROUP, *own))
    if callable(st.combine):
        ops = {c: st.extremes.get(c, "sum") for c in flat.columns if c != GROUP}
    else:
        ops = {c: ("sum" if op == "exact_sum" else op) for c, op in st.combine.items()}
    cols = [c for c in ops if c in flat.columns]
    flat = flat.group_by(GROUP).agg([getattr(pl.col(c).cast(pl.Float64), ops[c])()
                                     for c in cols])
    weights, pos = _held(weights, _positions(gr.ids, flat[GROUP]))
    sums = [c for c in cols if ops[c] == "sum"]
    out: dict[str, np.ndarray] = {}
    if sums:
        x = np.zeros((weights.shape[1], len(sums)))
        x[pos] = np.nan_to_num(flat.select(sums).to_numpy().astype(np.float64), nan=0.0)
        with np.errstate(over="ignore", invalid="ignore"):  # (sums near ±1e308: inf, said
            y = weights @ x                                  # as undefined, not on stderr)
        for i, c in enumerate(sums):
            out[c] = y[:, i]
    for c in cols:
        if ops[c] in ("max", "min"):
            e = np.full(max(1, weights.shape[1]), np.nan)  # (no group: no value)
            e[pos] = flat[c].cast(pl.Float64).fill_null(np.nan).to_numpy()
            drawn = np.where(weights > 0, e[None, :], np.nan) if weights.shape[1] else \
                np.full((weights.shape[0], 1), np.nan)
            # (a weighting that draws none of the groups' rows: NaN, no extreme; NumPy warns
            # of the all-NaN slice on stderr, which a quiet run must not print)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                reduced = np.nanmax(drawn, axis=1) if ops[c] == "max" else \
                    np.nanmin(drawn, axis=1)
            out[c] = reduced
    n = weights.shape[0]
    if not callable(st.combine):
        return [{c: _num(out[c][i]) for c in cols} for i in range(n)]
    if st.replicates is not None:
        return st.replicates(out)
    return _combined(st, out, exact)


def _combined(st: AggStat, out: Mapping[str, np.ndarray], exact: Mapping[str, int]
              ) -> list[dict[str, Any]]:
    """An AggStat with a combine of its own (e.g. regression's moments) in each replicate,
    from the replicates' sums and extremes ``out`` (a column each; ``exact``: the exact
    sums'): each replicate as one part whose exact sums are values kept aside (read exactly
    by the combine), the other columns as they are."""
    assert callable(st.combine)
    n = len(next(iter(out.values())))
    cols = list(out)
    data: dict[str, Any] = {REP: list(range(n))}
    for c in cols:
        if c in exact:
            data[f"{c}{stats_.MARK}j"] = [0] * n
            data[f"{c}{stats_.MARK}n"] = [0] * n
            data[f"{c}{stats_.MARK}e"] = [[_num(v)] if _num(v) is not None else []
                                          for v in out[c]]
        else:
            data[c] = [_num(v) for v in out[c]]
    frame = pl.DataFrame(data, strict=False)
    combined = st.combine(frame, [REP]).sort(REP)
    return [stats_.finalize_row({c: v for c, v in row.items() if c != REP})
            for row in combined.iter_rows(named=True)]


def _finalized(df: pl.DataFrame) -> pl.DataFrame:
    """Partial rows with each exact sum as its value (vectorized, within an ulp): sums whose
    values kept aside were only counted, none (the engine fetches them when any), first get
    their empty list of them."""
    add = []
    for name in stats_.exact_names(df.columns):
        e, h = f"{name}{stats_.MARK}e", f"{name}{stats_.MARK}h"
        if e not in df.columns:
            add.append(pl.lit([], dtype=pl.List(pl.Float64)).alias(e))
        if h not in df.columns:
            add.append(pl.lit(0, dtype=pl.Int64).alias(h))
    if add:
        df = df.with_columns(add)
    return stats_.finalize_frame(df.select(c for c in df.columns
                                           if not c.endswith(f"{stats_.MARK}c")))


def _num(v: float) -> float | None:
    return None if v != v else float(v)


def details_only(st: Stat) -> bool:
    """Whether a statistic feeds its metric's details only (see ``FrameStat.details_only``):
    the replicates go without it."""
    return isinstance(st, FrameStat) and st.details_only


def resamples(st: Stat) -> bool:
    """Whether a statistic's replicates can be drawn: an aggregation, or a table whose rows
    add up over parts (:func:`table_by`)."""
    return not isinstance(st, FrameStat) or table_by(st) is not None


def table_by(fs: FrameStat) -> tuple[str, ...] | None:
    """The columns that key a FrameStat's table rows when its other columns add up over parts
    (declared, or read from a ``sum_by`` combine); ``None``: its tables do not resample."""
    if fs.by is not None:
        return fs.by
    c = fs.combine
    if isinstance(c, functools.partial) and c.func is stats_.sum_by:
        return tuple(c.keywords.get("by", ()))
    return None


class _Stacked(NamedTuple):
    """A FrameStat's table in every weighting (see :func:`_stacked`)."""

    flat: pl.DataFrame
    """The finalized per-group table."""
    by: tuple[str, ...]
    keys: pl.DataFrame
    """The table's keys, one row per table row (no columns when ``by`` is empty)."""
    vals: list[str]
    array: np.ndarray
    """Weightings x table rows x ``vals``; a table row all 0 in a weighting is no row."""
    binned: bool


def _merged(uniq: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ascending values ``uniq`` (more than ``bins``) merged into ``bins`` bins of
    consecutive values: each value's bin, and each bin's mean value."""
    import numpy as np
    of = np.arange(uniq.size) * bins // uniq.size
    sizes = np.bincount(of, minlength=bins)
    return of, np.bincount(of, weights=uniq.astype(np.float64), minlength=bins) / sizes


def _frames_of(st: _Stacked, n: int) -> list[pl.DataFrame | None]:
    """The table in each of the ``n`` weightings, as frames."""
    import numpy as np
    keep = (st.array != 0).any(axis=-1) if st.vals else \
        np.ones(st.array.shape[:2], dtype=bool)
    # every weighting's rows in one frame (weighting after weighting), each weighting's
    # table a zero-copy slice of it: a frame per weighting would cost 0.1 ms each
    rep_idx, k_idx = np.nonzero(keep)
    columns = {c: st.keys[c].gather(k_idx) for c in st.by}
    columns.update({c: pl.Series(c, st.array[rep_idx, k_idx, j])
                    for j, c in enumerate(st.vals)})
    big = pl.DataFrame([columns[c] for c in st.flat.columns if c != GROUP])
    counts = np.bincount(rep_idx, minlength=n)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return [big.slice(int(a), int(b)) for a, b in zip(starts, counts, strict=True)]


def _stacked(fs: FrameStat, df: pl.DataFrame, gr: Groups, weights: np.ndarray
             ) -> _Stacked | None:
    """A FrameStat's table in each row of ``weights`` (its rows' sums over the groups each
    weighting draws), as one array; ``None`` when its tables do not resample."""
    import numpy as np
    by = table_by(fs)
    if by is None:
        return None
    flat = _finalized(df)
    vals = [c for c in flat.columns if c != GROUP and c not in by]
    if any(not flat.schema[c].is_numeric() and flat.schema[c] != pl.Boolean for c in vals):
        return None
    g_pos = _positions(gr.ids, flat[GROUP])
    binned = fs.group_build is not None  # (coarse values: the replicates are shifted too)
    if not by:  # one row per group: the sums of the group's queries, say
        keys, k_pos = pl.DataFrame(), np.zeros(flat.height, dtype=np.int64)
    elif len(by) == 1 and flat.schema[by[0]].is_numeric() and \
            flat[by[0]].null_count() == 0:
        col = by[0]
        if fs.group_build is not None and flat[col].n_unique() > stats_.COARSE_ABOVE:
            # the grid the single-part engines' pass rounds to (a no-op on rounded values):
            # the same tables whatever the engine and its parts
            flat = flat.with_columns(stats_.coarse(pl.col(col)).cast(flat.schema[col]))
        uniq, k_pos = np.unique(flat[col].to_numpy(), return_inverse=True)
        if uniq.size > BINS:  # consecutive values into BINS bins, each at their mean
            binned = True
            of, uniq = _merged(uniq, BINS)
            k_pos = of[k_pos]
        keys = pl.DataFrame({col: pl.Series(col, uniq).cast(
            pl.Float64 if binned else flat.schema[col])})
    else:
        floats = [c for c in by if flat.schema[c].is_float()]
        if len(floats) == 1 and flat[floats[0]].null_count() == 0:
            # a float key beside others (multiclass: class, label, score): its values into
            # as many bins as keep the table within KEYS rows (at least MIN_BINS), or every
            # replicate's table is as large as the data (2 x 10^4 rows of 5 classes: 5 GB)
            col = floats[0]
            others = [c for c in by if c != col]
            limit = max(MIN_BINS, KEYS // max(1, flat.select(others).n_unique()))
            if fs.merge is not None:  # the statistic's own (see FrameStat.merge)
                merged = fs.merge(flat, limit)
                if merged is not None:
                    binned = True
                    flat = flat.with_columns(pl.Series(col, merged))
            else:
                uniq, at = np.unique(flat[col].to_numpy(), return_inverse=True)
                if uniq.size > limit:
                    binned = True
                    of, means = _merged(uniq, limit)
                    flat = flat.with_columns(pl.Series(col, means[of[at]]))
        keys = flat.select(by).unique().sort(list(by), nulls_last=True)
        k_pos = flat.select(by).join(keys.with_row_index("__k"), on=list(by), how="left",
                                     nulls_equal=True, maintain_order="left"
                                     )["__k"].to_numpy().astype(np.int64)
    size = max(1, keys.height)
    weights, g_pos = _held(weights, g_pos)
    values = np.column_stack([np.nan_to_num(flat[c].cast(pl.Float64).to_numpy(), nan=0.0)
                              for c in vals]) if vals else np.zeros((flat.height, 0))
    return _Stacked(flat, by, keys, vals, _weighted(weights, g_pos, k_pos, values, size),
                    binned)


def _weighted(weights: np.ndarray, g_pos: np.ndarray, k_pos: np.ndarray, values: np.ndarray,
              size: int) -> np.ndarray:
    """Σ over the groups of each weighting's weight times the group's values, per table row:
    weightings x ``size`` table rows x value columns, from the partial rows' group ``g_pos``,
    table row ``k_pos`` and ``values``.

    The groups x table rows matrix of a table keyed by scores is mostly zeros (a group of a
    few rows of the data holds a few of its 8,192 rows): a dense product spends nearly all
    its work on them (a multiclass table, 944 groups, 1,000 weightings: 15 GFLOP a column).
    Then the cells the groups hold are multiplied alone (a sparse matrix), each table row's
    products added in the order of its groups; otherwise, one dense product per column.

    >>> import numpy as np
    >>> w = np.array([[1.0, 2.0], [0.0, 3.0]])  # 2 weightings of 2 groups
    >>> _weighted(w, np.array([0, 1, 1]), np.array([2, 2, 0]), np.array([[1.0], [10.0], [5.0]]),
    ...           3)[:, :, 0].tolist()
    [[10.0, 0.0, 21.0], [15.0, 0.0, 30.0]]
    """
    import numpy as np
    n_rep, n_groups = weights.shape
    cells, at = np.unique(g_pos * size + k_pos, return_inverse=True)
    x = np.column_stack([np.bincount(at.ravel(), weights=values[:, j], minlength=cells.size)
                         for j in range(values.shape[1])]) if values.shape[1] else \
        np.zeros((cells.size, 0))
    out = np.zeros((n_rep, size, values.shape[1]))
    if cells.size * 8 >= n_groups * size:  # dense enough: one product of matrices a column
        dense = np.zeros((n_groups * size, values.shape[1]))
        dense[cells] = x
        for j in range(values.shape[1]):
            out[:, :, j] = weights @ dense[:, j].reshape(n_groups, size)
        return out
    from scipy import sparse  # type: ignore[import-untyped]

    groups, rows = cells // size, cells % size
    by_group = np.ascontiguousarray(weights.T)
    for j in range(values.shape[1]):  # (each table row's products added in group order)
        held = sparse.csr_matrix((x[:, j], (rows, groups)), shape=(size, n_groups))
        out[:, :, j] = (held @ by_group).T
    return out


def replicate_values(plan: Plan, stats: Mapping[str, Stat],
                     group_parts: Mapping[str, pl.DataFrame], gr: Groups, ctx: Context,
                     plan_stats: frozenset[str] = frozenset()) -> tuple[np.ndarray, bool]:
    """Each metric's value in each weighting of ``gr`` (rows x metrics, NaN where undefined),
    and whether a table was binned, from the per-group partials (``agg`` rows and
    ``frame:<key>`` tables keyed by :data:`GROUP`).

    A metric whose value is a ratio of two columns of its one table of sums
    (:attr:`~evalcli.metrics.base.Metric.ratio`: a mean over queries) is divided as arrays,
    every weighting at once; any other metric's ``value`` is called once per weighting, on
    its statistics' tables in that weighting (100 segments x 21 ranking metrics x 1,000
    replicates: 2 million calls)."""
    import numpy as np
    n = gr.weights.shape[0]
    own = plan_stats if plan_stats else frozenset(stats)
    keys = [[s.key for s in pm.metric.stats(pm.params, ctx) if not details_only(s)]
            for pm in plan.metrics]
    aggs: dict[str, list[Any]] = {}
    tables: dict[str, _Stacked | None] = {}
    binned = False
    for key, st in stats.items():
        if key not in own:
            continue
        df = group_parts.get("agg" if isinstance(st, AggStat) else f"frame:{st.key}")
        if isinstance(st, AggStat):
            aggs[key] = _agg_replicates(st, df, gr, gr.weights) if df is not None \
                else [None] * n
        else:
            got = _stacked(st, df, gr, gr.weights) if df is not None else None
            tables[key] = got
            binned = binned or (got is not None and got.binned)
    out = np.full((n, len(plan.metrics)), np.nan)
    by_value = []
    for j, pm in enumerate(plan.metrics):
        ratio = pm.metric.ratio(pm.params) if pm.metric.ratio and len(keys[j]) == 1 else None
        got = tables.get(keys[j][0]) if ratio is not None else None
        if ratio is None or got is None or got.by or \
                not {c for c in ratio if c is not None} <= set(got.vals):
            by_value.append(j)
            continue
        num = got.array[:, 0, got.vals.index(ratio[0])]
        if ratio[1] is None:  # a total
            out[:, j] = num
            continue
        den = got.array[:, 0, got.vals.index(ratio[1])]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[:, j] = np.where(den != 0, num / den, np.nan)
    if by_value:
        read = {k for j in by_value for k in keys[j]}
        each = dict(aggs)
        each.update({k: _frames_of(got, n) if got is not None else [None] * n
                     for k, got in tables.items() if k in read})
        rep_stats = [{k: v[i] for k, v in each.items()} for i in range(n)]
        _values_into(out, by_value, plan, rep_stats, keys, ctx)
    return out, binned


# --------------------------------------------------------------------------- intervals

def to_ci(i: Interval) -> CI:
    return CI(low=i.low, high=i.high, level=i.level, method=i.method, std_error=i.std_error,
              mc_error=i.mc_error, reason=i.reason, note=i.note)


def _values_into(out: np.ndarray, metrics: Sequence[int], plan: Plan,
                 rep_stats: Sequence[dict[str, Any]], keys: Sequence[Sequence[str]],
                 ctx: Context) -> None:
    """Set the value of each metric of ``metrics`` (indexes of the plan's) in each weighting
    (a row of ``out``) from its statistics in it, by calling its ``value``."""
    for i, st in enumerate(rep_stats):
        memo = Memo()
        for j in metrics:
            pm = plan.metrics[j]
            if any(st.get(k) is None for k in keys[j]):
                continue
            own = TaskStatistics({k: st[k] for k in keys[j]}, memo, replicate=True,
                                 options=ctx.options)
            try:
                v = pm.metric.value(own, pm.params).value
            except AbsentLabel as exc:
                v = exc.fallback.value
            except (MetricError, ArithmeticError, ValueError, pl.exceptions.PolarsError):
                continue
            if v is not None:
                out[i, j] = v


def closed_forms(plan: Plan, stats: Mapping[str, Any], natural: bool, ctx: Context,
                 unweighted: bool) -> list[dict[float, CI] | None]:
    """Each metric's closed-form intervals at every level the run needs (``method: auto``,
    the natural unit), or ``None`` where it has none (the bootstrap then)."""
    rs = plan.resampling
    assert rs is not None
    levels = [rs.level, *rs.extra_levels]
    out: list[dict[float, CI] | None] = []
    for pm in plan.metrics:
        found: dict[float, CI] = {}
        if rs.method == "auto" and natural and pm.metric.interval is not None:
            own = {st.key: stats[st.key] for st in pm.metric.stats(pm.params, ctx)}
            for level in levels:
                try:
                    got = pm.metric.interval(own, pm.params, level, unweighted)
                except (MetricError, ValueError, ZeroDivisionError):
                    got = None
                if got is None:
                    break
                found[level] = _within(to_ci(got), pm.metric.range)
        out.append(found if found and len(found) == len(levels) else None)
    return out


def intervals_for(plan: Plan, results: Sequence[MetricResult],
                  closed: Sequence[dict[float, CI] | None], rep: np.ndarray | None,
                  gr: Groups, binned: bool, resampled: Sequence[bool]) -> None:
    """Set ``ci`` (and the extra levels' intervals) of each result: its closed form, else
    from its replicates (``rep``: weightings x metrics)."""
    rs = plan.resampling
    assert rs is not None
    r = gr.replicates
    levels = [rs.level, *rs.extra_levels]
    for j, m in enumerate(results):
        found = closed[j]
        if found is None and not resampled[j]:
            found = {lv: CI(None, None, lv, _name(rs.method), reason=NOT_RESAMPLED)
                     for lv in levels}
        elif found is None:
            assert rep is not None
            found = {}
            reps = rep[:r, j]
            shift = 0.0
            if binned and m.value is not None and not math.isnan(rep[r, j]):
                shift = m.value - rep[r, j]
                reps = reps + shift
            for level in levels:
                ci = _interval_at(rs, m.value, reps, rep[r + 1:, j], level)
                if abs(shift) > 1e-12 * max(1.0, abs(m.value or 0.0)) and ci.reason is None:
                    ci = dataclasses.replace(ci, note=_and(
                        ci.note, "replicates on binned scores, shifted by the binning "
                        "error of the value"))
                    # a shifted replicate can leave the metric's range (a calibration error
                    # of 1.0004): cut, as a closed form is
                    ci = _within(ci, plan.metrics[j].metric.range)
                found[level] = ci
        m.ci = found[rs.level]
        m.intervals = {lv: ci for lv, ci in found.items() if lv != rs.level}


def _interval_at(rs: Resampling, value: float | None, reps: np.ndarray, jack: np.ndarray,
                 level: float) -> CI:
    """The interval at ``level`` of a metric of point ``value`` from its replicates ``reps``
    (``jack``: its leave-one-out values, for BCa). Replicates beyond the floats (sums of
    values near ±1e308) are inf or NaN: they count as undefined, without NumPy's warnings on
    stderr."""
    import numpy as np

    from evalcli.uncertainty import intervals as iv

    if value is None:
        return CI(None, None, level, _name(rs.method), reason="the value is undefined")
    with np.errstate(over="ignore", invalid="ignore"):
        if rs.method == "bca":
            return to_ci(iv.bca_interval(reps, value, jack, level,
                                         max_undefined=MAX_UNDEFINED))
        return to_ci(iv.percentile_interval(reps, value, level, max_undefined=MAX_UNDEFINED,
                                            method="percentile"))


def _within(ci: CI, bounds: tuple[float | None, float | None]) -> CI:
    """A closed form's interval (or one from shifted replicates) cut to the metric's range (a
    t interval of a share of hits can pass 1), with a note. Both bounds are kept within the
    range, so that an interval lying wholly beyond one end becomes that end, never a low
    above its high.

    >>> ci = _within(CI(1.004, 1.02, 0.95, "percentile"), (0.0, 1.0))
    >>> ci.low, ci.high, ci.note
    (1.0, 1.0, "cut to the metric's range [0.0, 1.0]")
    """
    lo, hi = bounds
    if not ci.defined:
        return ci
    assert ci.low is not None and ci.high is not None

    def cut(x: float) -> float:
        x = max(x, lo) if lo is not None else x
        return min(x, hi) if hi is not None else x

    low, high = cut(ci.low), cut(ci.high)
    if (low, high) == (ci.low, ci.high):
        return ci
    return dataclasses.replace(ci, low=low, high=high, note=_and(
        ci.note, f"cut to the metric's range [{lo if lo is not None else '-inf'}, "
        f"{hi if hi is not None else 'inf'}]"))


def _and(a: str | None, b: str) -> str:
    return f"{a}; {b}" if a else b


def _name(method: str) -> str:
    return "bca" if method == "bca" else "percentile"


@dataclasses.dataclass
class Material:
    """What a run keeps to resample its overall values again under other weights (a paired
    comparison of systems draws one set of weights for all of them)."""

    plan: Plan
    stats: Mapping[str, Stat]
    groups: dict[str, pl.DataFrame]
    ctx: Context
    drawn: Groups | None = None
    """The run's own weights and each metric's values under them (see :meth:`stored`)."""
    values: np.ndarray | None = None
    binned: bool = False

    def own(self) -> tuple[np.ndarray, bool]:
        """Each metric's values under the run's own weights (computed once, when first
        needed: a run whose metrics all have closed forms needs none)."""
        assert self.drawn is not None
        if self.values is None:
            self.values, self.binned = self.replicates(self.drawn)
        return self.values, self.binned

    def stored(self, point: Sequence[float | None]) -> dict[str, Any]:
        """The overall values' replicates for a report (``report: {statistics: true}``), so
        that a later run on the same truth, with the same seed, pairs with them by unit: the
        settings, the groups drawn from, and per metric id the replicate values (shifted by
        the binning error when tables were binned), to 9 significant digits."""
        rs = self.plan.resampling
        assert rs is not None and self.drawn is not None
        self.own()
        assert self.values is not None
        r = self.drawn.replicates
        out: dict[str, list[float | None]] = {}
        for j, (pm, v) in enumerate(zip(self.plan.metrics, point, strict=True)):
            col = self.values[:r, j]
            if self.binned and v is not None and not math.isnan(self.values[r, j]):
                col = col + (v - self.values[r, j])
            out[pm.id] = [None if x != x else float(f"{x:.9g}") for x in col]
        return {"seed": rs.seed, "replicates": r, "unit": rs.unit, "scheme": "multinomial",
                "groups": rs.groups, "present": [int(i) for i in self.drawn.ids],
                "values": out}

    def present(self) -> list[int]:
        """The ids of the groups holding some unit."""
        return _present(self.groups)

    def replicates(self, gr: Groups) -> tuple[np.ndarray, bool]:
        """Each metric's value in each weighting of ``gr`` (rows x metrics, NaN where
        undefined), and whether a table was binned."""
        rs = self.plan.resampling
        assert rs is not None
        return replicate_values(self.plan, self.stats, self.groups, gr, self.ctx, rs.stats)


def estimate(plan: Plan, a: Aligned, stats: Mapping[str, Stat],
             parts: Sequence[dict[str, pl.DataFrame]],
             overall: tuple[list[MetricResult], Mapping[str, Any]],
             segments: Sequence[tuple[dict[str, Any], list[MetricResult], Mapping[str, Any]]],
             ctx: Context) -> tuple[dict[str, Any], Material]:
    """Set the intervals of the overall values and of each segment's; the settings used (for
    the report), and what resamples the overall values again."""
    rs = plan.resampling
    assert rs is not None
    _, unit_name = unit_columns(plan, a, stats)
    split = [p["unit_split"] for p in parts if "unit_split" in p and p["unit_split"].height]
    if split:
        raise split_unit_error(plan, a, split[0])
    natural = rs.unit in ("auto", "rows")
    unweighted = "weight" not in a.roles
    material = Material(plan, stats, _group_frames(parts, "g", []), ctx)
    gr = draw(material.present(), rs)
    material.drawn = gr
    resampled = [all(resamples(st) for st in pm.metric.stats(pm.params, ctx)
                     if not details_only(st))
                 for pm in plan.metrics]
    closed = closed_forms(plan, overall[1], natural, ctx, unweighted)
    rep, binned = None, False
    if any(c is None and ok for c, ok in zip(closed, resampled, strict=True)):
        rep, binned = material.own()
    intervals_for(plan, overall[0], closed, rep, gr, binned, resampled)
    if segments:
        seg_cols = [SEG + s for s in a.segments]
        # each per-group table cut by segment once (not filtered once per segment), a
        # table's exact sums made values first, once (not once per segment: a query each)
        g_seg = {k: (df.drop(seg_cols).clear(),
                     df.partition_by(seg_cols, as_dict=True, include_key=False))
                 for k, df in ((k, _finalized(df) if k.startswith("frame:") else df)
                               for k, df in _group_frames(parts, "gseg", seg_cols).items())}
        for key, results, seg_stats in segments:
            closed = closed_forms(plan, seg_stats, natural, ctx, unweighted)
            values_, b = None, False
            need = [c is None and ok for c, ok in zip(closed, resampled, strict=True)]
            if any(need):
                # only the statistics of the metrics the bootstrap is for (a segment's
                # replicates of a metric with a closed form would be computed for nothing:
                # 100 segments, 21 metrics, one without a closed form: 40 s instead of 2)
                wanted = {st.key for pm, n in zip(plan.metrics, need, strict=True) if n
                          for st in pm.metric.stats(pm.params, ctx)}
                at = tuple(key[s] for s in a.segments)
                sel = {k: cut.get(at, empty) for k, (empty, cut) in g_seg.items()}
                values_, b = replicate_values(
                    plan, {k: st for k, st in stats.items() if k in wanted}, sel, gr, ctx,
                    rs.stats & wanted)
            intervals_for(plan, results, closed, values_, gr, b, resampled)
    settings = {"level": rs.level, "method": rs.method, "replicates": rs.replicates,
                "seed": rs.seed, "unit": unit_name, "groups": int(gr.ids.size)}
    return settings, material


def _group_frames(parts: Sequence[dict[str, pl.DataFrame]], prefix: str, seg_cols: list[str]
                  ) -> dict[str, pl.DataFrame]:
    """The parts' per-group partials by name (``agg``, ``frame:<key>``), concatenated."""
    out: dict[str, list[pl.DataFrame]] = {}
    for p in parts:
        for name, df in p.items():
            if name == f"{prefix}agg" or name.startswith(f"{prefix}frame:"):
                out.setdefault(name[len(prefix):], []).append(df)
    return {k: pl.concat(v, how="vertical_relaxed") for k, v in out.items()}


def _present(frames: Mapping[str, pl.DataFrame]) -> list[int]:
    ids: set[int] = set()
    for df in frames.values():
        ids.update(int(x) for x in df[GROUP].unique().drop_nulls().to_list())
    return sorted(ids)
