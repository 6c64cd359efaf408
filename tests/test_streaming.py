"""``engine: streaming`` gives the in-memory engine's values, and the in-memory alignment (sort,
1:1 check on neighbours, line-up by position or merge join) gives the lazy join's.

The streaming engine runs the lazy plan (Polars' hash join with its 1:1 validation); the
in-memory engine aligns with :func:`evalcli.engine.align.materialize`. Comparing the two on the same
inputs checks both: metric values, notes, alignment counts, segments, and the error a bad input
gets. Sizes are small; the benchmark (``benchmarks/run.py --streaming``) runs the large case.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalcli
from evalcli.engine import base as engine_base
from evalcli.engine.align import Aligned, Inputs, materialize
from evalcli.errors import InputDataError
from evalcli.io import Source


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) or (a != a and b != b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _report(result: evalcli.RunResult) -> dict[str, Any]:
    out = result.to_dict()
    out.pop("engine", None)
    return out


def both_engines(cfg: dict[str, Any], pred: Any, truth: Any = None) -> dict[str, Any]:
    """Run ``cfg`` on both engines; assert the reports agree; return the in-memory one."""
    mem = evalcli.evaluate({**cfg, "engine": "polars"}, predictions=pred, truth=truth,
                           gating=False)
    st = evalcli.evaluate({**cfg, "engine": "streaming"}, predictions=pred, truth=truth,
                          gating=False)
    assert mem.engine == "polars" and st.engine == "streaming"
    a, b = _report(mem), _report(st)
    assert a.keys() == b.keys()
    for key in a:
        assert _same(a[key], b[key]), (key, a[key], b[key])
    return a


def binary_frames(n: int, seed: int, *, ids: str = "int", order: str = "shuffled"
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    label = (rng.random(n) < 0.35).astype(np.int64)
    score = np.clip(0.3 * label + rng.normal(0.4, 0.2, n), 0, 1).round(2)  # many ties
    key: Any = rng.permutation(n) * 3 + 7  # sparse, unsorted integer ids
    if ids == "str":
        key = np.array([f"row-{k:06d}" for k in key], dtype=object)
    pred = pl.DataFrame({"id": key, "score": score, "prediction": (score >= 0.5).astype(int),
                         "region": rng.choice(["north", "south", "east"], n)})
    truth = pl.DataFrame({"id": key, "label": label,
                          "weight": rng.choice([0.0, 0.5, 1.0, 2.5], n)})
    if order == "shuffled":
        truth = truth.sample(fraction=1.0, shuffle=True, seed=seed)
    elif order == "sorted":
        pred, truth = pred.sort("id"), truth.sort("id")
    return pred, truth


BINARY = {"task": "binary"}  # every metric the columns allow


@pytest.mark.parametrize("ids", ["int", "str"])
@pytest.mark.parametrize("order", ["shuffled", "same", "sorted"])
def test_binary_engines_agree(ids, order):
    pred, truth = binary_frames(3000, 1, ids=ids, order=order)
    report = both_engines(BINARY, pred, truth)
    assert report["alignment"]["matched"] == 3000
    assert len(report["metrics"]) >= 14


def test_binary_weights_segments_and_gates_agree():
    pred, truth = binary_frames(2500, 2)
    cfg = {"task": "binary", "columns": {"weight": "weight"}, "group_by": ["region"],
           "metrics": ["auroc", "average_precision", "auprc", "peak_f1", "f1", "mcc",
                       {"metric": "log_loss", "max": 0.7}, "brier"]}
    report = both_engines(cfg, pred, truth)
    assert len(report["segments"]) == 3


OPERATING_POINTS = [
    "recall_at_precision[min_precision=0.6]", "precision_at_recall[min_recall=0.8]",
    "sensitivity_at_specificity[min_specificity=0.9]",
    "specificity_at_sensitivity[min_sensitivity=0.9]", "min_cost[fn_cost=5]",
    "precision_at_top@0.05", "lift_at_top@0.05",
    "precision_at_top@1",  # the cut after the last row
]


def test_binary_operating_points_agree():
    pred, truth = binary_frames(2500, 11)
    cfg = {"task": "binary", "columns": {"weight": "weight"}, "group_by": ["region"],
           "metrics": OPERATING_POINTS}
    report = both_engines(cfg, pred, truth)
    assert len(report["segments"]) == 3
    by = {m["id"]: m for m in report["metrics"]}
    assert all(by[m]["details"]["threshold"] is not None for m in OPERATING_POINTS[:4])
    joined = pred.join(truth, on="id").filter(pl.col("weight") > 0)
    assert math.isclose(by["precision_at_top@1"]["value"],
                        (joined["label"] * joined["weight"]).sum() / joined["weight"].sum(),
                        rel_tol=1e-12)


CALIBRATION = ["ece", "mce", {"metric": "ece", "bins": 7, "strategy": "quantile"},
               {"metric": "mce", "bins": 15, "strategy": "quantile"}]


def test_binary_calibration_agrees():
    """ECE and MCE read the counts per score both engines build: the same bins, values and
    details (uniform and quantile, weighted, per segment)."""
    pred, truth = binary_frames(2500, 13)
    cfg = {"task": "binary", "columns": {"weight": "weight"}, "group_by": ["region"],
           "metrics": CALIBRATION}
    report = both_engines(cfg, pred, truth)
    assert len(report["segments"]) == 3
    by = {m["id"]: m for m in report["metrics"]}
    assert by["mce[bins=15,strategy=quantile]"]["details"]["bins_used"] > 5


def test_binary_values_are_the_lazy_joins_and_sklearns():
    from sklearn.metrics import average_precision_score, roc_auc_score

    pred, truth = binary_frames(4000, 3)
    report = both_engines({"task": "binary", "metrics": ["auroc", "average_precision"],
                           "columns": {"weight": "weight"}}, pred, truth)
    joined = pred.join(truth, on="id")
    got = {m["id"]: m["value"] for m in report["metrics"]}
    y, s, w = joined["label"], joined["score"], joined["weight"]  # weighted: the named column
    assert math.isclose(got["auroc"], roc_auc_score(y, s, sample_weight=w), rel_tol=1e-12)
    assert math.isclose(got["average_precision"], average_precision_score(y, s, sample_weight=w),
                        rel_tol=1e-12)


def test_unmatched_rows_dropped_agree():
    pred, truth = binary_frames(2000, 4)
    pred = pred.filter(pl.col("id") % 5 != 0)  # some truth rows have no prediction
    truth = truth.filter(pl.col("id") % 7 != 0)  # some predictions have no truth
    cfg = {"task": "binary", "alignment": {"unmatched": "drop"}}
    report = both_engines(cfg, pred, truth)
    al = report["alignment"]
    assert al["only_in_predictions"] > 0 and al["only_in_truth"] > 0
    assert al["matched"] == pred.join(truth, on="id").height


def test_null_ids_never_match_on_either_engine():
    pred, truth = binary_frames(500, 5)
    pred = pred.with_columns(pl.when(pl.int_range(pl.len()) < 3).then(None)
                             .otherwise(pl.col("id")).alias("id"))
    truth = truth.with_columns(pl.when(pl.int_range(pl.len()) < 2).then(None)
                               .otherwise(pl.col("id")).alias("id"))
    report = both_engines({"task": "binary", "alignment": {"unmatched": "drop"}}, pred, truth)
    assert report["alignment"]["matched"] == pred.join(truth, on="id").height


def test_two_id_columns_agree():
    pred, truth = binary_frames(1200, 6)
    pred = pred.with_columns((pl.col("id") % 4).alias("shard"), (pl.col("id") // 4).alias("id"))
    truth = truth.with_columns((pl.col("id") % 4).alias("shard"), (pl.col("id") // 4)
                               .alias("id"))
    report = both_engines({"task": "binary", "columns": {"id": ["shard", "id"]}}, pred, truth)
    assert report["alignment"]["matched"] == 1200


# Run in a fresh interpreter: the streaming engine finds duplicated keys by a query that fails
# (the join's 1:1 validation), and a failed streaming query can leave Polars 2.1's executor
# broken for the rest of the process (evalcli.engine.core.AFTER_ERROR); the suite must not hang.
DUPLICATES_BOTH_ENGINES = """
import json, sys
import polars as pl
import evalcli
from evalcli.errors import InputDataError
frames = {side: pl.read_parquet(sys.argv[1] + f"/{side}.parquet")
          for side in ("predictions", "truth")}
