"""Thresholds and pass/fail. Reads each metric's direction; never passes an undefined value.

A gate applies to the overall value of a metric (``Gate.segment is None``), to every segment
(``"*"``) or to one named segment (its label, ``region=EU`` or ``region=EU, tier=gold``). A gate
on a segment that is not in the data fails: a gate never passes because what it checks vanished.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from evalcli.errors import ConfigError
from evalcli.result import Gate, MetricResult, RunResult, SegmentResult

if TYPE_CHECKING:
    from evalcli.config import Config

EVERY = "*"
"""The segment name of a gate that holds for every segment."""


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
        failures += missing_segments(segment_gates, result.segments)
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
