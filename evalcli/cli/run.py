"""``evalcli run CONFIG.yaml``: the main job."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from evalcli.cli.common import emit, exit_code, user_errors

EPILOG = (
    "Examples:\n\n"
    "  evalcli run configs/binary-quickstart.yaml\n\n"
    "  evalcli run configs/binary-gated.yaml --format json > report.json\n\n"
    "  evalcli run configs/binary-gated.yaml -o report.json --predictions new_preds.parquet\n\n"
    "  evalcli run configs/binary-gated.yaml --no-gate"
)


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    junit = "junit"
    html = "html"
    none = "none"


@user_errors
def run(
    config: Annotated[Path, typer.Argument(help="YAML config (see 'evalcli schema').",
                                           dir_okay=False)],
    format: Annotated[OutputFormat, typer.Option(
        "--format", "-f", help="What to print on stdout; json prints only the report.")
    ] = OutputFormat.table,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write the report here (format from the extension: .json, "
        ".md, .xml, .html), atomically.", dir_okay=False)] = None,
    predictions: Annotated[str | None, typer.Option(
        "--predictions", "-p", help="Use this predictions file instead of the config's.")] = None,
    truth: Annotated[str | None, typer.Option(
        "--truth", "-t", help="Use this truth file instead of the config's.")] = None,
    gate: Annotated[bool, typer.Option(
        "--gate/--no-gate", help="--no-gate reports without failing on thresholds (exit 0).")
    ] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No messages on stderr.")] = False,
) -> None:
    """Evaluate a config's predictions; print or write the report.

    Gates (min/max on metrics) decide the exit code: 0 passed, 1 a gate failed, 2 bad input.
    """
    from evalcli.evaluate import run_path

    result = run_path(config, predictions=predictions, truth=truth, gating=gate)
    emit(result, format.value, output, quiet)
    raise typer.Exit(exit_code(result))