out = []
for engine in ("polars", "streaming"):
    try:
        evalcli.evaluate({"task": "binary", "engine": engine, "alignment": {"unmatched": "drop"}},
                         predictions=frames["predictions"], truth=frames["truth"])
        out.append(None)
    except InputDataError as exc:
        out.append(str(exc))
print(json.dumps(out))
"""


@pytest.mark.parametrize("side", ["predictions", "truth"])
@pytest.mark.parametrize("matched", [True, False])
def test_duplicated_keys_get_the_same_error(side, matched, tmp_path):
    import json
    import subprocess
    import sys

    pred, truth = binary_frames(300, 7)
    frames = {"predictions": pred, "truth": truth}
    df = frames[side]
    dup = df.head(2).with_columns(pl.lit(10**9 if not matched else df["id"][0],
                                         dtype=df.schema["id"]).alias("id"))
    frames[side] = pl.concat([df, dup])
    for name, frame in frames.items():
        frame.write_parquet(tmp_path / f"{name}.parquet")
    proc = subprocess.run([sys.executable, "-c", DUPLICATES_BOTH_ENGINES, str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=True)
    messages = json.loads(proc.stdout)
    assert messages[0] is not None and messages[0] == messages[1]
    assert "duplicated key" in messages[0] and side in messages[0]


def test_unmatched_error_is_the_same():
    pred, truth = binary_frames(300, 8)
    messages = []
    for engine in ("polars", "streaming"):
        with pytest.raises(InputDataError) as err:
            evalcli.evaluate({"task": "binary", "engine": engine},
                             predictions=pred.head(290), truth=truth)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "only in" in messages[0]


def test_bad_rows_get_the_same_error():
    pred, truth = binary_frames(300, 9)
    truth = truth.with_columns(pl.when(pl.col("id") == pred["id"][5]).then(2)
                               .otherwise(pl.col("label")).alias("label"))
    messages = []
    for engine in ("polars", "streaming"):
        with pytest.raises(InputDataError) as err:
            evalcli.evaluate({"task": "binary", "engine": engine}, predictions=pred, truth=truth)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "0 and 1" in messages[0]


def test_one_file_agrees():
    pred, truth = binary_frames(2000, 10)
    report = both_engines({"task": "binary"}, pred.join(truth, on="id"))
    assert report["alignment"]["matched"] == 2000


def test_regression_engines_agree():
    rng = np.random.default_rng(11)
    n = 3000
    y = rng.normal(50, 20, n).round(1)
    pred = pl.DataFrame({"id": np.arange(n), "prediction": (y + rng.normal(0, 5, n)).round(0)})
    truth = pl.DataFrame({"id": np.arange(n), "label": y}).sample(fraction=1.0, shuffle=True,
                                                                 seed=1)
    both_engines({"task": "regression"}, pred, truth)


def test_multiclass_engines_agree():
    rng = np.random.default_rng(12)
    n = 3000
    label = rng.integers(0, 5, n)
    pred = pl.DataFrame({"id": np.arange(n),
                         "prediction": np.where(rng.random(n) < 0.6, label,
                                                rng.integers(0, 5, n))})
    truth = pl.DataFrame({"id": np.arange(n), "label": label}).sample(fraction=1.0,
                                                                      shuffle=True, seed=2)
    both_engines({"task": "multiclass", "metrics": [
        "accuracy", "precision", "f1[average=micro]", "recall[average=weighted]",
        "cohen_kappa", "mcc", "balanced_accuracy", "confusion_matrix"]}, pred, truth)


def test_multilabel_engines_agree():
    rng = np.random.default_rng(13)
    n = 2000
    names = np.array(["a", "b", "c", "d", "e"])

    def sets(bits: np.ndarray) -> list[str]:
        return ["|".join(names[row]) for row in bits]

    t = rng.random((n, 5)) < 0.3
    p = t ^ (rng.random((n, 5)) < 0.1)
    pred = pl.DataFrame({"id": np.arange(n), "prediction": sets(p)})
    truth = pl.DataFrame({"id": np.arange(n), "label": sets(t)}).reverse()
    both_engines({"task": "multilabel"}, pred, truth)


def test_ranking_engines_agree():
    rng = np.random.default_rng(15)
    queries, items = 60, 12
    q = np.repeat(np.arange(queries), items)
    it = rng.integers(0, 40, queries * items) + 1000 * q  # unique within a query
    it = np.unique(np.stack([q, it], 1), axis=0)
    pred = pl.DataFrame({"query": it[:, 0], "item": it[:, 1],
                         "score": rng.random(len(it)).round(1)})  # ties
    rel = pred.sample(fraction=0.25, seed=3).select("query", "item")
    extra = pl.DataFrame({"query": [queries + 1, queries + 1], "item": [1, 2]})  # unjudged...
    truth = pl.concat([rel, extra, pl.DataFrame({"query": [0], "item": [999_999]})]
                      ).with_columns(pl.Series("relevance", rng.integers(0, 4, rel.height + 3)))
    cfg = {"task": "ranking", "metrics": [
        "precision@5", "recall@5", "ndcg@5", "map", "mrr", "hit_rate@3", "r_precision", "auc",
        "dcg@5", "micro_recall@5"]}
    report = both_engines(cfg, pred, truth.sample(fraction=1.0, shuffle=True, seed=4))
    assert report["alignment"]["only_in_truth"] > 0
    both_engines({**cfg, "options": {"compat": "ranx"}}, pred, truth)


def test_ranking_trec_eval_options_engines_agree():
    """trec_eval's -M and -J, with a query whose retrieved items are all unjudged."""
    pred = pl.DataFrame({"query": [1, 1, 1, 2, 2, 3], "item": [1, 2, 3, 4, 5, 6],
                         "score": [0.9, 0.6, 0.5, 0.3, 0.2, 0.1]})
    truth = pl.DataFrame({"query": [1, 1, 1, 2, 3], "item": [2, 3, 9, 7, 6],
                          "relevance": [1, 1, 0, 1, 1]})
    report = both_engines({"task": "ranking", "metrics": ["map", "num_ret", "num_q", "ndcg"],
                           "options": {"compat": "trec_eval", "judged_only": True,
                                       "max_per_query": 2}}, pred, truth)
    values = {m["id"]: m["value"] for m in report["metrics"]}
    # query 1 keeps items 1 and 2 (-M), then 2 alone (-J); query 2 is scored with nothing left
    assert values["num_q"] == 3 and values["num_ret"] == 2


