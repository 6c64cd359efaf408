"""Tasks (metric families): their column roles, options and the one central input check,
and what a family adds to a run beyond its metrics' values.

A task turns the aligned frame, whose columns carry role names (``label``, ``score``,
``prediction``, ``weight`` ...), into the clean, typed frame its metrics assume, after checking
it once (STYLE.md, example 4): metric code never re-checks its input.

A task may add to a run (the runner calls these hooks for every task, naming none): more
statistics computed in the same pass (:attr:`Task.extras`: binary's counts per score,
regression's residuals, ranking's query counts and per-query values), and what the result gets
from their values (:attr:`Task.finish`: curve tables, alignment counts, a per-query table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from evalcli.metrics.base import (
    Check,
    Context,
    Memo,
    Metric,
    Param,
    Params,
    Stat,
    Statistics,
    StatValues,
)

if TYPE_CHECKING:
    import polars as pl
    from polars._typing import PolarsDataType


Shape = Literal["value", "list", "struct"]
"""What one row of a column holds: one plain value (a number, a name, a boolean), a list of
plain values, or a struct (a JSON object; per-class scores)."""


def shape_of(dtype: PolarsDataType) -> Shape | None:
    """The shape of a column's values, or None for what no role reads (lists of lists or of
    objects, Python objects).

    >>> import polars as pl
    >>> shape_of(pl.Int64), shape_of(pl.List(pl.String)), shape_of(pl.Struct({"a": pl.Int64}))
    ('value', 'list', 'struct')
    >>> shape_of(pl.List(pl.Struct({"a": pl.Int64}))) is None
    True
    """
    import polars as pl

    if isinstance(dtype, pl.Struct):
        return "struct"
    if isinstance(dtype, pl.List | pl.Array):
        return "list" if shape_of(dtype.inner) == "value" else None
    if dtype == pl.Object:
        return None
    return "value"


def shape_words(dtype: PolarsDataType) -> str:
    """How a message names the values of a column of this type.

    >>> import polars as pl
    >>> shape_words(pl.Struct({"a": pl.Int64})), shape_words(pl.List(pl.Struct({})))
    ('objects (records with fields)', 'lists of objects')
    """
    import polars as pl

    if isinstance(dtype, pl.Struct):
        return "objects (records with fields)"
    if isinstance(dtype, pl.List | pl.Array):
        inner = dtype.inner
        if isinstance(inner, pl.Struct):
            return "lists of objects"
        if isinstance(inner, pl.List | pl.Array):
            return "lists of lists"
        return "lists"
    if dtype == pl.Object:
        return "Python objects"
    return "single values"


_SHAPES = {"value": "one value per row (a number, a name or true/false)",
           "list": "a list of values", "struct": "an object (a struct of numbers)"}


SETS_ELSEWHERE: tuple[tuple[Shape, str], ...] = (
    ("list", "for a set of labels per example use task: multilabel"),)
"""For :attr:`Role.elsewhere` of a role holding one class per row."""


@dataclass(frozen=True)
class Role:
    """A column role: its name, whether it is required, and one line of meaning."""

    name: str
    help: str
    required: bool = False
    numeric: bool = False
    side: Literal["predictions", "truth", "both"] = "predictions"
    """Where the column lives when there are two files. Roles on ``both`` sides are the join
    keys (e.g. query and item for ranking); otherwise the ``id`` columns are."""
    nullable: bool = False
    """Nulls are expected after the join (e.g. relevance of a recommended, unjudged item)."""
    opt_in: bool = False
    """Used only when the config or a flag names its column (a weight): a column that merely
    happens to carry the role's name changes nothing."""
    takes: tuple[Shape, ...] = ("value",)
    """The shapes of values the task reads in the column as the file holds it (before the
    task's reshape): one value per row unless the task reads lists (multilabel label sets, a
    ranked list of items) or structs (per-class scores). Checked once, from the schema, before
    any row is read: Polars cannot cast an object to a number (it panics on some)."""

    elsewhere: tuple[tuple[Shape, str], ...] = ()
    """Shapes the role does not take that another task reads, and what to say: ``(("list",
    "for a set of labels per example use task: multilabel"),)``."""

    def refuses(self, dtype: PolarsDataType) -> bool:
        """Whether values of this type cannot be this role's."""
        return shape_of(dtype) not in self.takes

    def wants(self) -> str:
        """What the role reads, for a message: ``one value per row ...``."""
        return " or ".join(_SHAPES[s] for s in self.takes)


@dataclass(frozen=True)
class TaskInput:
    """What a task's checks and normalisation know about a run."""

    options: Mapping[str, Any]
    roles: frozenset[str]
    schema: Mapping[str, pl.DataType]
    file_order: bool = False
    """The predictions' rows are in the order of their file (:attr:`Aligned.file_order`)."""


class TaskStatistics(Statistics):
    """:class:`~evalcli.metrics.base.Statistics` with the run's task options (``options``, the
    context's): what the engine passes a metric's ``value``, which may read a convention that a
    task option presets (binary's ``compat``) through :func:`options_of`."""

    def __init__(self, values: Mapping[str, Any], memo: Memo, replicate: bool = False,
                 options: Mapping[str, Any] | None = None) -> None:
        super().__init__(values, memo, replicate)
        self.options: Mapping[str, Any] = options or {}


