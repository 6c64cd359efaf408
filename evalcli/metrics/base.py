"""The metric declaration: the one contract built-in and third-party metrics share.

A metric is data, not a class hierarchy. It declares

- its ``name``, ``family`` (task), a one-line ``summary``, the ``formula`` and the
  ``conventions`` (where peers disagree, and which peer the default matches);
- its ``params``: one :class:`Param` per parameter (type, default, constraint, one line of
  meaning). The same declaration drives config validation, ``evalcli metrics show`` and the docs;
- its ``direction`` (``higher`` or ``lower`` is better), which gates and diffs read;
- the column roles it ``needs`` (each entry is a set of alternatives, one of which must be there);
- ``stats``: the mergeable sufficient statistics it needs, as :class:`AggStat` (named Polars
  aggregations over the aligned rows) or :class:`FrameStat` (a small table such as counts per
  distinct score). Metrics asking for a statistic with the same ``key`` share it: the engine
  computes every statistic of a run in one pass over one scan and one join;
- ``value``: a function of the combined statistics and the parameters, returning a
  :class:`MetricValue`.

Statistics of two parts of the data combine (``combine``) into the statistics of the whole: that
is what gives per-segment results, streaming and distributed execution without writing a metric
twice.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from evalcli.errors import MetricError, clip, did_you_mean

if TYPE_CHECKING:
    import polars as pl

    from evalcli.uncertainty.intervals import Interval

T = TypeVar("T")
Direction = Literal["higher", "lower"]
ParamValue = int | float | str | bool | tuple[Any, ...] | None
Params = Mapping[str, Any]



def _number(value: Any) -> int | float:
    """A finite number from a number or its text: an int when integral (``3`` for ``3.0``),
    so that a table prints as written; ``ValueError`` otherwise (a bool is not a number)."""
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError
        x = float(value)
        if not math.isfinite(x):
            raise ValueError
    except ValueError:
        raise ValueError(f"{clip(repr(value), 40)} is not a number") from None
    return int(x) if x.is_integer() else x


class NumberMap(dict[int | float, int | float]):
    """The value of a parameter of type ``dict``: numbers to numbers, keys sorted, read-only
    and hashable (a statistic's key and the run's memo hold it). From a mapping (YAML's
    ``{1: 3, 2: 9}``) or its text: ``{1: 3, 2: 9}``, ``{1:3,2:9}``, ``1=3,2=9`` (trec_eval's)
    or ``1:3|2:9``. It prints as written in a metric id, ``{1:3,2:9}``.

    >>> NumberMap.parse({2: "9", 1: 3.0, 4: 4.5})
    {1: 3, 2: 9, 4: 4.5}
    >>> str(NumberMap.parse("1=3,2=9,4=4.5")), NumberMap.parse("{1: 3}") == {1.0: 3.0}
    ('{1:3,2:9,4:4.5}', True)
    >>> NumberMap.parse({"1:3": None})  # YAML's {1:3} (no space after the colon)
    Traceback (most recent call last):
    ...
    ValueError: '1:3' is not a number
    """

    @classmethod
    def parse(cls, value: Any) -> NumberMap:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("{") and text.endswith("}"):
                text = text[1:-1]
            pairs = []
            for part in re.split(r"[,|]", text) if text.strip() else []:
                pair = re.fullmatch(r"\s*([^:=]+?)\s*[:=]\s*(.+?)\s*", part)
                if pair is None:
                    raise ValueError(f"{clip(repr(part.strip()), 40)} is not key: value")
                pairs.append((pair.group(1), pair.group(2)))
        elif isinstance(value, Mapping):
            pairs = list(value.items())
        else:
            raise ValueError
        out: dict[int | float, int | float] = {}
        for key, val in pairs:
            k = _number(key)
            if k in out:
                raise ValueError(f"key {k} is given twice")
            out[k] = _number(val)
        made = cls()
        dict.update(made, sorted(out.items()))
        return made

    def __str__(self) -> str:
        return "{" + ",".join(f"{k}:{v}" for k, v in self.items()) + "}"

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (NumberMap.parse, (dict(self),))

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a parameter's table is read-only")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _read_only
    __ior__ = _read_only


@dataclass(frozen=True)
class Param:
    """One parameter of a metric: type, default, constraint and one line of meaning.

    >>> beta = Param("beta", float, 1.0, "weight of recall relative to precision", gt=0)
    >>> beta.check(2)
    2.0
    >>> beta.check(0)
    Traceback (most recent call last):
    ...
    evalcli.errors.MetricError: parameter 'beta' must be > 0, got 0
    """

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    nullable: bool = False
    """``None`` is an allowed value (for example "no cut-off")."""
    item: Any = None
    """With ``type`` tuple: the type of each element (``int``, ``float`` or ``str``); each is
    coerced and held to the bounds, and a string splits at ``|`` (as the metric id writes a
    tuple) or ``,``. ``None``: the elements are kept as given."""
    normalize: Callable[[Any], Any] | None = None
    """Applied to the coerced value: returns its canonical form (e.g. levels sorted, so that
    two spellings of one metric get one id) or raises ``ValueError`` with the reason."""

    def constraint(self) -> str:
        """Human-readable constraint, e.g. ``> 0`` or ``one of: linear, exponential``."""
        parts = []
        if self.type is dict:
            parts.append("number: number, e.g. {1: 3, 2: 9}")
        elif self.type is tuple and self.item is not None:
            parts.append(f"{self.item.__name__}s, e.g. [a, b] or a|b")
        each = "each " if self.type is tuple else ""
        if self.choices is not None:
            parts.append(each + "one of: " + ", ".join(str(c) for c in self.choices))
        for op, bound in ((">", self.gt), (">=", self.ge), ("<", self.lt), ("<=", self.le)):
            if bound is not None:
                parts.append(f"{each}{op} {bound:g}")
        return "; ".join(parts)

    def _scalar(self, kind: Any, value: Any) -> Any:
        """``value`` coerced to ``kind`` (bool, int, float or str); ``ValueError`` if it is
        not one."""
        if kind is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no"):
                return value.lower() in ("true", "yes")
            raise ValueError(value)
        if kind is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            return int(value)
        if kind is float:
            if isinstance(value, bool):
                raise ValueError(value)
            coerced = float(value)
            if math.isnan(coerced):
                raise ValueError(value)
            return coerced
        if kind is str:
            if not isinstance(value, str | int | float) or isinstance(value, bool):
                raise ValueError(value)
            return str(value)
        return value  # pragma: no cover - declarations use the types above

    def check(self, value: Any, where: str = "") -> Any:
        """Coerce ``value`` to the declared type and validate it; raise :class:`MetricError`."""
        at = f" ({where})" if where else ""
        if value is None:
            if self.nullable:
                return None
            raise MetricError(f"parameter '{self.name}'{at} may not be empty")
        coerced: Any
        try:
            if self.type is tuple:
                coerced = self._tuple(value)
            elif self.type is dict:
                coerced = NumberMap.parse(value)
            else:
                coerced = self._scalar(self.type, value)
        except (TypeError, ValueError) as err:
            if self.type is tuple:
                want = f"a list{f' of {self.item.__name__}s' if self.item else ''}"
            elif self.type is dict:
                want = "a mapping of numbers to numbers, e.g. {1: 3, 2: 9}"
            else:
                want = self.type.__name__
            why = ""
            if self.type is dict and str(err):
                why = f" ({err})"
            if isinstance(value, Mapping) and any(v is None for v in value.values()):
                why += "; YAML reads {1:3} as the key '1:3': write a space after each colon"
            raise MetricError(
                f"parameter '{self.name}'{at} must be {want}, got {clip(repr(value), 100)}"
                + why) from None
        items = coerced if self.type is tuple and self.item is not None else (coerced,)
        if self.type is not dict:
            for one in items:
                self._bounds(one, value, at)
        if self.normalize is not None:
            try:
                coerced = self.normalize(coerced)
            except ValueError as err:
                raise MetricError(f"parameter '{self.name}'{at}: {err}") from None
        return coerced

    def _tuple(self, value: Any) -> tuple[Any, ...]:
        if isinstance(value, Mapping | bool | int | float):
            raise ValueError(value)  # tuple() of a mapping would keep its keys, silently
        if self.item is None:
            return tuple(value.split(",")) if isinstance(value, str) else tuple(value)
        if isinstance(value, str):
            parts = [p.strip() for p in re.split(r"[|,]", value.strip().strip("[]()"))]
            value = [p for p in parts if p] if value.strip().strip("[]()") else []
        return tuple(self._scalar(self.item, v) for v in value)

    def _bounds(self, coerced: Any, value: Any, at: str) -> None:
        if isinstance(coerced, int) and not isinstance(coerced, bool) and \
                not -2**63 <= coerced < 2**63:
            raise MetricError(f"parameter '{self.name}'{at} must fit in 64 bits (a signed "
                              f"integer), got {clip(repr(value), 100)}")
        if self.choices is not None and coerced not in self.choices:
            raise MetricError(
                f"parameter '{self.name}'{at} must be one of "
                f"{', '.join(map(str, self.choices))}; got {clip(repr(value), 100)}."
                + did_you_mean(str(value)[:200], [str(c) for c in self.choices])
            )
        for op, bound, ok in (
            (">", self.gt, operator.gt),
            (">=", self.ge, operator.ge),
            ("<", self.lt, operator.lt),
            ("<=", self.le, operator.le),
        ):
            if bound is not None and not ok(coerced, bound):
                raise MetricError(
                    f"parameter '{self.name}'{at} must be {op} {bound:g}, "
                    f"got {clip(repr(value), 100)}"
                )


@dataclass(frozen=True)
class Check:
    """A row-level rule on the aligned frame.

    ``violation`` is a boolean expression, true on a bad row. The engine counts violations in
    the same pass as the metrics; when the count is not 0 it fetches the first bad row and
    raises an :class:`~evalcli.errors.InputDataError` with ``message`` and ``hint``.
    ``column`` is the role whose values are shown in the message.
    """

    name: str
    column: str
    violation: Callable[[], pl.Expr]
    message: str
    hint: str
    require_some: bool = False
    """The rule the other way round: ``violation`` is then true on a row that *meets* a
    requirement at least one row must meet (e.g. a label equal to the named positive class),
    and the run fails when no row does; the message then lists the values the column holds."""


@dataclass(frozen=True)
class AggStat:
    """Named aggregations over the aligned rows; all AggStats of a run fuse into one pass.

    ``exprs`` build Polars aggregation expressions (each ``.alias``-ed with a column name that
    is unique to this statistic, prefix it with the key). ``combine`` maps each output column to
    how two parts combine (``"sum"``, ``"max"`` or ``"min"``; ``"exact_sum"`` for a float sum
    built by :func:`evalcli.metrics.stats.exact_sum`, whose partial columns the engines add
    exactly and turn into the sum under this name), or is a function that merges a frame of
    partial rows (grouped by the segment keys) into one row per segment.

    A float sum must be an ``exact_sum``: the same rows then give the same bits whatever the
    input format, the chunks, the row order or the engine (a plain ``sum`` of non-integer
    floats depends on the order of its additions). Counts and sums of integer values are exact
    as ``sum`` below 2^53.
    """

    key: str
    exprs: Callable[[], list[pl.Expr]]
    combine: (
        Mapping[str, Literal["sum", "max", "min", "exact_sum"]]
        | Callable[[pl.DataFrame, list[str]], pl.DataFrame]
    )
    partition_by: tuple[str, ...] = ()
    """Roles whose rows must all be in one part for the partial statistics to combine (e.g.
    ``("query",)`` when a statistic is a sum of per-query values). The Spark engine co-partitions
    the rows by these roles; empty means any split of the rows combines."""
    extremes: Mapping[str, Literal["max", "min"]] = field(default_factory=dict)
    """With a ``combine`` function: the output columns that combine by ``max`` or ``min``;
    every other column adds up over parts (what the bootstrap's replicates rely on)."""
    replicates: Callable[[Mapping[str, Any]], list[dict[str, Any]]] | None = None
    """With a ``combine`` function, optionally: the statistic in every bootstrap replicate at
    once, from each output column's replicate values as an array (an exact sum's as its
    value, NaN for none), one dict per replicate, as ``combine`` gives for a part per
    replicate; it must give the same values (a thousand replicates per segment: ``combine``
    on a frame of a row each costs more than the arithmetic)."""


@dataclass(frozen=True)
class FrameStat:
    """A statistic that is a small table, e.g. weights per distinct score.

    ``build(lf, keys)`` returns a LazyFrame with the segment ``keys`` among its columns;
    ``combine(df, keys)`` merges partial tables (rows of several parts concatenated) into one.
    """

    key: str
    build: Callable[[pl.LazyFrame, list[str]], pl.LazyFrame]
    combine: Callable[[pl.DataFrame, list[str]], pl.DataFrame]
    partition_by: tuple[str, ...] = ()
    """As :attr:`AggStat.partition_by`: roles whose rows must be in one part."""
    by: tuple[str, ...] | None = None
    """The columns that key the table's rows when its other columns add up over parts (a
    ``sum_by`` combine says so itself); the bootstrap then resamples the table. ``None`` and no
    ``sum_by``: the table does not resample (its metrics get no bootstrap interval)."""
    group_build: Callable[[pl.LazyFrame, list[str]], pl.LazyFrame] | None = None
    """A cheaper build of the table for the bootstrap's random groups (the keys then include
    the group): the same columns, its ``by`` values rounded to a coarse monotone grid
    (:func:`evalcli.metrics.stats.coarse`) and the rows hashed into groups instead of sorted.
    Only the replicates use it; ``None``: :attr:`build`."""
    merge: Callable[[pl.DataFrame, int], Any] | None = None
    """For a table keyed by one float column beside others, when the bootstrap must merge the
    float's values to bound the table's size: ``merge(table, limit)`` gives each row's new
    value (an array; ``None``: keep them), at most about ``limit`` distinct values per
    combination of the other keys. ``None``: consecutive values into ``limit`` bins, the same
    bins for every combination."""
    details_only: bool = False
    """The metric's value does not read the table, only its details do (novelty's table of
    items): the bootstrap neither builds it per random group nor resamples it, and the
    metric's replicates are computed without it (its ``value`` must allow it absent)."""


Stat = AggStat | FrameStat


@dataclass
class MetricValue:
    """The outcome of a metric: the value (``None`` when undefined), details and notes.

    ``notes`` say when a convention changed the result, e.g. a zero-division fallback, or why
    the value is undefined. Never a silent 0. ``caption`` is a short fact every report shows
    beside the value (peak F1: ``at threshold 0.42``), not in the JSON report: keep the fact
    itself in ``details``.
    """

    value: float | None
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    caption: str | None = None


class AbsentLabel(MetricError):
    """A metric parameter names a class that occurs nowhere in the data (a typo, most
    likely): an error for the run as a whole, while a segment that merely lacks the class gets
    ``fallback`` (the 0/0 convention, with a note)."""

    def __init__(self, message: str, *, fallback: MetricValue, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.fallback = fallback


def absent_label(param: str, label: Any, known: Sequence[Any], fallback: MetricValue,
                 explicit: str | None = None) -> AbsentLabel:
    """The error for parameter ``param`` naming ``label``, absent from the ``known`` classes."""
    from evalcli.errors import clip

    names = [str(k) for k in known]
    shown = clip(", ".join(repr(k) for k in known[:30]) + (" ..." if len(known) > 30 else ""),
                 300)
    return AbsentLabel(
        f"parameter '{param}': {clip(repr(label), 100)} occurs in neither the truth nor the "
        f"predictions.{did_you_mean(str(label), names)} The classes seen: {shown or 'none'}.",
        fallback=fallback,
        hint=explicit or "name a class that occurs in the data",
    )


StatValues = Mapping[str, Any]
"""Combined statistics by key: a ``dict`` of floats for an AggStat, a DataFrame for a FrameStat.
The engine passes a :class:`Statistics`, which also carries the run's :class:`Memo`."""


class Memo:
    """What a run derives once and shares: a frame that several statistics build on (ranking's
    ranked frame), values that several metrics read from one statistic (binary's curve areas).

    One memo per run: the engine's context for the run (:attr:`Context.memo`) makes it, and it
    goes with the run, so nothing a run derived reaches another run. An entry is found by the
    object it derives from (held by the memo, so its identity is not reused while the memo
    lives) and a key of the caller's. A memo sent to another process (the Spark engine's
    partitions) arrives empty.

    >>> memo, calls = Memo(), []
    >>> table = [1, 2, 3]
    >>> def total():
    ...     calls.append(1)
    ...     return sum(table)
    >>> memo.get(table, ("sum",), total), memo.get(table, ("sum",), total), len(calls)
    (6, 6, 1)
    >>> memo.get([1, 2, 3], ("sum",), total), len(calls)  # an equal list is another object
    (6, 2)
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], tuple[object, Any]] = {}

    def get(self, of: object, key: tuple[Any, ...], build: Callable[[], T]) -> T:
        """What ``build()`` returns for ``of`` and ``key``, built on the first call only."""
        full = (id(of), *key)
        hit = self._entries.get(full)
        if hit is not None and hit[0] is of:
            found: T = hit[1]
            return found
        out = build()
        self._entries[full] = (of, out)
        return out

    def __len__(self) -> int:
        return len(self._entries)

    def __getstate__(self) -> dict[str, Any]:
        return {"_entries": {}}


class Statistics(dict[str, Any]):
    """The combined statistics a metric's ``value`` receives (see :data:`StatValues`), with
    the :class:`Memo` of the run that computed them (``memo``). ``replicate``: they are a
    bootstrap replicate's (small tables, a thousand of them): a value may then take a faster
    path whose last digits may differ from the point value's path."""

    def __init__(self, values: Mapping[str, Any], memo: Memo, replicate: bool = False) -> None:
        super().__init__(values)
        self.memo = memo
        self.replicate = replicate


def memo_of(stats: StatValues) -> Memo:
    """The memo of the run that computed ``stats``; a new one for a plain mapping (a value
    function called by hand), so that nothing is shared then."""
    return stats.memo if isinstance(stats, Statistics) else Memo()


@dataclass(frozen=True)
class Context:
    """What a metric may know about the run when it declares its statistics."""

    family: str
    roles: frozenset[str]
    """Column roles present in the aligned frame (``label``, ``score``, ``prediction``, ...)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Task options from the config (e.g. ``positive``)."""
    engine: str | None = None
    """The engine that computes the statistics (``polars``, ``streaming``, ``spark``), when
    known: a statistic may choose its fastest plan by it (see ``stats.table_build``)."""
    frames: Mapping[str, Any] = field(default_factory=dict)
    """Side inputs the options name (``items_file``, ``popularity_file``, ...), scanned, by
    option name."""
    memo: Memo = field(default_factory=Memo, compare=False, repr=False)
    """The run's memo (one per context: the engine makes one context per run)."""


@dataclass(frozen=True)
class Metric:
    """A metric declaration (see the module docstring)."""

    name: str
    family: str
    summary: str
    formula: str
    direction: Direction
    needs: tuple[frozenset[str], ...]
    stats: Callable[[Params, Context], Sequence[Stat]]
    value: Callable[[StatValues, Params], MetricValue]
    params: tuple[Param, ...] = ()
    conventions: str = ""
    peer: str = ""
    """Which peer's definition the defaults match (e.g. ``scikit-learn``, ``Spark MLlib``)."""
    aliases: tuple[str, ...] = ()
    retired: tuple[tuple[str, str], ...] = ()
    """Former aliases, each with what to write instead: the name is then an error that says
    so (e.g. an alias that did not follow the peer it is named after)."""
    cutoff: str | None = None
    """Name of the parameter that ``name@N`` sets (usually ``k``), if any."""
    range: tuple[float | None, float | None] = (None, None)
    """Bounds of the value, for documentation and property tests."""
    in_default_set: bool = True
    """Whether a config that lists no metrics computes this one (False for variants that
    would repeat another metric at their defaults, e.g. fbeta at beta=1 is f1)."""
    checks: tuple[Check, ...] = ()
    """Extra row rules this metric needs (e.g. scores are probabilities for log loss)."""
    engines: frozenset[str] = frozenset({"polars", "streaming", "spark"})
    interval: Callable[[StatValues, Params, float, bool], Interval | None] | None = None
    """A closed-form confidence interval (Wilson, DeLong, t), used by ``method: auto`` when the
    run resamples the metric's natural unit: ``interval(stats, params, level, unweighted)``;
    ``None`` from the call (e.g. with weights) falls back to the bootstrap. Say which in
    :attr:`interval_doc`."""
    ratio: Callable[[Params], tuple[str, str | None]] | None = None
    """When the value is one column of the metric's one statistic (a table of one row of sums,
    such as a mean over queries' Σ w·v and Σ w) divided by another, undefined when the
    divisor is 0: ``ratio(params)`` names the two columns (the second ``None``: the value is
    the first column itself, a total). A bootstrap then divides its replicates as arrays
    instead of calling :attr:`value` once per replicate."""
    interval_doc: str = ""
    """How the metric's confidence interval is computed, for ``metrics show`` and the docs:
    its closed form (and when it applies), or why there is none; empty: the bootstrap."""
    origin: str = "built-in"
    example: str = ""
    """A doctest (``>>>`` lines and the output they print) that computes the metric with
    :func:`evalcli.evaluate` on a few rows and shows the value, chosen to teach a convention
    (ties, a cut-off beyond the list, weights, an undefined case and its note). Indented as
    the declaration is (it is dedented for display); output compares with doctest's
    NORMALIZE_WHITESPACE, so a long line may wrap. ``evalcli metrics show`` prints it,
    docs/metrics.md shows it, and the tests run every built-in metric's example against an
    independent reference (tests/test_metric_docs.py); a plugin's may be empty."""

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise MetricError(
            f"metric '{self.name}' has no parameter '{clip(str(name), 100)}'."
            + did_you_mean(str(name)[:200], [p.name for p in self.params])
            + (f" Its parameters: {', '.join(p.name for p in self.params)}." if self.params else "")
        )

    def resolve(self, given: Mapping[str, Any], where: str = "") -> dict[str, Any]:
        """All parameters with defaults filled in, validated and coerced."""
        resolved: dict[str, Any] = {}
        for name in given:
            self.param(name)
        for p in self.params:
            resolved[p.name] = p.check(given.get(p.name, p.default), where or self.name)
        return resolved

    def missing_roles(self, roles: frozenset[str]) -> list[str]:
        """Groups of roles this metric needs and the run does not have."""
        return [" or ".join(sorted(group)) for group in self.needs if not group & roles]

    def check_engine(self, engine: str, id_: str | None = None) -> None:
        """Raise :class:`MetricError` when this metric cannot run on ``engine``.

        >>> m = Metric("m", "binary", "", "", "higher", (), lambda p, c: [],
        ...            lambda s, p: MetricValue(None), engines=frozenset({"polars"}))
        >>> m.check_engine("spark")
        Traceback (most recent call last):
        ...
        evalcli.errors.MetricError: metric 'm' cannot run on engine spark (it runs on: polars)
          fix: drop the metric, or use an engine it supports (engine: polars)
        """
        if engine in self.engines or engine == "auto":
            return
        raise MetricError(
            f"metric '{id_ or self.name}' cannot run on engine {engine} "
            f"(it runs on: {', '.join(sorted(self.engines))})",
            hint=f"drop the metric, or use an engine it supports (engine: "
            f"{sorted(self.engines)[0]})",
        )


def metric_id(metric: Metric, params: Params) -> str:
    """The stable id of a metric with parameters: name, ``@k``, then non-default parameters.

    >>> from evalcli.metrics.base import Param, Metric, MetricValue, metric_id
    >>> m = Metric("ndcg", "ranking", "", "", "higher", (), lambda p, c: [],
    ...            lambda s, p: MetricValue(None),
    ...            params=(Param("k", int, None, "", nullable=True),
    ...                    Param("gain", str, "linear", "")), cutoff="k")
    >>> metric_id(m, {"k": 10, "gain": "linear"})
    'ndcg@10'
    >>> metric_id(m, {"k": 10, "gain": "exponential"})
    'ndcg@10[gain=exponential]'
    """
    out = metric.name
    if metric.cutoff is not None and params.get(metric.cutoff) is not None:
        out += f"@{_stable(params[metric.cutoff])}"
    extras = []
    for p in sorted(metric.params, key=lambda p: p.name):
        if p.name == metric.cutoff:
            continue
        v = params.get(p.name, p.default)
        if v != p.default:
            extras.append(f"{p.name}={_stable(v)}")
    if extras:
        out += "[" + ",".join(extras) + "]"
    return out


def _stable(v: Any) -> str:
    """A parameter's value as the metric id writes it (a table: ``{1:3,2:9}``; a tuple:
    ``a|b``), which :meth:`Param.check` reads back."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return repr(v) if not v.is_integer() else f"{v:g}"
    if isinstance(v, tuple):
        return "|".join(map(str, v))
    return str(v)


def safe_div(num: float, den: float) -> float | None:
    """``num / den``, or ``None`` when ``den`` is 0 (the caller decides and says what to do).

    >>> safe_div(1, 4), safe_div(1, 0)
    (0.25, None)
    """
    return num / den if den != 0 else None
