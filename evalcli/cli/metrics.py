"""``evalcli metrics``: list the registered metrics; ``evalcli metrics show NAME``: one in full."""

from __future__ import annotations

from typing import Annotated

import typer

from evalcli.cli.common import stdout, user_errors

app = typer.Typer(
    help="List the metrics, or show one in full.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def _params(m: object) -> str:
    from evalcli.metrics.base import Metric

    assert isinstance(m, Metric)
    return ", ".join(f"{p.name}={p.default}" for p in m.params) or "—"


@app.callback(invoke_without_command=True, epilog=(
    "Examples:\n\n  evalcli metrics\n\n  evalcli metrics --family ranking\n\n"
    "  evalcli metrics show auroc"))
@user_errors
def list_metrics(
    ctx: typer.Context,
    family: Annotated[str | None, typer.Option(
        "--family", "-f", help="Only this family (binary, multiclass, ...).")] = None,
) -> None:
    """List every registered metric."""
    if ctx.invoked_subcommand is not None:
        return
    from rich import box
    from rich.table import Table

    from evalcli.metrics.registry import get_registry

    reg = get_registry()
    if family is not None:
        reg.task(family)
    t = Table(box=box.SIMPLE_HEAVY)
    for col in ("metric", "family", "parameters (defaults)", "better", "definition"):
        t.add_column(col, overflow="fold")
    show_origin = any(m.origin != "built-in" for m in reg)
    if show_origin:
        t.add_column("origin")
    for m in reg:
        if family is not None and m.family != family:
            continue
        row = [m.name + (f" ({', '.join(m.aliases)})" if m.aliases else ""), m.family,
               _params(m), m.direction, m.summary]
        if show_origin:
            row.append(m.origin)
        t.add_row(*row)
    out = stdout()
    out.print(t)
    for b in reg.broken:
        out.print(f"[yellow]plugin {b.name} failed to load:[/] {b.error}")
    out.print("[dim]evalcli metrics show NAME for the formula and conventions[/]")


@app.command("show", epilog="Examples:\n\n  evalcli metrics show ndcg\n\n"
             "  evalcli metrics show f1 --family multiclass")
@user_errors
def show(
    name: Annotated[str, typer.Argument(help="Metric name or alias (an id such as ndcg@10 works).")],
    family: Annotated[str | None, typer.Option(
        "--family", "-f", help="The family, when the name exists in several.")] = None,
) -> None:
    """Print a metric's formula, parameters, conventions and the peer its defaults match."""
    from rich.markup import escape
    from rich.table import Table

    from evalcli.config import parse_metric_id
    from evalcli.errors import MetricError, did_you_mean
    from evalcli.metrics.registry import get_registry

    reg = get_registry()
    base, _, _ = parse_metric_id(name)
    families = [family] if family else sorted(reg.tasks)
    found = []
    for fam in families:
        try:
            found.append(reg.get(fam, base))
        except MetricError:
            continue
    if not found:
        raise MetricError(f"unknown metric '{name}'.{did_you_mean(base, reg.names(family))}",
                          hint="run 'evalcli metrics' to list them")
    out = stdout()
    for m in found:
        out.print(f"[bold]{m.name}[/] ({m.family}) — {escape(m.summary)}")
        if m.aliases:
            out.print(f"  aliases: {', '.join(m.aliases)}")
        out.print(f"  formula: {escape(m.formula)}")
        out.print(f"  better: {m.direction}" + (
            f"; range: [{m.range[0] if m.range[0] is not None else '-∞'}, "
            f"{m.range[1] if m.range[1] is not None else '∞'}]" if m.range != (None, None) else ""))
        if m.cutoff:
            out.print(f"  cut-off: {m.name}@K sets '{m.cutoff}'")
        if m.params:
            t = Table(box=None, padding=(0, 2), show_header=True)
            for c in ("parameter", "type", "default", "allowed", "meaning"):
                t.add_column(c, overflow="fold")
            for p in m.params:
                t.add_row(p.name, p.type.__name__, repr(p.default), p.constraint() or "—",
                          escape(p.help))
            out.print("  parameters:")
            out.print(t)
        if m.conventions:
            out.print(f"  conventions: {escape(m.conventions)}")
        if m.peer:
            out.print(f"  defaults match: {escape(m.peer)}")
        out.print(f"  origin: {m.origin}")
        out.print("")
