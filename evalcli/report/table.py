"""The terminal table (Rich): metrics with value, gate and pass/fail, then the alignment.

Every table is laid out for the width it is drawn at (:class:`Grid`, :class:`Fit`): a metric
id, a number, a header or a status is never wrapped, cut or folded; prose (notes, gates) wraps
between words. A table that does not fit switches to a narrower layout — notes become
footnotes, segments become rows, the gate column becomes a line below — and footnotes and the
footer use the whole width.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich import box as boxes
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from evalcli.errors import printable
from evalcli.report import (
    alignment_facts,
    format_signed,
    format_value,
    notes_of,
    shared_notes,
    system_gates,
)
from evalcli.result import ChangeGate, Delta, Diff, MetricResult, RunResult


def fmt_value(v: float | None) -> str:
    return format_value(v, undefined="undefined")


# --------------------------------------------------------------------------- layout

PROSE_MIN = 20
"""The narrowest a prose column (notes, a gate) may get before the table switches layout."""

Cell = str | Text


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def _natural(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


@dataclass
class Col:
    """A column of a :class:`Grid`: ``wrap`` columns hold prose and may wrap between words;
    the others (ids, numbers, statuses) are always as wide as their widest cell."""

    header: str = ""
    justify: Literal["left", "right"] = "left"
    wrap: bool = False
    style: str = ""


class Grid:
    """A table whose column widths evalcli decides (Rich would fold or cut a long id to make
    room): :meth:`widths` says whether it fits a width, :meth:`table` draws it, and
    :meth:`stacked` puts the first column on a line of its own when it is too wide to share
    one."""

    def __init__(self, columns: Sequence[Col], *, box: boxes.Box | None = boxes.SIMPLE,
                 pad_edge: bool = True, show_header: bool = True, show_edge: bool = True
                 ) -> None:
        self.columns = list(columns)
        self.rows: list[tuple[list[Cell], bool]] = []
        self.box = box
        self.pad_edge = pad_edge
        self.show_header = show_header
        self.show_edge = show_edge

    def add_row(self, *cells: Cell, end_section: bool = False) -> None:
        assert len(cells) == len(self.columns)
        self.rows.append((list(cells), end_section))

    def _chrome(self) -> int:
        """Columns' padding, dividers and edges (as Rich draws them)."""
        n = len(self.columns)
        pad = 2 * n - (0 if self.pad_edge else 2)
        if self.box is None:
            return pad
        return pad + (n - 1) + (2 if self.show_edge else 0)

    def _needs(self) -> tuple[list[int], list[int]]:
        """Per column: the smallest acceptable width and the natural (unwrapped) width."""
        low, natural = [], []
        for i, col in enumerate(self.columns):
            texts = [col.header if self.show_header else "",
                     *(_plain(cells[i]) for cells, _ in self.rows)]
            nat = max(_natural(t) for t in texts)
            if col.wrap:
                low.append(max(max(_longest_word(t) for t in texts), min(nat, PROSE_MIN)))
            else:
                low.append(nat)
            natural.append(nat)
        return low, natural

    def width(self) -> int:
        """The width it takes when nothing wraps."""
        return sum(self._needs()[1]) + self._chrome()

    def widths(self, width: int) -> list[int] | None:
        """Column widths within ``width``, or None when it does not fit: prose columns give
        way, the widest first, down to their smallest acceptable width."""
        low, out = self._needs()
        excess = sum(out) + self._chrome() - width
        if sum(low) + self._chrome() > width:
            return None
        while excess > 0:
            i = max((i for i in range(len(out)) if out[i] > low[i]), key=lambda i: out[i])
            out[i] -= 1
            excess -= 1
        return out

    def table(self, widths: Sequence[int] | None = None,
              rows: Sequence[tuple[list[Cell], bool]] | None = None,
              show_header: bool | None = None) -> Table:
        """The Rich table; without widths Rich lays it out (the last resort: a cell wider than
        the terminal folds)."""
        t = Table(box=self.box, pad_edge=self.pad_edge, show_edge=self.show_edge,
                  show_header=self.show_header if show_header is None else show_header,
                  header_style="bold")
        for i, col in enumerate(self.columns):  # Text, never markup: ids hold [brackets]
            t.add_column(Text(col.header), justify=col.justify, style=col.style or None,
                         width=widths[i] if widths else None,
                         no_wrap=not col.wrap if widths else False, overflow="fold")
        for cells, end in self.rows if rows is None else rows:
            t.add_row(*(Text(c) if isinstance(c, str) else c for c in cells), end_section=end)
        return t

    def fit(self, width: int) -> Table | None:
        w = self.widths(width)
        return None if w is None else self.table(w)

    def fitted(self, width: int) -> Table:
        """Laid out for ``width`` when it fits, else by Rich (the last resort)."""
        return self.fit(width) or self.table()

    def stacked(self, width: int) -> RenderableType | None:
        """Each row's first cell on a line of its own, its other cells indented below (the
        columns' header and rule once, at the top); None when even that does not fit."""
        from rich.padding import Padding

        indent = 4
        rest = Grid(self.columns[1:], box=self.box, show_header=self.show_header,
                    show_edge=False)
        for cells, end in self.rows:
            rest.add_row(*cells[1:], end_section=end)
        w = rest.widths(width - indent)
        keys = [_natural(_plain(cells[0])) for cells, _ in self.rows]
        if w is None or max(keys, default=0) > width - 2:
            return None
        key = self.columns[0]
        items: list[RenderableType] = [Text("")]
        if self.show_header:
            items += [Text("  " + key.header, style="bold"),
                      Padding(rest.table(w, rows=[]), (0, 0, 0, indent))]
        for cells, end in self.rows:
            first = cells[0] if isinstance(cells[0], Text) else Text(cells[0])
            items.append(Padding(Text.assemble(first, style=key.style or ""), (0, 0, 0, 2)))
            items.append(Padding(rest.table(w, rows=[(cells[1:], False)], show_header=False),
                                 (0, 0, 0, indent)))
            if end:
                items.append(Text(""))
        return Group(*items, Text(""))


