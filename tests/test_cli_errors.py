"""Exit codes and error messages through the CLI (``evalcli run``).

Every bad input: exit 2, one message on stderr that names the thing, nothing on stdout, no
traceback. A failed gate: exit 1. Reports are written atomically.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def assert_user_error(r: CliResult, *patterns: str) -> None:
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    assert r.stdout == "", r.stdout
    assert "Traceback" not in r.stderr
    assert r.stderr.count("error:") == 1, r.stderr
    flat = " ".join(r.stderr.split())  # the console may wrap long lines
    for p in patterns:
        assert re.search(p, flat), f"{p!r} not in {flat!r}"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.6\n4,0.4\n")
    (tmp_path / "truth.csv").write_text("id,label\n1,1\n2,0\n3,1\n4,0\n")
    return tmp_path


def config(folder: Path, body: str, name: str = "c.yaml") -> str:
    path = folder / name
    path.write_text(body)
    return str(path)


BASE = "task: binary\npredictions: preds.csv\ntruth: truth.csv\n"


# --------------------------------------------------------------------------- inputs

def test_ok_run(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, BASE + "metrics: [auroc, accuracy]\n"))
    assert r.exit_code == 0, r.stderr
    assert "auroc" in r.stdout and "1.0000" in r.stdout


def test_misspelled_column(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, BASE + "columns: {score: scroe}\nmetrics: [auroc]\n"))
    assert_user_error(r, r"preds\.csv", r"no column 'scroe' for the score role",
                      r"Did you mean 'score'\?")


def test_missing_label_column(cli: Cli, files: Path) -> None:
    (files / "truth2.csv").write_text("id,target\n1,1\n2,0\n3,1\n4,0\n")
    r = cli("run", config(files, BASE + "metrics: [auroc]\n"), "--truth",
            str(files / "truth2.csv"))
    assert_user_error(r, r"truth2\.csv", r"no column 'label'", "target")


def test_missing_id_column(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, BASE + "columns: {id: key}\nmetrics: [auroc]\n"))
    assert_user_error(r, r"no id column 'key'")


def test_empty_file(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("")
    r = cli("run", config(files, BASE))
    assert_user_error(r, r"preds\.csv is empty")


def test_header_only_file(cli: Cli, files: Path) -> None:
    (files / "only.csv").write_text("label,score\n")
    r = cli("run", config(files, "task: binary\npredictions: only.csv\nmetrics: [auroc]\n"))
    assert_user_error(r, r"only\.csv has no data rows")


def test_no_rows_match(cli: Cli, files: Path) -> None:
    (files / "other.csv").write_text("id,label\n10,1\n11,0\n")
    r = cli("run", config(files, BASE + "alignment: {unmatched: drop}\n"), "--truth",
            str(files / "other.csv"))
    assert_user_error(r, r"no rows to evaluate: no id of \S*preds\.csv matches one of "
                      r"\S*other\.csv \(4 only in predictions, 2 only in truth\)")


def test_wrong_type_score(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,high\n2,low\n3,0.6\n4,0.4\n")
    r = cli("run", config(files, BASE + "metrics: [auroc]\n"))
    assert_user_error(r, r"preds\.csv", r"score column holds String values",
                      r"id=1: score='high'")


def test_wrong_type_regression_label(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("label,prediction\na,1.0\nb,2.0\n")
    r = cli("run", config(tmp_path, "task: regression\npredictions: r.csv\n"))
    assert_user_error(r, r"r\.csv", r"label column holds String values", "numbers")


def test_duplicate_keys_name_the_first(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.6\n4,0.4\n3,0.5\n2,0.1\n")
    r = cli("run", config(files, BASE + "metrics: [auroc]\n"))
    assert_user_error(r, r"preds\.csv", r"2 duplicated key\(s\) in the predictions",
                      r"id=2 \(2 rows\); id=3 \(2 rows\)")


def test_duplicate_keys_in_truth(cli: Cli, files: Path) -> None:
    (files / "truth.csv").write_text("id,label\n1,1\n2,0\n3,1\n4,0\n4,1\n")
    r = cli("run", config(files, BASE + "metrics: [auroc]\n"))
    assert_user_error(r, r"truth\.csv", r"duplicated key\(s\) in the truth", r"id=4")


def test_unmatched_ids_error_by_default(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.6\n5,0.4\n6,0.3\n")
    r = cli("run", config(files, BASE + "metrics: [auroc]\n"))
    assert_user_error(r, r"2 row\(s\) only in \S*preds\.csv \(e\.g\. id=5; id=6\)",
                      r"1 row\(s\) only in \S*truth\.csv \(e\.g\. id=4\)", r"unmatched: drop")


def test_unmatched_ids_drop_reports_counts(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.6\n5,0.4\n6,0.3\n")
    r = cli("run", config(files, BASE + "metrics: [auroc]\nalignment: {unmatched: drop}\n"),
            "--format", "json")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["alignment"]["matched"] == 3
    assert report["alignment"]["only_in_predictions"] == 2
    assert report["alignment"]["only_in_truth"] == 1
    assert report["inputs"]["predictions"]["rows"] == 5
    assert report["inputs"]["truth"]["rows"] == 4


def test_nan_score(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,NaN\n3,0.6\n4,\n")
    r = cli("run", config(files, BASE + "metrics: [auroc]\n"))
    assert_user_error(r, r"2 row\(s\) with a null or NaN score", r"first at id=2",
                      r"nulls: drop")


def test_nan_dropped_and_counted(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,NaN\n3,0.6\n4,0.1\n")
    r = cli("run", config(files, BASE + "metrics: [auroc]\nalignment: {nulls: drop}\n"),
            "--format", "json")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["alignment"]["dropped_nulls"] == 1
    assert report["metrics"][0]["value"] == 1.0


def test_probabilities_outside_unit_interval(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,1.6\n4,0.4\n")
    r = cli("run", config(files, BASE + "metrics: [log_loss]\n"))
    assert_user_error(r, r"outside \[0, 1\]", r"1 row\(s\)", r"id=3: score=1\.6")


def test_labels_not_binary(cli: Cli, files: Path) -> None:
    (files / "truth.csv").write_text("id,label\n1,1\n2,0\n3,2\n4,0\n")
    r = cli("run", config(files, BASE + "metrics: [auroc]\n"))
    assert_user_error(r, r"0 and 1", r"id=3: label=2", r"multiclass")


# --------------------------------------------------------------------------- config

def test_malformed_yaml_shows_the_line(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, BASE + "metrics: [auroc, {metric: f1\n"))
    assert_user_error(r, r"c\.yaml: invalid YAML at line 5")


def test_unknown_config_key(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, BASE + "metircs: [auroc]\n"))
    assert_user_error(r, r"unknown key 'metircs'\. Did you mean 'metrics'\?")


def test_unknown_metric(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, BASE + "metrics: [aucroc]\n"))
    assert_user_error(r, r"unknown binary metric 'aucroc'\. Did you mean 'auroc'\?",
                      r"evalcli metrics --family binary")


@pytest.mark.parametrize("entry", ["{metric: fbeta, beta: 0}", "{metric: fbeta, beta: -1}",
                                   "'fbeta[beta=0]'"])
def test_bad_beta(cli: Cli, files: Path, entry: str) -> None:
    r = cli("run", config(files, BASE + f"metrics: [{entry}]\n"))
    assert_user_error(r, r"parameter 'beta'.*must be > 0")


def test_missing_config(cli: Cli, tmp_path: Path) -> None:
    r = cli("run", str(tmp_path / "none.yaml"))
    assert_user_error(r, r"none\.yaml does not exist")


def test_missing_input_file(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, "task: binary\npredictions: pred.csv\ntruth: truth.csv\n"))
    assert_user_error(r, r"pred\.csv does not exist", r"Did you mean '\S*preds\.csv'\?")


# --------------------------------------------------------------------------- gates and output

GATED = BASE + "metrics:\n  - {metric: auroc, min: 0.5}\n  - {metric: accuracy, min: 0.99}\n"


def test_gate_failure_exits_1(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.4\n4,0.6\n")
    r = cli("run", config(files, GATED))
    assert r.exit_code == 1, r.stderr
    assert "fail" in r.stdout and "Traceback" not in r.stderr


def test_gate_failure_in_json(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.4\n4,0.6\n")
    r = cli("run", config(files, GATED), "--format", "json")
    assert r.exit_code == 1
    report = json.loads(r.stdout)
    assert report["passed"] is False
    by_id = {m["id"]: m for m in report["metrics"]}
    assert by_id["auroc"]["passed"] is True
    assert by_id["accuracy"]["passed"] is False and by_id["accuracy"]["value"] == 0.5
    assert by_id["accuracy"]["gate"] == {"min": 0.99}


def test_max_gate_reads_lower_is_better(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, BASE + "metrics: [{metric: log_loss, max: 0.01}]\n"))
    assert r.exit_code == 1
    r = cli("run", config(files, BASE + "metrics: [{metric: log_loss, max: 1.0}]\n"))
    assert r.exit_code == 0, r.stderr


def test_undefined_value_never_passes_a_gate(cli: Cli, files: Path) -> None:
    (files / "truth.csv").write_text("id,label\n1,1\n2,1\n3,1\n4,1\n")
    r = cli("run", config(files, BASE + "metrics: [{metric: auroc, min: 0.0}]\n"),
            "--format", "json")
    assert r.exit_code == 1
    m = json.loads(r.stdout)["metrics"][0]
    assert m["value"] is None and m["passed"] is False and m["notes"]


def test_no_gate_reports_and_exits_0(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.4\n4,0.6\n")
    r = cli("run", config(files, GATED), "--no-gate", "--format", "json")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["gating"] is False and report["passed"] is True


def test_json_stdout_is_only_json(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, GATED), "--format", "json")
    report = json.loads(r.stdout)  # the whole of stdout parses
    assert report["schema_version"] == 1
    assert [m["id"] for m in report["metrics"]] == ["auroc", "accuracy"]
    for m in report["metrics"]:
        assert {"id", "metric", "params", "value"} <= set(m)


def test_json_report_is_deterministic(cli: Cli, files: Path) -> None:
    a = cli("run", config(files, GATED), "--format", "json").stdout
    b = cli("run", config(files, GATED), "--format", "json").stdout
    assert a == b


def test_output_file_written(cli: Cli, files: Path) -> None:
    out = files / "report.json"
    r = cli("run", config(files, GATED), "-o", str(out), "--format", "none")
    assert r.exit_code == 0, r.stderr
    assert json.loads(out.read_text())["passed"] is True
    assert not [p for p in files.iterdir() if p.name.startswith(".report.json")]  # no temp


def test_failed_run_does_not_replace_an_existing_report(cli: Cli, files: Path) -> None:
    out = files / "report.json"
    out.write_text('{"old": true}\n')
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,NaN\n3,0.6\n4,0.4\n")
    r = cli("run", config(files, GATED), "-o", str(out))
    assert_user_error(r, "NaN")
    assert out.read_text() == '{"old": true}\n'
    assert sorted(p.name for p in files.iterdir()) == [
        "c.yaml", "preds.csv", "report.json", "truth.csv"]


def test_failed_gate_still_writes_the_report(cli: Cli, files: Path) -> None:
    out = files / "report.json"
    out.write_text('{"old": true}\n')
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.4\n4,0.6\n")
    r = cli("run", config(files, GATED), "-o", str(out), "--format", "none")
    assert r.exit_code == 1
    assert json.loads(out.read_text())["passed"] is False


def test_output_to_missing_folder(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, GATED), "-o", str(files / "nope" / "r.json"))
    assert r.exit_code == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr


def test_output_with_unknown_extension(cli: Cli, files: Path) -> None:
    r = cli("run", config(files, GATED), "-o", str(files / "r.pdf"))
    assert r.exit_code == 2 and "extension" in r.stderr


def test_input_overrides(cli: Cli, files: Path) -> None:
    (files / "better.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.8\n4,0.1\n")
    (files / "preds.csv").write_text("id,score\n1,0.1\n2,0.9\n3,0.2\n4,0.8\n")
    cfg = config(files, BASE + "metrics: [{metric: auroc, min: 0.9}]\n")
    assert cli("run", cfg).exit_code == 1
    assert cli("run", cfg, "--predictions", str(files / "better.csv")).exit_code == 0


def test_every_row_dropped_for_nulls(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("label,score\n1,\n0,NaN\n")
    r = cli("run", config(tmp_path, "task: binary\npredictions: p.csv\nmetrics: [auroc]\n"
                                    "alignment: {nulls: drop}\n"))
    assert_user_error(r, r"no rows to evaluate: each of the 2 row\(s\) has a null or NaN")


def test_a_file_that_breaks_while_reading_is_named(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "ragged.csv").write_text("label,score\n1,0.5\n0,0.3,9\n")
    r = cli("run", config(tmp_path, "task: binary\npredictions: ragged.csv\n"
                                    "metrics: [auroc]\n"))
    assert_user_error(r, r"ragged\.csv")


def test_json_format_error_leaves_stdout_empty(cli: Cli, files: Path) -> None:
    (files / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,1.6\n4,0.4\n")
    r = cli("run", config(files, BASE + "metrics: [brier]\n"), "--format", "json")
    assert_user_error(r, r"outside \[0, 1\]")


def test_threshold_on_hard_predictions_only(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "h.csv").write_text("label,prediction\n1,1\n0,1\n")
    r = cli("run", config(tmp_path, "task: binary\npredictions: h.csv\n"
                                    "metrics: [{metric: f1, threshold: 0.3}]\n"))
    assert_user_error(r, r"threshold=0\.3 applies to scores")
