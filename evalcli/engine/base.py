"""What an engine is, and which one a run uses (chosen once, by :func:`choose_engine`).

Every engine computes the same statistics with the same core (:mod:`evalcli.engine.core`); an
engine decides only where the parts of the rows come from and how they reach the core.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from evalcli.config import SparkSettings
    from evalcli.engine.align import Aligned, Inputs
    from evalcli.engine.core import Evaluated
    from evalcli.engine.plan import Plan
    from evalcli.metrics.base import Context, Metric

STREAMING_BYTES = 2 * 1024**3
"""Inputs larger than this (on disk) run on Polars' streaming engine when engine is auto."""


class Engine(Protocol):
    """Where a run's statistics are computed."""

    name: str
    """``polars``, ``streaming`` or ``spark``: what the report says and metrics may ask
    (:attr:`evalcli.metrics.base.Context.engine`)."""

    @property
    def starting(self) -> str:
        """What a progress display says while the engine starts (empty: nothing to start)."""
        ...

    def prepare(self, plan: Plan, inputs: Inputs) -> Inputs:
        """Before any row is read: refuse what this engine cannot run, open the inputs, and
        return them as :func:`evalcli.engine.align.align` should see them."""
        ...

    def runs(self, metric: Metric) -> bool:
        """Whether ``metric`` runs here (a config listing no metrics gets those that do)."""
        ...

    def run(self, plan: Plan, a: Aligned, extra: dict[str, Any] | None = None,
            ctx: Context | None = None) -> Evaluated:
        """The plan's values over the aligned inputs. ``extra`` maps keys to more statistics
        to compute in the same pass; their overall values replace them in ``extra``. ``ctx``:
        the run's context, if the caller made it (see :func:`evalcli.engine.core.run`)."""
        ...


def choose_engine(engine: str, inputs: Inputs, spark: SparkSettings) -> Engine:
    """The engine a config asks for; ``auto`` streams inputs above :data:`STREAMING_BYTES`."""
    if engine == "spark":
        from evalcli.engine.spark_engine import SparkEngine

        return SparkEngine(spark)
    from evalcli.engine.polars_engine import PolarsEngine

    if engine in ("polars", "streaming"):
        return PolarsEngine(engine)
    paths = [s.path for s in (inputs.predictions, inputs.truth) if s is not None]
    return PolarsEngine("streaming" if _size(paths) > STREAMING_BYTES else "polars")


def _size(paths: Sequence[str]) -> int:
    """Bytes on disk of files and folders (what cannot be read counts 0)."""
    size = 0
    for p in paths:
        try:
            path = Path(p)
            size += sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) \
                if path.is_dir() else path.stat().st_size
        except OSError:
            continue
    return size
