"""The engine core: what every engine runs on a part of the rows, and how the parts combine.

An engine only decides where the parts come from: the in-process engine has one (the whole
input, in memory or on Polars' streaming engine), the Spark engine one per partition. Then:

1. :func:`partials`, on each part: the alignment (in memory, or by merging sorted inputs when
   streaming), the null policy, the counts every rule needs and every statistic of the run
   (each :class:`~evalcli.metrics.base.AggStat` fused into one aggregation, each
   :class:`~evalcli.metrics.base.FrameStat` built, overall and per segment), all in one
   ``collect_all``. Only when a rule is broken does it fetch the first offending rows. It
   returns small named frames (a :data:`Part`).
2. :func:`verdict`, on the driver: the first broken rule's error, in one order and one wording
   whatever the engine and however many parts; else the alignment counts.
3. :func:`combine`: each statistic's parts merged with its ``combine`` (one part's statistics
   only have their exact sums turned into values), overall and per segment.
4. :func:`values`: each metric's value from the combined statistics.

:func:`run` is that path for an engine's ``compute``: the same statistics, errors and values
on every engine, by construction.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Literal, NamedTuple

import polars as pl

from evalcli.engine import resample
from evalcli.engine.align import NAME_CHARS, SEG, Aligned, materialize, sorted_merge
from evalcli.engine.plan import Plan, bind
from evalcli.errors import InputDataError, UserError, clip
from evalcli.metrics import stats as stats_
from evalcli.metrics.base import (
    AbsentLabel,
    AggStat,
    Check,
    Context,
    FrameStat,
    MetricValue,
    Stat,
)
from evalcli.metrics.task import TaskInput, TaskStatistics
from evalcli.result import AlignmentInfo, MetricResult, SegmentResult

Part = dict[str, pl.DataFrame]
"""What a part of the rows yields, by name. Always ``counts`` (one row: ``matched``,
``null:<role>``, ``kept``, ``check:<name>``, ``pred_n``, ``truth_n``) unless the part could not
be evaluated (``error``) or has duplicated keys (``dups:<side>``). The partial statistics:
``agg`` and ``frame:<key>`` when the part kept rows, ``seg`` and ``segframe:<key>`` per segment.
Where a rule is broken: ``unmatched:<side>`` (the first keys), ``first:<rule>`` (the first
offending row), ``odd:<rule>`` and ``culprits:<rule>`` (for a text column: the first value that
is not a number, and counts), ``values:<rule>`` (the values a column holds instead)."""

SEEN = 20
"""How many distinct values a message lists."""

AFTER_ERROR: Literal["in-memory"] = "in-memory"
"""The Polars engine of the queries that explain a failed pass. Polars 2.1's streaming engine
can leave its executor broken when a query fails while its tasks run (a task panics with
"joined on cancelled task"); the next streaming query in the process then waits forever. Seen
about once in 300 failed runs on a 2-core machine; the in-memory engine does not use that
executor."""

DIAGNOSE_SECONDS = 120.0
"""How long the diagnostics of a failed streaming pass may take before the run stops with the
bare error (:func:`_bounded`)."""

Explain = Callable[[Exception], UserError | None]
"""The error behind a failed query when the engine can say more (a line of a file it read)."""


@dataclass
class Computed:
    """Statistics by key, overall and per segment (key, rows, statistics), and what the checks
    found."""

    overall: dict[str, Any]
    segments: list[tuple[dict[str, Any], int, dict[str, Any]]]
    alignment: AlignmentInfo
    engine: str
    parts: Sequence[Part] = ()
    """The parts' partials, when the run resamples groups of them for intervals."""


class Evaluated(NamedTuple):
    """A run's values: overall, per segment, the alignment counts and the engine's name; how
    the intervals were computed, when asked for."""

    metrics: list[MetricResult]
    segments: list[SegmentResult]
    alignment: AlignmentInfo
    engine: str
    uncertainty: dict[str, Any] | None = None
    material: resample.Material | None = None
    """What resamples the overall values again (a paired comparison of systems)."""


def run_context(plan: Plan, a: Aligned, engine: str | None = None) -> Context:
    """The context metrics see: the task, the roles, the options, the scanned side inputs
    when options name files, and the engine when known, for statistics whose fastest plan
    depends on it; with a new memo (one context per run)."""
    return Context(plan.task.name, a.roles, plan.options, engine=engine, frames=a.side or {})


def run(plan: Plan, a: Aligned, engine: str, compute: Callable[[dict[str, Stat]], Computed],
        extra: dict[str, Any] | None = None, ctx: Context | None = None) -> Evaluated:
    """Compute the plan with an engine's ``compute`` (statistics by key -> :class:`Computed`).
    ``extra`` maps keys to more statistics to compute in the same pass (e.g. curve points for
    a report); their overall values replace them in ``extra``. ``ctx`` is the run's context
    when the caller made it (the one its ``extra`` were made with: they share its memo)."""
    ctx, stats = bound(plan, a, engine, extra, ctx)
    return evaluated(plan, a, engine, ctx, stats, compute(stats), extra)


