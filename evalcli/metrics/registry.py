"""The metric registry: built-ins and plugins register through the same door.

Built-in family modules and third-party plugins are both *metric modules*: a module with a
``METRICS`` sequence of :class:`~evalcli.metrics.base.Metric` (and optionally ``TASKS``). The
built-ins are loaded by module name, plugins through the ``evalcli.metrics`` entry-point group
or a path named in the config (``plugins:``), which means evalcli *runs* that file's code.

Loading is isolated and strict, so that a CI gate never passes because a metric vanished:

- an installed plugin that fails to import (or declares something that is not a valid metric)
  is recorded as :class:`BrokenPlugin` with its name and error, and the other plugins load. A
  run that asks for one of the missing metrics stops with a :class:`~evalcli.errors.MetricError`
  naming the broken plugin (exit 2); a run that does not is warned (:class:`PluginWarning`);
- a plugin file named in a config that fails is an error: the config asked for it;
- a name (or alias) already taken in a family is refused, naming both sources; loading the
  registry then fails with a :class:`~evalcli.errors.PluginError` (exit 2). A module's metrics
  register all or nothing;
- a plugin's ``stats`` and ``value`` functions run behind a guard that turns an exception into a
  :class:`~evalcli.errors.PluginError` naming the metric and its plugin.

A metric is found by its name, an alias, or a *peer name* derived from its declaration: a
metric with an ``average`` choice answers to ``micro_precision`` and ``precision_micro`` (see
:data:`PEER_PARAMS`), which stand for ``precision[average=micro]``; a suggestion for a misspelt
name shows that full form.

A plugin file named in a config runs whatever its path (outside the config's folder, or
absolute, too), but never silently: :func:`on_plugin_file` tells the caller (the CLI prints
"running plugin code: PATH" on stderr) just before each file's code runs, and
:attr:`Registry.files` lists the files that ran into a registry.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.util
import numbers
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from evalcli.errors import MetricError, PluginError, UserError, clip, did_you_mean
from evalcli.metrics.base import AggStat, FrameStat, Metric, MetricValue, Param, Stat
from evalcli.metrics.task import Task

BUILTIN_MODULES = (
    "evalcli.metrics.binary",
    "evalcli.metrics.multiclass",
    "evalcli.metrics.multilabel",
    "evalcli.metrics.regression",
    "evalcli.metrics.ranking",
)
"""The built-in families: packages whose ``METRICS`` and ``TASKS`` register as a plugin's do."""
ENTRY_POINT_GROUP = "evalcli.metrics"
BUILTIN = "built-in"
NAME_RE = re.compile(r"[0-9]*[a-z_][a-z0-9_\-]*")
"""Metric names and aliases: lower case, as ``parse_metric_id`` reads them from a config;
leading digits are allowed (trec_eval's ``11pt_avg``)."""
TREC_CUTOFF = re.compile(r"([a-z_][a-z0-9_]*?)[._]([0-9]+)")
"""trec_eval's form of a measure at a cut-off (``P_5``, ``ndcg_cut.10``): a name (or alias)
that takes a cut-off, then ``_`` or ``.`` and the cut-off."""
TREC_LEVEL = re.compile(r"([a-z_][a-z0-9_]*?)[._]([0-9]*\.[0-9]+)")
"""trec_eval's form of a measure at a level (``iprec_at_recall_0.10``, ``Rprec_mult_0.20``): a
name (or alias) with one of the :data:`LEVEL_PARAMS`, then ``_`` or ``.`` and the level."""
LEVEL_PARAMS = ("recall", "mult")
"""Float parameters whose value trec_eval writes after the measure's name: the level of
:data:`TREC_LEVEL` sets the metric's parameter of these names."""
PEER_PARAMS = ("average",)
"""Parameters whose values name variants of a metric in the peers' vocabulary: each value ``v``
of a metric ``m``'s choice gives the peer names ``v_m`` (Spark MLlib's microPrecision,
weightedRecall: ``micro_precision``, ``weighted_recall``) and ``m_v`` (scikit-learn's scorer
names: ``precision_micro``, ``f1_macro``), each meaning ``m[average=v]``."""


