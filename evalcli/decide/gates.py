"""Thresholds and pass/fail. Reads each metric's direction; never passes an undefined value.

A gate applies to the overall value of a metric (``Gate.segment is None``), to every segment
(``"*"``) or to one named segment (its label, ``region=EU`` or ``region=EU, tier=gold``). A gate
on a segment that is not in the data fails: a gate never passes because what it checks vanished.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from evalcli.errors import ConfigError
from evalcli.result import CI, Gate, MetricResult, RunResult, SegmentResult, gate_level

if TYPE_CHECKING:
    from evalcli.config import Config

EVERY = "*"
"""The segment name of a gate that holds for every segment."""


def check_gate(value: float | None, gate: Gate, ci: CI | None = None
               ) -> tuple[bool, str | None]:
    """Whether ``value`` passes ``gate``, and why not. A gate with ``confidence`` or
    ``require_confidence`` decides by ``ci``, the interval at ``2c − 1``
    (:func:`check_confident`); without one it cannot decide, and fails.

    >>> check_gate(0.8, Gate(min=0.7))
    (True, None)
    >>> check_gate(0.6, Gate(min=0.7))
    (False, '0.6 is below the minimum 0.7')
    >>> check_gate(None, Gate(max=1.0))
    (False, 'the value is undefined, so the gate cannot pass')
    >>> check_gate(0.884, Gate(min=0.9, confidence=0.95), CI(0.861, 0.907, 0.9, "wilson"))
    (True, None)
    >>> check_gate(0.884, Gate(min=0.9, require_confidence=0.95))[1]
    'the value has no interval, so the gate cannot decide at 95% confidence'
    """
    if _confidence(gate) is not None:
        return check_confident(value, gate, ci)[:2]
    if value is None:
        return False, "the value is undefined, so the gate cannot pass"
    if gate.min is not None and value < gate.min:
        return False, f"{value:.6g} is below the minimum {gate.min:g}"
    if gate.max is not None and value > gate.max:
        return False, f"{value:.6g} is above the maximum {gate.max:g}"
    return True, None


def plain_verdict(value: float | None, gate: Gate) -> str:
    """A gate without a confidence's verdict, short: the value against the threshold.

    >>> plain_verdict(0.93, Gate(min=0.9)), plain_verdict(0.25, Gate(max=0.2))
    ('pass: 0.93 >= 0.9', 'fail: 0.25 > 0.2')
    >>> plain_verdict(0.15, Gate(min=0.1, max=0.2)), plain_verdict(None, Gate(min=0.1))
    ('pass: 0.1 <= 0.15 <= 0.2', 'fail: the value is undefined')
    """
    if value is None:
        return "fail: the value is undefined"
    v = f"{value:.6g}"
    lo = None if gate.min is None else (">=" if value >= gate.min else "<")
    hi = None if gate.max is None else ("<=" if value <= gate.max else ">")
    ok = lo in (None, ">=") and hi in (None, "<=")
    if lo is not None and hi is not None and ok:
        said = f"{gate.min:g} <= {v} <= {gate.max:g}"
    elif lo is not None and (lo == "<" or hi is None):
        said = f"{v} {lo} {gate.min:g}"
    else:
        said = f"{v} {hi} {gate.max:g}"
    return f"{'pass' if ok else 'fail'}: {said}"


def _confidence(gate: Gate) -> float | None:
    return gate.confidence if gate.confidence is not None else gate.require_confidence


def _percent(c: float) -> str:
    """``95%``, ``97.5%``: a confidence as written, not rounded to a whole percent."""
    return f"{100 * c:.4g}%"


def check_confident(value: float | None, gate: Gate, ci: CI | None
                    ) -> tuple[bool, str | None, str]:
    """Whether ``value`` passes a gate that decides with a confidence, why not, and the
    verdict in a sentence. ``ci`` is the two-sided interval at level ``2c − 1``, whose bounds
    are the one-sided bounds at confidence ``c``.

    ``confidence``: fails only when the whole interval misses the threshold (the value is
    significantly below ``min`` / above ``max``); a bound equal to the threshold passes.
    ``require_confidence``: passes only when the whole interval meets it (a bound equal to the
    threshold meets it). Without an interval, or without a value, the gate cannot decide, and
    fails.

    >>> gate = Gate(min=0.90, confidence=0.95)
    >>> ok, why, verdict = check_confident(0.884, gate, CI(0.861, 0.907, 0.9, "wilson"))
    >>> ok, why
    (True, None)
    >>> print(verdict)
    pass: 0.884 is below 0.9 but not significantly: the one-sided 95% upper bound 0.907 >= 0.9
    >>> check_confident(0.86, gate, CI(0.84, 0.88, 0.9, "wilson"))[1]
    '0.86 is significantly below the minimum 0.9: its one-sided 95% upper bound is 0.88'
    >>> _, why, verdict = check_confident(0.93, Gate(min=0.90, require_confidence=0.95),
    ...                                   CI(0.89, 0.96, 0.9, "wilson"))
    >>> print(why)
    0.93 is not shown to meet the minimum 0.9 at 95%: its one-sided lower bound is 0.89
    >>> print(verdict)
    fail: 0.93 is not shown to be >= 0.9 at 95%: the one-sided lower bound 0.89 < 0.9
    >>> check_confident(0.93, gate, CI(None, None, 0.9, "delong", reason="one class only"))[1]
    'the value has no interval (one class only), so the gate cannot decide at 95% confidence'
    """
    c = _confidence(gate)
    if c is None:
        raise ValueError("the gate has no confidence or require_confidence")
    at = _percent(c)
    if value is None:
        msg = "the value is undefined, so the gate cannot pass"
        return False, msg, f"fail: {msg}"
    if ci is None or not ci.defined:
        why = f" ({ci.reason})" if ci is not None and ci.reason else ""
        msg = f"the value has no interval{why}, so the gate cannot decide at {at} confidence"
        return False, msg, f"fail: {msg}"
    lo, hi = float(ci.low), float(ci.high)  # type: ignore[arg-type]
    v = f"{value:.6g}"
    if gate.confidence is not None:
        if gate.min is not None and hi < gate.min:
            return False, (f"{v} is significantly below the minimum {gate.min:g}: its "
                           f"one-sided {at} upper bound is {hi:.6g}"), \
                (f"fail: {v} is significantly below {gate.min:g}: the one-sided {at} upper "
                 f"bound {hi:.6g} < {gate.min:g}")
        if gate.max is not None and lo > gate.max:
            return False, (f"{v} is significantly above the maximum {gate.max:g}: its "
                           f"one-sided {at} lower bound is {lo:.6g}"), \
                (f"fail: {v} is significantly above {gate.max:g}: the one-sided {at} lower "
                 f"bound {lo:.6g} > {gate.max:g}")
        if gate.min is not None and value < gate.min:
            return True, None, (f"pass: {v} is below {gate.min:g} but not significantly: the "
                                f"one-sided {at} upper bound {hi:.6g} >= {gate.min:g}")
        if gate.max is not None and value > gate.max:
            return True, None, (f"pass: {v} is above {gate.max:g} but not significantly: the "
                                f"one-sided {at} lower bound {lo:.6g} <= {gate.max:g}")
        return True, None, (f"{plain_verdict(value, gate)}; one-sided {at} bounds "
                            f"[{lo:.6g}, {hi:.6g}]")
    if gate.min is not None and lo < gate.min:
        return False, (f"{v} is not shown to meet the minimum {gate.min:g} at {at}: its "
                       f"one-sided lower bound is {lo:.6g}"), \
            (f"fail: {v} is not shown to be >= {gate.min:g} at {at}: the one-sided lower "
             f"bound {lo:.6g} < {gate.min:g}")
    if gate.max is not None and hi > gate.max:
        return False, (f"{v} is not shown to meet the maximum {gate.max:g} at {at}: its "
                       f"one-sided upper bound is {hi:.6g}"), \
            (f"fail: {v} is not shown to be <= {gate.max:g} at {at}: the one-sided upper "
             f"bound {hi:.6g} > {gate.max:g}")
    shown = " and ".join(b for b in (
        None if gate.min is None else f"lower bound {lo:.6g} >= {gate.min:g}",
        None if gate.max is None else f"upper bound {hi:.6g} <= {gate.max:g}") if b)
    return True, None, f"pass: {v} is shown to meet the gate at {at}: the one-sided {shown}"


def apply_gates(metrics: Iterable[MetricResult], where: str = "") -> list[str]:
    """Set ``passed`` and ``failure`` on gated metrics; return the failure messages. A gate
    with ``confidence``/``require_confidence`` decides by the metric's interval at the matching
    level (:func:`check_confident`), which it keeps as ``gate_ci``, and says why in ``verdict``
    (a plain gate's ``describe()`` and value say it already; the reports show no verdict for
    it)."""
    failures = []
    for m in metrics:
        if m.gate is None:
            continue
        c = _confidence(m.gate)
        if c is not None:
            m.gate_ci = m.interval_at(gate_level(c))
            m.passed, m.failure, m.verdict = check_confident(m.value, m.gate, m.gate_ci)
            if m.passed and m.gate_ci is not None and m.value is not None and \
                    not check_gate(m.value, Gate(min=m.gate.min, max=m.gate.max))[0]:
                below = m.gate.min is not None and m.value < m.gate.min
                bound = m.gate_ci.high if below else m.gate_ci.low
                m.notes.append(f"misses the gate, but not significantly: its one-sided "
                               f"{_percent(c)} {'upper' if below else 'lower'} bound is "
                               f"{bound:.4g}")
        else:
            m.passed, m.failure = check_gate(m.value, m.gate)
        if not m.passed:
            failures.append(f"{m.id}{where}: {m.failure} (gate {m.gate.describe()})")
    return failures


def normalize_label(label: str) -> str:
    """A segment label in the canonical form ``a=x, b=y`` (spaces around commas and ``=`` ignored).

    >>> normalize_label("region = EU ,tier=gold")
    'region=EU, tier=gold'
    >>> normalize_label("*")
    '*'
    """
    if label.strip() == EVERY:
        return EVERY
    parts = []
    for part in label.split(","):
        key, sep, value = part.partition("=")
        parts.append(f"{key.strip()}={value.strip()}" if sep else part.strip())
    return ", ".join(parts)


def segment_gate(gates: Mapping[str, Gate], label: str) -> Gate | None:
    """The gate for one segment: the one naming it, else the one for every segment.

    >>> gates = {"*": Gate(min=0.5, segment="*"), "region=EU": Gate(min=0.8, segment="region=EU")}
    >>> segment_gate(gates, "region=EU").min, segment_gate(gates, "region=US").min
    (0.8, 0.5)
    """
    return gates.get(label) or gates.get(EVERY)


def segment_gates(cfg: Config, ids: Sequence[str]) -> dict[str, dict[str, Gate]]:
    """Per-segment gates by metric id and segment label (``*`` for every segment), from the
    config's metric entries (``segments:``); ``ids`` are the planned metrics' ids, one for each
    entry.

    A label names one value of each ``group_by`` column, in any order and spacing; it is
    written canonically, in the order of ``group_by``.
    """
    out: dict[str, dict[str, Gate]] = {}
    entries, group_by = cfg.metrics, cfg.group_by
    gated = [e for e in entries if e.segments]
    if not gated:
        return out
    if not group_by:
        raise ConfigError(f"metric '{gated[0].metric}' has per-segment gates "
                          "('segments:'), but the config has no group_by",
                          hint="add 'group_by: [column]' or remove 'segments:'")
    for entry, id_ in zip(entries, ids, strict=True):
        for label, g in (entry.segments or {}).items():
            name = normalize_label(label)
            if name != EVERY:
                parts = dict(p.split("=", 1) for p in name.split(", ") if "=" in p)
                if sorted(parts) != sorted(group_by) or len(parts) != name.count("=") \
                        or name.count("=") != len(name.split(", ")):
                    raise ConfigError(
                        f"metric '{id_}': segment '{label}' does not name one value of each "
                        f"group_by column ({', '.join(group_by)})",
                        hint="write it as " + ", ".join(f"{c}=VALUE" for c in group_by)
                        + ", or '*' for every segment")
                name = ", ".join(f"{c}={parts[c]}" for c in group_by)
            if g.min is None and g.max is None:
                raise ConfigError(f"metric '{id_}': the gate for segment '{label}' has no "
                                  "min or max")
            out.setdefault(id_, {})[name] = Gate(min=g.min, max=g.max, segment=name,
                                                 confidence=g.confidence,
                                                 require_confidence=g.require_confidence)
    return out


def missing_segments(gates: Mapping[str, Mapping[str, Gate]],
                     segments: Sequence[SegmentResult]) -> list[str]:
    """Failure messages for gates naming a segment that the data does not have."""
    labels = {s.label for s in segments}
    out = []
    for id_, by_label in gates.items():
        for label in by_label:
            if label != EVERY and label not in labels:
                known = ", ".join(sorted(labels)[:8]) or "none"
                out.append(f"{id_} [{label}]: the segment is not in the data, so the gate "
                           f"cannot pass (segments: {known})")
    return out


def evaluate_gates(result: RunResult,
                   segment_gates: Mapping[str, Mapping[str, Gate]] | None = None) -> None:
    """Evaluate every gate of the run (overall and per segment) and the overall verdict.

    ``segment_gates`` maps a metric id to its per-segment gates by segment label (``"*"`` for
    every segment). Without it, the gates already set on the segments' metrics are used (a gate
    whose ``segment`` is ``"*"`` or the segment's label).
    """
    failures = apply_gates(result.metrics)
    for seg in result.segments:
        seg_metrics = []
        for m in seg.metrics:
            if segment_gates is not None:
                m.gate = segment_gate(segment_gates.get(m.id, {}), seg.label)
            g = m.gate
            if g is not None and g.segment is not None and g.segment in (EVERY, seg.label):
                seg_metrics.append(m)
            else:
                m.gate = None
        failures += apply_gates(seg_metrics, f" [{seg.label}]")
    if segment_gates:
        absent = missing_segments(segment_gates, result.segments)
        result.absent_segment_gates = len(absent)
        failures += absent
    result.failures = failures
    result.passed = not failures if result.gating else True


def summary(result: RunResult) -> str:
    """One line: the verdict and the counts of gates.

    >>> r = RunResult("binary", "polars", None, None, None, [])  # type: ignore[arg-type]
    >>> summary(r)
    'done: 0 metrics, no gates'
    """
    n_gates = sum(m.gate is not None for m in result.metrics)
    n_gates += sum(m.gate is not None for s in result.segments for m in s.metrics)
    if result.baseline is not None:
        n_gates += len(result.baseline.gated)
    for name, s in result.systems.items():  # the other systems' own gates, and the changes'
        if result.comparison is not None and name != result.comparison.baseline:
            n_gates += sum(m.gate is not None for m in s.metrics)
            n_gates += sum(m.gate is not None for g in s.segments for m in g.metrics)
    if result.comparison is not None:
        n_gates += sum(row.gate is not None for row in result.comparison.rows)
    n_gates += result.absent_segment_gates  # each failed, with no segment to hold it
    n = f"{len(result.metrics)} metric{'s' if len(result.metrics) != 1 else ''}"
    if not n_gates:
        return f"done: {n}, no gates"
    gates = f"{n_gates} gate{'s' if n_gates != 1 else ''}"
    if not result.gating:
        would = f", {len(result.failures)} would fail" if result.failures else ""
        return f"gating off: {n}, {gates}{would}"
    if result.passed:
        return f"passed: {n}, {gates}"
    return f"FAILED: {len(result.failures)} of {gates} failed ({n})"
