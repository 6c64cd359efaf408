"""The terminal table (Rich): metrics with value, gate and pass/fail, then the alignment."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from evalcli.result import MetricResult, RunResult


def fmt_value(v: float | None) -> str:
    if v is None:
        return "undefined"
    if v == 0 or 1e-4 <= abs(v) < 1e6:
        return f"{v:.4f}"
    return f"{v:.4g}"


def _status(m: MetricResult) -> Text:
    if m.gate is None or m.passed is None:
        return Text("")
    return Text("pass", style="green") if m.passed else Text("FAIL", style="bold red")


def metrics_table(r: RunResult) -> Table:
    gated = any(m.gate is not None for m in r.metrics)
    verdict = ""
    if gated and r.gating:
        verdict = " — passed" if r.passed else f" — {len(r.failures)} gate(s) failed"
    t = Table(title=f"evalcli · {r.task}{verdict}", box=box.SIMPLE_HEAVY, title_justify="left")
    t.add_column("metric", style="bold")
    t.add_column("value", justify="right")
    if gated:
        t.add_column("gate")
        t.add_column("status")
    t.add_column("notes", style="dim", overflow="fold")
    for m in r.metrics:
        notes = "; ".join(m.notes)
        if "threshold" in m.details and m.metric == "peak_f1":
            notes = (f"at threshold {m.details['threshold']:.6g}; " + notes).rstrip("; ")
        row: list[RenderableType] = [Text(m.id), fmt_value(m.value)]
        if gated:
            row += [m.gate.describe() if m.gate else "", _status(m)]
        row.append(Text(notes))
        t.add_row(*row)
    return t


def segments_table(r: RunResult) -> Table | None:
    if not r.segments:
        return None
    t = Table(title="by segment", box=box.SIMPLE, title_justify="left")
    for g in r.group_by:
        t.add_column(g)
    t.add_column("rows", justify="right")
    for m in r.metrics:
        t.add_column(Text(m.id), justify="right")
    for s in r.segments:
        cells: list[RenderableType] = [Text(str(s.key[g])) for g in r.group_by]
        cells.append(str(s.rows))
        for m in s.metrics:
            txt = fmt_value(m.value)
            style = "red" if m.passed is False else ""
            cells.append(Text(txt, style=style))
        t.add_row(*cells)
    return t


def alignment_text(r: RunResult) -> Text:
    a = r.alignment
    parts = [f"rows evaluated: {a.matched - a.dropped_nulls:,}"]
    if r.truth is not None:
        parts.append(f"matched {a.matched:,}, only in predictions {a.only_in_predictions:,}, "
                     f"only in truth {a.only_in_truth:,} (unmatched: {a.unmatched_policy})")
    if a.dropped_nulls:
        parts.append(f"dropped for nulls: {a.dropped_nulls:,}")
    return Text(" · ".join(parts), style="dim")


def renderable(r: RunResult) -> RenderableType:
    items: list[RenderableType] = [metrics_table(r)]
    seg = segments_table(r)
    if seg is not None:
        items.append(seg)
    items.append(alignment_text(r))
    if r.failures and r.gating:
        items.append(Text("\n".join("✗ " + f for f in r.failures), style="red"))
    return Group(*items)


def render_text(r: RunResult) -> str:
    buf = io.StringIO()
    Console(file=buf, width=110, no_color=True, force_terminal=False).print(renderable(r))
    return buf.getvalue()
