"""The in-process engine: the engine core on one part, the whole input.

In memory (``polars``) the inputs are joined by :func:`~evalcli.engine.align.materialize`;
``streaming`` merges inputs sorted by their key and runs the pass on Polars' streaming engine,
for inputs larger than memory. Either way the checks, the counts and every statistic of the run
are one ``collect_all`` (:func:`evalcli.engine.core.partials`), so Polars shares the scan and
the join between them. This engine adds what only it can do: say which line of a file it could
not read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from evalcli.engine import core
from evalcli.engine.align import Aligned, Inputs, materialize_systems
from evalcli.engine.core import Computed, Evaluated
from evalcli.engine.plan import Plan
from evalcli.errors import UserError
from evalcli.metrics.base import Context, Metric, Stat


@dataclass
class PolarsEngine:
    """The in-process engine (see :class:`evalcli.engine.base.Engine`)."""

    name: str = "polars"
    """``polars`` (in memory) or ``streaming``."""
    starting: str = ""

    def prepare(self, plan: Plan, inputs: Inputs) -> Inputs:
        return inputs  # Polars scans the files itself, lazily

    def runs(self, metric: Metric) -> bool:
        return True  # every metric is written in Polars

    def run(self, plan: Plan, a: Aligned, extra: dict[str, Any] | None = None,
            ctx: Context | None = None) -> Evaluated:
        return run_polars(plan, a, self.name, extra, ctx)


def run_polars(plan: Plan, a: Aligned, engine: str, extra: dict[str, Any] | None = None,
               ctx: Context | None = None) -> Evaluated:
    """Compute the plan in this process (``engine``: ``polars`` or ``streaming``)."""
    return core.run(plan, a, engine, lambda stats: compute(plan, a, stats, engine), extra, ctx)


def compute(plan: Plan, a: Aligned, stats: Mapping[str, Stat], engine: str) -> Computed:
    """Every statistic of the plan over the aligned frame in one pass; the input checked."""
    part = core.partials(plan, a, stats, streaming=engine == "streaming",
                         explain=_explainer(a))
    alignment = core.verdict(plan, a, [part])
    overall, segments = core.combine(stats, a, [part])
    return Computed(overall, segments, alignment, engine, [part])


def run_together(jobs: Sequence[tuple[Plan, Aligned, dict[str, Any] | None, Context | None]],
                 more: Callable[[Sequence[Aligned]], Sequence[pl.LazyFrame]] | None = None,
                 early: Callable[[list[pl.DataFrame]], None] | None = None
                 ) -> tuple[list[Evaluated], list[pl.DataFrame]]:
    """Several runs on the same truth in memory (systems): the truth read and sorted once and
    each run's predictions joined to it (:func:`~evalcli.engine.align.materialize_systems`),
    then every run's statistics, per group too, and the frames of ``more(aligned)`` from one
    ``collect_all`` (:func:`evalcli.engine.core.partials_together`). The checks stay each
    run's: when a query fails, each run is computed on its own and the first whose input is
    bad says why, naming its file. ``early`` is handed the frames of ``more`` before the pass
    (collected on their own first, when they can be), so that work on them (DeLong's sorts)
    runs beside the pass and the intervals."""
    joined = materialize_systems([a for _, a, _, _ in jobs], jobs[0][0].task.join) \
        if jobs else []
    bound = [core.bound(plan, a, "polars", extra, ctx)
             for (plan, _, extra, ctx), a in zip(jobs, joined, strict=True)]
    extra_q = list(more(joined)) if more is not None else []
    ahead: list[pl.DataFrame] | None = None
    if early is not None and extra_q:
        # the frames first (a select over the joined rows), so that ``early``'s work runs
        # beside the pass; on bad input the pass below says what is wrong
        try:
            ahead = pl.collect_all(extra_q, engine="in-memory")
        except pl.exceptions.PolarsError:
            ahead = None
        else:
            early(ahead)
    together = core.partials_together(
        [(plan, a, stats) for (plan, _, _, _), a, (_, stats) in zip(jobs, joined, bound,
                                                                    strict=True)],
        [] if ahead is not None else extra_q)
    if together is None:
        parts = [core.partials(plan, a, stats, explain=_explainer(a))
                 for (plan, _, _, _), a, (_, stats) in zip(jobs, joined, bound, strict=True)]
        frames: list[pl.DataFrame] = ahead if ahead is not None else []
    else:
        parts, frames = together
        if ahead is not None:
            frames = ahead
        elif early is not None:
            early(frames)
    out = []
    for (plan, _, extra, _), a, (ctx, stats), part in zip(jobs, joined, bound, parts,
                                                          strict=True):
        alignment = core.verdict(plan, a, [part])
        overall, segments = core.combine(stats, a, [part])
        computed = Computed(overall, segments, alignment, "polars", [part])
        out.append(core.evaluated(plan, a, "polars", ctx, stats, computed, extra))
    if together is None and extra_q and ahead is None:  # each run's input passed its checks
        frames = pl.collect_all(extra_q, engine="in-memory")
        if early is not None:
            early(frames)
    return out, frames


def _explainer(a: Aligned) -> Callable[[Exception], UserError | None]:
    def explain(exc: Exception) -> UserError | None:
        from evalcli.io.readers import explain_read_error

        return explain_read_error([a.inputs.predictions, a.inputs.truth], exc)

    return explain