def bound(plan: Plan, a: Aligned, engine: str, extra: dict[str, Any] | None = None,
          ctx: Context | None = None) -> tuple[Context, dict[str, Stat]]:
    """The run's context and every statistic to compute, by key: the plan's (see
    :func:`run`) and ``extra``'s."""
    ctx = ctx if ctx is not None else run_context(plan, a, engine)
    stats = bind(plan, ctx)
    if plan.resampling is not None:
        # per random group: what a replicate reads, not the details' tables nor a table that
        # does not resample (gini's table of every catalog item would be built per group)
        plan.resampling = replace(plan.resampling, stats=frozenset(
            k for k, st in stats.items()
            if not resample.details_only(st) and resample.resamples(st)))
    for key, st in (extra or {}).items():
        stats.setdefault(key, st)
    return ctx, stats


def evaluated(plan: Plan, a: Aligned, engine: str, ctx: Context, stats: Mapping[str, Stat],
              computed: Computed, extra: dict[str, Any] | None = None) -> Evaluated:
    """The values (and intervals) of :func:`run` from the computed statistics."""
    if extra is not None:
        extra.update({key: computed.overall[key] for key in extra})
    overall = values(plan, computed.overall, ctx)
    segs = [SegmentResult(key, rows, values(plan, st, ctx, segment=True))
            for key, rows, st in computed.segments]
    settings = material = None
    if plan.resampling is not None:
        settings, material = resample.estimate(
            plan, a, stats, computed.parts, (overall, computed.overall),
            [(s.key, s.metrics, st) for s, (_, _, st) in zip(segs, computed.segments,
                                                             strict=True)], ctx)
    return Evaluated(overall, segs, computed.alignment, engine, settings, material)


# --------------------------------------------------------------------------- the rules

def bad_null(a: Aligned, role: str) -> pl.Expr:
    """True on a row whose ``role`` is null (or NaN, for a float column)."""
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


def row_checks(plan: Plan, a: Aligned) -> tuple[dict[str, Check], list[str]]:
    """The row rules of a run (the task's, the metrics', the weights') by name, and the roles
    that must not be null."""
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


# --------------------------------------------------------------------------- one part

def partials(plan: Plan, a: Aligned, stats: Mapping[str, Stat], *, streaming: bool = False,
             whole: bool = True, explain: Explain | None = None) -> Part:
    """Counts, partial statistics and (where a rule is broken) diagnostics of one part.

    ``a`` is the part, aligned lazily; it is joined here in memory (:func:`materialize`), or,
    ``streaming``, by merging inputs sorted by their key (:func:`sorted_merge`) on Polars'
    streaming engine. ``whole``: the part is the whole input in its order, so that a message
    may name a row by its place in the file. ``explain`` may turn a failed query into the
    error to raise.
    """
    pending = pass_of(plan, a, stats, streaming=streaming, whole=whole)
    engine = pass_engine([pending])
    try:
        results = pl.collect_all(pending.queries, engine=engine)
    except (pl.exceptions.ComputeError, pl.exceptions.InvalidOperationError,
            pl.exceptions.SchemaError) as exc:
        _failed_on(engine, pending, exc)
        return pending.failed(exc, explain)
    return pending.finish(results)


_STREAMING_FAILED: list[str] = []
"""Set (to the failed query's message) once a pass of the in-memory engine run on Polars'
streaming executor failed in this process: every later pass then runs on the in-memory
executor (see :data:`AFTER_ERROR`: after a failure the streaming executor may hang)."""


STREAMING_ROWS = 100_000
"""Rows from which a clean in-memory pass runs on Polars' streaming executor (see
:func:`pass_engine`): below, the in-memory executor is as fast (a 1,000-row run: 4 ms against
5 ms), and a pass that fails all the same does so where it always ran."""


def pass_engine(pendings: Sequence[Pending]) -> Literal["streaming", "in-memory"]:
    """The Polars engine that collects the passes of in-memory runs (``engine: polars``) over
    their joined, materialized rows.

    Polars 2.1's streaming executor runs these queries about twice as fast as its in-memory
    one (binary 10^7 rows with intervals: 1.3 s instead of 2.8 s; two systems: 2.7 s instead
    of 5.4 s; ranking 10^5 queries: 3.7 s instead of 3.9 s), but a query that fails while its
    tasks run may leave that executor broken for the rest of the process (see
    :data:`AFTER_ERROR`). So the rows' checks are counted first, on the in-memory executor
    (a cheap pass over the joined rows): only a pass over at least :data:`STREAMING_ROWS`
    rows that break no rule runs streaming; a pass over bad input runs in memory as before, so
    that its failure explains itself. A streaming pass that failed all the same (a value no
    rule checks, e.g. a prediction of 1e172 that an exact sum cannot hold) sends every later
    pass of the process to the in-memory executor."""
    if any(p.engine != "in-memory" for p in pendings) or _STREAMING_FAILED:
        return pendings[0].engine
    if all(p.clean() for p in pendings):
        return "streaming"
    return "in-memory"


def _failed_on(engine: str, pending: Pending, exc: Exception) -> None:
    if engine == "streaming" and pending.engine == "in-memory":
        _STREAMING_FAILED.append(first_line(exc))


