"""The JUnit XML report: each gate a test case, so CI systems show gates natively.

One ``<testsuites>`` with up to three suites: ``evalcli.<task>`` (gates on the overall values),
``evalcli.<task>.segments`` (per-segment gates, the segment in the test name) and
``evalcli.<task>.baseline`` (gates on the change from the baseline). A failed gate is a
``<failure>`` whose message holds the measured value and the gate; with gating off it is a
``<skipped>`` test that says what would have failed. Ungated metrics are ``<property>`` entries
of the first suite. No timestamps or host names: the same result gives the same file.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from evalcli._version import __version__
from evalcli.report import metric_notes
from evalcli.result import CI, SCHEMA_VERSION, Comparison, Diff, MetricResult, RunResult


def _num(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.6g}"


def _suite(parent: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(parent, "testsuite", {"name": name})


def _case(suite: ET.Element, classname: str, name: str, passed: bool | None, message: str,
          detail: str, gating: bool) -> None:
    case = ET.SubElement(suite, "testcase", {"classname": classname, "name": name,
                                             "time": "0"})
    if passed is False and gating:
        f = ET.SubElement(case, "failure", {"message": message, "type": "GateFailed"})
        f.text = detail
    elif passed is False:
        ET.SubElement(case, "skipped", {"message": f"gating off (would fail: {message})"})
    out = ET.SubElement(case, "system-out")
    out.text = detail


def _metric_case(suite: ET.Element, classname: str, m: MetricResult, where: str,
                 gating: bool) -> None:
    if m.gate is None:
        return
    gate = m.gate.describe()
    name = f"{m.id}{where} {gate}"
    detail = f"{m.id}{where} = {_num(m.value)}" + _ci_text(m.ci) + f"; gate {gate}"
    if m.verdict:
        detail += f"; {m.verdict}"
    notes = metric_notes(m)
    if notes:
        detail += "; notes: " + "; ".join(notes)
    message = f"{m.id}{where}: {m.failure} (gate {gate})" if m.failure else detail
    _case(suite, classname, name, m.failure is None, message, detail, gating)


def _ci_text(ci: CI | None) -> str:
    """`` [low, high] (95% wilson)`` for a message; '' without an interval."""
    if ci is None:
        return ""
    if not ci.defined:
        return f" (no {ci.level:.0%} interval: {ci.reason})"
    return f" [{_num(ci.low)}, {_num(ci.high)}] ({ci.level:.0%} {ci.method})"


def _ci_properties(props: ET.Element, prefix: str, ci: CI | None) -> None:
    if ci is None:
        return
    for k, v in (("ci_low", _num(ci.low)), ("ci_high", _num(ci.high)),
                 ("ci_level", f"{ci.level:g}"), ("ci_method", ci.method),
                 ("std_error", _num(ci.std_error))):
        ET.SubElement(props, "property", {"name": f"{prefix}.{k}", "value": v})


def _system_cases(suite: ET.Element, classname: str, comp: Comparison, gating: bool) -> None:
    for x in comp.rows:
        if x.gate is None:
            continue
        gate = x.gate.describe()
        detail = (f"{x.system} vs {comp.baseline}: {x.id} {_num(x.baseline_value)} -> "
                  f"{_num(x.value)}, change {_num(x.delta)}" + _ci_text(x.ci)
                  + (f", adjusted p {x.adjusted:.3g}" if x.adjusted is not None else "")
                  + f"; gate {gate}")
        message = f"{x.system} vs {comp.baseline}: {x.id}: {x.failure} (gate {gate})" \
            if x.failure else detail
        _case(suite, classname, f"{x.system}: {x.id} vs {comp.baseline}: {gate}", x.passed,
              message, detail, gating)


def _finish(suite: ET.Element) -> tuple[int, int, int]:
    cases = suite.findall("testcase")
    failures = sum(c.find("failure") is not None for c in cases)
    skipped = sum(c.find("skipped") is not None for c in cases)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", "0")
    return len(cases), failures, skipped


def _baseline_cases(suite: ET.Element, classname: str, d: Diff, gating: bool) -> None:
    for x, g in d.gated:
        gate = g.describe()
        rel = f" ({100 * x.relative:+.2f}%)" if x.relative is not None else ""
        delta = f"{x.delta:+.6g}" if x.delta is not None else "undefined"
        detail = (f"{x.id}: baseline {_num(x.baseline)}, candidate "
                  f"{_num(x.candidate)}, change {delta}{rel}{_ci_text(x.ci)} ({x.change}); "
                  f"gate {gate}")
        message = f"{x.id} vs baseline: {x.failure} (gate {gate})" if x.failure else detail
        _case(suite, classname, f"{x.id} vs baseline: {gate}", x.passed, message,
              detail, gating)


def render(r: RunResult) -> str:
    """The JUnit XML of a run."""
    root = ET.Element("testsuites", {"name": f"evalcli {r.task}"})
    main = _suite(root, f"evalcli.{r.task}")
    props = ET.SubElement(main, "properties")
    for k, v in (("evalcli.version", __version__), ("schema_version", str(SCHEMA_VERSION)),
                 ("task", r.task), ("engine", r.engine),
                 ("rows", str(r.alignment.evaluated)),
                 ("passed", str(r.passed).lower())):
        ET.SubElement(props, "property", {"name": k, "value": v})
    for m in r.metrics:
        ET.SubElement(props, "property", {"name": f"metric.{m.id}", "value": _num(m.value)})
        _ci_properties(props, f"metric.{m.id}", m.ci)
    for m in r.metrics:
        if m.gate is not None:
            _metric_case(main, f"evalcli.{r.task}", m, "", r.gating)
    suites = [main]
    seg_gated = [(s, m) for s in r.segments for m in s.metrics if m.gate is not None]
    missing = [f for f in r.failures if "the segment is not in the data" in f]
    if seg_gated or missing:
        seg = _suite(root, f"evalcli.{r.task}.segments")
        for s, m in seg_gated:
            _metric_case(seg, f"evalcli.{r.task}.segments", m, f" [{s.label}]", r.gating)
        for f in missing:
            _case(seg, f"evalcli.{r.task}.segments", f.split(":")[0], False, f, f, r.gating)
        suites.append(seg)
    if r.baseline is not None and r.baseline.gated:
        b = _suite(root, f"evalcli.{r.task}.baseline")
        b.set("file", r.baseline.baseline)
        _baseline_cases(b, f"evalcli.{r.task}.baseline", r.baseline, r.gating)
        suites.append(b)
    if r.comparison is not None and any(x.gate is not None for x in r.comparison.rows):
        c = _suite(root, f"evalcli.{r.task}.systems")
        _system_cases(c, f"evalcli.{r.task}.systems", r.comparison, r.gating)
        suites.append(c)
    totals = [_finish(s) for s in suites]
    root.set("tests", str(sum(t[0] for t in totals)))
    root.set("failures", str(sum(t[1] for t in totals)))
    root.set("errors", "0")
    root.set("skipped", str(sum(t[2] for t in totals)))
    root.set("time", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _xml_chars(
        ET.tostring(root, encoding="unicode")) + "\n"


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
"""Characters XML 1.0 cannot hold, even escaped (a segment of the data may carry them)."""


def _xml_chars(text: str) -> str:
    r"""``text`` with the characters XML cannot hold written as escapes (``\x0b``).

    >>> _xml_chars('<a b="x\x0by"/>')
    '<a b="x\\x0by"/>'
    """
    return _NOT_XML.sub(lambda m: repr(m.group())[1:-1], text)
