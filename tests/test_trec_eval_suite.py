"""trec_eval's own regression suite (``tests/data/trec_eval``, copied from its repository; see
the README there) run through evalcli with ``compat: trec_eval``: every measure evalcli has equals
trec_eval's printed value to its 4 decimals, per query and for ``all``.

The expected numbers are trec_eval's output files, never evalcli's; the measure names map to
evalcli's metric ids below. Options: ``-c`` is ``missing: zero`` (a query of the qrels without
any retrieved document counts 0); without it such a query is dropped (trec_eval's default).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from evalcli import evaluate
from evalcli.config import parse_config
from evalcli.io import Source, scan
from evalcli.io.readers import explain_read_error
from evalcli.metrics.ranking.metrics import COUNTS
from evalcli.metrics.ranking.trec import LEVELS
from evalcli.runner import run_config

DATA = Path(__file__).parent / "data" / "trec_eval"

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
"""trec_eval's default multiples of R (Rprec_mult)."""
MEASURES: dict[str, str] = {
    "map": "map", "Rprec": "r_precision", "recip_rank": "mrr", "ndcg": "ndcg",
    "set_P": "precision", "set_recall": "recall", "set_F": "f1",
    **{f"P_{k}": f"precision@{k}" for k in _CUTS},
    **{f"recall_{k}": f"recall@{k}" for k in _CUTS},
    **{f"ndcg_cut_{k}": f"ndcg@{k}" for k in _CUTS},
    **{f"map_cut_{k}": f"map@{k}" for k in _CUTS},
    **{f"success_{k}": f"hit_rate@{k}" for k in (1, 5, 10)},
    **{name: name for name in COUNTS},
    "bpref": "bpref", "gm_map": "gm_map", "gm_bpref": "gm_bpref", "11pt_avg": "iprec_11pt_avg",
    **{f"iprec_at_recall_{x:.2f}": f"iprec_at_recall[recall={x!r}]" for x in LEVELS},
    "set_map": "set_map", "set_relative_P": "relative_precision", "utility": "utility",
    **{f"relative_P_{k}": f"relative_precision@{k}" for k in _CUTS},
    **{f"Rprec_mult_{m:.2f}": f"rprec_mult[mult={m!r}]" for m in MULTS},
    "binG": "bin_g", "G": "g", "ndcg_rel": "ndcg_rel", "Rndcg": "rndcg",
    "rbp": "rbp", "rbp_resid": "rbp_resid",
    **{f"unj_{k}": f"unjudged_fraction@{k}" for k in (5, 10, 20)}, "infAP": "infap",
}
ALL_ONLY = ("num_q", "gm_map", "gm_bpref")
"""Measures trec_eval prints on its 'all' line only (its per-query lines are empty)."""
EXPECTED_LINES = 4 * len(MEASURES) - 3 * len(ALL_ONLY)
"""Lines of trec_eval's output the suite compares: three queries and 'all' for each measure."""


def trec_eval_output(name: str) -> dict[tuple[str, str], str]:
    """(measure, query or 'all') -> the printed value, from one of trec_eval's output files."""
    out = {}
    for line in (DATA / name).read_text().splitlines():
        measure, query, value = line.split()
        out[(measure, query)] = value
    return out


def evalcli_values(qrels: str, run: str, options: dict[str, Any] | None = None,
                   measures: dict[str, str] = MEASURES, truth_format: str = "trec",
                   **params: Any) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """The mean and per-query values of every metric of ``measures`` (``params``: each
    metric's; ``options``: the task's; ``truth_format``: how the qrels file reads; a query left
    out by a policy has no values). ``qrels`` and ``run`` name files in the fixtures folder,
    or are absolute paths."""
    cfg = parse_config({
        "task": "ranking", "predictions": {"path": str(DATA / run), "format": "trec"},
        "truth": {"path": str(DATA / qrels), "format": truth_format},
        "options": {"compat": "trec_eval", **(options or {})},
        "metrics": [{"metric": m, **params} for m in measures.values()]}, "test", DATA)
    result = run_config(cfg, per_query_values=True)
    ids = dict(zip(measures.values(), (m.id for m in result.metrics), strict=True))
    means = {mid: m.value for mid, m in zip(measures.values(), result.metrics, strict=True)}
    assert result.per_query is not None
    per_query: dict[str, dict[str, float]] = {}
    for row in result.per_query.iter_rows(named=True):
        values = {mid: row[ids[mid]] for mid in measures.values()}
        if any(v is not None for v in values.values()):
            per_query[str(row["query"])] = values
    return means, per_query


def _check(expected: dict[tuple[str, str], str], means: dict[str, float],
           per_query: dict[str, dict[str, float]], queries: set[str],
           measures: dict[str, str] = MEASURES) -> int:
    checked = 0
    wrong = []
    for (measure, query), printed in expected.items():
        if measure not in measures:
            continue
        mid = measures[measure]
        got = means[mid] if query == "all" else per_query.get(query, {}).get(mid, 0.0)
        if query != "all" and query not in queries:
            continue
        count = measure in COUNTS or measure.startswith("prefs_num_prefs")
        shown = f"{got:.0f}" if count else f"{got:.4f}"
        if shown != printed:
            wrong.append(f"{measure} {query}: trec_eval {printed}, evalcli {got:.6f}")
        checked += 1
    assert not wrong, "\n".join(wrong)
    return checked


def test_all_trec_per_query_and_mean():
    expected = trec_eval_output("out.test.aq")
    means, per_query = evalcli_values("qrels.test", "results.test")
    assert set(per_query) == {"301", "302", "303"}
    n = _check(expected, means, per_query, set(per_query))
    assert n == EXPECTED_LINES  # every measure, three queries and all (ALL_ONLY: all)


def test_default_output_and_qrels_with_comments_give_the_same_numbers():
    """trec_eval's quicktest: ``qrels.test.with-comments`` gives ``out.test`` too. One of its
    comments has four tokens, which read as a qrels row would add a phantom query '#'."""
    expected = trec_eval_output("out.test")
    for qrels in ("qrels.test", "qrels.test.with-comments"):
        means, per_query = evalcli_values(qrels, "results.test")
        assert set(per_query) == {"301", "302", "303"}, qrels
        assert _check(expected, means, per_query, set()) >= 5


def test_comment_fixture_with_hashes_in_docnos():
    """trec_eval's quicktest ``qrels.comment.test results.comment.test`` (``out.comment.test``,
    its default measures, 'all' only): MS MARCO v2.1 segment ids hold ``#`` inside
    (``msmarco_v2.1_doc_00_880019750#4_1633802806``), which is no comment; the run has 301
    topics, the qrels 31 (num_q: the queries of both files). ``results.comment.test.gz`` is
    trec_eval's file gzipped (evalcli reads it as it is)."""
    expected = trec_eval_output("out.comment.test")
    assert {m for m, _ in expected} - set(MEASURES) == {"runid"}
    means, per_query = evalcli_values("qrels.comment.test", "results.comment.test.gz")
    assert len(per_query) == int(expected[("num_q", "all")]) == 31
    assert _check(expected, means, per_query, set()) == len(expected) - 1


def test_comments_are_skipped_and_other_lines_kept():
    plain = scan(Source(str(DATA / "qrels.test"), format="trec")).collect()
    commented = scan(Source(str(DATA / "qrels.test.with-comments"), format="trec")).collect()
    # the line after the comment 'comment in docno' is a document whose id holds '#'
    assert "CR#93E-1860" in commented["item"].to_list()
    renamed = commented.with_columns(pl.col("item").str.replace("CR#93E", "CR93E"))
    assert renamed.equals(plain)


def test_truncated_run_with_trailing_words_and_c_option():
    """``results.trunc`` (query 302 missing; lines with 7-9 fields) with ``-c``."""
    lines = (DATA / "results.trunc").read_text().splitlines()
    assert {len(line.split()) for line in lines} == {6, 7, 8, 9}
    run = scan(Source(str(DATA / "results.trunc"), format="trec")).collect()
    assert run.height == len(lines)
    assert run.columns == ["query", "q0", "item", "rank", "score", "tag"]
    long = [i for i, line in enumerate(lines) if len(line.split()) > 6]
    assert all(run["tag"][i] == lines[i].split()[5] for i in long)
    expected = trec_eval_output("out.test.aqc")
    means, per_query = evalcli_values("qrels.test", "results.trunc", missing="zero")
    n = _check(expected, means, per_query, {"301", "302", "303"})
    assert n == EXPECTED_LINES


