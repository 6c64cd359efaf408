"""Comparing two JSON reports: metric deltas, better/worse by direction, gates on the change.

The gain of a metric is its change in the direction that is better: ``candidate − baseline`` for
a metric where higher is better, ``baseline − candidate`` where lower is better. Gates read the
gain, so one gate means the same for AUROC and for log loss:

- ``max_drop: X`` fails when ``gain < −X`` (worse by more than X);
- ``max_relative_drop: X`` fails when ``gain / |baseline| < −X`` (0.02 = worse by more than 2%);
- ``min_improvement: X`` fails when ``gain < X``;
- ``min_relative_improvement: X`` fails when ``gain / |baseline| < X``.

Every output shows a change as ``candidate − baseline`` (``delta``, and ``relative`` =
delta / |baseline|), whatever the direction: a worse log loss is a positive delta marked worse.
Changes within a relative 1e-12 of the values (absolute 1e-12 near 0) count as no change: their
delta is exactly 0, so float noise never shows as a tiny signed number nor fails a gate. A gate
never passes on an undefined value or on a metric missing from the candidate.
Reports compare only when their ``schema_version``, task, task options and the parameters of
each shared metric id agree: anything else is an error, never a misleading diff.

The outcome is a :class:`~evalcli.result.Diff` of :class:`~evalcli.result.Delta` values, each
with its :class:`~evalcli.result.ChangeGate`: data of the result model, which the writers read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcli.errors import ConfigError, InputDataError, clip, did_you_mean
from evalcli.result import ChangeGate, Delta, Diff


@dataclass
class Gates:
    """Change gates for every metric (``default``) and per metric id (replacing the default)."""

    default: ChangeGate = field(default_factory=ChangeGate)
    per_metric: dict[str, ChangeGate] = field(default_factory=dict)

    def for_id(self, id_: str) -> ChangeGate | None:
        g = self.per_metric.get(id_, self.default)
        return g if g.active else None


# --------------------------------------------------------------------------- reading

def load_report(path: Path) -> dict[str, Any]:
    """Read a JSON report written by evalcli; a clear error for anything else."""
    shown = clip(str(path))
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputDataError(f"report {shown} does not exist",
                             hint="write one with 'evalcli run CONFIG -o report.json'") from None
    except UnicodeDecodeError as exc:
        raise InputDataError(f"{shown} is not an evalcli JSON report: byte {exc.start} is not "
                             "UTF-8", hint="give a report written with -o report.json") from None
    except OSError as exc:
        raise InputDataError(f"cannot read report {shown}: {exc.strerror}") from None
    def not_json(token: str) -> Any:
        raise InputDataError(
            f"{shown} holds {token}, which is not JSON (evalcli writes null for a value it "
            "cannot compute): a NaN or infinite value would make every change to it pass",
            hint="give a report written with -o report.json, or write null for that value")

    try:
        data = json.loads(text, parse_constant=not_json)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" (line {exc.lineno}: {exc.msg})" if isinstance(exc, json.JSONDecodeError) \
            else " (nested too deeply)"
        raise InputDataError(f"{shown} is not JSON{where}",
                             hint="give a report written with -o report.json or "
                             "--format json") from None
    if not isinstance(data, dict) or "schema_version" not in data or not isinstance(
            data.get("metrics"), list):
        raise InputDataError(f"{shown} is not an evalcli JSON report (no schema_version or "
                             "metrics)", hint="give a report written with -o report.json")
    _check_shape(data, shown)
    return data


def _check_shape(data: Mapping[str, Any], shown: str) -> None:
    """The parts of a report a diff reads, each of the right kind (a hand-edited or truncated
    report is an input error naming the place, not a crash)."""
    def bad(where: str, what: str) -> InputDataError:
        return InputDataError(f"{shown} is not an evalcli JSON report: {where} {what}",
                              hint="give a report written with -o report.json")

    def metrics(items: Any, where: str) -> None:
        if not isinstance(items, list):
            raise bad(where, "is not a list")
        for i, m in enumerate(items):
            at = f"{where}[{i}]"
            if not isinstance(m, dict):
                raise bad(at, "is not an object")
            if not isinstance(m.get("id"), str) or not isinstance(m.get("metric"), str):
                raise bad(at, "has no 'id' or 'metric' text")
            v = m.get("value")
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
                raise bad(f"{at}.value", f"is {clip(repr(v), 60)}, not a number or null")
            if m.get("direction", "higher") not in ("higher", "lower"):
                raise bad(f"{at}.direction", "is neither 'higher' nor 'lower'")

    metrics(data["metrics"], "metrics")
    segs = data.get("segments", [])
    if not isinstance(segs, list):
        raise bad("segments", "is not a list")
    for i, seg in enumerate(segs):
        if not isinstance(seg, dict) or not isinstance(seg.get("key"), dict):
            raise bad(f"segments[{i}]", "is not an object with a 'key' object")
        metrics(seg.get("metrics"), f"segments[{i}].metrics")


def same_params(task: str, m: Mapping[str, Any], a: Mapping[str, Any],
                b: Mapping[str, Any]) -> bool:
    """Whether two reports computed a metric with the same parameters. A parameter one report
    lacks is its default there: a report written before a parameter existed (a stored baseline)
    stays comparable with a run that has it at its default.

    >>> same_params("binary", {"metric": "auroc"}, {}, {"single_class": None})
    True
    >>> same_params("binary", {"metric": "auroc"}, {}, {"single_class": "spark"})
    False
    """
    if a == b:
        return True
    defaults: dict[str, Any] = {}
    try:
        from evalcli.metrics.registry import get_registry

        metric = get_registry().get(task, str(m.get("metric")))
        defaults = {p.name: p.default for p in metric.params}
    except Exception:  # an unknown metric (a plugin not installed here): compare as written
        defaults = {}
    return _same_filled(a, b, defaults)


def same_options(task: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two reports ran with the same task options, an option one report lacks being
    its default there (a report written before the option existed stays comparable).

    >>> same_options("multilabel", {}, {"absent_as_empty": True})
    True
    >>> same_options("multilabel", {}, {"absent_as_empty": False})
    False
    """
    if a == b:
        return True
    defaults: dict[str, Any] = {}
    try:
        from evalcli.metrics.registry import get_registry

        defaults = {p.name: p.default for p in get_registry().tasks[task].options}
    except Exception:  # a task this installation lacks: compare as written
        defaults = {}
    return _same_filled(a, b, defaults)


