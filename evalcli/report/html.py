"""The HTML report: one self-contained file that works offline.

Inline CSS, plots as inline SVG (see :mod:`evalcli.report.plots`), no scripts, and a Content
Security Policy that forbids loading anything: opening the file makes no network request.
Sections: the verdict and the failures, every gate (overall, per segment, against the
baseline: as many rows as the verdict counts), the metrics, the plots (ROC and precision-recall
for binary, confusion-matrix heat maps for multiclass, metric@k for ranking, residuals for
regression), per-segment values with bars (and a heat map per segment for a metric whose value
is a matrix), the comparison with the baseline, the inputs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

from evalcli._version import __version__
from evalcli.report import format_signed, notes_of, system_gates
from evalcli.report.markdown import CHANGE, fmt, gate_count
from evalcli.result import CI, SCHEMA_VERSION, Diff, MetricResult, RunResult

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
MAX_SEGMENT_ROWS = 200
MAX_SEGMENT_PLOTS = 8
MAX_SEGMENT_BARS = 60
MAX_GATE_ROWS = 500

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#111827;
background:#f9fafb}
main{max-width:1100px;margin:0 auto;padding:24px}
header.verdict{padding:16px 24px;border-radius:8px;margin-bottom:20px;color:#fff}
header.pass{background:#15803d}header.fail{background:#b91c1c}header.none{background:#374151}
header.off{background:#b45309}
header h1{margin:0 0 4px;font-size:22px}header p{margin:0;opacity:.9}
section{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:16px 20px;
margin-bottom:20px}
h2{font-size:17px;margin:0 0 12px}h3{font-size:15px;margin:18px 0 10px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:5px 10px;border-bottom:1px solid #e5e7eb;text-align:left;vertical-align:top}
th{background:#f3f4f6;font-weight:600}.num{text-align:right;white-space:nowrap}
.nw{white-space:nowrap}.wide{overflow-x:auto}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,monospace}
.ok{color:#15803d;font-weight:600}.bad{color:#b91c1c;font-weight:600}
.na{color:#92400e}.dim{color:#6b7280}.better{color:#15803d}.worse{color:#b91c1c}
ul.failures{margin:0;padding-left:20px;color:#b91c1c}
p.note{margin:6px 0 0;color:#6b7280;font-size:13px}
.plots{display:flex;flex-wrap:wrap;gap:16px}#segments .plots{margin-top:16px}
figure{margin:0;flex:1 1 420px;max-width:600px}
figure svg{width:100%;height:auto}
figcaption{color:#6b7280;font-size:12px}
footer{color:#6b7280;font-size:12px;text-align:center;padding-bottom:24px}
"""


def _status(passed: bool | None, failure: str | None, gated: bool) -> str:
    if not gated:
        return ""
    if passed is None:
        return '<span class="na">would fail</span>' if failure else "would pass"
    return '<span class="ok">pass</span>' if passed else '<span class="bad">FAIL</span>'


def _num(v: float | None) -> str:
    return '<span class="na">n/a</span>' if v is None else escape(fmt(v))


NUM, NOWRAP, TEXT = "num", "nw", ""
"""Column kinds of :func:`_table`: numbers (right-aligned, header too, never wrapped), short
text kept on one line (a gate such as ``>= 0.3``), text."""


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], kinds: Sequence[str]) -> str:
    """A table whose headers are aligned as their columns are (a number's header is
    right-aligned above it, not left-aligned where it reads as the next column's)."""
    def cell(tag: str, kind: str, content: str) -> str:
        return f'<{tag} class="{kind}">{content}</{tag}>' if kind else f"<{tag}>{content}</{tag}>"

    head = "".join(cell("th", kinds[i], escape(h)) for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(cell("td", kinds[i], c) for i, c in enumerate(row))
                   + "</tr>" for row in rows)
    # (a table wider than its section, many metrics by segment, scrolls inside it: the
    # page keeps its width)
    return (f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
            "</table></div>")