def test_l2_is_relevance_threshold_2():
    """``out.test.aql``: ``-m all_trec -mrelstring.20 -q -l2`` on ``qrels.rel_level`` (graded
    0-4): with ``relevance_threshold: 2`` every measure equals trec_eval's, per query and
    'all' (the graded ones, G, ndcg, rbp, ..., keep the relevance as the gain). Skipped:
    ``relstring_20`` (a string of relevance digits, not a measure) and ``runid``."""
    expected = trec_eval_output("out.test.aql")
    assert {m for m, _ in expected} - set(MEASURES) == {"relstring_20", "runid"}
    means, per_query = evalcli_values("qrels.rel_level", "results.test",
                                      relevance_threshold=2)
    assert set(per_query) == {"301", "302", "303"}
    n = _check(expected, means, per_query, set(per_query))
    assert n == EXPECTED_LINES
    means, per_query = evalcli_values("qrels.rel_level", "results.test")  # -l1: not these
    with pytest.raises(AssertionError, match="map 301"):
        _check(expected, means, per_query, set(per_query))


MEAS_PARAMS: dict[str, str] = {
    **{f"iprec_at_recall_{x:.2f}": f"iprec_at_recall[recall={x!r}]"
       for x in (0.1, 0.2, 0.25, 0.5, 0.75)},
    **{f"P_{k}": f"precision@{k}" for k in (3, 5, 7)},
    **{f"recall_{k}": f"recall@{k}" for k in (20, 2000)},
    **{f"Rprec_mult_{m:.2f}": f"rprec_mult[mult={m!r}]" for m in (0.2, 0.35, 5.0)},
    "utility_2,-1,0,0": "utility[rel_ret=2,nonrel_ret=-1,rel_missed=0,nonrel_missed=0]",
    **{f"ndcg_cut_{k}": f"ndcg@{k}" for k in (10, 20, 23)},
    **{f"success_{k}": f"hit_rate@{k}" for k in (2, 5, 20)},
    "11pt_avg_.25,.5,.75": "iprec_11pt_avg[levels=0.25|0.5|0.75]",
    "ndcg_1=3,2=9,4=4.5": "ndcg[gains={1:3,2:9,4:4.5}]",
}
"""trec_eval's measures with parameters (``out.test.meas_params``) as evalcli's metrics:
``-miprec_at_recall..10,.20,.25,.75,.50``, ``-m P.5,7,3``, ``-m recall.20,2000``,
``-m Rprec_mult.5.0,0.2,0.35``, ``-mutility.2,-1,0,0``, ``-m 11pt_avg..25,.5,.75``,
``-mndcg.1=3,2=9,4=4.5``, ``-mndcg_cut.10,20,23.4`` (trec_eval reads the cut-off 23.4 as 23)
and ``-msuccess.2,5,20``."""


def test_measures_with_parameters():
    """``out.test.meas_params`` (``-q``, the parameters of :data:`MEAS_PARAMS`, on
    ``qrels.test`` and ``results.test``): every measure equals trec_eval's per query and
    'all'. (``qrels.test`` is binary: the gain table's 3 for level 1 scales DCG and ideal DCG
    alike, so ndcg's line equals plain ndcg's; the graded tests below tell the table apart.)"""
    expected = trec_eval_output("out.test.meas_params")
    assert {m for m, _ in expected} == set(MEAS_PARAMS)
    means, per_query = evalcli_values("qrels.test", "results.test", measures=MEAS_PARAMS)
    n = _check(expected, means, per_query, set(per_query), MEAS_PARAMS)
    assert n == 4 * len(MEAS_PARAMS)


def test_gain_table_and_levels_print_under_trec_evals_names(cli):
    """``-f trec_eval``: ndcg with only a gain table prints as trec_eval's ``ndcg_1=3,2=9,4=4.5``
    line, byte for byte; ``ndcg.1=3,2=9,4=4.5`` is read as that metric."""
    r = cli("compare", str(DATA / "results.test"), str(DATA / "qrels.test"), "--format-in",
            "trec", "-m", "ndcg.1=3,2=9,4=4.5", "-f", "trec_eval")
    assert r.exit_code == 0, r.stderr
    theirs = (DATA / "out.test.meas_params").read_text().splitlines()
    assert r.stdout.splitlines() == [line for line in theirs if line.startswith("ndcg_1")
                                     and "\tall\t" in line]


def _ext_evaluate(qrels: dict[str, dict[str, int]], measure: str,
                  run: dict[str, dict[str, float]]) -> dict[str, float]:
    """trec_eval's ``measure`` per query through pytrec_eval's C extension itself: its Python
    wrapper cuts ``ndcg.1=3,2=9`` to ``ndcg.1`` (a number pattern), which trec_eval rejects."""
    from pytrec_eval_ext import RelevanceEvaluator

    judged = {q: r for q, r in qrels.items() if r}
    out = RelevanceEvaluator(judged, {measure}, relevance_level=1,
                             judged_docs_only_flag=False).evaluate(run)
    return {q: next(iter(v.values())) for q, v in out.items()}


