"""What a run produces: plain data shared by the engine, the gates and the reports, and its
form as the JSON report (:func:`to_dict`, the machine-readable contract of DESIGN.md's
"User-facing contract", versioned by :data:`SCHEMA_VERSION`).

Nothing here imports a report writer or the config: the writers and the decisions
(:mod:`evalcli.decide`) read these types. The gates a result carries are data too: a
:class:`Gate` on a value, a :class:`ChangeGate` on the change from a baseline (the config's
``baseline:`` section validates into the same class), and the comparison with a baseline, a
:class:`Diff` of :class:`Delta` values, is :attr:`RunResult.baseline`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from evalcli._version import __version__

if TYPE_CHECKING:
    import polars as pl

SCHEMA_VERSION = 1
"""The version of the JSON report's layout; reports compare only within one version."""


def display_path(path: str) -> str:
    """A path as people read it: relative to the working directory when it lies below it.

    >>> display_path("https://host/x.parquet")
    'https://host/x.parquet'
    """
    if "://" in path or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith("..") else rel


@dataclass
class CI:
    """A value's confidence interval as the reports show it, or the reason there is none
    (computed by :mod:`evalcli.uncertainty`; see ``docs/uncertainty.md``).

    ``method`` names how (``wilson``, ``delong``, ``t``, ``percentile``, ``bca``...);
    ``std_error`` is the value's standard error (a bootstrap's: the replicates' standard
    deviation); ``mc_error`` the Monte-Carlo error of the bounds when they come from random
    replicates; ``reason`` why there are no bounds; ``note`` what the reader should know
    (e.g. that replicates were computed on binned scores).
    """

    low: float | None
    high: float | None
    level: float
    method: str
    std_error: float | None = None
    mc_error: float | None = None
    reason: str | None = None
    note: str | None = None

    @property
    def defined(self) -> bool:
        """Whether the interval has bounds."""
        return self.low is not None and self.high is not None

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's ``ci`` object.

        >>> CI(0.1, 0.3, 0.95, "wilson", std_error=0.05).to_dict()
        {'low': 0.1, 'high': 0.3, 'level': 0.95, 'method': 'wilson'}
        >>> CI(None, None, 0.9, "delong", reason="one class only").to_dict()
        {'low': None, 'high': None, 'level': 0.9, 'method': 'delong', 'reason': 'one class only'}
        """
        out: dict[str, Any] = {"low": self.low, "high": self.high, "level": self.level,
                               "method": self.method}
        for k in ("mc_error", "reason", "note"):
            if (v := getattr(self, k)) is not None:
                out[k] = v
        return out


def gate_level(confidence: float) -> float:
    """The two-sided level whose interval's bound is the one-sided bound at ``confidence``.

    >>> gate_level(0.95), gate_level(0.975)
    (0.9, 0.95)
    """
    return round(2.0 * confidence - 1.0, 12)


@dataclass
class Gate:
    """A threshold on a metric: ``min`` and/or ``max``, optionally for one segment only.

    ``confidence``: the gate fails only when the interval at this level lies wholly on the
    wrong side of the threshold (the evidence shows the value misses it); ``require_confidence``:
    the gate passes only when the interval at this level lies wholly on the right side (the
    evidence shows the value meets it). Neither: the point value decides."""

    min: float | None = None
    max: float | None = None
    segment: str | None = None
    """``None``: the overall value; ``"*"``: every segment; else the named segment."""
    confidence: float | None = None
    require_confidence: float | None = None

    def describe(self) -> str:
        """Readable form.

        >>> Gate(min=0.9).describe(), Gate(min=0.9, confidence=0.95).describe()
        ('>= 0.9', '>= 0.9 (fail only if significant at 95%)')
        """
        parts = []
        if self.min is not None:
            parts.append(f">= {self.min:g}")
        if self.max is not None:
            parts.append(f"<= {self.max:g}")
        said = " and ".join(parts)
        if self.confidence is not None:
            said += f" (fail only if significant at {self.confidence:.0%})"
        if self.require_confidence is not None:
            said += f" (pass only if shown at {self.require_confidence:.0%})"
        return said

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k in ("min", "max", "segment", "confidence", "require_confidence"):
            if (v := getattr(self, k)) is not None:
                out[k] = v
        return out


GATE_KEYS = ("max_drop", "max_relative_drop", "min_improvement", "min_relative_improvement")


def _a_number(v: Any) -> Any:
    """A gate's bound: a number (YAML's true is not 1, and .nan would pass every gate)."""
    if isinstance(v, bool):
        raise ValueError("a number, not true or false")
    return v


Bound = Annotated[float, Field(allow_inf_nan=False), BeforeValidator(_a_number)]
"""A gate's threshold or allowed change: a finite number."""
Drop = Annotated[float, Field(allow_inf_nan=False, ge=0), BeforeValidator(_a_number)]
"""An allowed drop: a finite number >= 0 (the validator after the constraints, so that the
JSON schema says "minimum", not pydantic's "ge")."""


