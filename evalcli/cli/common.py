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
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from evalcli.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_ERROR,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    UserError,
)

if TYPE_CHECKING:
    from rich.console import Console

    from evalcli.report.outputs import Targets
    from evalcli.result import RunResult

F = TypeVar("F", bound=Callable[..., Any])


# --------------------------------------------------------------------------- --help
# How every command's help reads (issue 16, item 6): Typer 0.29 shows each parameter's Python
# type (``<bool>`` on a flag, ``<str>``, ``<file>`` beside an argument's name) and keeps the
# docstring's line breaks inside a paragraph. The classes below are the one place that decides:
# flags show no value, arguments show their metavar alone (in the usage line too), and a
# description is wrapped by paragraph. Value options name their value with an explicit
# ``metavar=`` where they are declared.


class _Argument(TyperArgument):
    """An argument shown by its metavar alone: ``CONFIG`` (required), ``[TRUTH]`` (optional)."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def get_usage_pieces(self, ctx: Any) -> list[str]:
        name = self.metavar or (self.name or "").upper()
        name = name if self.required else f"[{name}]"
        return [name + ("..." if self.nargs != 1 else "")]


def _plain_params(params: Sequence[Any]) -> None:
    for p in params:
        if isinstance(p, TyperOption) and p.is_flag and p.metavar is None:
            p.metavar = ""  # Typer's own flags too (--help, --install-completion)
        elif type(p) is TyperArgument:
            p.__class__ = _Argument


def paragraphs(text: str | None) -> str | None:
    r"""Help text with each paragraph on one line, so Rich wraps it to the terminal instead of
    breaking it where the docstring's lines ended.

    >>> paragraphs("One line\n    and its end.\n\n    Next one.")
    'One line and its end.\n\nNext one.'
    """
    if text is None:
        return None
    import inspect

    return "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n"))


def examples(*commands: str, note: str = "") -> str:
    """A command's epilog: an optional paragraph, then ``Examples:`` with one command a line
    (each short enough for an 80-column terminal)."""
    body = (f"{note}\n\n" if note else "") + "Examples:\n" + "\n".join(f"  $ {c}" for c in commands)
    # Typer dedents the epilog by its lines' common indent: the leading empty line keeps the
    # commands indented under the heading; '[' would start Rich markup
    return "\n" + body.replace("[", "\\[")


class HelpCommand(TyperCommand):
    """Every evalcli command: see the comment above."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = paragraphs(self.help)

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        _plain_params(params)
        return params


class HelpGroup(TyperGroup):
    """Every evalcli command group (the app, ``metrics``): see the comment above."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = paragraphs(self.help)

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        _plain_params(params)
        return params


# --------------------------------------------------------------------------- consoles

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

    class StdoutConsole(Console):
        def on_broken_pipe(self) -> None:  # Rich would exit 1, which means "a gate failed"
            raise BrokenPipeError

    return StdoutConsole(no_color="NO_COLOR" in os.environ, highlight=False)


def _stdout_closed() -> typer.Exit:
    """The reader of stdout went away (``evalcli ... | head``): stop quietly with 141, as a
    program killed by SIGPIPE does (never 1, which means a gate failed)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # nothing more to flush at exit
    except (OSError, ValueError):
        pass
    return typer.Exit(EXIT_BROKEN_PIPE)


def fail(message: str) -> typer.Exit:
    stderr().print(f"[bold red]error:[/] {message}", markup=True, soft_wrap=True)
    return typer.Exit(EXIT_ERROR)


def _click_exception() -> type[Exception]:
    """Click's usage-error base class, wherever this Typer keeps Click (vendored or not)."""
    for cls in typer.BadParameter.__mro__:
        if cls.__name__ == "ClickException":
            return cls
    return typer.BadParameter


_PASS_THROUGH = (typer.Exit, typer.Abort, _click_exception(), SystemExit, GeneratorExit)
"""What Typer itself turns into exit codes (usage errors: 2)."""

DEBUG = [False]
"""Set by the global ``--debug`` flag (or ``EVALCLI_DEBUG=1``): print an internal error's
traceback on stderr."""