def _ndcg_reference(qrels: dict[str, int], scores: dict[str, float],
                    gains: dict[int, float], k: int | None, log_base: float = 2.0
                    ) -> tuple[float, float]:
    """(DCG@k, NDCG@k) of one query written from trec_eval 10's m_ndcg.c and gain_init.c: the
    list in trec_eval's order (score descending, docno descending); a judged level gains the
    table's value or else its level; unjudged (no qrels row, or < 0) gains 0; the ideal: the
    judged items' positive gains, best first."""
    def gain(rel: int) -> float:
        return 0.0 if rel < 0 else float(gains.get(rel, rel))

    order = sorted(scores, key=lambda d: (scores[d], d), reverse=True)[:k]
    dcg = sum(gain(qrels.get(d, -1)) / math.log(i + 2, log_base) for i, d in enumerate(order))
    ideal = sorted((g for g in map(gain, qrels.values()) if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log(i + 2, log_base) for i, g in enumerate(ideal))
    return dcg, dcg / idcg if idcg > 0 else 0.0


def _graded_trec(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """:func:`random_trec` with relevance -1 to 4 (graded) on the same queries."""
    rng = np.random.default_rng(seed + 100)
    qrels, run = random_trec(seed)
    return {q: {d: int(rng.integers(-1, 5)) if r >= 1 else r for d, r in docs.items()}
            for q, docs in qrels.items()}, run


def _write(tmp_path: Path, qrels: dict[str, dict[str, int]],
           run: dict[str, dict[str, float]]) -> tuple[str, str]:
    pl.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                 schema=["query", "item", "score"], orient="row").write_parquet(
        tmp_path / "run.parquet")
    pl.DataFrame([(q, d, float(r)) for q, docs in qrels.items() for d, r in docs.items()],
                 schema=["query", "item", "relevance"], orient="row").write_parquet(
        tmp_path / "qrels.parquet")
    return str(tmp_path / "run.parquet"), str(tmp_path / "qrels.parquet")


GAIN_TABLES = [
    {1: 3, 2: 9, 4: 4.5},  # trec_eval's own test
    {0: 1, 3: 0},  # judged non-relevant items gain; level 3 gains nothing
    {1: -2, 2: 5.5, 3: 7},  # a negative gain lowers DCG; the ideal leaves it out
]
"""Gain tables whose distinct gains differ by 1 or more: trec_eval orders the levels with a
comparator that truncates the difference of two gains to an int (gain_init.c), so gains closer
than 1 (say 3 and 3.5) may come out of its sort in the wrong order and its ideal DCG is then
not the ideal; evalcli sorts by the gain itself."""


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("gains", GAIN_TABLES)
def test_gain_table_equals_trec_eval_on_graded_random_runs(tmp_path, seed, gains):
    """ndcg[gains=...] per query equals trec_eval's ndcg.1=3,... (pytrec_eval's C code) to
    1e-12, and ndcg@k and dcg@k (no peer has them with a table) a reference written from
    m_ndcg.c, on random graded runs with ties (broken by docno, compat: trec_eval), -1 rows,
    unjudged items and queries without a relevant item."""
    qrels, run = _graded_trec(seed)
    pred, truth = _write(tmp_path, qrels, run)
    table = ",".join(f"{k}={v}" for k, v in gains.items())
    ids = [f"ndcg.{table}", {"metric": "ndcg@5", "gains": gains},
           {"metric": "dcg@10", "gains": gains}]
    cfg = parse_config({"task": "ranking", "predictions": pred, "truth": truth,
                        "options": {"compat": "trec_eval"}, "metrics": ids}, "test", tmp_path)
    result = run_config(cfg, per_query_values=True)
    assert result.per_query is not None
    names = [m.id for m in result.metrics]
    assert names[0] == "ndcg[gains={" + table.replace("=", ":") + "}]"
    ours = {str(row["query"]): row for row in result.per_query.iter_rows(named=True)}
    theirs = _ext_evaluate(qrels, f"ndcg.{table}", run)
    assert set(theirs) == {q for q in run if q in qrels}
    wrong = []
    for q, value in theirs.items():
        _, ndcg5 = _ndcg_reference(qrels[q], run[q], gains, 5)
        dcg10, _ = _ndcg_reference(qrels[q], run[q], gains, 10)
        _, full = _ndcg_reference(qrels[q], run[q], gains, None)
        assert full == pytest.approx(value, abs=1e-12)  # the reference is trec_eval's
        for mid, want in zip(names, (value, ndcg5, dcg10), strict=True):
            if ours[q][mid] is None or abs(ours[q][mid] - want) > 1e-12:
                wrong.append(f"{mid} {q}: reference {want}, evalcli {ours[q][mid]}")
    assert not wrong, "\n".join(wrong)


def test_gain_table_on_graded_qrels_of_the_suite():
    """On the suite's graded ``qrels.rel_level``, the table changes ndcg (so the test above
    is not that of a binary file) and each query's value equals trec_eval's (pytrec_eval)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (DATA / "qrels.rel_level").read_text().splitlines():
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    run: dict[str, dict[str, float]] = {}
    for line in (DATA / "results.test").read_text().splitlines():
        q, _, d, _, s, _ = line.split()[:6]
        run.setdefault(q, {})[d] = float(s)
    measures = {"ndcg": "ndcg", "ndcg_1=3,2=9,4=4.5": "ndcg[gains={1:3,2:9,4:4.5}]"}
    means, per_query = evalcli_values("qrels.rel_level", "results.test", measures=measures)
    theirs = _ext_evaluate(qrels, "ndcg.1=3,2=9,4=4.5", run)
    assert set(per_query) == set(theirs) == {"301", "302", "303"}
    for q, value in theirs.items():
        assert per_query[q]["ndcg[gains={1:3,2:9,4:4.5}]"] == pytest.approx(value, abs=1e-12)
    changed = {q for q, v in theirs.items() if per_query[q]["ndcg"] != pytest.approx(v, abs=1e-4)}
    # 301 has levels 1, 2 and 4; 302 has 3 only (not in the table) and 303 has 2 only (one
    # positive level: the table scales DCG and its ideal alike)
    assert changed == {"301"}
    assert means["ndcg[gains={1:3,2:9,4:4.5}]"] == pytest.approx(
        sum(theirs.values()) / 3, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("levels", [(0.25, 0.5, 0.75), (0.0, 0.2, 0.5, 0.8), (1.0,)])
def test_11pt_avg_levels_equal_trec_eval_on_random_runs(tmp_path, seed, levels):
    """iprec_11pt_avg[levels=...,rounding=v9] per query equals pytrec_eval's 11pt_avg.<levels>
    (its C code, trec_eval 9's (long)(x·R + 0.9)) to 1e-12, on random runs with ties."""
    qrels, run = random_trec(seed)
    pred, truth = _write(tmp_path, qrels, run)
    mid = "11pt_avg[levels=" + "|".join(map(str, levels)) + ",rounding=v9]"
    cfg = parse_config({"task": "ranking", "predictions": pred, "truth": truth,
                        "options": {"compat": "trec_eval"}, "metrics": [mid]}, "test", tmp_path)
    result = run_config(cfg, per_query_values=True)
    assert result.per_query is not None
    (col,) = (m.id for m in result.metrics)
    ours = {str(row["query"]): row[col] for row in result.per_query.iter_rows(named=True)}
    theirs = _ext_evaluate(qrels, "11pt_avg." + ",".join(map(str, levels)), run)
    assert theirs and all(ours[q] == pytest.approx(v, abs=1e-12) for q, v in theirs.items())


def test_without_c_a_query_without_results_is_left_out():
    means, per_query = evalcli_values("qrels.test", "results.trunc")
    assert set(per_query) == {"301", "303"}
    expected = trec_eval_output("out.test.aqc")
    # the mean over the two queries evaluated: (301 + 303) / 2 of -c's per-query values
    for measure in ("map", "P_10", "ndcg", "recip_rank"):
        both = [float(expected[(measure, q)]) for q in ("301", "303")]
        assert means[MEASURES[measure]] == pytest.approx(sum(both) / 2, abs=1e-4)


def test_run_comments_may_follow_blanks(tmp_path):
    run = tmp_path / "r.run"
    run.write_text("# produced by bm25\n301 Q0 d1 1 2.0 t\n   # indented comment\n"
                   "\n301 Q0 d2 2 1.0 t\n")
    assert scan(Source(str(run))).collect()["item"].to_list() == ["d1", "d2"]


def test_a_qrels_comment_is_only_in_the_first_column(tmp_path):
    """As trec_eval reads qrels: '#' starts a comment in the first column; elsewhere the line is
    data (a 4-field line whose query is '#x' is a qrels row; a 5-field one is an error)."""
    q = tmp_path / "q.qrels"
    q.write_text("301 0 d1 1\n #x 0 d2 1\n")
    assert scan(Source(str(q))).collect()["query"].to_list() == ["301", "#x"]
    q.write_text("301 0 d1 1\n # pass 2 1 x\n")
    with pytest.raises(pl.exceptions.PolarsError) as err:
        scan(Source(str(q))).collect()
    explained = explain_read_error([Source(str(q))], err.value)
    assert explained is not None and "line 2 has 5 fields, not 4" in str(explained)


@pytest.mark.parametrize(("text", "message"), [
    ("301 Q0 d1 1 2.0 t\n301 Q0 d2 2 1.0\n", r"line 2 has 5 fields, not at least 6"),
    ("301 Q0 d1 1 2.0 t\n301 Q0 d2 2 high t extra\n",
     r"line 2, field 5 \(score\) holds 'high'"),
    ("301 0 d1 1\n301 0 d2 1 extra\n", r"line 2 has 5 fields, not 4"),
])
def test_lines_past_the_head_are_held_to_the_same_rule(tmp_path, text, message):
    """The detection and the scan agree on every line: a line of the wrong length anywhere in
    the file is an error naming it, never silently cut or padded."""
    path = tmp_path / "x.trec"
    path.write_text(text)
    lf = scan(Source(str(path)))
    with pytest.raises(pl.exceptions.PolarsError) as err:
        lf.collect()
    explained = explain_read_error([Source(str(path))], err.value)
    assert explained is not None and re.search(message, str(explained)), explained


def test_trec_eval_output_format_prints_trec_evals_lines(cli, tmp_path):
    """``-f trec_eval`` (and ``-o x.treceval``) with per-query values prints trec_eval -q's lines
    for every measure evalcli has: each line is, byte for byte, a line of trec_eval's output."""
    names = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "P_5",
             "P.100", "recall_10", "ndcg", "ndcg_cut.10", "map_cut_10", "success_5", "set_F",
             "bpref", "gm_map", "gm_bpref", "iprec_at_recall_0.10", "iprec_at_recall.0.5",
             "11pt_avg", "Rprec_mult_0.20", "relative_P_10", "set_relative_P", "set_map",
             "utility", "binG", "G", "ndcg_rel", "Rndcg", "rbp", "rbp_resid", "unj_5", "unj.20",
             "infAP"]
    args = ["compare", str(DATA / "results.test"), str(DATA / "qrels.test"), "--format-in",
            "trec", "--per-query", str(tmp_path / "pq.csv"), "-o", str(tmp_path / "r.treceval"),
            "-f", "trec_eval"]
    for name in names:
        args += ["-m", name]
    r = cli(*args)
    assert r.exit_code == 0, r.stderr
    ours = r.stdout.splitlines()
    assert (tmp_path / "r.treceval").read_text().splitlines() == ours
    theirs = set((DATA / "out.test.aq").read_text().splitlines())
    assert len(ours) == 3 * (len(names) - len(ALL_ONLY)) + len(names)  # ALL_ONLY: 'all'
    assert [line for line in ours if line not in theirs] == []
    assert ours[-len(names):][0].startswith("num_q                 \tall\t3")


# --------------------------------------------------------------------------- random runs

RANDOM_MEASURES: dict[str, str] = {
    "bpref": "bpref", "11pt_avg": "iprec_11pt_avg[rounding=v9]",
    **{f"iprec_at_recall_{x:.2f}": f"iprec_at_recall[recall={x!r},rounding=v9]" for x in LEVELS},
    "set_map": "set_map", "set_relative_P": "relative_precision", "utility": "utility",
    **{f"relative_P_{k}": f"relative_precision@{k}" for k in _CUTS},
    **{f"Rprec_mult_{m:.2f}": f"rprec_mult[mult={m!r}]" for m in MULTS},
    "binG": "bin_g", "G": "g", "ndcg_rel": "ndcg_rel", "Rndcg": "rndcg", "infAP": "infap",
    # and every other measure of the suite's that pytrec_eval has (not rbp, rbp_resid, unj_k)
    **{name: mid for name, mid in MEASURES.items()
       if name not in ("num_q", "gm_map", "gm_bpref") and "iprec" not in name
       and name not in ("11pt_avg", "bpref") and not name.startswith(("rbp", "unj"))},
}
"""pytrec_eval (0.5.11) copies trec_eval 9's recall levels, (long)(x·R + 0.9), where trec_eval
10 rounds (its regression suite above checks that): compared at rounding=v9."""
GEOMETRIC = {"gm_map": "gm_map", "gm_bpref": "gm_bpref"}
"""pytrec_eval gives a geometric mean's per-query term, log max(value, 0.00001)."""


def random_trec(seed: int, queries: int = 30
                ) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random qrels (relevance -1 to 2, -1: in the pool but unjudged for trec_eval) and run
    (scores on a coarse grid: many ties), with queries of one file only and queries without
    a relevant item."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(queries):
        docs = [f"d{i:02d}" for i in range(int(rng.integers(3, 40)))]
        if q % 10 != 9:  # a query of the run only
            judged = rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False)
            top = 0 if q % 7 == 3 else 2  # q % 7 == 3: nothing relevant
            qrels[f"q{q}"] = {str(d): int(rng.integers(-1, top + 1)) for d in judged}
        if q % 10 != 8:  # a query of the qrels only
            got = rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False)
            run[f"q{q}"] = {str(d): float(rng.integers(0, 8)) / 4 for d in got}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_runs_equal_pytrec_eval_per_query(tmp_path, seed):
    """Every query's value equals trec_eval's (pytrec_eval, its C code) to 1e-12: ties broken by
    docno descending (compat: trec_eval), judged -1 rows, queries without a relevant item."""
    import pytrec_eval

    qrels, run = random_trec(seed)
    _write(tmp_path, qrels, run)
    ids = [*RANDOM_MEASURES.values(), *GEOMETRIC.values()]
    cfg = parse_config({
        "task": "ranking", "predictions": str(tmp_path / "run.parquet"),
        "truth": str(tmp_path / "qrels.parquet"), "options": {"compat": "trec_eval"},
        "metrics": ids}, "test", tmp_path)
    result = run_config(cfg, per_query_values=True)
    assert result.per_query is not None
    col = dict(zip(ids, (m.id for m in result.metrics), strict=True))  # recall=0.0: id '0'
    ours = {str(row["query"]): {mid: row[col[mid]] for mid in ids}
            for row in result.per_query.iter_rows(named=True)}
    means = {mid: m.value for mid, m in zip(ids, result.metrics, strict=True)}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {
        "bpref", "iprec_at_recall", "11pt_avg", "set_map", "set_relative_P", "utility",
        "relative_P", "Rprec_mult", "binG", "G", "ndcg_rel", "Rndcg",
        "infAP", *GEOMETRIC, "map", "Rprec", "recip_rank", "ndcg", "P", "recall", "ndcg_cut",
        "map_cut", "success", "set_P", "set_recall", "set_F", "num_ret", "num_rel",
        "num_rel_ret", "num_nonrel_judged_ret"}).evaluate(run)
    assert set(theirs) == {q for q in run if q in qrels}
    assert any(not any(r >= 1 for r in qrels[q].values()) for q in theirs)
    wrong = []
    for q, values in theirs.items():
        for measure, mid in RANDOM_MEASURES.items():
            if abs(ours[q][mid] - values[measure]) > 1e-12:
                wrong.append(f"{measure} {q}: trec_eval {values[measure]}, evalcli {ours[q][mid]}")
        for measure, mid in GEOMETRIC.items():
            if abs(math.log(max(ours[q][mid], 1e-5)) - values[measure]) > 1e-12:
                wrong.append(f"{measure} {q}: trec_eval {values[measure]}, evalcli {ours[q][mid]}")
    for measure, mid in GEOMETRIC.items():
        mean = math.exp(sum(v[measure] for v in theirs.values()) / len(theirs))
        assert means[mid] == pytest.approx(mean, rel=1e-12), measure
    assert not wrong, "\n".join(wrong)


