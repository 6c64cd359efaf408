"""The Markdown report: a summary for a pull-request comment or a CI step summary.

Order: the verdict first (one heading), then the metrics table, per-segment values, the
comparison with the baseline, the failures with their reasons, and the inputs folded away.
GitHub-flavoured Markdown (pipe tables, ``<details>``); no colours, no images.

Reports are pasted into pull requests, and segment values, labels, column names, notes, metric
ids, paths, gate messages and baseline names come from data: every piece of text drawn from
data goes through :func:`escape` (or :func:`code`, which falls back to it), so that it shows as
typed and never becomes HTML, a link, an image, another table cell or another line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from evalcli._version import __version__
from evalcli.report import (
    alignment_facts,
    ci_notes,
    format_signed,
    format_value,
    metric_notes,
    shared_notes,
    system_gates,
)
from evalcli.result import SCHEMA_VERSION, Diff, MetricResult, RunResult

MAX_SEGMENT_ROWS = 50
"""Segments listed in the Markdown table (a pull-request comment has a size limit)."""

PASS, FAIL, WARN = "✅", "❌", "⚠️"


fmt = format_value


_LINE_BREAK = re.compile(r"\r\n|[\r\n\v\f\x85\u2028\u2029]")
_MARKUP_START = re.compile(r"<(?!=?[ \t])")
"""A ``<`` that could open an HTML tag, comment or autolink: all but a comparison (``<= 0.4``,
``a < b``), which the gate descriptions write and which nothing in Markdown reads as markup."""
_NOT_IN_CODE = re.compile(r"[`|\r\n\v\f\x85\u2028\u2029]")


def escape(text: object) -> str:
    """Text drawn from data, made inert in GitHub-flavoured Markdown, in a table cell or a line.

    Line breaks become spaces (no new row, block or heading); ``\\``, ``|`` and backticks are
    backslash-escaped (no new cell, no code span); ``&`` and a ``<`` that could open a tag
    become entities (no HTML, no autolink); ``](`` is broken (no link, no image).

    >>> escape("a|b\\nc")
    'a\\\\|b c'
    >>> escape("<img src=x onerror=alert(1)> & [x](javascript:y)")
    '&lt;img src=x onerror=alert(1)> &amp; [x]\\\\(javascript:y)'
    >>> escape("gate <= 0.4")
    'gate <= 0.4'
    """
    s = _LINE_BREAK.sub(" ", str(text))
    s = s.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("&", "&amp;")
    return _MARKUP_START.sub("&lt;", s).replace("](", "]\\(")


def code(text: object) -> str:
    """An inline code span (nothing in it is markup); text a code span cannot hold (a backtick,
    a pipe, a line break) is plain text through :func:`escape` instead.

    >>> code("ndcg@10"), code("a`b")
    ('`ndcg@10`', 'a\\\\`b')
    """
    s = str(text)
    if not s.strip() or _NOT_IN_CODE.search(s):
        return escape(s)
    return f"`{s}`"


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> list[str]:
    """A pipe table; ``align`` holds one of ``l``/``r`` per column (default left).

    The header is plain text (escaped here); the rows' cells are Markdown, escaped by the
    caller (:func:`escape`, :func:`code`)."""
    seps = ["---:" if (align[i:i + 1] == "r") else "---" for i in range(len(header))]
    out = ["| " + " | ".join(escape(h) for h in header) + " |",
           "| " + " | ".join(seps) + " |"]
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
    if r.baseline is not None:
        n += len(r.baseline.gated)
    for name, s in r.systems.items():  # the other systems' own gates
        if r.comparison is not None and name != r.comparison.baseline:
            n += sum(m.gate is not None for m in s.metrics)
            n += sum(m.gate is not None for g in s.segments for m in g.metrics)
    if r.comparison is not None:
        n += sum(row.gate is not None for row in r.comparison.rows)
    return n


def verdict(r: RunResult) -> str:
    """The heading: pass/fail first."""
    n = gate_count(r)
    task = escape(r.task)
    if n == 0:
        return f"## evalcli · {task} — no gates"
    if not r.gating:
        would = f", {len(r.failures)} would fail" if r.failures else ""
        return f"## {WARN} evalcli · {task} — gating off ({n} gates{would})"
    if r.passed:
        return f"## {PASS} evalcli · {task} — passed ({n} gate{'s' if n != 1 else ''})"
    return f"## {FAIL} evalcli · {task} — {len(r.failures)} of {n} gates failed"


def _interval(m: MetricResult) -> str:
    if m.ci is None or not m.ci.defined:
        return "—"
    return escape(f"[{fmt(m.ci.low)}, {fmt(m.ci.high)}]")



def uncertainty_line(r: RunResult) -> list[str]:
    """How the intervals were computed (one sentence), when the run has them."""
    u = r.uncertainty
    if u is None:
        return []
    methods = list(dict.fromkeys(m.ci.method for m in r.metrics if m.ci is not None))
    boot = any(x in ("percentile", "bca") for x in methods)
    return [escape(f"{u.get('level', 0.95):.0%} confidence intervals: "
                   f"{', '.join(methods) or 'none'}"
                   + (f"; {u.get('replicates', 0):,} bootstrap replicates over "
                      f"{u.get('groups', 0):,} random groups of units ({u.get('unit')}), "
                      f"seed {u.get('seed', 0)}" if boot else f"; unit: {u.get('unit')}")
                   + "."), ""]


def metrics_section(r: RunResult) -> list[str]:
    """The metrics table; a note several metrics carry (an interval's binned scores) is
    written once below it, numbered, as the terminal and the HTML report do."""
    gated = any(m.gate is not None for m in r.metrics)
    ci = next((m.ci.level for m in r.metrics if m.ci is not None), None)
    header = ["metric", "value"] + ([f"{ci:.0%} CI"] if ci is not None else []) + \
        (["gate", "status"] if gated else []) + ["notes"]
    shared = shared_notes(r.metrics)
    rows = []
    for m in r.metrics:
        notes = list(dict.fromkeys([*metric_notes(m), *ci_notes(m)]))
        own = [escape(n) for n in notes if n not in shared]
        marks = "".join(f"[{shared[n]}]" for n in notes if n in shared)
        row = [code(m.id), escape(fmt(m.value))]
        if ci is not None:
            row.append(_interval(m))
        if gated:
            row += [escape(m.gate.describe()) if m.gate else "", _status(m)]
        row.append("; ".join([*own, marks] if marks else own))
        rows.append(row)
    out = table(header, rows, "lr" + ("r" if ci is not None else "") + ("ll" if gated else "")
                + "l")
    if shared:
        out += ["", *(f"- [{i}] {escape(n)}" for n, i in shared.items())]
    return out


def systems_section(r: RunResult) -> list[str]:
    """Each system against the baseline system (for a pull request): value, Δ, the interval
    of Δ, adjusted p and the verdict, with a legend."""
    comp = r.comparison
    if comp is None:
        return []
    names = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
             "none": "no"}
    tests = ", ".join(dict.fromkeys(x.test for x in comp.rows if x.p_value is not None))
    out = ["", f"### Systems compared with {code(comp.baseline)}", "",
           escape(f"Δ = system − {comp.baseline}. ▲ significantly better, ▼ significantly "
                  f"worse (adjusted p < {comp.alpha:g}, {names.get(comp.correction)} "
                  f"correction), = not significant. Tests: {tests or 'none'}."), ""]
    rows = []
    marks = {"better": "▲ better", "worse": "▼ worse", "no significant change": "= n.s."}
    for x in comp.rows:
        ci = "—" if x.ci is None or not x.ci.defined else \
            f"[{format_signed(x.ci.low) or '0'}, {format_signed(x.ci.high) or '0'}]"
        p = "—" if x.adjusted is None else (f"{x.adjusted:.1e}" if x.adjusted < 0.001
                                            else f"{x.adjusted:.3f}")
        rows.append([code(x.system), code(x.id), escape(fmt(x.value)),
                     escape(format_signed(x.delta)), escape(ci), p,
                     marks.get(x.change, "undefined")
                     + ("" if (passed := system_gates(r, x)) is None else " (gate: pass)"
                        if passed else " (gate: **FAIL**)")])
    out += table(["system", "metric", "value", "Δ", f"{comp.level:.0%} CI of Δ", "p adj.",
                  "change"], rows, "llrrrrl")
    return out


def segments_section(r: RunResult) -> list[str]:
    if not r.segments:
        return []
    out = ["", f"### By segment ({len(r.segments)})", ""]
    header = [*r.group_by, "rows", *(m.id for m in r.metrics)]
    rows = []
    undefined: dict[tuple[str, str], list[str]] = {}
    for s in r.segments:
        row = [escape(s.key[g]) for g in r.group_by] + [f"{s.rows:,}"]
        for m in s.metrics:
            txt = escape(fmt(m.value))
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
            out.append(f"- {code(id_)}: {escape(why)} — {escape(', '.join(labels[:5]))}"
                       + (f" and {len(labels) - 5} more" if len(labels) > 5 else ""))
    return out


CHANGE = {"better": "▲ better", "worse": "▼ worse", "same": "= same", "new": "new",
          "removed": "removed", "undefined": "n/a"}


_signed = format_signed


def _pct(v: float | None) -> str:
    if v is None:
        return ""
    return "0.00%" if v == 0 else f"{100 * v:+.2f}%"


def diff_rows(d: Diff, candidate: str = "candidate") -> list[str]:
    """The table of a diff; the header says the sign convention every output uses:
    Δ = candidate − baseline."""
    gated = bool(d.gated)
    level = next((x.ci.level for x in d.metrics if x.ci is not None), None)
    header = ["metric", "baseline", candidate, f"Δ ({candidate} − baseline)", "Δ%"]
    header += [f"{level:.0%} CI of Δ", "p"] if level is not None else []
    header += ["change"] + (["gate", "status"] if gated else [])
    rows = []
    for x in d.metrics:
        row = [code(x.id), "" if x.change == "new" else escape(fmt(x.baseline)),
               "" if x.change == "removed" else escape(fmt(x.candidate)),
               escape(_signed(x.delta)), escape(_pct(x.relative))]
        if level is not None:
            ci = "—" if x.ci is None or not x.ci.defined else \
                f"[{_signed(x.ci.low) or '0'}, {_signed(x.ci.high) or '0'}]"
            p = "" if x.p_value is None else (f"{x.p_value:.1e}" if x.p_value < 0.001
                                              else f"{x.p_value:.3f}")
            row += [escape(ci), p]
        row.append(escape(CHANGE.get(x.change, x.change)))
        if gated:
            g = x.gate
            row += [escape(g.describe()) if g is not None else "",
                    "" if g is None else (f"{PASS} pass" if x.passed else f"{FAIL} FAIL")]
        rows.append(row)
    out = table(header, rows, "lrrrr" + ("rr" if level is not None else "") + "l"
                + ("ll" if gated else ""))
    unpaired = next((x.ci.note for x in d.metrics if x.ci is not None and x.ci.note
                     and x.test == "normal-unpaired"), None)
    if unpaired:
        out += ["", f"_Intervals {escape(unpaired)}._"]
    segs = d.segments
    if segs:
        worse = sorted((x for x in segs if x.change == "worse"),
                       key=lambda x: -abs(x.relative if x.relative is not None
                                          else x.delta or 0.0))
        out += ["", f"Segments: {len(worse)} of {len(segs)} segment values got worse"
                + (" — largest: " + ", ".join(
                    f"{code(x.id)} [{escape(x.segment)}] {escape(_signed(x.delta))}"
                    for x in worse[:5]) if worse else "") + "."]
    out += [f"_{escape(n)}_" for n in d.notes]
    return out


def failures_section(failures: Sequence[str]) -> list[str]:
    if not failures:
        return []
    return ["", "### Failures", "", *(f"- {FAIL} {escape(f)}" for f in failures)]


def inputs_section(r: RunResult) -> list[str]:
    lines = ["", "<details><summary>Inputs and alignment</summary>", ""]
    lines.append(f"- predictions: {code(_rel(r.predictions.path))}"
                 + (f" ({r.predictions.rows:,} rows)" if r.predictions.rows is not None else ""))
    if r.truth is not None:
        lines.append(f"- truth: {code(_rel(r.truth.path))}"
                     + (f" ({r.truth.rows:,} rows)" if r.truth.rows is not None else ""))
    lines += [f"- {escape(fact)}" for fact in alignment_facts(r)]
    if r.options:
        lines.append("- options: " + escape(", ".join(f"{k}={v}" for k, v in r.options.items())))
    if r.group_by:
        lines.append("- group_by: " + escape(", ".join(r.group_by)))
    lines += ["", "</details>"]
    return lines


def _rel(p: str) -> str:
    from evalcli.result import display_path

    return display_path(p)


def footer(engine: str | None = None) -> list[str]:
    eng = f" · engine {escape(engine)}" if engine else ""
    return ["", f"<sub>evalcli {__version__} · report schema {SCHEMA_VERSION}{eng}</sub>", ""]


def render(r: RunResult) -> str:
    """The Markdown report of a run."""
    lines = [verdict(r), ""]
    lines += uncertainty_line(r)
    lines += metrics_section(r)
    lines += systems_section(r)
    lines += segments_section(r)
    if r.baseline is not None:
        lines += ["", f"### Compared with the baseline {code(r.baseline.baseline)}", ""]
        lines += diff_rows(r.baseline, "this run")
    lines += failures_section(r.failures)
    lines += inputs_section(r)
    lines += footer(r.engine)
    return "\n".join(lines)


def render_diff(d: Diff) -> str:
    """The Markdown of ``evalcli diff``."""
    if not d.gated:
        head = "## evalcli diff — no gates"
    elif d.passed:
        head = f"## {PASS} evalcli diff — passed"
    else:
        head = f"## {FAIL} evalcli diff — {len(d.failures)} gate(s) failed"
    lines = [head, "", f"{code(d.candidate)} compared with {code(d.baseline)} "
             f"({escape(d.task)})", ""]
    lines += diff_rows(d)
    lines += failures_section(d.failures)
    lines += footer()
    return "\n".join(lines)