def partials_together(jobs: Sequence[tuple[Plan, Aligned, Mapping[str, Stat]]],
                      more: Sequence[pl.LazyFrame] = ()
                      ) -> tuple[list[Part], list[pl.DataFrame]] | None:
    """The :func:`partials` of several in-memory runs (several systems aligned to the same
    truth), and the frames of ``more`` queries, from one ``collect_all``: Polars shares what
    the runs share. ``None`` when a query fails: each run then goes on its own
    (:func:`partials`), whose checks say what is wrong and with which file."""
    pendings = [pass_of(plan, a, stats) for plan, a, stats in jobs]
    queries = [q for p in pendings for q in p.queries]
    engine = pass_engine(pendings)
    try:
        results = pl.collect_all([*queries, *more], engine=engine)
    except (pl.exceptions.ComputeError, pl.exceptions.InvalidOperationError,
            pl.exceptions.SchemaError) as exc:
        _failed_on(engine, pendings[0], exc)
        return None
    parts, at = [], 0
    for p in pendings:
        parts.append(p.finish(results[at:at + len(p.queries)]))
        at += len(p.queries)
    return parts, results[at:]


@dataclass
class Pending:
    """One part's queries (:func:`pass_of`), before they are collected, and how their frames
    become the part's :data:`Part`."""

    queries: list[pl.LazyFrame]
    engine: Literal["streaming", "in-memory"]
    finish: Callable[[Sequence[pl.DataFrame]], Part]
    failed: Callable[[Exception, Explain | None], Part]
    clean: Callable[[], bool]
    """Whether the part's rows break no rule (counted on their own, in memory; see
    :func:`pass_engine`)."""


