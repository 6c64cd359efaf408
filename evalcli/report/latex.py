"""The LaTeX report (``-o table.tex``): a ``tabular`` for a paper, as ranx offers.

With several systems: one row per system, one column per metric, the best value of each
column in bold; a value significantly better than the baseline system's (adjusted p-value
below alpha) is marked with a dagger, significantly worse with a double dagger, and a footnote
names the test and the correction. With one system: one row per metric, its value and (when
the run computed them) its confidence interval. Needs only ``booktabs``.
"""

from __future__ import annotations

from evalcli.report import format_value
from evalcli.result import MetricResult, RunResult

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}"}


def tex(text: str) -> str:
    r"""Text with LaTeX's special characters escaped.

    >>> tex("ndcg@10 & 50% of p_k")
    'ndcg@10 \\& 50\\% of p\\_k'
    """
    return "".join(_SPECIAL.get(ch, ch) for ch in text)


def _best(values: list[float | None], direction: str) -> float | None:
    got = [v for v in values if v is not None]
    if not got:
        return None
    return max(got) if direction == "higher" else min(got)


def render(result: RunResult) -> str:
    if result.systems and result.comparison is not None:
        return _systems(result)
    return _single(result)


def _single(r: RunResult) -> str:
    with_ci = any(m.ci is not None for m in r.metrics)
    level = next((m.ci.level for m in r.metrics if m.ci is not None), None)
    head = ["metric", "value"] + ([f"{level:.0%} interval".replace("%", r"\%")]
                                  if with_ci else [])
    lines = [r"\begin{tabular}{l" + "r" * (len(head) - 1) + "}", r"\toprule",
             " & ".join(head) + r" \\", r"\midrule"]
    for m in r.metrics:
        cells = [tex(m.id), format_value(m.value)]
        if with_ci:
            cells.append(_interval(m))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _interval(m: MetricResult) -> str:
    if m.ci is None or not m.ci.defined:
        return "--"
    return f"[{format_value(m.ci.low)}, {format_value(m.ci.high)}]"


def _systems(r: RunResult) -> str:
    comp = r.comparison
    assert comp is not None
    names = list(r.systems)
    ids = [m.id for m in r.metrics]
    direction = {m.id: m.direction for m in r.metrics}
    value = {(name, m.id): m.value for name, s in r.systems.items() for m in s.metrics}
    marks = {}
    for row in comp.rows:
        if row.change == "better":
            marks[(row.system, row.id)] = r"$^{\dagger}$"
        elif row.change == "worse":
            marks[(row.system, row.id)] = r"$^{\ddagger}$"
    lines = [r"\begin{tabular}{l" + "r" * len(ids) + "}", r"\toprule",
             " & ".join(["system", *(tex(i) for i in ids)]) + r" \\", r"\midrule"]
    for name in names:
        cells = [tex(name) + (" (baseline)" if name == comp.baseline else "")]
        for id_ in ids:
            v = value.get((name, id_))
            best = _best([value.get((n, id_)) for n in names], direction[id_])
            shown = format_value(v)
            if v is not None and v == best:
                shown = r"\textbf{" + shown + "}"
            cells.append(shown + marks.get((name, id_), ""))
        lines.append(" & ".join(cells) + r" \\")
    tests = sorted({row.test for row in comp.rows if row.p_value is not None})
    correction = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
                  "none": "no"}.get(comp.correction, comp.correction)
    lines += [r"\bottomrule", r"\end{tabular}",
              "",
              tex(f"% best value per metric in bold; dagger: significantly better than "
                  f"{comp.baseline}, double dagger: significantly worse (adjusted p < "
                  f"{comp.alpha:g}; tests: {', '.join(tests) or 'none'}; {correction} "
                  "correction)").replace(r"\%", "%", 1)]
    return "\n".join(lines) + "\n"
