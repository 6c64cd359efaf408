"""Run multiclass and multilabel metrics through the real pipeline in tests.

Data is written to files (Parquet, CSV or JSONL), a config is validated, and
``evalcli.runner.run_config`` runs it: the reader, the alignment and reshape hooks, the
task's checks and normalisation and the one-pass engine are all exercised.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from evalcli.config import parse_config
from evalcli.result import RunResult
from evalcli.runner import run_config

TMP = Path(tempfile.mkdtemp(prefix="evalcli-mcml-"))
_counter = itertools.count()


def write(df: pl.DataFrame, fmt: str = "parquet") -> str:
    path = TMP / f"data_{next(_counter)}.{fmt}"
    if fmt == "parquet":
        df.write_parquet(path)
    elif fmt == "csv":
        df.write_csv(path)
    elif fmt == "jsonl":
        df.write_ndjson(path)
    else:  # pragma: no cover - test helper
        raise ValueError(fmt)
    return str(path)


def run(task: str, data: pl.DataFrame, metrics: Sequence[Any], *,
        truth: pl.DataFrame | None = None, fmt: str = "parquet",
        truth_fmt: str | None = None, **config: Any) -> RunResult:
    """Write the frames and evaluate them with a config built from ``config``."""
    cfg: dict[str, Any] = {"task": task, "predictions": write(data, fmt),
                           "metrics": list(metrics)}
    if truth is not None:
        cfg["truth"] = write(truth, truth_fmt or fmt)
    cfg.update(config)
    return run_config(parse_config(cfg, "test", TMP))


def values(result: RunResult) -> dict[str, float | None]:
    return {m.id: m.value for m in result.metrics}


def by_id(result: RunResult) -> Mapping[str, Any]:
    return {m.id: m for m in result.metrics}