def _same_filled(a: Mapping[str, Any], b: Mapping[str, Any], defaults: Mapping[str, Any]
                 ) -> bool:
    missing = object()
    for key in set(a) | set(b):
        va, vb = a.get(key, missing), b.get(key, missing)
        if va is missing:
            va = defaults.get(key, missing)
        if vb is missing:
            vb = defaults.get(key, missing)
        if va != vb and _as_listed(va) != _as_listed(vb):
            return False
    return True


def _as_listed(v: Any) -> Any:
    """A parameter value as JSON writes it (a tuple default reads back as a list)."""
    return list(v) if isinstance(v, tuple) else v


def check_compatible(base: Mapping[str, Any], cand: Mapping[str, Any], base_name: str,
                     cand_name: str) -> None:
    """Raise when the two reports measure different things (a diff would mislead)."""
    def mismatch(what: str, b: Any, c: Any, hint: str) -> InputDataError:
        return InputDataError(
            f"{base_name} and {cand_name} cannot be compared: {what} differ "
            f"({b!r} in the baseline, {c!r} in the candidate)", hint=hint)

    if base.get("schema_version") != cand.get("schema_version"):
        raise mismatch("the report schema versions", base.get("schema_version"),
                       cand.get("schema_version"),
                       "re-run the baseline with this evalcli version to write a new report")
    if base.get("task") != cand.get("task"):
        raise mismatch("the tasks", base.get("task"), cand.get("task"),
                       "compare reports of the same task")
    if not same_options(str(base.get("task")), base.get("options") or {},
                        cand.get("options") or {}):
        raise mismatch("the task options", base.get("options"), cand.get("options"),
                       "use the same 'options:' in both configs")
    base_ids = {m["id"]: m for m in base["metrics"]}
    for m in cand["metrics"]:
        b = base_ids.get(m["id"])
        if b is not None and not same_params(str(base.get("task")), m,
                                             b.get("params") or {}, m.get("params") or {}):
            raise mismatch(f"the parameters of '{m['id']}'", b.get("params"), m.get("params"),
                           "compare metrics computed with the same parameters")
    if not set(base_ids) & {m["id"] for m in cand["metrics"]}:
        raise InputDataError(f"{base_name} and {cand_name} have no metric in common",
                             hint="compare reports of the same config")