def pass_of(plan: Plan, a: Aligned, stats: Mapping[str, Stat], *, streaming: bool = False,
            whole: bool = True) -> Pending:
    """The queries of :func:`partials` on one part, and how to read their results."""
    a = (sorted_merge if streaming else materialize)(a, plan.task.join)
    if not streaming and a.truth_rows is None:
        a = _read_once(a)
    # in memory: Polars' streaming executor once the rows are known to break no rule (see
    # pass_engine); the in-memory one for a pass that may fail
    engine: Literal["streaming", "in-memory"] = "streaming" if streaming else "in-memory"
    checks, needed = row_checks(plan, a)
    base = a.lf
    grouped = plan.resampling is not None
    src = resample.with_groups(plan, a, base, stats, whole) if grouped else base
    if a.inputs.nulls == "drop" and needed:
        filtered = src.filter(pl.all_horizontal([~bad_null(a, r) for r in needed]))
    else:
        filtered = src
    norm = plan.task.normalize(filtered, TaskInput(plan.options, a.roles, a.schema,
                                                   a.file_order))
    seg_cols = [SEG + s for s in a.segments]
    aggs = [st for st in stats.values() if isinstance(st, AggStat)]
    frames = [st for st in stats.values() if isinstance(st, FrameStat)]
    # exact sums add their row-level steps as columns first (see metrics.stats.Staging); in
    # memory, the grids of sums placed at the data are found first (a pass over the frame
    # that is cheaper than a nested aggregation, which would not stream)
    with stats_.staged() as staging:
        agg_exprs = [e for st in aggs for e in st.exprs()]
    grids = None
    if not streaming and staging.grids:
        try:
            grids = staging.grid_values(norm)
        except (pl.exceptions.ComputeError, pl.exceptions.InvalidOperationError,
                pl.exceptions.SchemaError):
            grids = None  # bad data: the checks of the pass below say what is wrong
    rows = staging.apply(norm, grids)

    full = plan.task.join == "full" and a.truth_rows is not None
    outer = plan.task.join in ("full", "truth") and a.truth_rows is not None
    matched = (pl.col("__in_predictions") & pl.col("__in_truth")).sum() if outer else pl.len()
    tally: list[tuple[pl.LazyFrame, list[pl.Expr]]] = [
        (base, [matched.alias("matched"), pl.len().alias("rows"),
                *(bad_null(a, r).sum().alias(f"null:{r}") for r in needed)]),
        (filtered, [pl.len().alias("kept"),
                    *(c.violation().sum().alias(f"check:{n}") for n, c in checks.items())]),
        (a.pred_rows, [pl.len().alias("pred_n")]),
    ]
    if a.truth_rows is not None:
        tally.append((a.truth_rows, [pl.len().alias("truth_n")]))
    if a.pred_raw is not None:
        # the predictions before the duplicates policy kept one row of each key (read again
        # only when the alignment did not read them: max_score, streaming, Spark)
        raw = a.pred_raw if a.pred_raw_n is None else pl.LazyFrame({"n": [a.pred_raw_n]})
        tally.append((raw, [(pl.len() if a.pred_raw_n is None else pl.col("n").first())
                            .alias("pred_raw_n")]))
    counts = [lf.select(exprs) for lf, exprs in tally]
    queries = [rows.select(agg_exprs)] if agg_exprs else []
    queries += [fs.build(norm, []) for fs in frames]
    if seg_cols:
        queries.append(rows.group_by(seg_cols).agg([pl.len().alias("__rows"), *agg_exprs]))
        queries += [fs.build(norm, seg_cols) for fs in frames]
    # with intervals: every statistic per random group of units too (the group is one more
    # key, as a segment is), overall and per segment
    g = resample.GROUP
    named: dict[str, pl.LazyFrame] = {}
    if grouped:
        assert plan.resampling is not None
        own = plan.resampling.stats
        g_exprs = agg_exprs  # (an AggStat a report adds is cheap: it rides along)
        for prefix, keys in (("g", [g]), ("gseg", [*seg_cols, g])):
            if prefix == "gseg" and not seg_cols:
                continue
            if g_exprs:
                named[f"{prefix}agg"] = rows.group_by(keys).agg(g_exprs)
            for fs in frames:
                if fs.key in own:
                    # a part of the input (Spark) cannot tell whether the whole has more
                    # distinct values than the coarse grid is for: exact, the driver decides
                    build = fs.group_build if whole and fs.group_build else fs.build
                    named[f"{prefix}frame:{fs.key}"] = build(norm, keys)
        split = resample.unit_split_query(plan, a, norm, stats)
        if split is not None:
            named["unit_split"] = split

    def failed(exc: Exception, explain: Explain | None) -> Part:
        bare = {"error": pl.DataFrame({"message": [first_line(exc)]})}
        if "1:1 validation" in str(exc):
            return _bounded(lambda: _duplicates(a), bare) if streaming else _duplicates(a)
        error = explain(exc) if explain is not None else None
        if error is not None:
            raise error from None
        if streaming:
            return _bounded(partial(_failed, a, tally, checks, needed, full, whole, exc), bare)
        return _failed(a, tally, checks, needed, full, whole, exc)

    def finish(results: Sequence[pl.DataFrame]) -> Part:
        count_row = _one_row(results[:len(counts)])
        out = {"counts": count_row}
        out.update(_diagnose(a, count_row.row(0, named=True), checks, needed, full, whole))
        at = len(counts) + len(queries) - (1 + len(frames) if seg_cols else 0)
        whole_res = results[len(counts):at]
        seg_res = results[at:len(counts) + len(queries)]
        for name, df in zip(named, results[len(counts) + len(queries):], strict=True):
            if name.endswith("agg"):
                keys = [g] if name == "gagg" else [*seg_cols, g]
                df = staging.fetch_aside(rows, df, keys, engine)
            out[name] = df
        # the values exact sums kept aside are fetched when any were counted (rare)
        if int(count_row["kept"][0]) > 0:  # no partial statistics of no rows
            if agg_exprs:
                out["agg"] = staging.fetch_aside(rows, whole_res[0], (), engine)
            for fs, df in zip(frames, whole_res[1 if agg_exprs else 0:], strict=True):
                out[f"frame:{fs.key}"] = df
        if seg_cols:
            out["seg"] = staging.fetch_aside(rows, seg_res[0], seg_cols, engine) \
                if agg_exprs else seg_res[0]
            for fs, df in zip(frames, seg_res[1:], strict=True):
                out[f"segframe:{fs.key}"] = df
        return out

    def clean() -> bool:
        try:
            row = _one_row(pl.collect_all(counts[:2], engine=AFTER_ERROR)).row(0, named=True)
        except pl.exceptions.PolarsError:
            return False
        return row["kept"] >= STREAMING_ROWS and not any(
            v for k, v in row.items() if k.startswith("null:")) and all(
            bool(row[f"check:{n}"]) == c.require_some for n, c in checks.items())

    return Pending([*counts, *queries, *named.values()], engine, finish, failed, clean)


def _read_once(a: Aligned) -> Aligned:
    """A single input (nothing to join) read into memory before the pass: the rows' checks of
    :func:`pass_engine` and the pass then read memory, not the file twice (a one-file CSV of
    10^7 rows: 1.24 s instead of 1.84 s; Parquet 1.02 s instead of 1.05 s). A file that
    cannot be read stays lazy: the pass then fails and says why, as before."""
    try:
        return replace(a, lf=a.lf.collect(engine=AFTER_ERROR).lazy())
    except pl.exceptions.PolarsError:
        return a


def _one_row(counts: Sequence[pl.DataFrame]) -> pl.DataFrame:
    return pl.concat([r.cast(pl.Int64) for r in counts], how="horizontal")


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an error's text (at most 500 characters)."""
    for line in str(exc).strip().splitlines():
        if line.strip():
            return line.strip()[:500]
    return type(exc).__name__


