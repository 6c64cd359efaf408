"""What the commands share: consoles (stdout for results, stderr for messages), error handling."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from evalcli.errors import EXIT_ERROR, UserError

if TYPE_CHECKING:
    from rich.console import Console

    from evalcli.result import RunResult

F = TypeVar("F", bound=Callable[..., Any])


def stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, no_color="NO_COLOR" in os.environ, highlight=False)


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty() or bool(os.environ.get("FORCE_COLOR"))


def say(text: str, style: str | None = None) -> None:
    """One message line on stderr: styled on a terminal; plain and unwrapped otherwise (a CI
    log keeps each message on one line, and Rich is not even imported)."""
    if _stderr_is_terminal():
        stderr().print(text, style=style, markup=False)
    else:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def stdout() -> Console:
    from rich.console import Console

    return Console(no_color="NO_COLOR" in os.environ, highlight=False)


def fail(message: str) -> typer.Exit:
    stderr().print(f"[bold red]error:[/] {message}", markup=True, soft_wrap=True)
    return typer.Exit(EXIT_ERROR)


def user_errors(fn: F) -> F:
    """Turn a UserError into one message on stderr and exit code 2 (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with plugin_warnings():
                return fn(*args, **kwargs)
        except UserError as exc:
            from rich.markup import escape

            raise fail(escape(str(exc))) from None
        except KeyboardInterrupt:
            stderr().print("interrupted")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def plugin_warnings() -> Iterator[None]:
    """Print each PluginWarning (an installed plugin failed to load) as one line on stderr."""
    import warnings

    from evalcli.metrics.registry import PluginWarning

    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PluginWarning)
            yield
    finally:
        for w in caught:
            if isinstance(w.message, PluginWarning):
                from rich.markup import escape

                stderr().print(f"[yellow]warning:[/] {escape(str(w.message))}", soft_wrap=True)
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)


@contextlib.contextmanager
def progress(quiet: bool = False, verbose: bool = False) -> Iterator[Callable[[str], None]]:
    """A progress display on stderr: a spinner on a terminal; with ``verbose``, one line per
    step with its time. Nothing when ``quiet`` or when stderr is not a terminal (CI logs)."""
    started = [time.perf_counter()]
    last: list[str] = []

    def log(msg: str) -> None:
        now = time.perf_counter()
        if verbose and last:
            say(f"{last[0]}: {now - started[0]:.2f} s", style="dim")
        started[0] = now
        last[:] = [msg]

    if quiet:
        yield lambda _msg: None
        return
    if not _stderr_is_terminal():
        yield log
        log("")
        return
    console = stderr()
    with console.status("starting", spinner="dots") as status:
        def update(msg: str) -> None:
            log(msg)
            status.update(msg)

        yield update
    log("")


def emit(result: RunResult, fmt: str, output: Path | Sequence[Path] | None, quiet: bool = False,
         curves: tuple[Path, str] | None = None, verbose: bool = False) -> None:
    """Print the report in ``fmt`` to stdout; write it to each ``output`` (format from the
    extension); write the curve files; end with a one-line summary on stderr."""
    from evalcli.report import ReportFormat, render, write

    outputs = [output] if isinstance(output, str | os.PathLike) else list(output or [])
    for path in outputs:
        write(result, Path(path))
        if not quiet:
            say(f"wrote {path}", style="dim")
    if curves is not None:
        from evalcli.report.curves import write_curves

        written = write_curves(result, *curves)
        if not quiet:
            what = ", ".join(p.name for p in written) or (
                "nothing: this task and these columns have no curves")
            say(f"curves in {curves[0]}: {what}", style="dim")
    if fmt == "table":
        from evalcli.report.table import renderable

        stdout().print(renderable(result))
    elif fmt != "none":
        sys.stdout.write(render(result, ReportFormat(fmt)))
        sys.stdout.flush()
    if verbose:
        say(f"engine {result.engine}; {result.alignment.matched:,} rows matched", style="dim")
    if not quiet:
        from evalcli.gates import summary

        line = summary(result)
        style = "green" if line.startswith("passed") else (
            "bold red" if line.startswith("FAILED") else "dim")
        say(line, style=style)


def wants_curves(fmt: str, outputs: Sequence[Path]) -> bool:
    """Whether the curve tables are needed (an HTML report plots them)."""
    from evalcli.report import ReportFormat, format_for

    return fmt == "html" or any(format_for(Path(p)) == ReportFormat.html for p in outputs)


def exit_code(result: RunResult) -> int:
    from evalcli.errors import EXIT_GATE_FAILED, EXIT_OK

    return int(EXIT_OK if result.passed else EXIT_GATE_FAILED)
