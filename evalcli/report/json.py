"""The JSON report: the machine-readable contract (DESIGN.md, "User-facing contract")."""

from __future__ import annotations

import json
import math
from typing import Any

from evalcli._version import __version__
from evalcli.config import SCHEMA_VERSION
from evalcli.report import display_path
from evalcli.result import MetricResult, RunResult


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
    if m.details:
        out["details"] = m.details
    if m.notes:
        out["notes"] = m.notes
    if m.gate is not None:
        out["gate"] = m.gate.to_dict()
        out["passed"] = m.passed
        if m.failure:
            out["failure"] = m.failure
    return out


def to_dict(r: RunResult) -> dict[str, Any]:
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
    if r.group_by:
        out["group_by"] = r.group_by
        out["segments"] = [
            {"key": s.key, "rows": s.rows, "metrics": [metric_dict(m) for m in s.metrics]}
            for s in r.segments
        ]
    out.update(r.extra)
    return _clean(out)  # type: ignore[no-any-return]


def render(r: RunResult) -> str:
    return json.dumps(to_dict(r), indent=2, ensure_ascii=False, default=str) + "\n"