def test_auto_engine_streams_above_the_threshold(tmp_path, monkeypatch):
    pred, truth = binary_frames(1000, 14)
    pred.write_parquet(tmp_path / "p.parquet")
    truth.write_csv(tmp_path / "t.csv")
    cfg = {"task": "binary", "predictions": str(tmp_path / "p.parquet"),
           "truth": str(tmp_path / "t.csv")}
    small = evalcli.evaluate(cfg, gating=False)
    monkeypatch.setattr(engine_base, "STREAMING_BYTES", 1000)
    big = evalcli.evaluate(cfg, gating=False)
    assert (small.engine, big.engine) == ("polars", "streaming")
    assert _same(_report(small), _report(big))


def test_materialize_keeps_the_schema_and_proves_the_keys_unique():
    pred = pl.LazyFrame({"id": [5, 1, 3], "score": [0.5, 0.1, 0.3]})
    truth = pl.LazyFrame({"id": [3, 5, 9], "label": [1, 0, 1]})
    lazy = pred.join(truth, on="id", validate="1:1").with_columns(pl.lit(1.0).alias("weight"))
    inputs = Inputs(Source("p.csv"), Source("t.csv"), {}, ["id"])
    a = Aligned(lazy, frozenset({"score", "label"}), dict(lazy.collect_schema()), {}, ["id"], [],
                pred, truth, pred, truth, inputs)
    m = materialize(a)
    assert m.schema == a.schema
    assert m.lf.collect().sort("id").equals(lazy.collect().sort("id"))
    assert m.pred_rows.collect().height == 3 and m.truth_rows is not None