def user_errors(fn: F) -> F:
    """Turn a UserError into one message on stderr and exit code 2 (no traceback); Ctrl-C into
    exit 130; any other exception (a bug) into one line, the traceback in a file, and exit 3."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with plugin_warnings():
                return fn(*args, **kwargs)
        except UserError as exc:
            from rich.markup import escape

            raise fail(escape(str(exc))) from None
        except KeyboardInterrupt:
            say("interrupted")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except BrokenPipeError:
            raise _stdout_closed() from None
        except _PASS_THROUGH:
            raise
        except BaseException as exc:  # anything else is a bug: say so, exit 3
            raise internal_error(exc) from None

    return wrapper  # type: ignore[return-value]


def internal_error(exc: BaseException) -> typer.Exit:
    """Report a bug: one line on stderr, the traceback in a file (and on stderr with
    ``--debug``); the exit code is :data:`~evalcli.errors.EXIT_INTERNAL`, never 1."""
    import tempfile
    import traceback

    from evalcli._version import __version__
    from evalcli.errors import clip

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    where = ""
    try:
        fd, path = tempfile.mkstemp(prefix="evalcli-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"evalcli {__version__}, Python {sys.version.split()[0]}\n")
            fh.write(f"command: {' '.join(sys.argv)}\n\n{text}")
        where = f"; the traceback is in {path}"
    except OSError:
        pass
    if isinstance(exc, MemoryError):
        what = "evalcli ran out of memory"
        hint = "try 'engine: streaming' (or --engine streaming), or a machine with more memory"
    else:
        what = (f"internal error in evalcli {__version__} (a bug, not a problem with your "
                f"input): {type(exc).__name__}: {clip(str(exc).strip() or '-', 300)}")
        hint = "please report it with that file" + (
            "" if DEBUG[0] else "; --debug prints the traceback here")
    if DEBUG[0] or os.environ.get("EVALCLI_DEBUG"):
        sys.stderr.write(text)
    sys.stderr.write(f"error: {what}{where}\n  {hint}\n")
    sys.stderr.flush()
    return typer.Exit(EXIT_INTERNAL)


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
def announce_plugins(quiet: bool = False) -> Iterator[None]:
    """Say on stderr which plugin files' code runs, as each is loaded (a config that names a
    plugin file runs that Python code, wherever the file is)."""
    from evalcli.metrics.registry import on_plugin_file

    with on_plugin_file(lambda p: None if quiet else say(f"running plugin code: {p}")):
        yield


class Steps:
    """What a run is doing: the runner calls it with each phase. It times the phases (one line
    each on stderr with ``verbose``), shows them live on a terminal (see :func:`progress`) and
    knows the run's elapsed time for the summary line."""

    def __init__(self, verbose: bool = False, show: Callable[[str], None] | None = None) -> None:
        self.verbose = verbose
        self.show = show
        self.started = self._step_started = time.perf_counter()
        self.elapsed: float | None = None
        self._step = ""

    def __call__(self, msg: str) -> None:
        now = time.perf_counter()
        if self.verbose and self._step:
            say(f"{self._step}: {now - self._step_started:.2f} s", style="dim")
        self._step, self._step_started = msg, now
        if self.show is not None:
            self.show(msg)

    def finish(self) -> None:
        self("")
        self.elapsed = time.perf_counter() - self.started


def _size(n: int) -> str:
    """
    >>> _size(950), _size(4_100), _size(12_345_678)
    ('950 B', '4.1 kB', '12.3 MB')
    """
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def input_facts(paths: Sequence[str]) -> str:
    """What is known of the inputs without reading them: a Parquet file's row count (from its
    footer), else a file's size. Folders, URLs and standard input say nothing.

    >>> input_facts([])
    ''
    """
    parts: list[tuple[int | None, str]] = []
    for path in dict.fromkeys(paths):
        if not os.path.isfile(path):
            continue
        rows = None
        if path.lower().endswith(".parquet"):
            try:
                import polars as pl

                rows = int(pl.scan_parquet(path).select(pl.len()).collect().item())
            except Exception:  # a broken file: the run itself will say so
                rows = None
        parts.append((rows, f"{rows:,} rows" if rows is not None else
                      _size(os.path.getsize(path))))
    if not parts:
        return ""
    if len(parts) > 1 and all(rows is not None for rows, _ in parts):
        return "inputs: " + " + ".join(f"{rows:,}" for rows, _ in parts) + " rows"
    return "inputs: " + " + ".join(text for _, text in parts)


