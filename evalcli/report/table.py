"""The terminal table (Rich): metrics with value, gate and pass/fail, then the alignment."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from evalcli.report import alignment_facts, format_signed, format_value
from evalcli.result import MetricResult, RunResult


def fmt_value(v: float | None) -> str:
    return format_value(v, undefined="undefined")


def _status(m: MetricResult) -> Text:
    if m.gate is None or m.passed is None:
        return Text("")
    return Text("pass", style="green") if m.passed else Text("FAIL", style="bold red")


def shared_notes(metrics: list[MetricResult]) -> dict[str, int]:
    """Notes that several metrics carry, numbered: the table shows them once, as footnotes."""
    count: dict[str, int] = {}
    for m in metrics:
        for n in dict.fromkeys(m.notes):
            count[n] = count.get(n, 0) + 1
    shared = [n for n, c in count.items() if c > 1]
    return {n: i for i, n in enumerate(shared, 1)}


def metrics_table(r: RunResult) -> Table:
    gated = any(m.gate is not None for m in r.metrics)
    footnotes = shared_notes(r.metrics)
    verdict = ""
    if gated and r.gating:
        verdict = " — passed" if r.passed else f" — {len(r.failures)} gate(s) failed"
    t = Table(title=f"evalcli · {r.task}{verdict}", box=box.SIMPLE_HEAVY, title_justify="left")
    t.add_column("metric", style="bold", overflow="fold")
    t.add_column("value", justify="right")
    if gated:
        t.add_column("gate")
        t.add_column("status")
    t.add_column("notes", style="dim", overflow="fold")
    if footnotes:
        t.caption = "\n".join(f"[{i}] {n}" for n, i in footnotes.items())
        t.caption_justify = "left"
        t.caption_style = "dim"
    for m in r.metrics:
        marks = "".join(f"[{footnotes[n]}]" for n in dict.fromkeys(m.notes) if n in footnotes)
        own = [n for n in m.notes if n not in footnotes]
        notes = "; ".join([*own, marks] if marks else own)
        if "threshold" in m.details and m.metric == "peak_f1":
            notes = (f"at threshold {m.details['threshold']:.6g}; " + notes).rstrip("; ")
        value = fmt_value(m.value)
        if _is_matrix(m):
            n = len(m.details["labels"])
            value = f"{n}×{n} below" if n <= MAX_MATRIX_LABELS else f"{n}×{n}"
        row: list[RenderableType] = [Text(m.id), value]
        if gated:
            row += [m.gate.describe() if m.gate else "", _status(m)]
        row.append(Text(notes))
        t.add_row(*row)
    return t


MAX_MATRIX_LABELS = 20
"""Largest confusion matrix drawn in the terminal; bigger ones are in the JSON/HTML reports."""


def _is_matrix(m: MetricResult) -> bool:
    return isinstance(m.details.get("labels"), list) and isinstance(m.details.get("matrix"), list)


def _cell(v: object) -> str:
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.3f}"
    return f"{int(v):,}" if isinstance(v, int | float) else str(v)


def matrix_tables(r: RunResult) -> list[Table]:
    """Each confusion matrix of the run as a table: rows true class, columns predicted."""
    out = []
    for m in r.metrics:
        if not _is_matrix(m) or len(m.details["labels"]) > MAX_MATRIX_LABELS:
            continue
        labels = [str(x) for x in m.details["labels"]]
        t = Table(title=f"{m.id} (rows: true class, columns: predicted)", box=box.SIMPLE,
                  title_justify="left")
        t.add_column("true \\ pred", style="bold")
        for lab in labels:
            t.add_column(Text(lab), justify="right")
        for i, (lab, row) in enumerate(zip(labels, m.details["matrix"], strict=True)):
            cells: list[RenderableType] = [Text(lab)]
            for j, v in enumerate(row):
                cells.append(Text(_cell(v), style="bold green" if i == j else
                                  ("dim" if not v else "")))
            t.add_row(*cells)
        out.append(t)
    return out


MAX_SEGMENT_ROWS = 50
"""Segments shown in the terminal; the JSON report holds them all."""


def undefined_notes(r: RunResult, limit: int = 8) -> list[str]:
    """Why per-segment values are undefined, one line per metric and reason."""
    reasons: dict[tuple[str, str], list[str]] = {}
    for s in r.segments:
        for m in s.metrics:
            if m.value is None:
                why = "; ".join(m.notes) or "undefined"
                reasons.setdefault((m.id, why), []).append(s.label)
    out = []
    for (id_, why), labels in reasons.items():
        shown = ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3
                                        else "")
        out.append(f"{id_}: {why} ({shown})")
    if len(out) > limit:
        out = [*out[:limit], f"... and {len(out) - limit} more (see the JSON report)"]
    return out


def segments_table(r: RunResult) -> Table | None:
    if not r.segments:
        return None
    t = Table(title=f"by segment ({len(r.segments)})", box=box.SIMPLE, title_justify="left")
    for g in r.group_by:
        t.add_column(g)
    t.add_column("rows", justify="right")
    for i, m in enumerate(r.metrics):
        gates = {gt.describe() if gt.segment == "*" else f"{gt.segment}: {gt.describe()}"
                 for s in r.segments if (gt := s.metrics[i].gate) is not None}
        head = m.id + (f"\n{next(iter(gates))}" if len(gates) == 1 else
                       "\ngated per segment" if gates else "")
        t.add_column(Text(head), justify="right")
    for s in r.segments[:MAX_SEGMENT_ROWS]:
        cells: list[RenderableType] = [Text(str(s.key[g])) for g in r.group_by]
        cells.append(f"{s.rows:,}")
        for m in s.metrics:
            if m.value is None:
                cells.append(Text("n/a", style="red" if m.passed is False else "yellow"))
                continue
            txt = fmt_value(m.value)
            style = "red" if m.passed is False else ""
            cells.append(Text(txt + (" ✗" if m.passed is False else ""), style=style))
        t.add_row(*cells)
    if len(r.segments) > MAX_SEGMENT_ROWS:
        t.caption = (f"... {len(r.segments) - MAX_SEGMENT_ROWS} more segments "
                     "(all in the JSON report)")
    return t


_signed = format_signed


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:+.2f}%"


CHANGE_STYLE = {"better": ("▲ better", "green"), "worse": ("▼ worse", "red"),
                "same": ("= same", "dim"), "new": ("new", "cyan"), "removed": ("removed", "yellow"),
                "undefined": ("undefined", "yellow")}


def diff_table(d: Mapping[str, Any], title: str | None = None) -> Table:
    """The deltas of a diff (the dict of :meth:`evalcli.diff.Diff.to_dict`)."""
    gated = any("gate" in x for x in d["metrics"])
    gates = {tuple(sorted(x["gate"].items())) for x in d["metrics"] if "gate" in x}
    common = len(gates) == 1 and all("gate" in x or x["change"] == "new" for x in d["metrics"])
    verdict = ""
    if gated:
        verdict = " — passed" if d["passed"] else f" — {len(d['failures'])} gate(s) failed"
        if common:
            verdict += f" (every metric: {_describe_change(dict(next(iter(gates))))})"
    t = Table(title=(title or f"{d['candidate']} vs {d['baseline']}") + verdict,
              box=box.SIMPLE_HEAVY, title_justify="left", pad_edge=False,
              caption="▲ better  ▼ worse  = same, by each metric's direction",
              caption_justify="left", caption_style="dim")
    t.add_column("metric", overflow="fold")
    for col in ("baseline", "candidate", "change", "%"):
        t.add_column(col, justify="right", no_wrap=True)
    if gated and not common:
        t.add_column("gate", min_width=13)
    if gated:
        t.add_column("status", no_wrap=True)
    for x in d["metrics"]:
        label, style = CHANGE_STYLE.get(x["change"], (x["change"], ""))
        arrow = label.split()[0] if x["delta"] is not None else ""
        change = f"{arrow} {_signed(x['delta'])}" if x["delta"] is not None else label
        row: list[RenderableType] = [
            Text(x["id"]), "" if x["change"] == "new" else fmt_value(x["baseline"]),
            "" if x["change"] == "removed" else fmt_value(x["candidate"]),
            Text(change, style=style), Text(_pct(x["relative"]), style=style)]
        if gated and not common:
            row.append(_describe_change(x.get("gate")))
        if gated:
            row.append(Text("") if "gate" not in x else
                       Text("pass", style="green") if x["passed"] else
                       Text("FAIL", style="bold red"))
        t.add_row(*row)
    return t


def _describe_change(g: Mapping[str, float] | None) -> str:
    if not g:
        return ""
    from evalcli.diff import ChangeGate

    return ChangeGate.from_mapping(g).describe()


def diff_renderable(d: Mapping[str, Any], title: str | None = None,
                    failures: bool = True) -> RenderableType:
    items: list[RenderableType] = [diff_table(d, title)]
    if d.get("segments"):
        worse = [x for x in d["segments"] if x["change"] == "worse"]
        items.append(Text(f"segments: {len(worse)} of {len(d['segments'])} segment values "
                          "got worse" + (" (largest: " + ", ".join(
                              f"{x['id']} [{x['segment']}] {_signed(x['delta'])}"
                              for x in sorted(worse, key=_badness)[:3]) + ")" if worse else ""),
                          style="dim"))
    for note in d.get("notes", []):
        items.append(Text(note, style="dim"))
    if failures and d.get("failures"):
        items.append(Text("\n".join("✗ " + f for f in d["failures"]), style="red"))
    return Group(*items)


def _badness(x: Mapping[str, Any]) -> float:
    rel = x.get("relative")
    v = float(rel if rel is not None else (x.get("delta") or 0.0))
    return -abs(v)


def alignment_text(r: RunResult) -> Text:
    return Text(" · ".join(alignment_facts(r)), style="dim")


def renderable(r: RunResult) -> RenderableType:
    items: list[RenderableType] = [metrics_table(r), *matrix_tables(r)]
    seg = segments_table(r)
    if seg is not None:
        items.append(seg)
        notes = undefined_notes(r)
        if notes:
            items.append(Text("n/a = undefined in the segment:\n  " + "\n  ".join(notes),
                              style="dim"))
    base = r.extra.get("baseline")
    if isinstance(base, dict):
        items.append(diff_renderable(base, f"compared with the baseline {base['baseline']}",
                                     failures=False))
    items.append(alignment_text(r))
    if r.failures and r.gating:
        items.append(Text("\n".join("✗ " + f for f in r.failures), style="red"))
    return Group(*items)


def render_text(r: RunResult) -> str:
    buf = io.StringIO()
    Console(file=buf, width=110, no_color=True, force_terminal=False).print(renderable(r))
    return buf.getvalue()