@pytest.mark.parametrize("nulls", [False, True])
def test_materialize_full_join_flags_rows_as_the_lazy_join(nulls):
    pred = pl.LazyFrame({"q": [2, 1, 1, 3], "i": [7, 9, 8, 1], "score": [0.1, 0.2, 0.3, 0.4]})
    truth = pl.LazyFrame({"q": [1, 2, 4, None if nulls else 5], "i": [9, 6, 1, 1],
                          "rel": [1, 2, 3, 1]})
    keys = ["q", "i"]
    lazy = pred.with_columns(pl.lit(True).alias("__in_predictions")).join(
        truth.with_columns(pl.lit(True).alias("__in_truth")), on=keys, how="full",
        coalesce=True, validate="1:1").with_columns(pl.lit(1.0).alias("weight"))
    inputs = Inputs(Source("p.csv"), Source("t.csv"), {}, keys)
    a = Aligned(lazy, frozenset({"score"}), dict(lazy.collect_schema()), {}, keys, [], pred,
                truth, pred, truth, inputs)
    m = materialize(a, "full")
    assert m is not a and m.schema == a.schema
    # a null key matches nothing: the sorted merge, whose rows are not in file order
    assert m.file_order is not nulls
    order = [*keys, "score", "rel"]
    assert m.lf.collect().sort(order).equals(lazy.collect().sort(order))


