"""Lazy scans of the input files, with the format from the extension (or the config).

CSV, TSV, Parquet (a file, a glob, or a directory with hive partitions), JSONL/NDJSON, and
gzip/zstd-compressed CSV and JSONL. Nothing is read here but the schema: errors about missing or
empty files surface now, with the file's name, instead of in the middle of a computation.
"""

from __future__ import annotations

import glob as globlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from evalcli.errors import InputDataError

_EXT = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".qrels": "trec",
    ".run": "trec",
    ".trec": "trec",
}
_COMPRESSED = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd"}


@dataclass(frozen=True)
class Source:
    """An input as the config describes it: where, which format, reader options."""

    path: str
    format: str | None = None
    separator: str | None = None
    compression: str | None = None
    null_values: tuple[str, ...] | None = None
    has_header: bool = True
    frame: pl.LazyFrame | None = field(default=None, compare=False, repr=False)
    """An in-memory input (Python API); ``path`` then only names it in messages."""


def detect_format(path: str) -> tuple[str, str | None]:
    """The format and compression implied by a path.

    >>> detect_format("preds.csv.gz"), detect_format("data/*.parquet"), detect_format("x.tsv")
    (('csv', 'gzip'), ('parquet', None), ('tsv', None))
    """
    p = Path(path.rstrip("/"))
    compression = _COMPRESSED.get(p.suffix.lower())
    if compression:
        p = p.with_suffix("")
    fmt = _EXT.get(p.suffix.lower())
    if fmt is None and not any(ch in path for ch in "*?[") and Path(path).is_dir():
        fmt = "parquet"
    if fmt is None:
        raise InputDataError(
            f"{path}: cannot tell the file format from the extension '{p.suffix or '(none)'}'",
            hint="name the format in the config, e.g. predictions: {path: ..., format: csv}",
        )
    return fmt, compression


# Readers for formats that plug in from elsewhere (e.g. TREC, registered by the ranking family).
EXTRA_READERS: dict[str, Callable[[Source], pl.LazyFrame]] = {}


def _scan_trec(source: Source) -> pl.LazyFrame:
    from evalcli.io.trec import scan_trec

    return scan_trec(source)


EXTRA_READERS["trec"] = _scan_trec


def _exists(path: str) -> None:
    if "://" in path:
        return
    if any(ch in path for ch in "*?["):
        if not globlib.glob(path, recursive=True):
            raise InputDataError(f"no file matches {path}", hint="check the path or the pattern")
        return
    if not Path(path).exists():
        near = ""
        parent = Path(path).parent
        if parent.is_dir():
            import difflib

            names = [c.name for c in parent.iterdir()]
            close = difflib.get_close_matches(Path(path).name, names, n=1)
            near = f" Did you mean '{parent / close[0]}'?" if close else ""
        raise InputDataError(f"file {path} does not exist.{near}",
                             hint="check the path (relative paths start at the config's folder)")
    if Path(path).is_dir() and not any(f.is_file() for f in Path(path).rglob("*")):
        raise InputDataError(f"the folder {path} holds no files",
                             hint="point at a Parquet file, a glob such as data/*.parquet, or "
                             "a folder of Parquet files (hive partitions)")


def scan(source: Source) -> pl.LazyFrame:
    """A LazyFrame over the source; its schema is checked now (cheap), its rows later."""
    if source.frame is not None:
        if not source.frame.collect_schema():
            raise InputDataError(f"{source.path} has no columns")
        return source.frame
    _exists(source.path)
    # a format named in the config wins, even when the extension says nothing (data.out)
    fmt = source.format or detect_format(source.path)[0]
    lf: pl.LazyFrame
    try:
        if fmt in ("csv", "tsv"):
            sep = source.separator or ("\t" if fmt == "tsv" else ",")
            lf = pl.scan_csv(
                source.path, separator=sep, has_header=source.has_header,
                null_values=list(source.null_values) if source.null_values else None,
                infer_schema_length=10_000,
            )
        elif fmt == "parquet":
            path = source.path
            if Path(path).is_dir():
                lf = pl.scan_parquet(path, hive_partitioning=True)
            else:
                lf = pl.scan_parquet(path, hive_partitioning=None)
        elif fmt == "jsonl":
            lf = pl.scan_ndjson(source.path, infer_schema_length=10_000)
        elif fmt in EXTRA_READERS:
            lf = EXTRA_READERS[fmt](source)
        else:
            raise InputDataError(f"{source.path}: format '{fmt}' is not readable here",
                                 hint="use csv, tsv, parquet or jsonl")
        schema = lf.collect_schema()
    except pl.exceptions.NoDataError:
        raise InputDataError(f"{source.path} is empty (no header, no rows)",
                             hint="check that the file was written completely") from None
    except (pl.exceptions.ComputeError, pl.exceptions.SchemaError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputDataError(f"cannot read {source.path} as {fmt}: {first}",
                             hint="check the file's format, or set format/separator in the "
                             "config") from None
    if not schema:
        raise InputDataError(f"{source.path} has no columns")
    return lf