def _bounded(work: Callable[[], Part], fallback: Part, seconds: float | None = None) -> Part:
    """``work()`` (the diagnostics of a failed streaming pass), or ``fallback`` (the bare
    error) when it has not finished within ``seconds`` (default :data:`DIAGNOSE_SECONDS`).

    After a streaming query failed, Polars 2.1 may leave its executor broken so that the next
    query waits forever (see :data:`AFTER_ERROR`); the diagnostics then run in a thread that
    is abandoned rather than joined, and the run still stops with the error (exit 2), not a
    hang. An error the work raises is raised here.

    >>> _bounded(lambda: {"x": 1}, {"error": 0})
    {'x': 1}
    >>> import time
    >>> _bounded(lambda: time.sleep(5) or {}, {"error": 0}, seconds=0.05)
    {'error': 0}
    """
    import threading

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["part"] = work()
        except BaseException as exc:  # handed to the caller's thread
            box["exc"] = exc

    worker = threading.Thread(target=run, name="evalcli-diagnose", daemon=True)
    worker.start()
    worker.join(DIAGNOSE_SECONDS if seconds is None else seconds)
    if worker.is_alive():
        return fallback
    if "exc" in box:
        raise box["exc"]
    part: Part = box["part"]
    return part


def _failed(a: Aligned, tally: Sequence[tuple[pl.LazyFrame, list[pl.Expr]]],
            checks: Mapping[str, Check], needed: Sequence[str], full: bool, whole: bool,
            exc: Exception) -> Part:
    """A query failed on bad data: the error, and the counts and diagnostics that can be
    computed (a broken rule may explain the failure; a rule that fails too is left out)."""
    out = {"error": pl.DataFrame({"message": [first_line(exc)]})}
    try:
        row = _one_row(pl.collect_all([lf.select(exprs) for lf, exprs in tally],
                                      engine=AFTER_ERROR))
    except pl.exceptions.PolarsError:
        each = []
        for lf, exprs in tally:
            for e in exprs:
                try:
                    each.append(lf.select(e).collect(engine=AFTER_ERROR))
                except pl.exceptions.PolarsError:
                    continue
        if not each:
            return out
        row = _one_row(each)
    out["counts"] = row
    out.update(_diagnose(a, row.row(0, named=True), checks, needed, full, whole,
                         engine=AFTER_ERROR))
    return out


def _duplicates(a: Aligned) -> Part:
    """Duplicated join keys of each side: their count and the first three."""
    out: Part = {}
    for side, lf in (("predictions", a.pred_rows), ("truth", a.truth_rows)):
        if lf is None:
            continue
        dups = lf.group_by(a.ids).agg(pl.len().alias("n")).filter(pl.col("n") > 1)
        first, total = pl.collect_all([dups.sort(a.ids).head(3), dups.select(pl.len())],
                                      engine=AFTER_ERROR)
        if first.height:
            out[f"dups:{side}"] = first.with_columns(
                pl.lit(int(total.item()), dtype=pl.Int64).alias("__total"))
    return out or {"error": pl.DataFrame({"message": ["duplicated keys"]})}


def _diagnose(a: Aligned, counts: Mapping[str, Any], checks: Mapping[str, Check],
              needed: Sequence[str], full: bool, whole: bool,
              engine: Literal["streaming", "auto", "in-memory"] = "auto") -> Part:
    """The first offending rows of this part, only where a rule was broken."""
    lazy: dict[str, pl.LazyFrame] = {}
    if a.truth_rows is not None and not full and a.inputs.unmatched == "error":
        for side, lf, other, n in (
                ("predictions", a.pred_rows, a.truth_rows, counts.get("pred_n")),
                ("truth", a.truth_rows, a.pred_rows, counts.get("truth_n"))):
            if n is not None and "matched" in counts and n - counts["matched"]:
                lazy[f"unmatched:{side}"] = lf.select(a.ids).join(
                    other.select(a.ids), on=a.ids, how="anti").sort(a.ids).head(3)
    if a.inputs.nulls == "error":
        for role in needed:
            if counts.get(f"null:{role}"):
                lazy.update(_offending(a, f"null:{role}", bad_null(a, role), role, whole))
    for name, c in checks.items():
        if c.require_some:  # no row of this part meets it: the values it has instead
            if counts.get(f"check:{name}") == 0:
                lazy[f"values:check:{name}"] = a.lf.select(
                    pl.col(c.column).unique().sort(nulls_last=True).head(SEEN + 1))
        elif counts.get(f"check:{name}"):
            lazy.update(_offending(a, f"check:{name}", c.violation(), c.column, whole))
    if not lazy:
        return {}
    try:
        return dict(zip(lazy, pl.collect_all(list(lazy.values()), engine=engine), strict=True))
    except pl.exceptions.PolarsError:  # each on its own: what can be said is said
        out: Part = {}
        for name, lf in lazy.items():
            try:
                out[name] = lf.collect(engine=engine)
            except pl.exceptions.PolarsError:
                continue
        return out


