"""Regenerate the bundled ranking and extreme multi-label sample data.

    python sample_data/make_ranking_samples.py

Ranking (a small recommender): 40 users (queries ``u01``…), a catalog of 120 items (``i001``…)
with 6-dimensional feature vectors, graded relevance 0–3 (0 = judged not relevant), and 15
scored recommendations per user (scores rounded to two decimals, so some tie). The model's
score follows the item's hidden affinity for the user, plus noise. On purpose:

- ``u39`` is judged but has no relevant item; ``u40`` has relevant items but no predictions;
  ``u41`` has predictions but no judgments (the policies ``no_relevant``, ``missing`` and
  ``unjudged`` decide what they count for);
- the same run is written as Parquet (``ranking_predictions``, ``ranking_truth``), as TREC files
  (``ranking.run``, ``ranking.qrels``) and as one list column per user in rank order
  (``ranking_lists.jsonl``).

Extreme multi-label (``xmc_*``): 300 documents, 2,000 labels, 1–6 true labels per document, and
the model's top 10 labels per document with their scores. Evaluated as ranking: the document is
the query, the label the item (configs/xmc-quickstart.yaml).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).parent
SEED = 11
N_USERS, N_ITEMS, DIM, N_REC = 40, 120, 6, 15


def _ids(prefix: str, n: int, width: int) -> list[str]:
    return [f"{prefix}{i:0{width}d}" for i in range(1, n + 1)]


def ranking() -> None:
    rng = np.random.default_rng(SEED)
    users, items = _ids("u", N_USERS + 1, 2), _ids("i", N_ITEMS, 3)
    item_vec = rng.normal(size=(N_ITEMS, DIM))
    user_vec = rng.normal(size=(N_USERS + 1, DIM))
    affinity = user_vec @ item_vec.T  # hidden truth
    pred_rows, truth_rows = [], []
    for u, user in enumerate(users):
        aff = affinity[u]
        # judged items: the 6 with the highest affinity graded by it, 6 random others at 0
        top = np.argsort(-aff)[:6]
        others = rng.choice(np.setdiff1d(np.arange(N_ITEMS), top), size=6, replace=False)
        if user == "u39":  # judged, nothing relevant
            top = np.array([], dtype=int)
        for rank, j in enumerate(top):
            truth_rows.append((user, items[j], 3 - rank // 2))  # grades 3, 3, 2, 2, 1, 1
        for j in others:
            truth_rows.append((user, items[j], 0))
        if user == "u40":  # relevant items, no predictions
            continue
        noisy = aff + rng.normal(scale=1.8, size=N_ITEMS)
        for j in np.argsort(-noisy)[:N_REC]:
            pred_rows.append((user, items[j], round(float(1 / (1 + np.exp(-noisy[j] / 3))), 2)))
    truth = pl.DataFrame(truth_rows, schema=["query", "item", "relevance"], orient="row")
    truth = truth.filter(pl.col("query") != "u41")  # predictions but no judgments
    preds = pl.DataFrame(pred_rows, schema=["query", "item", "score"], orient="row")
    preds = preds.with_columns(pl.col("score").cast(pl.Float64))
    preds = preds.sort(["query", "score", "item"], descending=[False, True, False])
    # a segment column: two user cohorts
    cohort = pl.DataFrame({"query": users, "cohort": ["new" if i % 3 == 0 else "returning"
                                                      for i in range(len(users))]})
    preds = preds.join(cohort, on="query", how="left")
    preds.write_parquet(HERE / "ranking_predictions.parquet")
    truth.write_parquet(HERE / "ranking_truth.parquet")

    run = preds.with_columns(
        pl.lit("Q0").alias("q0"),
        pl.int_range(1, pl.len() + 1).over("query").alias("rank"),
        pl.lit("sample").alias("tag"),
    )
    with open(HERE / "ranking.run", "w", encoding="utf-8") as fh:
        for q, it, rank, score in run.select("query", "item", "rank", "score").iter_rows():
            fh.write(f"{q} Q0 {it} {rank} {score:.2f} sample\n")
    with open(HERE / "ranking.qrels", "w", encoding="utf-8") as fh:
        for q, it, rel in truth.iter_rows():
            fh.write(f"{q} 0 {it} {rel}\n")

    lists = preds.group_by("query", maintain_order=True).agg(pl.col("item").alias("item"))
    lists.write_ndjson(HERE / "ranking_lists.jsonl")

    pl.DataFrame({"item": items}).write_parquet(HERE / "ranking_items.parquet")
    pl.DataFrame({"item": items, "features": [list(map(float, np.round(v, 4)))
                                              for v in item_vec]}).write_parquet(
        HERE / "ranking_item_features.parquet")


def ranking_candidate() -> None:
    """A second system on the same users and truth (issue 13's paired comparison): the same
    hidden affinities scored with less noise, ``ranking_predictions_candidate.parquet``."""
    rng = np.random.default_rng(SEED)
    users, items = _ids("u", N_USERS + 1, 2), _ids("i", N_ITEMS, 3)
    item_vec = rng.normal(size=(N_ITEMS, DIM))
    user_vec = rng.normal(size=(N_USERS + 1, DIM))
    affinity = user_vec @ item_vec.T
    noise = np.random.default_rng(SEED + 1)
    rows = []
    for u, user in enumerate(users):
        if user == "u40":
            continue
        noisy = affinity[u] + noise.normal(scale=1.3, size=N_ITEMS)
        for j in np.argsort(-noisy)[:N_REC]:
            rows.append((user, items[j], round(float(1 / (1 + np.exp(-noisy[j] / 3))), 2)))
    preds = pl.DataFrame(rows, schema=["query", "item", "score"], orient="row").with_columns(
        pl.col("score").cast(pl.Float64)).sort(["query", "score", "item"],
                                               descending=[False, True, False])
    preds.write_parquet(HERE / "ranking_predictions_candidate.parquet")


def xmc() -> None:
    rng = np.random.default_rng(SEED + 1)
    n_docs, n_labels, top = 300, 2000, 10
    docs, labels = _ids("doc", n_docs, 4), _ids("L", n_labels, 4)
    popularity = rng.zipf(1.6, size=n_labels).astype(float)
    p = popularity / popularity.sum()
    truth_rows, pred_rows = [], []
    for d, doc in enumerate(docs):
        true = rng.choice(n_labels, size=int(rng.integers(1, 7)), replace=False, p=p)
        for j in true:
            truth_rows.append((doc, labels[j]))
        score = rng.random(n_labels) * 0.6 + p * 50
        score[true] += rng.random(len(true)) * 0.9
        for j in np.argsort(-score)[:top]:
            pred_rows.append((doc, labels[j], round(float(score[j]), 4)))
        del d
    pl.DataFrame(truth_rows, schema=["example", "label"], orient="row").write_parquet(
        HERE / "xmc_labels.parquet")
    pl.DataFrame(pred_rows, schema=["example", "label", "score"], orient="row").write_parquet(
        HERE / "xmc_scores.parquet")


if __name__ == "__main__":
    ranking()
    ranking_candidate()
    xmc()
