"""``evalcli metrics``: list the registered metrics; ``evalcli metrics show NAME``: one in full;
``evalcli metrics --markdown``: the metric reference as Markdown (docs/metrics.md is that text
for the built-ins, and a test keeps it so); ``evalcli metrics --presets``: the compat presets
as Markdown (docs/presets.md).

All three show where each metric comes from (``built-in``, an installed plugin, or a plugin file
given with ``--plugin``), and warn on stderr about installed plugins that failed to load.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalcli.cli.common import HelpCommand, HelpGroup, examples, stderr, stdout, user_errors

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

    from evalcli.metrics.base import Metric
    from evalcli.metrics.registry import Registry
    from evalcli.report.table import Grid

app = typer.Typer(
    help="List the metrics, or show one in full.\n\nThe list gives each metric's family, "
    "parameters with their defaults, direction, one-line definition and origin; --markdown "
    "prints the whole reference, examples included, as Markdown.",
    invoke_without_command=True,
    no_args_is_help=False,
    cls=HelpGroup,
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


@app.callback(invoke_without_command=True, epilog=examples(
    "evalcli metrics", "evalcli metrics --family ranking", "evalcli metrics show auroc",
    "evalcli metrics --plugin my_metrics.py", "evalcli metrics --markdown > docs/metrics.md",
    "evalcli metrics --presets > docs/presets.md"))
@user_errors
def list_metrics(
    ctx: typer.Context,
    family: Annotated[str | None, typer.Option(
        "--family", "-f", metavar="FAMILY", help="Only this family: binary, multiclass, "
        "multilabel, ranking, regression or a plugin's.")] = None,
    plugin: PluginOption = None,
    markdown: Annotated[bool, typer.Option(
        "--markdown", help="Print the metric reference as Markdown: every metric in full, "
        "with its example (docs/metrics.md is this, for the built-ins).")] = False,
    presets: Annotated[bool, typer.Option(
        "--presets", help="Print the compat presets as Markdown: per family and peer, each "
        "parameter a preset sets, its value and the default it replaces (docs/presets.md).")
    ] = False,
) -> None:
    """List every registered metric."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = plugin
        return
    from rich.text import Text

    from evalcli.report.table import Fit

    reg = _registry(plugin)
    if family is not None:
        reg.task(family)
    if markdown:
        typer.echo(reference_markdown(reg, family), nl=False)
        return
    if presets:
        from evalcli.metrics.presets import presets_markdown

        typer.echo(presets_markdown(reg), nl=False)
        return
    out = stdout()
    families = [family] if family else list(dict.fromkeys(m.family for m in reg))
    show_origin = any(m.origin != "built-in" for m in reg)
    for fam in families:
        members = [m for m in reg if m.family == fam]
        wide, narrow = (_metrics_grid(members, show_origin, params_apart=apart)
                        for apart in (True, False))
        out.print(Text(f"{fam}: {reg.task(fam).summary}", style="bold"))
        out.print(Fit(wide.fit, narrow.fit, narrow.stacked, last=narrow.fitted))
    out.print(Text("evalcli metrics show NAME for the formula and conventions", style="dim"))


def _metrics_grid(members: list[Metric], show_origin: bool, params_apart: bool) -> Grid:
    """The metrics of a family: parameters in a column of their own (``params_apart``) or on
    a line below the definition. A parameter (``eps=2.220446049250313e-16``) never breaks."""
    from rich import box
    from rich.text import Text

    from evalcli.report.table import Col, Grid

    cols = [Col("metric", wrap=True, style="bold"), Col("better"),
            Col("definition", wrap=True)]
    cols += [Col("parameters (defaults)", wrap=True, style="dim")] if params_apart else []
    cols += [Col("origin", wrap=True)] if show_origin else []
    g = Grid(cols, box=box.SIMPLE_HEAVY)
    for m in members:
        name = Text(m.name, style="bold")
        if m.aliases:
            name.append("\n" + ", ".join(m.aliases), style="dim")
        definition = Text(m.summary)
        if not params_apart:
            definition.append("\n" + _params(m), style="dim")
        row: list[str | Text] = [name, m.direction, definition]
        if params_apart:
            row.append(_params(m))
        if show_origin:
            row.append(_origin(m))
        g.add_row(*row)
    return g