def _rbp_unj_reference(qrels: dict[str, int], scores: dict[str, float], p: float
                       ) -> dict[str, float]:
    """rbp, rbp_resid and unj_5/10/20 of one query, written from trec_eval 10's m_rbp.c,
    m_rbp_resid.c and m_unjudged.c (pytrec_eval has none of them): the list in trec_eval's
    order (score descending, docno descending); gains the relevance levels, divided by the
    query's highest judged level when it is above 1; unjudged: not in the qrels or < 0."""
    order = sorted(scores, key=lambda d: (scores[d], d), reverse=True)
    top = max(r for r in qrels.values() if r >= 0) if any(r >= 0 for r in qrels.values()) else 0
    scale = top if top > 1 else 1
    rbp = resid = 0.0
    unjudged = 0
    weight = 1.0
    for d in order:
        rel = qrels.get(d, -1)
        if rel > 0:
            rbp += rel / scale * weight
        if rel < 0:
            unjudged += 1
            resid += weight
        weight *= p
    out = {"rbp": (1 - p) * rbp, "rbp_resid": weight + (1 - p) * resid if unjudged else 0.0}
    for k in (5, 10, 20):
        out[f"unj_{k}"] = sum(qrels.get(d, -1) < 0 for d in order[:k]) / k
    return out


@pytest.mark.parametrize(("seed", "p"), [(0, 0.9), (1, 0.9), (2, 0.5)])
def test_rbp_and_unj_equal_a_reference_written_from_trec_evals_code(tmp_path, seed, p):
    """Per query, to 1e-12, on random runs with ties (compat: trec_eval breaks them by docno
    descending), relevance -1 to 2 (levels above 1: the gains are scaled) and queries of one
    file only (left out, as trec_eval)."""
    qrels, run = random_trec(seed)
    _write(tmp_path, qrels, run)
    ids = {"rbp": f"rbp[p={p!r}]", "rbp_resid": f"rbp_resid[p={p!r}]",
           **{f"unj_{k}": f"unjudged_fraction@{k}" for k in (5, 10, 20)}}
    cfg = parse_config({
        "task": "ranking", "predictions": str(tmp_path / "run.parquet"),
        "truth": str(tmp_path / "qrels.parquet"), "options": {"compat": "trec_eval"},
        "metrics": list(ids.values())}, "test", tmp_path)
    result = run_config(cfg, per_query_values=True)
    assert result.per_query is not None
    col = dict(zip(ids.values(), (m.id for m in result.metrics), strict=True))
    ours = {str(row["query"]): row for row in result.per_query.iter_rows(named=True)}
    wrong = []
    for q in run.keys() & qrels.keys():
        want = _rbp_unj_reference(qrels[q], run[q], p)
        for measure, mid in ids.items():
            if abs(ours[q][col[mid]] - want[measure]) > 1e-12:
                wrong.append(f"{measure} {q}: reference {want[measure]}, evalcli "
                             f"{ours[q][col[mid]]}")
    assert not wrong, "\n".join(wrong)
    assert any(v["rbp_resid"] for q in run.keys() & qrels.keys()
               for v in [_rbp_unj_reference(qrels[q], run[q], p)])


def test_rbp_and_unj_with_ties_averaged_are_the_mean_over_tie_orders():
    """ties=average: rbp, rbp_resid and unj@k are their expectations over every order of the
    tied items (the reference on each order, averaged)."""
    qrels = {"a": 1, "b": 0, "c": 2, "d": 0, "e": -1, "f": 1, "h": 2, "z": 1}
    scores = {"a": 2.0, "b": 2.0, "c": 2.0, "x": 2.0, "e": 1.0, "f": 1.0, "g": 1.0, "h": 0.0,
              "y": 3.0, "z": 3.0}  # the group at 2.0 straddles the cut-off 5
    groups = [sorted(d for d in scores if scores[d] == v) for v in sorted(set(scores.values()))]
    values = []
    for perm in itertools.product(*(itertools.permutations(g) for g in groups)):
        order = {d: float(i) for i, d in enumerate(d for g in perm for d in g)}
        values.append(_rbp_unj_reference(qrels, order, 0.8))
    mids = {"rbp": "rbp[p=0.8]", "rbp_resid": "rbp_resid[p=0.8]", "unj_5": "unj_5"}
    got = evaluate({"task": "ranking", "metrics": list(mids.values())},
                   predictions={"query": ["q"] * len(scores), "item": list(scores),
                                "score": list(scores.values())},
                   truth={"query": ["q"] * len(qrels), "item": list(qrels),
                          "relevance": [float(r) for r in qrels.values()]}).values()
    for measure, mid in mids.items():
        mean = sum(v[measure] for v in values) / len(values)
        key = "unjudged_fraction@5" if measure == "unj_5" else mid
        assert got[key] == pytest.approx(mean, rel=1e-12), measure
        assert len({v[measure] for v in values}) > 1, measure  # the order matters


