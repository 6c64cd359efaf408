"""Running an evaluation from a validated config: the one path the CLI and the API share."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from evalcli import _startup
from evalcli.config import (
    Baseline,
    ComparisonSettings,
    Config,
    InputSpec,
    MetricEntry,
    Uncertainty,
    load_config,
)
from evalcli.decide.baseline import add_baseline, compare_baseline
from evalcli.decide.gates import evaluate_gates, segment_gates
from evalcli.engine.align import Aligned, Inputs, align
from evalcli.engine.base import Engine, choose_engine
from evalcli.engine.core import Evaluated, run_context
from evalcli.engine.plan import Plan, Resampling, check_roles, default_metrics, make_plan
from evalcli.errors import ConfigError
from evalcli.io import Source, input_path
from evalcli.metrics.registry import Registry, get_registry, warn_broken
from evalcli.metrics.task import Asks
from evalcli.report.outputs import Targets, check_targets, write_all
from evalcli.result import ChangeGate, InputInfo, RunResult, gate_level

if TYPE_CHECKING:
    import polars as pl

    from evalcli.metrics.base import Context
    from evalcli.metrics.task import Task


def _source(cfg: Config, spec: InputSpec, frame: pl.LazyFrame | None = None) -> Source:
    if frame is not None:
        return Source(path=spec.path, frame=frame)
    return Source(
        path=cfg.resolve(spec.path),
        format=spec.format.value if spec.format else None,
        separator=spec.separator,
        compression=spec.compression,
        null_values=tuple(spec.null_values) if spec.null_values else None,
        has_header=spec.has_header,
        encoding=spec.encoding,
    )


def registry_for(cfg: Config) -> Registry:
    """The installed metrics plus the config's plugin files; warns about broken plugins."""
    reg = get_registry().with_plugin_files(Path(cfg.resolve(p)) for p in cfg.plugins)
    warn_broken(reg)
    return reg


def inputs_of(cfg: Config, task: Task, frames: Mapping[str, pl.LazyFrame] | None = None
              ) -> Inputs:
    """The sources a config names; ``frames`` (from the Python API) replace files by role.

    The configured columns reach the alignment by role, checked against ``task``'s roles
    (a key of ``columns:`` or of ``columns.extra`` that the task does not have is an error).
    """
    frames = frames or {}
    cols = cfg.columns
    columns = cols.by_role(task.name, task.role_names(),
                           [r.name for r in task.roles if r.side == "both"])
    return Inputs(
        predictions=_source(cfg, cfg.predictions, frames.get("predictions")),
        truth=_source(cfg, cfg.truth, frames.get("truth")) if cfg.truth is not None else None,
        columns=columns,
        id_columns=cols.id,
        group_by=cfg.group_by,
        unmatched=cfg.alignment.unmatched,
        nulls=cfg.alignment.nulls,
        options=cfg.options,
        unit=cfg.uncertainty.unit if cfg.uncertainty is not None
        and cfg.uncertainty.unit not in ("auto", "rows") else None,
    )


@dataclass
class Prepared:
    cfg: Config
    plan: Plan
    aligned: Aligned
    registry: Registry
    engine: Engine
    """The engine the run uses, its inputs opened (engine spark: the session, the DataFrames)."""


def prepare(cfg: Config, frames: Mapping[str, pl.LazyFrame] | None = None,
            say: Callable[[str], None] | None = None) -> Prepared:
    """Plan the metrics and align the inputs (reads schemas only). Used by run and validate."""
    reg = registry_for(cfg)
    plan = make_plan(reg, cfg.task, cfg.metrics, cfg.options)
    inputs = inputs_of(cfg, plan.task, frames)
    engine = choose_engine(cfg.engine, inputs, cfg.spark)
    if engine.starting and say is not None:
        say(engine.starting)
    inputs = engine.prepare(plan, inputs)
    aligned = align(plan.task, inputs)
    default_metrics(reg, plan, aligned.roles)
    if plan.defaulted:
        plan.metrics = [pm for pm in plan.metrics if engine.runs(pm.metric)]
    check_roles(plan, aligned.roles, aligned.columns)
    plan.resampling = resampling_of(cfg)
    return Prepared(cfg, plan, aligned, reg, engine)


