"""``evalcli validate CONFIG.yaml``: check the config and the files' columns, compute nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalcli.cli.common import stdout, user_errors

EPILOG = "Examples:\n\n  evalcli validate configs/binary-gated.yaml"


@user_errors
def validate(
    config: Annotated[Path, typer.Argument(help="YAML config to check.", dir_okay=False)],
) -> None:
    """Check a config and its files' columns without computing.

    Checks the keys, the metric names and parameters, the files, the columns and their types.
    """
    from evalcli.config import load_config
    from evalcli.evaluate import prepare

    cfg = load_config(config)
    prep = prepare(cfg)
    a = prep.aligned
    out = stdout()
    out.print(f"[green]✓[/] {config}: task {cfg.task}, {len(prep.plan.metrics)} metric(s)"
              + (" (the task's default set)" if prep.plan.defaulted else ""))
    for role, col in sorted(a.columns.items()):
        out.print(f"  {role:<11} ← {col} ({a.schema[role]}) in {a.role_file.get(role, '')}")
    if a.ids:
        out.print(f"  {'id':<11} ← {', '.join(a.ids)}")
    for seg in a.segments:
        out.print(f"  {'segment':<11} ← {seg}")
    for pm in prep.plan.metrics:
        gate = f"  gate {pm.gate.describe()}" if pm.gate else ""
        out.print(f"  metric {pm.id}{gate}")
