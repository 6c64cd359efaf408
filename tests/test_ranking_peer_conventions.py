"""Peer conventions of issue 17 (ranking): Spark's relevant set on graded truth, the aliases
named after recommenders, recommenders' r_precision_at_k, ranx's own conventions."""

from __future__ import annotations

import math

import polars as pl
import pytest

from evalcli.errors import MetricError
from tests.test_ranking_ref import evaluate


def _frames(pred: dict[int, list[str]], truth: dict[int, dict[str, float]]
            ) -> tuple[pl.DataFrame, pl.DataFrame]:
    p = pl.DataFrame([(q, it, len(items) - i) for q, items in pred.items()
                      for i, it in enumerate(items)], schema=["query", "item", "score"],
                     orient="row")
    t = pl.DataFrame([(q, it, float(r)) for q, rels in truth.items() for it, r in rels.items()],
                     schema=["query", "item", "relevance"], orient="row")
    return p, t


# --------------------------------------------------------------------- item 6: relevant: listed

def test_spark_counts_every_listed_item_relevant(tmp_path):
    # a (grade 0) and c (grade 2) listed, x unjudged: Spark's labels are {a, c}
    p, t = _frames({1: ["a", "x", "c"]}, {1: {"a": 0, "c": 2}})
    got = evaluate(tmp_path, p, t, ["precision@3", "recall@3", "map", "ndcg@3",
                                    {"metric": "precision@3", "relevant": "threshold"}],
                   options={"compat": "spark"})
    assert got["precision@3"].value == pytest.approx(2 / 3)
    assert got["recall@3"].value == pytest.approx(1.0)
    assert got["map"].value == pytest.approx((1 + 2 / 3) / 2)
    # NDCG keeps the grades (2^rel − 1): a gains 0, c gains 3; the ideal puts c first
    assert got["ndcg@3"].value == pytest.approx((3 / math.log2(4)) / 3)
    assert got["precision@3[relevant=threshold]"].value == pytest.approx(1 / 3)
    # evalcli's default (threshold) leaves grade 0 not relevant; unjudged x is never relevant
    got = evaluate(tmp_path, p, t, ["precision@3", {"metric": "precision@3",
                                                    "relevant": "listed"}])
    assert got["precision@3"].value == pytest.approx(1 / 3)
    assert got["precision@3[relevant=listed]"].value == pytest.approx(2 / 3)
    assert got["precision@3"].details["conventions"]["relevance_threshold"] == 1.0


# ------------------------------------------------------------------ item 12: retired aliases

@pytest.mark.parametrize(("alias", "says"), [("map_at_k", "min(k, |relevant|)"),
                                              ("ndcg_at_k", "binary gain")])
def test_aliases_not_following_recommenders_are_errors(tmp_path, alias, says):
    p, t = _frames({1: ["a"]}, {1: {"a": 1}})
    with pytest.raises(MetricError, match="no longer an alias") as e:
        evaluate(tmp_path, p, t, [f"{alias}@3"])
    assert says in str(e.value) and "compat: recommenders" in str(e.value)


def test_recommenders_map_at_k_and_ndcg_at_k_through_the_preset(tmp_path):
    # recommenders' map_at_k: Σ_{i<=k} P@i·rel_i / min(k, |relevant|); ndcg_at_k: binary gain
    # (score_type binary), ideal over min(k, |relevant|) items, discount 1/log2(i+1)
    p, t = _frames({1: ["a", "x", "b", "c"]}, {1: {"a": 3, "b": 1, "c": 1, "d": 2}})
    got = evaluate(tmp_path, p, t, ["map@2", "ndcg@3"], options={"compat": "recommenders"})
    assert got["map@2"].value == pytest.approx(1 / 2)  # one hit at 1, min(2, 4) = 2
    dcg = 1 + 1 / math.log2(4)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert got["ndcg@3"].value == pytest.approx(dcg / idcg)


# ----------------------------------------------------------- item 9: recommenders' R-precision