def resampling_of(cfg: Config) -> Resampling | None:
    """The interval settings of a run: the config's ``uncertainty:``, turned on with its
    defaults when a gate decides with a confidence or the report stores the replicates; the
    levels those gates need."""
    confidences = {c for m in cfg.metrics for c in (m.confidence, m.require_confidence)
                   if c is not None}
    confidences |= {c for m in cfg.metrics for g in (m.segments or {}).values()
                    for c in (g.confidence, g.require_confidence) if c is not None}
    u = cfg.uncertainty
    if u is None and not confidences and not cfg.report_statistics:
        return None
    u = u or Uncertainty()
    extra = tuple(sorted({gate_level(c) for c in confidences} - {u.level}))
    return Resampling(level=u.level, method=u.method, replicates=u.replicates, seed=u.seed,
                      unit=u.unit, groups=u.groups, extra_levels=extra)


def run_config(cfg: Config, *, gating: bool = True, curves: bool = False,
               progress: Callable[[str], None] | None = None,
               frames: Mapping[str, pl.LazyFrame] | None = None,
               write_per_query: bool = True, per_query_values: bool = False) -> RunResult:
    """Evaluate a config: one pass over the inputs, gates applied, no printing.

    ``curves`` also computes the curve tables (ROC/PR points, residuals) in the same pass;
    ``progress`` is told what the run is doing (for a progress display); ``frames``
    (``predictions``/``truth``, from the Python API) are read instead of the config's paths.
    The config's ``per_query`` table is written (checked before the run) unless
    ``write_per_query`` is false: the CLI then writes it with its other outputs, all or none.
    """
    if cfg.systems:
        return run_systems(cfg, gating=gating, curves=curves, progress=progress)
    say = progress or (lambda _msg: None)
    run = _setup(cfg, frames, say, curves=curves, write_per_query=write_per_query,
                 per_query_values=per_query_values)
    rs = run.prep.plan.resampling
    say(f"computing {len(run.prep.plan.metrics)} metric(s) in one pass"
        + (f", with {rs.level:.0%} intervals" if rs is not None else ""))
    _startup.resume()
    ev = run.prep.engine.run(run.prep.plan, run.prep.aligned, run.extra, run.ctx)
    return _finish(run, ev, gating, say)


@dataclass
class _Run:
    """A run planned and aligned, before its pass (see :func:`run_config`)."""

    cfg: Config
    prep: Prepared
    seg_gates: Any
    asks: Asks
    ctx: Context
    extra: dict[str, Any]
    targets: Targets | None


def _setup(cfg: Config, frames: Mapping[str, pl.LazyFrame] | None,
           say: Callable[[str], None], *, curves: bool, write_per_query: bool,
           per_query_values: bool) -> _Run:
    targets = output_targets(cfg) if write_per_query and cfg.per_query is not None else None
    say("reading the inputs' schemas and aligning them")
    prep = prepare(cfg, frames, say)
    seg_gates = segment_gates(cfg, [pm.id for pm in prep.plan.metrics])
    task = prep.plan.task
    asks = Asks(curves=curves or cfg.curves is not None,
                per_query=cfg.per_query is not None or per_query_values,
                options=prep.plan.options,
                metrics=tuple((pm.id, pm.metric, pm.params) for pm in prep.plan.metrics))
    if asks.per_query and not task.per_query:
        able = [t.name for t in prep.registry.tasks.values() if t.per_query]
        raise ConfigError(
            f"per_query: per-query values are written for the {', '.join(able)} "
            f"task{'s' if len(able) > 1 else ''} (this run: task {cfg.task})",
            hint="drop per_query (--per-query)")
    ctx = run_context(prep.plan, prep.aligned, prep.engine.name)
    extra = dict(task.extras(ctx, [(pm.id, pm.metric, pm.params) for pm in prep.plan.metrics],
                             asks))
    return _Run(cfg, prep, seg_gates, asks, ctx, extra, targets)