def _verdict(r: RunResult) -> str:
    n = gate_count(r)
    if n == 0:
        cls, text = "none", "no gates"
    elif not r.gating:
        cls, text = "off", f"gating off — {n} gates" + (
            f", {len(r.failures)} would fail" if r.failures else "")
    elif r.passed:
        cls, text = "pass", f"✓ passed — {n} gate{'s' if n != 1 else ''}"
    else:
        cls, text = "fail", f"✗ {len(r.failures)} of {n} gates failed"
    rows = r.alignment.evaluated
    sub = (f"evalcli · {escape(r.task)} · {len(r.metrics)} metrics · {rows:,} rows evaluated"
           + (f" · by {escape(', '.join(r.group_by))}" if r.group_by else ""))
    return f'<header class="verdict {cls}"><h1>{escape(text)}</h1><p>{sub}</p></header>'


def _failures(r: RunResult) -> str:
    if not r.failures:
        return ""
    title = "Failures" if r.gating else "Would fail (gating off)"
    items = "".join(f"<li>{escape(f)}</li>" for f in r.failures)
    return f'<section id="failures"><h2>{title}</h2><ul class="failures">{items}</ul></section>'


def _gate_status(r: RunResult, passed: bool | None, failure: str | None) -> str:
    failed = passed is False or (passed is None and failure is not None)
    if not r.gating:
        return '<span class="na">would fail</span>' if failed else "would pass"
    return '<span class="bad">FAIL</span>' if failed else '<span class="ok">pass</span>'


def _gates(r: RunResult) -> str:
    """Every gate the verdict counts (:func:`~evalcli.report.markdown.gate_count`), one row
    each: the overall ones, each segment's, and the gates on the change from the baseline."""
    rows: list[list[str]] = []
    for m in r.metrics:
        if m.gate is not None:
            rows.append([f"<code>{escape(m.id)}</code>", "overall", escape(m.gate.describe()),
                         _num(m.value), _gate_status(r, m.passed, m.failure)])
    for i, overall in enumerate(r.metrics):
        for s in r.segments:
            m = s.metrics[i]
            if m.gate is not None:
                rows.append([f"<code>{escape(overall.id)}</code>",
                             f"segment {escape(s.label)}", escape(m.gate.describe()),
                             _num(m.value), _gate_status(r, m.passed, m.failure)])
    for x, g in r.baseline.gated if r.baseline is not None else []:
        # the change the gate reads: relative (of the baseline) when all its bounds are
        change = x.relative if g.relative else x.delta
        shown = _num(None) if change is None else escape(
            ("0.00%" if change == 0 else f"{100 * change:+.2f}%") if g.relative
            else format_signed(change))
        rows.append([f"<code>{escape(x.id)}</code>", "change from the baseline",
                     escape(g.describe()), shown,
                     _gate_status(r, x.passed, x.failure)])
    if not rows:
        return ""
    header = ["metric", "applies to", "gate", "value", "status"]
    table = _table(header, rows[:MAX_GATE_ROWS], [TEXT, TEXT, NOWRAP, NUM, NOWRAP])
    notes = []
    if len(rows) > MAX_GATE_ROWS:
        notes.append(f"{len(rows) - MAX_GATE_ROWS:,} more gates in the JSON report.")
    if r.baseline is not None and rows[-1][1] == "change from the baseline":
        notes.append("value: the metric's value, overall or in the segment; for a gate on the "
                     "change from the baseline, the change Δ = this run − baseline (relative "
                     "to the baseline for a relative gate).")
    notes_html = "".join(f'<p class="note">{escape(n)}</p>' for n in notes)
    return f'<section id="gates"><h2>Gates ({len(rows)})</h2>{table}{notes_html}</section>'


def _metrics(r: RunResult) -> str:
    """The metrics table. A note that several metrics share (ranking's queries left out) is
    written once under the table and referred to by number."""
    from collections import Counter

    shared = [n for n, c in Counter(n for m in r.metrics for n in notes_of(m)).items() if c > 1]
    number = {n: i + 1 for i, n in enumerate(shared)}
    gated = any(m.gate is not None for m in r.metrics)
    level = next((m.ci.level for m in r.metrics if m.ci is not None), None)
    header = ["metric", "value"] + ([f"{level:.0%} CI"] if level is not None else []) + \
        (["gate", "status"] if gated else []) + ["notes"]
    rows = []
    for m in r.metrics:
        row = [f"<code>{escape(m.id)}</code>", _num(m.value)]
        if level is not None:
            row.append(_interval(m.ci))
        if gated:
            row += [escape(m.gate.describe()) if m.gate else "",
                    _status(m.passed, m.failure, m.gate is not None)]
        own = [n for n in notes_of(m) if n not in number]
        refs = [f"[{number[n]}]" for n in notes_of(m) if n in number]
        row.append(f'<span class="dim">{escape(" ".join(["; ".join(own), *refs]).strip())}'
                   "</span>")
        rows.append(row)
    kinds = [TEXT, NUM] + ([NUM] if level is not None else []) + \
        ([NOWRAP, NOWRAP] if gated else []) + [TEXT]
    footnotes = "".join(f'<p class="note">[{i}] {escape(n)}</p>' for n, i in number.items())
    how = f'<p class="note">{escape(_how(r))}</p>' if r.uncertainty is not None else ""
    return (f'<section id="metrics"><h2>Metrics</h2>{how}{_table(header, rows, kinds)}'
            f"{footnotes}</section>")