def _recommenders_r_precision_at_k(pred: dict[int, list[str]], truth: dict[int, set[str]],
                                   k: int) -> float:
    """recommenders' r_precision_at_k as documented: per user in both inputs, R = min(|true|,
    k), hits among the first R recommended over R; the mean over the users with a hit there."""
    values = []
    for u in pred.keys() & truth.keys():
        r = min(len(truth[u]), k)
        hits = sum(1 for it in pred[u][:r] if it in truth[u])
        if hits:
            values.append(hits / r)
    return sum(values) / len(values) if values else 0.0


def test_r_precision_at_k_matches_recommenders(tmp_path):
    import numpy as np

    rng = np.random.default_rng(9)
    pred: dict[int, list[str]] = {}
    truth: dict[int, set[str]] = {}
    for u in range(60):
        if u % 7 != 6:
            pred[u] = [f"i{x}" for x in rng.choice(30, 10, replace=False)]
        if u % 11 != 10:
            truth[u] = {f"i{x}" for x in rng.choice(30, int(rng.integers(1, 15)), replace=False)}
    p, t = _frames(pred, {u: dict.fromkeys(items, 1) for u, items in truth.items()})
    got = evaluate(tmp_path, p, t, ["r_precision@3", "r_precision@10",
                                    {"metric": "r_precision@3", "average_over": "all"}],
                   options={"compat": "recommenders"})
    for k in (3, 10):
        assert got[f"r_precision@{k}"].value == pytest.approx(
            _recommenders_r_precision_at_k(pred, truth, k), abs=1e-12)
    assert got["r_precision@3[average_over=all]"].value < got["r_precision@3"].value
    assert got["r_precision@3"].details["query_status"]["undefined"] > 0


def test_r_precision_without_k_is_unchanged(tmp_path):
    p, t = _frames({1: ["a", "b", "c"], 2: ["x", "y"]}, {1: {"b": 1, "c": 1}, 2: {"z": 1}})
    got = evaluate(tmp_path, p, t, ["r_precision", "r_precision@1",
                                    {"metric": "r_precision@2", "compat": "recommenders"}])
    assert got["r_precision"].value == pytest.approx((1 / 2 + 0) / 2)
    assert got["r_precision@1"].value == 0.0  # R' = 1: a, x are not relevant
    assert got["r_precision@2[compat=recommenders]"].value == pytest.approx(1 / 2)


# ------------------------------------------------------------------- item 13: ranx's own

@pytest.mark.parametrize("seed", [3, 4])
def test_hits_and_rbp_match_ranx(tmp_path, seed):
    import ranx

    from tests.test_ranking_peers import _random_run

    qrels, run, p, t = _random_run(seed)  # graded 0..3, no ties, queries without results
    names = ["hits@5", "hits", "rbp.95", "rbp.8"]
    scores = ranx.evaluate(ranx.Qrels(qrels), ranx.Run({q: run[q] for q in run if q in qrels}),
                           names, make_comparable=True)
    got = evaluate(tmp_path, p, t, ["hits@5", "hits", {"metric": "rbp", "p": 0.95},
                                    {"metric": "rbp", "p": 0.8},
                                    {"metric": "rbp", "p": 0.8, "scale": "max_judged"}],
                   options={"compat": "ranx"})
    assert got["hits@5"].value == pytest.approx(scores["hits@5"], abs=1e-9)
    assert got["hits"].value == pytest.approx(scores["hits"], abs=1e-9)
    assert got["rbp[p=0.95]"].value == pytest.approx(scores["rbp.95"], abs=1e-9)
    assert got["rbp[p=0.8]"].value == pytest.approx(scores["rbp.8"], abs=1e-9)
    # trec_eval's scaling by the highest judged gain gives less on graded qrels
    assert got["rbp[p=0.8,scale=max_judged]"].value < scores["rbp.8"]