def _offending(a: Aligned, rule: str, violation: pl.Expr, role: str, whole: bool
               ) -> dict[str, pl.LazyFrame]:
    """The first row breaking ``rule``: the first by key, else the first in the input (with
    its place when the part is the ``whole`` input). For a text column, also the first value
    that is not a number, and the counts that say whether the rule condemns every value (a
    rule on a text column's type does; the row to show is then one whose value made the
    reader type the column as text)."""
    def first(cond: pl.Expr) -> pl.LazyFrame:
        if a.ids:
            cols = [*a.ids, role] if role not in a.ids else list(a.ids)
            return a.lf.filter(cond).sort(a.ids).select(cols).head(1)
        if whole:
            return a.lf.with_row_index("__row").filter(cond).select("__row", role).head(1)
        return a.lf.filter(cond).select(role).head(1)

    out = {f"first:{rule}": first(violation)}
    if a.schema.get(role) == pl.String:
        col = pl.col(role)
        odd = violation & col.is_not_null() & \
            col.str.strip_chars().cast(pl.Float64, strict=False).is_null()
        out[f"odd:{rule}"] = first(odd)
        out[f"culprits:{rule}"] = a.lf.select(
            violation.sum().cast(pl.Int64).alias("bad"),
            col.is_not_null().sum().cast(pl.Int64).alias("values"),
            odd.sum().cast(pl.Int64).alias("odd"))
    return out


# --------------------------------------------------------------------------- the verdict

