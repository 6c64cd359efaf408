"""``evalcli diff BASELINE.json CANDIDATE.json``: metric deltas, with gates on regressions."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalcli.cli.common import examples, stdout, user_errors

if TYPE_CHECKING:
    from evalcli.result import Diff

EPILOG = examples(
    "evalcli diff accepted.json report.json",
    "evalcli diff accepted.json report.json --max-drop 0.01",
    "evalcli diff accepted.json report.json --max-drop auroc=0.005",
    "evalcli diff accepted.json report.json --max-relative-drop 0.02",
    "evalcli diff accepted.json report.json -f markdown >> summary.md",
    note="Changes are candidate − baseline. Gates read each metric's direction: a drop is a "
    "change for the worse, whether higher or lower is better. A gate's value alone applies "
    "to every metric; METRIC=X to one metric id (replacing the value for all). Exit 1 when a "
    "gate fails, 2 when the reports cannot be compared.",
)


class DiffFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


_GATE_HELP = "{what}; X alone for every metric, METRIC=X for one. Repeatable."
_GATE = "[METRIC=]X"


@user_errors
def diff(
    baseline: Annotated[Path, typer.Argument(
        metavar="BASELINE", help="The accepted JSON report.", dir_okay=False)],
    candidate: Annotated[Path, typer.Argument(
        metavar="CANDIDATE", help="The new JSON report.", dir_okay=False)],
    max_drop: Annotated[list[str] | None, typer.Option(
        "--max-drop", metavar=_GATE, help=_GATE_HELP.format(
            what="Fail when a metric gets worse by more than X"))] = None,
    max_relative_drop: Annotated[list[str] | None, typer.Option(
        "--max-relative-drop", metavar=_GATE, help=_GATE_HELP.format(
            what="Fail when a metric gets worse by more than X times its baseline value "
            "(0.02: 2%)"))] = None,
    min_improvement: Annotated[list[str] | None, typer.Option(
        "--min-improvement", metavar=_GATE, help=_GATE_HELP.format(
            what="Fail unless a metric gets better by at least X"))] = None,
    min_relative_improvement: Annotated[list[str] | None, typer.Option(
        "--min-relative-improvement", metavar=_GATE, help=_GATE_HELP.format(
            what="Fail unless a metric gets better by at least X times its baseline value"))
    ] = None,
    confidence: Annotated[float | None, typer.Option(
        "--confidence", metavar="C", min=0.0, max=1.0, help="Gates fail only when the change "
        "is significantly beyond their bound at this one-sided confidence (e.g. 0.95); needs "
        "reports with intervals, paired when both store their replicates.",
        rich_help_panel="Confidence")] = None,
    require_confidence: Annotated[float | None, typer.Option(
        "--require-confidence", metavar="C", min=0.0, max=1.0, help="Gates pass only when "
        "the change is significantly within their bound (non-inferiority for --max-drop).",
        rich_help_panel="Confidence")] = None,
    format: Annotated[DiffFormat, typer.Option(
        "--format", "-f", metavar="FORMAT", help="What to print on stdout: table, json or "
        "markdown.")] = DiffFormat.table,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="PATH", help="Also write the diff (.json or .md), "
        "atomically.", dir_okay=False)] = None,
) -> None:
    """Compare two JSON reports: deltas and regression gates.

    Each metric's change (candidate − baseline) is marked better or worse by the metric's
    direction; gates limit how much a metric may drop or require it to improve.
    """
    from evalcli.decide.diff import (
        diff_reports,
        gates_from_options,
        load_report,
        parse_gate_option,
    )
    from evalcli.errors import EXIT_GATE_FAILED, EXIT_OK

    default: dict[str, float | None] = {}
    per_metric: list[tuple[str, str, float]] = []
    for key, given in (("max_drop", max_drop), ("max_relative_drop", max_relative_drop),
                       ("min_improvement", min_improvement),
                       ("min_relative_improvement", min_relative_improvement)):
        for text in given or []:
            id_, value = parse_gate_option(key, text)
            if id_ is None:
                default[key] = value
            else:
                per_metric.append((key, id_, value))
    from evalcli.errors import ConfigError

    if confidence is not None and require_confidence is not None:
        raise ConfigError("give --confidence or --require-confidence, not both")
    for flag, level in (("--confidence", confidence), ("--require-confidence",
                                                       require_confidence)):
        if level is not None and not 0 < level < 1:
            raise ConfigError(f"{flag} {level:g}: a confidence lies strictly between 0 and 1",
                              hint=f"e.g. {flag} 0.95")
    gates = gates_from_options(default, per_metric, confidence=confidence,
                               require_confidence=require_confidence)
    if output is not None:  # before reading: never over an input, in a writable folder
        _check_output(output, [baseline, candidate])
    d = diff_reports(load_report(baseline), load_report(candidate), gates,
                     base_name=str(baseline), cand_name=str(candidate))
    if output is not None:
        _write(d, output)
    if format == DiffFormat.table:
        from evalcli.report.table import diff_renderable

        stdout().print(diff_renderable(d))
    elif format == DiffFormat.json:
        sys.stdout.write(json.dumps(d.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        from evalcli.report.markdown import render_diff

        sys.stdout.write(render_diff(d))
    raise typer.Exit(int(EXIT_OK if d.passed else EXIT_GATE_FAILED))


DIFF_SUFFIXES = (".json", ".md", ".markdown")


def _check_output(path: Path, inputs: list[Path]) -> None:
    """The diff's output, before any report is read: a known format, not one of the two
    reports, in a writable folder."""
    from evalcli.errors import ConfigError
    from evalcli.report.outputs import check_file

    if path.suffix.lower() not in DIFF_SUFFIXES:
        raise ConfigError(f"cannot tell the diff's format from {path}",
                          hint="use a .json or .md file")
    check_file(path, "diff", [str(p) for p in inputs])


def _write(d: Diff, path: Path) -> None:
    from evalcli.report.outputs import commit, text_writer

    if path.suffix.lower() == ".json":
        text = json.dumps(d.to_dict(), indent=2, ensure_ascii=False) + "\n"
    else:
        from evalcli.report.markdown import render_diff

        text = render_diff(d)
    commit([(path, text_writer(text))])
