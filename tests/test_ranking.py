"""Ranking accuracy metrics against hand-worked examples, Spark MLlib's documented and tested
values, scikit-learn's ndcg_score/dcg_score, and the policies and edge cases."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from tests.test_ranking_ref import evaluate, reference, run_case

# Spark MLlib's RankingMetricsSuite case (the ranking section of the MLlib evaluation docs
# defines the metrics; these are the values its test suite asserts): three users, the third
# with an empty ground-truth set.
SPARK = [
    ([1, 6, 2, 7, 8, 3, 9, 10, 4, 5], [1, 2, 3, 4, 5]),
    ([4, 1, 5, 6, 2, 7, 3, 8, 9, 10], [1, 2, 3]),
    ([1, 2, 3, 4, 5], []),
]
SPARK_EXPECTED = {
    "precision@1": 1 / 3, "precision@2": 1 / 3, "precision@3": 1 / 3,
    "precision@4": 0.75 / 3, "precision@5": 0.8 / 3, "precision@10": 0.8 / 3,
    "precision@15": 8 / 45,
    "map": 0.355026, "map@1": 0.333334, "map@2": 0.25, "map@3": 0.24074,
    "ndcg@3": 1 / 3, "ndcg@5": 0.328788, "ndcg@10": 0.487913, "ndcg@15": 0.487913,
    "recall@1": 1 / 15, "recall@2": 8 / 45, "recall@3": 11 / 45, "recall@4": 11 / 45,
    "recall@5": 16 / 45, "recall@10": 2 / 3, "recall@15": 2 / 3,
}


def _spark_frames() -> tuple[pl.DataFrame, pl.DataFrame]:
    p = [(u, item, pos + 1) for u, (pred, _) in enumerate(SPARK) for pos, item in enumerate(pred)]
    t = [(u, item) for u, (_, lab) in enumerate(SPARK) for item in lab]
    return (pl.DataFrame(p, schema=["query", "item", "rank"], orient="row"),
            pl.DataFrame(t, schema={"query": pl.Int64, "item": pl.Int64}, orient="row"))


def test_spark_mllib_ranking_metrics_suite(tmp_path):
    p, t = _spark_frames()
    got = evaluate(tmp_path, p, t, list(SPARK_EXPECTED), options={"compat": "spark"})
    for mid, want in SPARK_EXPECTED.items():
        assert got[mid].value == pytest.approx(want, abs=1e-5), mid
    assert got["map"].details["conventions"]["unjudged"] == "zero"


def test_spark_map_at_k_divides_by_min_k_relevant(tmp_path):
    # Spark's meanAveragePrecisionAt(2) is 0.25 only with min(k, |relevant|): with |relevant|
    # user 1 gives 1/5 and user 2 gives (1/2)/3
    p, t = _spark_frames()
    got = evaluate(tmp_path, p, t, ["map@2", {"metric": "map@2", "denominator": "relevant"}],
                   options={"compat": "spark"})
    assert got["map@2"].value == pytest.approx(0.25)
    assert got["map@2[denominator=relevant]"].value == pytest.approx((1 / 5 + 0.5 / 3) / 3)


def test_spark_formulas_by_hand_defaults_drop_the_empty_user(tmp_path):
    # evalcli's defaults leave out user 3 (no truth row): the mean over users 1 and 2
    p, t = _spark_frames()
    got = evaluate(tmp_path, p, t, ["precision@5", "map", "ndcg@10"])
    assert got["precision@5"].value == pytest.approx((3 / 5 + 1 / 5) / 2)
    ap1 = (1 + 2 / 3 + 3 / 6 + 4 / 9 + 5 / 10) / 5
    ap2 = (1 / 2 + 2 / 5 + 3 / 7) / 3
    assert got["map"].value == pytest.approx((ap1 + ap2) / 2)
    dcg1 = sum(1 / math.log2(i + 2) for i in (0, 2, 5, 8, 9))
    idcg1 = sum(1 / math.log2(i + 2) for i in range(5))
    dcg2 = sum(1 / math.log2(i + 2) for i in (1, 4, 6))
    idcg2 = sum(1 / math.log2(i + 2) for i in range(3))
    assert got["ndcg@10"].value == pytest.approx((dcg1 / idcg1 + dcg2 / idcg2) / 2)
    assert any("unjudged=drop" in n for n in got["map"].notes)


# --------------------------------------------------------------------------- hand-worked, graded

GRADED = {
    # q1: ties at the top (a, b at 0.9); c relevant 1; z relevant 2 but not recommended
    "q1": ([("a", 0.9), ("b", 0.9), ("c", 0.5), ("d", 0.1)],
           {"a": 0.0, "b": 3.0, "c": 1.0, "z": 2.0}),
    "q2": ([("x", 0.3), ("y", 0.2)], {"y": 1.0}),
    "q3": ([], {"m": 2.0}),                  # relevant items, no predictions
    "q4": ([("n", 0.5)], {"n": 0.0}),        # judged, nothing relevant
    "q5": ([("o", 0.5)], {}),                # no truth row
}
ALL = ["precision@2", "recall@2", "f1@2", "hit_rate@1", "mrr", "mrr@1", "map", "map@2",
       "ndcg@2", "ndcg", "dcg@3", "r_precision", "auc"]


@pytest.mark.parametrize("ties", ["average", "id", "input"])
def test_graded_case_every_metric_against_the_reference(tmp_path, ties):
    got = run_case(tmp_path, GRADED, [{"metric": m, "ties": ties} for m in ALL])
    for mid in ALL:
        name, _, k = mid.partition("@")
        res = got[f"{mid}[ties={ties}]"]
        want = reference(GRADED, name, int(k) if k else None, ties=ties)
        assert res.value == pytest.approx(want), (mid, ties)


def test_graded_case_by_hand(tmp_path):
    got = run_case(tmp_path, GRADED, ["ndcg@2", "mrr", "precision@2"])
    # q1 tie-averaged: positions 1-2 hold a (0) and b (3) in either order, mean gain 1.5 each
    dcg1 = 1.5 * (1 + 1 / math.log2(3))
    idcg1 = 3 + 2 / math.log2(3)
    # q2: y at position 2; q3 counted 0 (missing=zero); q4, q5 left out
    ndcg2 = (1 / math.log2(3)) / 1.0
    assert got["ndcg@2"].value == pytest.approx((dcg1 / idcg1 + ndcg2 + 0) / 3)
    # RR: q1 b first or second (3/4), q2 1/2, q3 0
    assert got["mrr"].value == pytest.approx((0.75 + 0.5 + 0) / 3)
    assert got["precision@2"].details["queries"] == 3
    assert got["precision@2"].details["query_status"] == {
        "ok": 2, "missing": 1, "no_relevant": 1, "unjudged": 1}


def test_ties_straddling_k_are_counted(tmp_path):
    case = {"q": ([("a", 1.0), ("b", 0.5), ("c", 0.5), ("d", 0.1)], {"c": 1.0})}
    got = run_case(tmp_path, case, ["precision@2", {"metric": "precision@2", "ties": "id"},
                                    "precision@1", "precision@3"])
    assert got["precision@2"].details["ties_straddling_k"] == 1
    assert got["precision@2"].value == pytest.approx(0.25)   # c is 2nd half the time
    assert got["precision@2[ties=id]"].value == pytest.approx(0.5)   # c > b: c first
    assert any("straddle k=2" in n for n in got["precision@2[ties=id]"].notes)
    assert got["precision@1"].details["ties_straddling_k"] == 0
    assert got["precision@3"].details["ties_straddling_k"] == 0


def test_ties_straddling_r_are_counted(tmp_path):
    """R-precision's cut-off is each query's R: q1 (R = 2) has b and c tied across it, q2
    (R = 1) a tie below it, q3 (R = 3) more relevant items than it has predictions."""
    case = {"q1": ([("a", 1.0), ("b", 0.5), ("c", 0.5), ("d", 0.1)], {"c": 1.0, "a": 1.0}),
            "q2": ([("x", 0.9), ("y", 0.2), ("z", 0.2)], {"x": 1.0}),
            "q3": ([("m", 0.3), ("n", 0.3)], {"m": 1.0, "n": 1.0, "o": 1.0})}
    for ties, q1, straddles in (("average", 1.5 / 2, 1), ("id", 2 / 2, 1), ("input", 1 / 2, 1)):
        got = run_case(tmp_path, case, [{"metric": "r_precision", "ties": ties}])
        res = next(iter(got.values()))
        assert res.value == pytest.approx((q1 + 1.0 + 2 / 3) / 3), ties
        assert res.details["ties_straddling_r"] == straddles, ties


# --------------------------------------------------------------------------- policies

@pytest.mark.parametrize("missing", ["zero", "drop"])
@pytest.mark.parametrize("no_relevant", ["zero", "drop"])
@pytest.mark.parametrize("unjudged", ["zero", "drop"])
def test_policies(tmp_path, missing, no_relevant, unjudged):
    pol = {"missing": missing, "no_relevant": no_relevant, "unjudged": unjudged}
    metrics = [{"metric": m, **pol} for m in ("ndcg@2", "recall@2", "map", "precision@1")]
    got = run_case(tmp_path, GRADED, metrics)
    for res in list(got.values())[:-1]:
        want = reference(GRADED, res.metric, res.params["k"], **pol)
        assert res.value == pytest.approx(want), (res.id, pol)


def test_presets_set_the_conventions_and_explicit_parameters_win(tmp_path):
    got = run_case(tmp_path, GRADED, [
        {"metric": "ndcg@2", "compat": "trec_eval"},
        {"metric": "ndcg@2", "compat": "trec_eval", "ties": "average"},
        {"metric": "ndcg@2", "compat": "recommenders"},
        {"metric": "ndcg@2", "compat": "spark"},
    ])
    trec = got["ndcg@2[compat=trec_eval]"]
    assert trec.details["conventions"] == {
        "compat": "trec_eval", "ties": "id", "missing": "drop", "no_relevant": "zero",
        "unjudged": "drop", "gain": "linear", "relevance_threshold": 1.0}
    assert trec.value == pytest.approx(reference(GRADED, "ndcg", 2, ties="id", missing="drop",
                                                 no_relevant="zero"))
    mixed = got["ndcg@2[compat=trec_eval,ties=average]"]
    assert mixed.details["conventions"]["ties"] == "average"
    assert mixed.value == pytest.approx(reference(GRADED, "ndcg", 2, missing="drop",
                                                  no_relevant="zero"))
    rec = got["ndcg@2[compat=recommenders]"]
    assert rec.value == pytest.approx(reference(GRADED, "ndcg", 2, ties="input", missing="drop",
                                                gain="binary"))
    spark = got["ndcg@2[compat=spark]"]
    assert spark.value == pytest.approx(reference(
        GRADED, "ndcg", 2, ties="input", no_relevant="zero", unjudged="zero",
        gain="exponential"))


def test_task_level_compat_and_per_metric_override(tmp_path):
    got = run_case(tmp_path, GRADED, ["map", {"metric": "mrr", "compat": "sklearn"}],
                   options={"compat": "trec_eval"})
    assert got["map"].details["conventions"]["ties"] == "id"
    assert got["mrr[compat=sklearn]"].details["conventions"]["ties"] == "average"


def test_precision_denominator_list_and_k_beyond_the_list(tmp_path):
    case = {"q": ([("a", 3.0), ("b", 2.0)], {"a": 1.0, "c": 1.0})}
    got = run_case(tmp_path, case, ["precision@5", {"metric": "precision@5",
                                                    "denominator": "list"},
                                    "recall@5", "ndcg@5", "map@5", "f1@5", "hit_rate@5"])
    assert got["precision@5"].value == pytest.approx(1 / 5)
    assert got["precision@5[denominator=list]"].value == pytest.approx(1 / 2)
    assert got["recall@5"].value == pytest.approx(1 / 2)
    assert got["ndcg@5"].value == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert got["map@5"].value == pytest.approx(1 / 2)
    assert got["f1@5"].value == pytest.approx(2 * (1 / 5) * (1 / 2) / (1 / 5 + 1 / 2))
    assert got["hit_rate@5"].value == 1.0


def test_hit_rate_and_micro_recall_are_the_two_conventions(tmp_path):
    case = {
        "q1": ([("a", 1.0), ("b", 0.5)], {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}),
        "q2": ([("x", 1.0), ("y", 0.5)], {"z": 1.0}),
    }
    got = run_case(tmp_path, case, ["hit_rate@2", "micro_recall@2", "recall@2"])
    assert got["hit_rate@2"].value == pytest.approx(0.5)        # one query of two has a hit
    assert got["micro_recall@2"].value == pytest.approx(2 / 5)  # 2 hits of 5 relevant
    assert got["recall@2"].value == pytest.approx((2 / 4 + 0) / 2)


def test_relevance_threshold_and_gains(tmp_path):
    case = {"q": ([("a", 3.0), ("b", 2.0), ("c", 1.0)], {"a": 1.0, "b": 2.0, "c": 3.0})}
    got = run_case(tmp_path, case, [
        {"metric": "precision@3", "relevance_threshold": 2},
        {"metric": "dcg@3", "gain": "exponential"}, "dcg@3",
        {"metric": "ndcg@3", "gain": "binary", "relevance_threshold": 3},
    ])
    assert got["precision@3[relevance_threshold=2]"].value == pytest.approx(2 / 3)
    lin = 1 + 2 / math.log2(3) + 3 / 2
    exp = 1 + 3 / math.log2(3) + 7 / 2
    assert got["dcg@3"].value == pytest.approx(lin)
    assert got["dcg@3[gain=exponential]"].value == pytest.approx(exp)
    # binary gain at threshold 3: only c counts, at position 3
    assert got["ndcg@3[gain=binary,relevance_threshold=3]"].value == pytest.approx(0.5)


def test_rank_column_list_column_and_single_file(tmp_path):
    ranked = pl.DataFrame({"query": ["q", "q", "q"], "item": ["a", "b", "c"], "rank": [3, 1, 2]})
    truth = pl.DataFrame({"query": ["q"], "item": ["a"], "relevance": [1]})
    got = evaluate(tmp_path / "r", ranked, truth, ["mrr"])
    assert got["mrr"].value == pytest.approx(1 / 3)
    lists = pl.DataFrame({"query": ["q"], "item": [["b", "c", "a"]]})
    got = evaluate(tmp_path / "l", lists, truth, ["mrr", "precision@3"])
    assert got["mrr"].value == pytest.approx(1 / 3)
    # one file: every row scored, relevance given (null = unjudged)
    single = pl.DataFrame({"query": ["q", "q", "q"], "item": ["a", "b", "c"],
                           "score": [0.1, 0.9, 0.5], "relevance": [1.0, 0.0, None]})
    got = evaluate(tmp_path / "s", single, None, ["mrr", "ndcg"])
    assert got["mrr"].value == pytest.approx(1 / 3)
    assert got["ndcg"].value == pytest.approx(0.5)


def test_weights_are_per_query(tmp_path):
    p = pl.DataFrame({"query": ["q1", "q2"], "item": ["a", "b"], "score": [1.0, 1.0],
                      "w": [3.0, 1.0]})
    t = pl.DataFrame({"query": ["q1", "q2"], "item": ["a", "z"], "relevance": [1, 1]})
    got = evaluate(tmp_path, p, t, ["precision@1"], columns={"weight": "w"})
    assert got["precision@1"].value == pytest.approx(3 / 4)


def test_a_query_weight_is_its_largest_on_any_row(tmp_path):
    """As the weight role says: the largest value on the query's rows, wherever they rank,
    the same at every cut-off (q1's largest weight is on its second item)."""
    p = pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["a", "b", "c"],
                      "score": [0.9, 0.1, 1.0], "w": [1.0, 3.0, 1.0]})
    t = pl.DataFrame({"query": ["q1", "q2"], "item": ["a", "z"], "relevance": [1, 1]})
    got = evaluate(tmp_path, p, t, ["precision@1", "precision@2", "precision", "mrr"],
                   columns={"weight": "w"})
    assert got["precision@1"].value == pytest.approx(3 / 4)
    assert got["precision@2"].value == pytest.approx(3 * 0.5 / 4)
    assert got["precision"].value == pytest.approx(3 * 0.5 / 4)
    assert got["mrr"].value == pytest.approx(3 / 4)


