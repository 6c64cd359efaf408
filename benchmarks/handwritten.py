#!/usr/bin/env python3
"""The honest anchor: what a user who doubts evalcli's speed writes by hand in Polars.

    python benchmarks/handwritten.py binary PREDICTIONS.parquet [TRUTH.parquet]
    python benchmarks/handwritten.py ranking PREDICTIONS.parquet TRUTH.parquet

Prints the values as JSON under evalcli's metric ids, so the benchmark checks them against
evalcli's before it times anything. It reads, joins and computes, and checks nothing (no
duplicate keys, nulls, label values or tie policy): evalcli does all of that, and issue 14's
target is that it is no slower than this. Written for evalcli's benchmark from the definitions
(the reference scripts in ``../shared/bench/`` compute the same numbers).

- binary: auroc (tied scores count half), average_precision (step-wise, as scikit-learn),
  log_loss (probabilities clipped at 1e-15), and precision, recall and f1 of the ``prediction``
  column (score >= 0.5 without one).
- ranking: ndcg@10 (linear gain, log2 discount), map@100 (over all relevant items), mrr,
  precision@10 and recall@10, ranked by descending score with ties in file order (ranx's
  order; evalcli's ``compat: ranx``), averaged over the queries of the truth that have a
  relevant item (a query without predictions scores 0).
"""

from __future__ import annotations

import json
import sys

import polars as pl


def binary(pred: str, truth: str | None) -> dict[str, float]:
    lf = pl.scan_parquet(pred)
    if truth:
        lf = lf.drop("label", strict=False).join(pl.scan_parquet(truth).select("id", "label"),
                                                 on="id")
    y, s = pl.col("label").cast(pl.Float64), pl.col("score")
    names = lf.collect_schema().names()
    hard = pl.col("prediction") == 1 if "prediction" in names else s >= 0.5
    per_score = (lf.group_by("score").agg(pos=y.sum(), neg=(1.0 - y).sum())
                 .sort("score", descending=True)
                 .with_columns(tp=pl.col("pos").cum_sum(), fp=pl.col("neg").cum_sum()))
    curve = per_score.select(
        auc_num=(pl.col("neg") * (pl.col("tp") - 0.5 * pl.col("pos"))).sum(),
        ap_num=(pl.col("pos") * pl.col("tp") / (pl.col("tp") + pl.col("fp"))).sum(),
        p=pl.col("pos").sum(), n=pl.col("neg").sum())
    eps = 1e-15
    sums = lf.select(
        ll=-(y * s.clip(eps, 1 - eps).log() + (1 - y) * (1 - s.clip(eps, 1 - eps)).log()).mean(),
        tp=(hard & (y == 1)).sum(), pp=hard.sum(), pos=(y == 1).sum())
    c, m = (df.row(0, named=True) for df in pl.collect_all([curve, sums]))
    precision, recall = m["tp"] / m["pp"], m["tp"] / m["pos"]
    return {"auroc": c["auc_num"] / (c["p"] * c["n"]), "average_precision": c["ap_num"] / c["p"],
            "log_loss": m["ll"], "precision": precision, "recall": recall,
            "f1": 2 * precision * recall / (precision + recall)}


def ranking(pred: str, truth: str, k: int = 10, k_map: int = 100) -> dict[str, float]:
    q = "query"
    run = (pl.scan_parquet(pred).select(q, "item", "score")
           .with_columns(rank=pl.col("score").rank("ordinal", descending=True).over(q)))
    qrels = pl.scan_parquet(truth).select(q, "item", "relevance").filter(pl.col("relevance") > 0)
    rank, rel = pl.col("rank"), pl.col("relevance")
    found = (run.join(qrels, on=[q, "item"]).sort(q, "rank")
             .with_columns(nth=pl.int_range(1, pl.len() + 1).over(q))
             .group_by(q).agg(
                 dcg=(rel / (rank + 1).log(2)).filter(rank <= k).sum(),
                 hits=(rank <= k).sum(),
                 rr=1.0 / rank.min(),
                 ap=(pl.col("nth") / rank).filter(rank <= k_map).sum()))
    ideal = (qrels.with_columns(at=rel.rank("ordinal", descending=True).over(q))
             .group_by(q).agg(r=pl.len(), idcg=(rel / (pl.col("at") + 1).log(2))
                              .filter(pl.col("at") <= k).sum()))
    v = (ideal.join(found, on=q, how="left")
         .with_columns(pl.col("dcg", "hits", "rr", "ap").fill_null(0))
         .select(ndcg=pl.col("dcg") / pl.col("idcg"), map=pl.col("ap") / pl.col("r"),
                 mrr=pl.col("rr"), p=pl.col("hits") / k, r=pl.col("hits") / pl.col("r"))
         .mean().collect().row(0, named=True))
    return {f"ndcg@{k}": v["ndcg"], f"map@{k_map}": v["map"], "mrr": v["mrr"],
            f"precision@{k}": v["p"], f"recall@{k}": v["r"]}


METRICS = {"binary": ("auroc", "average_precision", "log_loss", "precision", "recall", "f1"),
           "ranking": ("ndcg@10", "map@100", "mrr", "precision@10", "recall@10")}
"""The metrics each script computes (evalcli's ids)."""


def main() -> None:
    family, pred = sys.argv[1], sys.argv[2]
    truth = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != "-" else None
    if family == "binary":
        out = binary(pred, truth)
    elif family == "ranking" and truth:
        out = ranking(pred, truth)
    else:
        raise SystemExit(f"handwritten.py: no script for {family}")
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