Layout = Callable[[int], RenderableType | None]


class Fit:
    """The first of several layouts that fits the width it is drawn at; the last one is drawn
    anyway (as Rich lays it out) when none does."""

    def __init__(self, *layouts: Layout, last: Callable[[int], RenderableType]) -> None:
        self.layouts = layouts
        self.last = last

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        for layout in self.layouts:
            r = layout(width)
            if r is not None:
                yield r
                return
        yield self.last(width)


def _group(*items: RenderableType | None) -> Group:
    return Group(*(i for i in items if i is not None))


def footnotes(notes: Mapping[str, int], style: str = "dim") -> RenderableType | None:
    """``[1] text`` lines below a table, across the whole width (wrapped lines indented)."""
    if not notes:
        return None
    g = Table.grid(padding=(0, 1))
    g.add_column(no_wrap=True, style=style)
    g.add_column(style=style, overflow="fold")
    for note, i in notes.items():
        g.add_row(Text(f"[{i}]"), Text(note))
    return g


def key_values(items: Sequence[tuple[str, str]], indent: int = 2,
               key_style: str = "") -> RenderableType:
    """``key: value`` lines; a value's wrapped lines stay indented under its first word."""
    from rich.padding import Padding

    lines: list[RenderableType] = []
    for key, value in items:
        g = Table.grid(padding=(0, 1))
        g.add_column(no_wrap=True, style=key_style or None)
        g.add_column(overflow="fold")
        g.add_row(Text(f"{key}:"), Text(value))
        lines.append(g)
    return Padding(Group(*lines), (0, 0, 0, indent))


class Facts:
    """Sentences on one line joined by `` · `` when they fit, else one a line."""

    def __init__(self, facts: Sequence[str], style: str = "dim") -> None:
        self.facts = list(facts)
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        joined = " · ".join(self.facts)
        if cell_len(joined) <= options.max_width:
            yield Text(joined, style=self.style)
        else:
            for fact in self.facts:
                yield Text(fact, style=self.style)


# --------------------------------------------------------------------------- metrics

def _status(m: MetricResult) -> Text:
    if m.gate is None or m.passed is None:
        return Text("")
    return Text("pass", style="green") if m.passed else Text("FAIL", style="bold red")