@app.command("show", cls=HelpCommand, epilog=examples(
    "evalcli metrics show ndcg", "evalcli metrics show f1 --family multiclass",
    "evalcli metrics show my_kpi --plugin my_metrics.py"))
@user_errors
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(
        metavar="METRIC", help="A metric name or alias (an id such as ndcg@10 works too).")],
    family: Annotated[str | None, typer.Option(
        "--family", "-f", metavar="FAMILY", help="The family, when the name exists in "
        "several.")] = None,
    plugin: PluginOption = None,
) -> None:
    """Print a metric's formula, parameters, conventions, peer and origin."""
    from rich.text import Text

    from evalcli.config import parse_metric_id
    from evalcli.errors import MetricError, clip, did_you_mean

    reg = _registry([*(ctx.obj or []), *(plugin or [])])
    base, _, _ = parse_metric_id(name)
    families = [family] if family else sorted(reg.tasks)
    if family:
        reg.task(family)
    found = []
    retired = []
    for fam in families:
        try:
            found.append(reg.get(fam, base))
        except MetricError as e:
            if "no longer an alias" in str(e):
                retired.append(e)
            continue
    if not found and retired:
        raise retired[0]
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
        out.print(Text(f"{m.name} ({m.family}) — {m.summary}", style="bold"))
        out.print(_details(m))
        out.print("")


def interval_text(m: Metric) -> str:
    """How the metric's confidence interval is computed (``uncertainty:``, ``--ci``)."""
    return m.interval_doc or ("bootstrap over random groups of units (percentile; "
                              "method: bca on request); see docs/uncertainty.md")


def _details(m: Metric) -> RenderableType:
    """A metric in full: formula, direction, needs, parameters (a table when it fits, else
    one block per parameter), conventions, peer and origin."""
    from rich.console import Group

    from evalcli.report.table import Fit, key_values

    head: list[tuple[str, str]] = []
    if m.aliases:
        head.append(("aliases", ", ".join(m.aliases)))
    for old, instead in m.retired:
        head.append(("not an alias", f"{old}: {instead}"))
    head.append(("formula", m.formula))
    rng = ""
    if m.range != (None, None):
        rng = (f"; range: [{m.range[0] if m.range[0] is not None else '-∞'}, "
               f"{m.range[1] if m.range[1] is not None else '∞'}]")
    head.append(("better", m.direction + rng))
    needs = " and ".join(" or ".join(sorted(g)) for g in m.needs)
    if needs:
        head.append(("needs", needs))
    if m.cutoff:
        head.append(("cut-off", f"{m.name}@K sets '{m.cutoff}'"))
    tail: list[tuple[str, str]] = []
    if m.conventions:
        tail.append(("conventions", m.conventions))
    if m.peer:
        tail.append(("defaults match", m.peer))
    tail.append(("interval", interval_text(m)))
    tail.append(("origin", m.origin))
    items: list[RenderableType] = [key_values(head)]
    from rich.padding import Padding

    if m.params:
        grid = _params_grid(m)
        items += [key_values([("parameters", "")]),
                  Padding(Fit(grid.fit, last=lambda w: _params_blocks(m)), (0, 0, 0, 3))]
    items.append(key_values(tail))
    if m.example.strip():
        from rich.text import Text

        items += [key_values([("example", "")]),
                  Padding(Text(example_text(m), overflow="fold"), (0, 0, 0, 3))]
    return Group(*items)


def _param_default(p: Any) -> str:
    return "required" if p.default is None and not p.nullable else repr(p.default)


def _params_grid(m: Metric) -> Grid:
    from evalcli.report.table import Col, Grid

    g = Grid([Col("parameter"), Col("type"), Col("default"), Col("allowed", wrap=True),
              Col("meaning", wrap=True)], box=None)
    for p in m.params:
        g.add_row(p.name, p.type.__name__, _param_default(p), p.constraint() or "—", p.help)
    return g


def _params_blocks(m: Metric) -> RenderableType:
    """One block per parameter: its name, type, default and allowed values on one line, its
    meaning below."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    blocks: list[RenderableType] = []
    for p in m.params:
        line = Text(p.name, style="bold")
        line.append(f"  {p.type.__name__}, default {_param_default(p)}"
                    + (f"; {p.constraint()}" if p.constraint() else ""), style="dim")
        blocks += [Padding(line, (0, 0, 0, 1)), Padding(Text(p.help), (0, 0, 0, 3))]
    return Group(*blocks)


# --------------------------------------------------------------------------- the reference

def example_text(m: Metric) -> str:
    """The metric's example as it reads: dedented (it is indented as its declaration)."""
    import inspect

    return inspect.cleandoc(m.example)