def test_segments(tmp_path):
    p = pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["a", "b", "c"],
                      "score": [2.0, 1.0, 1.0], "grp": ["x", "x", "y"]})
    t = pl.DataFrame({"query": ["q1", "q2"], "item": ["b", "c"], "relevance": [1, 1]})
    got = evaluate(tmp_path, p, t, ["mrr"], group_by=["grp"])
    res = got["__result__"]
    by = {s.key["grp"]: s.metrics[0].value for s in res.segments}
    assert by == {"x": pytest.approx(0.5), "y": pytest.approx(1.0)}
    assert got["mrr"].value == pytest.approx(0.75)


def test_query_level_alignment_counts(tmp_path):
    got = run_case(tmp_path, GRADED, ["mrr"])
    extra = got["__result__"].alignment.extra
    assert extra == {"queries_in_predictions": 4, "queries_in_truth": 4, "queries_in_both": 3,
                     "queries_only_in_truth": 1, "queries_only_in_predictions": 1}


def test_auc_per_user(tmp_path):
    case = {"q": ([("a", 4.0), ("b", 3.0), ("c", 3.0), ("d", 1.0)], {"b": 1.0, "d": 1.0})}
    got = run_case(tmp_path, case, ["auc", {"metric": "auc", "ties": "id"}])
    # pairs (b, a): wrong; (b, c): tie 1/2; (d, a), (d, c): wrong -> 0.5 / 4
    assert got["auc"].value == pytest.approx(0.5 / 4)
    # by id descending c comes before b: (b, c) wrong too
    assert got["auc[ties=id]"].value == pytest.approx(0.0)