def _metrics_grid(r: RunResult, numbered: dict[str, int], inline: bool) -> Grid:
    """The metrics, with the notes in ``numbered`` as footnote marks and (``inline``) the
    others written out."""
    gated = any(m.gate is not None for m in r.metrics)
    ci = ci_header(r.metrics)
    # narrow, with intervals: every note a footnote whose marks follow the metric id (no
    # notes column), and the interval beside the value in one column
    marks_by_id = not inline and bool(ci)
    cols = [Col("metric", style="bold"),
            Col(f"value [{ci}]" if marks_by_id else "value", "right")]
    if ci and not marks_by_id:
        cols.append(Col(ci, "right"))
    if gated:
        cols += [Col("gate", wrap=True), Col("status")]
    if not marks_by_id:
        cols.append(Col("notes", wrap=inline, style="dim"))
    g = Grid(cols, box=boxes.SIMPLE_HEAVY)
    for m in r.metrics:
        notes = notes_of(m)
        marks = "".join(f"[{numbered[n]}]" for n in notes if n in numbered)
        own = [n for n in notes if n not in numbered] if inline else []
        text = "; ".join([*own, marks] if marks else own)
        value = fmt_value(m.value)
        if _is_matrix(m):
            n = len(m.details["labels"])
            value = f"{n}×{n} below" if n <= MAX_MATRIX_LABELS else f"{n}×{n}"
        label = Text(m.id)
        if marks_by_id and marks:
            label.append(" " + marks, style="dim")
        row: list[Cell] = [label, value]
        if marks_by_id:
            row[1] = Text(value + " ").append_text(interval_cell(m))
        elif ci:
            row.append(interval_cell(m))
        if gated:
            row += [m.gate.describe() if m.gate else "", _status(m)]
        if not marks_by_id:
            row.append(Text(text))
        g.add_row(*row)
    return g


def ci_header(metrics: Sequence[MetricResult]) -> str:
    """The interval column's header (``95% CI``), or '' when no metric has an interval."""
    level = next((m.ci.level for m in metrics if m.ci is not None), None)
    return "" if level is None else f"{level:.0%} CI"


def interval_cell(m: MetricResult) -> Text:
    """``[0.9011, 0.9240]``; ``—`` when there is none (its reason is among the notes)."""
    if m.ci is None or not m.ci.defined:
        return Text("—", style="dim")
    return Text(f"[{fmt_value(m.ci.low)}, {fmt_value(m.ci.high)}]")




def uncertainty_line(r: RunResult) -> Text | None:
    """How the intervals were computed, in one line: level, methods used, replicates, unit."""
    u = r.uncertainty
    if u is None:
        return None
    methods = list(dict.fromkeys(m.ci.method for m in r.metrics if m.ci is not None))
    boot = u.get("replicates") if any(x in ("percentile", "bca") for x in methods) else None
    unit = u.get("unit", "rows")
    said = (f"{u.get('level', 0.95):.0%} intervals: {', '.join(methods) or 'none'}"
            + (f" ({boot:,} replicates over {u.get('groups', 0):,} random groups of "
               f"{unit if unit == 'rows' else unit + ' values'}, seed {u.get('seed', 0)})"
               if boot else f" (unit: {unit})"))
    return Text(said, style="dim")


def metrics_view(r: RunResult) -> RenderableType:
    """The metrics table: notes beside the values when there is room (those several metrics
    share as footnotes), else every note as a footnote."""
    shared = shared_notes(r.metrics)
    every: dict[str, int] = {}
    for m in r.metrics:
        for n in notes_of(m):
            every.setdefault(n, len(every) + 1)
    wide = _metrics_grid(r, shared, inline=True)
    narrow = _metrics_grid(r, every, inline=False)

    def layout(table: Layout, notes: dict[str, int]) -> Layout:
        return lambda w: (None if (t := table(w)) is None else _group(t, footnotes(notes)))

    return Fit(layout(wide.fit, shared), layout(narrow.fit, every),
               layout(narrow.stacked, every),
               last=lambda w: _group(narrow.table(), footnotes(every)))


def title(r: RunResult) -> Text:
    gated = any(m.gate is not None for m in r.metrics) or bool(r.systems and r.failures)
    verdict = ""
    if gated and r.gating:
        verdict = " — passed" if r.passed else f" — {len(r.failures)} gate(s) failed"
    system = ""
    if r.comparison is not None:
        system = f" · {r.comparison.baseline} (the baseline system; the others below)"
    return Text(f"evalcli · {r.task}{system}{verdict}")


MAX_MATRIX_LABELS = 20
"""Largest confusion matrix drawn in the terminal; bigger ones are in the JSON/HTML reports."""


