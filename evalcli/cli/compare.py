"""``evalcli compare PREDICTIONS [TRUTH]``: ad-hoc evaluation without a config."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalcli.cli.common import (
    config_inputs,
    emit,
    examples,
    exit_code,
    progress,
    stderr,
    user_errors,
    wants_curves,
)
from evalcli.cli.common import say as say_line

if TYPE_CHECKING:
    from evalcli.config import Config
from evalcli.cli.run import (
    CI_PANEL,
    ENGINE_HELP,
    CiMethod,
    CurvesFormat,
    Engine,
    InputFormat,
    OutputFormat,
    ci_settings,
)

EPILOG = examples(
    "evalcli compare preds.parquet truth.csv",
    "evalcli compare scored.csv --label churned --score p_churn -m auroc -m f1",
    "evalcli compare preds.csv truth.csv --id user_id --gate 'auroc>=0.8'",
    "evalcli compare preds.csv --task regression --label price",
    "python score.py | evalcli compare - truth.parquet",
    "evalcli compare old.parquet truth.csv --vs new.parquet",
    "evalcli compare bm25.trec qrels.txt --vs dense.trec --vs hybrid.trec",
)


@user_errors
def compare(
    predictions: Annotated[str, typer.Argument(
        metavar="PREDICTIONS", help="The predictions file (it may hold the truth too); '-' "
        "reads standard input, an http(s) URL is downloaded.")],
    truth: Annotated[str | None, typer.Argument(
        metavar="TRUTH", help="The truth file, joined on the id column(s); '-' reads "
        "standard input.")] = None,
    task: Annotated[str | None, typer.Option(
        "--task", metavar="TASK", help="binary, multiclass, multilabel, ranking or regression "
        "(default: inferred).")] = None,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", metavar="METRIC", help="A metric id to compute, such as auroc or "
        "ndcg@10; repeatable (default: all that apply).")] = None,
    id: Annotated[list[str] | None, typer.Option(
        "--id", metavar="COLUMN", help="A join key column; repeatable (default: inferred).")
    ] = None,
    label: Annotated[str | None, typer.Option(
        "--label", metavar="COLUMN", help="The truth column.")] = None,
    score: Annotated[str | None, typer.Option(
        "--score", metavar="COLUMN", help="The score or probability column.")] = None,
    prediction: Annotated[str | None, typer.Option(
        "--prediction", metavar="COLUMN", help="The hard prediction column.")] = None,
    weight: Annotated[str | None, typer.Option(
        "--weight", metavar="COLUMN", help="The sample weight column.")] = None,
    positive: Annotated[str | None, typer.Option(
        "--positive", metavar="VALUE", help="The label of the positive class (binary, when "
        "labels are not 0/1).")] = None,
    gate: Annotated[list[str] | None, typer.Option(
        "--gate", "-g", metavar="GATE", help="An inline gate such as 'auroc>=0.8' or "
        "'log_loss<=0.4'; repeatable.")] = None,
    group_by: Annotated[list[str] | None, typer.Option(
        "--group-by", metavar="COLUMN", help="A segment column: every metric per segment too; "
        "repeatable.")] = None,
    drop_unmatched: Annotated[bool, typer.Option(
        "--drop-unmatched", help="Evaluate matched rows only instead of failing.")] = False,
    format: Annotated[OutputFormat, typer.Option(
        "--format", "-f", metavar="FORMAT", help="What to print on stdout: table, json, "
        "markdown, junit, html, trec_eval (its measure/query/value lines) or none.")
    ] = OutputFormat.table,
    output: Annotated[list[Path] | None, typer.Option(
        "--output", "-o", metavar="PATH", help="Write the report here (the format comes from "
        "the extension); repeatable.", dir_okay=False)] = None,
    curves: Annotated[Path | None, typer.Option(
        "--curves", metavar="DIR", help="Write ROC/PR points (binary) or residuals "
        "(regression) into this folder.", file_okay=False)] = None,
    curves_format: Annotated[CurvesFormat, typer.Option(
        "--curves-format", metavar="FORMAT", help="csv or parquet.")] = CurvesFormat.csv,
    engine: Annotated[Engine | None, typer.Option(
        "--engine", "-e", metavar="ENGINE", help=ENGINE_HELP)] = None,
    per_query: Annotated[Path | None, typer.Option(
        "--per-query", metavar="PATH", help="Write each query's metric values (ranking) to "
        "this .parquet, .csv or .jsonl file.", dir_okay=False)] = None,
    format_in: Annotated[InputFormat | None, typer.Option(
        "--format-in", metavar="FORMAT", help="The format of standard input ('-', else read "
        "from its content) or of a file whose name does not say it: csv, tsv, jsonl, "
        "parquet or trec (qrels and run files).")] = None,
    vs: Annotated[list[str] | None, typer.Option(
        "--vs", metavar="PATH", help="Another system's predictions on the same truth: each is "
        "compared with PREDICTIONS (the baseline) by paired tests, with intervals on the "
        "differences; repeatable. Systems are named by their file names.",
        rich_help_panel=CI_PANEL)] = None,
    ci: Annotated[bool, typer.Option(
        "--ci", help="Confidence intervals on every metric (95%, closed forms where they "
        "exist, else 1,000 bootstrap replicates); on with --vs.", rich_help_panel=CI_PANEL)
    ] = False,
    ci_level: Annotated[float | None, typer.Option(
        "--ci-level", metavar="LEVEL", help="Confidence level (default 0.95).",
        rich_help_panel=CI_PANEL)] = None,
    ci_method: Annotated[CiMethod | None, typer.Option(
        "--ci-method", metavar="METHOD", help="auto, bootstrap or bca.",
        rich_help_panel=CI_PANEL)] = None,
    replicates: Annotated[int | None, typer.Option(
        "--replicates", metavar="N", help="Bootstrap replicates (default 1000).",
        rich_help_panel=CI_PANEL)] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", metavar="N", help="Seed of the resampling (default 0).",
        rich_help_panel=CI_PANEL)] = None,
    ci_unit: Annotated[str | None, typer.Option(
        "--ci-unit", metavar="UNIT", help="What is resampled: auto, rows, or a column whose "
        "rows belong together (e.g. user_id).", rich_help_panel=CI_PANEL)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No messages on stderr.")] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Also print each step with its time on stderr.")] = False,
) -> None:
    """Evaluate predictions against truth without a config.

    The task and the columns are inferred when that is unambiguous; otherwise the error names
    the candidates and the option that decides.
    """
    from evalcli.infer import build_config

    cfg, inferred = build_config(
        predictions, truth, task=task, metrics=metric or [], ids=id or [], label=label,
        score=score, prediction=prediction, weight=weight, positive=positive,
        gates=gate or [], group_by=group_by or [], drop_unmatched=drop_unmatched,
        format_in=format_in.value if format_in is not None else None,
    )
    if inferred and not quiet:  # stderr, whatever stdout holds
        stderr().print("inferred: " + ", ".join(inferred), style="dim")
    from evalcli.runner import output_targets, override, run_config

    if engine is not None:
        cfg = override(cfg, engine=engine.value)
    if per_query is not None:
        cfg = override(cfg, per_query=str(per_query))
    if verbose:
        cfg = override(cfg, verbose=True)
    settings = ci_settings(ci or bool(vs), ci_level, ci_method, replicates, seed, ci_unit)
    if settings is not None:
        cfg = override(cfg, ci=settings)
    if vs:
        cfg = with_systems(cfg, predictions, vs)
    outputs = list(output or [])
    targets = output_targets(cfg, outputs,
                             (curves, curves_format.value) if curves is not None else None)
    with progress(quiet, verbose, config_inputs(cfg)) as steps:
        result = run_config(cfg, progress=steps, write_per_query=False,
                            curves=curves is not None or wants_curves(format.value, outputs))
    if not quiet:
        for role, file in result.unused_columns.items():
            say_line(f"note: {file} has a column '{role}' that is not used; "
                     f"--{role} {role} would use it")
    emit(result, format.value, targets, quiet, verbose, steps)
    raise typer.Exit(exit_code(result))


def with_systems(cfg: Config, first: str, others: list[str]) -> Config:
    """The config with the predictions and each ``--vs`` file as named systems (named by
    their file names, made unique), the first the baseline."""
    from evalcli.config import ComparisonSettings, InputSpec

    names: dict[str, InputSpec] = {}
    for i, path in enumerate([first, *others]):
        spec = cfg.predictions if i == 0 else cfg.predictions.model_copy(
            update={"path": path})
        stem = Path(path).name.split(".")[0] or f"system{i + 1}"
        stem = "".join(ch if ch.isalnum() or ch in "_-." else "_" for ch in stem)[:60]
        name, k = stem, 2
        while name in names:
            name, k = f"{stem}_{k}", k + 1
        names[name] = spec
    return cfg.model_copy(update={"systems": names, "comparison": ComparisonSettings(
        baseline=next(iter(names)))})
