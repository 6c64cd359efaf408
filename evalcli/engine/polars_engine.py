"""The in-process Polars engine: one scan, one join, every statistic in one ``collect_all``.

The aligned LazyFrame feeds a few small queries: the checks and counts, one aggregation fusing
every :class:`~evalcli.metrics.base.AggStat` of the run (overall, and per segment), and one query
per :class:`~evalcli.metrics.base.FrameStat`. ``pl.collect_all`` runs them together, so Polars
shares the scan and the join between them. Values are then computed from the small results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evalcli.engine.align import (
    SEG,
    Aligned,
    duplicate_error,
    first_violation,
    materialize,
    sorted_merge,
    unmatched_error,
)
from evalcli.engine.plan import Plan
from evalcli.errors import InputDataError
from evalcli.metrics import stats as stats_
from evalcli.metrics.base import AbsentLabel, AggStat, Check, Context, FrameStat, Stat
from evalcli.metrics.task import TaskInput
from evalcli.result import AlignmentInfo, MetricResult, SegmentResult

STREAMING_BYTES = 2 * 1024**3
"""Inputs larger than this (on disk) run on Polars' streaming engine when engine is auto."""


@dataclass
class Computed:
    """Statistics by key, overall and per segment, plus what the checks found."""

    overall: dict[str, Any]
    segments: list[tuple[dict[str, Any], int, dict[str, Any]]]
    alignment: AlignmentInfo
    engine: str


def choose_engine(engine: str, paths: Sequence[str]) -> str:
    if engine in ("polars", "streaming"):
        return engine
    size = 0
    for p in paths:
        try:
            path = Path(p)
            size += sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) \
                if path.is_dir() else path.stat().st_size
        except OSError:
            continue
    return "streaming" if size > STREAMING_BYTES else "polars"


def _null_exprs(a: Aligned, roles: Sequence[str]) -> list[pl.Expr]:
    out = []
    for role in roles:
        col = pl.col(role)
        bad = col.is_null()
        if a.schema[role] in (pl.Float32, pl.Float64):
            bad = bad | col.is_nan()
        out.append(bad.sum().alias(f"null:{role}"))
    return out


def _bad_null(a: Aligned, role: str) -> pl.Expr:
    col = pl.col(role)
    bad = col.is_null()
    if a.schema[role] in (pl.Float32, pl.Float64):
        bad = bad | col.is_nan()
    return bad


def _weight_check() -> Check:
    w = pl.col("weight").cast(pl.Float64, strict=False)
    return Check("weight_nonnegative", "weight", lambda: (w < 0) | w.is_infinite(),
                 "the weight column holds negative or infinite values",
                 "weights must be finite and >= 0")


def _segment_key(row: Mapping[str, Any], segs: Sequence[str]) -> dict[str, Any]:
    return {s: row[SEG + s] for s in segs}


def row_checks(plan: Plan, a: Aligned) -> tuple[dict[str, Check], list[str]]:
    """The row rules of a run (the task's, the metrics', the weights') by name, and the roles
    that must not be null. Shared by the engines."""
    t = TaskInput(plan.options, a.roles, a.schema)
    checks: dict[str, Check] = {c.name: c for c in plan.task.checks(t)}
    for pm in plan.metrics:
        for c in pm.metric.checks:
            if c.column in a.roles:
                checks.setdefault(c.name, c)
    if "weight" in a.roles:
        checks.setdefault("weight_nonnegative", _weight_check())
    nullable = {r.name for r in plan.task.roles if r.nullable}
    return checks, sorted(r for r in a.roles if r not in nullable)


