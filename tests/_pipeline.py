"""Run metrics through the real pipeline (files on disk -> config -> run_config) in tests.

Every reference comparison in the family tests goes through here, so what is checked is what a
user runs: the reader, the alignment, the task's checks and normalisation, the one-pass engine.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from evalcli.config import parse_config
from evalcli.result import RunResult
from evalcli.runner import run_config

_TMP = Path(tempfile.mkdtemp(prefix="evalcli-tests-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
_N = [0]


def write(df: pl.DataFrame, fmt: str = "parquet", folder: Path | None = None,
          name: str | None = None) -> str:
    """Write ``df`` as ``fmt`` (parquet, csv, csv.gz, tsv, jsonl) and return the path."""
    _N[0] += 1
    folder = folder or _TMP
    path = folder / f"{name or 'data'}_{_N[0]}.{fmt}"
    if fmt == "parquet":
        df.write_parquet(path)
    elif fmt == "csv":
        df.write_csv(path)
    elif fmt == "tsv":
        df.write_csv(path, separator="\t")
    elif fmt == "csv.gz":
        import gzip

        path.write_bytes(gzip.compress(df.write_csv().encode()))
    elif fmt == "jsonl":
        df.write_ndjson(path)
    else:  # pragma: no cover - test helper
        raise ValueError(fmt)
    return str(path)


def run(
    data: pl.DataFrame | Mapping[str, Sequence[Any]],
    task: str,
    metrics: Sequence[Any] = (),
    *,
    truth: pl.DataFrame | Mapping[str, Sequence[Any]] | None = None,
    fmt: str = "parquet",
    gating: bool = True,
    **config: Any,
) -> RunResult:
    """Write ``data`` (and ``truth``) to files and evaluate them with a config."""
    df = data if isinstance(data, pl.DataFrame) else pl.DataFrame(dict(data))
    cfg: dict[str, Any] = {"task": task, "predictions": write(df, fmt), "metrics": list(metrics)}
    if truth is not None:
        tdf = truth if isinstance(truth, pl.DataFrame) else pl.DataFrame(dict(truth))
        cfg["truth"] = write(tdf, fmt)
    cfg.update(config)
    return run_config(parse_config(cfg, "test", _TMP), gating=gating)


def values(result: RunResult) -> dict[str, float | None]:
    """Metric id -> value."""
    return {m.id: m.value for m in result.metrics}


def value(data: pl.DataFrame | Mapping[str, Sequence[Any]], task: str, metric: Any,
          **kw: Any) -> float | None:
    """One metric's value through the pipeline."""
    r = run(data, task, [metric], **kw)
    assert len(r.metrics) == 1
    return r.metrics[0].value
