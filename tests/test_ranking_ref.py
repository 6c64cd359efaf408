"""An independent, deliberately plain reference for the ranking metrics, and a harness that runs
evalcli on small in-memory cases.

The reference follows the published definitions one query at a time with Python loops (never the
positional algebra evalcli uses), and gets the tie-averaged values by enumerating every order of
the tied items. Its own tests pin it to hand-worked numbers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

Case = dict[Any, tuple[list[tuple[Any, float]], dict[Any, float]]]
"""query -> (recommended (item, score) in input order, judged item -> relevance)."""


def gain_of(rel: float | None, gain: str, thr: float) -> float:
    r = 0.0 if rel is None else float(rel)
    if gain == "exponential":
        return 2.0 ** max(r, 0.0) - 1.0
    if gain == "binary":
        return 1.0 if r >= thr else 0.0
    return max(r, 0.0)


def strict_metrics(order: Sequence[Any], judged: Mapping[Any, float], k: int | None, *,
                   thr: float = 1.0, gain: str = "linear", prec_den: str = "k",
                   map_den: str = "relevant", unscored: str = "bottom") -> dict[str, float | None]:
    """Every accuracy metric of one query whose list is ``order`` (best first)."""
    n = len(order)
    kk = n if k is None else k
    rel_of = {i: judged.get(i) for i in order}
    b = [1 if (rel_of[i] is not None and rel_of[i] >= thr) else 0 for i in order]
    big_r = sum(1 for v in judged.values() if v >= thr)
    hits = sum(b[:kk])
    if k is None:
        pden = n
    elif prec_den == "list":
        pden = min(k, n)
    else:
        pden = k
    out: dict[str, float | None] = {}
    out["precision"] = hits / pden if pden else 0.0
    out["recall"] = hits / big_r if big_r else 0.0
    out["f1"] = 2 * hits / (pden + big_r) if pden + big_r else 0.0
    out["hit_rate"] = 1.0 if hits > 0 else 0.0
    out["rr"] = next((1.0 / (i + 1) for i in range(min(kk, n)) if b[i]), 0.0)
    ap = 0.0
    seen = 0
    for i in range(min(kk, n)):
        if b[i]:
            seen += 1
            ap += seen / (i + 1)
    mden = min(kk, big_r) if (k is not None and map_den == "min_k_relevant") else big_r
    out["map"] = ap / mden if mden else 0.0
    dcg = sum(gain_of(rel_of[order[i]], gain, thr) / math.log2(i + 2) for i in range(min(kk, n)))
    # the ideal list: every judged item, cut at k when there is one (not at the list's length)
    ideal = sorted((gain_of(v, gain, thr) for v in judged.values()), reverse=True)
    ideal = ideal if k is None else ideal[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    out["dcg"] = dcg
    out["ndcg"] = dcg / idcg if idcg else 0.0
    out["r_precision"] = sum(b[:big_r]) / big_r if big_r else 0.0
    # AUC over the recommended items; relevant items not recommended rank below all of them
    pos_rec = sum(b)
    neg = n - pos_rec
    npos = big_r if unscored == "bottom" else pos_rec
    num = 0.0
    above = 0
    for i in range(n):
        if b[i]:
            above += 1
        else:
            num += above
    out["auc"] = num / (npos * neg) if npos * neg else None
    return out


def tie_orders(recs: Sequence[tuple[Any, float]]) -> list[list[Any]]:
    """Every order of the items that sorts the scores descending (ties in any order)."""
    groups: dict[float, list[Any]] = {}
    for item, score in recs:
        groups.setdefault(score, []).append(item)
    blocks = [groups[s] for s in sorted(groups, reverse=True)]
    orders = []
    for perm in itertools.product(*(itertools.permutations(g) for g in blocks)):
        orders.append([i for block in perm for i in block])
    return orders


def strict_order(recs: Sequence[tuple[Any, float]], ties: str) -> list[Any]:
    if ties == "id":
        return [i for i, _ in sorted(recs, key=lambda r: (r[1], r[0]), reverse=True)]
    indexed = sorted(enumerate(recs), key=lambda r: (-r[1][1], r[0]))
    return [r[1][0] for r in indexed]


def query_metrics(recs: Sequence[tuple[Any, float]], judged: Mapping[Any, float],
                  k: int | None, ties: str, **kw: Any) -> dict[str, float | None]:
    """One query's metrics under a tie policy; ``average`` enumerates every tie order."""
    if ties != "average":
        return strict_metrics(strict_order(recs, ties), judged, k, **kw)
    orders = tie_orders(recs)
    runs = [strict_metrics(o, judged, k, **kw) for o in orders]
    out: dict[str, float | None] = {}
    for name in runs[0]:
        vals = [r[name] for r in runs]
        out[name] = None if any(v is None for v in vals) else sum(vals) / len(vals)  # type: ignore[misc]
    return out


