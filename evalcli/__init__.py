"""evalcli: evaluate model predictions against ground truth from files.

The command line is ``evalcli``; from Python, :func:`evalcli.evaluate` runs a config and returns
the report object the CLI renders (see ``docs/python-api.md``):

>>> import polars as pl
>>> import evalcli
>>> truth = pl.DataFrame({"id": [1, 2, 3], "label": [1.0, 2.0, 4.0]})
>>> preds = pl.DataFrame({"id": [1, 2, 3], "prediction": [1.5, 2.0, 3.0]})
>>> result = evalcli.evaluate({"task": "regression", "metrics": ["mae", "rmse"]},
...                           predictions=preds, truth=truth)
>>> result.values()
{'mae': 0.5, 'rmse': 0.6454972243679028}

The names below are the stable public API. They load on first use, so ``import evalcli`` (and
``evalcli --help``) stays instant.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalcli._version import __version__

if TYPE_CHECKING:  # the same names, eagerly, for type checkers (explicit re-exports)
    from evalcli.api import ConfigLike as ConfigLike
    from evalcli.api import InputLike as InputLike
    from evalcli.api import evaluate as evaluate
    from evalcli.api import list_metrics as list_metrics
    from evalcli.api import load_config as load_config
    from evalcli.config import Config as Config
    from evalcli.errors import ConfigError as ConfigError
    from evalcli.errors import ExitCode as ExitCode
    from evalcli.errors import InputDataError as InputDataError
    from evalcli.errors import MetricError as MetricError
    from evalcli.errors import PluginError as PluginError
    from evalcli.errors import UserError as UserError
    from evalcli.metrics.registry import PluginWarning as PluginWarning
    from evalcli.metrics.registry import reset_registry as reset_registry
    from evalcli.result import Gate as Gate
    from evalcli.result import MetricResult as MetricResult
    from evalcli.result import RunResult as RunResult
    from evalcli.result import SegmentResult as SegmentResult

_EXPORTS = {
    "evaluate": "evalcli.api",
    "list_metrics": "evalcli.api",
    "load_config": "evalcli.api",
    "ConfigLike": "evalcli.api",
    "InputLike": "evalcli.api",
    "Config": "evalcli.config",
    "RunResult": "evalcli.result",
    "MetricResult": "evalcli.result",
    "SegmentResult": "evalcli.result",
    "Gate": "evalcli.result",
    "UserError": "evalcli.errors",
    "ConfigError": "evalcli.errors",
    "InputDataError": "evalcli.errors",
    "MetricError": "evalcli.errors",
    "PluginError": "evalcli.errors",
    "ExitCode": "evalcli.errors",
    "PluginWarning": "evalcli.metrics.registry",
    "reset_registry": "evalcli.metrics.registry",
}

__all__ = [
    "Config", "ConfigError", "ConfigLike", "ExitCode", "Gate", "InputDataError", "InputLike",
    "MetricError", "MetricResult", "PluginError", "PluginWarning", "RunResult", "SegmentResult",
    "UserError", "__version__", "evaluate", "list_metrics", "load_config", "reset_registry",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'evalcli' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
