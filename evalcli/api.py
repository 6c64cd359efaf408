"""The Python API: evaluate from a notebook or a script, get the report object back.

``evaluate`` runs the same path as ``evalcli run`` (config, inputs, one pass, gates) and returns
the :class:`~evalcli.result.RunResult` the CLI renders. It never prints and never exits: bad
input raises a :class:`~evalcli.errors.UserError` subclass (``ConfigError``, ``InputDataError``,
``MetricError``, ``PluginError``) whose message names the problem and the fix; a failed gate is
``result.passed is False`` with the reasons in ``result.failures``. Installed plugins that fail
to load, when the run does not need them, are reported as a
:class:`~evalcli.metrics.registry.PluginWarning` (Python's ``warnings``).

>>> import polars as pl
>>> import evalcli
>>> df = pl.DataFrame({"label": [0, 1, 1, 0, 1], "score": [0.1, 0.8, 0.4, 0.3, 0.9]})
>>> result = evalcli.evaluate(
...     {"task": "binary", "metrics": ["auroc", {"metric": "recall", "min": 0.9}]},
...     predictions=df)
>>> result.metric("auroc").value
1.0
>>> result.values()
{'auroc': 1.0, 'recall': 0.6666666666666666}
>>> result.passed, result.failures
(False, ['recall: 0.666667 is below the minimum 0.9 (gate >= 0.9)'])
>>> result.to_polars().select("id", "value", "passed").rows()
[('auroc', 1.0, None), ('recall', 0.6666666666666666, False)]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from evalcli.config import Config, InputSpec, parse_config
from evalcli.config import load_config as _load_yaml
from evalcli.errors import ConfigError, clip

if TYPE_CHECKING:
    import polars as pl

    from evalcli.metrics.base import Metric
    from evalcli.result import RunResult

__all__ = ["ConfigLike", "InputLike", "evaluate", "list_metrics", "load_config"]

ConfigLike = Union[Config, Mapping[str, Any], str, "os.PathLike[str]"]
"""A config: a :class:`~evalcli.config.Config`, a mapping as in the YAML, or a YAML file path."""
InputLike = Union["pl.DataFrame", "pl.LazyFrame", Mapping[str, Sequence[Any]], str,
                  "os.PathLike[str]"]
"""An input: a Polars DataFrame or LazyFrame, a mapping of column name to values (as
``polars.DataFrame`` takes it: ``{"label": [1, 0], "score": [0.8, 0.3]}``), or a file path
(glob, Parquet directory)."""

_FRAME_NAME = "<{} DataFrame>"


def load_config(config: ConfigLike) -> Config:
    """A validated :class:`~evalcli.config.Config` from a mapping, a YAML path or a Config.

    Relative paths in a mapping resolve against the current directory; in a YAML file, against
    the file's folder.

    >>> load_config({"task": "regression", "predictions": "preds.csv"}).task
    'regression'
    >>> try:
    ...     load_config({"task": "binary", "predictons": "p.csv"})
    ... except ConfigError as exc:
    ...     print("Did you mean 'predictions'?" in exc.message)
    True
    """
    if isinstance(config, Config):
        return config
    if isinstance(config, str | os.PathLike):
        return _load_yaml(Path(config))
    if isinstance(config, Mapping):
        return parse_config(dict(config), "config (mapping)", Path.cwd())
    raise ConfigError(f"config must be a mapping, a YAML file path or an evalcli Config, "
                      f"got {type(config).__name__}")


def _frame(value: object, role: str) -> pl.LazyFrame | None:
    """The LazyFrame for an in-memory input (a frame, or a mapping of columns); ``None`` for a
    path; an error for anything else.

    >>> _frame({"label": [1, 0], "score": [0.8, 0.3]}, "predictions").collect().shape
    (2, 2)
    """
    import polars as pl

    if isinstance(value, pl.LazyFrame):
        return value
    if isinstance(value, pl.DataFrame):
        return value.lazy()
    if isinstance(value, str | os.PathLike):
        return None
    if isinstance(value, Mapping):
        try:
            return pl.DataFrame(dict(value)).lazy()
        except (TypeError, ValueError, pl.exceptions.PolarsError) as exc:
            raise ConfigError(f"{role}= columns do not make a frame: "
                              f"{clip(str(exc).strip().splitlines()[0] if str(exc) else '')}",
                              hint="give each column a list of values, all of one length"
                              ) from None
    kind = f"{type(value).__module__}.{type(value).__name__}"
    fix = "convert it with polars.from_pandas(df)" if "pandas" in kind else \
        "pass a polars DataFrame or LazyFrame, a mapping of columns, or a file path"
    raise ConfigError(f"{role}= must be a Polars DataFrame/LazyFrame or a path, got {kind}",
                      hint=fix)


def evaluate(
    config: ConfigLike,
    *,
    predictions: InputLike | None = None,
    truth: InputLike | None = None,
    gating: bool = True,
) -> RunResult:
    """Evaluate predictions against truth as ``config`` says; return the report object.

    ``config`` is a mapping (the YAML's keys, e.g. ``{"task": "binary", "metrics": [...]}``),
    the path of a YAML file, or a :class:`~evalcli.config.Config`. ``predictions`` and
    ``truth``, when given, replace the config's inputs: a Polars DataFrame or LazyFrame, or a
    mapping of column name to values (the config may then omit ``predictions``), or a path
    relative to the current directory. With a LazyFrame nothing is collected until the run's
    single pass.

    >>> evaluate({"task": "regression", "metrics": ["mae"]},
    ...          predictions={"label": [3.0, 1.0], "prediction": [2.0, 1.0]}).values()
    {'mae': 0.5}

    Gates are evaluated (``result.passed``, ``result.failures``); ``gating=False`` reports
    without failing. Raises a :class:`~evalcli.errors.UserError` subclass on bad input.
    """
    from evalcli.runner import override, run_config

    frames: dict[str, pl.LazyFrame] = {}
    given = {"predictions": predictions, "truth": truth}
    for role, value in given.items():
        if value is not None:
            lf = _frame(value, role)
            if lf is not None:
                frames[role] = lf
    if isinstance(config, Mapping) and "predictions" not in config and predictions is not None:
        config = {**config, "predictions": _FRAME_NAME.format("predictions")}
    cfg = load_config(config)
    if frames and cfg.engine == "spark":
        raise ConfigError("engine: spark reads files or tables, not in-memory Polars frames",
                          hint="pass paths the cluster can read, or use engine: auto")
    update: dict[str, Any] = {}
    for role in frames:
        current = getattr(cfg, role)
        update[role] = InputSpec(path=_FRAME_NAME.format(role)) if current is None else \
            current.model_copy(update={"path": _FRAME_NAME.format(role)})
    if update:
        cfg = cfg.model_copy(update=update)
    paths = {role: os.fspath(v) for role, v in given.items()
             if isinstance(v, str | os.PathLike) and role not in frames}
    cfg = override(cfg, predictions=paths.get("predictions"), truth=paths.get("truth"))
    return run_config(cfg, gating=gating, frames=frames)


def list_metrics(family: str | None = None, *,
                 plugins: Sequence[str | os.PathLike[str]] = ()) -> list[Metric]:
    """The registered metric declarations (built-in and plugins), optionally of one family.

    ``plugins`` adds local plugin files, as a config's ``plugins:`` does (their code runs).
    Each declaration has ``name``, ``family``, ``formula``, ``params``, ``direction`` and
    ``origin`` (``built-in`` or the plugin it came from).

    >>> auroc = next(m for m in list_metrics("binary") if m.name == "auroc")
    >>> auroc.direction, auroc.origin
    ('higher', 'built-in')
    """
    from evalcli.metrics.registry import get_registry

    reg = get_registry().with_plugin_files(Path(p).resolve() for p in plugins)
    if family is not None:
        reg.task(family)
    return [m for m in reg if family in (None, m.family)]