def compute(plan: Plan, a: Aligned, stats: Mapping[str, Stat], engine: str) -> Computed:
    """Run every statistic of the plan over the aligned frame in one pass; check the input."""
    t = TaskInput(plan.options, a.roles, a.schema)
    checks, needed = row_checks(plan, a)
    base = a.lf
    if a.inputs.nulls == "drop":
        keep = pl.all_horizontal([~_bad_null(a, r) for r in needed]) if needed else pl.lit(True)
        filtered = base.filter(keep)
    else:
        filtered = base
    norm = plan.task.normalize(filtered, t)

    seg_cols = [SEG + s for s in a.segments]
    aggs = [st for st in stats.values() if isinstance(st, AggStat)]
    frames = [st for st in stats.values() if isinstance(st, FrameStat)]
    # exact sums add their row-level steps as columns first (see metrics.stats.Staging); in
    # memory, the grids of sums placed at the data are found first (a pass over the frame
    # that is cheaper than a nested aggregation, which would not stream)
    with stats_.staged() as staging:
        agg_exprs = [e for st in aggs for e in st.exprs()]
    grids = None
    if engine == "polars" and staging.grids:
        try:
            grids = staging.grid_values(norm)
        except (pl.exceptions.ComputeError, pl.exceptions.InvalidOperationError,
                pl.exceptions.SchemaError):
            grids = None  # bad data: the checks of the pass below say what is wrong
    agg_rows = staging.apply(norm, grids)

    full = plan.task.join == "full" and a.truth_rows is not None
    matched_expr = (pl.col("__in_predictions") & pl.col("__in_truth")).sum() if full else pl.len()
    queries: list[pl.LazyFrame] = [
        base.select([matched_expr.alias("rows"), *_null_exprs(a, needed)]),
        filtered.select([pl.len().alias("rows"),
                         *(c.violation().sum().alias(f"check:{n}") for n, c in checks.items())]),
        agg_rows.select(agg_exprs) if agg_exprs else pl.LazyFrame({"_": [0]}),
    ]
    queries += [fs.build(norm, []) for fs in frames]
    if seg_cols:
        queries.append(agg_rows.group_by(seg_cols).agg([pl.len().alias("__rows"), *agg_exprs])
                       .sort(seg_cols, nulls_last=True))
        queries += [fs.build(norm, seg_cols) for fs in frames]
    sides = [a.pred_rows.select(pl.len())]
    if a.truth_rows is not None:
        sides.append(a.truth_rows.select(pl.len()))
    queries += sides

    try:
        results = pl.collect_all(queries, engine="streaming" if engine == "streaming" else "auto")
    except pl.exceptions.ComputeError as exc:
        if "1:1 validation" in str(exc):
            raise duplicate_error(a) from None
        raise _explain_failure(a, checks, exc) from None
    except (pl.exceptions.InvalidOperationError, pl.exceptions.SchemaError) as exc:
        raise _explain_failure(a, checks, exc) from None

    nulls_row = results[0].row(0, named=True)
    checks_row = results[1].row(0, named=True)
    matched = int(nulls_row["rows"])
    pred_n = int(results[-len(sides)].item())
    truth_n = int(results[-1].item()) if a.truth_rows is not None else pred_n
    only_p, only_t = pred_n - matched, truth_n - matched
    _no_rows_in_a_file(a, pred_n, truth_n)
    if a.truth_rows is not None and not full and a.inputs.unmatched == "error" and (
            only_p or only_t):
        raise unmatched_error(a, only_p, only_t)

    for role in needed:
        n = int(nulls_row[f"null:{role}"])
        if n and a.inputs.nulls == "error":
            where = first_violation(a, _bad_null(a, role), role)
            raise InputDataError(
                f"{a.role_file.get(role, '')}: {n} row(s) with a null or NaN "
                f"{role} (column '{a.columns[role]}'), {where}",
                hint="fill or remove them, or set 'alignment: {nulls: drop}' to skip such "
                "rows (the count is reported)",
            )
    for name, c in checks.items():
        n = int(checks_row[f"check:{name}"])
        if c.require_some and n == 0 and int(checks_row["rows"]):
            raise InputDataError(
                f"{a.role_file.get(c.column, '')}: {c.message}; "
                f"{seen_values(a.lf, c.column, a.columns.get(c.column, c.column))}",
                hint=c.hint)
        if n and not c.require_some:
            where = first_violation(a, c.violation(), c.column)
            raise InputDataError(
                f"{a.role_file.get(c.column, '')}: {c.message}: {n} row(s), {where}",
                hint=c.hint,
            )
    if int(checks_row["rows"]) == 0:
        raise _nothing_left(a, matched, only_p, only_t)

    alignment = AlignmentInfo(
        matched=matched, only_in_predictions=only_p, only_in_truth=only_t,
        unmatched_policy=a.inputs.unmatched, null_policy=a.inputs.nulls,
        dropped_nulls=int(nulls_row["rows"]) - int(checks_row["rows"]) if not full else 0,
    )

    pos = 2
    overall: dict[str, Any] = {}
    agg_df = results[pos]
    seg_pos = pos + 1 + len(frames)
    seg_df = results[seg_pos] if seg_cols else None
    if agg_exprs:
        agg_df, seg_df = _fetch_aside(staging, agg_rows, agg_df, seg_df, seg_cols, engine)
        for st in aggs:
            overall[st.key] = _partial_stat(st, agg_df, [])[()]
    pos += 1
    for fs in frames:
        overall[fs.key] = stats_.finalize_frame(results[pos])
        pos += 1
    segments: list[tuple[dict[str, Any], int, dict[str, Any]]] = []
    if seg_cols and seg_df is not None:
        pos += 1
        parts = {}
        for fs in frames:
            parts[fs.key] = stats_.finalize_frame(results[pos]).partition_by(
                seg_cols, as_dict=True, include_key=False)
            pos += 1
        seg_stats = {st.key: _partial_stat(st, seg_df, seg_cols) for st in aggs}
        for row in seg_df.select(*seg_cols, "__rows").iter_rows(named=True):
            values: dict[str, Any] = {}
            keyt = tuple(row[c] for c in seg_cols)
            for st in aggs:
                values[st.key] = seg_stats[st.key][keyt]
            for fs in frames:
                empty = overall[fs.key].clear()
                values[fs.key] = parts[fs.key].get(keyt, empty)
            segments.append((_segment_key(row, a.segments), int(row["__rows"]), values))
    return Computed(overall, segments, alignment, engine)