def _range(m: Metric) -> str:
    lo, hi = m.range
    if (lo, hi) == (None, None):
        return ""
    return f"; range [{'−∞' if lo is None else f'{lo:g}'}, {'∞' if hi is None else f'{hi:g}'}]"


def _md(text: str, cell: bool = False) -> str:
    """Prose as Markdown shows it as written: emphasis and tag characters escaped, and in a
    table cell the column separator too."""
    text = text.replace("\\", "\\\\").replace("*", "\\*").replace("<", "&lt;")
    return text.replace("|", "\\|") if cell else text


def _code(text: str, cell: bool = False) -> str:
    """An inline code span (a table cell's ``|`` escaped, as GitHub's tables need)."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    text = text.replace("|", "\\|") if cell else text
    return f"{fence}{pad}{text}{pad}{fence}"


def anchor(m: Metric) -> str:
    """The id of a metric's section in the reference: ``family-name``."""
    return f"{m.family}-{m.name}"


def reference_markdown(reg: Registry, family: str | None = None) -> str:
    """The metric reference: per family, an index, then each metric with its aliases,
    formula, direction and range, the columns it needs, its parameters (type, default,
    allowed values, meaning), conventions, the peer its defaults match, and its example."""
    families = [family] if family else list(dict.fromkeys(m.family for m in reg))
    out = [
        "# Metric reference",
        "",
        "<!-- Generated from the metric registry by `evalcli metrics --markdown > "
        "docs/metrics.md`. Do not edit: tests/test_metric_docs.py compares. -->",
        "",
        "Every metric by family: its name and aliases, formula, direction and range, the "
        "columns it needs, its parameters with their defaults, the conventions where the "
        "usual tools disagree, the peer its defaults match, and an example. Each example runs "
        "in the tests, its values checked against scikit-learn, trec_eval or the arithmetic "
        "written out. `evalcli metrics show NAME` prints the same in the terminal.",
        "",
        "Families: " + " · ".join(f"[{f}](#{f})" for f in families),
        "",
    ]
    for fam in families:
        members = [m for m in reg if m.family == fam]
        out += [f"## {fam}", "", _md(reg.task(fam).summary), "",
                "| metric | aliases | better | definition |", "|---|---|---|---|"]
        out += [f"| [{m.name}](#{anchor(m)}) | {', '.join(m.aliases)} | {m.direction} | "
                f"{_md(m.summary, cell=True)} |" for m in members]
        out.append("")
        for m in members:
            out += _metric_markdown(m)
    return "\n".join(out).rstrip("\n") + "\n"


def _metric_markdown(m: Metric) -> list[str]:
    out = [f'<a id="{anchor(m)}"></a>', "", f"### {m.name}", "", _md(m.summary), ""]
    facts = []
    if m.aliases:
        facts.append("aliases: " + ", ".join(_code(a) for a in m.aliases))
    for old, instead in m.retired:
        facts.append(f"not an alias: {_code(old)} ({_md(instead)})")
    facts.append("formula: " + _code(m.formula))
    facts.append("better: " + m.direction + _range(m))
    needs = " and ".join(" or ".join(f"`{r}`" for r in sorted(g)) for g in m.needs)
    if needs:
        facts.append("needs: " + needs)
    if m.cutoff:
        facts.append(f"cut-off: `{m.name}@K` sets `{m.cutoff}`")
    if m.peer:
        facts.append("defaults match: " + _md(m.peer))
    facts.append("interval: " + _md(interval_text(m)))
    if m.origin != "built-in":
        facts.append("origin: " + _md(m.origin))
    out += [f"- {f}" for f in facts] + [""]
    if m.params:
        out += ["| parameter | type | default | allowed | meaning |", "|---|---|---|---|---|"]
        out += [f"| `{p.name}` | {p.type.__name__} | {_code(_param_default(p), cell=True)} | "
                f"{_md(p.constraint(), cell=True) or '—'} | {_md(p.help, cell=True)} |"
                for p in m.params]
        out.append("")
    if m.conventions:
        out += [_md(m.conventions), ""]
    if m.example.strip():
        out += ["```pycon", example_text(m), "```", ""]
    return out