def test_bpref_with_ties_averaged_is_the_mean_over_tie_orders():
    """ties=average: bpref is its expectation over every order of the tied items, trec_eval's
    bpref (pytrec_eval) on each order, averaged; ties=id is trec_eval's own order."""
    import pytrec_eval

    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 0, "e": 0, "f": 1, "g": -1, "h": 2}}
    scores = {"a": 2.0, "b": 2.0, "c": 2.0, "d": 2.0, "x": 2.0, "e": 1.0, "f": 1.0, "g": 1.0,
              "h": 0.0, "y": 3.0}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"bpref"})
    groups = [sorted(d for d in scores if scores[d] == v) for v in sorted(set(scores.values()))]
    values = []
    for perm in itertools.product(*(itertools.permutations(g) for g in groups)):
        order = {d: float(i) for i, d in enumerate(d for g in perm for d in g)}
        values.append(evaluator.evaluate({"q": order})["q"]["bpref"])
    predictions = {"query": ["q"] * len(scores), "item": list(scores),
                   "score": list(scores.values())}
    truth = {"query": ["q"] * 8, "item": list(qrels["q"]),
             "relevance": [float(r) for r in qrels["q"].values()]}
    got = evaluate({"task": "ranking", "metrics": ["bpref", {"metric": "bpref", "ties": "id"}]},
                   predictions=predictions, truth=truth).values()
    assert got["bpref"] == pytest.approx(sum(values) / len(values), rel=1e-12)
    assert got["bpref[ties=id]"] == evaluator.evaluate({"q": scores})["q"]["bpref"]
    assert len(set(values)) > 3  # the order matters


def test_max_per_query_is_trec_evals_M():
    """``-m all_trec -q -c -M100`` on ``results.trunc``: ``max_per_query: 100``."""
    expected = trec_eval_output("out.test.aqcM")
    means, per_query = evalcli_values("qrels.test", "results.trunc", {"max_per_query": 100},
                                      missing="zero")
    assert expected[("num_ret", "301")] == "100"
    n = _check(expected, means, per_query, {"301", "302", "303"})
    assert n == EXPECTED_LINES