def test_auc_undefined_queries_are_left_out(tmp_path):
    case = {"q1": ([("a", 1.0)], {"a": 1.0}), "q2": ([("a", 1.0), ("b", 0.0)], {"a": 1.0})}
    got = run_case(tmp_path, case, ["auc"])
    assert got["auc"].value == pytest.approx(1.0)
    assert got["auc"].details["query_status"]["undefined"] == 1


# --------------------------------------------------------------------------- scikit-learn

def _dense(rng: np.random.Generator, n_q: int, n_items: int, ties: bool):
    y_true = rng.integers(0, 4, size=(n_q, n_items)).astype(float)
    y_score = rng.integers(0, 4, size=(n_q, n_items)).astype(float) if ties \
        else rng.random((n_q, n_items))
    p = [(f"q{q}", f"d{i}", y_score[q, i]) for q in range(n_q) for i in range(n_items)]
    t = [(f"q{q}", f"d{i}", y_true[q, i]) for q in range(n_q) for i in range(n_items)]
    return (y_true, y_score, pl.DataFrame(p, schema=["query", "item", "score"], orient="row"),
            pl.DataFrame(t, schema=["query", "item", "relevance"], orient="row"))


@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize("k", [None, 1, 3, 5])
def test_against_sklearn_ndcg_and_dcg(tmp_path, ties, k):
    from sklearn.metrics import dcg_score, ndcg_score

    rng = np.random.default_rng(7 + (k or 0))
    y_true, y_score, p, t = _dense(rng, 12, 7, ties)
    suffix = f"@{k}" if k else ""
    got = evaluate(tmp_path, p, t, [f"ndcg{suffix}", f"dcg{suffix}"],
                   options={"compat": "sklearn"})
    assert got[f"ndcg{suffix}"].value == pytest.approx(ndcg_score(y_true, y_score, k=k))
    assert got[f"dcg{suffix}"].value == pytest.approx(dcg_score(y_true, y_score, k=k))