def config_inputs(cfg: Any) -> list[str]:
    """The data files a config reads (resolved): its predictions and truth."""
    specs = [getattr(cfg, "predictions", None), getattr(cfg, "truth", None)]
    return [cfg.resolve(p) for s in specs if isinstance(p := getattr(s, "path", None), str)]


@contextlib.contextmanager
def progress(quiet: bool = False, verbose: bool = False,
             inputs: Sequence[str] = ()) -> Iterator[Steps]:
    """What the run is doing, on stderr. On a terminal: a live line with a spinner, the
    phase, what is known of the inputs without reading them (:func:`input_facts`) and the
    elapsed time, cleared at the end (the summary line of :func:`emit` follows). With
    ``verbose``, one line per phase with its time. Nothing when ``quiet``, nor on a stderr
    that is not a terminal (a CI log) except the verbose lines."""
    if quiet:
        steps = Steps()
        yield steps
        steps.elapsed = time.perf_counter() - steps.started
        return
    if not _stderr_is_terminal():
        steps = Steps(verbose)
        yield steps
        steps.finish()
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.table import Column

    console = stderr()
    facts = input_facts(inputs)

    def line(msg: str) -> str:  # the phase, and what is known of the inputs when it fits
        room = max(console.width - 12, 10)  # after the spinner and the time
        full = f"{msg} · {facts}" if facts else msg
        if len(full) <= room:
            return full
        return msg if len(msg) <= room else msg[:room - 1] + "…"

    with Progress(SpinnerColumn("dots"), TimeElapsedColumn(),
                  TextColumn("{task.description}", markup=False,
                             table_column=Column(no_wrap=True, overflow="ellipsis")),
                  console=console, transient=True) as bar:
        task = bar.add_task(line("starting"), total=None)
        steps = Steps(verbose, lambda msg: bar.update(task, description=line(msg), refresh=True))
        yield steps
        steps.show = None
    steps.finish()


def emit(result: RunResult, fmt: str, targets: Targets | None = None, quiet: bool = False,
         verbose: bool = False, steps: Steps | None = None) -> None:
    """Write every output of ``targets`` (all or none), print the report in ``fmt`` on stdout,
    and end with a one-line summary on stderr: the verdict, and on a terminal what was
    evaluated and in how long."""
    from evalcli.report import ReportFormat, render
    from evalcli.report.outputs import write_all

    if targets is not None:
        written = set(write_all(result, targets))
        if not quiet:
            for path in targets.reports:
                say(f"wrote {path}", style="dim")
            if targets.curves is not None:
                folder = targets.curves[0]
                what = ", ".join(p.name for p in sorted(written) if p.parent == Path(folder)) \
                    or "nothing: this task and these columns have no curves"
                say(f"curves in {folder}: {what}", style="dim")
            if targets.per_query is not None and targets.per_query in written:
                say(f"wrote {targets.per_query}", style="dim")
    if fmt == "table":
        from evalcli.report.table import renderable

        stdout().print(renderable(result))
    elif fmt != "none":
        sys.stdout.write(render(result, ReportFormat(fmt)))
        sys.stdout.flush()
    if verbose:
        say(f"engine {result.engine}; {result.alignment.matched:,} rows matched", style="dim")
    if not quiet:
        from evalcli.decide.gates import summary

        line = summary(result)
        style = "green" if line.startswith("passed") else (
            "bold red" if line.startswith("FAILED") else "dim")
        if steps is not None and steps.elapsed is not None and _stderr_is_terminal():
            line += f" · {evaluated(result)} in {steps.elapsed:.2f} s"
        say(line, style=style)


def evaluated(result: RunResult) -> str:
    """What a run evaluated, in a few words: its queries (ranking) or its rows."""
    a = result.alignment
    if "queries_in_both" in a.extra:
        return f"{a.extra['queries_in_both']:,} queries"
    n = a.evaluated
    return f"{n:,} row{'s' if n != 1 else ''}"


def wants_curves(fmt: str, outputs: Sequence[Path]) -> bool:
    """Whether the curve tables are needed (an HTML report plots them)."""
    from evalcli.report import ReportFormat, format_for

    return fmt == "html" or any(format_for(Path(p)) == ReportFormat.html for p in outputs)


def exit_code(result: RunResult) -> int:
    from evalcli.errors import EXIT_GATE_FAILED, EXIT_OK

    return int(EXIT_OK if result.passed else EXIT_GATE_FAILED)