NAMES = {"rr": "mrr"}


def reference(case: Case, metric: str, k: int | None = None, *, ties: str = "average",
              missing: str = "zero", no_relevant: str = "drop", unjudged: str = "drop",
              thr: float = 1.0, **kw: Any) -> float | None:
    """The mean over queries of ``metric`` under evalcli's policies, computed independently."""
    name = {"mrr": "rr"}.get(metric, metric)
    values: list[float] = []
    for recs, judged in case.values():
        big_r = sum(1 for v in judged.values() if v >= thr)
        if not judged:
            status = "unjudged"
        elif big_r == 0:
            status = "no_relevant"
        elif not recs:
            status = "missing"
        else:
            status = "ok"
        policy = {"ok": "keep", "missing": missing, "no_relevant": no_relevant,
                  "unjudged": unjudged}[status]
        if policy == "drop" and metric != "auc":
            continue
        if metric == "auc" and status != "ok":
            continue  # AUC: no pairs, no value, whatever the policies
        if status != "ok":
            values.append(0.0)
            continue
        v = query_metrics(recs, judged, k, ties, thr=thr, **kw)[name]
        if v is None:
            continue
        values.append(v)
    return sum(values) / len(values) if values else None


def micro_recall(case: Case, k: int | None, ties: str = "average", **kw: Any) -> float:
    hits = rel = 0.0
    for recs, judged in case.values():
        big_r = sum(1 for v in judged.values() if v >= 1)
        if not judged or big_r == 0:
            continue
        if recs:
            hits += query_metrics(recs, judged, k, ties)["recall"] * big_r  # type: ignore[operator]
        rel += big_r
    return hits / rel


# --------------------------------------------------------------------------- the harness

def frames(case: Case) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Predictions (query, item, score) in the case's input order, and truth rows."""
    p = [(q, i, float(s)) for q, (recs, _) in case.items() for i, s in recs]
    t = [(q, i, float(r)) for q, (_, judged) in case.items() for i, r in judged.items()]
    pdf = pl.DataFrame(p, schema={"query": pl.String, "item": pl.String, "score": pl.Float64},
                       orient="row")
    tdf = pl.DataFrame(t, schema={"query": pl.String, "item": pl.String,
                                  "relevance": pl.Float64}, orient="row")
    return pdf, tdf


def evaluate(tmp: Path, preds: pl.DataFrame, truth: pl.DataFrame | None,
             metrics: Sequence[Any], **cfg: Any) -> dict[str, Any]:
    """Run evalcli on the frames (written as Parquet); the metric results by id."""
    from evalcli.config import parse_config
    from evalcli.runner import run_config

    tmp.mkdir(parents=True, exist_ok=True)
    preds.write_parquet(tmp / "p.parquet")
    data: dict[str, Any] = {"task": "ranking", "predictions": str(tmp / "p.parquet"),
                            "metrics": list(metrics), **cfg}
    if truth is not None:
        truth.write_parquet(tmp / "t.parquet")
        data["truth"] = str(tmp / "t.parquet")
    result = run_config(parse_config(data, "test", tmp))
    out: dict[str, Any] = {m.id: m for m in result.metrics}
    out["__result__"] = result
    return out


def run_case(tmp: Path, case: Case, metrics: Sequence[Any], **cfg: Any) -> dict[str, Any]:
    p, t = frames(case)
    return evaluate(tmp, p, t, metrics, **cfg)


# --------------------------------------------------------------------------- its own tests

def test_reference_hand_worked_query():
    # list d1..d5, relevant d1 (3), d3 (1), d6 (2, not recommended); d2 judged 0
    judged = {"d1": 3, "d2": 0, "d3": 1, "d6": 2}
    m = strict_metrics(["d1", "d2", "d3", "d4", "d5"], judged, 3)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(2 / 3)
    assert m["map"] == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert m["rr"] == 1.0
    dcg = 3 + 1 / math.log2(4)
    idcg = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    assert m["ndcg"] == pytest.approx(dcg / idcg)
    assert m["r_precision"] == pytest.approx(2 / 3)
    # AUC: negatives d2 (1 positive above), d4 and d5 (2 above); 3 relevant (d6 at the bottom)
    assert m["auc"] == pytest.approx((1 + 2 + 2) / (3 * 3))


def test_reference_tie_enumeration():
    recs = [("a", 1.0), ("b", 1.0), ("c", 0.5)]
    assert sorted(map(tuple, tie_orders(recs))) == [("a", "b", "c"), ("b", "a", "c")]
    # one relevant item among two tied at the top: RR is 1 or 1/2
    assert query_metrics(recs, {"b": 1}, None, "average")["rr"] == pytest.approx(0.75)
    assert strict_order(recs, "id") == ["b", "a", "c"]
    assert strict_order(recs, "input") == ["a", "b", "c"]
