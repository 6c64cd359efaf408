"""Property tests of the ranking metrics: every metric equals the plain reference (the
tie-averaged value equals the mean over every order of the tied items), a perfect ranking has
NDCG 1, and the values do not depend on the file order or on the names of queries and items."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.test_ranking_ref import Case, micro_recall, reference, run_case

ITEMS = [f"d{i}" for i in range(7)]
SCORES = [0.0, 0.5, 1.0, 2.0]
METRICS = ["precision", "recall", "f1", "hit_rate", "mrr", "map", "ndcg", "dcg"]
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@st.composite
def cases(draw: Any, max_queries: int = 4, max_items: int = 6) -> Case:
    case: Case = {}
    for q in range(draw(st.integers(1, max_queries))):
        rec_items = draw(st.lists(st.sampled_from(ITEMS), unique=True, max_size=max_items))
        recs = [(i, draw(st.sampled_from(SCORES))) for i in rec_items]
        judged_items = draw(st.lists(st.sampled_from(ITEMS), unique=True, max_size=5))
        judged = {i: float(draw(st.integers(0, 3))) for i in judged_items}
        case[f"q{q}"] = (recs, judged)
    # an empty file is an input error: at least one recommendation and one judgment
    assume(any(r for r, _ in case.values()) and any(j for _, j in case.values()))
    return case


def _values(got: dict[str, Any]) -> dict[str, float | None]:
    return {k: v.value for k, v in got.items() if k != "__result__"}


@pytest.mark.parametrize("ties", ["average", "id", "input"])
@SETTINGS
@given(case=cases(), k=st.one_of(st.none(), st.integers(1, 7)))
def test_every_metric_equals_the_reference(tmp_path, ties, case, k):
    at = f"@{k}" if k else ""
    metrics = [{"metric": f"{m}{at}", "ties": ties} for m in METRICS]
    metrics += [{"metric": "r_precision", "ties": ties}, {"metric": "auc", "ties": ties}]
    if k:
        metrics.append({"metric": f"micro_recall{at}", "ties": ties})
    got = run_case(tmp_path, case, metrics)
    for m in [*METRICS, "r_precision", "auc"]:
        mid = f"{m}{at if m not in ('r_precision', 'auc') else ''}[ties={ties}]"
        want = reference(case, m, k if m not in ("r_precision", "auc") else None, ties=ties)
        assert got[mid].value == pytest.approx(want, abs=1e-9), (mid, case)
    if k:
        judged_any = any(sum(v >= 1 for v in j.values()) for _, j in case.values())
        mid = f"micro_recall{at}[ties={ties}]"
        if judged_any:
            assert got[mid].value == pytest.approx(micro_recall(case, k, ties), abs=1e-9)
        else:
            assert got[mid].value is None


@SETTINGS
@given(case=cases(), k=st.integers(1, 6))
def test_a_perfect_ranking_has_ndcg_one(tmp_path, case, k):
    # recommend every judged item, scored by its relevance (equal gains may tie)
    perfect: Case = {q: ([(i, r) for i, r in judged.items()], judged)
                     for q, (_, judged) in case.items()}
    got = run_case(tmp_path, perfect, [f"ndcg@{k}", "ndcg", {"metric": f"ndcg@{k}",
                                                             "ties": "id"}])
    for res in _values(got).values():
        relevant = any(v >= 1 for _, j in perfect.values() for v in j.values())
        assert res == (pytest.approx(1.0) if relevant else None)


def _shuffled(case: Case, seed: int) -> Case:
    rng = random.Random(seed)
    items = list(case.items())
    rng.shuffle(items)
    out: Case = {}
    for q, (recs, judged) in items:
        recs = list(recs)
        rng.shuffle(recs)
        out[q] = (recs, judged)
    return out


def _renamed(case: Case, seed: int) -> Case:
    rng = random.Random(seed)
    names = [f"x{i}" for i in range(len(ITEMS))]
    rng.shuffle(names)
    item = dict(zip(ITEMS, names, strict=True))
    out: Case = {}
    for n, (recs, judged) in enumerate(case.values()):
        out[f"user{len(case) - n}"] = ([(item[i], s) for i, s in recs],
                                       {item[i]: r for i, r in judged.items()})
    return out


ALL_AT_3 = [f"{m}@3" for m in METRICS] + ["r_precision", "auc", "map", "mrr"]


@SETTINGS
@given(case=cases(), seed=st.integers(0, 10_000))
def test_file_order_does_not_matter_for_tie_independent_policies(tmp_path, case, seed):
    metrics = [*ALL_AT_3, {"metric": "ndcg@3", "ties": "id"}]
    a = _values(run_case(tmp_path / "a", case, metrics))
    b = _values(run_case(tmp_path / "b", _shuffled(case, seed), metrics))
    assert a == pytest.approx(b)


@SETTINGS
@given(case=cases(), seed=st.integers(0, 10_000))
def test_renaming_queries_and_items_does_not_matter(tmp_path, case, seed):
    a = _values(run_case(tmp_path / "a", case, ALL_AT_3))
    b = _values(run_case(tmp_path / "b", _renamed(case, seed), ALL_AT_3))
    assert a == pytest.approx(b)


@SETTINGS
@given(case=cases())
def test_values_stay_in_their_range(tmp_path, case):
    got = _values(run_case(tmp_path, case, ALL_AT_3))
    for mid, v in got.items():
        if v is not None and not mid.startswith("dcg"):
            assert -1e-12 <= v <= 1 + 1e-12, mid


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_strict_positions_equal_a_rank_of_score_and_tie_break(data):
    """The positions of the strict policies (one Int128 key of the score's bits and the
    tie-break) are the ordinal rank of (score, tie-break) per query: negative scores, both
    zeros (equal), infinities, ties; integer item ids of any sign and width (those beyond 64
    bits rank the struct), or text."""
    import polars as pl

    from evalcli.metrics.base import Memo
    from evalcli.metrics.ranking.frame import FILE_ORDER, IT, ORDER, POS, REC, REL, Q, positions

    n = data.draw(st.integers(1, 40))
    scores = st.sampled_from([-0.0, 0.0, 1.5, -1.5, 2.0, -3.25, float("inf"), float("-inf"),
                              1e-300, -1e-300, 1.0, 1.0000000000000002, 0.9999999999999999])
    order = data.draw(st.lists(scores, min_size=n, max_size=n))
    queries = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    dtype = data.draw(st.sampled_from([pl.String, pl.Int64, pl.Int32, pl.UInt64, pl.Int128]))
    lo, hi = {pl.Int32: (-(2**31), 2**31 - 1), pl.UInt64: (0, 2**64 - 1),
              pl.Int128: (-(2**100), 2**100)}.get(dtype, (-(2**63), 2**63 - 1))
    items = data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n, unique=True))
    text = dtype == pl.String
    lf = pl.LazyFrame({Q: queries, IT: pl.Series([str(i) for i in items] if text else items,
                                                 dtype=dtype),
                       ORDER: order, REL: [None] * n, POS: list(range(n)),
                       "weight": [1.0] * n, REC: [True] * n},
                      schema_overrides={REL: pl.Float64})
    for ties, tie in (("input", -pl.col(POS)), ("id", pl.col(IT))):
        got = positions(Memo(), lf, ties).collect()["pos"].to_list()
        want = lf.select(pl.struct(pl.col(ORDER), tie.alias("t")).rank(
            "ordinal", descending=True).over(Q)).collect().to_series().to_list()
        assert got == want, ties
        if ties == "input":
            # rows in file order (the marker): the score's own ordinal rank, the same places
            marked = lf.with_columns(pl.lit(True).alias(FILE_ORDER))
            assert positions(Memo(), marked, ties).collect()["pos"].to_list() == want


@pytest.mark.parametrize("dtype, items", [("Int128", [2**100, 0, -(2**100)]),
                                          ("UInt64", [2**64 - 1, 0, 2**63])])
def test_wide_item_ids_do_not_spill_into_the_score(dtype, items):
    """ties: id with ids beyond 64 bits (or unsigned 64): the scores still decide first, even
    adjacent ones (1.0 and the next float up)."""
    import polars as pl

    from evalcli.metrics.base import Memo
    from evalcli.metrics.ranking.frame import IT, ORDER, POS, REC, REL, Q, positions

    lf = pl.LazyFrame({Q: [1, 1, 1], IT: pl.Series(items, dtype=getattr(pl, dtype)),
                       ORDER: [1.0, 1.0000000000000002, 1.0], REL: [None] * 3, POS: [0, 1, 2],
                       "weight": [1.0] * 3, REC: [True] * 3},
                      schema_overrides={REL: pl.Float64})
    want = lf.select(pl.struct(pl.col(ORDER), pl.col(IT)).rank(
        "ordinal", descending=True)).collect().to_series().to_list()
    assert positions(Memo(), lf, "id").collect()["pos"].to_list() == want == [2, 1, 3]


@pytest.mark.parametrize("ties", ["input", "average"])
@SETTINGS
@given(case=cases(), seed=st.integers(0, 10_000), k=st.one_of(st.none(), st.integers(1, 7)))
def test_integer_ids_with_queries_interleaved_equal_the_reference(tmp_path, ties, case, seed,
                                                                  k):
    """Integer ids take the in-memory full join that keeps the predictions in file order, where
    ``ties: input`` ranks the score alone (Polars numbers equal scores as they come): with the
    queries' rows interleaved in the file, each query's ties still go in its own file order.
    Judged items that are not recommended, and queries of the truth alone, come along."""
    import polars as pl

    from tests.test_ranking_ref import evaluate

    rng = random.Random(seed)
    rows = [(q, i, s) for q, (recs, _) in case.items() for i, s in recs]
    rng.shuffle(rows)  # the queries' rows interleaved
    in_file: Case = {q: ([(i, s) for q2, i, s in rows if q2 == q], judged)
                     for q, (_, judged) in case.items()}
    qid = {q: n * 7 - 3 for n, q in enumerate(case)}  # any integers, negative too
    pdf = pl.DataFrame([(qid[q], int(i[1:]), float(s)) for q, i, s in rows],
                       schema={"query": pl.Int64, "item": pl.Int32, "score": pl.Float64},
                       orient="row")
    tdf = pl.DataFrame([(qid[q], int(i[1:]), r) for q, (_, judged) in case.items()
                        for i, r in judged.items()],
                       schema={"query": pl.Int64, "item": pl.Int32, "relevance": pl.Float64},
                       orient="row")
    at = f"@{k}" if k else ""
    metrics = [{"metric": f"{m}{at}", "ties": ties} for m in METRICS]
    got = evaluate(tmp_path, pdf, tdf, metrics)
    for m in METRICS:
        want = reference(in_file, m, k, ties=ties)
        assert got[f"{m}{at}[ties={ties}]"].value == pytest.approx(want, abs=1e-9), (m, rows)
