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
