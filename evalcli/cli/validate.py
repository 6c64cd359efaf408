"""``evalcli validate CONFIG.yaml``: check the config and the files' columns, compute nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalcli.cli.common import examples, say, stdout, user_errors

EPILOG = examples("evalcli validate configs/binary-gated.yaml",
                  "evalcli validate my-config.yaml --quiet")


@user_errors
def validate(
    config: Annotated[Path, typer.Argument(
        metavar="CONFIG", help="The YAML config to check.", dir_okay=False)],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No messages on stderr.")] = False,
) -> None:
    """Check a config and its files' columns without computing.

    Checks the keys, metric names and parameters, files, columns and their types, and the
    report paths.

    The config's plugin files run (to register their metrics): each is named on stderr.
    """
    from rich.markup import escape

    from evalcli.config import load_config
    from evalcli.decide.gates import segment_gates
    from evalcli.metrics.registry import on_plugin_file
    from evalcli.result import display_path
    from evalcli.runner import prepare

    cfg = load_config(config)
    # what run refuses before computing: outputs over an input, in a missing folder... (not
    # the baseline report, which 'run --baseline' may replace: docs/ci.md)
    from evalcli.cli.run import curves_target
    from evalcli.runner import output_targets

    output_targets(cfg, [Path(cfg.resolve(p)) for p in cfg.report],
                   curves_target(cfg, None, None), also_inputs=[config])
    with on_plugin_file(lambda path: None if quiet else say(f"running plugin code: {path}")):
        prep = prepare(cfg)
        for name, spec in list((cfg.systems or {}).items())[1:]:  # every other system too
            prepare(cfg.model_copy(update={"systems": None, "comparison": None,
                                           "predictions": spec}))
            if not quiet:
                say(f"system {name}: {spec.path}: columns checked")
    seg_gates = segment_gates(cfg, [pm.id for pm in prep.plan.metrics])
    a = prep.aligned
    out = stdout()
    out.print(f"[green]✓[/] {escape(str(config))}: task {cfg.task}, "
              f"{len(prep.plan.metrics)} metric(s)"
              + (" (the task's default set)" if prep.plan.defaulted else ""))
    if cfg.systems:
        base = cfg.comparison.baseline if cfg.comparison and cfg.comparison.baseline else \
            next(iter(cfg.systems))
        out.print(escape(f"  systems     ← {', '.join(cfg.systems)} (baseline: {base})"))

    def rel(path: str) -> str:
        return " and ".join(display_path(p) for p in path.split(" and ")) if path else ""

    for role, col in sorted(a.columns.items()):
        out.print(escape(f"  {role:<11} ← {col} ({a.schema[role]}) in "
                         f"{rel(a.role_file.get(role, ''))}"))
    if a.ids:
        out.print(escape(f"  {'id':<11} ← {', '.join(a.ids)}"))
    for seg in a.segments:
        out.print(escape(f"  {'segment':<11} ← {seg}"))
    for pm in prep.plan.metrics:
        gate = f"  gate {pm.gate.describe()}" if pm.gate else ""
        per_segment = seg_gates.get(pm.id, {})
        if per_segment:
            gate += "  per segment: " + ", ".join(
                f"{label}: {g.describe()}" for label, g in per_segment.items())
        out.print(escape(f"  metric {pm.id}{gate}"))