def _interval(ci: CI | None) -> str:
    """``[0.9011, 0.9240]``, or a dash whose title says why there is none."""
    if ci is None or not ci.defined:
        why = ci.reason if ci is not None and ci.reason else "no interval"
        return f'<span class="dim" title="{escape(why)}">—</span>'
    note = f' title="{escape(ci.note)}"' if ci.note else ""
    return f"<span{note}>[{_num(ci.low)}, {_num(ci.high)}]</span>"


def _how(r: RunResult) -> str:
    u = r.uncertainty or {}
    methods = list(dict.fromkeys(m.ci.method for m in r.metrics if m.ci is not None))
    boot = any(x in ("percentile", "bca") for x in methods)
    return (f"{u.get('level', 0.95):.0%} confidence intervals: {', '.join(methods) or 'none'}"
            + (f"; {u.get('replicates', 0):,} bootstrap replicates over {u.get('groups', 0):,} "
               f"random groups of units ({u.get('unit')}), seed {u.get('seed', 0)}" if boot
               else f"; unit: {u.get('unit')}") + ".")


def _systems(r: RunResult) -> str:
    """Each system against the baseline system: value, Δ, the interval of Δ, adjusted p, the
    verdict, a change gate's outcome."""
    comp = r.comparison
    if comp is None:
        return ""
    names = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
             "none": "no"}
    marks = {"better": '<span class="pass">▲ better</span>',
             "worse": '<span class="fail">▼ worse</span>',
             "no significant change": '<span class="dim">= n.s.</span>'}
    rows = []
    for x in comp.rows:
        ci = "—" if x.ci is None or not x.ci.defined else \
            f"[{_signed(x.ci.low)}, {_signed(x.ci.high)}]"
        p = "—" if x.adjusted is None else f"{x.adjusted:.3g}"
        passed = system_gates(r, x)
        gate = "" if passed is None else _status(passed, x.failure, True)
        rows.append([f"<code>{escape(x.system)}</code>", f"<code>{escape(x.id)}</code>",
                     _num(x.value), _signed(x.delta), ci, p, escape(x.test),
                     marks.get(x.change, "undefined"), gate])
    tests = ", ".join(dict.fromkeys(x.test for x in comp.rows if x.p_value is not None))
    legend = (f"Δ = system − {comp.baseline}. ▲ significantly better, ▼ significantly worse "
              f"(adjusted p &lt; {comp.alpha:g}, {names.get(comp.correction)} correction), = not "
              f"significant. Tests: {escape(tests) or 'none'}.")
    table = _table(["system", "metric", "value", "Δ", f"{comp.level:.0%} CI of Δ", "p adj.",
                    "test", "change", "gate"], rows,
                   [TEXT, TEXT, NUM, NUM, NUM, NUM, TEXT, NOWRAP, NOWRAP])
    return (f'<section id="systems"><h2>Systems compared with '
            f"<code>{escape(comp.baseline)}</code></h2><p class=\"note\">{legend}</p>{table}"
            "</section>")


def _signed(v: float | None) -> str:
    return "" if v is None else ("+" if v > 0 else "") + _num(v)


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def _areas(r: RunResult, curve: str) -> list[tuple[str, float]]:
    """The values that summarise a curve, with their legend names, as the task names them
    (:attr:`RunResult.curve_areas`), those the run computed."""
    values = {m.metric: m.value for m in reversed(r.metrics) if m.value is not None}
    return [(label, values[name]) for name, label in r.curve_areas.get(curve, [])
            if name in values]


