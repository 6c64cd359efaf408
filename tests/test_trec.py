"""TREC qrels and run files: detection, parsing, errors, and trec_eval's conventions end to end
(cross-checked with pytrec_eval, which wraps trec_eval's own code, when it is installed)."""

from __future__ import annotations

import gzip
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from evalcli.errors import InputDataError
from evalcli.io import Source, detect_format, scan
from evalcli.io.readers import explain_read_error
from evalcli.io.trec import trec_kind
from tests.conftest import CONFIGS, SAMPLES


def _write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_extensions_map_to_trec():
    for name in ("a.qrels", "b.run", "c.trec", "d.run.gz"):
        assert detect_format(name)[0] == "trec"


def test_qrels_and_run_are_told_apart_by_their_fields(tmp_path):
    q = _write(tmp_path / "x.trec", "301 0 FBIS3-1 1\n301  0\tFBIS3-2 0\n\n")
    r = _write(tmp_path / "y.trec", "301 Q0 FBIS3-1 1 12.5 bm25\n301 Q0 FBIS3-9 2 11 bm25\n")
    assert trec_kind(q) == "qrels" and trec_kind(r) == "run"
    qrels = scan(Source(q)).collect()
    assert qrels.columns == ["query", "iteration", "item", "relevance"]
    assert qrels.rows() == [("301", "0", "FBIS3-1", 1), ("301", "0", "FBIS3-2", 0)]
    run = scan(Source(r)).collect()
    assert run.columns == ["query", "q0", "item", "rank", "score", "tag"]
    assert run["score"].to_list() == [12.5, 11.0]
    assert run["rank"].to_list() == [1, 2]


def test_ids_stay_text(tmp_path):
    q = _write(tmp_path / "x.qrels", "007 0 0012 1\n")
    assert scan(Source(q)).collect().row(0) == ("007", "0", "0012", 1)


def test_gzip_and_config_format(tmp_path):
    p = tmp_path / "r.run.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("q1 Q0 d1 1 0.5 t\n")
    assert scan(Source(str(p))).collect().height == 1
    other = _write(tmp_path / "r.txt", "q1 Q0 d1 1 0.5 t\n")
    assert scan(Source(other, format="trec")).collect()["item"].to_list() == ["d1"]


def test_wrong_field_counts_are_clear_errors(tmp_path):
    bad = _write(tmp_path / "x.run", "q1 Q0 d1 1 0.5\n")
    with pytest.raises(InputDataError, match=r"not a TREC qrels .* first line has 5 fields"):
        scan(Source(bad))
    mixed = _write(tmp_path / "m.run", "q1 Q0 d1 1 0.5 t\nq1 0 d2 1\n")
    with pytest.raises(Exception) as err:
        scan(Source(mixed)).collect()
    explained = explain_read_error([Source(mixed)], err.value)
    assert explained is not None
    assert "line 2 has 4 fields, not at least 6" in str(explained)
    empty = _write(tmp_path / "e.qrels", "\n\n")
    with pytest.raises(InputDataError, match="empty"):
        scan(Source(empty))


def test_trec_sample_config_matches_the_parquet_one(cli):
    import json

    r = cli("run", str(CONFIGS / "ranking-trec.yaml"), "--format", "json")
    assert r.exit_code == 0, r.stderr
    trec = {m["id"]: m["value"] for m in json.loads(r.stdout)["metrics"]}
    assert trec["map"] == pytest.approx(0.4527066950143873)


def _load_trec() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    run: dict[str, dict[str, float]] = defaultdict(dict)
    for line in (SAMPLES / "ranking.qrels").read_text().splitlines():
        q, _, d, rel = line.split()
        qrels[q][d] = int(rel)
    for line in (SAMPLES / "ranking.run").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run[q][d] = float(s)
    return dict(qrels), dict(run)


MEASURES = {"map": "map", "P_5": "precision@5", "P_10": "precision@10",
            "ndcg_cut_10": "ndcg@10", "recip_rank": "mrr", "Rprec": "r_precision",
            "recall_10": "recall@10", "map_cut_5": "map@5", "ndcg": "ndcg"}


def test_sample_against_pytrec_eval(tmp_path):
    import pytrec_eval  # in the test extra: a missing one fails, never skips

    from evalcli.config import parse_config
    from evalcli.runner import run_config

    qrels, run = _load_trec()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
    per_query = evaluator.evaluate(run)
    cfg = parse_config({
        "task": "ranking", "predictions": str(SAMPLES / "ranking.run"),
        "truth": str(SAMPLES / "ranking.qrels"), "options": {"compat": "trec_eval"},
        "metrics": list(MEASURES.values())}, "test", tmp_path)
    got = {m.id: m.value for m in run_config(cfg).metrics}
    for measure, mid in MEASURES.items():
        want = statistics.mean(v[measure] for v in per_query.values())
        assert got[mid] == pytest.approx(want, abs=1e-12), measure
