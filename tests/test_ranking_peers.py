"""Cross-checks with ranx (an optional test dependency) on random runs without tied scores."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from tests.test_ranking_ref import evaluate

K = 5
RANX = {f"ndcg@{K}": f"ndcg@{K}", f"map@{K}": f"map@{K}", f"mrr@{K}": f"mrr@{K}",
        f"precision@{K}": f"precision@{K}", f"recall@{K}": f"recall@{K}",
        f"hit_rate@{K}": f"hit_rate@{K}", f"f1@{K}": f"f1@{K}", "r-precision": "r_precision",
        "ndcg": "ndcg", "map": "map", "mrr": "mrr",
        f"ndcg_burges@{K}": f"ndcg@{K}[gain=exponential]"}


def _random_run(seed: int) -> tuple[dict, dict, pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        items = [f"d{i}" for i in rng.choice(40, size=12, replace=False)]
        judged = items[: int(rng.integers(0, 8))] + [f"x{q}_{j}" for j in range(2)]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 4)) for d in judged}
        if q % 10 != 9:  # some queries have no results
            scores = rng.permutation(len(items)).astype(float) + rng.random()
            run[f"q{q}"] = dict(zip(items, scores.tolist(), strict=True))
    run["unjudged"] = {"d1": 1.0, "d2": 0.5}
    p = pl.DataFrame([(q, d, s) for q, ds in run.items() for d, s in ds.items()],
                     schema=["query", "item", "score"], orient="row")
    t = pl.DataFrame([(q, d, r) for q, ds in qrels.items() for d, r in ds.items()],
                     schema=["query", "item", "relevance"], orient="row")
    return qrels, run, p, t


@pytest.mark.parametrize("seed", [1, 2])
def test_against_ranx(tmp_path, seed):
    import ranx  # in the test extra: a missing one fails, never skips
    qrels, run, p, t = _random_run(seed)
    scores = ranx.evaluate(ranx.Qrels(qrels), ranx.Run({q: run[q] for q in run if q in qrels}),
                           list(RANX), make_comparable=True)
    metrics = []
    for mid in RANX.values():
        name, _, rest = mid.partition("[")
        metrics.append({"metric": name, **({"gain": "exponential"} if rest else {})})
    got = evaluate(tmp_path, p, t, metrics, options={"compat": "ranx"})
    for rx, mid in RANX.items():
        assert got[mid].value == pytest.approx(scores[rx], abs=1e-9), (rx, mid)
