"""Beyond-accuracy metrics (catalog coverage, novelty, intra-list similarity, diversity) against
brute-force computations."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.test_ranking_ref import Case, frames, strict_order, tie_orders

CASE: Case = {
    "q1": ([("a", 0.9), ("b", 0.8), ("c", 0.8), ("d", 0.1)], {"a": 1.0, "e": 2.0}),
    "q2": ([("b", 0.7), ("e", 0.6), ("f", 0.2)], {"b": 1.0, "f": 1.0}),
    "q3": ([("g", 0.5), ("a", 0.4)], {"c": 1.0}),
}


def _run(tmp: Path, case: Case, metrics: list, options: dict | None = None) -> dict:
    from tests.test_ranking_ref import evaluate

    p, t = frames(case)
    return evaluate(tmp, p, t, metrics, options=options or {})


def _top(case: Case, k: int, ties: str) -> dict[str, list[str]]:
    return {q: strict_order(recs, ties)[:k] for q, (recs, _) in case.items()}


# --------------------------------------------------------------------------- coverage

def test_catalog_coverage_strict_and_expected(tmp_path):
    got = _run(tmp_path, CASE, [{"metric": "catalog_coverage@2", "ties": "id"},
                                {"metric": "catalog_coverage@2", "ties": "input"},
                                "catalog_coverage@2"])
    catalog = {i for recs, judged in CASE.values() for i in [*(r for r, _ in recs), *judged]}
    for ties in ("id", "input"):
        covered = set(itertools.chain(*_top(CASE, 2, ties).values()))
        assert got[f"catalog_coverage@2[ties={ties}]"].value == pytest.approx(
            len(covered) / len(catalog))
    # average: the mean coverage over every combination of tie orders
    per_query = [[o[:2] for o in tie_orders(recs)] for recs, _ in CASE.values()]
    sizes = [len(set(itertools.chain(*combo))) for combo in itertools.product(*per_query)]
    assert got["catalog_coverage@2"].value == pytest.approx(
        sum(sizes) / len(sizes) / len(catalog))


def test_catalog_coverage_with_an_items_file(tmp_path):
    items = tmp_path / "items.parquet"
    pl.DataFrame({"item": list("abcdefghij")}).write_parquet(items)
    got = _run(tmp_path, CASE, [{"metric": "catalog_coverage@1", "ties": "id"}],
               {"items_file": str(items)})
    res = got["catalog_coverage@1[ties=id]"]
    assert res.value == pytest.approx(3 / 10)   # a, b, g
    assert res.details["catalog_items"] == 10

    small = tmp_path / "small.parquet"
    pl.DataFrame({"item": ["a", "z"]}).write_parquet(small)
    got = _run(tmp_path / "s", CASE, [{"metric": "catalog_coverage@1", "ties": "id"}],
               {"items_file": str(small)})
    res = got["catalog_coverage@1[ties=id]"]
    assert res.value == pytest.approx(1 / 2)
    assert res.details["recommended_outside_catalog"] == 2
    assert any("not in the catalog" in n for n in res.notes)


# --------------------------------------------------------------------------- novelty

def test_novelty_from_truth_interactions(tmp_path):
    got = _run(tmp_path, CASE, [{"metric": "novelty@2", "ties": "id"}])
    # p(i): share of queries (with a relevant item) for which i is relevant
    rel_queries = [{i for i, r in j.items() if r >= 1} for _, j in CASE.values()]
    n = sum(1 for s in rel_queries if s)
    p = {i: sum(i in s for s in rel_queries) / n for s in rel_queries for i in s}
    per_q = []
    unknown = 0
    for top in _top(CASE, 2, "id").values():
        known = [i for i in top if i in p]
        unknown += len(top) - len(known)
        if known:
            per_q.append(sum(-math.log2(p[i]) for i in known) / len(known))
    res = got["novelty@2[ties=id]"]
    assert res.value == pytest.approx(sum(per_q) / len(per_q))
    assert res.details["items_without_popularity"] == unknown == 1   # g: nobody's relevant item
    assert any("no popularity" in n for n in res.notes)


def test_novelty_from_a_popularity_file(tmp_path):
    pop = tmp_path / "pop.parquet"
    counts = {"a": 4, "b": 2, "c": 1, "d": 1, "e": 8, "f": 1, "g": 3}
    pl.DataFrame({"item": list(counts), "count": list(counts.values())}).write_parquet(pop)
    got = _run(tmp_path, CASE, [{"metric": "novelty@3", "ties": "id"}],
               {"popularity_file": str(pop)})
    total = sum(counts.values())
    per_q = [sum(-math.log2(counts[i] / total) for i in top) / len(top)
             for top in _top(CASE, 3, "id").values()]
    assert got["novelty@3[ties=id]"].value == pytest.approx(sum(per_q) / len(per_q))


# --------------------------------------------------------------------------- intra-list similarity

def _features(tmp: Path, wide: bool = False) -> tuple[Path, dict[str, np.ndarray]]:
    rng = np.random.default_rng(3)
    vecs = {i: rng.normal(size=4) for i in "abcdefg"}
    path = tmp / "features.parquet"
    if wide:
        pl.DataFrame({"item": list(vecs), **{f"f{d}": [float(v[d]) for v in vecs.values()]
                                             for d in range(4)}}).write_parquet(path)
    else:
        pl.DataFrame({"item": list(vecs),
                      "features": [list(map(float, v)) for v in vecs.values()]}
                     ).write_parquet(path)
    return path, vecs


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


@pytest.mark.parametrize("wide", [False, True])
def test_ils_and_diversity_from_features(tmp_path, wide):
    path, vecs = _features(tmp_path, wide)
    got = _run(tmp_path, CASE, ["intra_list_similarity@3", "diversity@3"],
               {"item_features_file": str(path)})
    per_q = []
    for top in _top(CASE, 3, "id").values():
        pairs = list(itertools.combinations(top, 2))
        per_q.append(sum(_cos(vecs[a], vecs[b]) for a, b in pairs) / len(pairs))
    ils = sum(per_q) / len(per_q)
    assert got["intra_list_similarity@3"].value == pytest.approx(ils)
    assert got["diversity@3"].value == pytest.approx(1 - ils)


def test_ils_from_a_similarity_table(tmp_path):
    sim = tmp_path / "sim.parquet"
    table = {("a", "b"): 0.5, ("c", "b"): 0.25, ("b", "e"): 0.8, ("e", "f"): 0.1,
             ("a", "c"): 1.0}
    pl.DataFrame({"item_a": [a for a, _ in table], "item_b": [b for _, b in table],
                  "similarity": list(table.values())}).write_parquet(sim)
    got = _run(tmp_path, CASE, ["intra_list_similarity@3"], {"similarity_file": str(sim)})

    def s(a: str, b: str) -> float:
        return table.get((a, b), table.get((b, a), 0.0))

    per_q = []
    missing = 0
    for top in _top(CASE, 3, "id").values():
        pairs = list(itertools.combinations(top, 2))
        missing += sum((a, b) not in table and (b, a) not in table for a, b in pairs)
        per_q.append(sum(s(a, b) for a, b in pairs) / len(pairs))
    res = got["intra_list_similarity@3"]
    assert res.value == pytest.approx(sum(per_q) / len(per_q))
    assert res.details["pairs_without_similarity"] == missing


def test_ils_needs_a_side_file(tmp_path):
    from evalcli.errors import MetricError

    with pytest.raises(MetricError, match="item features, a similarity table or the training "
                       "interactions"):
        _run(tmp_path, CASE, ["intra_list_similarity@3"])


def test_beyond_accuracy_needs_k(tmp_path):
    from evalcli.errors import MetricError

    with pytest.raises(MetricError, match="'k'"):
        _run(tmp_path, CASE, ["novelty"])


def test_novelty_item_table_stays_out_of_the_bootstrap(monkeypatch):
    """novelty's table of items feeds its details only: with intervals it is built for the
    whole run, never per random group nor resampled (per group it was a table of groups x items
    and a replicate of it per draw: 12 s and 4.8 GB at 10^4 queries instead of 1 s), and the
    interval comes out the same as from the per-query values alone."""
    from dataclasses import replace

    import evalcli
    from evalcli.engine import resample
    from evalcli.metrics.base import FrameStat
    from evalcli.metrics.ranking import beyond
    from evalcli.metrics.registry import get_registry

    built: list[list[str]] = []
    real = beyond._novelty_stats

    def spying(params, ctx):
        out = []
        for st in real(params, ctx):
            if isinstance(st, FrameStat) and st.key.startswith(beyond.ITEMS_PREFIX):
                build = st.build

                def recorded(lf, keys, build=build):
                    built.append(list(keys))
                    return build(lf, keys)

                st = FrameStat(st.key, recorded, st.combine, details_only=st.details_only)
            out.append(st)
        return out

    registry = get_registry()
    key = next(k for k, m in registry.metrics.items() if m.name == "novelty"
               and m.family == "ranking")
    monkeypatch.setitem(registry.metrics, key, replace(registry.metrics[key], stats=spying))
    rng = np.random.default_rng(5)
    q = np.repeat(np.arange(200), 5)
    pred = pl.DataFrame({"query": q, "item": rng.integers(0, 40, q.size),
                         "score": rng.random(q.size)}).unique(["query", "item"])
    truth = pred.sample(fraction=0.3, seed=1).select("query", "item")
    cfg = {"task": "ranking", "metrics": ["novelty@3", "micro_recall"],
           "uncertainty": {"method": "bootstrap", "replicates": 200}}
    r = evalcli.evaluate(cfg, predictions=pred, truth=truth, gating=False)
    nov = r.metric("novelty@3")
    assert nov.ci is not None and nov.ci.low is not None and nov.ci.low < nov.value < nov.ci.high
    assert nov.details["item_novelty"]
    assert not any(resample.GROUP in keys for keys in built)


@pytest.mark.parametrize("name", ["gini", "distributional_coverage"])
def test_exposure_table_is_not_built_per_random_group(monkeypatch, name):
    """The table of top-k places of every catalog item (gini, distributional coverage) does
    not resample: with intervals it is built for the whole run only. Per random group it was
    every catalog item times every group (1,000 queries, 10^5 items: 17-22 GB, killed), for
    replicates nothing read. The value is the same, without an interval; a metric beside it
    still has one."""
    from dataclasses import replace

    import evalcli
    from evalcli.engine import resample
    from evalcli.metrics.base import FrameStat
    from evalcli.metrics.registry import get_registry

    built: list[list[str]] = []
    registry = get_registry()
    key = next(k for k, m in registry.metrics.items() if m.name == name
               and m.family == "ranking")
    real = registry.metrics[key].stats

    def spying(params, ctx):
        out = []
        for st in real(params, ctx):
            if isinstance(st, FrameStat):
                def recorded(lf, keys, build=st.build):
                    built.append(list(keys))
                    return build(lf, keys)

                st = replace(st, build=recorded)
            out.append(st)
        return out

    rng = np.random.default_rng(7)
    q = np.repeat(np.arange(300), 5)
    pred = pl.DataFrame({"query": q, "item": rng.integers(0, 500, q.size),
                         "score": rng.random(q.size)}).unique(["query", "item"])
    truth = pred.sample(fraction=0.3, seed=2).select("query", "item")
    cfg = {"task": "ranking", "metrics": [f"{name}@3", "micro_recall"],
           "uncertainty": {"method": "bootstrap", "replicates": 200}}
    plain = evalcli.evaluate({**cfg, "uncertainty": None}, predictions=pred, truth=truth,
                             gating=False)
    monkeypatch.setitem(registry.metrics, key, replace(registry.metrics[key], stats=spying))
    r = evalcli.evaluate(cfg, predictions=pred, truth=truth, gating=False)
    got = r.metric(f"{name}@3")
    assert got.value == plain.metric(f"{name}@3").value
    assert got.ci is None or got.ci.low is None
    other = r.metric("micro_recall").ci
    assert other is not None and other.low is not None
    assert built and not any(resample.GROUP in keys for keys in built)


def test_exposure_per_segment_without_a_row_per_catalog_item_and_segment():
    """Gini and distributional coverage per segment, from the definition (every item of the
    data is in the catalog, in every segment; ties by id): the table holds the recommended
    items and one row per segment for the catalog's others (a row per catalog item and
    segment took 5 GB at 20 segments and 8·10^5 items)."""
    import evalcli
    from evalcli.metrics.ranking import exposure

    rng = np.random.default_rng(11)
    q = np.repeat(np.arange(60), 4)
    pred = pl.DataFrame({"query": q, "item": rng.integers(0, 200, q.size),
                         "score": rng.random(q.size).round(1)}).unique(["query", "item"])
    truth = pl.DataFrame({"query": np.arange(60), "item": rng.integers(150, 400, 60),
                          "region": [f"r{i % 3}" for i in range(60)]})
    catalog = set(pred["item"]) | set(truth["item"])
    cfg = {"task": "ranking", "group_by": ["region"],
           "metrics": [{"metric": "gini@2", "ties": "id"},
                       {"metric": "distributional_coverage@2", "ties": "id"}]}
    heights: list[int] = []
    real = exposure._table

    def spy(stats):
        out = real(stats)
        heights.append(out[0].height)
        return out

    r = evalcli.evaluate(cfg, predictions=pred, truth=truth, gating=False)
    region = dict(zip(truth["query"], truth["region"], strict=True))
    for seg in r.segments:
        top = (pred.filter(pl.col("query").replace_strict(region) == seg.key["region"])
               .sort(["query", "score", "item"], descending=[False, True, True])
               .group_by("query", maintain_order=True).head(2))
        counts = top["item"].value_counts()
        p = dict(zip(counts["item"], counts["count"] / top.height, strict=True))
        xs = sorted(p.get(i, 0.0) for i in catalog)
        n = len(xs)
        gini = sum((2 * j - n - 1) * x for j, x in enumerate(xs, 1)) / (n - 1)
        entropy = -sum(x * math.log2(x) for x in p.values())
        got = {m.id: m.value for m in seg.metrics}
        assert got["gini@2[ties=id]"] == pytest.approx(gini, abs=1e-12)
        assert got["distributional_coverage@2[ties=id]"] == pytest.approx(entropy, abs=1e-12)
    import unittest.mock
    with unittest.mock.patch.object(exposure, "_table", spy):
        evalcli.evaluate(cfg, predictions=pred, truth=truth, gating=False)
    assert heights and max(heights) <= pred["item"].n_unique() + 1 < len(catalog)


def test_exposure_shares_are_the_rounded_quotients():
    """p(i) = places of i / all places is the correctly rounded quotient (Polars divided by
    the total as a product with its reciprocal: 7 / 10 gave 0.7000000000000001), so the
    entropy is -Σ p log2 p of the exact shares, and the Gini index the formula's value."""
    import evalcli

    items = [["a"]] * 7 + [["b"]] * 3
    r = evalcli.evaluate({"task": "ranking", "metrics": ["distributional_coverage@1", "gini@1"]},
                         predictions={"query": list(range(10)), "item": items},
                         truth={"query": [0], "item": ["a"]})
    shares = [7 / 10, 3 / 10]
    assert r.values()["distributional_coverage@1"] == -math.fsum(
        x * math.log2(x) for x in shares)
    # a and b of 2 items: (2·1 − 3)·0.3 + (2·2 − 3)·0.7, over n − 1
    assert r.values()["gini@1"] == math.fsum([-1 * 3 / 10, 1 * 7 / 10]) / 1


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_novelty_popularity_is_the_rounded_quotient_on_both_executors(engine):
    """p(i) = n_i / users from the truth: a column divided by a value a cross join broadcast
    (and count / total from a file) was computed by Polars' in-memory executor as a product
    with the reciprocal (7 / 10 gave 0.7000000000000001), so novelty differed in its last bit
    between executors; now both give Python's quotient."""
    from evalcli.metrics.base import Context
    from evalcli.metrics.ranking.beyond import _popularity
    from evalcli.metrics.ranking.frame import JUDGED, REL

    rng = np.random.default_rng(3)
    users = 10
    rows = [(q, f"i{j}") for q in range(users) for j in rng.choice(30, 6, replace=False)]
    lf = pl.LazyFrame({"query": [q for q, _ in rows], "item": [i for _, i in rows],
                       JUDGED: [True] * len(rows), REL: [1.0] * len(rows)})
    got = _popularity(lf, Context("ranking", frozenset()), 1.0)[0].collect(engine=engine)
    n = {}
    for _, i in rows:
        n[i] = n.get(i, 0) + 1
    assert dict(got.select("item", "prob").iter_rows()) == {i: c / users for i, c in n.items()}
    assert any(c / users != c * (1 / users) for c in n.values())  # the case that differed
