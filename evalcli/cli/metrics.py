"""``evalcli metrics``: list the registered metrics; ``evalcli metrics show NAME``: one in full.

Both show where each metric comes from (``built-in``, an installed plugin, or a plugin file
given with ``--plugin``), and warn on stderr about installed plugins that failed to load.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalcli.cli.common import stderr, stdout, user_errors

if TYPE_CHECKING:
    from evalcli.metrics.base import Metric
    from evalcli.metrics.registry import Registry

app = typer.Typer(
    help="List the metrics (name, family, parameters, direction, definition, origin), or show "
    "one.",
    invoke_without_command=True,
    no_args_is_help=False,
)

PluginOption = Annotated[list[Path] | None, typer.Option(
    "--plugin", "-P", help="Also load this local plugin file, as a config's 'plugins:' does "
    "(runs its code). Repeatable.", dir_okay=False, metavar="FILE.py")]


def _params(m: Metric) -> str:
    return ", ".join(p.name + ("=required" if p.default is None and not p.nullable
                               else f"={p.default}") for p in m.params) or "—"


def _registry(plugins: list[Path] | None) -> Registry:
    from evalcli.metrics.registry import get_registry

    reg = get_registry().with_plugin_files(plugins or [])
    err = stderr()
    for b in reg.broken:
        from rich.markup import escape

        err.print(f"[yellow]warning:[/] {escape(b.describe())}", soft_wrap=True)
    return reg


def _origin(m: Metric) -> str:
    return m.origin.removeprefix("plugin ")


@app.callback(invoke_without_command=True, epilog=(
    "Examples:\n\n  evalcli metrics\n\n  evalcli metrics --family ranking\n\n"
    "  evalcli metrics show auroc\n\n  evalcli metrics --plugin my_metrics.py"))
@user_errors
def list_metrics(
    ctx: typer.Context,
    family: Annotated[str | None, typer.Option(
        "--family", "-f", help="Only this family (binary, multiclass, ...).")] = None,
    plugin: PluginOption = None,
) -> None:
    """List every registered metric."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = plugin
        return
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    reg = _registry(plugin)
    if family is not None:
        reg.task(family)
    t = Table(box=box.SIMPLE_HEAVY)
    for col in ("metric", "family", "parameters (defaults)", "better", "definition", "origin"):
        t.add_column(col, overflow="fold")
    for m in reg:
        if family is not None and m.family != family:
            continue
        t.add_row(escape(m.name + (f" ({', '.join(m.aliases)})" if m.aliases else "")),
                  m.family, escape(_params(m)), m.direction, escape(m.summary),
                  escape(_origin(m)))
    out = stdout()
    out.print(t)
    out.print("[dim]evalcli metrics show NAME for the formula and conventions[/]")


@app.command("show", epilog="Examples:\n\n  evalcli metrics show ndcg\n\n"
             "  evalcli metrics show f1 --family multiclass\n\n"
             "  evalcli metrics show my_kpi --plugin my_metrics.py")
@user_errors
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(
        help="Metric name or alias (an id such as ndcg@10 works).")],
    family: Annotated[str | None, typer.Option(
        "--family", "-f", help="The family, when the name exists in several.")] = None,
    plugin: PluginOption = None,
) -> None:
    """Print a metric's formula, parameters, conventions, peer and origin."""
    from rich.markup import escape
    from rich.table import Table

    from evalcli.config import parse_metric_id
    from evalcli.errors import MetricError, did_you_mean

    reg = _registry([*(ctx.obj or []), *(plugin or [])])
    base, _, _ = parse_metric_id(name)
    families = [family] if family else sorted(reg.tasks)
    if family:
        reg.task(family)
    found = []
    for fam in families:
        try:
            found.append(reg.get(fam, base))
        except MetricError:
            continue
    if not found:
        broken = ""
        if reg.broken:
            broken = " An installed plugin failed to load, and it may be one of its " \
                "metrics: " + "; ".join(
                b.describe() for b in reg.broken)
        raise MetricError(
            f"unknown metric '{name}'.{did_you_mean(base, reg.names(family))}{broken}",
            hint="run 'evalcli metrics' to list them")
    out = stdout()
    for m in found:
        out.print(f"[bold]{escape(m.name)}[/] ({m.family}) — {escape(m.summary)}")
        if m.aliases:
            out.print(f"  aliases: {escape(', '.join(m.aliases))}")
        out.print(f"  formula: {escape(m.formula)}")
        out.print(f"  better: {m.direction}" + (
            f"; range: [{m.range[0] if m.range[0] is not None else '-∞'}, "
            f"{m.range[1] if m.range[1] is not None else '∞'}]" if m.range != (None, None) else ""))
        needs = " and ".join(" or ".join(sorted(g)) for g in m.needs)
        if needs:
            out.print(f"  needs: {needs}")
        if m.cutoff:
            out.print(f"  cut-off: {m.name}@K sets '{m.cutoff}'")
        if m.params:
            t = Table(box=None, padding=(0, 2), show_header=True)
            for c in ("parameter", "type", "default", "allowed", "meaning"):
                t.add_column(c, overflow="fold")
            for p in m.params:
                default = "required" if p.default is None and not p.nullable else repr(p.default)
                t.add_row(p.name, p.type.__name__, escape(default),
                          escape(p.constraint() or "—"), escape(p.help))
            out.print("  parameters:")
            out.print(t)
        if m.conventions:
            out.print(f"  conventions: {escape(m.conventions)}")
        if m.peer:
            out.print(f"  defaults match: {escape(m.peer)}")
        out.print(f"  origin: {escape(m.origin)}")
        out.print("")
