"""Tasks (metric families): their column roles, options and the one central input check.

A task turns the aligned frame, whose columns carry role names (``label``, ``score``,
``prediction``, ``weight`` ...), into the clean, typed frame its metrics assume, after checking
it once (STYLE.md, example 4): metric code never re-checks its input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalcli.metrics.base import Check, Param

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class Role:
    """A column role: its name, whether it is required, and one line of meaning."""

    name: str
    help: str
    required: bool = False
    numeric: bool = False


@dataclass(frozen=True)
class TaskInput:
    """What a task's checks and normalisation know about a run."""

    options: Mapping[str, Any]
    roles: frozenset[str]
    schema: Mapping[str, pl.DataType]


@dataclass(frozen=True)
class Task:
    """A metric family's input contract."""

    name: str
    summary: str
    roles: tuple[Role, ...]
    options: tuple[Param, ...] = ()
    checks: Callable[[TaskInput], Sequence[Check]] = lambda t: ()
    """The rules every row must follow, given the options, roles and schema of the run."""
    normalize: Callable[[pl.LazyFrame, TaskInput], pl.LazyFrame] = lambda lf, t: lf
    """Turn the checked frame into the typed frame the metrics assume (e.g. labels to 0/1)."""
    requires_any: tuple[frozenset[str], ...] = ()
    """Role groups of which at least one must be present (e.g. score or prediction)."""

    def role_names(self) -> list[str]:
        return [r.name for r in self.roles]
