"""What the commands share: consoles (stdout for results, stderr for messages), error handling."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from evalcli.errors import EXIT_ERROR, UserError

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from evalcli.result import RunResult

F = TypeVar("F", bound=Callable[..., Any])


def stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, no_color="NO_COLOR" in os.environ, highlight=False)


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
            return fn(*args, **kwargs)
        except UserError as exc:
            from rich.markup import escape

            raise fail(escape(str(exc))) from None
        except KeyboardInterrupt:
            stderr().print("interrupted")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def emit(result: RunResult, fmt: str, output: Path | None, quiet: bool = False) -> None:
    """Print the report in ``fmt`` to stdout and/or write it to ``output``."""
    from evalcli.report import ReportFormat, render, write

    if output is not None:
        write(result, output)
        if not quiet:
            stderr().print(f"wrote {output}", style="dim")
    if fmt == "table":
        from evalcli.report.table import renderable

        stdout().print(renderable(result))
    elif fmt != "none":
        sys.stdout.write(render(result, ReportFormat(fmt)))
        sys.stdout.flush()


def exit_code(result: RunResult) -> int:
    from evalcli.errors import EXIT_GATE_FAILED, EXIT_OK

    return int(EXIT_OK if result.passed else EXIT_GATE_FAILED)