def _is_matrix(m: MetricResult) -> bool:
    return isinstance(m.details.get("labels"), list) and isinstance(m.details.get("matrix"), list)


def _cell(v: object) -> str:
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.3f}"
    return f"{int(v):,}" if isinstance(v, int | float) else str(v)


def _matrix_grid(labels: list[str], matrix: list[list[Any]], cols: range) -> Grid:
    g = Grid([Col("true \\ pred", style="bold"),
              *(Col(labels[j], "right") for j in cols)], box=boxes.SIMPLE)
    for i, (lab, row) in enumerate(zip(labels, matrix, strict=True)):
        g.add_row(Text(lab), *(Text(_cell(row[j]), style="bold green" if i == j else
                                   ("dim" if not row[j] else "")) for j in cols))
    return g


class _Matrix:
    """A confusion matrix; when it is wider than the terminal, its predicted-class columns
    are split over several tables."""

    def __init__(self, m: MetricResult) -> None:
        self.m = m
        self.labels = [printable(str(x)) for x in m.details["labels"]]
        self.matrix: list[list[Any]] = m.details["matrix"]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        n = len(self.labels)
        yield Text(f"{self.m.id} (rows: true class, columns: predicted)")
        start = 0
        while start < n:
            stop = start + 1
            while stop < n and _matrix_grid(self.labels, self.matrix,
                                            range(start, stop + 1)).width() <= options.max_width:
                stop += 1
            grid = _matrix_grid(self.labels, self.matrix, range(start, stop))
            if start or stop < n:
                yield Text(f"predicted {self.labels[start]} to {self.labels[stop - 1]} "
                           f"({start + 1}-{stop} of {n})", style="dim")
            yield grid.fit(options.max_width) or grid.table()
            start = stop


def matrix_views(r: RunResult) -> list[RenderableType]:
    """Each confusion matrix of the run: rows true class, columns predicted."""
    return [_Matrix(m) for m in r.metrics
            if _is_matrix(m) and len(m.details["labels"]) <= MAX_MATRIX_LABELS]


# --------------------------------------------------------------------------- segments

MAX_SEGMENT_ROWS = 50
"""Segments shown in the terminal; the JSON report holds them all."""


def undefined_notes(r: RunResult, limit: int = 8) -> list[str]:
    """Why per-segment values are undefined, one line per metric and reason."""
    reasons: dict[tuple[str, str], list[str]] = {}
    for s in r.segments:
        for m in s.metrics:
            if m.value is None:
                why = "; ".join(m.notes) or "undefined"
                reasons.setdefault((m.id, why), []).append(printable(s.label))
    out = []
    for (id_, why), labels in reasons.items():
        shown = ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3
                                        else "")
        out.append(f"{id_}: {why} ({shown})")
    if len(out) > limit:
        out = [*out[:limit], f"... and {len(out) - limit} more (see the JSON report)"]
    return out


def _segment_value(m: MetricResult) -> Text:
    if _is_matrix(m):  # its value is the row count; the matrix is in the JSON/HTML report
        n = len(m.details["labels"])
        return Text(f"{n}×{n}", style="dim")
    if m.value is None:
        return Text("n/a", style="red" if m.passed is False else "yellow")
    return Text(fmt_value(m.value) + (" ✗" if m.passed is False else ""),
                style="red" if m.passed is False else "")


def _segment_gates(r: RunResult) -> list[str]:
    """Each metric's gate over the segments, as a header line ('' when none)."""
    out = []
    for i in range(len(r.metrics)):
        gates = {gt.describe() if gt.segment == "*" else f"{gt.segment}: {gt.describe()}"
                 for s in r.segments if (gt := s.metrics[i].gate) is not None}
        out.append(next(iter(gates)) if len(gates) == 1 else
                   "gated per segment" if gates else "")
    return out


def _segments_wide(r: RunResult, shown: list[Any], gates: list[str]) -> Grid:
    """Segments as rows, metrics as columns."""
    cols = [Col(g) for g in r.group_by] + [Col("rows", "right")]
    cols += [Col(m.id + (f"\n{gate}" if gate else ""), "right")
             for m, gate in zip(r.metrics, gates, strict=True)]
    g = Grid(cols)
    for s in shown:
        g.add_row(*(Text(printable(str(s.key[k]))) for k in r.group_by), f"{s.rows:,}",
                  *(_segment_value(m) for m in s.metrics))
    return g