def _concat(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    return pl.concat(list(frames), how="vertical_relaxed")


def _all(parts: Sequence[Part], name: str) -> list[pl.DataFrame]:
    return [p[name] for p in parts if name in p]


def fmt_key(row: Mapping[str, object], ids: Sequence[str]) -> str:
    """A row's join key for a message: ``id=3`` or ``query='q1', item=7``."""
    return ", ".join(f"{clip(c, NAME_CHARS)}={clip(repr(row[c]), 100)}" for c in ids)


def _where(a: Aligned, parts: Sequence[Part], rule: str, role: str) -> str:
    """Where ``rule`` is first broken: the row's key (or its line) and the offending value."""
    name, note = f"first:{rule}", ""
    culprits = _all(parts, f"culprits:{rule}")
    if culprits:
        c = _concat(culprits).sum().row(0, named=True)
        if c["bad"] == c["values"] and 0 < c["odd"] < c["bad"]:
            name, note = f"odd:{rule}", " (not a number)"
    found = _all(parts, name)
    if not found:
        return ""
    df = _concat(found)
    order = list(a.ids) or (["__row"] if "__row" in df.columns else [])
    first = df.sort(order).head(1) if order else df.head(1)
    if first.height == 0:
        return ""
    r = first.row(0, named=True)
    shown = f"{clip(a.columns.get(role, role), 60)}={clip(repr(r[role]))}{note}"
    if a.ids:
        return f"first at {fmt_key(r, a.ids)}: {shown}"
    if "__row" in r:
        return f"first at data row {r['__row'] + 1} (not counting the header): {shown}"
    return f"e.g. {shown}"


def seen_values(lf: pl.LazyFrame | pl.DataFrame, role: str, column: str, limit: int = SEEN
                ) -> str:
    """``the column 'c' holds: 'a', 'b', ...``: the distinct values of a role's column (the
    first ``limit``, sorted), for a message.

    >>> seen_values(pl.DataFrame({"label": ["b", "a", "b", None]}), "label", "y")
    "the column 'y' holds: 'a', 'b', None"
    """
    vals = lf.lazy().select(pl.col(role).unique().sort(nulls_last=True).head(limit + 1)) \
        .collect().get_column(role).to_list()
    more = " ..." if len(vals) > limit else ""
    return clip(f"the column '{column}' holds: "
                + ", ".join(repr(v) for v in vals[:limit]) + more, 400)


def verdict(plan: Plan, a: Aligned, parts: Sequence[Part]) -> AlignmentInfo:
    """The first broken rule's error (duplicated keys, a file without rows, unmatched rows,
    nulls, the task's and the metrics' checks, a query that failed, no row left), from the
    parts' counts and diagnostics; else the alignment counts. With the task's default set (no
    metrics named), a metric whose own rule the data breaks is not an error: it is taken out
    of ``plan.metrics`` (so the values and reports leave it out) and named in the counts'
    ``default_metrics_left_out``."""
    files = {"predictions": a.inputs.predictions.path,
             "truth": a.inputs.truth.path if a.inputs.truth else ""}
    for side, file in files.items():
        dups = _all(parts, f"dups:{side}")
        if dups:
            total = sum(int(d["__total"][0]) for d in dups)
            first = _concat(dups).sort(a.ids).head(3)
            keys = "; ".join(f"{fmt_key(r, a.ids)} ({r['n']} rows)"
                             for r in first.iter_rows(named=True))
            policy = any(o.name == "duplicates" for o in plan.task.options)
            raise InputDataError(
                f"{file}: {total} duplicated key(s) in the {side}, e.g. {keys}",
                hint="each id must appear once per file: deduplicate the file, or add the "
                "missing key column to 'columns: {id: [...]}'"
                + (", or keep one row of each with 'options: {duplicates: first | last | "
                   "max_score}'" if policy and side == "predictions" else ""),
            )
    counted = _all(parts, "counts")
    if not counted:
        raise _could_not(a, parts)
    c = _sums(counted)
    if not {"matched", "pred_n", "kept"} <= c.keys():
        raise _could_not(a, parts)
    checks, needed = row_checks(plan, a)
    full = plan.task.join == "full" and a.truth_rows is not None
    # join truth: a truth row without predictions is evaluated (null predictions), not unmatched
    filled = plan.task.join == "truth" and a.truth_rows is not None
    matched, pred_n = c["matched"], c["pred_n"]
    truth_n = c.get("truth_n", pred_n)
    only_p, only_t = pred_n - matched, truth_n - matched
    _no_rows_in_a_file(a, pred_n, truth_n)
    if a.truth_rows is not None and not full and a.inputs.unmatched == "error" and (
            only_p or (only_t and not filled)):
        said = []
        for only, side in ((only_p, "predictions"), (0 if filled else only_t, "truth")):
            if only:
                found = _all(parts, f"unmatched:{side}")
                first = _concat(found).sort(a.ids).head(3) if found else pl.DataFrame()
                keys = "; ".join(fmt_key(r, a.ids) for r in first.iter_rows(named=True))
                said.append(f"{only} row(s) only in {files[side]} (e.g. {keys})")
        raise InputDataError(
            "predictions and truth do not line up: " + ", ".join(said),
            hint="fix the files, or set 'alignment: {unmatched: drop}' to evaluate the matched "
            "rows only (the counts are reported)",
        )
    for role in needed:
        n = c.get(f"null:{role}")
        if n and a.inputs.nulls == "error":
            from evalcli.io.readers import blank_line

            blank = next((f"; line {line} of {src.path} is blank, and a blank line reads as "
                          "a row of nulls" for src in (a.inputs.predictions, a.inputs.truth)
                          if src is not None and src.path in a.role_file.get(role, '')
                          and (line := blank_line(src)) is not None), "")
            raise InputDataError(
                f"{a.role_file.get(role, '')}: {n} row(s) with a null or NaN "
                f"{role} (column '{a.columns[role]}'), {_where(a, parts, f'null:{role}', role)}"
                f"{blank}",
                hint="fill or remove them, or set 'alignment: {nulls: drop}' to skip such "
                "rows (the count is reported)",
            )
    task_rules = {t.name for t in plan.task.checks(TaskInput(plan.options, a.roles, a.schema))}
    left_out: list[str] = []
    for name, check in checks.items():
        n = c.get(f"check:{name}")
        col = check.column
        if n and plan.defaulted and name not in task_rules and name != "weight_nonnegative":
            # the task's default set (no metrics named): a metric the data does not allow
            # (log_loss on scores outside [0, 1]) is left out, and the report says so (a
            # second system's run finds it left out already)
            owners = [pm for pm in plan.metrics
                      if any(mc.name == name for mc in pm.metric.checks)]
            plan.metrics = [pm for pm in plan.metrics if pm not in owners]
            if owners:
                left_out.append(f"{', '.join(pm.id for pm in owners)} ({check.message})")
            continue
        if check.require_some and n == 0 and c["kept"]:
            found = _all(parts, f"values:check:{name}")
            seen = seen_values(_concat(found) if found else pl.DataFrame({col: []}), col,
                               a.columns.get(col, col))
            raise InputDataError(f"{a.role_file.get(col, '')}: {check.message}; {seen}",
                                 hint=check.hint)
        if n and not check.require_some:
            raise InputDataError(
                f"{a.role_file.get(col, '')}: {check.message}: {n} row(s), "
                f"{_where(a, parts, f'check:{name}', col)}",
                hint=check.hint,
            )
    if _all(parts, "error"):
        raise _could_not(a, parts)
    if c["kept"] == 0:
        raise _nothing_left(a, matched + (only_t if filled else 0), only_p, only_t)
    extra: dict[str, Any] = {"empty_predicted_sets": only_t} if filled else {}
    if left_out:
        extra["default_metrics_left_out"] = left_out
    raw = c.get("pred_raw_n")
    if raw is not None and raw > pred_n:  # the duplicates policy kept one row of each key
        extra.update(duplicates_dropped=raw - pred_n, duplicates_policy=a.dedupe)
    return AlignmentInfo(
        matched=matched, only_in_predictions=only_p, only_in_truth=only_t,
        unmatched_policy=a.inputs.unmatched, null_policy=a.inputs.nulls,
        # (a full join's rows with a null key are its unmatched rows: counted among all rows)
        dropped_nulls=(c["rows"] - c["kept"] if "rows" in c else 0) if full
        else matched + (only_t if filled else 0) - c["kept"],
        extra=extra,
    )


def _sums(counts: Sequence[pl.DataFrame]) -> dict[str, int]:
    """The parts' counts added, by name (a count no part could compute is absent)."""
    df = pl.concat(list(counts), how="diagonal_relaxed")
    return {k: sum(v) for k in df.columns if (v := df.get_column(k).drop_nulls().to_list())}


def _could_not(a: Aligned, parts: Sequence[Part]) -> InputDataError:
    errors = _all(parts, "error")
    said = _concat(errors)["message"][0] if errors else "no part of the rows was evaluated"
    files = ", ".join(s.path for s in (a.inputs.predictions, a.inputs.truth) if s is not None)
    return InputDataError(f"the inputs ({files}) could not be evaluated: {said}",
                          hint="check the column types (evalcli validate CONFIG shows them)")


def _no_rows_in_a_file(a: Aligned, pred_n: int, truth_n: int) -> None:
    """A file with a header and no rows is bad input, not a report of undefined metrics."""
    for n, src in ((pred_n, a.inputs.predictions), (truth_n, a.inputs.truth)):
        if n == 0 and src is not None:
            from evalcli.io.readers import explain_no_rows

            raise explain_no_rows(src)


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


# --------------------------------------------------------------------------- combining

def _agg(st: AggStat, df: pl.DataFrame, keys: list[str]
         ) -> dict[tuple[Any, ...], dict[str, Any]]:
    """An AggStat's statistics per key from the partial rows of every part: its ``combine``
    (a function, or column by column), exact sums turned into values."""
    own = [c for c in df.columns if c.startswith(st.key + ".")]
    part = df.select(*keys, *own)
    if callable(st.combine):
        part = st.combine(part, keys)
    else:
        part = stats_.combine_columns(part, keys, st.combine)
    own = [c for c in part.columns if c.startswith(st.key + ".")]
    return {tuple(row[k] for k in keys): stats_.finalize_row({c: row[c] for c in own})
            for row in part.iter_rows(named=True)}


def _table(fs: FrameStat, tables: Sequence[pl.DataFrame], keys: list[str]) -> pl.DataFrame:
    """A FrameStat's table from the parts' tables: one part's table only has its exact sums
    turned into values; several are merged by the statistic's ``combine``."""
    if len(tables) == 1:
        return stats_.finalize_frame(tables[0])
    return fs.combine(_concat(tables), keys)


def combine(stats: Mapping[str, Stat], a: Aligned, parts: Sequence[Part]
            ) -> tuple[dict[str, Any], list[tuple[dict[str, Any], int, dict[str, Any]]]]:
    """Statistics of the whole data, and per segment (in the order of the segments' values,
    nulls last), from the parts' partial statistics."""
    aggs = [st for st in stats.values() if isinstance(st, AggStat)]
    frames = [st for st in stats.values() if isinstance(st, FrameStat)]
    overall: dict[str, Any] = {}
    if aggs:
        df = _concat(_all(parts, "agg"))
        for st in aggs:
            overall[st.key] = _agg(st, df, [])[()]
    for fs in frames:
        overall[fs.key] = _table(fs, _all(parts, f"frame:{fs.key}"), [])
    seg_parts = _all(parts, "seg")
    if not a.segments or not seg_parts:
        return overall, []
    keys = [SEG + s for s in a.segments]
    df = _concat(seg_parts)
    per_stat: dict[str, dict[tuple[Any, ...], Any]] = {st.key: _agg(st, df, keys) for st in aggs}
    for fs in frames:
        tables = _all(parts, f"segframe:{fs.key}")
        per_stat[fs.key] = _table(fs, tables, keys).partition_by(
            keys, as_dict=True, include_key=False) if tables else {}
    segments = []
    rows = df.group_by(keys).agg(pl.col("__rows").sum()).sort(keys, nulls_last=True)
    for row in rows.iter_rows(named=True):
        keyt = tuple(row[k] for k in keys)
        seg: dict[str, Any] = {}
        for stat in stats.values():
            got = per_stat[stat.key].get(keyt)
            if got is None and isinstance(stat, FrameStat):
                got = overall[stat.key].clear()
            seg[stat.key] = got
        segments.append(({s: row[SEG + s] for s in a.segments}, int(row["__rows"]), seg))
    return overall, segments


# --------------------------------------------------------------------------- values

def values(plan: Plan, stats: Mapping[str, Any], ctx: Context, segment: bool = False
           ) -> list[MetricResult]:
    """Each planned metric's value from combined statistics (each sees only its own).

    A parameter naming a class absent from the data is an error overall; in a ``segment``
    that merely lacks the class, the metric's 0/0 convention applies (with a note)."""
    out = []
    for pm in plan.metrics:
        own = TaskStatistics({st.key: stats[st.key] for st in pm.metric.stats(pm.params, ctx)},
                         ctx.memo, options=ctx.options)
        try:
            with warnings.catch_warnings():
                # sums beyond the largest float (weights or values near 1e308) are inf or
                # NaN, which the value reports; NumPy's warnings about them are not printed
                warnings.simplefilter("ignore", RuntimeWarning)
                mv = pm.metric.value(own, pm.params)
        except AbsentLabel as exc:
            if not segment:
                raise
            mv = exc.fallback
        except OverflowError:  # an exact sum (math.fsum) beyond the largest float
            mv = MetricValue(None, notes=["a sum exceeds the largest float (weights or values "
                                          "near 1e308)"])
        v = mv.value
        if v is not None and (v != v):  # NaN is undefined, never a number to gate on
            mv.notes.append("the value is not a number")
            v = None
        elif v is not None and math.isinf(v):  # nor is an infinity (the JSON report says null)
            mv.notes.append(f"the value is {'-' if v < 0 else ''}infinite")
            v = None
        out.append(MetricResult(
            id=pm.id, metric=pm.metric.name, family=pm.metric.family, params=dict(pm.params),
            direction=pm.metric.direction, value=v, details=mv.details, notes=list(mv.notes),
            gate=pm.gate, caption=mv.caption,
        ))
    return out