def _fetch_aside(staging: stats_.Staging, lf: pl.LazyFrame, agg_df: pl.DataFrame,
                 seg_df: pl.DataFrame | None, seg_cols: list[str], engine: str
                 ) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The values exact sums kept aside (counted in the pass), fetched when any were: one more
    pass over the rows, for data beyond a sum's grid (rare; see stats.exact_sum)."""
    eng = "streaming" if engine == "streaming" else "auto"
    agg_df = staging.fetch_aside(lf, agg_df, (), eng)
    if seg_df is not None:
        seg_df = staging.fetch_aside(lf, seg_df, seg_cols, eng)
    return agg_df, seg_df


def _partial_stat(st: AggStat, df: pl.DataFrame, keys: list[str]
                  ) -> dict[tuple[Any, ...], dict[str, Any]]:
    """An AggStat's values per key from the pass's partial rows (one part): its combine when
    it is a function (the same as for several parts), else its exact sums' values."""
    own = [c for c in df.columns if c.startswith(st.key + ".")]
    part = df.select(*keys, *own)
    if callable(st.combine):
        part = st.combine(part, keys)
        own = [c for c in part.columns if c.startswith(st.key + ".")]
    out = {}
    for row in part.iter_rows(named=True):
        done = stats_.finalize_row({c: row[c] for c in own})
        out[tuple(row[k] for k in keys)] = done
    return out


def _no_rows_in_a_file(a: Aligned, pred_n: int, truth_n: int) -> None:
    """A file with a header and no rows is bad input, not a report of undefined metrics."""
    for n, src in ((pred_n, a.inputs.predictions), (truth_n, a.inputs.truth)):
        if n == 0 and src is not None:
            raise InputDataError(f"{src.path} has no data rows (a header only)",
                                 hint="check that the file was written completely")


def _nothing_left(a: Aligned, matched: int, only_p: int, only_t: int) -> InputDataError:
    """Every row went: none matched between the files, or every one had a null."""
    if matched == 0 and a.truth_rows is not None:
        return InputDataError(
            f"no rows to evaluate: no id of {a.inputs.predictions.path} matches one of "
            f"{a.inputs.truth.path if a.inputs.truth else ''} ({only_p} only in predictions, "
            f"{only_t} only in truth)",
            hint=f"check that the id column(s) {', '.join(a.ids)} hold the same keys in both "
            "files (same type, same formatting)",
        )
    return InputDataError(
        f"no rows to evaluate: each of the {matched} row(s) has a null or NaN in a needed "
        "column and 'nulls: drop' dropped them all",
        hint="check the columns named under 'columns:'",
    )


