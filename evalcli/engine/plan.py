"""Planning a run: resolve metric entries against the registry, before any data is read.

The plan knows each metric's declaration, validated parameters, stable id and gate. Binding the
plan to the columns a run actually has (``bind``) yields the statistics to compute; metrics
asking for the same statistic share it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from evalcli.config import MetricEntry
from evalcli.errors import ConfigError, MetricError, clip
from evalcli.metrics.base import Context, Metric, Stat, metric_id
from evalcli.metrics.registry import Registry
from evalcli.metrics.task import Task
from evalcli.result import Gate


@dataclass
class PlannedMetric:
    metric: Metric
    params: dict[str, Any]
    id: str
    gate: Gate | None = None


@dataclass(frozen=True)
class Resampling:
    """How a run computes confidence intervals (the config's ``uncertainty:``), and the other
    levels its confident gates decide at (``extra_levels``)."""

    level: float = 0.95
    method: str = "auto"
    replicates: int = 1000
    seed: int = 0
    unit: str = "auto"
    groups: int = 1000
    extra_levels: tuple[float, ...] = ()
    stats: frozenset[str] = frozenset()
    """The keys of the metrics' statistics (what is computed per group: not the statistics
    a report adds, such as curve points), set when the run binds them."""


@dataclass
class Plan:
    task: Task
    metrics: list[PlannedMetric]
    options: dict[str, Any]
    defaulted: bool = False
    """True when the config listed no metrics and the task's applicable set was chosen."""
    resampling: Resampling | None = None
    """Confidence intervals asked for: the pass also computes every statistic per random
    group of units (see :mod:`evalcli.engine.resample`)."""


def resolve_options(task: Task, given: Mapping[str, Any]) -> dict[str, Any]:
    known = {p.name: p for p in task.options}
    out: dict[str, Any] = {}
    for key, value in given.items():
        if key not in known:
            from evalcli.errors import did_you_mean

            raise ConfigError(
                f"unknown option '{key}' for task {task.name}.{did_you_mean(key, known)}"
                + (f" Options: {', '.join(known)}." if known else " This task has no options.")
            )
        out[key] = known[key].check(value, f"options.{key}")
    for p in task.options:
        out.setdefault(p.name, p.default)
    return out


LARGEST_CUTOFF = 2**53
"""The largest cut-off (exact as a float, and k + 1 within 64 bits)."""


def plan_metric(metric: Metric, entry: MetricEntry, where: str,
                preset: Mapping[str, Any] | None = None) -> PlannedMetric:
    """The metric of ``entry`` with its parameters resolved; ``preset`` holds the parameters
    that the entry's name sets (a peer name: ``micro_precision`` sets ``average: micro``),
    which the entry may repeat but not contradict."""
    given = dict(entry.params)
    for key, (in_id, as_key) in entry.both_ways.items():
        if any(p.name == key for p in metric.params) and \
                metric.param(key).check(in_id, where) != metric.param(key).check(as_key, where):
            raise MetricError(
                f"{where}: '{entry.metric}[{key}={clip(str(in_id), 60)}]' and {key}="
                f"{clip(str(as_key), 60)} disagree",
                hint=f"give {key} once, in the id or as a key")
    for key, value in (preset or {}).items():
        if key in given and metric.param(key).check(given[key], where) != value:
            raise MetricError(
                f"{where}: '{entry.metric}' is {metric.name}[{key}={value}]; "
                f"{key}={clip(str(given[key]), 60)} disagrees",
                hint=f"write {metric.name} with the {key} you mean, or drop '{key}'")
        given[key] = value
    cutoff = given.pop("@", None)
    if cutoff is not None:
        if metric.cutoff is None:
            raise MetricError(f"{where}: metric '{metric.name}' takes no @k cut-off",
                              hint=f"write '{metric.name}' without '@{cutoff}'")
        if metric.cutoff in given and given[metric.cutoff] != cutoff:
            raise MetricError(f"{where}: '{metric.name}@{cutoff}' and {metric.cutoff}="
                              f"{given[metric.cutoff]} disagree")
        given[metric.cutoff] = cutoff
    params = metric.resolve(given, where)
    k = params.get(metric.cutoff) if metric.cutoff is not None else None
    if isinstance(k, int | float) and not isinstance(k, bool) and abs(k) > LARGEST_CUTOFF:
        # (a cut-off enters the queries' 64-bit arithmetic, k + 1 included)
        raise MetricError(f"{where}: the cut-off {metric.cutoff}={clip(str(k), 40)} is beyond "
                          f"2^53 ({LARGEST_CUTOFF:,})", hint="a cut-off beyond every list is "
                          "the whole list: leave it out, or write a smaller one")
    gate = None
    if entry.min is not None or entry.max is not None:
        if entry.min is not None and entry.max is not None and entry.min > entry.max:
            raise ConfigError(f"{where}: gate min {entry.min} is above max {entry.max}")
        gate = Gate(min=entry.min, max=entry.max, confidence=entry.confidence,
                    require_confidence=entry.require_confidence)
    return PlannedMetric(metric, params, metric_id(metric, params), gate)


def make_plan(registry: Registry, task_name: str, entries: Iterable[MetricEntry],
              options: Mapping[str, Any]) -> Plan:
    """Resolve names, parameters and gates. Raises a UserError on the first problem."""
    task = registry.task(task_name)
    opts = resolve_options(task, options)
    planned: list[PlannedMetric] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        where = f"metrics[{i}] ({entry.metric})"
        metric, preset = registry.resolve(task.name, entry.metric)
        pm = plan_metric(metric, entry, where, preset)
        if pm.id in seen:
            raise ConfigError(f"{where}: metric id '{pm.id}' is listed twice "
                              f"(also metrics[{seen[pm.id]}])",
                              hint="give it once; put both gates on one entry")
        seen[pm.id] = i
        planned.append(pm)
    if task.join_for is not None:
        task = dataclasses.replace(task, join=task.join_for(opts))
    return Plan(task, planned, opts, defaulted=not planned)


def default_metrics(registry: Registry, plan: Plan, roles: frozenset[str]) -> None:
    """Fill an empty plan with every metric of the task that the available columns allow."""
    if plan.metrics:
        return
    for metric in sorted((m for m in registry if m.family == plan.task.name),
                         key=lambda m: list(registry.metrics.values()).index(m)):
        if metric.missing_roles(roles) or not metric.in_default_set:
            continue
        if any(p.default is None and not p.nullable for p in metric.params):
            continue
        params = metric.resolve({})
        plan.metrics.append(PlannedMetric(metric, params, metric_id(metric, params)))


def check_roles(plan: Plan, roles: frozenset[str], columns: Mapping[str, str]) -> None:
    for pm in plan.metrics:
        missing = pm.metric.missing_roles(roles)
        if missing:
            raise MetricError(
                f"metric '{pm.id}' needs a {' and a '.join(missing)} column, and the inputs "
                f"have none (found: {', '.join(f'{r}={c}' for r, c in columns.items())})",
                hint="name the column under 'columns:' (or --score/--prediction), or drop "
                "the metric",
            )


def bind(plan: Plan, ctx: Context) -> dict[str, Stat]:
    """Every distinct statistic the plan's metrics need, by key."""
    stats: dict[str, Stat] = {}
    for pm in plan.metrics:
        for st in pm.metric.stats(pm.params, ctx):
            stats.setdefault(st.key, st)
    return stats