def _finish(run: _Run, ev: Evaluated, gating: bool, say: Callable[[str], None]) -> RunResult:
    """The run's result from its pass: the task's extras, gates, the baseline report."""
    cfg, prep, extra = run.cfg, run.prep, run.extra
    task = prep.plan.task
    metrics, segments, alignment, engine, uncertainty, material = ev
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
        unused_columns=dict(a.unused),
        uncertainty=uncertainty,
        material=material,
    )
    if cfg.report_statistics:
        assert material is not None  # (statistics turn the intervals on)
        result.statistics = material.stored([m.value for m in metrics])
    added = task.finish(extra, run.asks)
    result.alignment.extra.update(added.alignment)
    result.per_query = added.per_query
    for m in result.metrics:
        if m.id in added.values:  # a task's transformation of the values (z-scores)
            m.value, m.ci, m.gate_ci, m.intervals = added.values[m.id], None, None, {}
            m.notes.append(added.values_note)
    result.curves = added.curves
    result.curve_areas = added.areas
    evaluate_gates(result, run.seg_gates)
    if cfg.baseline is not None:
        say("comparing with the baseline")
        add_baseline(result, compare_baseline(result, cfg.baseline,
                                              Path(cfg.resolve(cfg.baseline.report))))
    if not gating:
        for m in result.metrics:
            m.passed = None
    if run.targets is not None:
        write_all(result, run.targets)
    return result


def run_systems(cfg: Config, *, gating: bool = True, curves: bool = False,
                progress: Callable[[str], None] | None = None) -> RunResult:
    """Several systems on one truth (``predictions: {name: file, ...}``): each evaluated with
    the same intervals and seed (so that a unit is in the same random group for all), its
    gates applied, then each compared with the baseline system (see
    :mod:`evalcli.decide.systems`). The result is the baseline system's, with every system's
    in ``systems`` and the comparison; a gate that fails for any system fails the run."""
    from evalcli.decide.systems import compare_systems, gate_systems, prefetch_delong

    assert cfg.systems
    say = progress or (lambda _msg: None)
    comp = cfg.comparison or ComparisonSettings()
    baseline = comp.baseline or next(iter(cfg.systems))
    u = cfg.uncertainty or Uncertainty()
    runs: dict[str, _Run] = {}
    for name, spec in cfg.systems.items():
        say(f"system {name}: {spec.path}")
        one = cfg.model_copy(update={"systems": None, "comparison": None, "predictions": spec,
                                     "uncertainty": u})
        runs[name] = _setup(one, None, say, curves=curves and name == baseline,
                            write_per_query=True, per_query_values=cfg.task == "ranking")
    # the paired closed-form tests (McNemar, DeLong) read the rows of both systems
    by_row = cfg.task == "binary" and comp.test == "auto" and u.unit in ("auto", "rows")
    joint = None
    _startup.resume()
    if all(r.prep.engine.name == "polars" for r in runs.values()):
        from evalcli.engine.polars_engine import run_together

        first = next(iter(runs.values())).prep.plan
        say(f"computing {len(first.metrics)} metric(s) of {len(runs)} systems in one pass, "
            f"with {u.level:.0%} intervals")
        task = first.task
        ids: list[str] = []

        def rows_of(aligned: Sequence[Aligned]) -> list[pl.LazyFrame]:
            if any("weight" in a.roles for a in aligned):
                return []  # (the tests take unweighted rows; the paired bootstrap covers them)
            ids.extend(aligned[0].ids)
            return [_test_rows(task, first.options, a) for a in aligned]

        def early(frames: list[pl.DataFrame]) -> None:
            # the systems' rows side by side as soon as they are read (before the pass), and
            # DeLong's sorts started in a thread while the pass and the intervals run
            nonlocal joint
            if not frames:  # (weighted rows: no closed-form paired tests)
                return
            joint = side_by_side(dict(zip(runs, frames, strict=True)), baseline, ids)
            if any(pm.metric.name == "auroc" for pm in first.metrics):
                ahead.update(prefetch_delong(joint))

        ahead: dict[str, Any] = {}
        evs, _ = run_together([(r.prep.plan, r.prep.aligned, r.extra, r.ctx)
                               for r in runs.values()], rows_of if by_row else None,
                              early if by_row else None)
        results = {name: _finish(runs[name], ev, gating, say)
                   for name, ev in zip(runs, evs, strict=True)}
    else:  # streaming, Spark: a pass per system, and one more reading the rows side by side
        results = {}
        for name, run in runs.items():
            ev = run.prep.engine.run(run.prep.plan, run.prep.aligned, run.extra, run.ctx)
            results[name] = _finish(run, ev, gating, say)
        if by_row:
            say("reading the systems' rows side by side (McNemar, DeLong's paired test)")
            joint = binary_rows_side_by_side(cfg, baseline)
    say("comparing the systems")
    result = results[baseline]
    result.systems = results
    result.comparison = compare_systems(results, baseline, comp.test, comp.correction,
                                        comp.alpha, u.level, u.seed, joint=joint,
                                        delong_ahead=ahead if joint else None)
    result.failures = [f"{name}: {f}" for name, r in results.items() for f in r.failures]
    keys = ("max_drop", "max_relative_drop", "min_improvement", "min_relative_improvement")
    gates = {m.id: ChangeGate.of(e.model_dump())
             for e, m in zip(cfg.metrics, result.metrics, strict=False)
             if any(getattr(e, k) is not None for k in keys)}
    result.failures += gate_systems(result.comparison, gates)
    result.passed = not result.failures if gating else True
    return result


