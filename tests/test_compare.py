"""``evalcli compare``: inference of task and columns, ambiguity errors, -m, --gate, options."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import f1_score, mean_absolute_error, roc_auc_score

from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text)
    return str(path)


def report(r: CliResult) -> dict[str, Any]:
    assert r.exit_code in (0, 1), r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def user_error(r: CliResult, *patterns: str) -> None:
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stdout == "" and "Traceback" not in r.stderr
    flat = " ".join(r.stderr.split())
    for p in patterns:
        assert re.search(p, flat), f"{p!r} not in {flat!r}"


Y = [1, 0, 1, 1, 0, 0, 1, 0]
S = [0.9, 0.3, 0.35, 0.8, 0.1, 0.6, 0.7, 0.2]


def _binary(folder: Path, label: str = "label", score: str = "score", idcol: str = "id"
            ) -> tuple[str, str]:
    rows = "\n".join(f"{i},{s}" for i, s in enumerate(S))
    truth = "\n".join(f"{i},{y}" for i, y in enumerate(reversed(Y)))
    return (write(folder, "preds.csv", f"{idcol},{score}\n{rows}\n"),
            write(folder, "truth.csv", f"{idcol},{label}\n{truth}\n"))


# --------------------------------------------------------------------------- inference

def test_two_files_everything_inferred(cli: Cli, tmp_path: Path) -> None:
    p, t = _binary(tmp_path)
    r = cli("compare", p, t, "-f", "json")
    rep = report(r)
    assert rep["task"] == "binary"
    assert rep["inputs"]["predictions"]["columns"] == {"score": "score"}
    assert rep["inputs"]["truth"]["columns"] == {"label": "label"}
    by_id = {m["id"]: m["value"] for m in rep["metrics"]}
    y = list(reversed(Y))
    assert by_id["auroc"] == pytest.approx(roc_auc_score(y, S))
    assert by_id["f1"] == pytest.approx(f1_score(y, [int(s >= 0.5) for s in S]))


def test_the_table_says_what_was_inferred(cli: Cli, tmp_path: Path) -> None:
    p, t = _binary(tmp_path)
    r = cli("compare", p, t)
    assert r.exit_code == 0
    assert "inferred: task=binary, id=id, label=label, score=score" in " ".join(r.stderr.split())
    assert "auroc" in r.stdout


@pytest.mark.parametrize("label,score,idcol", [
    ("y_true", "y_score", "id"), ("target", "prob", "row_id"), ("actual", "proba", "user_id")])
def test_common_column_names(cli: Cli, tmp_path: Path, label: str, score: str,
                             idcol: str) -> None:
    p, t = _binary(tmp_path, label, score, idcol)
    rep = report(cli("compare", p, t, "-f", "json", "-m", "auroc"))
    assert rep["inputs"]["truth"]["columns"] == {"label": label}
    assert rep["inputs"]["predictions"]["columns"] == {"score": score}


def test_one_file_regression_from_float_target(cli: Cli, tmp_path: Path) -> None:
    y = [1.5, 2.25, 3.0, 10.5]
    yhat = [1.0, 2.0, 3.5, 9.0]
    rows = "\n".join(f"{a},{b}" for a, b in zip(y, yhat, strict=True))
    f = write(tmp_path, "r.csv", f"target,y_pred\n{rows}\n")
    rep = report(cli("compare", f, "-f", "json", "-m", "mae"))
    assert rep["task"] == "regression"
    assert rep["metrics"][0]["value"] == pytest.approx(mean_absolute_error(y, yhat))


def test_the_only_other_column_of_the_truth_is_the_label(cli: Cli, tmp_path: Path) -> None:
    p = write(tmp_path, "p.csv", "id,score\n1,0.9\n2,0.1\n")
    t = write(tmp_path, "t.csv", "id,is_fraud\n1,1\n2,0\n")
    rep = report(cli("compare", p, t, "-f", "json", "-m", "auroc"))
    assert rep["inputs"]["truth"]["columns"] == {"label": "is_fraud"}
    assert rep["metrics"][0]["value"] == 1.0


def test_a_prediction_column_holding_probabilities_is_the_score(cli: Cli, tmp_path: Path
                                                                ) -> None:
    f = write(tmp_path, "p.csv", "label,prediction\n1,0.9\n0,0.2\n1,0.4\n")
    rep = report(cli("compare", f, "-f", "json", "-m", "auroc"))
    assert rep["inputs"]["predictions"]["columns"] == {"label": "label", "score": "prediction"}
    assert rep["metrics"][0]["value"] == 1.0


def test_hard_predictions(cli: Cli, tmp_path: Path) -> None:
    f = write(tmp_path, "p.csv", "label,y_pred\n1,1\n0,1\n1,1\n0,0\n")
    rep = report(cli("compare", f, "-f", "json", "-m", "f1", "-m", "accuracy"))
    assert [m["id"] for m in rep["metrics"]] == ["f1", "accuracy"]
    assert rep["metrics"][0]["value"] == pytest.approx(0.8)
    assert rep["metrics"][1]["value"] == pytest.approx(0.75)


def test_string_labels_need_positive(cli: Cli, tmp_path: Path) -> None:
    f = write(tmp_path, "p.csv", "label,score\nyes,0.9\nno,0.2\nyes,0.6\n")
    r = cli("compare", f)
    user_error(r, r"two values \('yes', 'no'\)", r"--positive yes or --positive no")
    rep = report(cli("compare", f, "--positive", "yes", "-f", "json", "-m", "auroc"))
    assert rep["task"] == "binary" and rep["metrics"][0]["value"] == 1.0


def test_boolean_labels(cli: Cli, tmp_path: Path) -> None:
    f = write(tmp_path, "p.csv", "label,score\ntrue,0.9\nfalse,0.2\ntrue,0.6\n")
    rep = report(cli("compare", f, "-f", "json", "-m", "auroc"))
    assert rep["task"] == "binary" and rep["metrics"][0]["value"] == 1.0


# --------------------------------------------------------------------------- ambiguity

def test_ambiguous_join_key_lists_candidates(cli: Cli, tmp_path: Path) -> None:
    p = write(tmp_path, "p.csv", "user_id,item_id,score\n1,1,0.9\n2,1,0.2\n")
    t = write(tmp_path, "t.csv", "user_id,item_id,label\n1,1,1\n2,1,0\n")
    user_error(cli("compare", p, t), r"cannot tell which column joins",
               r"candidates user_id, item_id", r"--id")
    rep = report(cli("compare", p, t, "--id", "user_id", "--id", "item_id", "-f", "json",
                     "-m", "auroc"))
    assert rep["metrics"][0]["value"] == 1.0


def test_no_shared_column(cli: Cli, tmp_path: Path) -> None:
    p = write(tmp_path, "p.csv", "a,score\n1,0.9\n")
    t = write(tmp_path, "t.csv", "b,label\n1,1\n")
    user_error(cli("compare", p, t), r"share no column")


def test_ambiguous_score_lists_candidates(cli: Cli, tmp_path: Path) -> None:
    f = write(tmp_path, "p.csv", "label,score,prob\n1,0.9,0.8\n0,0.2,0.1\n")
    user_error(cli("compare", f), r"several columns could be the score: score, prob",
               r"--score")
    rep = report(cli("compare", f, "--score", "prob", "-f", "json", "-m", "auroc"))
    assert rep["inputs"]["predictions"]["columns"]["score"] == "prob"


def test_unknown_label(cli: Cli, tmp_path: Path) -> None:
    f = write(tmp_path, "p.csv", "a,b\n1,0.9\n0,0.2\n")
    user_error(cli("compare", f), r"cannot tell which column is the label", r"columns: a, b",
               r"--label")


def test_explicit_columns_that_do_not_exist(cli: Cli, tmp_path: Path) -> None:
    p, t = _binary(tmp_path)
    user_error(cli("compare", p, t, "--score", "scor"), r"no column 'scor'",
               r"Did you mean 'score'\?")


# --------------------------------------------------------------------------- -m, --gate, --task

def test_metric_option_accepts_ids(cli: Cli, tmp_path: Path) -> None:
    p, t = _binary(tmp_path)
    rep = report(cli("compare", p, t, "-f", "json", "-m", "auroc", "-m", "fbeta[beta=2]",
                     "-m", "recall[threshold=0.3]"))
    assert [m["id"] for m in rep["metrics"]] == ["auroc", "fbeta[beta=2]",
                                                  "recall[threshold=0.3]"]


def test_unknown_metric_suggests(cli: Cli, tmp_path: Path) -> None:
    p, t = _binary(tmp_path)
    user_error(cli("compare", p, t, "-m", "aucroc"), r"Did you mean 'auroc'\?")


def test_gates_pass_and_fail(cli: Cli, tmp_path: Path) -> None:
    p, t = _binary(tmp_path)
    auroc = roc_auc_score(list(reversed(Y)), S)
    assert cli("compare", p, t, "--gate", f"auroc>={auroc - 0.01}").exit_code == 0
    r = cli("compare", p, t, "--gate", f"auroc>={auroc + 0.01}", "-f", "json")
    assert r.exit_code == 1
    rep = json.loads(r.stdout)
    gated = [m for m in rep["metrics"] if "gate" in m]
    assert [m["id"] for m in gated] == ["auroc"] and gated[0]["passed"] is False
    assert len(rep["metrics"]) > 1  # a gate without -m: every metric, the gate on its own


def test_gate_with_metric_and_max(cli: Cli, tmp_path: Path) -> None:
    p, t = _binary(tmp_path)
    r = cli("compare", p, t, "-m", "log_loss", "--gate", "log_loss<=0.01", "-f", "json")
    assert r.exit_code == 1
    rep = json.loads(r.stdout)
    assert [m["id"] for m in rep["metrics"]] == ["log_loss"]
    assert rep["metrics"][0]["gate"] == {"max": 0.01}


def test_gate_on_an_alias(cli: Cli, tmp_path: Path) -> None:
    p, t = _binary(tmp_path)
    rep = report(cli("compare", p, t, "--gate", "roc_auc>=0.5", "-f", "json"))
    gated = [m for m in rep["metrics"] if "gate" in m]
    assert [m["id"] for m in gated] == ["auroc"]
    assert sum(m["id"] == "auroc" for m in rep["metrics"]) == 1


@pytest.mark.parametrize("gate", ["auroc=>0.8", "auroc>0.8", "auroc>=high", ">=0.8"])
def test_unreadable_gate(cli: Cli, tmp_path: Path, gate: str) -> None:
    p, t = _binary(tmp_path)
    user_error(cli("compare", p, t, "--gate", gate), r"cannot read the gate",
               r"METRIC>=VALUE")


def test_task_option_overrides_inference(cli: Cli, tmp_path: Path) -> None:
    p, t = _binary(tmp_path)
    rep = report(cli("compare", p, t, "--task", "regression", "-f", "json", "-m", "mae"))
    assert rep["task"] == "regression"
    assert rep["inputs"]["predictions"]["columns"] == {"prediction": "score"}


def test_unmatched_rows_and_drop(cli: Cli, tmp_path: Path) -> None:
    p = write(tmp_path, "p.csv", "id,score\n1,0.9\n2,0.1\n3,0.5\n")
    t = write(tmp_path, "t.csv", "id,label\n1,1\n2,0\n")
    user_error(cli("compare", p, t), r"1 row\(s\) only in \S*p\.csv \(e\.g\. id=3\)")
    rep = report(cli("compare", p, t, "--drop-unmatched", "-f", "json", "-m", "auroc"))
    assert rep["alignment"]["only_in_predictions"] == 1 and rep["alignment"]["matched"] == 2


def test_weight_and_group_by(cli: Cli, tmp_path: Path) -> None:
    f = write(tmp_path, "p.csv", "label,score,w,country\n1,0.9,1,fr\n0,0.8,3,fr\n1,0.3,1,de\n"
                                 "0,0.1,2,de\n")
    rep = report(cli("compare", f, "--weight", "w", "--group-by", "country", "-f", "json",
                     "-m", "auroc"))
    assert rep["metrics"][0]["value"] == pytest.approx(
        roc_auc_score([1, 0, 1, 0], [0.9, 0.8, 0.3, 0.1], sample_weight=[1, 3, 1, 2]))
    assert {s["key"]["country"] for s in rep["segments"]} == {"fr", "de"}


def test_missing_file(cli: Cli, tmp_path: Path) -> None:
    user_error(cli("compare", str(tmp_path / "nope.csv")), r"nope\.csv does not exist")


@pytest.mark.parametrize("files", [
    ("ranking_predictions.parquet", "ranking_truth.parquet"),
    ("ranking.run", "ranking.qrels"),
])
def test_ranking_is_inferred_from_query_and_item_columns(cli: Cli, files: tuple[str, str]) -> None:
    from tests.conftest import CONFIGS, SAMPLES

    got = report(cli("compare", str(SAMPLES / files[0]), str(SAMPLES / files[1]), "-f", "json",
                     "-m", "ndcg@10", "-m", "mrr", "--gate", "ndcg@10>=0.99"))
    assert got["task"] == "ranking"
    ref = report(cli("run", str(CONFIGS / "ranking-quickstart.yaml"), "-f", "json", "--no-gate"))
    want = {m["id"]: m["value"] for m in ref["metrics"]}
    values = {m["id"]: m["value"] for m in got["metrics"]}
    assert values["ndcg@10"] == pytest.approx(want["ndcg@10"], abs=1e-12)
    assert values["mrr"] == pytest.approx(want["mrr"], abs=1e-12)
    assert got["passed"] is False and got["metrics"][0]["gate"] == {"min": 0.99}


def test_keyed_classification_is_not_taken_for_a_ranking(cli: Cli, tmp_path: Path) -> None:
    p = write(tmp_path, "p.csv", "query,item,score\n1,1,0.9\n2,1,0.2\n")
    t = write(tmp_path, "t.csv", "query,item,label\n1,1,1\n2,1,0\n")
    user_error(cli("compare", p, t), r"cannot tell which column joins")
    rep = report(cli("compare", p, t, "--task", "ranking", "-f", "json", "-m", "mrr"))
    assert rep["task"] == "ranking"
