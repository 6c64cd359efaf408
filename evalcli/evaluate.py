"""Running an evaluation from a validated config: the one path the CLI and the API share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evalcli.align import Aligned, Inputs, align
from evalcli.config import Config, InputSpec, MetricEntry, load_config
from evalcli.engine.plan import Plan, check_roles, default_metrics, make_plan
from evalcli.errors import ConfigError
from evalcli.gates import evaluate_gates
from evalcli.io import Source
from evalcli.metrics.registry import Registry, get_registry, load_plugin_path
from evalcli.result import InputInfo, RunResult


def _source(cfg: Config, spec: InputSpec) -> Source:
    return Source(
        path=cfg.resolve(spec.path),
        format=spec.format.value if spec.format else None,
        separator=spec.separator,
        compression=spec.compression,
        null_values=tuple(spec.null_values) if spec.null_values else None,
        has_header=spec.has_header,
    )


def registry_for(cfg: Config) -> Registry:
    reg = get_registry()
    for plugin in cfg.plugins:
        path = Path(cfg.resolve(plugin))
        key = f"plugin file {path}"
        if any(m.origin == key for m in reg):
            continue
        load_plugin_path(reg, path)
    return reg


def inputs_of(cfg: Config) -> Inputs:
    cols = cfg.columns
    columns = {k: v for k, v in (("label", cols.label), ("score", cols.score),
                                 ("prediction", cols.prediction), ("weight", cols.weight))
               if v is not None}
    columns.update(cols.extra)
    return Inputs(
        predictions=_source(cfg, cfg.predictions),
        truth=_source(cfg, cfg.truth) if cfg.truth is not None else None,
        columns=columns,
        id_columns=cols.id,
        group_by=cfg.group_by,
        unmatched=cfg.alignment.unmatched,
        nulls=cfg.alignment.nulls,
        options=cfg.options,
    )


@dataclass
class Prepared:
    cfg: Config
    plan: Plan
    aligned: Aligned
    registry: Registry


def prepare(cfg: Config) -> Prepared:
    """Plan the metrics and align the inputs (reads schemas only). Used by run and validate."""
    reg = registry_for(cfg)
    plan = make_plan(reg, cfg.task, cfg.metrics, cfg.options)
    if cfg.engine == "spark":
        raise ConfigError("engine: spark is not available in this version",
                          hint="use engine: auto (the default)")
    aligned = align(plan.task, inputs_of(cfg))
    default_metrics(reg, plan, aligned.roles)
    check_roles(plan, aligned.roles, aligned.columns)
    return Prepared(cfg, plan, aligned, reg)


def run_config(cfg: Config, *, gating: bool = True) -> RunResult:
    """Evaluate a config: one pass over the inputs, gates applied, no printing."""
    from evalcli.engine.polars_engine import run_polars

    prep = prepare(cfg)
    metrics, segments, alignment, engine = run_polars(prep.plan, prep.aligned, cfg.engine)
    a = prep.aligned
    truth_cols = {r: c for r, c in a.columns.items() if a.role_file.get(r) == a.inputs.truth.path} \
        if a.inputs.truth else {}
    pred_cols = {r: c for r, c in a.columns.items() if r not in truth_cols}
    result = RunResult(
        task=cfg.task,
        engine=engine,
        predictions=InputInfo(a.inputs.predictions.path,
                              alignment.matched + alignment.only_in_predictions, pred_cols),
        truth=InputInfo(a.inputs.truth.path, alignment.matched + alignment.only_in_truth,
                        truth_cols) if a.inputs.truth else None,
        alignment=alignment,
        metrics=metrics,
        group_by=list(a.segments),
        segments=segments,
        options={k: v for k, v in prep.plan.options.items() if v is not None},
        gating=gating,
    )
    for seg in segments:
        for m, overall in zip(seg.metrics, metrics, strict=True):
            m.gate = overall.gate
    evaluate_gates(result)
    if not gating:
        for m in result.metrics:
            m.passed = None
    return result


def run_path(path: Path, *, predictions: str | None = None, truth: str | None = None,
             gating: bool = True, metrics: Sequence[str] = ()) -> RunResult:
    cfg = load_config(path)
    cfg = override(cfg, predictions=predictions, truth=truth, metrics=metrics)
    return run_config(cfg, gating=gating)


def override(cfg: Config, *, predictions: str | None = None, truth: str | None = None,
             metrics: Sequence[str] = ()) -> Config:
    """Command-line overrides of a config's inputs (paths as given, relative to the cwd)."""
    update: dict[str, object] = {}
    if predictions is not None:
        update["predictions"] = cfg.predictions.model_copy(
            update={"path": str(Path(predictions).resolve())})
    if truth is not None:
        spec = cfg.truth or InputSpec(path=truth)
        update["truth"] = spec.model_copy(update={"path": str(Path(truth).resolve())})
    if metrics:
        update["metrics"] = [MetricEntry.model_validate(m) for m in metrics]
    return cfg.model_copy(update=update) if update else cfg