def _segments_by_metric(r: RunResult, shown: list[Any], gates: list[str]) -> Grid:
    """Metrics as rows, segments as columns."""
    gated = any(gates)
    cols = [Col("metric", style="bold")] + ([Col("gate", wrap=True)] if gated else [])
    cols += [Col(printable(s.label), "right", wrap=True) for s in shown]
    g = Grid(cols)
    g.add_row(Text("rows", style="dim"), *([""] if gated else []),
              *(Text(f"{s.rows:,}", style="dim") for s in shown), end_section=True)
    for i, m in enumerate(r.metrics):
        g.add_row(Text(m.id), *([gates[i]] if gated else []),
                  *(_segment_value(s.metrics[i]) for s in shown))
    return g


def _segments_long(r: RunResult, shown: list[Any], gates: list[str]) -> Grid:
    """One block of rows per segment: metric and value."""
    gated = any(gates)
    cols = [Col(g) for g in r.group_by] + [Col("rows", "right"), Col("metric"),
                                           Col("value", "right")]
    cols += [Col("gate", wrap=True)] if gated else []
    g = Grid(cols)
    for n, s in enumerate(shown):
        for i, m in enumerate(s.metrics):
            first = i == 0
            g.add_row(*(Text(str(s.key[k]) if first else "") for k in r.group_by),
                      f"{s.rows:,}" if first else "", Text(m.id), _segment_value(m),
                      *([gates[i]] if gated else []),
                      end_section=i == len(s.metrics) - 1 and n < len(shown) - 1)
    return g


def _segment_grids(r: RunResult, shown: list[Any], gates: list[str]) -> list[Grid]:
    """A table per segment: metric, value (and gate)."""
    gated = any(gates)
    out = []
    for s in shown:
        g = Grid([Col("metric"), Col("value", "right"), *([Col("gate", wrap=True)] if gated
                                                            else [])])
        for i, m in enumerate(s.metrics):
            g.add_row(Text(m.id), _segment_value(m), *([gates[i]] if gated else []))
        out.append(g)
    return out


def _per_segment(r: RunResult, shown: list[Any], gates: list[str], stacked: bool) -> Layout:
    """One table per segment under its name, when every one of them fits."""
    grids = _segment_grids(r, shown, gates)

    def layout(width: int) -> RenderableType | None:
        items: list[RenderableType] = []
        for s, g in zip(shown, grids, strict=True):
            t = g.stacked(width) if stacked else g.fit(width)
            if t is None:
                return None
            items += [Text(f"{printable(s.label)} · {s.rows:,} rows", style="bold"), t]
        return Group(*items)

    return layout


def segments_view(r: RunResult) -> RenderableType | None:
    """The per-segment values: segments as rows when every metric fits as a column, else
    metrics as rows and segments as columns, else one block of rows per segment, else one
    table per segment."""
    if not r.segments:
        return None
    shown = r.segments[:MAX_SEGMENT_ROWS]
    gates = _segment_gates(r)
    more = (Text(f"... {len(r.segments) - MAX_SEGMENT_ROWS} more segments (all in the JSON "
                 "report)", style="dim") if len(r.segments) > MAX_SEGMENT_ROWS else None)
    grids = [_segments_wide(r, shown, gates), _segments_by_metric(r, shown, gates),
             _segments_long(r, shown, gates)]
    last = _segment_grids(r, shown, gates)
    return _group(Text(f"by segment ({len(r.segments)})"),
                  Fit(*(g.fit for g in grids), _per_segment(r, shown, gates, stacked=False),
                      _per_segment(r, shown, gates, stacked=True),
                      last=lambda w: Group(*(x for s, g in zip(shown, last, strict=True)
                                             for x in (Text(printable(s.label), style="bold"),
                                                       g.table())))),
                  more)


# --------------------------------------------------------------------------- diff

_signed = format_signed


def _pct(v: float | None) -> str:
    if v is None:
        return ""
    return "0.00%" if v == 0 else f"{100 * v:+.2f}%"


CHANGE_STYLE = {"better": ("▲ better", "green"), "worse": ("▼ worse", "red"),
                "same": ("= same", "dim"), "new": ("new", "cyan"), "removed": ("removed", "yellow"),
                "undefined": ("undefined", "yellow")}

DIFF_LEGEND = "Δ = candidate − baseline; ▲ better  ▼ worse  = same, by each metric's direction"