def _dup_frames() -> tuple[pl.DataFrame, pl.DataFrame]:
    # query 1 lists a twice (low then high score), query 2 lists y twice (high then low)
    p = pl.DataFrame({"query": ["1", "1", "1", "1", "2", "2", "2"],
                      "item": ["a", "b", "c", "a", "y", "x", "y"],
                      "score": [0.1, 0.5, 0.4, 0.9, 0.8, 0.6, 0.2]})
    t = pl.DataFrame({"query": ["1", "1", "2"], "item": ["a", "c", "y"], "relevance": [1, 2, 1]})
    return p, t


def _pandas(df: pl.DataFrame) -> object:
    out = df.rename({"query": "q_id", "item": "doc_id"}).to_pandas()
    for col in ("q_id", "doc_id"):
        out[col] = out[col].astype(object)  # ranx asserts object ids (pandas 3: str dtype)
    return out


def test_duplicates_policy_last_matches_ranx(tmp_path):
    import ranx

    p, t = _dup_frames()
    # ranx's Run.from_df builds a dict per query: the later row of a repeated item wins
    run = ranx.Run.from_df(_pandas(p))
    assert run.to_dict()["1"]["a"] == 0.9 and run.to_dict()["2"]["y"] == 0.2
    qrels = ranx.Qrels.from_df(_pandas(t), score_col="relevance")
    names = ["mrr", "ndcg@3", "map", "precision@2"]
    scores = ranx.evaluate(qrels, run, names)
    got = evaluate(tmp_path, p, t, names, options={"compat": "ranx"})
    for name in names:
        assert got[name].value == pytest.approx(scores[name], abs=1e-12), name
    assert got["mrr"].value == pytest.approx((1 + 1 / 2) / 2)  # a first; y below x


def test_duplicates_policies_by_hand_and_the_error(tmp_path):
    p, t = _dup_frames()
    # first: b, c, a | y, x; last: a, b, c | x, y; max_score: a, b, c | y, x
    first = ((1 / 2 + 2 / 3) / 2 + 1) / 2
    for policy, want in (("first", first), ("last", ((1 + 2 / 3) / 2 + 1 / 2) / 2),
                         ("max_score", ((1 + 2 / 3) / 2 + 1) / 2)):
        got = evaluate(tmp_path, p, t, ["map"], options={"duplicates": policy})
        assert got["map"].value == pytest.approx(want), policy
    # trec_eval stops on a duplicate (form_res_rels.c: "duplicate docs"): so does every other
    # preset, and evalcli's default; the hint names the option
    for options in ({}, {"compat": "trec_eval"}, {"compat": "spark"}):
        with pytest.raises(Exception, match="duplicated key") as e:
            evaluate(tmp_path, p, t, ["mrr"], options=options)
        assert "duplicates: first | last | max_score" in str(e.value.hint)
    # an explicit policy overrides the preset
    got = evaluate(tmp_path, p, t, ["map"], options={"compat": "ranx", "duplicates": "first"})
    assert got["map"].value == pytest.approx(first)


def test_duplicates_with_rank_and_list_columns(tmp_path):
    p = pl.DataFrame({"query": [1], "item": [["a", "b", "a", "c"]]})  # rank from list order
    t = pl.DataFrame({"query": [1], "item": ["c"]})
    got = evaluate(tmp_path, p, t, ["mrr"], options={"duplicates": "max_score"})
    assert got["mrr"].value == pytest.approx(1 / 3)  # a kept at rank 1: a, b, c
    got = evaluate(tmp_path, p, t, ["mrr"], options={"duplicates": "last"})
    assert got["mrr"].value == pytest.approx(1 / 3)  # b, a, c: c third still


