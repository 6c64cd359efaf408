"""The evalcli command line: one module per command, composed into one Typer app.

Heavy modules (polars, the metric families) load inside the commands, so ``evalcli --help``
and ``evalcli --version`` stay instant.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from evalcli import _startup
from evalcli._version import __version__
from evalcli.cli import compare, diff, metrics, run, schema, validate
from evalcli.cli.common import HelpCommand, HelpGroup, _click_exception, examples


class _Group(HelpGroup):
    """The app's command group: a usage error (a bad option value) echoes at most a few hundred
    characters of what was typed, like every other message; a closed stdout (``| head``) ends
    the run quietly."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        standalone = kwargs.pop("standalone_mode", True)
        try:
            # not standalone, Typer returns an Exit's code instead of exiting with it
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except _click_exception() as exc:
            if not standalone:
                raise
            from evalcli.errors import clip

            usage: Any = exc  # Click's UsageError: message, show(), exit_code
            usage.message = clip(usage.message, 300)
            usage.show()
            sys.exit(usage.exit_code)
        except typer.Abort:
            if not standalone:
                raise
            sys.stderr.write("aborted\n")
            sys.exit(130)
        if standalone:
            sys.exit(code if isinstance(code, int) else 0)
        return code


app = typer.Typer(
    name="evalcli",
    cls=_Group,
    help=(
        "Evaluate a model's predictions against ground truth from files: binary, multiclass, "
        "multilabel, ranking and regression metrics, with gates for CI.\n\n"
        "Exit codes: 0 all gates passed, 1 a gate failed, 2 bad usage, config or input, "
        "3 an internal error (a bug in evalcli), 130 interrupted, 141 stdout closed early."
    ),
    epilog=examples("evalcli run configs/binary-quickstart.yaml",
                    "evalcli compare preds.parquet truth.csv",
                    "evalcli metrics --family ranking",
                    "evalcli run CONFIG --help"),
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"evalcli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool | None,
        typer.Option("--version", "-V", callback=_version, is_eager=True,
                     help="Print the version and exit."),
    ] = None,
    debug: Annotated[bool, typer.Option(
        "--debug", help="On an internal error (exit 3), print the traceback too.")] = False,
) -> None:
    """Evaluate predictions against truth."""
    from evalcli.cli.common import DEBUG

    DEBUG[0] = debug


app.command("run", epilog=run.EPILOG, cls=HelpCommand)(run.run)
app.command("compare", epilog=compare.EPILOG, cls=HelpCommand)(compare.compare)
app.add_typer(metrics.app, name="metrics")
app.command("validate", epilog=validate.EPILOG, cls=HelpCommand)(validate.validate)
app.command("diff", epilog=diff.EPILOG, cls=HelpCommand)(diff.diff)
app.command("schema", epilog=schema.EPILOG, cls=HelpCommand)(schema.schema)


def main() -> None:
    """Console-script entry point. Commands turn their own errors into exit codes; this is
    the net for anything that escapes them (exit 3, never 1: 1 means a gate failed)."""
    _startup.pause()
    try:
        app()
    except (SystemExit, KeyboardInterrupt) as exc:
        if isinstance(exc, KeyboardInterrupt):
            sys.stderr.write("interrupted\n")
            sys.exit(130)
        raise
    except BaseException as exc:  # a bug: one line, exit 3
        from evalcli.cli.common import internal_error

        sys.exit(internal_error(exc).exit_code)
    finally:
        _startup.resume()  # (main() called in a process that goes on)
