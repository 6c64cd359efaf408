"""Writing a metric plugin: the declaration built-ins use, and helpers for the common shape.

A plugin is a module with ``METRICS = [...]`` (declarations of :class:`Metric`), exposed through
the ``evalcli.metrics`` entry-point group of an installed package, or named in a config under
``plugins:`` (evalcli then runs that file). See ``docs/plugins.md``.

Most metrics are a function of a few weighted sums over the aligned rows. :func:`sum_metric`
declares such a metric from a mapping of row-level Polars expressions (summed by the engine,
fused with every other statistic of the run into one pass, per segment too) and a value
function of the sums. :func:`mean_metric` is the common case of a weighted mean of one
row-level expression. Both return a plain :class:`Metric`, so anything they cannot express is
written with :class:`AggStat` / :class:`FrameStat` directly, as the built-in families do.

The aligned frame the expressions see has one column per role: ``label``, ``score``,
``prediction`` (as the task normalises them: binary labels and predictions are 0.0/1.0,
regression values are Float64) and ``weight`` (1.0 when the config names no weight column).

>>> import polars as pl
>>> hit_rate = mean_metric(
...     "hit_rate", "binary", summary="share of positives among rows scored >= t",
...     formula="Σ w·y·[s ≥ t] / Σ w·[s ≥ t]", direction="higher", needs=["label", "score"],
...     row=lambda p, c: pl.col("label"), where=lambda p, c: pl.col("score") >= p["t"],
...     params=[Param("t", float, 0.5, "the score threshold", ge=0)])
>>> [st.key for st in hit_rate.stats({"t": 0.5}, Context("binary", frozenset()))]
['binary.hit_rate[t=0.5]']
>>> hit_rate.value({"binary.hit_rate[t=0.5]": {"binary.hit_rate[t=0.5].x": 3.0,
...                                             "binary.hit_rate[t=0.5].w": 4.0}}, {"t": 0.5})
MetricValue(value=0.75, details={'total_weight': 4.0}, notes=[], caption=None)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from evalcli.metrics.base import (
    AggStat,
    Check,
    Context,
    Direction,
    FrameStat,
    Metric,
    MetricValue,
    Param,
    Params,
    Stat,
    StatValues,
    metric_id,
    safe_div,
)
from evalcli.metrics.stats import combine_columns, sum_by

__all__ = [
    "AggStat",
    "Check",
    "Context",
    "FrameStat",
    "Metric",
    "MetricValue",
    "Param",
    "Params",
    "Stat",
    "StatValues",
    "mean_metric",
    "metric_id",
    "needs",
    "safe_div",
    "sum_metric",
    "sum_stat",
    "sum_table",
    "sums_of",
]

RowExprs = Callable[[Params, Context], Mapping[str, pl.Expr]]
SumsValue = Callable[[dict[str, float], Params], "MetricValue | float | None"]


def needs(*roles: str | Iterable[str]) -> tuple[frozenset[str], ...]:
    """The ``needs`` of a metric: each argument a role, or a set of alternative roles.

    >>> needs("label", {"score", "prediction"}) == (frozenset({"label"}),
    ...                                              frozenset({"score", "prediction"}))
    True
    """
    return tuple(frozenset([r]) if isinstance(r, str) else frozenset(r) for r in roles)


def sum_stat(key: str, exprs: Callable[[], Mapping[str, pl.Expr]]) -> AggStat:
    """An :class:`AggStat` of the sums of named row-level expressions; parts combine by adding.

    ``exprs()`` maps a short name to a row-level expression; the statistic's columns are
    ``"<key>.<name>"``. Read them back with :func:`sums_of`.

    >>> st = sum_stat("demo", lambda: {"n": pl.col("weight")})
    >>> pl.DataFrame({"weight": [1.0, 2.0]}).select(st.exprs()).to_dicts()
    [{'demo.n': 3.0}]
    >>> parts = pl.DataFrame({"seg": ["a", "a", "b"], "demo.n": [3.0, 1.0, 2.0]})
    >>> st.combine(parts, ["seg"]).sort("seg").rows()  # type: ignore[operator]
    [('a', 4.0), ('b', 2.0)]
    """

    def build() -> list[pl.Expr]:
        return [e.sum().cast(pl.Float64).alias(f"{key}.{n}") for n, e in exprs().items()]

    return AggStat(key, build, _add_parts)


def _add_parts(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Partial sums of several parts (rows of ``df``, grouped by the segment ``keys``) add up.

    The expressions are built only when the engine runs them: declaring the statistic (which
    the engine does per segment to find each metric's keys) stays cheap.
    """
    return combine_columns(df, keys, {c: "sum" for c in df.columns if c not in keys})


