"""The Markdown report: a summary for a pull-request comment or a CI step summary.

Order: the verdict first (one heading), then the metrics table, per-segment values, the
comparison with the baseline, the failures with their reasons, and the inputs folded away.
GitHub-flavoured Markdown (pipe tables, ``<details>``); no colours, no images.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalcli._version import __version__
from evalcli.config import SCHEMA_VERSION
from evalcli.report import alignment_facts, format_signed, format_value
from evalcli.result import MetricResult, RunResult

MAX_SEGMENT_ROWS = 50
"""Segments listed in the Markdown table (a pull-request comment has a size limit)."""

PASS, FAIL, WARN = "✅", "❌", "⚠️"


fmt = format_value


def cell(text: object) -> str:
    """Text made safe for a table cell (pipes escaped, no line breaks).

    >>> cell("a|b\\nc")
    'a\\\\|b c'
    """
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def code(text: object) -> str:
    """An inline code span that survives backticks in the text."""
    s = str(text)
    fence = "``" if "`" in s else "`"
    pad = " " if "`" in s else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> list[str]:
    """A pipe table; ``align`` holds one of ``l``/``r`` per column (default left)."""
    seps = ["---:" if (align[i:i + 1] == "r") else "---" for i in range(len(header))]
    out = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(seps) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _status(m: MetricResult) -> str:
    if m.gate is None:
        return ""
    if m.passed is None:  # gating off
        return f"{WARN} would fail" if m.failure else "would pass"
    return f"{PASS} pass" if m.passed else f"{FAIL} FAIL"


def gate_count(r: RunResult) -> int:
    n = sum(m.gate is not None for m in r.metrics)
    n += sum(m.gate is not None for s in r.segments for m in s.metrics)
    base = r.extra.get("baseline")
    if isinstance(base, dict):
        n += sum("gate" in d for d in base.get("metrics", []))
    return n


def verdict(r: RunResult) -> str:
    """The heading: pass/fail first."""
    n = gate_count(r)
    if n == 0:
        return f"## evalcli · {r.task} — no gates"
    if not r.gating:
        would = f", {len(r.failures)} would fail" if r.failures else ""
        return f"## {WARN} evalcli · {r.task} — gating off ({n} gates{would})"
    if r.passed:
        return f"## {PASS} evalcli · {r.task} — passed ({n} gate{'s' if n != 1 else ''})"
    return f"## {FAIL} evalcli · {r.task} — {len(r.failures)} of {n} gates failed"


def metrics_section(r: RunResult) -> list[str]:
    gated = any(m.gate is not None for m in r.metrics)
    header = ["metric", "value"] + (["gate", "status"] if gated else []) + ["notes"]
    rows = []
    for m in r.metrics:
        notes = list(m.notes)
        if m.metric == "peak_f1" and "threshold" in m.details:
            notes.insert(0, f"at threshold {m.details['threshold']:.6g}")
        row = [code(m.id), fmt(m.value)]
        if gated:
            row += [cell(m.gate.describe()) if m.gate else "", _status(m)]
        row.append(cell("; ".join(notes)))
        rows.append(row)
    return table(header, rows, "lr" + ("ll" if gated else "") + "l")


def segments_section(r: RunResult) -> list[str]:
    if not r.segments:
        return []
    out = ["", f"### By segment ({len(r.segments)})", ""]
    header = [*r.group_by, "rows", *(m.id for m in r.metrics)]
    rows = []
    undefined: dict[tuple[str, str], list[str]] = {}
    for s in r.segments:
        row = [cell(s.key[g]) for g in r.group_by] + [f"{s.rows:,}"]
        for m in s.metrics:
            txt = fmt(m.value)
            if m.value is None:
                undefined.setdefault((m.id, "; ".join(m.notes) or "undefined"),
                                     []).append(s.label)
            if m.passed is False:
                txt += f" {FAIL}"
            row.append(txt)
        rows.append(row)
    shown = rows[:MAX_SEGMENT_ROWS]
    out += table(header, shown, "l" * len(r.group_by) + "r" * (1 + len(r.metrics)))
    if len(rows) > len(shown):
        out += ["", f"_… {len(rows) - len(shown)} more segments in the JSON report._"]
    gated = sorted({m.id for s in r.segments for m in s.metrics if m.gate is not None})
    if gated:
        out += ["", "Gated per segment: " + ", ".join(code(g) for g in gated) + "."]
    if undefined:
        out += ["", "n/a: undefined in the segment (never counted as 0):", ""]
        for (id_, why), labels in undefined.items():
            out.append(f"- {code(id_)}: {cell(why)} — {cell(', '.join(labels[:5]))}"
                       + (f" and {len(labels) - 5} more" if len(labels) > 5 else ""))
    return out


CHANGE = {"better": "▲ better", "worse": "▼ worse", "same": "= same", "new": "new",
          "removed": "removed", "undefined": "n/a"}


_signed = format_signed


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:+.2f}%"


def diff_rows(d: Mapping[str, Any], candidate: str = "candidate") -> list[str]:
    """The table of a diff (the dict of :meth:`evalcli.diff.Diff.to_dict`)."""
    from evalcli.diff import ChangeGate

    gated = any("gate" in x for x in d["metrics"])
    header = ["metric", "baseline", candidate, "Δ", "Δ%", "change"]
    header += ["gate", "status"] if gated else []
    rows = []
    for x in d["metrics"]:
        row = [code(x["id"]), "" if x["change"] == "new" else fmt(x["baseline"]),
               "" if x["change"] == "removed" else fmt(x["candidate"]), _signed(x["delta"]),
               _pct(x["relative"]), CHANGE.get(x["change"], x["change"])]
        if gated:
            g = x.get("gate")
            row += [cell(ChangeGate.from_mapping(g).describe()) if g else "",
                    "" if g is None else (f"{PASS} pass" if x["passed"] else f"{FAIL} FAIL")]
        rows.append(row)
    out = table(header, rows, "lrrrrl" + ("ll" if gated else ""))
    segs = d.get("segments") or []
    if segs:
        worse = sorted((x for x in segs if x["change"] == "worse"),
                       key=lambda x: -abs(x["relative"] if x["relative"] is not None
                                          else x["delta"] or 0.0))
        out += ["", f"Segments: {len(worse)} of {len(segs)} segment values got worse"
                + (" — largest: " + ", ".join(
                    f"{code(x['id'])} [{cell(x['segment'])}] {_signed(x['delta'])}"
                    for x in worse[:5]) if worse else "") + "."]
    out += [f"_{cell(n)}_" for n in d.get("notes", [])]
    return out


def failures_section(failures: Sequence[str]) -> list[str]:
    if not failures:
        return []
    return ["", "### Failures", "", *(f"- {FAIL} {cell(f)}" for f in failures)]


def inputs_section(r: RunResult) -> list[str]:
    lines = ["", "<details><summary>Inputs and alignment</summary>", ""]
    lines.append(f"- predictions: {code(_rel(r.predictions.path))}"
                 + (f" ({r.predictions.rows:,} rows)" if r.predictions.rows is not None else ""))
    if r.truth is not None:
        lines.append(f"- truth: {code(_rel(r.truth.path))}"
                     + (f" ({r.truth.rows:,} rows)" if r.truth.rows is not None else ""))
    lines += [f"- {fact}" for fact in alignment_facts(r)]
    if r.options:
        lines.append("- options: " + ", ".join(f"{k}={v}" for k, v in r.options.items()))
    if r.group_by:
        lines.append("- group_by: " + ", ".join(r.group_by))
    lines += ["", "</details>"]
    return lines


def _rel(p: str) -> str:
    from evalcli.report import display_path

    return display_path(p)


def footer(engine: str | None = None) -> list[str]:
    eng = f" · engine {engine}" if engine else ""
    return ["", f"<sub>evalcli {__version__} · report schema {SCHEMA_VERSION}{eng}</sub>", ""]


def render(r: RunResult) -> str:
    """The Markdown report of a run."""
    lines = [verdict(r), ""]
    lines += metrics_section(r)
    lines += segments_section(r)
    base = r.extra.get("baseline")
    if isinstance(base, dict):
        lines += ["", f"### Compared with the baseline {code(base['baseline'])}", ""]
        lines += diff_rows(base, "this run")
    lines += failures_section(r.failures)
    lines += inputs_section(r)
    lines += footer(r.engine)
    return "\n".join(lines)


def render_diff(d: Mapping[str, Any]) -> str:
    """The Markdown of ``evalcli diff``."""
    gated = any("gate" in x for x in d["metrics"])
    if not gated:
        head = "## evalcli diff — no gates"
    elif d["passed"]:
        head = f"## {PASS} evalcli diff — passed"
    else:
        head = f"## {FAIL} evalcli diff — {len(d['failures'])} gate(s) failed"
    lines = [head, "", f"{code(d['candidate'])} compared with {code(d['baseline'])} "
             f"({d['task']})", ""]
    lines += diff_rows(d)
    lines += failures_section(d["failures"])
    lines += footer()
    return "\n".join(lines)
