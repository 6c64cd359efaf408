"""``evalcli run CONFIG.yaml``: the main job."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalcli.cli.common import (
    announce_plugins,
    config_inputs,
    emit,
    examples,
    exit_code,
    progress,
    user_errors,
    wants_curves,
)

if TYPE_CHECKING:
    from evalcli.config import Config

EPILOG = examples(
    "evalcli run configs/binary-quickstart.yaml",
    "evalcli run configs/binary-gated.yaml --format json > report.json",
    "evalcli run configs/binary-gated.yaml -o report.json -o summary.md",
    "evalcli run configs/binary-gated.yaml --predictions new.parquet",
    "evalcli run configs/binary-gated.yaml --no-gate",
    "evalcli run configs/binary-gated.yaml --baseline accepted.json",
    "evalcli run configs/binary-quickstart.yaml --ci",
)


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    junit = "junit"
    html = "html"
    trec_eval = "trec_eval"
    none = "none"


class Engine(str, Enum):
    auto = "auto"
    polars = "polars"
    streaming = "streaming"
    spark = "spark"


ENGINE_HELP = ("Run on this engine instead of the config's: auto, polars, streaming or spark "
               "(spark needs pip install 'evalcli\\[spark]' and Java 17+).")


class InputFormat(str, Enum):
    csv = "csv"
    tsv = "tsv"
    jsonl = "jsonl"
    parquet = "parquet"
    trec = "trec"
    trec_prefs = "trec_prefs"
    trec_qrels_jg = "trec_qrels_jg"


class CiMethod(str, Enum):
    auto = "auto"
    bootstrap = "bootstrap"
    bca = "bca"


CI_PANEL = "Confidence intervals"


def ci_settings(on: bool, level: float | None, method: CiMethod | None, replicates: int | None,
                seed: int | None, unit: str | None) -> dict[str, object] | None:
    """The interval settings the options give (``None``: none given, the config decides)."""
    given: dict[str, object] = {"level": level, "method": method.value if method else None,
             "replicates": replicates, "seed": seed, "unit": unit}
    if not on and all(v is None for v in given.values()):
        return None
    return given


class CurvesFormat(str, Enum):
    csv = "csv"
    parquet = "parquet"


@user_errors
def run(
    config: Annotated[Path, typer.Argument(
        help="The YAML config (see 'evalcli schema').", dir_okay=False, metavar="CONFIG")],
    format: Annotated[OutputFormat, typer.Option(
        "--format", "-f", metavar="FORMAT", help="What to print on stdout: table, json, "
        "markdown, junit, html, trec_eval (its measure/query/value lines) or none (json prints "
        "only the report).")
    ] = OutputFormat.table,
    output: Annotated[list[Path] | None, typer.Option(
        "--output", "-o", metavar="PATH", help="Write the report here, atomically; the format "
        "comes from the extension (.json, .md, .xml, .html, .tex, .treceval). Repeatable; adds to "
        "the config's 'report:'.", dir_okay=False)] = None,
    predictions: Annotated[str | None, typer.Option(
        "--predictions", "-p", metavar="PATH",
        help="Use this predictions file instead of the config's.")] = None,
    truth: Annotated[str | None, typer.Option(
        "--truth", "-t", metavar="PATH", help="Use this truth file instead of the config's.")
    ] = None,
    gate: Annotated[bool, typer.Option(
        "--gate/--no-gate", help="--no-gate reports without failing on thresholds (exit 0).")
    ] = True,
    baseline: Annotated[str | None, typer.Option(
        "--baseline", "-b", metavar="REPORT", help="Compare with this accepted JSON report "
        "(instead of the config's baseline report; its change gates apply).")] = None,
    curves: Annotated[Path | None, typer.Option(
        "--curves", metavar="DIR", help="Write ROC/PR points (binary) or residuals "
        "(regression) into this folder.", file_okay=False)] = None,
    curves_format: Annotated[CurvesFormat | None, typer.Option(
        "--curves-format", metavar="FORMAT", help="csv (default) or parquet.")] = None,
    engine: Annotated[Engine | None, typer.Option(
        "--engine", "-e", metavar="ENGINE", help=ENGINE_HELP)] = None,
    per_query: Annotated[Path | None, typer.Option(
        "--per-query", metavar="PATH", help="Write each query's metric values (ranking) to "
        "this .parquet, .csv or .jsonl file.", dir_okay=False)] = None,
    ci: Annotated[bool, typer.Option(
        "--ci", help="Confidence intervals on every metric (the config's 'uncertainty:', else "
        "95%, closed forms where they exist, else 1,000 bootstrap replicates). The --ci-* "
        "options imply it.", rich_help_panel=CI_PANEL)] = False,
    ci_level: Annotated[float | None, typer.Option(
        "--ci-level", metavar="LEVEL", help="Confidence level (default 0.95).",
        rich_help_panel=CI_PANEL)] = None,
    ci_method: Annotated[CiMethod | None, typer.Option(
        "--ci-method", metavar="METHOD", help="auto (closed form where there is one, else "
        "bootstrap), bootstrap (percentile) or bca.", rich_help_panel=CI_PANEL)] = None,
    replicates: Annotated[int | None, typer.Option(
        "--replicates", metavar="N", help="Bootstrap replicates (default 1000).",
        rich_help_panel=CI_PANEL)] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", metavar="N", help="Seed of the resampling (default 0): same seed, same "
        "intervals.", rich_help_panel=CI_PANEL)] = None,
    ci_unit: Annotated[str | None, typer.Option(
        "--ci-unit", metavar="UNIT", help="What is resampled: auto (rows; queries for "
        "ranking), rows, or a column whose rows belong together (e.g. user_id).",
        rich_help_panel=CI_PANEL)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No messages on stderr.")] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Also print each step with its time on stderr.")] = False,
) -> None:
    """Evaluate a config's predictions; print or write the report.

    Gates (min/max on metrics) decide the exit code: 0 passed, 1 a gate failed, 2 bad input.
    """
    from evalcli.config import load_config
    from evalcli.runner import output_targets, override, run_config

    cfg = override(load_config(config), predictions=predictions, truth=truth,
                   baseline=baseline, engine=engine.value if engine else None,
                   per_query=str(per_query) if per_query else None, verbose=verbose,
                   ci=ci_settings(ci, ci_level, ci_method, replicates, seed, ci_unit))
    outputs = [Path(cfg.resolve(p)) for p in cfg.report] + list(output or [])
    curves_to = curves_target(cfg, curves, curves_format)
    targets = output_targets(cfg, outputs, curves_to, also_inputs=[config])
    with progress(quiet, verbose, config_inputs(cfg)) as steps, announce_plugins(quiet):
        result = run_config(cfg, gating=gate, progress=steps, write_per_query=False,
                            curves=curves_to is not None or wants_curves(format.value, outputs))
    emit(result, format.value, targets, quiet, verbose, steps)
    raise typer.Exit(exit_code(result))


def curves_target(cfg: Config, option: Path | None, fmt: CurvesFormat | None
                  ) -> tuple[Path, str] | None:
    """Where the curve files go: --curves, else the config's ``curves:``."""
    if option is not None:
        return option, (fmt.value if fmt else cfg.curves.format if cfg.curves else "csv")
    if cfg.curves is not None:
        return Path(cfg.resolve(cfg.curves.path)), fmt.value if fmt else cfg.curves.format
    return None