@pytest.mark.parametrize("log_base", [10.0, math.e, 3.5])
@pytest.mark.parametrize("k", [None, 1, 3, 5])
def test_log_base_against_sklearn_dcg_score(tmp_path, log_base, k):
    """dcg[log_base=b] is scikit-learn's dcg_score(log_base=b) on graded data with ties
    (both average over the orders of tied items); ndcg takes no log_base (it cancels)."""
    from sklearn.metrics import dcg_score

    rng = np.random.default_rng(11 + (k or 0))
    y_true, y_score, p, t = _dense(rng, 12, 7, True)
    suffix = f"@{k}" if k else ""
    got = evaluate(tmp_path, p, t, [f"dcg{suffix}", {"metric": f"dcg{suffix}",
                                                     "log_base": log_base}],
                   options={"compat": "sklearn"})
    (mid,) = (m for m in got if "log_base" in m)  # dcg[log_base=10], dcg[log_base=3.5]
    assert got[mid].value == pytest.approx(dcg_score(y_true, y_score, k=k, log_base=log_base),
                                           rel=1e-12)
    assert got[mid].value == pytest.approx(got[f"dcg{suffix}"].value * math.log2(log_base),
                                           rel=1e-12)


def test_gain_table_and_levels_are_checked(tmp_path):
    """gains: numbers to numbers, not empty, no negative level; a YAML {1:3} (no space) is
    named; levels: numbers in [0, 1], none twice, sorted into one id."""
    from evalcli.errors import MetricError

    p = pl.DataFrame({"query": ["q", "q"], "item": ["a", "b"], "score": [2.0, 1.0]})
    t = pl.DataFrame({"query": ["q", "q"], "item": ["a", "b"], "relevance": [2.0, 1.0]})
    for gains, message in [({}, "empty table"), ({-1: 2}, "level -1 is negative"),
                           ({"1:3": None}, "write a space after each colon"),
                           ({1: "high"}, "'high' is not a number"), ([1, 3], "a mapping"),
                           ("1=3,1=4", "key 1 is given twice"), ({1: True}, "not a number")]:
        with pytest.raises(MetricError, match=message):
            evaluate(tmp_path, p, t, [{"metric": "ndcg", "gains": gains}])
    got = evaluate(tmp_path, p, t, ["ndcg[gains={2: 1, 1: 2}]", "dcg.1=2,2=1",
                                    "ndcg@1[gains={2:1,1:2},ties=id]"])
    assert set(got) - {"__result__"} == {"ndcg[gains={1:2,2:1}]", "dcg[gains={1:2,2:1}]",
                        "ndcg@1[gains={1:2,2:1},ties=id]"}
    assert got["dcg[gains={1:2,2:1}]"].value == pytest.approx(1 + 2 / math.log2(3))
    assert got["ndcg@1[gains={1:2,2:1},ties=id]"].value == pytest.approx(0.5)
    for levels, message in [([0.5, 0.5], "listed twice"), ([1.5], "<= 1"), ([], "at least one"),
                            ({0.5: 1}, "must be a list of floats"), ("a|b", "list of floats")]:
        with pytest.raises(MetricError, match=message):
            evaluate(tmp_path, p, t, [{"metric": "11pt_avg", "levels": levels}])
    got = evaluate(tmp_path, p, t, [{"metric": "11pt_avg", "levels": [0.75, 0.25]}])
    assert set(got) - {"__result__"} == {"iprec_11pt_avg[levels=0.25|0.75]"}
    with pytest.raises(MetricError, match="has no parameter 'log_base'"):
        evaluate(tmp_path, p, t, [{"metric": "ndcg", "log_base": 10}])