def options_of(stats: StatValues) -> Mapping[str, Any]:
    """The run's task options that ``stats`` came with; none for a plain mapping (a value
    function called by hand)."""
    return stats.options if isinstance(stats, TaskStatistics) else {}


@dataclass(frozen=True)
class Asks:
    """What a run is asked for beyond the metrics' values (by the config or the command)."""

    curves: bool = False
    """Curve tables (``--curves``, the HTML report's figures)."""
    per_query: bool = False
    """Each query's metric values (``per_query:``); only a task with :attr:`Task.per_query`."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The run's task options (resolved): how the additions are framed (binary's
    ``curve_framing``, which ``compat`` presets)."""
    metrics: Planned = ()
    """The run's metrics (id, declaration, parameters): tables that follow a metric's
    parameters (binary's reliability diagram of ece's bins, gain table of lift_table's
    groups)."""


Planned = Sequence[tuple[str, Metric, Params]]
"""The metrics of a run's plan: (id, declaration, parameters)."""


@dataclass
class Additions:
    """What a task adds to a run's result, from the values of its extra statistics."""

    curves: dict[str, pl.DataFrame] = field(default_factory=dict)
    """Curve tables by name (``roc``, ``pr``, ``residuals``), as ``--curves`` writes them."""
    areas: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """For a curve, the metrics (by name) whose values summarise it, each with the name a
    figure's legend gives it (binary's PR curve: AUPRC and average precision)."""
    alignment: dict[str, int] = field(default_factory=dict)
    """More alignment counts (ranking: queries in the predictions, in the truth, ...)."""
    per_query: pl.DataFrame | None = None
    """Each query's metric values, when asked for."""
    values: dict[str, float | None] = field(default_factory=dict)
    """Metric values, by id, that replace the pass's (ranking's z-scores: ``zscores_file``);
    their intervals no longer apply and are dropped."""
    values_note: str = ""
    """The note each replaced value carries: what it is now."""


def _no_extras(ctx: Context, metrics: Planned, asks: Asks) -> dict[str, Stat]:
    return {}


def _nothing_added(values: Mapping[str, Any], asks: Asks) -> Additions:
    return Additions()


@dataclass(frozen=True)
class Task:
    """A metric family's input contract, and what it adds to a run."""

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
    join: Literal["inner", "full", "truth"] = "inner"
    """``inner``: rows line up one to one (unmatched rows follow the alignment policy).
    ``full``: rows of either side are kept (ranking: unjudged recommendations, unrecommended
    relevant items); the task's statistics handle the nulls. ``truth``: every truth row is
    kept, one without a prediction row with null predictions (multilabel's long layout: an
    empty predicted set has no row); prediction rows without truth follow the policy."""
    join_for: Callable[[Mapping[str, Any]], Literal["inner", "full", "truth"]] | None = None
    """The join given the run's options (the plan's task gets it), when options decide."""
    reshape: Callable[[pl.LazyFrame, str, Mapping[str, Any]], pl.LazyFrame] | None = None
    """Applied to each side after its columns are renamed to roles and before the join:
    ``reshape(lf, side, options)`` with side ``"predictions"``, ``"truth"`` or ``"single"``
    (e.g. multilabel's long layout aggregated to one row per id)."""
    kept_once: Callable[[pl.LazyFrame, Mapping[str, Any]], tuple[pl.LazyFrame, str] | None
                        ] | None = None
    """When the reshaped predictions keep one row of a repeated key under any policy
    (ranking's ``duplicates``: first, last or max_score): ``kept_once(lf, options)`` gives the
    predictions reshaped without that step and the policy's name, else None. The run counts
    the rows the policy left out and the report says so (nothing is dropped unsaid). Under
    ``"first"`` or ``"last"`` (in file order) the in-memory alignment keeps that row itself,
    on rows it sorts by key anyway (two equal neighbours), instead of hashing every key; the
    other paths use ``reshape``'s own."""
    pack: Callable[[Mapping[str, Any], Sequence[str]], Mapping[str, Sequence[str]]] | None = None
    """Roles built from several columns of the predictions file: ``pack(options, names)``
    returns role -> columns, and the role's column is a struct of them, fields named by column
    (e.g. multiclass scores given as one column per class)."""

    per_query: bool = False
    """Whether the task has per-query values to write (``per_query:``); a run of another task
    asking for them is refused before any row is read."""
    extras: Callable[[Context, Planned, Asks], Mapping[str, Stat]] = _no_extras
    """``extras(ctx, metrics, asks)``: statistics by key that a run of ``metrics`` adds to its
    one pass for what ``asks`` wants (``ctx`` is the run's context: its memo is the metrics')."""
    finish: Callable[[Mapping[str, Any], Asks], Additions] = _nothing_added
    """``finish(values, asks)``: what the result gets from the overall values of the extras'
    statistics (by key)."""

    def role_names(self) -> list[str]:
        return [r.name for r in self.roles]