def _random_trec(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    """30 queries: runs of 40 documents with tied scores, qrels judging about half of them
    (and documents the run does not retrieve), graded 0-2."""
    import numpy as np

    rng = np.random.default_rng(seed)
    run, qrels = [], []
    for q in range(30):
        docs = rng.choice(80, size=40, replace=False)
        scores = rng.integers(0, 12, size=40) / 4.0
        run += [f"q{q} Q0 d{d} {i + 1} {s} r"
                for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
        judged = rng.choice(80, size=30, replace=False)
        qrels += [f"q{q} 0 d{d} {rng.integers(0, 3)}" for d in judged]
    (tmp_path / "r.run").write_text("\n".join(run) + "\n")
    (tmp_path / "q.qrels").write_text("\n".join(qrels) + "\n")
    return tmp_path / "r.run", tmp_path / "q.qrels"


@pytest.mark.parametrize("cap", [None, 7])
def test_judged_only_and_max_per_query_equal_pytrec_eval(tmp_path, cap):
    """``judged_only`` is trec_eval's -J (pytrec_eval's judged_docs_only_flag), applied after
    ``max_per_query`` (-M, which pytrec_eval lacks: its run is cut to the first N by trec_eval's
    order by hand here), on random runs with tied scores."""
    import pytrec_eval

    run_path, qrels_path = _random_trec(tmp_path, 3)
    run: dict[str, dict[str, float]] = {}
    for line in run_path.read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
    if cap is not None:  # trec_eval's order: score descending, then docno descending
        run = {q: dict(sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:cap])
               for q, docs in run.items()}
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_path.read_text().splitlines():
        q, _, d, rel = line.split()
        qrels.setdefault(q, {})[d] = int(rel)
    measures = {"map": "map", "P_5": "precision@5", "ndcg_cut_10": "ndcg@10",
                "recip_rank": "mrr", "num_ret": "num_ret", "num_rel_ret": "num_rel_ret"}
    want = pytrec_eval.RelevanceEvaluator(qrels, set(measures), judged_docs_only_flag=True
                                          ).evaluate(run)
    options: dict[str, Any] = {"compat": "trec_eval", "judged_only": True}
    if cap is not None:
        options["max_per_query"] = cap
    cfg = parse_config({
        "task": "ranking", "predictions": str(run_path), "truth": str(qrels_path),
        "options": options, "metrics": list(measures.values())}, "test", tmp_path)
    result = run_config(cfg, per_query_values=True)
    assert result.per_query is not None
    got = {str(row["query"]): row for row in result.per_query.iter_rows(named=True)}
    for q, values in want.items():
        for measure, mid in measures.items():
            assert got[q][mid] == pytest.approx(values[measure], abs=1e-12), (q, measure)
    unjudged = sum(1 for q, docs in run.items() for d in docs if d not in qrels.get(q, {}))
    assert unjudged > 0  # the flag had something to remove


def test_a_negative_relevance_is_not_a_judgment():
    """TREC's -1 ("not judged for this purpose"): trec_eval counts such a retrieved document
    neither relevant nor judged non-relevant."""
    import pytrec_eval

    from evalcli import evaluate

    qrels = {"1": {"a": 1, "b": -1, "c": 0}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    measures = ("num_nonrel_judged_ret", "num_rel_ret", "num_ret")
    want = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)["1"]
    got = evaluate({"task": "ranking", "metrics": list(measures),
                    "options": {"compat": "trec_eval"}},
                   predictions={"query": ["1"] * 3, "item": ["a", "b", "c"],
                                "score": [3.0, 2.0, 1.0]},
                   truth={"query": ["1"] * 3, "item": ["a", "b", "c"],
                          "relevance": [1, -1, 0]}).values()
    assert got == {m: want[m] for m in measures} == {
        "num_nonrel_judged_ret": 1.0, "num_rel_ret": 1.0, "num_ret": 3.0}


def test_trec_evals_m_option_spelling_works_as_metric_ids(cli):
    """`-m P.5,10 -m map -m ndcg_cut.10`, as a trec_eval user types them: the same lines as
    trec_eval prints."""
    r = cli("compare", str(DATA / "results.test"), str(DATA / "qrels.test"), "--format-in",
            "trec", "-m", "P.5,10", "-m", "map", "-m", "ndcg_cut.10", "-f", "trec_eval")
    assert r.exit_code == 0, r.stderr
    theirs = (DATA / "out.test.a").read_text().splitlines()
    assert r.stdout.splitlines() == [
        next(line for line in theirs if line.startswith(name + " "))
        for name in ("P_5", "P_10", "map", "ndcg_cut_10")]


def test_judged_only_drops_a_negative_relevance_as_trec_eval():
    """-J with TREC's -1 judgments: trec_eval leaves such a document out as unjudged."""
    import pytrec_eval

    from evalcli import evaluate

    qrels = {"1": {"a": 1, "b": -1, "c": 0, "d": 1}}
    run = {"1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    measures = {"map": "map", "P_5": "precision@5", "num_ret": "num_ret",
                "recip_rank": "mrr"}
    want = pytrec_eval.RelevanceEvaluator(qrels, set(measures), judged_docs_only_flag=True
                                          ).evaluate(run)["1"]
    got = evaluate({"task": "ranking", "metrics": list(measures.values()),
                    "options": {"compat": "trec_eval", "judged_only": True}},
                   predictions={"query": ["1"] * 4, "item": ["a", "b", "c", "d"],
                                "score": [4.0, 3.0, 2.0, 1.0]},
                   truth={"query": ["1"] * 4, "item": ["a", "b", "c", "d"],
                          "relevance": [1, -1, 0, 1]}).values()
    assert want["num_ret"] == 3.0
    assert got == {mid: pytest.approx(want[m], abs=1e-12) for m, mid in measures.items()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_judged_only_random_runs_equal_pytrec_eval_per_query(tmp_path, seed):
    """-J on :func:`random_trec` for every measure pytrec_eval has, per query and ``all``,
    including a query whose retrieved documents are all unjudged: trec_eval still evaluates it
    (it has results) with nothing retrieved, so it counts 0 where evalcli must not drop it."""
    import pytrec_eval

    qrels, run = random_trec(seed)
    qrels["qJ"] = {"x1": 1, "x2": 0}
    run["qJ"] = {"y1": 2.0, "y2": 1.0}  # retrieved, none judged
    _write(tmp_path, qrels, run)
    ids = [*RANDOM_MEASURES.values(), *GEOMETRIC.values()]
    cfg = parse_config({
        "task": "ranking", "predictions": str(tmp_path / "run.parquet"),
        "truth": str(tmp_path / "qrels.parquet"),
        "options": {"compat": "trec_eval", "judged_only": True}, "metrics": ids}, "test",
        tmp_path)
    result = run_config(cfg, per_query_values=True)
    assert result.per_query is not None
    col = dict(zip(ids, (m.id for m in result.metrics), strict=True))
    ours = {str(row["query"]): {mid: row[col[mid]] for mid in ids}
            for row in result.per_query.iter_rows(named=True)}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {
        "bpref", "iprec_at_recall", "11pt_avg", "set_map", "set_relative_P", "utility",
        "relative_P", "Rprec_mult", "binG", "G", "ndcg_rel", "Rndcg",
        "infAP", *GEOMETRIC, "map", "Rprec", "recip_rank", "ndcg", "P", "recall", "ndcg_cut",
        "map_cut", "success", "set_P", "set_recall", "set_F", "num_ret", "num_rel",
        "num_rel_ret", "num_nonrel_judged_ret"}, judged_docs_only_flag=True).evaluate(run)
    assert theirs["qJ"]["num_ret"] == 0 and "qJ" in ours
    wrong, nan = [], set()
    for q, values in theirs.items():
        for measure, mid in RANDOM_MEASURES.items():
            want = values[measure]
            if math.isnan(want):  # 0/0 in trec_eval's m_iprec_at_recall.c: nothing retrieved
                nan.add(measure)
                want = 0.0
            if ours[q][mid] is None or abs(ours[q][mid] - want) > 1e-12:
                wrong.append(f"{measure} {q}: trec_eval {want}, evalcli {ours[q][mid]}")
    means = {mid: m.value for mid, m in zip(ids, result.metrics, strict=True)}
    for measure, mid in RANDOM_MEASURES.items():
        total = sum(0.0 if math.isnan(v[measure]) else v[measure] for v in theirs.values())
        want = total if mid in COUNTS else total / len(theirs)
        if abs(means[mid] - want) > 1e-12:
            wrong.append(f"{measure} all: trec_eval {want}, evalcli {means[mid]}")
    assert not wrong, "\n".join(wrong[:40])
    # the one documented difference (docs/ranking.md): where trec_eval divides 0 by 0, 0
    assert all(m == "11pt_avg" or m.startswith("iprec_at_recall_") for m in nan), nan
    assert "iprec_at_recall_0.00" in nan


ZSCORED = {"Z" + name: mid for name, mid in MEASURES.items()}
"""trec_eval -Z prints each measure's name after a 'Z'."""


def test_zscores_file_is_trec_evals_Z():
    """``-q -m all_trec -Z zscores_file`` (``out.test.aqZ``): every measure's z-scores per
    query and 'all' equal trec_eval's to 4 decimals: means of z-scores, sums for the counts
    (``Znum_ret all`` is -6.3332), ``num_q`` as it is (3.0000), and ``gm_map``/``gm_bpref``,
    which the file has no line for: -1000000 per query, exp of their mean, 0.0000."""
    expected = trec_eval_output("out.test.aqZ")
    assert {m for m, _ in expected} - set(ZSCORED) == {"relstring", "runid"}
    means, per_query = evalcli_values("qrels.test", "results.test",
                                      {"zscores_file": str(DATA / "zscores_file")},
                                      measures=ZSCORED)
    n = _check(expected, means, per_query, set(per_query), ZSCORED)
    assert n == EXPECTED_LINES
    assert expected[("Znum_ret", "all")] == "-6.3332"  # a sum, not a mean
    assert per_query["301"]["gm_map"] == -1_000_000.0


def test_zscores_print_as_trec_eval_prints_them():
    """The report in trec_eval's format: 'Z' before every name, counts with 4 decimals."""
    from evalcli.report.treceval import render

    wanted = {"Znum_q", "Znum_ret", "Zmap", "ZP_5", "Zgm_map", "Ziprec_at_recall_0.10"}
    cfg = parse_config({
        "task": "ranking", "predictions": {"path": str(DATA / "results.test"), "format": "trec"},
        "truth": {"path": str(DATA / "qrels.test"), "format": "trec"},
        "options": {"compat": "trec_eval", "zscores_file": str(DATA / "zscores_file")},
        "metrics": [ZSCORED[m] for m in sorted(wanted)]}, "test", DATA)
    ours = render(run_config(cfg, per_query_values=True)).splitlines()
    theirs = [line for line in (DATA / "out.test.aqZ").read_text().splitlines()
              if line.split()[0] in wanted]
    assert sorted(ours) == sorted(theirs)


def test_zscore_rules_on_a_worked_example(tmp_path):
    """trec_eval's convert_zscores.c by hand: (v − mean)/stddev; stddev 0: 0 when v is the
    mean, else −1000000; no line for the query or the measure: −1000000; counts summed."""
    (tmp_path / "z").write_text("a P_2 0.25 0.5\nb P_2 0.5 0\na num_ret 1 0\n"
                                "b num_ret 2 0\nb recip_rank 0.5 0.25\n")
    result = evaluate({"task": "ranking", "metrics": ["precision@2", "num_ret", "mrr"],
                       "options": {"compat": "trec_eval",
                                   "zscores_file": str(tmp_path / "z")}},
                      predictions={"query": ["a", "a", "b", "b"], "item": ["x", "y", "x", "y"],
                                   "score": [2.0, 1.0, 2.0, 1.0]},
                      truth={"query": ["a", "b"], "item": ["x", "y"], "relevance": [1, 1]})
    # a: P_2 = 0.5 -> (0.5 - 0.25)/0.5 = 0.5; num_ret 2 vs 1 (sd 0) -> -1e6; no recip_rank
    # line (1.0) -> -1e6.  b: P_2 = 0.5 = mean (sd 0) -> 0; num_ret 2 = mean -> 0;
    # recip_rank 0.5 -> 0
    assert result.values() == {"precision@2": 0.25, "num_ret": -1_000_000.0,
                               "mrr": -500_000.0}
    assert "z-scores" in result.metrics[0].notes[-1]


def test_zscores_file_errors(tmp_path, cli):
    """A malformed line is one message naming the file and the line (exit 2); z-scores per
    segment are refused (the file's means are the whole run's)."""
    (tmp_path / "z").write_text("301 map 0.1 0.2\n301 P_5 x 0.3\n")
    config = {"task": "ranking",
              "predictions": {"path": str(DATA / "results.test"), "format": "trec"},
              "truth": {"path": str(DATA / "qrels.test"), "format": "trec"},
              "options": {"compat": "trec_eval", "zscores_file": str(tmp_path / "z")},
              "metrics": ["map"]}
    (tmp_path / "c.yaml").write_text(json.dumps(config))
    r = cli("run", str(tmp_path / "c.yaml"))
    assert r.exit_code == 2, r.stderr
    assert "line 2 is not 'qid measure mean stddev'" in r.stderr
    assert str(tmp_path / "z") in r.stderr
    (tmp_path / "z").write_text("301 map 0.1 0.2\n")
    (tmp_path / "c.yaml").write_text(json.dumps({**config, "group_by": ["tag"]}))
    r = cli("run", str(tmp_path / "c.yaml"))
    assert r.exit_code == 2, r.stderr
    assert "not per segment" in r.stderr


PREFS: dict[str, str] = {
    **{f"prefs_num_prefs_{m}": f"num_prefs[count={m}]" for m in ("poss", "ful", "ful_ret")},
    **{f"prefs_{m}": f"prefs[measure={m}]" for m in (
        "simp", "pair", "avgjg", "avgjg_Rnonrel", "simp_ret", "pair_ret", "avgjg_ret",
        "avgjg_Rnonrel_ret", "simp_imp", "pair_imp", "avgjg_imp")},
    "num_q": "num_q",
}
"""trec_eval's -m all_prefs measures as evalcli's metrics."""


def test_qrels_prefs_is_trec_evals():
    """``-m all_prefs -q -R qrels_prefs qrels.test results.test`` (``out.test.qrels_prefs``):
    the qrels read as preferences (one judgment group per query, the levels its classes);
    every measure equals trec_eval's per query and 'all' (counts exactly: query 301 has
    584916 preferences), avgjg_Rnonrel's recount with the first R non-relevant documents
    included."""
    expected = trec_eval_output("out.test.qrels_prefs")
    assert {m for m, _ in expected} - set(PREFS) == {"runid"}
    means, per_query = evalcli_values("qrels.test", "results.test", measures=PREFS)
    assert _check(expected, means, per_query, set(per_query), PREFS) == 4 * len(PREFS) - 3


@pytest.mark.parametrize("prefs", ["prefs.test", "prefs.comment.test"])
def test_prefs_file_is_trec_evals_R_prefs(prefs):
    """``-m all_prefs -q -R prefs`` on trec_eval's preference fixtures (``out.test.prefs``;
    ``prefs.comment.test`` is ``prefs.test`` with comments and a docno holding '#'): judgment
    groups of one sub-group (classes: 1.EC.AB, 21.EC.cb, ...) and of several, closed under
    transitivity (11.PA=1, 40.PA.tran, ...), conflicting judgment groups of one query
    (24.EC.mg), queries without preferences (5.EC.noPrf) or without retrieved documents
    (4.EC.noRet), more non-relevant than relevant documents (avgjg_Rnonrel's recount, in
    classes and in sub-groups): every measure, per query and 'all', equals trec_eval's."""
    expected = trec_eval_output("out.test.prefs")
    assert {m for m, _ in expected} - set(PREFS) == {"runid"}
    means, per_query = evalcli_values(prefs, "prefs.results.test",
                                      {"prefs_file": str(DATA / prefs)}, PREFS, "trec_prefs")
    assert len(per_query) == int(expected[("num_q", "all")]) == 24
    n = _check(expected, means, per_query, set(per_query), PREFS)
    assert n == 24 * (len(PREFS) - 1) + len(PREFS)


def test_prefs_file_errors(tmp_path):
    """A malformed line of a preferences file, and conflicting preferences in one judgment
    group (trec_eval aborts), are one message each."""
    from evalcli.errors import UserError

    (tmp_path / "r").write_text("q Q0 d1 1 2.0 t\nq Q0 d2 2 1.0 t\n")

    def run(prefs: str) -> None:
        (tmp_path / "p").write_text(prefs)
        evaluate({"task": "ranking", "metrics": ["prefs"],
                  "predictions": {"path": str(tmp_path / "r"), "format": "trec"},
                  "truth": {"path": str(tmp_path / "p"), "format": "trec_prefs"},
                  "options": {"compat": "trec_eval", "prefs_file": str(tmp_path / "p")}})

    with pytest.raises(UserError, match="line 2 is not 'qid jg jsg docno level'"):
        run("q a s d1 1\nq a s d2\n")
    with pytest.raises(UserError, match="conflict"):  # d1 > d2 in s1, d2 > d3 > d1 in s2, s3
        run("q a s1 d1 2\nq a s1 d2 1\nq a s2 d2 2\nq a s2 d3 1\nq a s3 d3 2\nq a s3 d1 1\n")


QRELS_JG: dict[str, str] = {
    "map_avgjg": "map_avgjg",
    **{f"P_avgjg_{k}": f"precision_avgjg@{k}" for k in _CUTS},
    **{f"Rprec_mult_avgjg_{m:.2f}": f"rprec_mult_avgjg[mult={m!r}]" for m in MULTS},
    "num_q": "num_q",
}
"""trec_eval's -m qrels_jg measures as evalcli's metrics."""


@pytest.mark.parametrize("qrels", ["qrels.123", "qrels.comments.123"])
def test_qrels_jg_file_is_trec_evals_R_qrels_jg(qrels):
    """``-m qrels_jg -q -R qrels_jg`` on ``qrels.123`` (three judgment groups per query, 0, 1
    and 2, judging the same documents differently; ``qrels.comments.123`` has comments and a
    docno holding '#'), ``out.test.qrels_jg``: every measure per query and 'all'."""
    expected = trec_eval_output("out.test.qrels_jg")
    assert {m for m, _ in expected} - set(QRELS_JG) == {"runid"}
    means, per_query = evalcli_values(qrels, "results.test",
                                      {"qrels_jg_file": str(DATA / qrels)}, QRELS_JG,
                                      "trec_qrels_jg")
    assert set(per_query) == {"301", "302", "303"}
    n = _check(expected, means, per_query, set(per_query), QRELS_JG)
    assert n == 4 * len(QRELS_JG) - 3


def _avgjg_reference(groups: dict[str, dict[str, int]], scores: dict[str, float],
                     ks: tuple[int, ...], mults: tuple[float, ...]) -> dict[str, float]:
    """map_avgjg, P_avgjg_k and Rprec_mult_avgjg of one query written from trec_eval's
    m_map_avgjg.c, m_P_avgjg.c and m_Rprec_mult_avgjg.c: each judgment group's measure over
    the run in trec_eval's order (score descending, docno descending), averaged over groups."""
    order = sorted(scores, key=lambda d: (scores[d], d), reverse=True)
    out: dict[str, float] = {}
    for g in groups.values():
        rel = [g.get(d, -1) >= 1 for d in order]
        big_r = sum(v >= 1 for v in g.values())
        hits, ap = 0, 0.0
        for i, r in enumerate(rel):
            if r:
                hits += 1
                ap += hits / (i + 1)
        out["map"] = out.get("map", 0.0) + (ap / big_r if hits else 0.0)
        for k in ks:
            out[f"P_{k}"] = out.get(f"P_{k}", 0.0) + sum(rel[:k]) / k
        for m in mults:
            cut = int(m * big_r + 0.9)
            out[f"R_{m}"] = out.get(f"R_{m}", 0.0) + (sum(rel[:cut]) / cut if cut else 0.0)
    return {name: v / len(groups) for name, v in out.items()}


@pytest.mark.parametrize("seed", [0, 1])
def test_judgment_groups_on_random_runs_equal_a_reference(tmp_path, seed):
    """Random runs with tied scores and 1-4 judgment groups per query judging overlapping
    documents (some none relevant): per query, to 1e-12, against the reference above."""
    rng = np.random.default_rng(seed)
    run_lines, qrels_lines = [], []
    run: dict[str, dict[str, float]] = {}
    groups: dict[str, dict[str, dict[str, int]]] = {}
    for q in range(12):
        docs = rng.choice(40, size=20, replace=False)
        run[f"q{q}"] = {f"d{d}": float(rng.integers(0, 6)) for d in docs}
        run_lines += [f"q{q} Q0 {d} 0 {s} r" for d, s in run[f"q{q}"].items()]
        for g in range(int(rng.integers(1, 5))):
            judged = rng.choice(40, size=15, replace=False)
            groups.setdefault(f"q{q}", {})[str(g)] = {
                f"d{d}": int(rng.integers(-1, 3)) * int(g != 3) for d in judged}
            qrels_lines += [f"q{q} {g} {d} {r}" for d, r in groups[f"q{q}"][str(g)].items()]
    (tmp_path / "run").write_text("\n".join(run_lines) + "\n")
    (tmp_path / "qrels").write_text("\n".join(qrels_lines) + "\n")
    ids = {"map": "map_avgjg", "P_3": "precision_avgjg@3", "P_10": "precision_avgjg@10",
           "R_0.5": "rprec_mult_avgjg[mult=0.5]", "R_1.4": "rprec_mult_avgjg[mult=1.4]"}
    _, ours = evalcli_values(str(tmp_path / "qrels"), str(tmp_path / "run"),
                             {"qrels_jg_file": str(tmp_path / "qrels")}, ids,
                             truth_format="trec_qrels_jg")
    for q in run:
        want = _avgjg_reference(groups[q], run[q], (3, 10), (0.5, 1.4))
        for name, mid in ids.items():
            assert ours[q][mid] == pytest.approx(want[name], abs=1e-12), (q, name)


def _prefs_reference(lines: list[tuple[str, str, str, float]], scores: dict[str, float]
                     ) -> dict[str, float]:
    """trec_eval's -m all_prefs of one query, a port of form_prefs_counts.c and
    m_prefs_*.c: ``lines`` are (jg, jsg, docno, level), ``scores`` the run."""
    judged = sorted({d for _, _, d, _ in lines})
    order = [d for d in sorted(scores, key=lambda d: (-scores[d], d)) if d in set(judged)]
    njr = len(order)
    rank = {d: i for i, d in enumerate(order)}
    for d in judged:
        if d not in rank:
            rank[d] = len(rank)
    nj = len(rank)
    prefs = sorted(((jg, jsg, -lvl, rank[d]) for jg, jsg, d, lvl in lines))
    counts = [[0] * nj for _ in range(nj)]
    jgs = []
    for jg in sorted({p[0] for p in prefs}):
        rows = [(jsg, -nl, r) for g, jsg, nl, r in prefs if g == jg]
        st: dict[str, Any] = dict.fromkeys(
            ("fr", "pr", "fi", "pi", "pn", "rel", "rel_ret", "nonrel", "nonrel_ret"), 0)
        if len({jsg for jsg, _, _ in rows}) == 1:  # classes (add_ec_pref_to_jg)
            ecs: list[tuple[float, list[int]]] = []
            for _, lvl, r in rows:
                if not ecs or ecs[-1][0] != lvl:
                    ecs.append((lvl, []))
                ecs[-1][1].append(r)
            st["ecs"] = ecs
            for e1, (lvl1, ranks1) in enumerate(ecs):
                ret = sum(r < njr for r in ranks1)
                kind = "rel" if lvl1 > 0 else "nonrel"
                st[kind] += len(ranks1)
                st[kind + "_ret"] += ret
                for _, ranks2 in ecs[e1 + 1:]:
                    for x in ranks1:
                        for y in ranks2:
                            counts[x][y] += 1
                            if x < y:
                                st["fr" if y < njr else "fi" if x < njr else "pn"] += 1
                            else:
                                st["pr" if x < njr else "pi" if y < njr else "pn"] += 1
        else:  # sub-groups: a preference array closed under transitivity
            a = [[False] * nj for _ in range(nj)]
            rel = [-1.0] * nj
            for i, (jsg, lvl, r) in enumerate(rows):
                rel[r] = lvl
                for jsg2, lvl2, r2 in rows[i + 1:]:
                    if jsg2 == jsg and lvl2 < lvl:
                        a[r][r2] = True
            for k in range(nj):
                for i in range(nj):
                    if a[i][k]:
                        for j in range(nj):
                            a[i][j] = a[i][j] or a[k][j]
            st["array"], st["rel_array"] = a, rel
            for i in range(nj):
                kind = "rel" if rel[i] > 0 else "nonrel" if rel[i] == 0 else None
                if kind:
                    st[kind] += 1
                    st[kind + "_ret"] += i < njr
                for j in range(nj):
                    if i != j and a[i][j]:
                        counts[i][j] += 1
                        if i < njr and j < njr:
                            st["fr" if i < j else "pr"] += 1
                        else:
                            st["fi" if i < njr else "pi" if j < njr else "pn"] += 1
        st["pr"] += st["fr"]
        st["pi"] += st["fi"]
        jgs.append(st)

    def ratio(f: float, p: float) -> float:
        return f / p if p else 0.0

    out: dict[str, float] = {}
    ful = sum(g["fr"] + g["fi"] for g in jgs)
    poss = sum(g["pr"] + g["pi"] + g["pn"] for g in jgs)
    out["prefs_num_prefs_poss"], out["prefs_num_prefs_ful"] = poss, ful
    out["prefs_num_prefs_ful_ret"] = sum(g["fr"] for g in jgs)
    out["prefs_simp"] = ratio(ful, poss)
    out["prefs_simp_ret"] = ratio(sum(g["fr"] for g in jgs), sum(g["pr"] for g in jgs))
    out["prefs_simp_imp"] = ratio(ful, sum(g["pr"] + g["pi"] for g in jgs))
    for name, f, p in (("", lambda g: g["fr"] + g["fi"], lambda g: g["pr"] + g["pi"] + g["pn"]),
                       ("_ret", lambda g: g["fr"], lambda g: g["pr"]),
                       ("_imp", lambda g: g["fr"] + g["fi"], lambda g: g["pr"] + g["pi"])):
        total = sum(ratio(f(g), p(g)) for g in jgs)
        out[f"prefs_avgjg{name}"] = total / len(jgs) if total > 0 else 0.0
    for name, ranges in (("", ((0, njr, 0, njr), (0, njr, njr, nj), (njr, nj, njr, nj))),
                         ("_ret", ((0, njr, 0, njr),)),
                         ("_imp", ((0, njr, 0, njr), (0, njr, njr, nj)))):
        pairs, total = 0, 0.0
        for i0, i1, j0, j1 in ranges:
            for i in range(i0, i1):
                for j in range(max(j0, i + 1), j1):
                    if counts[i][j] or counts[j][i]:
                        pairs += 1
                        if i < njr:
                            total += counts[i][j] / (counts[i][j] + counts[j][i])
        out[f"prefs_pair{name}"] = total / pairs if pairs else 0.0
    for name, ret_only in (("", False), ("_ret", True)):
        total = 0.0
        for g in jgs:
            big_r = g["rel_ret"] if ret_only else g["rel"]
            big_n = g["nonrel_ret"] if ret_only else g["nonrel"]
            if big_r >= big_n:
                f = g["fr"] + (0 if ret_only else g["fi"]) + g["rel_ret"] * (big_r - big_n)
                p = g["pr"] + (0 if ret_only else g["pi"] + g["pn"]) + g["rel"] * (big_r - big_n)
            elif "ecs" in g:  # recalculate(), classes
                ecs = g["ecs"]
                kept = ecs[-1][1][:big_r]
                f = p = 0
                for e1 in range(len(ecs)):
                    for e2 in [*range(e1 + 1, len(ecs) - 1), None]:
                        for x in ecs[e1][1]:
                            if ret_only and x >= njr:
                                break
                            for y in (kept if e2 is None else ecs[e2][1]):
                                if ret_only and y >= njr:
                                    break
                                if x < y and x < njr:
                                    f += 1
                                else:
                                    p += 1
                p += f
            else:  # recalculate(), sub-groups
                a, rel = g["array"], g["rel_array"]
                seen, first = 0, (njr if ret_only else nj)
                for i in range(njr if ret_only else nj):
                    if rel[i] == 0.0:
                        seen += 1
                        if seen == g["rel"] + 1:
                            first = i
                            break
                kept = [i for i in range(nj) if not (i >= first and rel[i] == 0.0)]
                f = p = 0
                for i in kept:
                    for j in kept:
                        if i == j or not a[i][j] or (ret_only and (i >= njr or j >= njr)):
                            continue
                        if i < njr and (i < j or j >= njr):
                            f += 1
                        else:
                            p += 1
                p += f
            total += f / p if p else math.nan
        out[f"prefs_avgjg_Rnonrel{name}"] = total / len(jgs) if total > 0 else 0.0
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_prefs_on_random_judgments_equal_a_port_of_trec_evals_code(tmp_path, seed):
    """Random preference judgments (judgment groups of one sub-group with levels 0-3, of
    several sub-groups ranking subsets of the group's documents consistently, non-relevant
    documents at 0 in each) and runs with tied scores, documents judged but not retrieved and
    retrieved but not judged: every -m all_prefs measure per query, to 1e-12, against
    :func:`_prefs_reference`."""
    rng = np.random.default_rng(seed)
    lines: dict[str, list[tuple[str, str, str, float]]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(8):
        out = lines.setdefault(f"q{q}", [])
        for g in range(int(rng.integers(1, 4))):
            docs = [f"d{d}" for d in rng.choice(30, size=int(rng.integers(2, 12)), replace=False)]
            if rng.random() < 0.5:  # one sub-group: classes
                out += [(f"g{g}", "s", d, float(rng.integers(0, 4))) for d in docs]
                continue
            latent = {d: int(rng.integers(0, 5)) for d in docs}  # 0: not relevant
            for s in range(int(rng.integers(2, 4))):
                part = [d for d in docs if rng.random() < 0.6]
                ranks = sorted({latent[d] for d in part if latent[d] > 0})
                out += [(f"g{g}", f"s{s}", d, float(ranks.index(latent[d]) + 1
                                                    if latent[d] else 0)) for d in part]
        retrieved = rng.choice(35, size=int(rng.integers(0, 25)), replace=False)
        run[f"q{q}"] = {f"d{d}": float(rng.integers(0, 8)) for d in retrieved}
    run = {q: docs for q, docs in run.items() if docs}
    (tmp_path / "prefs").write_text("".join(f"{q} {jg} {jsg} {d} {lvl}\n" for q, rows in
                                            lines.items() for jg, jsg, d, lvl in rows))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in run.items()
                                          for d, s in docs.items()))
    measures = {k: v for k, v in PREFS.items() if k != "num_q"}
    _, ours = evalcli_values(str(tmp_path / "prefs"), str(tmp_path / "run"),
                             {"prefs_file": str(tmp_path / "prefs")}, measures,
                             truth_format="trec_prefs")
    wrong = []
    for q in run.keys() & lines.keys():
        want = _prefs_reference(lines[q], run[q])
        for name, mid in measures.items():
            if abs(ours[q][mid] - want[name]) > 1e-12:
                wrong.append(f"{name} {q}: reference {want[name]}, evalcli {ours[q][mid]}")
    assert not wrong, "\n".join(wrong[:30])