def _is_matrix(m: MetricResult) -> bool:
    """Whether the metric's result is a matrix (its details hold labels and a matrix; the
    value is a count), drawn as a heat map rather than shown as a number."""
    d = m.details
    return isinstance(d.get("labels"), list) and isinstance(d.get("matrix"), list)


def _matrix_figure(m: MetricResult, title: str) -> str:
    from evalcli.report import plots as p

    d = m.details
    rows, columns = str(d.get("rows", "true class")), str(d.get("columns", "predicted class"))
    return _figure(p.confusion(d["labels"], d["matrix"], title, rows, columns),
                   f"{title}: rows are the {rows}, columns the {columns}.")


AT_K = re.compile(r"^(?P<name>[^@\[]+)@(?P<k>\d+)(?P<rest>(?:\[.*)?)$")
"""An id with an integer cut-off (``ndcg@10[gain=exponential]``; not ``lift@0.01``)."""


def at_k_series(metrics: Sequence[MetricResult]) -> dict[str, list[tuple[int, float | None]]]:
    """Metric@k values grouped by metric and other parameters, for metrics with 2+ cut-offs.

    >>> from evalcli.result import MetricResult as M
    >>> ms = [M(f"ndcg@{k}", "ndcg", "ranking", {"k": k}, "higher", v)
    ...       for k, v in ((10, 0.5), (5, 0.4))]
    >>> ms.append(M("mrr@10", "mrr", "ranking", {}, "higher", 1.0))
    >>> at_k_series(ms)
    {'ndcg@k': [(5, 0.4), (10, 0.5)]}
    """
    groups: dict[str, list[tuple[int, float | None]]] = {}
    for m in metrics:
        match = AT_K.match(m.id)
        if match:
            key = f"{match['name']}@k{match['rest']}"
            groups.setdefault(key, []).append((int(match["k"]), m.value))
    return {k: sorted(v) for k, v in groups.items() if len(v) >= 2}


def at_k_bounds(metrics: Sequence[MetricResult]) -> dict[str, list[tuple[int, float, float]]]:
    """The intervals of the metric@k series (k, low, high), where they have bounds."""
    groups: dict[str, list[tuple[int, float, float]]] = {}
    for m in metrics:
        match = AT_K.match(m.id)
        if match and m.ci is not None and m.ci.low is not None and m.ci.high is not None:
            key = f"{match['name']}@k{match['rest']}"
            groups.setdefault(key, []).append((int(match["k"]), m.ci.low, m.ci.high))
    return {k: sorted(v) for k, v in groups.items()}


def _calibration_labels(r: RunResult) -> dict[tuple[int, str], list[str]]:
    """The ece/mce values the run computed, by their binning, as legend texts."""
    out: dict[tuple[int, str], list[str]] = {}
    for m in r.metrics:
        if m.metric in ("ece", "mce") and m.value is not None and "bins" in m.params:
            key = (int(m.params["bins"]), str(m.params.get("strategy", "uniform")))
            out.setdefault(key, []).append(f"{m.metric.upper()} {m.value:.4f}")
    return out


def plots(r: RunResult) -> list[str]:
    """Every plot the result supports, as <figure> elements."""
    from evalcli.report import plots as p

    out = []
    if "roc" in r.curves:
        out.append(_figure(p.roc(r.curves["roc"], _areas(r, "roc")),
                           "ROC: one point per distinct score (weighted counts)."))
    if "pr" in r.curves:
        df = r.curves["pr"]
        prevalence = float(df["precision"][-1]) if df.height else None
        out.append(_figure(p.pr(df, _areas(r, "pr"), prevalence),
                           "Precision-recall: one point per distinct score."))
    if "reliability" in r.curves:
        out.append(_figure(p.reliability(r.curves["reliability"], _calibration_labels(r)),
                           "Reliability diagram: each non-empty score bin at its mean score "
                           "and fraction positive (weighted); bars: the bin's share of the "
                           "weight (of the first binning, when there are several: bars of "
                           "other widths on one axis would hide each other)."))
    if "gain" in r.curves:
        df = r.curves["gain"]
        out.append(_figure(p.gain(df), "Cumulative gain: the share of the positives in the top "
                           "fraction of the rows, at each group's cut (weighted; tied scores "
                           "count in part)."))
        out.append(_figure(p.lift(df), "Lift: the gain over the fraction at each cut; bars: "
                           "each group's positive rate over the base rate."))
    for m in r.metrics:
        if _is_matrix(m):
            out.append(_matrix_figure(m, m.id))
    series = at_k_series(r.metrics)
    if series:
        bounds = {k: v for k, v in at_k_bounds(r.metrics).items() if k in series}
        out.append(_figure(p.at_k(series, "metric@k", bounds),
                           "Each metric at its cut-offs k" + (
                               f"; bars: {r.uncertainty.get('level', 0.95):.0%} intervals."
                               if bounds and r.uncertainty else ".")))
    if "residuals" in r.curves:
        out.append(_figure(p.residuals(r.curves["residuals"]),
                           "Residuals y − ŷ (rounded to 3 significant digits), weighted."))
    return out