def _describe_change(g: ChangeGate | None) -> str:
    return "" if g is None else g.describe()


def _diff_grid(d: Diff, gate_column: bool, pct: bool = True) -> Grid:
    """The deltas; ``pct``: with the relative change (left out when the intervals need the
    room)."""
    gated = bool(d.gated)
    level = next((x.ci.level for x in d.metrics if x.ci is not None), None)
    cols = [Col("metric"), Col("baseline", "right"), Col("candidate", "right"),
            Col("Δ", "right")] + ([Col("Δ %", "right")] if pct else [])
    cols += [Col(f"{level:.0%} CI of Δ", "right"), Col("p", "right")] \
        if level is not None else []
    cols += [Col("gate", wrap=True)] if gate_column else []
    cols += [Col("status")] if gated else []
    g = Grid(cols, box=boxes.SIMPLE_HEAVY, pad_edge=False)
    for x in d.metrics:
        label, style = CHANGE_STYLE.get(x.change, (x.change, ""))
        arrow = label.split()[0] if x.delta is not None else ""
        change = f"{arrow} {_signed(x.delta)}" if x.delta is not None else label
        row: list[Cell] = [
            Text(x.id), "" if x.change == "new" else fmt_value(x.baseline),
            "" if x.change == "removed" else fmt_value(x.candidate),
            Text(change, style=style)]
        if pct:
            row.append(Text(_pct(x.relative), style=style))
        if level is not None:
            row += ["—" if x.ci is None or not x.ci.defined else
                    f"[{format_signed(x.ci.low) or '0'}, {format_signed(x.ci.high) or '0'}]",
                    "" if x.p_value is None else _p(x.p_value)]
        if gate_column:
            row.append(_describe_change(x.gate))
        if gated:
            row.append(Text("") if x.gate is None else
                       Text("pass", style="green") if x.passed else
                       Text("FAIL", style="bold red"))
        g.add_row(*row)
    return g


def _gate_lines(d: Diff) -> RenderableType:
    """The change gates below the table, one line per gate with the metrics it holds for."""
    by_gate: dict[str, list[str]] = {}
    for x, g in d.gated:
        by_gate.setdefault(g.describe(), []).append(x.id)
    return Group(*(Text(f"gate {gate}: {', '.join(ids)}", style="dim")
                   for gate, ids in by_gate.items()))


def diff_table(d: Diff, title: str | None = None) -> RenderableType:
    """The deltas of a diff: with a gate column when the gates differ between metrics and it
    fits, else the gates below."""
    gated = bool(d.gated)
    gates = {tuple(sorted(x.gate.to_dict().items())): x.gate
             for x in d.metrics if x.gate is not None}
    common = len(gates) == 1 and all(x.gate is not None or x.change == "new" for x in d.metrics)
    verdict = ""
    if gated:
        verdict = " — passed" if d.passed else f" — {len(d.failures)} gate(s) failed"
        if common:
            verdict += f" (every metric: {_describe_change(next(iter(gates.values())))})"
    head = Text((title or f"{d.candidate} vs {d.baseline}") + verdict)
    legend = Text(DIFF_LEGEND, style="dim")
    # with intervals, the relative change goes first when the table must get narrower
    pct = not any(x.ci is not None for x in d.metrics)
    if not gated or common:
        grid, lean = _diff_grid(d, gate_column=False), _diff_grid(d, False, pct=pct)
        return _group(head, legend, Fit(grid.fit, lean.fit, lean.stacked,
                                        last=lambda w: lean.table()))
    wide, narrow = _diff_grid(d, gate_column=True), _diff_grid(d, False, pct=pct)

    def below(w: int) -> RenderableType | None:
        t = narrow.fit(w)
        return None if t is None else _group(t, _gate_lines(d))

    def stacked(w: int) -> RenderableType | None:
        t = narrow.stacked(w)
        return None if t is None else _group(t, _gate_lines(d))

    return _group(head, legend, Fit(wide.fit, below, stacked,
                                    last=lambda w: _group(narrow.table(), _gate_lines(d))))