def test_prefs_print_as_trec_eval_prints_them():
    """``-f trec_eval`` of -m all_prefs -q -R prefs: trec_eval's out.test.prefs byte for byte,
    but its runid line (counts as integers, queries in trec_eval's string order)."""
    from evalcli.report.treceval import render

    cfg = parse_config({
        "task": "ranking",
        "predictions": {"path": str(DATA / "prefs.results.test"), "format": "trec"},
        "truth": {"path": str(DATA / "prefs.test"), "format": "trec_prefs"},
        "options": {"compat": "trec_eval", "prefs_file": str(DATA / "prefs.test")},
        "metrics": ["num_q", *(mid for mid in PREFS.values() if mid != "num_q")]},
        "test", DATA)
    theirs = [line for line in (DATA / "out.test.prefs").read_text().splitlines()
              if not line.startswith("runid")]
    assert render(run_config(cfg, per_query_values=True)).splitlines() == theirs


def test_values_do_not_depend_on_how_the_plan_is_collected(monkeypatch):
    """The per-query frame collected on its own (not in the engine's collect_all with the
    other statistics) gives the same values: running sums along a list read the list's
    order, which a join must keep (bpref and Rndcg of query 302 differed otherwise)."""
    import evalcli.metrics.ranking.extras as extras

    whole = extras.per_query_frame
    monkeypatch.setattr(extras, "per_query_frame",
                        lambda metrics, lf, ctx: whole(metrics, lf, ctx).collect().lazy())
    means, per_query = evalcli_values("qrels.test", "results.test")
    assert _check(trec_eval_output("out.test.aq"), means, per_query, set(per_query)) \
        == EXPECTED_LINES