def _test_rows(task: Task, options: Mapping[str, Any], a: Aligned) -> pl.LazyFrame:
    """A binary system's rows as the paired tests read them: its join keys, the label, the
    score and the hard prediction (where given), normalized as the family reads them."""
    from evalcli.metrics.task import TaskInput

    cols = [c for c in ("score", "prediction") if c in a.roles]
    return task.normalize(a.lf, TaskInput(dict(options), a.roles, a.schema)).select(
        *a.ids, "label", *cols)


def side_by_side(frames: Mapping[str, pl.DataFrame], baseline: str, ids: Sequence[str]
                 ) -> dict[str, pl.DataFrame]:
    """Each system's rows (:func:`_test_rows`) beside the baseline system's, on the rows both
    have: ``label``, ``score``, ``prediction`` and the other system's ``score:b``,
    ``prediction:b``. Systems aligned to the same truth in memory hold the same keys in the
    same order, and are put side by side as they are; others are joined on their keys, and
    rows without keys pair by position."""
    import polars as pl

    base = frames[baseline]
    out = {}
    for name, df in frames.items():
        if name == baseline:
            continue
        other = df.drop("label").rename({c: f"{c}:b" for c in df.columns
                                         if c != "label" and c not in ids})
        if ids and base.height == df.height and all(
                base.get_column(k).equals(df.get_column(k)) for k in ids):
            out[name] = pl.concat([base.drop(ids), other.drop(ids)], how="horizontal")
        elif ids:
            out[name] = base.join(other, on=list(ids), how="inner").drop(ids)
        else:  # one file per system, no key: rows pair by position
            out[name] = pl.concat([base, other], how="horizontal")
    return out


def binary_rows_side_by_side(cfg: Config, baseline: str) -> dict[str, pl.DataFrame] | None:
    """Each binary system's rows beside the baseline system's (:func:`side_by_side`), from
    one more pass over the files, for the engines that do not align every system in memory.
    ``None`` for weighted runs (the tests take unweighted rows; the paired bootstrap covers
    weights)."""
    import polars as pl

    from evalcli.engine.align import materialize

    assert cfg.systems
    lazy: dict[str, pl.LazyFrame] = {}
    ids: list[str] = []
    for name, spec in cfg.systems.items():
        one = cfg.model_copy(update={"systems": None, "comparison": None, "predictions": spec,
                                     "uncertainty": None})
        prep = prepare(one)
        a = materialize(prep.aligned, prep.plan.task.join)
        if "weight" in a.roles:
            return None
        ids = list(a.ids)
        lazy[name] = _test_rows(prep.plan.task, prep.plan.options, a)
    return side_by_side(dict(zip(lazy, pl.collect_all(list(lazy.values())), strict=True)),
                        baseline, ids)