@pytest.mark.parametrize("engine", ["polars", "streaming"])
@pytest.mark.parametrize("policy", ["first", "last"])
def test_duplicates_first_last_with_integer_keys_match_pandas(tmp_path, engine, policy):
    """Integer keys (packed into one on the in-memory engine, where the repeated keys are kept
    on the sorted rows) give what pandas' drop_duplicates(keep=...) leaves, run with no
    repeats at all; many repeats, in any order in the file."""
    import random

    rng = random.Random(7)
    rows = [(q, rng.randrange(12), rng.random()) for q in range(40) for _ in range(15)]
    rng.shuffle(rows)
    p = pl.DataFrame(rows, schema=["query", "item", "score"], orient="row")
    t = pl.DataFrame([(q, i, rng.choice([0, 1, 2])) for q in range(40) for i in range(0, 12, 2)],
                     schema=["query", "item", "relevance"], orient="row")
    assert p.select(pl.struct("query", "item").is_duplicated().sum()).item() > 100
    once = pl.from_pandas(p.to_pandas().drop_duplicates(["query", "item"], keep=policy))
    names = ["ndcg@5", "map", "mrr", "precision@3", "recall@10", "auc"]
    got = evaluate(tmp_path / "a", p, t, names, options={"duplicates": policy}, engine=engine)
    want = evaluate(tmp_path / "b", once, t, names, engine=engine)
    for name in names:
        assert got[name].value == want[name].value, name
    # the rows the policy left out are counted and named, not dropped unsaid
    extra = got["__result__"].alignment.extra
    assert extra["duplicates_dropped"] == p.height - once.height
    assert extra["duplicates_policy"] == policy
    assert "duplicates_dropped" not in want["__result__"].alignment.extra


@pytest.mark.parametrize("engine", ["polars", "streaming"])
@pytest.mark.parametrize("options, policy", [({"compat": "ranx"}, "last"),
                                             ({"duplicates": "max_score"}, "max_score"),
                                             ({"duplicates": "first"}, "first")])
def test_every_report_says_how_many_repeated_rows_a_policy_left_out(tmp_path, engine, options,
                                                                    policy):
    """A duplicates policy (ranx's preset included) keeps one row of each repeated (query,
    item): the report counts the others and names the policy, in every format (text ids
    here: the in-memory join's other path)."""
    from evalcli.report import ReportFormat, render
    from evalcli.result import to_dict

    p, t = _dup_frames()
    repeats = p.height - p.unique(["query", "item"]).height
    assert repeats > 0
    got = evaluate(tmp_path, p, t, ["mrr"], options=options, engine=engine)["__result__"]
    assert got.alignment.extra["duplicates_dropped"] == repeats
    assert to_dict(got)["alignment"]["duplicates_policy"] == policy
    said = f"{repeats} repeated (query, item) pair(s) of the predictions left out " \
           f"(duplicates: {policy}"
    for fmt in (ReportFormat.table, ReportFormat.markdown, ReportFormat.html):
        text = " ".join(render(got, fmt).split())
        assert said in text, fmt


def test_a_compared_systems_left_out_rows_are_reported_as_its_own(tmp_path):
    """Two systems under compat: ranx, repeats in the candidate's predictions only: its count
    is in its own JSON block and in the reports' facts, named by system (found in review: only
    the baseline's was shown)."""
    from evalcli.config import parse_config
    from evalcli.report import ReportFormat, render
    from evalcli.result import to_dict
    from evalcli.runner import run_config

    p, t = _dup_frames()
    p.unique(["query", "item"], keep="last", maintain_order=True).write_parquet(
        tmp_path / "a.parquet")
    p.write_parquet(tmp_path / "b.parquet")
    t.write_parquet(tmp_path / "t.parquet")
    cfg = {"task": "ranking", "truth": str(tmp_path / "t.parquet"),
           "predictions": {"a": str(tmp_path / "a.parquet"), "b": str(tmp_path / "b.parquet")},
           "comparison": {"baseline": "a"}, "options": {"compat": "ranx"},
           "metrics": ["mrr", "ndcg@3"]}
    got = run_config(parse_config(cfg, "test", tmp_path))
    repeats = p.height - p.unique(["query", "item"]).height
    systems = to_dict(got)["systems"]
    assert systems["b"]["duplicates_dropped"] == repeats
    assert systems["b"]["duplicates_policy"] == "last"
    assert "duplicates_dropped" not in systems["a"]
    for fmt in (ReportFormat.table, ReportFormat.markdown, ReportFormat.html):
        text = " ".join(render(got, fmt).split())
        assert f"system b: {repeats} repeated (query, item) pair(s)" in text, fmt
        assert "system a:" not in text, fmt