class ChangeGate(BaseModel):
    """Gates on the change from a baseline, in the metric's direction (better is positive)."""

    # The docstring above is the config schema's description of a change gate; how the gates
    # read the change is in evalcli.decide.diff's docstring, checked by its check_change.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    max_drop: Drop | None = Field(
        None, description="fail when the metric gets worse by more than this (absolute)")
    max_relative_drop: Drop | None = Field(
        None, description="fail when it gets worse by more than this fraction of the "
        "baseline (0.02 = 2%)")
    min_improvement: Bound | None = Field(
        None, description="fail unless the metric gets better by at least this (absolute)")
    min_relative_improvement: Bound | None = Field(
        None, description="fail unless it gets better by at least this fraction of the baseline")
    confidence: float | None = Field(
        None, gt=0, lt=1, description="fail only when the change is significantly beyond the "
        "bound: its one-sided interval at this confidence lies wholly beyond it (needs "
        "intervals in both reports)")
    require_confidence: float | None = Field(
        None, gt=0, lt=1, description="pass only when the change is significantly within the "
        "bound (non-inferiority for max_drop; needs intervals in both reports)")

    @classmethod
    def of(cls, m: BaseModel | Mapping[str, Any]) -> ChangeGate:
        """The gate's bounds alone, from a mapping or from a model holding them (the config's
        ``baseline:``, whose other keys are not a gate's); numbers as floats."""
        get = m.get if isinstance(m, Mapping) else (lambda k: getattr(m, k, None))
        return cls(**{k: (float(v) if (v := get(k)) is not None else None)
                      for k in (*GATE_KEYS, "confidence", "require_confidence")})

    @property
    def active(self) -> bool:
        """Whether the gate sets any bound (a property, not truth: the config's ``baseline:``
        is a change gate too, and is there whether or not it sets one)."""
        return any(getattr(self, k) is not None for k in GATE_KEYS)

    def describe(self) -> str:
        """Readable form.

        >>> ChangeGate(max_drop=0.01, max_relative_drop=0.02).describe()
        'drop <= 0.01 and relative drop <= 2%'
        >>> ChangeGate(min_improvement=0).describe()
        'improvement >= 0'
        """
        parts = []
        if self.max_drop is not None:
            parts.append(f"drop <= {self.max_drop:g}")
        if self.max_relative_drop is not None:
            parts.append(f"relative drop <= {100 * self.max_relative_drop:g}%")
        if self.min_improvement is not None:
            parts.append(f"improvement >= {self.min_improvement:g}")
        if self.min_relative_improvement is not None:
            parts.append(f"relative improvement >= {100 * self.min_relative_improvement:g}%")
        said = " and ".join(parts)
        if self.confidence is not None:
            said += f" (fail only if significant at {self.confidence:.0%})"
        if self.require_confidence is not None:
            said += f" (pass only if shown at {self.require_confidence:.0%})"
        return said

    @property
    def relative(self) -> bool:
        """Whether every bound the gate sets is relative (of the baseline value)."""
        return self.active and all("relative" in k for k in self.to_dict()
                                   if k in GATE_KEYS)

    def to_dict(self) -> dict[str, float]:
        return {k: v for k in (*GATE_KEYS, "confidence", "require_confidence")
                if (v := getattr(self, k)) is not None}


