"""Diff semantics (deltas, direction, gates both ways), mismatches, exit codes, baseline in run."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evalcli.config import parse_config
from evalcli.decide.diff import Gates, check_change, compare_values, diff_reports
from evalcli.errors import ConfigError, InputDataError
from evalcli.report import ReportFormat, render
from evalcli.result import ChangeGate
from evalcli.runner import run_config
from tests.conftest import CONFIGS


def _report(**values: float | None) -> dict[str, Any]:
    """A minimal report dict as the JSON report holds it."""
    directions = {"auroc": "higher", "log_loss": "lower", "recall": "higher", "brier": "lower"}
    return {
        "schema_version": 1, "task": "binary", "options": {},
        "metrics": [{"id": k, "metric": k.split("[")[0], "params": {},
                     "direction": directions[k.split("[")[0]], "value": v}
                    for k, v in values.items()],
    }


# --------------------------------------------------------------------------- semantics

@pytest.mark.parametrize(("direction", "base", "cand", "change"), [
    ("higher", 0.80, 0.85, "better"),
    ("higher", 0.80, 0.75, "worse"),
    ("lower", 0.30, 0.25, "better"),
    ("lower", 0.30, 0.35, "worse"),
    ("higher", 0.80, 0.80 + 1e-15, "same"),
    ("lower", 0.0, 0.0, "same"),
])
def test_change_follows_the_direction(direction, base, cand, change):
    d = compare_values("m", "m", direction, base, cand)
    assert d.change == change
    assert d.delta == pytest.approx(cand - base)
    if base:
        assert d.relative == pytest.approx((cand - base) / abs(base))
    else:
        assert d.relative is None


def test_undefined_values_are_undefined_changes():
    d = compare_values("auroc", "auroc", "higher", None, 0.9)
    assert (d.change, d.delta, d.relative) == ("undefined", None, None)
    ok, why = check_change(d, ChangeGate(max_drop=1.0))
    assert not ok and "undefined in the baseline" in why


@pytest.mark.parametrize(("direction", "base", "cand", "gate", "ok"), [
    # may drop by at most X (absolute), in the metric's direction
    ("higher", 0.90, 0.895, ChangeGate(max_drop=0.01), True),
    ("higher", 0.90, 0.885, ChangeGate(max_drop=0.01), False),
    ("lower", 0.30, 0.305, ChangeGate(max_drop=0.01), True),
    ("lower", 0.30, 0.315, ChangeGate(max_drop=0.01), False),
    ("lower", 0.30, 0.10, ChangeGate(max_drop=0.0), True),  # an improvement never fails a drop
    ("higher", 0.90, 0.90, ChangeGate(max_drop=0.0), True),
    # relative drop: fraction of |baseline|
    ("higher", 0.50, 0.49, ChangeGate(max_relative_drop=0.05), True),   # -2%
    ("higher", 0.50, 0.47, ChangeGate(max_relative_drop=0.05), False),  # -6%
    ("lower", 0.20, 0.209, ChangeGate(max_relative_drop=0.05), True),   # +4.5% worse
    ("lower", 0.20, 0.22, ChangeGate(max_relative_drop=0.05), False),   # +10% worse
    # must improve by at least X
    ("higher", 0.80, 0.82, ChangeGate(min_improvement=0.01), True),
    ("higher", 0.80, 0.805, ChangeGate(min_improvement=0.01), False),
    ("lower", 0.30, 0.28, ChangeGate(min_improvement=0.01), True),
    ("lower", 0.30, 0.31, ChangeGate(min_improvement=0.0), False),
    ("higher", 0.50, 0.56, ChangeGate(min_relative_improvement=0.1), True),
    ("higher", 0.50, 0.54, ChangeGate(min_relative_improvement=0.1), False),
    # a zero baseline: a relative drop is unbounded, a relative improvement from 0 passes
    ("lower", 0.0, 0.01, ChangeGate(max_relative_drop=0.5), False),
    ("higher", 0.0, 0.01, ChangeGate(min_relative_improvement=0.5), True),
    ("higher", 0.0, 0.0, ChangeGate(min_relative_improvement=0.5), False),
    # both directions at once
    ("higher", 0.80, 0.79, ChangeGate(max_drop=0.02, min_improvement=0.0), False),
])
def test_change_gates(direction, base, cand, gate, ok):
    passed, why = check_change(compare_values("m", "m", direction, base, cand), gate)
    assert passed is ok, why
    assert (why is None) is ok


def test_float_noise_never_fails_a_no_regression_gate():
    d = compare_values("m", "m", "higher", 0.1 + 0.2, 0.3)
    assert d.change == "same"
    assert check_change(d, ChangeGate(max_drop=0.0)) == (True, None)


def test_failure_message_names_values_and_gate():
    r = diff_reports(_report(auroc=0.9), _report(auroc=0.88), Gates(ChangeGate(max_drop=0.01)))
    assert r.failures == ["auroc vs baseline: worse by 0.02 (0.9 → 0.88, -2.22%); the allowed "
                          "drop is 0.01 (gate drop <= 0.01)"]


def test_per_metric_gates_replace_the_default():
    gates = Gates(ChangeGate(max_drop=0.001), {"log_loss": ChangeGate(max_drop=0.1)})
    r = diff_reports(_report(auroc=0.9, log_loss=0.30), _report(auroc=0.9, log_loss=0.35),
                     gates)
    assert r.passed
    by_id = {d.id: d for d in r.metrics}
    assert by_id["log_loss"].gate == ChangeGate(max_drop=0.1)
    assert by_id["log_loss"].change == "worse"
    assert by_id["auroc"].gate == ChangeGate(max_drop=0.001)


def test_a_gated_metric_missing_from_the_candidate_fails():
    r = diff_reports(_report(auroc=0.9, brier=0.1), _report(auroc=0.9),
                     Gates(ChangeGate(max_drop=0.1)))
    assert not r.passed
    assert r.failures[0].startswith("brier vs baseline: the value is missing from the candidate")


def test_new_metrics_are_listed_not_gated_by_the_default():
    r = diff_reports(_report(auroc=0.9), _report(auroc=0.9, brier=0.1),
                     Gates(ChangeGate(max_drop=0.0)))
    assert r.passed
    assert [(d.id, d.change, d.gate) for d in r.metrics][1] == ("brier", "new", None)


def test_no_gates_always_passes():
    r = diff_reports(_report(auroc=0.9), _report(auroc=0.1))
    assert r.passed and r.metrics[0].change == "worse" and r.metrics[0].gate is None


def test_gate_on_an_unknown_metric_is_an_error():
    with pytest.raises(ConfigError, match="Did you mean 'auroc'"):
        diff_reports(_report(auroc=0.9), _report(auroc=0.9),
                     Gates(per_metric={"aurco": ChangeGate(max_drop=0)}))


@pytest.mark.parametrize(("field", "value", "match"), [
    ("schema_version", 2, "schema versions differ"),
    ("task", "regression", "tasks differ"),
    ("options", {"positive": "yes"}, "task options differ"),
])
def test_reports_that_do_not_match_are_an_error(field, value, match):
    cand = _report(auroc=0.9)
    cand[field] = value
    with pytest.raises(InputDataError, match=match):
        diff_reports(_report(auroc=0.9), cand)


def test_different_parameters_of_a_metric_are_an_error():
    cand = _report(auroc=0.9)
    cand["metrics"][0]["params"] = {"threshold": 0.3}
    with pytest.raises(InputDataError, match="parameters of 'auroc' differ"):
        diff_reports(_report(auroc=0.9), cand)


def test_no_metric_in_common_is_an_error():
    with pytest.raises(InputDataError, match="no metric in common"):
        diff_reports(_report(auroc=0.9), _report(brier=0.1))


def test_segments_are_compared_when_group_by_matches():
    base, cand = _report(auroc=0.9), _report(auroc=0.9)
    for rep, v in ((base, 0.8), (cand, 0.7)):
        rep["group_by"] = ["region"]
        rep["segments"] = [{"key": {"region": "EU"}, "rows": 5,
                            "metrics": [dict(rep["metrics"][0], value=v)]}]
    r = diff_reports(base, cand)
    assert [(d.segment, d.change) for d in r.segments] == [("region=EU", "worse")]
    cand["group_by"] = ["country"]
    assert "segments not compared" in diff_reports(base, cand).notes[0]


# --------------------------------------------------------------------------- the command

@pytest.fixture
def reports(cli, tmp_path) -> tuple[Path, Path, dict[str, Any]]:
    out = cli("run", str(CONFIGS / "binary-gated.yaml"), "-f", "json")
    base = json.loads(out.stdout)
    cand = copy.deepcopy(base)
    for m in cand["metrics"]:
        if m["id"] == "auroc":
            m["value"] -= 0.02
        if m["id"] == "log_loss":
            m["value"] -= 0.01  # better (lower)
    bp, cp = tmp_path / "base.json", tmp_path / "cand.json"
    bp.write_text(json.dumps(base))
    cp.write_text(json.dumps(cand))
    return bp, cp, base


def test_cli_diff_exit_codes(cli, reports):
    bp, cp, _ = reports
    assert cli("diff", str(bp), str(cp)).exit_code == 0
    assert cli("diff", str(bp), str(cp), "--max-drop", "0.05").exit_code == 0
    failed = cli("diff", str(bp), str(cp), "--max-drop", "0.01")
    assert failed.exit_code == 1
    assert "auroc vs baseline: worse by 0.02" in failed.stdout
    # per metric: a looser auroc gate replaces the one for all
    assert cli("diff", str(bp), str(cp), "--max-drop", "0.01", "--max-drop",
               "auroc=0.03").exit_code == 0
    assert cli("diff", str(bp), str(cp), "--min-improvement", "log_loss=0.005").exit_code == 0
    assert cli("diff", str(bp), str(cp), "--min-improvement", "0").exit_code == 1


def test_cli_diff_table_marks_better_and_worse(cli, reports):
    bp, cp, _ = reports
    out = cli("diff", str(bp), str(cp)).stdout
    line = {ln.split()[0]: ln for ln in out.splitlines() if ln.strip() and
            ln.split()[0] in ("auroc", "log_loss", "mcc")}
    assert "▼ -0.0200" in line["auroc"] and "-2.01%" in line["auroc"]
    assert "▲ -0.0100" in line["log_loss"]  # lower is better for log loss
    assert "= 0.0000" in line["mcc"]


def test_cli_diff_json_and_markdown(cli, reports, tmp_path):
    bp, cp, _ = reports
    out = cli("diff", str(bp), str(cp), "--max-relative-drop", "0.01", "-f", "json",
              "-o", str(tmp_path / "d.md"))
    assert out.exit_code == 1
    d = json.loads(out.stdout)
    auroc = next(x for x in d["metrics"] if x["id"] == "auroc")
    assert auroc["change"] == "worse" and auroc["passed"] is False
    assert auroc["gate"] == {"max_relative_drop": 0.01}
    md = (tmp_path / "d.md").read_text()
    assert md.startswith("## ❌ evalcli diff — 1 gate(s) failed")
    assert "| `auroc` |" in md


def test_cli_diff_mismatch_exits_2(cli, reports, tmp_path):
    bp, _, base = reports
    other = dict(base, task="regression")
    op = tmp_path / "other.json"
    op.write_text(json.dumps(other))
    out = cli("diff", str(bp), str(op))
    assert out.exit_code == 2
    assert "cannot be compared: the tasks differ" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(("content", "match"), [
    ("not json", "is not JSON"),
    ('{"a": 1}', "is not an evalcli JSON report"),
])
def test_cli_diff_bad_files_exit_2(cli, reports, tmp_path, content, match):
    bp, _, _ = reports
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = cli("diff", str(bp), str(bad))
    assert out.exit_code == 2 and match in out.stderr
    missing = cli("diff", str(bp), str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


def test_cli_diff_bad_gate_value_exits_2(cli, reports):
    bp, cp, _ = reports
    out = cli("diff", str(bp), str(cp), "--max-drop", "auroc=lots")
    assert out.exit_code == 2 and "expected a number or METRIC=NUMBER" in out.stderr


# --------------------------------------------------------------------------- baseline in run

def _scored(tmp_path: Path, name: str, noise: float) -> Path:
    import numpy as np

    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 400)
    s = np.clip(0.5 * y + 0.25 + rng.normal(0, noise, 400), 0, 1)
    path = tmp_path / f"{name}.parquet"
    pl.DataFrame({"id": range(400), "label": y, "score": s}).write_parquet(path)
    return path


def test_run_with_a_baseline(tmp_path):
    good, worse = _scored(tmp_path, "good", 0.1), _scored(tmp_path, "worse", 0.4)
    cfg = {"task": "binary", "predictions": str(good), "metrics": ["auroc", "brier"]}
    accepted = run_config(parse_config(cfg, "t", tmp_path))
    (tmp_path / "accepted.json").write_text(render(accepted, ReportFormat.json))
    gated = {**cfg, "predictions": str(worse),
             "baseline": {"report": "accepted.json", "max_drop": 0.01,
                          "metrics": {"brier": {"max_drop": 1.0}}}}
    r = run_config(parse_config(gated, "t", tmp_path))
    assert not r.passed
    assert len(r.failures) == 1 and r.failures[0].startswith("auroc vs baseline: worse by")
    report = json.loads(render(r, ReportFormat.json))
    assert report["passed"] is False
    base = report["baseline"]
    assert base["baseline"] == "accepted.json"
    assert [x["change"] for x in base["metrics"]] == ["worse", "worse"]
    assert base["metrics"][1]["passed"] is True
    # the same predictions as the baseline pass a no-regression gate
    same = {**cfg, "baseline": {"report": "accepted.json", "max_drop": 0}}
    assert run_config(parse_config(same, "t", tmp_path)).passed
    # gating off: reported, not failed
    assert run_config(parse_config(gated, "t", tmp_path), gating=False).passed


def test_run_cli_baseline_option_and_markdown(cli, tmp_path):
    out = cli("run", str(CONFIGS / "binary-gated.yaml"), "-o", str(tmp_path / "a.json"))
    assert out.exit_code == 0, out.stderr
    md = cli("run", str(CONFIGS / "binary-gated.yaml"), "--baseline", str(tmp_path / "a.json"),
             "-f", "markdown")
    assert md.exit_code == 0, md.stderr
    assert "### Compared with the baseline" in md.stdout
    assert "= same" in md.stdout


def test_missing_baseline_report_is_a_clear_error(cli, tmp_path):
    out = cli("run", str(CONFIGS / "binary-gated.yaml"), "--baseline",
              str(tmp_path / "none.json"))
    assert out.exit_code == 2
    assert "does not exist" in out.stderr


def test_baseline_config_rejects_unknown_keys(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key .baseline\.max_dorp."):
        parse_config({"task": "binary", "predictions": "x.csv",
                      "baseline": {"report": "a.json", "max_dorp": 0.1}}, "t", tmp_path)


# --------------------------------------------------------------------------- signs and noise

NOISE = (0.9947346770876182, 0.9947346770876183)  # one unit in the last place apart


@pytest.mark.parametrize(("base", "cand"), [NOISE, (0.11850291840230912, 0.11850291840230909),
                                            (1e-13, -1e-13), (1234.5678, 1234.5678 + 1e-10)])
def test_a_change_within_the_tolerance_is_exactly_zero(base, cand):
    for direction in ("higher", "lower"):
        d = compare_values("m", "m", direction, base, cand)
        assert (d.change, d.delta) == ("same", 0.0)
        assert d.relative == (0.0 if base else None)
    real = compare_values("m", "m", "higher", 0.5, 0.5 + 1e-9)
    assert real.change == "better" and real.delta == pytest.approx(1e-9)


def _noise_reports(tmp_path: Path) -> tuple[Path, Path]:
    base = _report(auroc=NOISE[0], log_loss=0.11850291840230912)
    cand = _report(auroc=NOISE[1], log_loss=0.11850291840230909)
    bp, cp = tmp_path / "base.json", tmp_path / "cand.json"
    bp.write_text(json.dumps(base))
    cp.write_text(json.dumps(cand))
    return bp, cp


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_float_noise_shows_as_zero_in_every_diff_output(cli, tmp_path, fmt):
    bp, cp = _noise_reports(tmp_path)
    out = cli("diff", str(bp), str(cp), "--max-drop", "0", "-f", fmt)
    assert out.exit_code == 0, out.stderr
    assert "e-1" not in out.stdout and "-0.00%" not in out.stdout and "+0.00%" not in out.stdout
    if fmt == "json":
        d = json.loads(out.stdout)
        assert [(x["delta"], x["relative"]) for x in d["metrics"]] == [(0.0, 0.0)] * 2
    else:
        assert out.stdout.count("0.0000") >= 2 and out.stdout.count("0.00%") == 2


def _worse_log_loss(tmp_path: Path) -> tuple[Path, Path]:
    base, cand = _report(auroc=0.9, log_loss=0.0874), _report(auroc=0.9, log_loss=0.1185)
    bp, cp = tmp_path / "base.json", tmp_path / "cand.json"
    bp.write_text(json.dumps(base))
    cp.write_text(json.dumps(cand))
    return bp, cp


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_one_sign_convention_in_the_table_and_the_failure_line(cli, tmp_path, fmt):
    """A worse log loss (lower is better) went up: +35.58% in the table and in the failure
    line alike (candidate − baseline), and the header says so."""
    bp, cp = _worse_log_loss(tmp_path)
    out = cli("diff", str(bp), str(cp), "--max-relative-drop", "0.02", "-f", fmt)
    assert out.exit_code == 1
    assert out.stdout.count("+35.58%") == 2, out.stdout
    assert "-35.58%" not in out.stdout and "−35.58%" not in out.stdout
    assert "candidate − baseline" in out.stdout
    failure = next(line for line in out.stdout.splitlines() if "vs baseline" in line)
    assert "worse by 0.0311 (0.0874 → 0.1185, +35.58%)" in failure


def test_the_shipped_baseline_is_a_fresh_run(cli, tmp_path):
    """configs/binary-baseline-accepted.json holds what a run of its config gives today, and
    a run against it shows every change as 0."""
    out = cli("run", str(CONFIGS / "binary-baseline.yaml"), "-f", "json")
    assert out.exit_code == 0, out.stderr
    fresh = json.loads(out.stdout)
    shipped = json.loads((CONFIGS / "binary-baseline-accepted.json").read_text())
    values = {m["id"]: m["value"] for m in shipped["metrics"]}
    for m in fresh["metrics"]:
        assert m["value"] == pytest.approx(values[m["id"]], rel=1e-12, abs=1e-12), m["id"]
    assert [(x["change"], x["delta"]) for x in fresh["baseline"]["metrics"]] == \
        [("same", 0.0)] * len(values)
    table = cli("run", str(CONFIGS / "binary-baseline.yaml")).stdout
    assert "e-1" not in table and "+0.00%" not in table and "-0.00%" not in table
