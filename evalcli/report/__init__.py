"""Reports: one report object (:class:`~evalcli.result.RunResult`), one module per format.

``render(result, fmt)`` returns the text of a format; ``write(result, path)`` picks the format
from the extension and writes atomically (a temporary file in the same folder, then a rename),
so a crash never leaves a half-written report in place of the old one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path

from evalcli.errors import ConfigError
from evalcli.result import RunResult


class ReportFormat(str, Enum):
    """Output formats."""

    table = "table"
    json = "json"
    markdown = "markdown"
    junit = "junit"
    html = "html"


EXTENSIONS = {
    ".json": ReportFormat.json,
    ".md": ReportFormat.markdown,
    ".markdown": ReportFormat.markdown,
    ".xml": ReportFormat.junit,
    ".html": ReportFormat.html,
    ".htm": ReportFormat.html,
    ".txt": ReportFormat.table,
}


def _renderers() -> dict[ReportFormat, Callable[[RunResult], str]]:
    from evalcli.report import json as json_report
    from evalcli.report import table

    out: dict[ReportFormat, Callable[[RunResult], str]] = {
        ReportFormat.json: json_report.render,
        ReportFormat.table: table.render_text,
    }
    for fmt, module in ((ReportFormat.markdown, "markdown"), (ReportFormat.junit, "junit"),
                        (ReportFormat.html, "html")):
        try:
            mod = __import__(f"evalcli.report.{module}", fromlist=["render"])
        except ImportError:
            continue
        out[fmt] = mod.render
    return out


def render(result: RunResult, fmt: ReportFormat) -> str:
    renderers = _renderers()
    if fmt not in renderers:
        raise ConfigError(f"report format '{fmt.value}' is not available in this version",
                          hint=f"use one of: {', '.join(f.value for f in renderers)}")
    return renderers[fmt](result)


def format_for(path: Path) -> ReportFormat:
    fmt = EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        raise ConfigError(
            f"cannot tell the report format of {path} from its extension",
            hint="use .json, .md, .xml (JUnit), .html or .txt",
        )
    return fmt


def display_path(path: str) -> str:
    """A path as people read it: relative to the working directory when it lies below it.

    >>> display_path("https://host/x.parquet")
    'https://host/x.parquet'
    """
    if "://" in path or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith("..") else rel


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_target(path: Path) -> Iterator[str]:
    """A temporary path beside ``path``; moved into place (with the umask's mode) on success.

    On any failure the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.exists():
        raise ConfigError(f"cannot write {path}: the folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, _umask_mode())  # mkstemp makes 0600; a report is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_target(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def write(result: RunResult, path: Path, fmt: ReportFormat | None = None) -> None:
    write_atomic(path, render(result, fmt or format_for(path)))