@dataclass
class MetricResult:
    """One metric's value (``None`` if undefined), with its id, parameters and gate outcome."""

    id: str
    metric: str
    family: str
    params: dict[str, Any]
    direction: str
    value: float | None
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    gate: Gate | None = None
    passed: bool | None = None
    failure: str | None = None
    caption: str | None = None
    """A short fact the metric states beside its value (peak F1: ``at threshold 0.42``), shown
    by every report before the notes; not in the JSON report, whose ``details`` hold the fact."""
    ci: CI | None = None
    """The value's confidence interval, when the run asks for intervals (``uncertainty:``)."""
    gate_ci: CI | None = None
    """The interval a gate with ``confidence``/``require_confidence`` decides by: the
    one-sided bound at that confidence is a bound of the two-sided interval at level
    ``2·confidence − 1`` (0.95 -> 0.90)."""
    verdict: str | None = None
    """Why the gate passed or failed, in a sentence (value, interval, threshold, decision)."""
    intervals: dict[float, CI] = field(default_factory=dict, repr=False)
    """Intervals at other levels than ``ci``'s, by level (what confident gates decide by);
    not in the reports."""

    def interval_at(self, level: float) -> CI | None:
        """The interval at ``level`` when the run computed one (``ci``, or another level's)."""
        if self.ci is not None and abs(self.ci.level - level) < 1e-9:
            return self.ci
        return next((ci for lv, ci in self.intervals.items() if abs(lv - level) < 1e-9), None)


@dataclass
class SegmentResult:
    """All metrics for one segment (one combination of the group_by columns' values)."""

    key: dict[str, Any]
    rows: int
    metrics: list[MetricResult]

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.key.items())


@dataclass
class InputInfo:
    path: str
    rows: int | None
    columns: dict[str, str] = field(default_factory=dict)


@dataclass
class AlignmentInfo:
    matched: int
    only_in_predictions: int
    only_in_truth: int
    unmatched_policy: str
    dropped_nulls: int = 0
    null_policy: str = "error"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def evaluated(self) -> int:
        """The rows evaluated: the matched ones and the truth's rows read as empty predicted
        sets (multilabel's long layout), less those dropped for nulls. Ranking (its full join
        counted by query): the (query, item) pairs recommended and judged, none of which a
        null drops (a null query or item matches nothing)."""
        if "queries_in_both" in self.extra:
            return self.matched
        return self.matched + int(self.extra.get("empty_predicted_sets", 0)) - self.dropped_nulls


@dataclass
class Delta:
    """One metric (overall, or in one segment) in two reports: a baseline and a candidate."""

    id: str
    metric: str
    direction: str
    baseline: float | None
    candidate: float | None
    delta: float | None = None
    relative: float | None = None
    change: str = "undefined"
    """better, worse, same, undefined (a value is missing), new or removed."""
    segment: str | None = None
    gate: ChangeGate | None = None
    passed: bool | None = None
    failure: str | None = None
    ci: CI | None = None
    """The change's confidence interval (candidate − baseline), when the reports carry
    intervals: paired by unit when both store their replicates (``statistics``), else
    unpaired (said in ``ci.note``)."""
    p_value: float | None = None
    test: str | None = None
    spread: Any = field(default=None, repr=False, compare=False)
    """What gives the change's interval at any level: the paired replicate differences (a
    NumPy array) or the unpaired standard error (a float). Not in the reports."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "metric": self.metric, "direction": self.direction,
            "baseline": self.baseline, "candidate": self.candidate, "delta": self.delta,
            "relative": self.relative, "change": self.change,
        }
        if self.ci is not None:
            out["ci"] = self.ci.to_dict()
            out["p_value"] = self.p_value
            out["test"] = self.test
        if self.segment is not None:
            out["segment"] = self.segment
        if self.gate is not None:
            out["gate"] = self.gate.to_dict()
            out["passed"] = self.passed
            if self.failure:
                out["failure"] = self.failure
        return out


@dataclass
class Diff:
    """The comparison of a candidate report with a baseline (:mod:`evalcli.decide.diff`): what
    ``evalcli diff`` prints, and a run's comparison with its baseline (:attr:`RunResult.baseline`,
    where the candidate is "this run")."""

    baseline: str
    """The baseline report's name (its path as given)."""
    candidate: str
    task: str
    metrics: list[Delta]
    segments: list[Delta] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def gated(self) -> list[tuple[Delta, ChangeGate]]:
        """The metrics with a gate on their change, each with its gate."""
        return [(d, d.gate) for d in self.metrics if d.gate is not None]

    def to_dict(self) -> dict[str, Any]:
        # (a relative change from a baseline of 1e-320 is infinite: JSON has null for it)
        out: dict[str, Any] = _clean({
            "baseline": self.baseline, "candidate": self.candidate, "task": self.task,
            "passed": self.passed, "failures": self.failures, "notes": self.notes,
            "metrics": [d.to_dict() for d in self.metrics],
            "segments": [d.to_dict() for d in self.segments],
        })
        return out