def diff_renderable(d: Diff, title: str | None = None,
                    failures: bool = True) -> RenderableType:
    items: list[RenderableType] = [diff_table(d, title), Text("")]
    if d.segments:
        worse = [x for x in d.segments if x.change == "worse"]
        items.append(Text(f"segments: {len(worse)} of {len(d.segments)} segment values "
                          "got worse" + (" (largest: " + ", ".join(
                              f"{x.id} [{x.segment}] {_signed(x.delta)}"
                              for x in sorted(worse, key=_badness)[:3]) + ")" if worse else ""),
                          style="dim"))
    for note in d.notes:
        items.append(Text(note, style="dim"))
    if failures and d.failures:
        items.append(Text("\n".join("✗ " + printable(f) for f in d.failures), style="red"))
    return Group(*items)


def _badness(x: Delta) -> float:
    v = float(x.relative if x.relative is not None else (x.delta or 0.0))
    return -abs(v)


# --------------------------------------------------------------------------- systems

def _change_cell(change: str) -> Text:
    if change == "better":
        return Text("▲ better", style="green")
    if change == "worse":
        return Text("▼ worse", style="bold red")
    if change == "no significant change":
        return Text("= n.s.", style="dim")
    return Text("undefined", style="yellow")


def _p(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:.1e}" if v < 0.001 else f"{v:.3f}"


def _whole(g: Grid) -> Callable[[int], RenderableType]:
    return lambda width: g.table()


def systems_view(r: RunResult) -> RenderableType:
    """Each system against the baseline system, metric by metric: its value, the change, the
    change's interval, the adjusted p-value and the verdict (▲ significantly better, ▼ worse,
    = not significant); the tests and the correction in the header."""
    comp = r.comparison
    assert comp is not None
    names = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
             "none": "no"}
    tests = ", ".join(dict.fromkeys(row.test for row in comp.rows if row.p_value is not None))
    items: list[RenderableType] = [Text(
        f"systems compared with {comp.baseline}: Δ = system − {comp.baseline}; ▲ ▼ "
        f"significant (adjusted p < {comp.alpha:g}, {names.get(comp.correction)} correction), "
        f"= n.s. not significant; tests: {tests or 'none'}", style="dim")]
    outcome = {(row.system, row.id): system_gates(r, row) for row in comp.rows}
    gated = any(v is not None for v in outcome.values())
    for system in dict.fromkeys(row.system for row in comp.rows):
        g = Grid([Col(system, style="bold"), Col("value", "right"),
                  Col("Δ", "right"), Col(f"{comp.level:.0%} CI of Δ", "right"),
                  Col("p adj.", "right"), Col("change")]
                 + ([Col("gate")] if gated else []), box=boxes.SIMPLE_HEAVY)
        for row in comp.rows:
            if row.system != system:
                continue
            ci = "—" if row.ci is None or not row.ci.defined else \
                f"[{format_signed(row.ci.low) or '0'}, {format_signed(row.ci.high) or '0'}]"
            cells: list[Cell] = [Text(row.id), fmt_value(row.value), format_signed(row.delta),
                                 ci, _p(row.adjusted), _change_cell(row.change)]
            if gated:
                passed = outcome[(row.system, row.id)]
                cells.append(Text("") if passed is None else
                             Text("pass", style="green") if passed else
                             Text("FAIL", style="bold red"))
            g.add_row(*cells)
        items.append(Fit(g.fit, g.stacked, last=_whole(g)))
    return _group(*items)


# --------------------------------------------------------------------------- the report

def alignment_text(r: RunResult) -> RenderableType:
    return Facts(alignment_facts(r))


def renderable(r: RunResult) -> RenderableType:
    line = uncertainty_line(r)
    items: list[RenderableType] = [title(r), *([line] if line else []), metrics_view(r),
                                   *matrix_views(r)]
    if r.comparison is not None:
        items.append(systems_view(r))
    seg = segments_view(r)
    if seg is not None:
        items += [seg, Text("")]
        notes = undefined_notes(r)
        if notes:
            items.append(Text("n/a = undefined in the segment:\n  " + "\n  ".join(notes),
                              style="dim"))
    if r.baseline is not None:
        items.append(diff_renderable(r.baseline,
                                     f"compared with the baseline {r.baseline.baseline}",
                                     failures=False))
    items.append(alignment_text(r))
    if r.failures and r.gating:
        items.append(Text("\n".join("✗ " + printable(f) for f in r.failures), style="red"))
    return Group(*items)


def render_text(r: RunResult, width: int = 110) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, no_color=True, force_terminal=False).print(renderable(r))
    return buf.getvalue()

