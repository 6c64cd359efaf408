"""The in-process engine: the engine core on one part, the whole input.

In memory (``polars``) the inputs are joined by :func:`~evalcli.engine.align.materialize`;
``streaming`` merges inputs sorted by their key and runs the pass on Polars' streaming engine,
for inputs larger than memory. Either way the checks, the counts and every statistic of the run
are one ``collect_all`` (:func:`evalcli.engine.core.partials`), so Polars shares the scan and
the join between them. This engine adds what only it can do: say which line of a file it could
not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalcli.engine import core
from evalcli.engine.align import Aligned, Inputs
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
    def explain(exc: Exception) -> UserError | None:
        from evalcli.io.readers import explain_read_error

        return explain_read_error([a.inputs.predictions, a.inputs.truth], exc)

    part = core.partials(plan, a, stats, streaming=engine == "streaming", explain=explain)
    alignment = core.verdict(plan, a, [part])
    overall, segments = core.combine(stats, a, [part])
    return Computed(overall, segments, alignment, engine, [part])