def _segments(r: RunResult) -> str:
    if not r.segments:
        return ""
    shown = [i for i, m in enumerate(r.metrics) if not _is_matrix(m)]  # matrices: heat maps
    header = [*r.group_by, "rows", *(r.metrics[i].id for i in shown)]
    rows = []
    for s in r.segments[:MAX_SEGMENT_ROWS]:
        row = [escape(str(s.key[g])) for g in r.group_by] + [f"{s.rows:,}"]
        for m in (s.metrics[i] for i in shown):
            cell = _num(m.value)
            if m.passed is False:
                cell = f'<span class="bad" title="{escape(m.failure or "")}">{cell} ✗</span>'
            elif m.value is None and m.notes:
                cell = f'<span title="{escape("; ".join(m.notes))}">{cell}</span>'
            row.append(cell)
        rows.append(row)
    kinds = [TEXT] * len(r.group_by) + [NUM] * (1 + len(shown))
    more = (f'<p class="dim">{len(r.segments) - MAX_SEGMENT_ROWS} more segments in the JSON '
            "report.</p>" if len(r.segments) > MAX_SEGMENT_ROWS else "")
    undefined: dict[tuple[str, str], list[str]] = {}
    for s in r.segments:
        for m in (s.metrics[i] for i in shown):
            if m.value is None:
                undefined.setdefault((m.id, "; ".join(m.notes) or "undefined"),
                                     []).append(s.label)
    notes = ""
    if undefined:
        items = "".join(f"<li><code>{escape(i)}</code>: {escape(why)} — "
                        f"{escape(', '.join(labels[:5]))}"
                        + (f" and {len(labels) - 5} more" if len(labels) > 5 else "") + "</li>"
                        for (i, why), labels in undefined.items())
        notes = ('<p class="na">n/a: undefined in the segment (never counted as 0)</p>'
                 f"<ul>{items}</ul>")
    return (f'<section id="segments"><h2>By segment ({len(r.segments)})</h2>'
            f"{_table(header, rows, kinds)}{more}{notes}"
            f'<div class="plots">{"".join(_segment_plots(r))}</div>'
            f"{_segment_matrices(r)}</section>")


def _segment_matrices(r: RunResult) -> str:
    """A heat map per segment for each metric whose value is a matrix (a confusion matrix),
    the first :data:`MAX_SEGMENT_PLOTS` segments; the JSON report holds them all."""
    out = []
    for i, overall in enumerate(r.metrics):
        if not _is_matrix(overall):
            continue
        figs = [_matrix_figure(s.metrics[i], f"{overall.id} · {s.label}")
                for s in r.segments[:MAX_SEGMENT_PLOTS] if _is_matrix(s.metrics[i])]
        more = len(r.segments) - MAX_SEGMENT_PLOTS
        out.append(f"<h3>{escape(overall.id)} by segment</h3>"
                   f'<div class="plots">{"".join(figs)}</div>'
                   + (f'<p class="note">{more:,} more segments\' matrices in the JSON report.'
                      "</p>" if more > 0 else ""))
    return "".join(out)