def test_sklearn_all_zero_rows_count_as_zero(tmp_path):
    from sklearn.metrics import ndcg_score

    y_true = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 2.0]])
    y_score = np.array([[0.3, 0.2, 0.1], [0.1, 0.5, 0.5]])
    p = [(f"q{q}", f"d{i}", y_score[q, i]) for q in range(2) for i in range(3)]
    t = [(f"q{q}", f"d{i}", y_true[q, i]) for q in range(2) for i in range(3)]
    got = evaluate(tmp_path, pl.DataFrame(p, schema=["query", "item", "score"], orient="row"),
                   pl.DataFrame(t, schema=["query", "item", "relevance"], orient="row"),
                   ["ndcg@2", {"metric": "ndcg@2", "compat": "sklearn"}])
    assert got["ndcg@2[compat=sklearn]"].value == pytest.approx(ndcg_score(y_true, y_score, k=2))
    # evalcli's default leaves the all-zero query out, and says so
    assert got["ndcg@2"].value == pytest.approx(ndcg_score(y_true[1:], y_score[1:], k=2))
    assert any("no_relevant=drop" in n for n in got["ndcg@2"].notes)


# --------------------------------------------------------------------------- errors

def test_missing_order_column_is_a_clear_error(tmp_path):
    from evalcli.errors import InputDataError

    p = pl.DataFrame({"query": ["q"], "item": ["a"]})
    t = pl.DataFrame({"query": ["q"], "item": ["a"]})
    with pytest.raises(InputDataError, match="neither a score nor a rank"):
        evaluate(tmp_path, p, t, ["mrr"])


