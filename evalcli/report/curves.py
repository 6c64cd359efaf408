"""Curves as files: ``roc``, ``pr`` and ``residuals`` tables as CSV or Parquet, written atomically.

Columns: ``roc.*``: threshold, fpr, tpr (one row per distinct score, after a first row at
threshold +inf); ``pr.*``: threshold, recall, precision; ``residuals.*``: residual (label −
prediction, 3 significant digits), weight. See :mod:`evalcli.curves` for the definitions.
"""

from __future__ import annotations

from pathlib import Path

from evalcli.errors import ConfigError
from evalcli.report import atomic_target
from evalcli.result import RunResult

FORMATS = ("csv", "parquet")


def write_curves(result: RunResult, folder: Path, fmt: str = "csv") -> list[Path]:
    """Write every curve of ``result`` into ``folder`` (created if needed); return the paths."""
    if fmt not in FORMATS:
        raise ConfigError(f"curves format '{fmt}' is not known", hint="use csv or parquet")
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the curves folder {folder}: {exc.strerror}") from None
    written = []
    for name, df in result.curves.items():
        path = folder / f"{name}.{fmt}"
        with atomic_target(path) as tmp:
            if fmt == "csv":
                df.write_csv(tmp)
            else:
                df.write_parquet(tmp)
        written.append(path)
    return written
