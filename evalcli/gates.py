"""Thresholds and pass/fail. Reads each metric's direction; never passes an undefined value."""

from __future__ import annotations

from collections.abc import Iterable

from evalcli.result import Gate, MetricResult, RunResult


def check_gate(value: float | None, gate: Gate) -> tuple[bool, str | None]:
    """Whether ``value`` passes ``gate``, and why not.

    >>> check_gate(0.8, Gate(min=0.7))
    (True, None)
    >>> check_gate(0.6, Gate(min=0.7))
    (False, '0.6 is below the minimum 0.7')
    >>> check_gate(None, Gate(max=1.0))
    (False, 'the value is undefined, so the gate cannot pass')
    """
    if value is None:
        return False, "the value is undefined, so the gate cannot pass"
    if gate.min is not None and value < gate.min:
        return False, f"{value:.6g} is below the minimum {gate.min:g}"
    if gate.max is not None and value > gate.max:
        return False, f"{value:.6g} is above the maximum {gate.max:g}"
    return True, None


def apply_gates(metrics: Iterable[MetricResult], where: str = "") -> list[str]:
    """Set ``passed``/``failure`` on gated metrics; return the failure messages."""
    failures = []
    for m in metrics:
        if m.gate is None:
            continue
        m.passed, m.failure = check_gate(m.value, m.gate)
        if not m.passed:
            failures.append(f"{m.id}{where}: {m.failure} (gate {m.gate.describe()})")
    return failures


def evaluate_gates(result: RunResult) -> None:
    """Evaluate every gate of the run (overall and per segment) and the overall verdict."""
    failures = apply_gates(result.metrics)
    for seg in result.segments:
        seg_metrics = []
        for m in seg.metrics:
            g = m.gate
            if g is not None and g.segment is not None and g.segment in ("*", seg.label):
                seg_metrics.append(m)
            else:
                m.gate = None
        failures += apply_gates(seg_metrics, f" [{seg.label}]")
    result.failures = failures
    result.passed = not failures if result.gating else True