# --------------------------------------------------------------------------- comparing

def _tol(b: float, c: float) -> float:
    return 1e-12 * max(1.0, abs(b), abs(c))


def gain(direction: str, baseline: float, candidate: float) -> float:
    """The change in the better direction.

    >>> gain("higher", 0.80, 0.85) > 0, gain("lower", 0.30, 0.35) < 0
    (True, True)
    """
    return candidate - baseline if direction == "higher" else baseline - candidate


def _pct(x: float) -> str:
    return f"{100 * x:+.2f}%"


def check_change(d: Delta, gate: ChangeGate) -> tuple[bool, str | None]:
    """Whether the change of ``d`` passes ``gate``, and why not. The message gives the
    relative change as every output does, candidate − baseline.

    >>> d = compare_values("auroc", "auroc", "higher", 0.90, 0.88)
    >>> check_change(d, ChangeGate(max_drop=0.01))
    (False, 'worse by 0.02 (0.9 → 0.88, -2.22%); the allowed drop is 0.01')
    >>> check_change(d, ChangeGate(max_relative_drop=0.05))
    (True, None)
    >>> check_change(compare_values("log_loss", "log_loss", "lower", 0.2, 0.25),
    ...              ChangeGate(max_relative_drop=0.05))[1]
    'worse by 0.05 (0.2 → 0.25, +25.00%); the allowed relative drop is 5%'
    """
    if d.candidate is None or d.baseline is None:
        side = "candidate" if d.candidate is None else "baseline"
        what = "missing from" if d.change in ("removed", "new") else "undefined in"
        return False, f"the value is {what} the {side}, so the change cannot be gated"
    if gate.confidence is not None or gate.require_confidence is not None:
        return _check_confident(d, gate)
    b, c = d.baseline, d.candidate
    g = 0.0 if d.change == "same" else gain(d.direction, b, c)
    rel = g / abs(b) if b != 0 else None
    moved = (f"{'worse' if g < 0 else 'better'} by {abs(g):.4g} ({b:.6g} → {c:.6g}"
             + (f", {_pct(d.relative)}" if d.relative is not None else "") + ")") if g else \
        f"unchanged ({b:.6g})"
    reasons = []
    if gate.max_drop is not None and g < -gate.max_drop:
        reasons.append(f"the allowed drop is {gate.max_drop:g}")
    if gate.max_relative_drop is not None:
        if rel is None and g < 0:
            reasons.append("the baseline is 0, so a relative drop is unbounded")
        elif rel is not None and rel < -gate.max_relative_drop:
            reasons.append(f"the allowed relative drop is {100 * gate.max_relative_drop:g}%")
    if gate.min_improvement is not None and g < gate.min_improvement:
        reasons.append(f"the required improvement is {gate.min_improvement:g}")
    if gate.min_relative_improvement is not None:
        if rel is None:
            if g < 0 or (g == 0 and gate.min_relative_improvement > 0):
                reasons.append("the baseline is 0, so a relative improvement is undefined")
        elif rel < gate.min_relative_improvement:
            reasons.append(f"the required relative improvement is "
                           f"{100 * gate.min_relative_improvement:g}%")
    if reasons:
        return False, f"{moved}; " + "; ".join(reasons)
    return True, None


