"""A run's outputs as one transaction: checked before anything is computed, written all or none.

A run may write several files: reports (``-o``, ``report:``), curve tables (``--curves``) and
the per-query table (``per_query:``). Before the run, :func:`check_targets` refuses a target
that is one of the run's inputs (paths resolved, links followed; a file inside an input folder
or matched by an input glob counts), a target in a folder that does not exist or cannot be
written, a folder where a file is wanted, and two outputs on one path — so a typo can never
overwrite the predictions, and a path that cannot be written fails in a second, not after the
computation. After the run, :func:`write_all` renders every output to a temporary file beside
its target first; only when all of them exist are they renamed into place, old files kept aside
until every rename succeeded (and put back otherwise). A failure or Ctrl-C at any point leaves
every existing file as it was.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import signal
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalcli.errors import ConfigError, clip

if TYPE_CHECKING:
    import polars as pl

    from evalcli.result import RunResult

CURVE_NAMES = ("roc", "pr", "reliability", "gain", "residuals")
"""Every curve table a run may write (``<folder>/<name>.<format>``, CSV or Parquet): ``roc``:
threshold, fpr, tpr (one row per distinct score, after a first row at threshold +inf); ``pr``:
threshold, recall, precision; ``reliability`` (with ece or mce): bins, strategy, bin,
mean_score, fraction_positive, weight (the non-empty bins); ``gain`` (with lift_table or
lift_at_top): groups, group, fraction, threshold, weight, positives, gain, lift, group_rate,
group_lift; ``residuals``: residual (label − prediction, 3 significant digits), weight. See
:func:`evalcli.metrics.binary.extras.roc_points` and
:func:`evalcli.metrics.binary.extras.metric_tables` for the definitions."""
TABLE_SUFFIXES = (".parquet", ".csv", ".jsonl", ".ndjson")


@dataclass(frozen=True)
class Targets:
    """What a run writes besides stdout."""

    reports: tuple[Path, ...] = ()
    curves: tuple[Path, str] | None = None
    """The curves' folder (created if needed) and their format, csv or parquet."""
    per_query: Path | None = None

    def files(self) -> list[tuple[Path, str]]:
        """Every file the run may write, with what it is (for messages)."""
        out = [(Path(p), "report") for p in self.reports]
        if self.curves is not None:
            folder, fmt = self.curves
            out += [(Path(folder) / f"{n}.{fmt}", "curves file") for n in CURVE_NAMES]
        if self.per_query is not None:
            out.append((Path(self.per_query), "per-query table"))
        return out


def _real(path: str | Path) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def _is_glob(path: str) -> bool:
    return any(ch in path for ch in "*?[")


def _hits_input(target: str, inputs: Sequence[str]) -> str | None:
    """The input ``target`` (a resolved path) would overwrite, if any."""
    for given in inputs:
        if "://" in given:
            continue
        if _is_glob(given):
            if fnmatch.fnmatchcase(target, _real(given)) or fnmatch.fnmatchcase(
                    target, os.path.abspath(given)):
                return given
            continue
        real = _real(given)
        if target == real or (os.path.isdir(real)
                              and target.startswith(real.rstrip(os.sep) + os.sep)):
            return given
    return None


def _writable_folder(path: Path, what: str, create: bool = False) -> None:
    """Refuse a target whose folder does not exist (or, with ``create``, cannot be made), is
    not a folder, or cannot be written."""
    folder = path.parent if str(path.parent) else Path(".")
    probe = folder
    if create:  # the nearest existing ancestor must be a writable folder
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
    if not probe.exists():
        raise ConfigError(f"cannot write the {what} {clip(str(path))}: the folder "
                          f"{clip(str(folder))} does not exist",
                          hint="create the folder first, or write somewhere else")
    if not probe.is_dir():
        raise ConfigError(f"cannot write the {what} {clip(str(path))}: {clip(str(probe))} is a "
                          "file, not a folder", hint="choose another path")
    try:  # a real probe: permissions, read-only file systems and root all answer the same
        fd, tmp = tempfile.mkstemp(prefix=".evalcli-probe-", dir=probe)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise ConfigError(f"cannot write the {what} {clip(str(path))}: the folder "
                          f"{clip(str(probe))} is not writable ({exc.strerror or exc})",
                          hint="choose a folder you may write to") from None


def check_targets(targets: Targets, inputs: Iterable[str]) -> None:
    """Refuse, before any computation, outputs that would overwrite an input, collide, or
    cannot be written (see the module docstring)."""
    inputs = [os.fspath(p) for p in inputs if p]
    seen: dict[str, str] = {}
    if targets.curves is not None:
        folder = Path(targets.curves[0])
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"cannot write curves into {clip(str(folder))}: it is a file",
                              hint="--curves names a folder")
        _writable_folder(folder / "x", "curves", create=True)
    for path, what in targets.files():
        real = _real(path)
        if real in seen:
            raise ConfigError(f"{clip(str(path))} is named twice as an output "
                              f"({seen[real]} and {what})", hint="give each output its own path")
        seen[real] = what
        check_file(path, what, inputs, folder=what != "curves file")
    for path in targets.reports:
        from evalcli.report import format_for

        format_for(Path(path))
    if targets.per_query is not None and \
            Path(targets.per_query).suffix.lower() not in TABLE_SUFFIXES:
        raise ConfigError(f"cannot tell the format of {clip(str(targets.per_query))} from its "
                          "extension", hint="use .parquet, .csv or .jsonl")