def input_paths(cfg: Config) -> list[str]:
    """Every file the run reads (resolved): inputs, side files, the baseline report, plugin
    files. No output may be one of them."""
    paths = [cfg.resolve(s.path) for s in (cfg.predictions, cfg.truth) if s is not None]
    paths += [cfg.resolve(s.path) for s in (cfg.systems or {}).values()]
    paths += [cfg.resolve(str(v)) for k, v in cfg.options.items()
              if k.endswith("_file") and isinstance(v, str) and v]
    if cfg.baseline is not None:
        paths.append(cfg.resolve(cfg.baseline.report))
    paths += [cfg.resolve(p) for p in cfg.plugins]
    return paths


def output_targets(cfg: Config, reports: Sequence[Path | str] = (),
                   curves: tuple[Path, str] | None = None,
                   also_inputs: Sequence[str | Path] = ()) -> Targets:
    """The run's outputs: ``reports`` (the config's ``report:`` included by the caller), the
    curves' folder and format, and the config's per-query table; checked against the inputs
    and ``also_inputs`` (the config file) (see :func:`evalcli.report.outputs.check_targets`)."""
    targets = Targets(
        reports=tuple(Path(p) for p in reports), curves=curves,
        per_query=Path(cfg.resolve(cfg.per_query)) if cfg.per_query is not None else None)
    check_targets(targets, [*input_paths(cfg), *(str(p) for p in also_inputs)])
    return targets


def run_path(path: Path, *, predictions: str | None = None, truth: str | None = None,
             gating: bool = True, metrics: Sequence[str] = (), baseline: str | None = None,
             curves: bool = False, progress: Callable[[str], None] | None = None,
             per_query: str | None = None) -> RunResult:
    cfg = load_config(path)
    cfg = override(cfg, predictions=predictions, truth=truth, metrics=metrics,
                   baseline=baseline, per_query=per_query)
    return run_config(cfg, gating=gating, curves=curves, progress=progress)


def override(cfg: Config, *, predictions: str | None = None, truth: str | None = None,
             metrics: Sequence[str] = (), baseline: str | None = None,
             engine: str | None = None, per_query: str | None = None,
             verbose: bool = False, ci: Mapping[str, Any] | None = None) -> Config:
    """Command-line overrides of a config's inputs (paths as given, relative to the cwd);
    ``verbose`` (``-v``) also shows Spark's own log. ``ci``: interval settings to turn on
    (``{}``: the config's, or the defaults) or change."""
    update: dict[str, object] = {}
    if ci is not None:
        given = {k: v for k, v in ci.items() if v is not None}
        base = cfg.uncertainty.model_dump() if cfg.uncertainty is not None else {}
        try:
            update["uncertainty"] = Uncertainty.model_validate({**base, **given})
        except ValidationError as exc:
            first = exc.errors()[0]
            flag = "--" + {"level": "ci-level", "method": "ci-method", "unit": "ci-unit"}.get(
                str(first["loc"][0]), str(first["loc"][0]))
            raise ConfigError(f"{flag}: {first['msg']}",
                              hint="see evalcli run --help") from None
    if verbose:
        update["spark"] = cfg.spark.model_copy(update={"log": "console"})
    if engine is not None:
        update["engine"] = engine
    if baseline is not None:
        report = str(Path(baseline).resolve())
        update["baseline"] = cfg.baseline.model_copy(update={"report": report}) \
            if cfg.baseline is not None else Baseline(report=report)
    if predictions is not None:
        update["predictions"] = cfg.predictions.model_copy(
            update={"path": input_path(predictions)})
    if truth is not None:
        spec = cfg.truth or InputSpec(path=truth)
        update["truth"] = spec.model_copy(update={"path": input_path(truth)})
    if metrics:
        update["metrics"] = [MetricEntry.model_validate(m) for m in metrics]
    if per_query is not None:
        update["per_query"] = str(Path(per_query).resolve())
    return cfg.model_copy(update=update) if update else cfg