@dataclass
class Paired:
    """One system against the baseline system on one metric: the change, its interval, the
    paired test and its p-value before and after the correction for multiple comparisons."""

    system: str
    id: str
    direction: str
    baseline_value: float | None
    value: float | None
    delta: float | None
    ci: CI | None
    test: str
    p_value: float | None
    adjusted: float | None = None
    significant: bool | None = None
    change: str = "undefined"
    """``better`` or ``worse`` (significant, in the metric's direction), ``no significant
    change``, or ``undefined`` (no test)."""
    n: int = 0
    """The pairs the test saw (queries for a per-query test, replicates for the bootstrap)."""
    note: str | None = None
    spread: Any = field(default=None, repr=False, compare=False)
    """The difference's interval at any level (a function of the level), for change gates
    with a confidence; not in the reports."""
    gate: ChangeGate | None = None
    passed: bool | None = None
    failure: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "system": self.system, "id": self.id, "direction": self.direction,
            "baseline_value": self.baseline_value, "value": self.value, "delta": self.delta,
            "ci": self.ci.to_dict() if self.ci is not None else None, "test": self.test,
            "p_value": self.p_value, "adjusted_p_value": self.adjusted,
            "significant": self.significant, "change": self.change, "n": self.n}
        if self.note:
            out["note"] = self.note
        if self.gate is not None:
            out["gate"] = self.gate.to_dict()
            out["passed"] = self.passed
            if self.failure:
                out["failure"] = self.failure
        return out


@dataclass
class Comparison:
    """A paired comparison of systems on the same truth (``predictions:`` naming several)."""

    baseline: str
    test: str
    correction: str
    alpha: float
    level: float
    rows: list[Paired] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "test": self.test, "correction": self.correction,
                "alpha": self.alpha, "level": self.level,
                "results": [r.to_dict() for r in self.rows]}


@dataclass
class RunResult:
    """Everything a report shows."""

    task: str
    engine: str
    predictions: InputInfo
    truth: InputInfo | None
    alignment: AlignmentInfo
    metrics: list[MetricResult]
    group_by: list[str] = field(default_factory=list)
    segments: list[SegmentResult] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    gating: bool = True
    passed: bool = True
    failures: list[str] = field(default_factory=list)
    absent_segment_gates: int = 0
    """Gates on segments the data lacks (each a failure, with no segment to hold it)."""
    baseline: Diff | None = None
    """The comparison with the config's baseline report (its gate failures are among
    ``failures``); in the JSON report as ``baseline``."""
    curves: dict[str, Any] = field(default_factory=dict)
    """Curve tables (Polars DataFrames) by name: roc, pr, residuals. Not in the JSON report."""
    curve_areas: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """For a curve, the metrics (by name) that summarise it and their legend names, as the
    task gives them. Not in the JSON report."""
    unused_columns: dict[str, str] = field(default_factory=dict)
    """Optional roles a file has a column for that the run did not use because nothing named
    it (role -> file), e.g. a ``weight`` column. Not in the reports."""
    uncertainty: dict[str, Any] | None = None
    """How the intervals were computed, when asked for: ``level``, ``method``, ``replicates``,
    ``seed``, ``unit``, ``groups`` (the random groups of units that were resampled)."""
    systems: dict[str, RunResult] = field(default_factory=dict)
    """Every system's own result, by name, when ``predictions:`` names several (this result
    is then the baseline system's, with the comparison)."""
    comparison: Comparison | None = None
    statistics: dict[str, Any] | None = None
    """The overall values' bootstrap replicates, stored in the JSON report when asked
    (``report: {statistics: true}``): a later run or ``evalcli diff`` pairs with them."""
    material: Any = field(default=None, repr=False)
    """What the engine keeps to resample the overall values again (a systems comparison);
    not in the reports."""
    per_query: pl.DataFrame | None = None
    """Each query's metric values (ranking, when ``per_query`` is asked for). Not in the
    reports; written by the output step with the other outputs."""

    def metric(self, id_: str) -> MetricResult:
        for m in self.metrics:
            if m.id == id_:
                return m
        raise KeyError(id_)

    # -- the Python API's views (evalcli.evaluate returns this object) -------------------

    def values(self) -> dict[str, float | None]:
        """Each metric's overall value by id (``None`` when undefined)."""
        return {m.id: m.value for m in self.metrics}

    def to_dict(self) -> dict[str, Any]:
        """The JSON report as Python data (what ``--format json`` prints)."""
        return to_dict(self)

    def to_polars(self, *, segments: bool = False) -> pl.DataFrame:
        """The metrics as a Polars DataFrame: one row per metric (overall), or with
        ``segments=True`` one row per segment and metric, the group_by columns first.

        Columns: id, metric, family, value, direction, gate_min, gate_max, passed, notes.
        """
        import polars as pl

        schema: dict[str, pl.DataType | type[pl.DataType]] = {
            "id": pl.String, "metric": pl.String, "family": pl.String, "value": pl.Float64,
            "direction": pl.String, "gate_min": pl.Float64, "gate_max": pl.Float64,
            "passed": pl.Boolean, "notes": pl.List(pl.String)}

        def rows(ms: list[MetricResult]) -> list[tuple[Any, ...]]:
            return [(m.id, m.metric, m.family, m.value, m.direction,
                     m.gate.min if m.gate else None, m.gate.max if m.gate else None,
                     m.passed, list(m.notes)) for m in ms]

        if not segments:
            return pl.DataFrame(rows(self.metrics), schema=schema, orient="row")
        parts = [pl.DataFrame(rows(s.metrics), schema=schema, orient="row") for s in self.segments]
        keys = pl.DataFrame(
            {c: [s.key[c] for s in self.segments for _ in s.metrics] for c in self.group_by}
            | {"rows": [s.rows for s in self.segments for _ in s.metrics]},
            strict=False)
        body = pl.concat(parts) if parts else pl.DataFrame(schema=schema)
        return pl.concat([keys, body], how="horizontal")

    to_frame = to_polars