def _full_join(pred: pl.LazyFrame, truth: pl.LazyFrame, keys: list[str]
               ) -> tuple[Aligned, pl.LazyFrame]:
    """Ranking's inputs aligned by the lazy full join (flagged as the engine flags it), and
    that join."""
    lazy = pred.with_columns(pl.lit(True).alias("__in_predictions")).join(
        truth.with_columns(pl.lit(True).alias("__in_truth")), on=keys, how="full",
        coalesce=True, validate="1:1")
    a = Aligned(lazy, frozenset({"score"}), dict(lazy.collect_schema()), {}, keys, [], pred,
                truth, pred, truth, Inputs(Source("p.csv"), Source("t.csv"), {}, keys))
    return a, lazy


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_full_join_in_place_equals_the_lazy_full_join(data):
    """Ranking's full join by looking keys up (no sort) gives the lazy full join's rows, with
    the predictions in their order; a repeated prediction key takes the sorted path (which
    leaves the join unchanged when no policy keeps one row)."""
    n = data.draw(st.integers(1, 30))
    pairs = st.tuples(st.integers(-3, 3), st.integers(-(2**20), 2**20))
    pk = data.draw(st.lists(pairs, min_size=n, max_size=n))
    tk = data.draw(st.lists(st.one_of(st.sampled_from(pk), pairs), min_size=1, max_size=30,
                            unique=True))
    pred = pl.LazyFrame({"q": [q for q, _ in pk], "i": [i for _, i in pk],
                         "score": [float(x) for x in range(n)]})
    truth = pl.LazyFrame({"q": [q for q, _ in tk], "i": [i for _, i in tk],
                          "rel": [len(tk) - x for x in range(len(tk))],
                          "tags": [[x] * (x % 3) for x in range(len(tk))],
                          "note": [None if x % 2 else str(x) for x in range(len(tk))]})
    keys = ["q", "i"]
    a, lazy = _full_join(pred, truth, keys)
    m = materialize(a, "full")
    if len(set(pk)) < n:
        assert m is a and not m.file_order
        return
    got = m.lf.collect()
    assert got.schema == lazy.collect_schema()
    assert got.head(n)["score"].to_list() == [float(x) for x in range(n)]  # in file order
    assert m.file_order  # (ranking's ties: input then ranks the score alone)
    order = [*keys, "score", "rel"]
    assert got.sort(order).equals(lazy.collect().sort(order))


def test_full_join_in_place_keeps_the_files_chunks():
    """Columns read in several chunks beside a row index in one, and the truth's columns placed
    at the matched rows: the joined frame's columns end their chunks at the same rows, so its
    next operation does not copy it into one chunk (and the rows are the lazy join's)."""
    parts = [pl.DataFrame({"q": [q] * 3, "i": [1, 2, 3], "score": [0.1, 0.2, 0.3]})
             for q in range(4)]
    pred_df = pl.concat(parts, rechunk=False).with_columns(
        pl.Series("__pos", range(12), dtype=pl.UInt32))
    assert len({tuple(s.chunk_lengths()) for s in pred_df.get_columns()}) == 2
    pred = pred_df.lazy()
    truth = pl.LazyFrame({"q": [3, 0, 9], "i": [2, 1, 1], "rel": [2, 1, 3],
                          "note": ["a", None, "c"]})
    keys = ["q", "i"]
    a, lazy = _full_join(pred, truth, keys)
    got = materialize(a, "full").lf.collect(engine="in-memory")
    assert len({tuple(s.chunk_lengths()) for s in got.get_columns()}) == 1
    assert got["score"].chunk_lengths()[:4] == [3, 3, 3, 3]  # the file's chunks, not copied
    order = [*keys, "score", "rel"]
    assert got.sort(order).equals(lazy.collect().sort(order))