def _explain_failure(a: Aligned, checks: Mapping[str, Check], exc: Exception) -> InputDataError:
    """A query failed on bad data: a line of a file that cannot be read (named with its line),
    else the check that explains it, else Polars' words."""
    from evalcli.io.readers import explain_read_error

    read = explain_read_error([a.inputs.predictions, a.inputs.truth], exc)
    if read is not None:
        return read
    for c in checks.values():
        if c.require_some:
            continue
        try:
            n = a.lf.select(c.violation().sum()).collect().item()
        except pl.exceptions.PolarsError:
            continue
        if n:
            where = first_violation(a, c.violation(), c.column)
            return InputDataError(f"{a.role_file.get(c.column, '')}: {c.message}: {n} row(s), "
                                  f"{where}", hint=c.hint)
    first = str(exc).strip().splitlines()[0]
    files = ", ".join(s.path for s in (a.inputs.predictions, a.inputs.truth) if s is not None)
    return InputDataError(f"the inputs ({files}) could not be evaluated: {first}",
                          hint="check the column types (evalcli validate CONFIG shows them)")


def seen_values(lf: pl.LazyFrame | pl.DataFrame, role: str, column: str, limit: int = 20
                ) -> str:
    """``the column 'c' holds: 'a', 'b', ...``: the distinct values of a role's column (the
    first ``limit``, sorted), for a message."""
    from evalcli.errors import clip

    vals = lf.lazy().select(pl.col(role).unique().sort(nulls_last=True).head(limit + 1)) \
        .collect().get_column(role).to_list()
    more = " ..." if len(vals) > limit else ""
    return clip(f"the column '{column}' holds: "
                + ", ".join(repr(v) for v in vals[:limit]) + more, 400)


def values(plan: Plan, stats: Mapping[str, Any], ctx: Context, segment: bool = False
           ) -> list[MetricResult]:
    """Each planned metric's value from combined statistics (each sees only its own).

    A parameter naming a class absent from the data is an error overall; in a ``segment``
    that merely lacks the class, the metric's 0/0 convention applies (with a note)."""
    out = []
    for pm in plan.metrics:
        own = {st.key: stats[st.key] for st in pm.metric.stats(pm.params, ctx)}
        try:
            mv = pm.metric.value(own, pm.params)
        except AbsentLabel as exc:
            if not segment:
                raise
            mv = exc.fallback
        v = mv.value
        if v is not None and (v != v):  # NaN is undefined, never a number to gate on
            mv.notes.append("the value is not a number")
            v = None
        out.append(MetricResult(
            id=pm.id, metric=pm.metric.name, family=pm.metric.family, params=dict(pm.params),
            direction=pm.metric.direction, value=v, details=mv.details, notes=list(mv.notes),
            gate=pm.gate,
        ))
    return out


def run_context(plan: Plan, a: Aligned, engine: str | None = None) -> Context:
    """The context metrics see: the task, the roles, the options, the scanned side inputs
    when options name files, and the engine when known, for statistics whose fastest plan
    depends on it."""
    return Context(plan.task.name, a.roles, plan.options, engine=engine, frames=a.side or {})


def run_polars(plan: Plan, a: Aligned, engine: str, extra: dict[str, Any] | None = None
               ) -> tuple[list[MetricResult], list[SegmentResult], AlignmentInfo, str]:
    """Compute the plan. ``extra`` maps keys to more statistics to compute in the same pass
    (e.g. curve points for a report); their overall values replace them in ``extra``."""
    from evalcli.engine.plan import bind

    paths = [a.inputs.predictions.path] + ([a.inputs.truth.path] if a.inputs.truth else [])
    eng = choose_engine(engine, paths)
    ctx = run_context(plan, a, eng)
    stats = bind(plan, ctx)
    for key, st in (extra or {}).items():
        stats.setdefault(key, st)
    align_ = materialize if eng == "polars" else sorted_merge
    a = align_(a, plan.task.join)
    computed = compute(plan, a, stats, eng)
    if extra is not None:
        extra.update({key: computed.overall[key] for key in extra})
    overall = values(plan, computed.overall, ctx)
    segs = [SegmentResult(key, rows, values(plan, st, ctx, segment=True))
            for key, rows, st in computed.segments]
    return overall, segs, computed.alignment, eng


