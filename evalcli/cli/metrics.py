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
    help="List the metrics, or show one in full.\n\nThe list gives each metric's family, "
    "parameters with their defaults, direction, one-line definition and origin.",
    invoke_without_command=True,
    no_args_is_help=False,
)

PluginOption = Annotated[list[Path] | None, typer.Option(
    "--plugin", "-P", help="Also load this local plugin file, as a config's 'plugins:' does "
    "(runs its code). Repeatable.", dir_okay=False, metavar="FILE.py")]


def _params(m: Metric) -> str:
    """``name=default`` for each parameter; a nullable one without a default shows its name
    alone (unset: the convention its help describes, e.g. chosen by a compat preset)."""
    out = []
    for p in m.params:
        if p.default is None:
            out.append(p.name if p.nullable else f"{p.name}=required")
        else:
            out.append(f"{p.name}={p.default}")
    return " ".join(out) or "—"


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
    out = stdout()
    families = [family] if family else list(dict.fromkeys(m.family for m in reg))
    show_origin = any(m.origin != "built-in" for m in reg)
    for fam in families:
        t = Table(box=box.SIMPLE_HEAVY, title=f"{fam}: {escape(reg.task(fam).summary)}",
                  title_justify="left", title_style="bold")
        t.add_column("metric", overflow="fold", ratio=2)
        t.add_column("better", no_wrap=True)
        t.add_column("definition", overflow="fold", ratio=3)
        t.add_column("parameters (defaults)", overflow="fold", ratio=3, style="dim")
        if show_origin:
            t.add_column("origin", overflow="fold", ratio=1)
        for m in reg:
            if m.family != fam:
                continue
            name = escape(m.name) + (f"\n[dim]{escape(', '.join(m.aliases))}[/]"
                                     if m.aliases else "")
            row = [name, m.direction, escape(m.summary), escape(_params(m))]
            if show_origin:
                row.append(escape(_origin(m)))
            t.add_row(*row)
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
    from evalcli.errors import MetricError, clip, did_you_mean

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
            f"unknown metric '{clip(name, 100)}'.{did_you_mean(base, reg.names(family))}{broken}",
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