def _segment_plots(r: RunResult) -> list[str]:
    from evalcli.report import plots as p

    if len(r.segments) > MAX_SEGMENT_BARS:
        return []
    gated = {m.id for s in r.segments for m in s.metrics if m.gate is not None}
    order = sorted((i for i, m in enumerate(r.metrics) if not _is_matrix(m)),
                   key=lambda i: r.metrics[i].id not in gated)
    out = []
    if len(order) > MAX_SEGMENT_PLOTS:
        left = ", ".join(r.metrics[i].id for i in order[MAX_SEGMENT_PLOTS:])
        out.append(f'<p class="note">Plots of the first {MAX_SEGMENT_PLOTS} metrics (gated '
                   f"first); the table above has them all (no plot: {escape(left)}).</p>")
    for i in order[:MAX_SEGMENT_PLOTS]:
        m = r.metrics[i]
        values = [s.metrics[i].value for s in r.segments]
        if all(v is None for v in values):
            continue
        gates = [s.metrics[i].gate for s in r.segments if s.metrics[i].gate is not None]
        common = gates[0] if gates and all(g == gates[0] for g in gates) else None
        cis = [s.metrics[i].ci for s in r.segments]
        bounds = [(ci.low, ci.high) if ci is not None and ci.defined else None for ci in cis]
        svg = p.segment_bars(m.id, [s.label for s in r.segments], values,
                             [s.metrics[i].passed is False for s in r.segments], m.value,
                             common.min if common else None, common.max if common else None,
                             bounds if any(b is not None for b in bounds) else None)
        out.append(_figure(svg, f"{m.id} per segment; dotted: the overall value" + (
            f"; bars: {r.uncertainty.get('level', 0.95):.0%} intervals."
            if r.uncertainty and any(b is not None for b in bounds) else ".")))
    return out


def _baseline(d: Diff) -> str:
    gated = bool(d.gated)
    header = ["metric", "baseline", "this run", "Δ (this run − baseline)", "Δ%", "change"]
    header += ["gate", "status"] if gated else []
    rows = []
    for x in d.metrics:
        cls = {"better": "better", "worse": "worse"}.get(x.change, "dim")
        row = [f"<code>{escape(x.id)}</code>",
               "" if x.change == "new" else _num(x.baseline),
               "" if x.change == "removed" else _num(x.candidate),
               escape(format_signed(x.delta)),
               "" if x.relative is None else "0.00%" if x.relative == 0
               else f"{100 * x.relative:+.2f}%",
               f'<span class="{cls}">{escape(CHANGE.get(x.change, x.change))}</span>']
        if gated:
            g = x.gate
            row += [escape(g.describe()) if g is not None else "",
                    _status(x.passed, x.failure, g is not None)]
        rows.append(row)
    kinds = [TEXT, NUM, NUM, NUM, NUM, NOWRAP] + ([NOWRAP, NOWRAP] if gated else [])
    notes = "".join(f'<p class="dim">{escape(n)}</p>' for n in d.notes)
    return (f'<section id="baseline"><h2>Compared with the baseline '
            f"<code>{escape(d.baseline)}</code></h2>"
            f"{_table(header, rows, kinds)}{notes}</section>")


def _inputs(r: RunResult) -> str:
    from evalcli.report import alignment_facts
    from evalcli.result import display_path as _path

    items = [f"predictions: <code>{escape(_path(r.predictions.path))}</code>"
             + (f" ({r.predictions.rows:,} rows)" if r.predictions.rows is not None else "")]
    if r.truth is not None:
        items.append(f"truth: <code>{escape(_path(r.truth.path))}</code>"
                     + (f" ({r.truth.rows:,} rows)" if r.truth.rows is not None else ""))
    items += [escape(fact) for fact in alignment_facts(r)]
    if r.options:
        items.append("options: " + escape(", ".join(f"{k}={v}" for k, v in r.options.items())))
    lis = "".join(f"<li>{i}</li>" for i in items)
    return f'<section id="inputs"><h2>Inputs and alignment</h2><ul>{lis}</ul></section>'


def render(r: RunResult) -> str:
    """The HTML report of a run."""
    figs = plots(r)
    plot_section = (f'<section id="plots"><h2>Plots</h2><div class="plots">{"".join(figs)}'
                    "</div></section>" if figs else "")
    title = f"evalcli · {r.task} — " + (
        "passed" if r.passed and r.gating else "gating off" if not r.gating
        else f"{len(r.failures)} gate(s) failed")
    body = "".join([
        _verdict(r), _failures(r), _gates(r), _metrics(r), _systems(r), plot_section,
        _segments(r),
        _baseline(r.baseline) if r.baseline is not None else "", _inputs(r),
    ])
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>\n"
        f"<body><main>{body}</main>"
        f"<footer>evalcli {escape(__version__)} · report schema {SCHEMA_VERSION} · engine "
        f"{escape(r.engine)}</footer></body></html>\n"
    )