def sum_table(key: str, by: Callable[[], Mapping[str, pl.Expr]],
              sums: Callable[[], Mapping[str, pl.Expr]]) -> FrameStat:
    """A :class:`FrameStat`: sums of row-level expressions per value of ``by`` expressions.

    For a metric over a few groups of rows (score bins, deciles, the label's classes): one
    ``group_by`` instead of one masked sum per group. The value function gets, for its segment,
    a small DataFrame with the ``by`` columns and the sums; parts combine by adding per ``by``
    value.

    >>> st = sum_table("bins", lambda: {"bin": (pl.col("score") * 2).floor()},
    ...                lambda: {"n": pl.col("weight")})
    >>> lf = pl.LazyFrame({"score": [0.1, 0.2, 0.7], "weight": [1.0, 1.0, 2.0]})
    >>> st.build(lf, []).sort("bin").collect().rows()
    [(0.0, 2.0), (1.0, 2.0)]
    """
    def build(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        groups = [e.alias(n) for n, e in by().items()]
        return lf.group_by([*keys, *groups]).agg(
            [e.sum().cast(pl.Float64).alias(n) for n, e in sums().items()])

    def combine(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        return sum_by(df, keys, list(by()))

    return FrameStat(key, build, combine)


def sums_of(stats: StatValues, key: str) -> dict[str, float]:
    """The sums of a :func:`sum_stat` by short name (``0.0`` for an empty sum).

    >>> sums_of({"demo": {"demo.n": 3.0, "demo.x": None}}, "demo")
    {'n': 3.0, 'x': 0.0}
    """
    prefix = key + "."
    return {k.removeprefix(prefix): float(v) if v is not None else 0.0
            for k, v in stats[key].items()}


def _stable(params: Params, names: Sequence[str]) -> str:
    parts = [f"{n}={params[n]!r}" for n in sorted(names) if n in params]
    return "[" + ",".join(parts) + "]" if parts else ""


def sum_metric(
    name: str,
    family: str,
    *,
    summary: str,
    formula: str,
    direction: Direction,
    needs: Sequence[frozenset[str]] | Sequence[str | Iterable[str]],
    sums: RowExprs,
    value: SumsValue,
    params: Sequence[Param] = (),
    stat_params: Sequence[str] | None = None,
    conventions: str = "",
    peer: str = "",
    aliases: Sequence[str] = (),
    cutoff: str | None = None,
    range: tuple[float | None, float | None] = (None, None),
    checks: Sequence[Check] = (),
    example: str = "",
) -> Metric:
    """Declare a metric that is a function of weighted sums over the aligned rows.

    ``sums(params, ctx)`` maps names to row-level expressions (multiply by
    ``pl.col("weight")`` yourself where weights apply); the engine sums them in the run's one
    pass, overall and per segment. ``value(s, params)`` gets the sums by name and returns a
    :class:`MetricValue`, a float, or ``None`` (undefined; prefer a MetricValue with a note).
    ``stat_params`` names the parameters the sums depend on (default: all), so that entries
    differing only in other parameters share one statistic. ``example`` is a doctest that
    ``evalcli metrics show NAME`` prints (see :attr:`Metric.example`).
    """
    keyed = [p.name for p in params] if stat_params is None else list(stat_params)
    base = f"{family}.{name}"

    def key(p: Params) -> str:
        return base + _stable(p, keyed)

    def stats(p: Params, ctx: Context) -> list[Stat]:
        return [sum_stat(key(p), lambda: sums(p, ctx))]

    def compute(s: StatValues, p: Params) -> MetricValue:
        out = value(sums_of(s, key(p)), p)
        if isinstance(out, MetricValue):
            return out
        if out is None:
            return MetricValue(None, notes=["undefined for these rows"])
        return MetricValue(float(out))

    return Metric(
        name=name, family=family, summary=summary, formula=formula, direction=direction,
        needs=_needs(needs), stats=stats, value=compute, params=tuple(params),
        conventions=conventions, peer=peer, aliases=tuple(aliases), cutoff=cutoff,
        range=range, checks=tuple(checks), example=example,
    )


def _needs(given: Sequence[Any]) -> tuple[frozenset[str], ...]:
    return tuple(g if isinstance(g, frozenset) else needs(g)[0] for g in given)


def mean_metric(
    name: str,
    family: str,
    *,
    summary: str,
    formula: str,
    direction: Direction,
    needs: Sequence[frozenset[str]] | Sequence[str | Iterable[str]],
    row: Callable[[Params, Context], pl.Expr],
    where: Callable[[Params, Context], pl.Expr] | None = None,
    params: Sequence[Param] = (),
    stat_params: Sequence[str] | None = None,
    conventions: str = "",
    peer: str = "",
    aliases: Sequence[str] = (),
    range: tuple[float | None, float | None] = (None, None),
    checks: Sequence[Check] = (),
    example: str = "",
) -> Metric:
    """Declare the weighted mean of a row-level expression: ``Σ w·x / Σ w``.

    ``where(params, ctx)``, if given, restricts the mean to the rows where it is true. With no
    rows (or zero total weight) the value is undefined (``None``, with a note).
    """

    def sums(p: Params, ctx: Context) -> dict[str, pl.Expr]:
        w = pl.col("weight")
        if where is not None:
            w = w * where(p, ctx).cast(pl.Float64)
        return {"x": w * row(p, ctx).cast(pl.Float64), "w": w}

    def value(s: dict[str, float], p: Params) -> MetricValue:
        mean = safe_div(s["x"], s["w"])
        if mean is None:
            return MetricValue(None, notes=["no rows (or zero total weight)"
                                            + (" where the condition holds" if where else "")])
        return MetricValue(mean, details={"total_weight": s["w"]})

    return sum_metric(
        name, family, summary=summary, formula=formula, direction=direction, needs=needs,
        sums=sums, value=value, params=params, stat_params=stat_params,
        conventions=conventions or "Weighted by the weight column.", peer=peer,
        aliases=aliases, range=range, checks=checks, example=example,
    )
