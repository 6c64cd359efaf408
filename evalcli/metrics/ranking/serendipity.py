"""Serendipity: how unlike a user's past the recommended items are, optionally counting only
what is relevant (Zhang et al., Auralist, WSDM 2012, as recommenders' ``user_item_serendipity``,
``user_serendipity`` and ``serendipity`` define it).

Per user u and recommended item i: ``s(u, i) = (1 − mean_{j in H(u)} sim(i, j)) · rel(u, i)``,
``H(u)`` the items u interacted with in the ``train_file``, ``rel`` 1 or the truth's relevance
(``weighting``); the user's value is the mean of ``s`` over the top k, the metric the mean over
users (each user's value is in the per-query table, ``per_query:``; with k = 1 it is
recommenders' user-item serendipity of the first item). Users without a history are left out.

>>> from evalcli.metrics.ranking.serendipity import METRICS
>>> [m.name for m in METRICS]
['serendipity']
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalcli.metrics.base import Context, Metric, MetricValue, Param, Params, Stat, StatValues
from evalcli.metrics.ranking.beyond import LOCAL, top_rows
from evalcli.metrics.ranking.conventions import (
    COMPAT,
    K_REQUIRED,
    TIES,
    conventions_text,
    effective,
)
from evalcli.metrics.ranking.frame import IT, Q, seg_cols
from evalcli.metrics.ranking.side import (
    SIMILARITY,
    pair_similarity,
    similarity_source,
    train_pairs,
)
from evalcli.metrics.ranking.stats import (
    T_INTERVAL_DOC,
    query_stat,
    ratio_rows,
    t_interval_of,
    value_of,
)
from evalcli.metrics.ranking.task import FAMILY
from evalcli.metrics.stats import in_order_sum

c = pl.col
NAME = "serendipity"

WEIGHTING = Param(
    "weighting", str, "none",
    "what multiplies each item's unexpectedness: none (1, as recommenders without "
    "col_relevance) or relevance (the truth's relevance of the item for the user, 0 when "
    "unjudged: recommenders' relevance-weighted serendipity, with col_relevance)",
    choices=("none", "relevance"),
)


def _stats(params: Params, ctx: Context) -> Sequence[Stat]:
    conv = effective(params, ctx, [TIES])
    conv["relevance_threshold"] = 1.0
    k = int(params["k"])
    mode, source = similarity_source(params, ctx, NAME)
    weighted = params["weighting"] == "relevance"

    def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        segs = seg_cols(lf)
        top = top_rows(ctx, lf, conv, k).select(Q, IT, "p", "g", "pos", "weight", *segs)
        history = train_pairs(ctx, lf, NAME).rename({IT: "item_b"})
        pairs = top.select(Q, c(IT).alias("item_a")).join(history, on=Q)
        sim = pair_similarity(ctx, lf, mode, pairs, NAME)
        per_item = sim.group_by(Q, "item_a").agg(
            (in_order_sum(c("similarity").fill_null(0.0), "item_b") / pl.len()).alias("msim"),
            c("similarity").is_null().sum().alias("missing"),
            (c("item_a") == c("item_b")).any().alias("seen"),
        ).rename({"item_a": IT})
        rows = top.join(per_item, on=[Q, IT], how="left")
        unexpected = 1.0 - c("msim")
        s = unexpected * c("g") if weighted else unexpected
        has = c("msim").is_not_null()
        pq = rows.group_by(Q).agg(
            in_order_sum((c("p") * s).filter(has), c("pos").filter(has)).alias("num"),
            in_order_sum(c("p").filter(has), c("pos").filter(has)).alias("den"),
            c("missing").sum().alias("missing"),
            (c("seen").fill_null(False) & (c("p") > 0)).sum().alias("seen"),
            c("weight").max().alias("w"),
            *(c(x).max().alias(x) for x in segs),
        )
        return ratio_rows(pq, keys, "missing", "seen")

    extra = f"{{similarity={source},weighting={params['weighting']}}}"
    return [query_stat(NAME, k, conv, per_query,
                       {"n_missing_pairs": lambda: c("missing").sum(),
                        "n_seen": lambda: c("seen").sum()},
                       key_extra=extra)]


def _value(stats: StatValues, params: Params) -> MetricValue:
    df: pl.DataFrame = next(iter(stats.values()))
    mv = value_of(stats, None)
    mv.notes = [n.replace("where the value is undefined", "without a training history "
                          "(no row in the train_file)") for n in mv.notes]
    if df.height:
        if df["n_missing_pairs"][0]:
            n = int(df["n_missing_pairs"][0])
            mv.details["pairs_without_similarity"] = n
            mv.notes.append(f"{n} (recommended, past) item pairs have no similarity (not in "
                            "the table, or no features): similarity 0")
        if df["n_seen"][0]:
            n = int(df["n_seen"][0])
            mv.details["recommended_in_history"] = n
            mv.notes.append(f"{n} recommended items are in the user's training history "
                            "(similarity 1 with themselves; recommenders refuses such lists)")
    return mv


METRICS: list[Metric] = [
    Metric(
        name=NAME, family=FAMILY,
        summary="how unlike each user's past interactions the recommended items are "
        "(optionally only the relevant ones), mean over users",
        formula="serendipity@k = mean over users u with a history H(u) of mean_{i in top_k(u)} "
        "(1 − mean_{j in H(u)} sim(i, j)) · rel(u, i); rel = 1 (weighting=none) or the "
        "truth's relevance (weighting=relevance)",
        direction="higher", needs=(), stats=_stats, value=_value,
        interval=t_interval_of, interval_doc=T_INTERVAL_DOC,
        params=(K_REQUIRED, SIMILARITY, WEIGHTING, TIES.param, COMPAT),
        conventions="H(u): the user's items in the train_file option (required). Similarity "
        "(parameter similarity): cooccurrence (recommenders' default: the cosine of the items' "
        "co-occurrence in the train_file, 0 for items nobody shares), features (cosine of the "
        "item_features_file vectors) or table (the similarity_file); auto takes the first of "
        "item_features_file, similarity_file, train_file that is set. A pair without a value "
        "(no features, not in the table) counts 0, with a count. Users without a training "
        "history are left out (recommenders' inner join drops them); a recommended item "
        "already in the history counts with similarity 1 to itself (recommenders refuses "
        "such input). With ties=average a row straddling k counts with its probability of "
        "being in the top k. Equals recommenders' serendipity (user_serendipity averaged over "
        "users) when k covers every list. " + conventions_text([TIES]),
        peer="recommenders' serendipity (Zhang et al., Auralist, WSDM 2012); weighting="
        "relevance is its col_relevance variant",
        aliases=("user_serendipity",), cutoff="k", range=(0.0, None), engines=LOCAL,
        example="""
        >>> import pathlib, tempfile
        >>> from evalcli import evaluate
        >>> train = pathlib.Path(tempfile.mkdtemp(), "train.csv")
        >>> _ = train.write_text("user,item\\n1,a\\n2,a\\n2,b\\n3,c\\n")
        >>> evaluate({"task": "ranking", "metrics": ["serendipity@1"],
        ...           "options": {"train_file": str(train)}},  # sim(b, a) = 1/√2
        ...          predictions={"query": [1, 3], "item": [["b"], ["a"]]}).values()
        {'serendipity@1': 0.6464466094067263}
        """,
    ),
]