def test_sorted_merge_only_for_strictly_increasing_keys():
    from evalcli.engine.align import sorted_merge

    def aligned(pk: list[int], tk: list[int]) -> Aligned:
        pred = pl.LazyFrame({"id": pk, "score": [0.5] * len(pk)})
        truth = pl.LazyFrame({"id": tk, "label": [1] * len(tk)})
        lazy = pred.join(truth, on="id", validate="1:1")
        return Aligned(lazy, frozenset(), dict(lazy.collect_schema()), {}, ["id"], [], pred,
                       truth, pred, truth, Inputs(Source("p.csv"), Source("t.csv"), {}, ["id"]))

    a = aligned([1, 2, 5], [2, 5, 9])
    assert sorted_merge(a) is not a
    assert sorted_merge(a).lf.collect(engine="streaming")["id"].to_list() == [2, 5]
    for pk, tk in (([2, 1, 5], [2, 5, 9]), ([1, 2, 2], [2, 5, 9]), ([1, 2, 5], [9, 5, 2]),
                   ([None, 1, 2], [2, 5, 9]), ([1, 2, 5], [2, None, 9])):
        b = aligned(pk, tk)
        assert sorted_merge(b) is b  # unsorted, duplicated or null: the validated hash join
    assert sorted_merge(a, "full") is a


@pytest.mark.parametrize("how", ["inner", "full"])
def test_text_keys_sharing_a_hash_fall_back_to_the_exact_join(monkeypatch, how):
    """Text keys are sorted by their hash; keys whose hashes collide never match by mistake."""
    pred = pl.LazyFrame({"id": ["a", "bb", "ccc"], "score": [0.1, 0.2, 0.3]})
    truth = pl.LazyFrame({"id": ["x", "yy", "ccc"], "label": [1, 0, 1]})
    lazy = pred.join(truth, on="id", validate="1:1")
    if how == "full":
        lazy = pred.with_columns(pl.lit(True).alias("__in_predictions")).join(
            truth.with_columns(pl.lit(True).alias("__in_truth")), on="id", how="full",
            coalesce=True, validate="1:1")
    a = Aligned(lazy, frozenset(), dict(lazy.collect_schema()), {}, ["id"], [], pred, truth,
                pred, truth, Inputs(Source("p.csv"), Source("t.csv"), {}, ["id"]))
    assert materialize(a, how).lf.collect().sort("id").equals(lazy.collect().sort("id"))
    # a "hash" of the length: a/x, bb/yy collide across the sides, never within one
    monkeypatch.setattr(pl.Expr, "hash", lambda self, *_, **__: self.str.len_bytes()
                        .cast(pl.UInt64))
    assert materialize(a, how) is a


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_packed_sort_equals_polars_sort(data):
    """Sorting integer rows packed into one Int64 gives Polars' sort, for keys and payloads of
    any sign and width (constants, booleans, small types), and declines what cannot fit."""
    from evalcli.engine.align import _sorted_packed

    n = data.draw(st.integers(1, 40))
    ids = data.draw(st.lists(st.integers(-(2**40), 2**40), min_size=n, max_size=n, unique=True))
    label = data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    flag = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    df = pl.DataFrame({"label": pl.Series(label, dtype=pl.Int8), "id": ids,
                       "flag": flag, "const": [7] * n})
    got = _sorted_packed(df, "id")
    assert got is not None
    assert got.equals(df.sort("id"))
    assert got.schema == df.schema
    wide = df.with_columns(big=pl.Series([0, 2**62] * n)[:n])  # 63 bits for one column
    assert (_sorted_packed(wide, "id") is None) == (n > 1)
    assert _sorted_packed(df.with_columns(x=pl.lit(0.5)), "id") is None