# --------------------------------------------------------------------------- the JSON report

def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_clean(x) for x in v]
    return v


def metric_dict(m: MetricResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": m.id,
        "metric": m.metric,
        "params": m.params,
        "direction": m.direction,
        "value": m.value,
    }
    if m.ci is not None:
        out["ci"] = m.ci.to_dict()
        out["std_error"] = m.ci.std_error
    if m.details:
        out["details"] = m.details
    if m.notes:
        out["notes"] = m.notes
    if m.gate is not None:
        out["gate"] = m.gate.to_dict()
        out["passed"] = m.passed
        if m.failure:
            out["failure"] = m.failure
        if m.gate_ci is not None:
            out["gate_ci"] = m.gate_ci.to_dict()
        if m.verdict is not None:
            out["verdict"] = m.verdict
    return out


def to_dict(r: RunResult) -> dict[str, Any]:
    """The JSON report of a run as Python data: non-finite numbers become ``None``."""
    inputs: dict[str, Any] = {
        "predictions": {"path": display_path(r.predictions.path), "rows": r.predictions.rows,
                        "columns": r.predictions.columns},
    }
    if r.truth is not None:
        inputs["truth"] = {"path": display_path(r.truth.path), "rows": r.truth.rows,
                           "columns": r.truth.columns}
    a = r.alignment
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "evalcli", "version": __version__},
        "task": r.task,
        "engine": r.engine,
        "options": r.options,
        "inputs": inputs,
        "alignment": {
            "matched": a.matched,
            "only_in_predictions": a.only_in_predictions,
            "only_in_truth": a.only_in_truth,
            "unmatched_policy": a.unmatched_policy,
            "dropped_nulls": a.dropped_nulls,
            "null_policy": a.null_policy,
            **a.extra,
        },
        "gating": r.gating,
        "passed": r.passed,
        "failures": r.failures,
        "metrics": [metric_dict(m) for m in r.metrics],
    }
    if r.uncertainty is not None:
        out["uncertainty"] = r.uncertainty
    if r.systems:
        out["systems"] = {
            name: {"predictions": display_path(s.predictions.path),
                   # rows a duplicates policy left out of this system's predictions
                   **{k: s.alignment.extra[k] for k in ("duplicates_dropped",
                                                        "duplicates_policy")
                      if k in s.alignment.extra},
                   "passed": s.passed, "failures": s.failures,
                   "metrics": [metric_dict(m) for m in s.metrics],
                   **({"segments": [{"key": g.key, "rows": g.rows,
                                     "metrics": [metric_dict(m) for m in g.metrics]}
                                    for g in s.segments]} if s.group_by else {})}
            for name, s in r.systems.items()}
    if r.comparison is not None:
        out["comparison"] = r.comparison.to_dict()
    if r.statistics is not None:
        out["statistics"] = r.statistics
    if r.group_by:
        out["group_by"] = r.group_by
        out["segments"] = [
            {"key": s.key, "rows": s.rows, "metrics": [metric_dict(m) for m in s.metrics]}
            for s in r.segments
        ]
    if r.baseline is not None:
        out["baseline"] = r.baseline.to_dict()
    return _clean(out)  # type: ignore[no-any-return]
