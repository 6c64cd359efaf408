"""The metric registry: built-ins and plugins register through the same door.

Built-in family modules and third-party plugins are both *metric modules*: a module with a
``METRICS`` sequence of :class:`~evalcli.metrics.base.Metric` (and optionally ``TASKS``). The
built-ins are loaded by module name, plugins through the ``evalcli.metrics`` entry-point group
or a path named in the config. A name (or alias) that is already taken is refused, naming both
sources; a plugin that fails to import is recorded with its error, so that a config that uses
one of its metrics stops instead of passing a gate on a metric that vanished.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from evalcli.errors import MetricError, PluginError, did_you_mean
from evalcli.metrics.base import Metric
from evalcli.metrics.task import Task

BUILTIN_MODULES = (
    "evalcli.metrics.binary",
    "evalcli.metrics.regression",
)
ENTRY_POINT_GROUP = "evalcli.metrics"


@dataclass
class BrokenPlugin:
    """A plugin that could not be loaded, and why."""

    name: str
    error: str


@dataclass
class Registry:
    """Metrics and tasks by name, with where each came from."""

    metrics: dict[str, Metric] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)
    broken: list[BrokenPlugin] = field(default_factory=list)

    def register(self, metric: Metric, origin: str = "built-in") -> None:
        """Add a metric; refuse a name or alias that another metric holds."""
        metric = replace(metric, origin=origin)
        key = (metric.family, metric.name)
        for name in (metric.name, *metric.aliases):
            holder = self._holder(metric.family, name)
            if holder is not None:
                raise PluginError(
                    f"metric name '{name}' ({metric.family}) from {origin} collides with "
                    f"'{holder.name}' from {holder.origin}",
                    hint="rename the plugin's metric; names are unique within a family",
                )
        self.metrics[self._k(*key)] = metric
        for alias in metric.aliases:
            self.aliases[self._k(metric.family, alias)] = metric.name

    def register_task(self, task: Task, origin: str = "built-in") -> None:
        if task.name in self.tasks:
            raise PluginError(f"task '{task.name}' from {origin} is already registered")
        self.tasks[task.name] = task

    @staticmethod
    def _k(family: str, name: str) -> str:
        return f"{family}/{name}"

    def _holder(self, family: str, name: str) -> Metric | None:
        k = self._k(family, name)
        if k in self.metrics:
            return self.metrics[k]
        if k in self.aliases:
            return self.metrics[self._k(family, self.aliases[k])]
        return None

    def get(self, family: str, name: str) -> Metric:
        """The metric ``name`` (or alias) of ``family``; a did-you-mean error otherwise."""
        m = self._holder(family, name.lower())
        if m is not None:
            return m
        names = self.names(family)
        broken = ""
        if self.broken:
            broken = " Plugins that failed to load: " + "; ".join(
                f"{b.name} ({b.error})" for b in self.broken
            )
        elsewhere = [x.family for x in self.metrics.values() if x.name == name.lower()]
        where = f" It is a {', '.join(elsewhere)} metric." if elsewhere else ""
        raise MetricError(
            f"unknown {family} metric '{name}'.{did_you_mean(name.lower(), names)}{where}{broken}",
            hint=f"run 'evalcli metrics --family {family}' to list them",
        )

    def task(self, name: str) -> Task:
        if name not in self.tasks:
            raise MetricError(
                f"unknown task '{name}'.{did_you_mean(name, self.tasks)}",
                hint=f"choose one of: {', '.join(sorted(self.tasks))}",
            )
        return self.tasks[name]

    def names(self, family: str | None = None) -> list[str]:
        out = [m.name for m in self.metrics.values() if family in (None, m.family)]
        out += [k.split("/", 1)[1] for k in self.aliases if family in (None, k.split("/")[0])]
        return sorted(out)

    def __iter__(self) -> Iterator[Metric]:
        return iter(self.metrics.values())

    def load_module(self, module: ModuleType, origin: str) -> None:
        """Register a metric module's ``TASKS`` and ``METRICS``."""
        for task in getattr(module, "TASKS", ()):
            self.register_task(task, origin)
        metrics = getattr(module, "METRICS", None)
        if metrics is None:
            raise PluginError(f"{origin} defines no METRICS list")
        for metric in metrics:
            if not isinstance(metric, Metric):
                raise PluginError(f"{origin}: METRICS holds {metric!r}, not an evalcli Metric")
            self.register(metric, origin)


def _entry_points() -> Iterable[Any]:
    from importlib.metadata import entry_points

    return entry_points(group=ENTRY_POINT_GROUP)


def load_plugin_path(registry: Registry, path: Path) -> None:
    """Import a local Python file named in a config and register its metrics."""
    origin = f"plugin file {path}"
    if not path.is_file():
        raise PluginError(f"plugin file {path} does not exist", hint="fix the path under 'plugins:'")
    name = f"evalcli_local_plugin_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise PluginError(
            f"{origin} failed to import: {type(exc).__name__}: {exc}",
            hint="fix the plugin, or remove it from 'plugins:'",
        ) from exc
    registry.load_module(module, origin)


_REGISTRY: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry: built-ins, then entry-point plugins (isolated)."""
    global _REGISTRY
    if _REGISTRY is None:
        reg = Registry()
        for mod in BUILTIN_MODULES:
            reg.load_module(importlib.import_module(mod), "built-in")
        for ep in _entry_points():
            origin = f"plugin '{ep.name}' ({ep.value})"
            try:
                obj = ep.load()
            except Exception as exc:
                reg.broken.append(BrokenPlugin(ep.name, f"{type(exc).__name__}: {exc}"))
                continue
            if isinstance(obj, ModuleType):
                reg.load_module(obj, origin)
            else:
                items = obj() if callable(obj) and not isinstance(obj, Metric) else obj
                for m in [items] if isinstance(items, Metric) else list(items):
                    reg.register(m, origin)
        _REGISTRY = reg
    return _REGISTRY


def reset_registry() -> None:
    """Forget the loaded registry (tests install plugins and reload)."""
    global _REGISTRY
    _REGISTRY = None