def check_file(path: Path, what: str, inputs: Sequence[str], folder: bool = True) -> None:
    """One output file: not one of ``inputs`` (resolved, links followed, nor inside an input
    folder or matched by an input glob), not a folder, and (with ``folder``) in a folder that
    exists and can be written."""
    try:
        _check_file(path, what, inputs, folder)
    except OSError as exc:  # a name too long for the file system, a loop of links
        raise ConfigError(f"cannot write the {what} {clip(str(path))}: "
                          f"{exc.strerror or exc}", hint="choose another path") from None


def _check_file(path: Path, what: str, inputs: Sequence[str], folder: bool) -> None:
    hit = _hits_input(_real(path), [os.fspath(p) for p in inputs])
    if hit is not None:
        raise ConfigError(
            f"the {what} {clip(str(path))} would overwrite the run's input {clip(hit)}",
            hint="write the output to another path")
    if Path(path).is_dir():
        raise ConfigError(f"cannot write the {what} {clip(str(path))}: it is a folder",
                          hint="name a file")
    if folder:
        _writable_folder(Path(path), what)


Writer = Callable[[str], None]
"""Writes one output's content to the temporary path it is given."""


def write_table(df: pl.DataFrame, path: str | Path, fmt: str | None = None) -> None:
    """Write a table in the format of ``fmt`` or the extension: parquet, csv or jsonl."""
    fmt = fmt or Path(path).suffix.lower().lstrip(".")
    if fmt == "parquet":
        df.write_parquet(path)
    elif fmt == "csv":
        df.write_csv(path)
    else:
        df.write_ndjson(path)


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def _deferred_interrupt() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) while files are renamed into place; re-raise it afterwards."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[object] = []
    previous = signal.signal(signal.SIGINT, lambda *a: got.append(a))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if got:
        raise KeyboardInterrupt


def commit(files: Sequence[tuple[Path, Writer]]) -> list[Path]:
    """Write every ``(path, writer)`` all-or-none: each to a temporary file beside its path,
    then all renamed into place. On any failure every existing file is as it was and no
    temporary file is left."""
    staged: list[tuple[Path, str]] = []
    try:
        for path, writer in files:
            path = Path(path)
            folder = path.parent if str(path.parent) else Path(".")
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
            os.close(fd)
            staged.append((path, tmp))
            try:
                writer(tmp)
            except OSError as exc:
                raise ConfigError(f"cannot write {clip(str(path))}: "
                                  f"{exc.strerror or exc}") from None
            os.chmod(tmp, _umask_mode())  # mkstemp makes 0600; a report is an ordinary file
        with _deferred_interrupt():
            _swap(staged)
        staged = []
    except OSError as exc:
        raise ConfigError(f"cannot write {clip(str(exc.filename or ''))}: "
                          f"{exc.strerror or exc}") from None
    finally:
        for _path, tmp in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return [p for p, _ in files]


def _swap(staged: Sequence[tuple[Path, str]]) -> None:
    """Rename each temporary file onto its path, keeping the old files aside until all are in
    place; on a failure, put every old file back."""
    kept: list[tuple[Path, str | None]] = []
    try:
        for path, tmp in staged:
            old = None
            if path.exists():
                fd, old = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".old",
                                           dir=path.parent if str(path.parent) else ".")
                os.close(fd)
                os.replace(path, old)
            kept.append((path, old))
            os.replace(tmp, path)
    except BaseException:
        for path, old in reversed(kept):
            with contextlib.suppress(OSError):
                if old is not None:
                    os.replace(old, path)
                else:
                    os.unlink(path)
        raise
    for _path, old in kept:
        if old is not None:
            with contextlib.suppress(OSError):
                os.unlink(old)


def text_writer(text: str) -> Writer:
    """A writer of ``text`` as UTF-8, synced to disk."""
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())

    return write


def _table_writer(df: pl.DataFrame, fmt: str) -> Writer:
    def write(tmp: str) -> None:
        write_table(df, tmp, fmt)

    return write


def write_all(result: RunResult, targets: Targets) -> list[Path]:
    """Render and write every output of ``targets`` for ``result``, all or none."""
    from evalcli.report import format_for, render

    files: list[tuple[Path, Writer]] = []
    for path in targets.reports:
        files.append((Path(path), text_writer(render(result, format_for(Path(path))))))
    if targets.curves is not None:
        folder, fmt = Path(targets.curves[0]), targets.curves[1]
        if result.curves:
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(f"cannot create the curves folder {clip(str(folder))}: "
                                  f"{exc.strerror}") from None
        for name, df in result.curves.items():
            files.append((folder / f"{name}.{fmt}", _table_writer(df, fmt)))
    if targets.per_query is not None and result.per_query is not None:
        pq = Path(targets.per_query)
        fmt = {".ndjson": "jsonl"}.get(pq.suffix.lower(), pq.suffix.lower().lstrip("."))
        files.append((pq, _table_writer(result.per_query, fmt)))
    return commit(files)