def test_null_score_and_duplicates_are_clear_errors(tmp_path):
    from evalcli.errors import InputDataError

    p = pl.DataFrame({"query": ["q", "q"], "item": ["a", "b"], "score": [1.0, None]})
    t = pl.DataFrame({"query": ["q"], "item": ["a"]})
    with pytest.raises(InputDataError, match="no score"):
        evaluate(tmp_path / "n", p, t, ["mrr"])
    p = pl.DataFrame({"query": ["q", "q"], "item": ["a", "a"], "score": [1.0, 0.5]})
    with pytest.raises(InputDataError, match="duplicated"):
        evaluate(tmp_path / "d", p, t, ["mrr"])


def test_ids_typed_differently_join_as_text(tmp_path):
    p = pl.DataFrame({"query": [1, 1], "item": [10, 20], "score": [0.5, 0.9]})
    t = pl.DataFrame({"query": ["1"], "item": ["10"], "relevance": [1]})
    got = evaluate(tmp_path, p, t, ["mrr"])
    assert got["mrr"].value == pytest.approx(0.5)


# --------------------------------------------------------------------------- one run's memo

def test_runs_share_their_frames_within_a_run_and_nothing_between_runs(monkeypatch):
    """The ranks of the recommended rows are computed once per run whatever the number of
    metrics reading them (the run's memo); nothing a run derived outlives it, and two runs in
    one process on other rows each get their own values."""
    import gc
    import weakref

    import evalcli
    from evalcli.metrics.ranking import frame

    inputs: list[weakref.ref[pl.LazyFrame]] = []
    ranked = frame._positions

    def counted(lf: pl.LazyFrame, *args: object) -> pl.LazyFrame:
        inputs.append(weakref.ref(lf))
        return ranked(lf, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(frame, "_positions", counted)
    cfg = {"task": "ranking", "metrics": ["ndcg@2", "map@2", "mrr", "precision@1"]}
    truth = {"query": [1, 2], "item": ["a", "c"]}
    first = evalcli.evaluate(cfg, predictions={"query": [1, 2], "item": [["a", "b"], ["c", "d"]]},
                             truth=truth).values()
    assert len(inputs) == 1
    gc.collect()
    assert inputs[0]() is None  # the run's frames went with the run
    second = evalcli.evaluate(cfg, predictions={"query": [1, 2],
                                                "item": [["b", "a"], ["d", "c"]]},
                              truth=truth).values()
    assert len(inputs) == 2
    assert first == {"ndcg@2": 1.0, "map@2": 1.0, "mrr": 1.0, "precision@1": 1.0}
    assert second == {"ndcg@2": pytest.approx(1 / math.log2(3)), "map@2": 0.5, "mrr": 0.5,
                      "precision@1": 0.0}


def test_a_context_sent_to_another_process_has_an_empty_memo():
    """Spark pickles the statistics (and the context their closures hold) to its executors:
    the memo arrives empty, each partition derives its own frames."""
    import pickle

    from evalcli.metrics.base import Context

    ctx = Context("ranking", frozenset({"query", "item"}))
    ctx.memo.get(ctx, ("x",), lambda: 1)
    assert len(ctx.memo) == 1
    assert len(pickle.loads(pickle.dumps(ctx)).memo) == 0
