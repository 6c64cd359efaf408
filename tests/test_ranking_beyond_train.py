"""Beyond-accuracy metrics from the training interactions (``options: {train_file: ...}``):
co-occurrence similarity (diversity, intra-list similarity), serendipity, novelty's per-item
table and recommenders' pooled average, catalog coverage over the training items,
distributional coverage, Gini and average recommendation popularity.

References:
- recommenders' own unit tests (recommenders-team/recommenders,
  tests/unit/recommenders/evaluation/test_python_evaluation.py with the ``diversity_data``
  fixture of tests/unit/recommenders/evaluation/conftest.py): their published numbers, written
  here as they are published (5 significant digits);
- a brute force with numpy and pandas on random data, written from the documented
  definitions (recommenders' python_evaluation.py docstrings; Abdollahpouri et al. 2019 for ARP;
  Vargas and Castells' Gini index).
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest

from evalcli.errors import MetricError
from tests.test_ranking_ref import evaluate

TOL = 1e-4  # recommenders' published numbers have 5 significant digits

# recommenders' diversity_data fixture: the training interactions, the recommendations (in list
# order, so scores 2, 1 per user) with their relevance, and the item feature vectors
TRAIN = {"user": [1, 1, 1, 2, 2, 3, 3, 3], "item": [1, 2, 4, 3, 4, 3, 4, 5]}
RECO = {"query": [1, 1, 2, 2, 3, 3], "item": [3, 5, 2, 5, 1, 2],
        "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0]}
RELEVANCE = [1.0, 0.0, 1.0, 1.0, 1.0, 0.0]
FEATURES = [[0.0, 1.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0, 0.0],
            [0.0, 0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0, 1.0]]


def _files(tmp: Path, train: dict | pd.DataFrame = TRAIN) -> dict[str, str]:
    tmp.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(train).write_csv(tmp / "train.csv")
    pl.DataFrame({"item": [1, 2, 3, 4, 5], "features": FEATURES}).write_parquet(
        tmp / "features.parquet")
    return {"train_file": str(tmp / "train.csv"),
            "item_features_file": str(tmp / "features.parquet")}


def _run(tmp: Path, metrics: list, options: dict, per_query: bool = False,
         reco: dict = RECO, relevance: list = RELEVANCE) -> dict[str, Any]:
    truth = pl.DataFrame({"query": reco["query"], "item": reco["item"], "relevance": relevance})
    cfg: dict[str, Any] = {"options": options}
    if per_query:
        cfg["per_query"] = str(tmp / "pq.parquet")
    return evaluate(tmp, pl.DataFrame(reco), truth, metrics, **cfg)


def _per_user(got: dict, mid: str) -> list[float]:
    pq = got["__result__"].per_query
    return pq.sort("query")[mid].to_list()


# --------------------------------------------------------------------------- recommenders' numbers

def test_recommenders_coverage_and_novelty(tmp_path):
    opts = {"train_file": _files(tmp_path)["train_file"]}
    got = _run(tmp_path, ["catalog_coverage@2", "distributional_coverage@2",
                          {"metric": "novelty@2", "items_listed": None},
                          {"metric": "novelty@2", "compat": "recommenders"}], opts)
    assert got["catalog_coverage@2"].value == pytest.approx(0.8, rel=TOL)  # test_catalog_coverage
    assert got["distributional_coverage@2"].value == pytest.approx(1.9183, rel=TOL)
    # test_novelty: 2.83333 (pooled); every list has k items and every item a popularity, so
    # the mean over users is the same here
    assert got["novelty@2[compat=recommenders]"].value == pytest.approx(2.83333, rel=TOL)
    assert got["novelty@2[compat=recommenders]"].details["conventions"]["average"] == "pooled"
    res = got["novelty@2[items_listed=None]"]
    assert res.value == pytest.approx(2.83333, rel=TOL)
    # test_item_novelty: items 1..5 -> 3.0, 3.0, 2.0, 1.41504, 3.0 (4 is never recommended)
    table = {r["item"]: r for r in res.details["item_novelty"]}
    assert set(table) == {1, 2, 3, 5}
    for item, nov in {1: 3.0, 2: 3.0, 3: 2.0, 5: 3.0}.items():
        assert table[item]["novelty"] == pytest.approx(nov, rel=TOL)
    assert [table[i]["recommended"] for i in (1, 2, 3, 5)] == [1.0, 2.0, 1.0, 2.0]
    assert [r["item"] for r in res.details["item_novelty"]][:2] == [2, 5]  # most recommended


def test_recommenders_diversity_cooccurrence_and_features(tmp_path):
    opts = _files(tmp_path)
    got = _run(tmp_path, [{"metric": "diversity@2", "similarity": "cooccurrence"},
                          {"metric": "diversity@2", "similarity": "features"}], opts,
               per_query=True)
    co, feat = "diversity@2[similarity=cooccurrence]", "diversity@2[similarity=features]"
    # test_user_diversity / test_diversity (item_cooccurrence_count)
    assert _per_user(got, co) == pytest.approx([0.29289, 1.0, 0.0], abs=TOL)
    assert got[co].value == pytest.approx(0.43096, rel=TOL)
    # test_user_diversity_item_feature_vector / test_diversity_item_feature_vector
    assert _per_user(got, feat) == pytest.approx([0.5, 0.5, 0.5], abs=TOL)
    assert got[feat].value == pytest.approx(0.5, rel=TOL)


def test_diversity_auto_takes_the_training_file_when_it_is_the_only_source(tmp_path):
    opts = {"train_file": _files(tmp_path)["train_file"]}
    got = _run(tmp_path, ["diversity@2", "intra_list_similarity@2"], opts)
    assert got["diversity@2"].value == pytest.approx(0.43096, rel=TOL)
    assert got["intra_list_similarity@2"].value == pytest.approx(1 - 0.43096, rel=TOL)
    assert not got["diversity@2"].notes  # pairs that never co-occur are 0, not missing


def test_recommenders_serendipity(tmp_path):
    opts = _files(tmp_path)
    metrics = [{"metric": f"serendipity@{k}", "weighting": "relevance", "similarity": sim}
               for k in (1, 2) for sim in ("cooccurrence", "features")]
    got = _run(tmp_path, metrics, opts, per_query=True)

    def mid(k: int, sim: str) -> str:
        return f"serendipity@{k}[similarity={sim},weighting=relevance]"

    # test_user_item_serendipity: the first item of each list (3, 2, 1; relevance 1) is
    # serendipity@1 of each user
    assert _per_user(got, mid(1, "cooccurrence")) == pytest.approx(
        [0.72783, 0.71132, 0.80755], abs=TOL)
    assert _per_user(got, mid(1, "features")) == pytest.approx([0.5, 0.75, 0.6667], abs=TOL)
    # test_user_serendipity, test_serendipity
    assert _per_user(got, mid(2, "cooccurrence")) == pytest.approx(
        [0.363915, 0.53455, 0.403775], abs=TOL)
    assert got[mid(2, "cooccurrence")].value == pytest.approx(0.43408, rel=TOL)
    # the *_item_feature_vector tests
    assert _per_user(got, mid(2, "features")) == pytest.approx([0.25, 0.625, 0.3333], abs=TOL)
    assert got[mid(2, "features")].value == pytest.approx(0.4028, rel=TOL)


# --------------------------------------------------------------------------- brute force

def _random_case(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    n_users, n_items = 12, 15
    train = pd.DataFrame({"user": rng.integers(0, n_users - 2, 60),  # users 10, 11: no past
                          "item": rng.integers(0, n_items - 3, 60)})  # 12..14 never seen
    rows = []
    for u in range(n_users):
        items = rng.choice(n_items, size=rng.integers(1, 7), replace=False)
        scores = rng.permutation(len(items)).astype(float)  # distinct scores
        rows += [(u, int(i), s) for i, s in zip(items, scores, strict=True)]
    reco = pd.DataFrame(rows, columns=["query", "item", "score"])
    truth = reco.sample(frac=0.5, random_state=seed)[["query", "item"]]
    truth["relevance"] = rng.integers(0, 3, len(truth)).astype(float)
    return train, reco, truth


def _brute(train: pd.DataFrame, reco: pd.DataFrame, truth: pd.DataFrame, k: int
           ) -> dict[str, float]:
    past = train.drop_duplicates()
    users = sorted(past.user.unique())
    items = sorted(past.item.unique())
    m = pd.crosstab(past.user, past.item).reindex(index=users, columns=items).to_numpy()
    co = m.T @ m
    count = np.diag(co).astype(float)
    cos = co / np.sqrt(np.outer(count, count))
    at = {i: n for n, i in enumerate(items)}

    def sim(a: int, b: int) -> float:
        return float(cos[at[a], at[b]]) if a in at and b in at else 0.0

    rel = {(q, i): r for q, i, r in truth.itertuples(index=False)}
    tops = {q: list(g.sort_values("score", ascending=False).item[:k])
            for q, g in reco.groupby("query")}
    history = {u: set(g.item) for u, g in past.groupby("user")}
    ils = [np.mean([sim(a, b) for a, b in itertools.combinations(t, 2)])
           for t in tops.values() if len(t) >= 2]
    seren, seren_w = [], []
    for q, t in tops.items():
        if q not in history:
            continue
        unexp = [1 - np.mean([sim(i, j) for j in history[q]]) for i in t]
        seren.append(np.mean(unexp))
        seren_w.append(np.mean([x * rel.get((q, i), 0.0) for x, i in zip(unexp, t,
                                                                            strict=True)]))
    places = pd.Series([i for t in tops.values() for i in t]).value_counts()
    p = places.to_numpy() / places.sum()
    catalog = sorted(set(items) | set(places.index))
    x = np.sort(np.array([places.get(i, 0) for i in catalog], float)) / places.sum()
    n = len(x)
    phi = past.item.value_counts()
    prob = phi / len(past)
    nov_q = [np.mean([-math.log2(prob[i]) for i in t if i in prob]) for t in tops.values()
             if any(i in prob for i in t)]
    nov_pooled = (sum(-math.log2(prob[i]) for t in tops.values() for i in t if i in prob)
                  / sum(len(t) for t in tops.values()))
    return {
        "ils": float(np.mean(ils)),
        "serendipity": float(np.mean(seren)),
        "serendipity_w": float(np.mean(seren_w)),
        "entropy": float(-(p * np.log2(p)).sum()),
        "gini": float(((2 * np.arange(1, n + 1) - n - 1) * x).sum() / (n - 1)),
        "arp": float(np.mean([np.mean([phi.get(i, 0) for i in t]) for t in tops.values()])),
        "novelty": float(np.mean(nov_q)),
        "novelty_pooled": nov_pooled,
        "coverage": len(set(places.index) & set(items)) / len(items),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [2, 4, 10])
def test_against_a_brute_force(tmp_path, seed, k):
    train, reco, truth = _random_case(seed)
    want = _brute(train, reco, truth, k)
    train.to_csv(tmp_path / "train.csv", index=False)
    metrics = [f"intra_list_similarity@{k}", f"serendipity@{k}",
               {"metric": f"serendipity@{k}", "weighting": "relevance"},
               f"distributional_coverage@{k}", f"gini@{k}", f"arp@{k}", f"novelty@{k}",
               {"metric": f"novelty@{k}", "average": "pooled"}, f"catalog_coverage@{k}"]
    got = evaluate(tmp_path, pl.from_pandas(reco), pl.from_pandas(truth), metrics,
                   options={"train_file": str(tmp_path / "train.csv")})
    for mid, key in ((f"intra_list_similarity@{k}", "ils"),
                     (f"serendipity@{k}", "serendipity"),
                     (f"serendipity@{k}[weighting=relevance]", "serendipity_w"),
                     (f"distributional_coverage@{k}", "entropy"), (f"gini@{k}", "gini"),
                     (f"average_recommendation_popularity@{k}", "arp"),
                     (f"novelty@{k}", "novelty"), (f"novelty@{k}[average=pooled]",
                                                   "novelty_pooled"),
                     (f"catalog_coverage@{k}", "coverage")):
        assert got[mid].value == pytest.approx(want[key], rel=1e-12, abs=1e-12), mid
    # users 10 and 11 have no past: left out of serendipity, with a note
    assert any("without a training history" in n for n in got[f"serendipity@{k}"].notes)


def test_ties_average_is_the_mean_over_tie_orders(tmp_path):
    # one user, items a, b, c tied at the cut-off k = 2: each order equally likely
    reco = {"query": [1, 1, 1], "item": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]}
    train = {"user": [1, 2, 2, 3], "item": ["d", "a", "d", "b"]}
    opts = {"train_file": _files(tmp_path, train)["train_file"]}
    got = _run(tmp_path, ["serendipity@2", "arp@2", "distributional_coverage@2"], opts,
               reco=reco, relevance=[1.0, 1.0, 1.0])
    sim_d = {"a": 1 / math.sqrt(2), "b": 0.0, "c": 0.0}  # sim(·, d); d has 2 users, a 1
    orders = list(itertools.permutations("abc"))
    assert got["serendipity@2"].value == pytest.approx(
        np.mean([np.mean([1 - sim_d[i] for i in o[:2]]) for o in orders]))
    assert got["average_recommendation_popularity@2"].value == pytest.approx(
        np.mean([np.mean([{"a": 1, "b": 1, "c": 0}[i] for i in o[:2]]) for o in orders]))
    # every item holds 2/3 of a place in expectation: the entropy of the expected places
    assert got["distributional_coverage@2"].value == pytest.approx(math.log2(3))


# --------------------------------------------------------------------------- edge cases

def test_a_recommended_item_already_in_the_history_is_counted_and_said(tmp_path):
    reco = {"query": [1, 1], "item": [1, 3], "score": [2.0, 1.0]}
    opts = {"train_file": _files(tmp_path)["train_file"]}
    got = _run(tmp_path, ["serendipity@2"], opts, reco=reco, relevance=[1.0, 1.0])
    res = got["serendipity@2"]
    # user 1's past: 1, 2, 4; sim(1, ·) = 1, 1, 1/√3; sim(3, ·) = 0, 0, 2/√6
    want = np.mean([1 - (1 + 1 + 1 / math.sqrt(3)) / 3, 1 - (2 / math.sqrt(6)) / 3])
    assert res.value == pytest.approx(want)
    assert res.details["recommended_in_history"] == 1


def test_gini_extremes_and_the_catalog(tmp_path):
    items = tmp_path / "items.csv"
    items.write_text("item\n1\n2\n3\n4\n")
    reco = {"query": [1, 2, 3, 4], "item": [1, 2, 3, 4], "score": [1.0] * 4}
    got = _run(tmp_path, ["gini@1", "distributional_coverage@1"], {"items_file": str(items)},
               reco=reco, relevance=[1.0] * 4)
    assert got["gini@1"].value == pytest.approx(0.0)  # every item once
    assert got["distributional_coverage@1"].value == pytest.approx(2.0)
    reco = {"query": [1, 2, 3], "item": [1, 1, 9], "score": [1.0] * 3}
    got = _run(tmp_path / "b", ["gini@1"], {"items_file": str(items)}, reco=reco,
               relevance=[1.0] * 3)
    res = got["gini@1"]  # catalog 1..4 plus 9 (outside): places 0, 0, 0, 1, 2 of 3
    x = np.array([0, 0, 0, 1, 2]) / 3
    assert res.value == pytest.approx(((2 * np.arange(1, 6) - 6) * x).sum() / 4)
    assert res.details["recommended_outside_catalog"] == 1


def test_training_file_relevance_and_duplicates(tmp_path):
    # a row with relevance 0 is no interaction; a repeated row counts once
    train = {"user": [1, 1, 1, 2, 2, 3, 3, 3, 3, 9], "item": [1, 2, 4, 3, 4, 3, 4, 5, 5, 1],
             "relevance": [1, 1, 1, 1, 1, 1, 1, 1, 1, 0]}
    opts = {"train_file": _files(tmp_path, train)["train_file"]}
    got = _run(tmp_path, ["diversity@2", "arp@2"], opts)
    assert got["diversity@2"].value == pytest.approx(0.43096, rel=TOL)  # as without them
    # φ: 1 -> 1, 2 -> 1, 3 -> 2, 5 -> 1; lists (3, 5), (2, 5), (1, 2)
    assert got["average_recommendation_popularity@2"].value == pytest.approx(
        np.mean([1.5, 1.0, 1.0]))


def test_query_weights_weigh_the_users(tmp_path):
    opts = {"train_file": _files(tmp_path)["train_file"]}
    reco = {**RECO, "w": [1.0, 1.0, 3.0, 3.0, 0.5, 0.5]}
    truth = pl.DataFrame({"query": RECO["query"], "item": RECO["item"],
                          "relevance": RELEVANCE})
    got = evaluate(tmp_path, pl.DataFrame(reco), truth,
                   [{"metric": "serendipity@2", "weighting": "relevance"}, "arp@2"],
                   options=opts, columns={"weight": "w"})
    # recommenders' user_serendipity, and φ: 3 -> 2, 5 -> 1, 2 -> 1, 1 -> 1
    w = np.array([1.0, 3.0, 0.5])
    assert got["serendipity@2[weighting=relevance]"].value == pytest.approx(
        np.average([0.363915, 0.53455, 0.403775], weights=w), abs=TOL)
    assert got["average_recommendation_popularity@2"].value == pytest.approx(
        np.average([1.5, 1.0, 1.0], weights=w))


@pytest.mark.parametrize(("train", "metric", "match"), [
    ("who,item\n1,2\n", "serendipity@2", "no column user \\(or query\\)"),
    ("user,thing\n1,2\n", "diversity@2", "no column item"),
    ("user,item\n1,x\n", "arp@2", "'x'.*not Int64 as the item ids"),
    ("user,item,relevance\n1,2,yes\n", "novelty@2", "relevance.*not numbers"),
    ("user,item,relevance\n1,2,0\n", "gini@2", "holds no interaction"),
    ("user,item\n,2\n1,3\n", "serendipity@2", "1 row\\(s\\) with a null user"),
])
def test_a_bad_training_file_is_one_clear_error(tmp_path, train, metric, match):
    (tmp_path / "train.csv").write_text(train)
    with pytest.raises(MetricError, match=match):
        _run(tmp_path, [metric], {"train_file": str(tmp_path / "train.csv")})


def test_what_needs_the_training_file_says_so(tmp_path):
    with pytest.raises(MetricError, match="serendipity needs the training interactions"):
        _run(tmp_path, ["serendipity@2"], {"item_features_file": _files(tmp_path)[
            "item_features_file"]})
    with pytest.raises(MetricError, match="similarity cooccurrence reads the train_file"):
        _run(tmp_path, [{"metric": "diversity@2", "similarity": "cooccurrence"}], {})
    with pytest.raises(MetricError, match=r"'similarity' .*must be one of"):
        _run(tmp_path, [{"metric": "diversity@2", "similarity": "jaccard"}], {})
    with pytest.raises(MetricError, match=r"'weighting' .*must be one of"):
        _run(tmp_path, [{"metric": "serendipity@2", "weighting": "yes"}], {})


def test_cli_bad_training_file_exits_2(cli, tmp_path):
    (tmp_path / "p.csv").write_text("query,item,score\n1,3,1\n")
    (tmp_path / "train.csv").write_text("who,item\n1,2\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"task: ranking\npredictions: {tmp_path / 'p.csv'}\n"
                   "options: {train_file: train.csv}\nmetrics: [serendipity@2]\n")
    r = cli("run", str(cfg))
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert "train.csv" in r.stderr and "user (or query)" in r.stderr