@dataclass(frozen=True)
class PeerName:
    """A name that stands for a metric with parameters: ``micro_precision`` is
    ``precision[average=micro]``."""

    name: str
    metric: str
    params: tuple[tuple[str, Any], ...]

    def full(self) -> str:
        """The metric with its parameters, as a config writes it.

        >>> PeerName("micro_f1", "f1", (("average", "micro"),)).full()
        'f1[average=micro]'
        """
        return f"{self.metric}[{','.join(f'{k}={v}' for k, v in self.params)}]"


class PluginWarning(UserWarning):
    """An installed plugin failed to load, and the run does not use its metrics."""


class CollisionError(PluginError):
    """A metric name, alias or task name is already taken; the message names both sources."""


@dataclass(frozen=True)
class BrokenPlugin:
    """A plugin that could not be loaded, and why."""

    name: str
    error: str
    origin: str = ""
    """Where it came from, e.g. ``plugin 'example' (evalcli-plugin-example 0.1.0)``."""

    def describe(self) -> str:
        """E.g. ``plugin 'x' (x-dist 1.0) failed to load: ImportError: ...``."""
        return f"{self.origin or f'plugin {self.name!r}'} failed to load: {self.error}"


def _exc(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {clip(text[0])}" if text else type(exc).__name__


def _r(obj: object) -> str:
    """A plugin's object or a config's value as a message echoes it: its repr, clipped."""
    return clip(repr(obj), 120)


T = TypeVar("T")


def _guarded(fn: Callable[..., T], metric: str, origin: str, what: str) -> Callable[..., T]:
    """``fn`` with exceptions turned into a PluginError naming the metric and its plugin."""

    def call(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except UserError:
            raise
        except Exception as exc:
            raise PluginError(
                f"metric '{metric}' from {origin} failed in its {what} function: {_exc(exc)}",
                hint="this is a bug in the plugin: report it to its authors, or drop the metric",
            ) from exc

    call.__doc__ = fn.__doc__
    return call


def _check_param(p: object, where: str) -> Param:
    if not isinstance(p, Param):
        raise PluginError(f"{where}: params holds {_r(p)}, not an evalcli Param")
    if p.default is not None:
        try:
            p.check(p.default, where)
        except MetricError as exc:
            raise PluginError(f"{where}: the default of parameter '{p.name}' is invalid: "
                              f"{exc.message}") from None
    return p


def check_declaration(metric: Metric, families: Iterable[str], origin: str) -> None:
    """Refuse a declaration the engine could not run, with a message naming the plugin.

    >>> from evalcli.metrics.base import Metric, MetricValue
    >>> m = Metric("ECE", "binary", "", "", "higher", (), lambda p, c: [],
    ...            lambda s, p: MetricValue(None))
    >>> try:
    ...     check_declaration(m, ["binary"], "plugin file my.py")
    ... except PluginError as exc:
    ...     print(exc.message[:50])
    plugin file my.py: metric name 'ECE' is not valid:
    """
    where = f"{origin}: metric '{metric.name}'"
    for name in (metric.name, *metric.aliases):
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise PluginError(
                f"{origin}: metric name {_r(name)} is not valid: use lower-case letters, digits, "
                "'_' and '-', starting with a letter or '_' (after any digits)")
    fams = sorted(families)
    if metric.family not in fams:
        raise PluginError(f"{where} declares family {_r(metric.family)}, which no task "
                          f"provides.{did_you_mean(str(metric.family), fams)} Tasks: "
                          f"{clip(', '.join(fams))}.")
    if metric.direction not in ("higher", "lower"):
        raise PluginError(f"{where}: direction must be 'higher' or 'lower', "
                          f"got {_r(metric.direction)}")
    if not callable(metric.stats) or not callable(metric.value):
        raise PluginError(f"{where}: stats and value must be functions")
    for group in metric.needs:
        if not isinstance(group, frozenset) or not group:
            raise PluginError(f"{where}: needs must hold non-empty frozensets of role names "
                              f"(alternatives), got {_r(group)}")
    names = [_check_param(p, where).name for p in metric.params]
    if len(set(names)) != len(names):
        raise PluginError(f"{where}: a parameter name is declared twice "
                          f"({clip(', '.join(names))})")
    if metric.cutoff is not None and metric.cutoff not in names:
        raise PluginError(f"{where}: cutoff '{metric.cutoff}' is not one of its parameters")


@dataclass
class Registry:
    """Metrics and tasks by name, with where each came from."""

    metrics: dict[str, Metric] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)
    broken: list[BrokenPlugin] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    """Plugin files whose code ran into this registry, resolved, in the order they ran (see
    :meth:`with_plugin_files`)."""
    task_origins: dict[str, str] = field(default_factory=dict)

    def register(self, metric: Metric, origin: str = BUILTIN) -> None:
        """Add a metric; refuse a name or alias that another metric holds."""
        self.register_all([metric], origin)

    def register_all(self, metrics: Sequence[Metric], origin: str,
                     tasks: Sequence[Task] = ()) -> None:
        """Add tasks and metrics from one source: all of them, or none and a PluginError."""
        taken: dict[str, str] = {}
        for task in tasks:
            if not isinstance(task, Task):
                raise PluginError(f"{origin}: TASKS holds {_r(task)}, not an evalcli Task")
            if task.name in self.tasks or task.name in taken:
                first = self.task_origins.get(task.name, origin)
                raise CollisionError(f"task '{task.name}' from {origin} collides with task "
                                     f"'{task.name}' from {first}",
                                     hint="uninstall or fix one of the two; task names are unique")
            taken[task.name] = task.name
        families = [*self.tasks, *taken]
        new: dict[str, Metric] = {}
        new_aliases: dict[str, str] = {}
        for metric in metrics:
            if not isinstance(metric, Metric):
                raise PluginError(f"{origin}: METRICS holds {_r(metric)}, not an evalcli "
                                  "Metric")
            check_declaration(metric, families, origin)
            for name in (metric.name, *metric.aliases):
                k = self._k(metric.family, name)
                holder = self._holder(metric.family, name)
                other = holder.origin if holder is not None else None
                if holder is None and (k in new or k in new_aliases):
                    holder = new.get(k) or new[new_aliases[k]]
                    other = origin
                if holder is not None:
                    raise CollisionError(
                        f"metric name '{name}' ({metric.family}) from {origin} collides with "
                        f"'{holder.name}' from {other}",
                        hint="uninstall or fix one of the two; metric names and aliases are "
                        "unique within a family",
                    )
            key = self._k(metric.family, metric.name)
            if origin != BUILTIN:
                metric = replace(
                    metric,
                    stats=_guarded(_as_stats(metric.stats), metric.name, origin, "stats"),
                    value=_guarded(_as_metric_value(metric.value), metric.name, origin, "value"),
                )
            new[key] = replace(metric, origin=origin)
            for alias in metric.aliases:
                new_aliases[self._k(metric.family, alias)] = key
        for task in tasks:
            self.tasks[task.name] = task
            self.task_origins[task.name] = origin
        self.metrics.update(new)
        for alias_key, key in new_aliases.items():
            self.aliases[alias_key] = new[key].name

    def register_task(self, task: Task, origin: str = BUILTIN) -> None:
        self.register_all([], origin, [task])

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

    def peer_names(self, family: str) -> dict[str, PeerName]:
        """The peer names of the family's metrics (see :data:`PEER_PARAMS`), derived from their
        declarations, built-in and plugin alike. A name that a metric or an alias holds is
        that metric's, never a peer name."""
        out: dict[str, PeerName] = {}
        for m in self.metrics.values():
            if m.family != family:
                continue
            for p in m.params:
                if p.name not in PEER_PARAMS or not p.choices:
                    continue
                for choice in p.choices:
                    for name in (f"{choice}_{m.name}", f"{m.name}_{choice}"):
                        if NAME_RE.fullmatch(name) and name not in out \
                                and self._holder(family, name) is None:
                            out[name] = PeerName(name, m.name, ((p.name, choice),))
        return out

    def resolve(self, family: str, name: str) -> tuple[Metric, dict[str, Any]]:
        """The metric that ``name`` (a name, an alias or a peer name) stands for, and the
        parameters the name sets (``micro_precision``: ``{"average": "micro"}``); an error
        with a did-you-mean suggestion otherwise (see :meth:`get`)."""
        m = self._holder(family, name.lower())
        if m is not None:
            return m, {}
        peer = self.peer_names(family).get(name.lower())
        if peer is not None:
            return self.metrics[self._k(family, peer.metric)], dict(peer.params)
        # trec_eval's names of a measure at a cut-off: P_5, P.5, ndcg_cut_10, success.1
        cut = TREC_CUTOFF.fullmatch(name.lower())
        if cut is not None:
            m = self._holder(family, cut[1])
            if m is not None and m.cutoff is not None:
                return m, {m.cutoff: int(cut[2])}
        # trec_eval's names of a measure at a level: iprec_at_recall_0.10, Rprec_mult.0.2
        level = TREC_LEVEL.fullmatch(name.lower())
        if level is not None:
            m = self._holder(family, level[1])
            names = [p.name for p in m.params if p.name in LEVEL_PARAMS] if m else []
            if m is not None and len(names) == 1:
                return m, {names[0]: float(level[2])}
        raise self._unknown(family, name)

    def get(self, family: str, name: str) -> Metric:
        """The metric ``name`` (or alias, or peer name) of ``family``; a did-you-mean error
        otherwise.

        When a plugin failed to load, the error says so: the metric may be one of its.
        """
        return self.resolve(family, name)[0]

    def suggest(self, word: str, family: str | None = None) -> str:
        """``" Did you mean 'x'?"`` for the metric name, alias or peer name closest to
        ``word`` (in ``family``, or any), a peer name shown as what it means
        (``'precision[average=micro]'``); or ``""``."""
        if len(word) > 200:  # nothing that long is a typo of a name (as did_you_mean)
            return ""
        families = [family] if family is not None else sorted(self.tasks)
        peers = {n: p.full() for f in families for n, p in self.peer_names(f).items()}
        close = difflib.get_close_matches(word.lower(), [*self.names(family), *peers], n=1,
                                          cutoff=0.6)
        return f" Did you mean '{peers.get(close[0], close[0])}'?" if close else ""

    def _unknown(self, family: str, name: str) -> MetricError:
        low = name.lower()
        for m in self.metrics.values():
            instead = dict(m.retired).get(low) if m.family == family else None
            if instead is not None:
                return MetricError(
                    f"'{clip(name)}' is no longer an alias of {family} metric '{m.name}': "
                    f"{instead}",
                    hint=f"run 'evalcli metrics show {m.name}' for its parameters")
        elsewhere = [x.family for x in self.metrics.values() if x.name == low]
        where = f" It is a {', '.join(elsewhere)} metric." if elsewhere else ""
        if not elsewhere:
            peers = {f: p for f in sorted(self.tasks) if f != family
                     and (p := self.peer_names(f).get(low)) is not None}
            if peers:
                full = next(iter(peers.values())).full()
                where = f" {full} is a {' and '.join(peers)} metric."
        said = f"unknown {family} metric '{clip(name)}'.{self.suggest(name, family)}"
        if self.broken:
            return MetricError(
                f"{said}{where} "
                "An installed plugin failed to load, "
                "and it may be one of its metrics: " + "; ".join(b.describe() for b in self.broken),
                hint="fix or reinstall the plugin (evalcli metrics lists what loaded), or "
                "remove the metric from the config",
            )
        return MetricError(
            f"{said}{where}",
            hint=f"run 'evalcli metrics --family {family}' to list them",
        )

    def task(self, name: str) -> Task:
        if name not in self.tasks:
            raise MetricError(
                f"unknown task '{clip(name)}'.{did_you_mean(name, self.tasks)}",
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
        """Register a metric module's ``TASKS`` and ``METRICS`` (all or nothing)."""
        metrics = getattr(module, "METRICS", None)
        if metrics is None:
            raise PluginError(f"{origin} defines no METRICS list",
                              hint="a metric module has METRICS = [Metric(...), ...]")
        tasks = getattr(module, "TASKS", ())
        if isinstance(metrics, Metric) or not isinstance(metrics, Iterable):
            raise PluginError(f"{origin}: METRICS must be a list of Metric, got {_r(metrics)}")
        self.register_all(list(metrics), origin, list(tasks))

    def copy(self) -> Registry:
        return Registry(dict(self.metrics), dict(self.aliases), dict(self.tasks),
                        list(self.broken), list(self.files), dict(self.task_origins))

    def with_plugin_files(self, paths: Iterable[Path]) -> Registry:
        """This registry plus the metrics of local plugin files (a copy; self is unchanged).

        Each file runs anew, so a notebook sees its edits; a failure is a PluginError. The
        hook of :func:`on_plugin_file`, if any, hears of each file just before it runs.
        """
        paths = [Path(p).resolve() for p in paths]
        if not paths:
            return self
        reg = self.copy()
        for path in dict.fromkeys(paths):
            load_plugin_path(reg, path)
        return reg


def _as_metric_value(fn: Callable[..., Any]) -> Callable[..., MetricValue]:
    """Accept a plain number from a plugin's value function (``None`` gets a note)."""

    def value(*args: Any) -> MetricValue:
        out = fn(*args)
        if isinstance(out, MetricValue):
            v = out.value
            if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
                raise TypeError(f"value returned a MetricValue of {_r(v)}, not of a number")
            if isinstance(out.notes, str) or not isinstance(out.notes, list):
                raise TypeError(f"value returned notes={_r(out.notes)}, not a list of texts")
            if out.caption is not None and not isinstance(out.caption, str):
                raise TypeError(f"value returned caption={_r(out.caption)}, not a text")
            return out if v is None or type(v) is float else replace(out, value=float(v))
        if out is None:
            return MetricValue(None, notes=["undefined for these statistics"])
        if isinstance(out, bool) or not isinstance(out, numbers.Real):
            raise TypeError(f"value returned {_r(out)}, not a MetricValue or a number")
        return MetricValue(float(out))

    return value


def _as_stats(fn: Callable[..., Any]) -> Callable[..., list[Stat]]:
    """Check that a plugin's stats function returns AggStat/FrameStat objects."""

    def stats(*args: Any) -> list[Stat]:
        out = list(fn(*args))
        for st in out:
            if not isinstance(st, AggStat | FrameStat):
                raise TypeError(f"stats returned {_r(st)}, not an AggStat or a FrameStat")
        return out

    return stats


def _entry_points() -> Iterable[Any]:
    from importlib.metadata import entry_points

    return entry_points(group=ENTRY_POINT_GROUP)


def _ep_origin(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    pkg = f"{dist.name} {dist.version}" if dist is not None else ep.value
    return f"plugin '{ep.name}' ({pkg})"


def _metrics_of(obj: Any, origin: str) -> tuple[list[Metric], list[Task]]:
    """What an entry point names: a metric module, a list of metrics, a metric, or a function
    returning one of those."""
    if isinstance(obj, ModuleType):
        metrics = getattr(obj, "METRICS", None)
        if metrics is None:
            raise PluginError(f"{origin} defines no METRICS list")
        return list(metrics), list(getattr(obj, "TASKS", ()))
    if callable(obj) and not isinstance(obj, Metric):
        obj = obj()
    if isinstance(obj, Metric):
        return [obj], []
    if isinstance(obj, Iterable) and not isinstance(obj, str | bytes):
        return list(obj), []
    raise PluginError(f"{origin} points at {_r(obj)}, not a module, a Metric or a list of "
                      "them")


def load_entry_point(registry: Registry, ep: Any) -> None:
    """Import one installed plugin and register it; record it as broken if that fails.

    A name collision is not recorded but raised: it is an error whether or not the run uses
    the metric (which of the two would it get?).
    """
    origin = _ep_origin(ep)
    try:
        obj = ep.load()
        metrics, tasks = _metrics_of(obj, origin)
        registry.register_all(metrics, origin, tasks)
    except CollisionError:
        raise
    except PluginError as exc:
        registry.broken.append(BrokenPlugin(ep.name, exc.message, origin))
    except (Exception, SystemExit) as exc:  # isolation: a plugin cannot end the process
        registry.broken.append(BrokenPlugin(ep.name, _exc(exc), origin))


_PLUGIN_FILE_HOOK: ContextVar[Callable[[Path], None] | None] = ContextVar(
    "evalcli_plugin_file_hook", default=None)


@contextlib.contextmanager
def on_plugin_file(hook: Callable[[Path], None]) -> Iterator[None]:
    """Within the block, call ``hook(path)`` just before a local plugin file's code runs.

    ``path`` is the file's resolved absolute path. The CLI prints "running plugin code: PATH"
    from it, so a config never runs code without saying which (a config may name a plugin
    anywhere, outside its folder or by an absolute path).
    """
    token = _PLUGIN_FILE_HOOK.set(hook)
    try:
        yield
    finally:
        _PLUGIN_FILE_HOOK.reset(token)


def load_plugin_path(registry: Registry, path: Path) -> None:
    """Import a local Python file named in a config and register its metrics."""
    shown = clip(str(path), 300)
    origin = f"plugin file {shown}"
    try:
        exists = path.is_file()
    except OSError as exc:  # a name too long for the system, a permission denied
        raise PluginError(f"cannot read plugin file {shown}: {exc.strerror}",
                          hint="fix the path under 'plugins:'") from None
    if not exists:
        raise PluginError(f"plugin file {shown} does not exist",
                          hint="fix the path under 'plugins:'")
    if path.suffix != ".py":
        raise PluginError(f"plugin file {shown} is not a Python file (.py)",
                          hint="name a .py file under 'plugins:'")
    name = "evalcli_local_plugin_" + re.sub(r"\W", "_", path.stem) + f"_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - .py files always have one
        raise PluginError(f"cannot import {shown} as a Python module")
    module = importlib.util.module_from_spec(spec)
    hook = _PLUGIN_FILE_HOOK.get()
    if hook is not None:
        hook(path)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        raise PluginError(
            f"{origin} failed to import: {_exc(exc)}",
            hint="fix the plugin, or remove it from 'plugins:'",
        ) from None
    registry.load_module(module, origin)
    registry.files.append(path)


def warn_broken(registry: Registry) -> None:
    """Warn (:class:`PluginWarning`) about each installed plugin that failed to load."""
    for b in registry.broken:
        warnings.warn(PluginWarning(f"{b.describe()}; its metrics are not available"),
                      stacklevel=2)


_REGISTRY: Registry | None = None


def builtin_registry() -> Registry:
    """A registry of the built-in families only (no plugins)."""
    reg = Registry()
    for mod in BUILTIN_MODULES:
        reg.load_module(importlib.import_module(mod), BUILTIN)
    return reg


def get_registry() -> Registry:
    """The process-wide registry: built-ins, then installed plugins, each loaded in isolation.

    Raises a PluginError (and stays unloaded, so the next call tries again) when an installed
    plugin's metric name collides with another's.
    """
    global _REGISTRY
    if _REGISTRY is None:
        reg = builtin_registry()
        for ep in sorted(_entry_points(), key=lambda e: (e.name, e.value)):
            load_entry_point(reg, ep)
        _REGISTRY = reg
    return _REGISTRY


def reset_registry() -> None:
    """Forget the loaded registry (tests install plugins and reload)."""
    global _REGISTRY
    _REGISTRY = None