def _thresholds(gate: ChangeGate, b: float) -> list[tuple[float, str]]:
    """The gate as lower bounds on the gain (absolute), each with its wording."""
    out = []
    if gate.max_drop is not None:
        out.append((-gate.max_drop, f"a drop of at most {gate.max_drop:g}"))
    if gate.max_relative_drop is not None:
        out.append((-gate.max_relative_drop * abs(b),
                    f"a relative drop of at most {100 * gate.max_relative_drop:g}%"))
    if gate.min_improvement is not None:
        out.append((gate.min_improvement, f"an improvement of at least "
                    f"{gate.min_improvement:g}"))
    if gate.min_relative_improvement is not None:
        out.append((gate.min_relative_improvement * abs(b), f"a relative improvement of at "
                    f"least {100 * gate.min_relative_improvement:g}%"))
    return out


def change_interval(d: Delta, level: float) -> tuple[float, float] | None:
    """The change's (candidate − baseline) interval at ``level``, from its spread."""
    import numpy as np

    from evalcli.uncertainty.intervals import normal_interval

    if d.delta is None or d.spread is None:
        return None
    if callable(d.spread):
        got: tuple[float, float] | None = d.spread(level)
        return got
    if isinstance(d.spread, float):
        i = normal_interval(d.delta, d.spread, level)
        return (i.low, i.high) if i.low is not None and i.high is not None else None
    r = d.spread[~np.isnan(d.spread)]
    if r.size < 2:
        return None
    lo, hi = np.quantile(r, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def _check_confident(d: Delta, gate: ChangeGate) -> tuple[bool, str | None]:
    """A change gate deciding with a confidence: ``confidence`` fails only when the gain's
    one-sided upper bound misses a bound; ``require_confidence`` passes only when its
    one-sided lower bound meets every bound (non-inferiority, superiority)."""
    from evalcli.result import gate_level

    assert d.baseline is not None and d.candidate is not None
    c = gate.confidence if gate.confidence is not None else gate.require_confidence
    assert c is not None
    got = change_interval(d, gate_level(c))
    if got is None:
        return False, ("the change has no interval (the reports carry no intervals: run both "
                       "with uncertainty:, or store replicates with report: {statistics: "
                       "true}), so the gate cannot decide with confidence")
    lo, hi = got if d.direction == "higher" else (-got[1], -got[0])
    g = gain(d.direction, d.baseline, d.candidate)
    said = (f"gain {g:+.4g} ({d.baseline:.6g} → {d.candidate:.6g}), one-sided {c:g} bounds "
            f"[{lo:+.4g}, {hi:+.4g}]")
    for t, what in _thresholds(gate, d.baseline):
        if gate.confidence is not None and hi < t:
            return False, f"{said}: significantly short of {what}"
        if gate.require_confidence is not None and lo < t:
            return False, f"{said}: {what} is not shown at {c:g}"
    return True, None


def add_uncertainty(d: Delta, base: Mapping[str, Any], cand: Mapping[str, Any],
                    bm: Mapping[str, Any], cm: Mapping[str, Any]) -> None:
    """The change's interval and p-value when the reports carry intervals: the paired
    bootstrap when both store their replicates on the same groups (same seed, replicates,
    unit and groups present), else the normal interval of two independent estimates (said in
    the note, and why the replicates did not pair)."""
    import math

    import numpy as np

    from evalcli.result import CI
    from evalcli.uncertainty.intervals import normal_interval
    from evalcli.uncertainty.paired import paired_bootstrap_test

    if d.delta is None or d.baseline is None or d.candidate is None:
        return
    level = float((cand.get("uncertainty") or base.get("uncertainty") or {}).get("level", 0.95))
    sb, sc = base.get("statistics"), cand.get("statistics")
    why = "the reports do not store their replicates (report: {statistics: true})"
    if isinstance(sb, Mapping) and isinstance(sc, Mapping):
        keys = ("seed", "replicates", "unit", "scheme", "groups", "present")
        differ = [k for k in keys if sb.get(k) != sc.get(k)]
        vb, vc = (sb.get("values") or {}).get(d.id), (sc.get("values") or {}).get(d.id)
        if not differ and isinstance(vb, list) and isinstance(vc, list) and \
                len(vb) == len(vc):
            ra = np.array([np.nan if x is None else x for x in vb], dtype=float)
            rc = np.array([np.nan if x is None else x for x in vc], dtype=float)
            res = paired_bootstrap_test(ra, rc, d.baseline, d.candidate, level)
            if res.interval is not None:
                i = res.interval
                d.ci = CI(i.low, i.high, level, "bootstrap-paired", i.std_error, i.mc_error,
                          i.reason, i.note)
            d.p_value, d.test, d.spread = res.p_value, "bootstrap-paired", rc - ra
            return
        why = ("the stored replicates do not pair: their " + ", ".join(differ) + " differ"
               if differ else "a report stores no replicates of this metric")
    se_b, se_c = bm.get("std_error"), cm.get("std_error")
    if not isinstance(se_b, int | float) or not isinstance(se_c, int | float):
        return
    se = math.hypot(float(se_b), float(se_c))
    i = normal_interval(d.delta, se, level)
    from scipy import special  # type: ignore[import-untyped]

    p = float(2 * special.ndtr(-abs(d.delta) / se)) if se > 0 else (
        1.0 if d.delta == 0 else 0.0)
    d.ci = CI(i.low, i.high, level, "normal-unpaired", se, reason=i.reason,
              note=f"unpaired: {why}; the interval treats the runs as independent samples, "
              "wider than a paired one on the same truth")
    d.p_value, d.test, d.spread = p, "normal-unpaired", se


def compare_values(id_: str, metric: str, direction: str, baseline: float | None,
                   candidate: float | None, segment: str | None = None) -> Delta:
    """A :class:`Delta` with its change (candidate − baseline, absolute and relative) and
    better/worse/same; a change within the tolerance is exactly 0.

    >>> d = compare_values("auroc", "auroc", "higher", 0.9947346770876182, 0.9947346770876183)
    >>> d.change, d.delta, d.relative
    ('same', 0.0, 0.0)
    """
    d = Delta(id_, metric, direction, baseline, candidate, segment=segment)
    if baseline is None or candidate is None:
        return d
    if abs(candidate - baseline) <= _tol(baseline, candidate):
        d.change, d.delta = "same", 0.0
        d.relative = 0.0 if baseline != 0 else None
        return d
    d.delta = candidate - baseline
    d.relative = d.delta / abs(baseline) if baseline != 0 else None
    d.change = "better" if gain(direction, baseline, candidate) > 0 else "worse"
    return d


def _index(metrics: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {m["id"]: m for m in metrics}


def _seg_label(key: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in key.items())


def diff_reports(base: Mapping[str, Any], cand: Mapping[str, Any], gates: Gates | None = None,
                 base_name: str = "baseline", cand_name: str = "candidate") -> Diff:
    """Compare two report dicts (as the JSON report holds them) and apply the change gates."""
    check_compatible(base, cand, base_name, cand_name)
    gates = gates or Gates()
    b_ids, c_ids = _index(base["metrics"]), _index(cand["metrics"])
    for id_ in gates.per_metric:
        if id_ not in b_ids and id_ not in c_ids:
            raise ConfigError(
                f"a change gate names the metric '{id_}', which neither report has."
                + did_you_mean(id_, list(b_ids) + list(c_ids)),
                hint=f"metric ids in the reports: {', '.join(c_ids)}")
    out = Diff(base_name, cand_name, str(cand.get("task")), [])
    for id_, m in b_ids.items():
        c = c_ids.get(id_)
        d = compare_values(id_, m["metric"], m.get("direction", "higher"), m.get("value"),
                           c.get("value") if c else None)
        if c is None:
            d.change = "removed"
        else:
            add_uncertainty(d, base, cand, m, c)
        out.metrics.append(d)
    for id_, m in c_ids.items():
        if id_ not in b_ids:
            d = compare_values(id_, m["metric"], m.get("direction", "higher"), None,
                               m.get("value"))
            d.change = "new"
            out.metrics.append(d)
    for d in out.metrics:
        gate = gates.for_id(d.id)
        if gate is None or (d.change == "new" and d.id not in gates.per_metric):
            continue
        d.gate = gate
        d.passed, d.failure = check_change(d, gate)
        if not d.passed:
            out.failures.append(f"{d.id} vs baseline: {d.failure} (gate {gate.describe()})")
    _diff_segments(base, cand, out)
    return out


def _diff_segments(base: Mapping[str, Any], cand: Mapping[str, Any], out: Diff) -> None:
    if not base.get("group_by") and not cand.get("group_by"):
        return
    if base.get("group_by") != cand.get("group_by"):
        out.notes.append(f"segments not compared: group_by is {base.get('group_by')} in the "
                         f"baseline and {cand.get('group_by')} in the candidate")
        return
    b_segs = {_seg_label(s["key"]): s for s in base.get("segments", [])}
    for s in cand.get("segments", []):
        label = _seg_label(s["key"])
        b = b_segs.get(label)
        if b is None:
            out.notes.append(f"segment {label} is new in the candidate")
            continue
        b_ids = _index(b["metrics"])
        for m in s["metrics"]:
            bm = b_ids.get(m["id"])
            if bm is not None:
                out.segments.append(compare_values(m["id"], m["metric"],
                                                   m.get("direction", "higher"),
                                                   bm.get("value"), m.get("value"), label))
    gone = set(b_segs) - {_seg_label(s["key"]) for s in cand.get("segments", [])}
    out.notes += [f"segment {label} is missing from the candidate" for label in sorted(gone)]


def gates_from_options(default: Mapping[str, float | None],
                       per_metric: Sequence[tuple[str, str, float]], *,
                       confidence: float | None = None,
                       require_confidence: float | None = None) -> Gates:
    """Gates from command-line options: values for all metrics and (key, id, value) triples;
    a confidence for all of them."""
    sure = {"confidence": confidence, "require_confidence": require_confidence}
    g = Gates(ChangeGate.of({**default, **sure}))
    for key, id_, value in per_metric:
        cur = g.per_metric.setdefault(id_, ChangeGate.of(sure))
        setattr(cur, key, value)
    return g


def parse_gate_option(key: str, text: str) -> tuple[str | None, float]:
    """``0.01`` (every metric) or ``auroc=0.01`` (one metric id) from a command-line option.

    >>> parse_gate_option("max_drop", "0.01"), parse_gate_option("max_drop", "auroc=0.02")
    ((None, 0.01), ('auroc', 0.02))
    """
    id_, sep, value = text.rpartition("=")
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"--{key.replace('_', '-')} {text!r}: expected a number or "
                          "METRIC=NUMBER", hint=f"e.g. --{key.replace('_', '-')} 0.01 or "
                          f"--{key.replace('_', '-')} auroc=0.01") from None
    if not math.isfinite(number):
        raise ConfigError(f"--{key.replace('_', '-')} {text!r}: expected a finite number")
    if number < 0 and key.startswith("max_"):
        raise ConfigError(f"--{key.replace('_', '-')} must be >= 0, got {number:g}")
    return (id_.strip() or None) if sep else None, number
