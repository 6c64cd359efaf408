"""The ranking family through the command line: sample configs, per-query output, metrics show,
compare, and errors (exit 2, one message, no traceback)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.conftest import CONFIGS, SAMPLES


def _report(cli, *args: str) -> dict:
    r = cli(*args, "--format", "json")
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def _values(report: dict) -> dict:
    return {m["id"]: m["value"] for m in report["metrics"]}


def test_quickstart_config(cli):
    rep = _report(cli, "run", str(CONFIGS / "ranking-quickstart.yaml"))
    v = _values(rep)
    assert rep["passed"] is True
    assert 0.3 < v["ndcg@10"] < 1 and 0 < v["catalog_coverage@10"] <= 1
    assert v["diversity@10"] == pytest.approx(1 - v["intra_list_similarity@10"])
    ndcg = next(m for m in rep["metrics"] if m["id"] == "ndcg@10")
    assert ndcg["details"]["conventions"]["ties"] == "average"
    assert ndcg["details"]["query_status"] == {"ok": 38, "missing": 1, "no_relevant": 1,
                                               "unjudged": 1}
    assert rep["alignment"]["queries_only_in_truth"] == 1
    assert rep["alignment"]["queries_only_in_predictions"] == 1


def test_trec_parquet_and_list_inputs_agree(cli, tmp_path):
    trec = _values(_report(cli, "run", str(CONFIGS / "ranking-trec.yaml")))
    # the same run from Parquet with trec_eval's conventions
    pq = _values(_report(
        cli, "run", str(CONFIGS / "ranking-trec.yaml"),
        "--predictions", str(SAMPLES / "ranking_predictions.parquet"),
        "--truth", str(SAMPLES / "ranking_truth.parquet")))
    assert pq == pytest.approx(trec)
    lists = _values(_report(cli, "run", str(CONFIGS / "ranking-lists.yaml")))
    # a list's order is its rank: the run file's rank column holds the same order
    cfg = tmp_path / "by_rank.yaml"
    cfg.write_text(f"task: ranking\npredictions: {SAMPLES / 'ranking.run'}\n"
                   f"truth: {SAMPLES / 'ranking_truth.parquet'}\n"
                   "options: {order_by: rank}\nmetrics: [ndcg@5, precision@5, recall@15, mrr]\n")
    assert _values(_report(cli, "run", str(cfg))) == pytest.approx(lists)


def test_xmc_config(cli):
    from tests.test_ranking_ref import reference

    v = _values(_report(cli, "run", str(CONFIGS / "xmc-quickstart.yaml")))
    assert v["precision@1"] == pytest.approx(v["ndcg@1"])  # binary gains: equal at 1
    scores = pl.read_parquet(SAMPLES / "xmc_scores.parquet")
    labels = pl.read_parquet(SAMPLES / "xmc_labels.parquet")
    case = {}
    for (doc,), g in scores.group_by(["example"]):
        case[doc] = (list(zip(g["label"], g["score"], strict=True)), {})
    for (doc,), g in labels.group_by(["example"]):
        case.setdefault(doc, ([], {}))[1].update({lab: 1.0 for lab in g["label"]})
    for name, k in (("precision", 5), ("ndcg", 3), ("ndcg", 5), ("recall", 10)):
        assert v[f"{name}@{k}"] == pytest.approx(reference(case, name, k)), name


@pytest.mark.parametrize("ext", ["parquet", "csv", "jsonl"])
def test_per_query_output(cli, tmp_path, ext):
    out = tmp_path / f"pq.{ext}"
    rep = _report(cli, "run", str(CONFIGS / "ranking-trec.yaml"), "--per-query", str(out))
    table = {"parquet": pl.read_parquet, "csv": pl.read_csv, "jsonl": pl.read_ndjson}[ext](out)
    assert table.columns[0] == "query"
    ids = [m["id"] for m in rep["metrics"]]
    assert table.columns[1:] == ids
    # the mean of the per-query values is the reported value (queries left out are null)
    for mid, value in _values(rep).items():
        assert table[mid].drop_nulls().mean() == pytest.approx(value)
    # u40 has no predictions: left out under trec_eval's rules, 0 with missing=zero
    row = table.filter(pl.col("query") == "u40").row(0, named=True)
    assert row["map"] is None and row["map[missing=zero]"] == 0.0


def test_per_query_in_the_config_and_segments(cli, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"task: ranking\npredictions: {SAMPLES / 'ranking_predictions.parquet'}\n"
        f"truth: {SAMPLES / 'ranking_truth.parquet'}\ngroup_by: [cohort]\n"
        "metrics: [ndcg@5, novelty@5]\nper_query: out.csv\n")
    rep = _report(cli, "run", str(cfg))
    table = pl.read_csv(tmp_path / "out.csv")
    assert {"query", "cohort", "ndcg@5", "novelty@5"} <= set(table.columns)
    segs = {s["key"]["cohort"]: s for s in rep["segments"]}
    assert {"new", "returning"} <= set(segs)


def test_per_query_is_refused_outside_ranking(cli, tmp_path):
    r = cli("run", str(CONFIGS / "binary-quickstart.yaml"), "--per-query",
            str(tmp_path / "x.csv"))
    assert r.exit_code == 2 and "ranking" in r.stderr and "Traceback" not in r.stderr


def test_metrics_show_ndcg_prints_formula_and_conventions(cli):
    r = cli("metrics", "show", "ndcg@10")
    assert r.exit_code == 0, r.stderr
    for word in ("formula", "log2(i+1)", "ties", "missing", "no_relevant", "unjudged", "gain",
                 "relevance_threshold", "compat", "trec_eval", "exponential"):
        assert word in r.stdout, word


def test_compare_with_ranking(cli, tmp_path):
    out = tmp_path / "pq.parquet"
    r = cli("compare", str(SAMPLES / "ranking.run"), str(SAMPLES / "ranking.qrels"),
            "--task", "ranking", "--id", "query", "--id", "item", "-m", "ndcg@10", "-m", "map",
            "--per-query", str(out), "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert pl.read_parquet(out).height == 41


def test_bad_inputs_exit_2(cli, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1\n")  # 4 fields: read as qrels, so the run has no score
    good = SAMPLES / "ranking.qrels"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"task: ranking\npredictions: {bad}\ntruth: {good}\nmetrics: [mrr]\n")
    r = cli("run", str(cfg))
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert "neither a score nor a rank" in r.stderr
    cfg.write_text(f"task: ranking\npredictions: {SAMPLES / 'ranking.run'}\ntruth: {good}\n"
                   "metrics: [{metric: ndcg@10, gain: cubic}]\n")
    r = cli("run", str(cfg))
    assert r.exit_code == 2 and "gain" in r.stderr and "exponential" in r.stderr
    cfg.write_text(f"task: ranking\npredictions: {SAMPLES / 'ranking.run'}\ntruth: {good}\n"
                   "options: {item_features_file: nowhere.parquet}\n"
                   "metrics: [intra_list_similarity@5]\n")
    r = cli("run", str(cfg))
    assert r.exit_code == 2 and "nowhere.parquet" in r.stderr
