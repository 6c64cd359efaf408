"""Beyond-accuracy metrics of the ranking family: catalog coverage, novelty, intra-list
similarity and diversity, at a cut-off k.

They look at what is recommended, not at whether it is relevant, so the relevance policies do
not apply: every query of the predictions counts. Side inputs come from the task's options
(paths relative to the config's folder, see :mod:`.side`): ``items_file`` (the catalog),
``popularity_file``, ``item_features_file``, ``similarity_file`` or ``train_file`` (the training
interactions: popularity, catalog and co-occurrence similarity).

>>> from evalcli.metrics.ranking.beyond import METRICS
>>> [m.name for m in METRICS]
['catalog_coverage', 'novelty', 'intra_list_similarity', 'diversity']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import polars as pl

from evalcli.metrics.base import (
    Context,
    FrameStat,
    Metric,
    MetricValue,
    Param,
    Params,
    Stat,
    StatValues,
)
from evalcli.metrics.ranking.conventions import (
    COMPAT,
    K_REQUIRED,
    NOVELTY_AVERAGE,
    STRICT_TIES,
    THRESHOLD,
    TIES,
    conventions_text,
    effective,
)
from evalcli.metrics.ranking.frame import F64, IT, JUDGED, REL, Q, near_top, seg_cols
from evalcli.metrics.ranking.side import (
    SIMILARITY,
    TRAIN,
    features_long,
    item_counts,
    pair_similarity,
    side_columns,
    similarity_source,
    train_pairs,
)
from evalcli.metrics.ranking.stats import (
    T_INTERVAL_DOC,
    grouped_sums,
    keyed,
    query_stat,
    query_sum,
    ratio_rows,
    t_interval_of,
    value_of,
)
from evalcli.metrics.ranking.task import FAMILY
from evalcli.metrics.stats import as_full, in_order_sum, product01, sum_by

c = pl.col
LOCAL = frozenset({"polars", "streaming"})
"""These metrics read side files or need every query at once: in-process engines only."""


def _frames(ctx: Context) -> Mapping[str, pl.LazyFrame]:
    return ctx.frames


def _share(k: int) -> pl.Expr:
    """The probability that a row is in the top k (1 or 0 under a strict tie order)."""
    return (pl.lit(k, dtype=pl.Int64) - c("s")).clip(0, c("n")).cast(F64) / c("n").cast(F64)


def top_rows(ctx: Context, lf: pl.LazyFrame, conv: Mapping[str, Any], k: int) -> pl.LazyFrame:
    """The rows that may be in a query's top k, with ``p`` their probability of being there,
    ``g`` their relevance (0 when unjudged) and ``pos`` their order (see
    :func:`~evalcli.metrics.ranking.frame.near_top`)."""
    rows = near_top(ctx.memo, lf, conv["ties"], conv.get("relevance_threshold", 1.0), k)
    return rows.with_columns(_share(k).alias("p"))


def catalog_items(ctx: Context, lf: pl.LazyFrame, metric: str) -> pl.LazyFrame:
    """The catalog's items: the items_file, else the train_file's items, else every item of
    the truth and the predictions."""
    catalog = _frames(ctx).get("items_file")
    if catalog is not None:
        return side_columns(lf, catalog, [IT], "items", "items_file").select(IT).unique()
    if _frames(ctx).get(TRAIN) is not None:
        return train_pairs(ctx, lf, metric).select(IT).unique()
    return lf.select(IT).unique()


def catalog_source(ctx: Context) -> str:
    return str(ctx.options.get("items_file") or ctx.options.get(TRAIN) or "data")


CATALOG_TEXT = ("The catalog is the items_file option (column 'item'), else the items of the "
                "train_file option (as recommenders, whose catalog is the training data's "
                "items), else every item of the truth and the predictions.")


# --------------------------------------------------------------------------- catalog coverage

def _coverage_stats(params: Params, ctx: Context) -> Sequence[Stat]:
    conv = effective(params, ctx, [TIES])
    conv["relevance_threshold"] = 1.0
    k = int(params["k"])
    source = catalog_source(ctx)

    def build(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        top = top_rows(ctx, lf, conv, k)
        if conv["ties"] == "average":
            # P(the item is in no query's top k) = Π (1 − p) over its rows
            per_item = top.group_by([*keys, IT]).agg(product01(1.0 - c("p")).alias("miss"))
        else:  # every p is 1: a recommended item is never missed
            per_item = top.select(*keys, IT).unique().with_columns(
                pl.lit(0.0, dtype=F64).alias("miss"))
        if source == "data":  # the data's items: every recommended item is in the catalog
            n_items = lf.select(c(IT).n_unique().cast(pl.Int64).alias("n_catalog"))
            return per_item.with_columns(pl.lit(True).alias("in_catalog")).join(
                n_items, how="cross")
        items = catalog_items(ctx, lf, "catalog_coverage")
        n_items = items.select(pl.len().cast(pl.Int64).alias("n_catalog"))
        return (per_item.join(items.with_columns(pl.lit(True).alias("in_catalog")), on=IT,
                              how="left")
                .with_columns(c("in_catalog").fill_null(False))
                .join(n_items, how="cross"))

    def combine(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        return df.group_by([*keys, IT], maintain_order=True).agg(
            c("miss").product(), c("in_catalog").max(), c("n_catalog").max())

    key = keyed("catalog_coverage", k, conv, f"{{items={source}}}")
    return [FrameStat(key, build, combine)]


def _coverage_value(stats: StatValues, params: Params) -> MetricValue:
    df: pl.DataFrame = next(iter(stats.values()))
    if df.height == 0:
        return MetricValue(None, notes=["no recommendations"])
    inside = df.filter(c("in_catalog"))
    # exactly rounded: the table's rows come in any order
    covered = math.fsum(inside.select(1.0 - c("miss")).to_series().to_list())
    n_catalog = int(df["n_catalog"].max())  # type: ignore[arg-type]
    outside = int(df.filter(~c("in_catalog") & (c("miss") < 1.0)).height)
    details: dict[str, Any] = {"catalog_items": n_catalog, "covered_items": covered}
    notes = []
    if outside:
        details["recommended_outside_catalog"] = outside
        notes.append(f"{outside} recommended items are not in the catalog and are not counted")
    if n_catalog == 0:
        return MetricValue(None, details, [*notes, "the catalog is empty"])
    return MetricValue(covered / n_catalog, details, notes)


# --------------------------------------------------------------------------- novelty

def _popularity(lf: pl.LazyFrame, ctx: Context, thr: float) -> tuple[pl.LazyFrame, str]:
    """Item -> probability that a user interacted with it, and where it came from."""
    side = _frames(ctx).get("popularity_file")
    if side is not None:
        names = side.collect_schema().names()
        col = "probability" if "probability" in names else "count"
        pop = side_columns(lf, side, [IT, col], "popularity", "popularity_file")
        if col == "probability":
            prob = c("probability").cast(F64)
        else:
            prob = c("count").cast(F64) / as_full(c("count").cast(F64).sum(), c("count"))
        return pop.select(IT, prob.alias("prob")), str(ctx.options.get("popularity_file"))
    if _frames(ctx).get(TRAIN) is not None:  # recommenders' historical_item_novelty
        counts = item_counts(train_pairs(ctx, lf, "novelty"))
        return (counts.select(IT, (c("count") / as_full(c("count").sum(), c("count")))
                              .alias("prob")),
                str(ctx.options.get(TRAIN)))
    relevant = lf.filter(c(JUDGED) & (c(REL) >= thr)).select(Q, IT)
    users = relevant.select(c(Q).n_unique().cast(F64).alias("users"))
    pop = relevant.group_by(IT).agg(c(Q).n_unique().cast(F64).alias("n")).join(
        users, how="cross").select(IT, (c("n") / as_full(c("users"), c("n"))).alias("prob"))
    return pop, "truth"


def _novelty_rows(ctx: Context, lf: pl.LazyFrame, conv: Mapping[str, Any], k: int
                  ) -> pl.LazyFrame:
    """The top-k rows with ``info`` = −log2 p(i) (null when p(i) is unknown or 0)."""
    pop, _ = _popularity(lf, ctx, conv["relevance_threshold"])
    # sorted by query and position, an order the join keeps: each query's sums then add in
    # the rows' order, without a sort per query
    return top_rows(ctx, lf, conv, k).sort(Q, "pos").join(
        pop, on=IT, how="left", maintain_order="left").with_columns(
        pl.when(c("prob") > 0).then(-c("prob").log(2)).alias("info"))


ITEMS_PREFIX = "ranking_items."
"""The key prefix of the per-item tables (not a per-query statistic: see stats.value_of)."""


def _novelty_stats(params: Params, ctx: Context) -> Sequence[Stat]:
    conv = effective(params, ctx, [TIES, NOVELTY_AVERAGE])
    conv["relevance_threshold"] = float(params["relevance_threshold"])
    k = int(params["k"])

    def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        known = c("info").is_not_null()
        pq = _novelty_rows(ctx, lf, conv, k).group_by(Q).agg(
            in_order_sum((c("p") * c("info")).filter(known)).alias("num"),
            in_order_sum(c("p").filter(known)).alias("den"),
            in_order_sum(c("p")).alias("den_all"),
            (c("p") > 0).filter(~known).sum().alias("unknown"),
            c("weight").max().alias("w"),
            *(c(s).max().alias(s) for s in seg_cols(lf)),
        )
        return ratio_rows(pq, keys, "unknown", "num", "den_all")

    def items(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        rows = _novelty_rows(ctx, lf, conv, k)
        if conv["ties"] != "average":  # each p is 1: the sum is a count (exact as a float)
            return rows.group_by([*keys, IT, "info"]).agg(
                pl.len().cast(F64).alias("recommended"))
        return grouped_sums(rows, [*keys, IT, "info"], lambda: query_sum(c("p"), "recommended"))

    source = str(ctx.options.get("popularity_file") or ctx.options.get(TRAIN) or "truth")
    extra = f"{{popularity={source}}}"
    return [query_stat("novelty", k, conv, per_query,
                       {"n_unknown": lambda: c("unknown").sum(),
                        "pool_num": lambda: query_sum(c("num"), "pool_num"),
                        "pool_den": lambda: query_sum(c("den_all"), "pool_den")},
                       key_extra=extra),
            FrameStat(ITEMS_PREFIX + keyed("novelty", k, conv, extra), items,
                      partial(sum_by, by=[IT, "info"]), details_only=True)]


def _novelty_value(stats: StatValues, params: Params) -> MetricValue:
    key, df = next((key, v) for key, v in stats.items() if key.startswith("ranking."))
    pooled = "average=pooled" in key
    mv = value_of(stats, None, ("pool_num", "pool_den") if pooled else None)
    if pooled and mv.value is not None:
        mv.notes = [n for n in mv.notes if "undefined" not in n]
    if df.height and df["n_unknown"][0]:
        n = int(df["n_unknown"][0])
        mv.details["items_without_popularity"] = n
        how = "count 0 (in the denominator only, as recommenders)" if pooled else "are left out"
        mv.notes.append(f"{n} recommended (query, item) pairs have no popularity (never "
                        f"interacted with) and {how}")
    table = next((v for key, v in stats.items() if key.startswith(ITEMS_PREFIX)), None)
    if table is not None and table.height:
        listed = params.get("items_listed")
        items = table.filter(c("recommended") > 0).sort(
            ["recommended", IT], descending=[True, False], nulls_last=True)
        mv.details["recommended_items"] = items.height
        shown = items if listed is None else items.head(int(listed))
        if shown.height:
            mv.details["item_novelty"] = shown.select(
                IT, "recommended", c("info").alias("novelty")).to_dicts()
    return mv


# --------------------------------------------------------------------------- intra-list similarity

def _ils_per_query(ctx: Context, conv: Mapping[str, Any], k: int, mode: str, name: str
                   ) -> Callable[[pl.LazyFrame, list[str]], pl.LazyFrame]:
    features = _frames(ctx).get("item_features_file") if mode == "features" else None

    def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        segs = seg_cols(lf)
        top = top_rows(ctx, lf, conv, k).select(Q, IT, "pos", "weight", *segs)
        head = top.group_by(Q).agg(
            c("weight").max().alias("w"), *(c(s).max().alias(s) for s in segs))
        if features is not None:
            long = features_long(lf, features)
            have = long.select(IT).unique()
            rows = top.join(have, on=IT, how="semi")
            sums = rows.join(long, on=IT).group_by([Q, "dim"]).agg(
                in_order_sum(c("value"), "pos").alias("S"))
            per = sums.group_by(Q).agg(in_order_sum(c("S") ** 2, "dim").alias("sq")).join(
                rows.group_by(Q).agg(pl.len().cast(F64).alias("kk")), on=Q, how="right")
            per = per.with_columns(
                pl.when(c("kk") >= 2).then((c("sq").fill_null(0.0) - c("kk"))
                                           / (c("kk") * (c("kk") - 1.0))).alias("ils"),
                pl.lit(0, dtype=pl.Int64).alias("missing_pairs"))
            missing = top.join(have, on=IT, how="anti").group_by(Q).agg(
                pl.len().alias("no_features"))
            per = per.join(missing, on=Q, how="left")
        else:  # a table, or the co-occurrence in the training file (never missing: 0)
            a = top.select(Q, c(IT).alias("item_a"), c("pos").alias("pa"))
            b = top.select(Q, c(IT).alias("item_b"), c("pos").alias("pb"))
            pairs = pair_similarity(ctx, lf, mode, a.join(b, on=Q).filter(c("pa") < c("pb")),
                                    name)
            per = pairs.group_by(Q).agg(
                in_order_sum(c("similarity").fill_null(0.0), [c("pa"), c("pb")])
                .alias("sum_sim"),
                pl.len().cast(F64).alias("pairs"),
                c("similarity").is_null().sum().alias("missing_pairs"),
            ).with_columns((c("sum_sim") / c("pairs")).alias("ils"),
                           pl.lit(0, dtype=pl.UInt32).alias("no_features"))
        out = head.join(per.select(Q, "ils", "missing_pairs", "no_features"), on=Q, how="left")
        return out.select(
            Q, *keys, c("w").fill_null(1.0), pl.lit(False).alias("straddle"),
            c("missing_pairs").fill_null(0).cast(pl.Int64).alias("missing_pairs"),
            c("no_features").fill_null(0).cast(pl.Int64).alias("no_features"),
            pl.when(c("ils").is_not_null()).then(pl.lit("ok")).otherwise(pl.lit("undefined"))
            .alias("status"),
            c("ils").alias("ils"),
        )

    return per_query


def _ils_stats(diversity: bool) -> Callable[[Params, Context], Sequence[Stat]]:
    def stats(params: Params, ctx: Context) -> Sequence[Stat]:
        conv = effective(params, ctx, [STRICT_TIES])
        conv["relevance_threshold"] = 1.0
        k = int(params["k"])
        name = "diversity" if diversity else "intra_list_similarity"
        mode, source = similarity_source(params, ctx, name)
        inner = _ils_per_query(ctx, conv, k, mode, name)

        def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
            pq = inner(lf, keys)
            v = (1.0 - c("ils")) if diversity else c("ils")
            return pq.with_columns(v.alias("value"))

        return [query_stat(name, k, conv, per_query,
                           {"n_missing_pairs": lambda: c("missing_pairs").sum(),
                            "n_no_features": lambda: c("no_features").sum()},
                           key_extra=f"{{source={source}}}")]

    return stats


def _ils_value(stats: StatValues, params: Params) -> MetricValue:
    df: pl.DataFrame = next(iter(stats.values()))
    mv = value_of(stats, None)
    if df.height:
        if df["n_no_features"][0]:
            n = int(df["n_no_features"][0])
            mv.details["items_without_features"] = n
            mv.notes.append(f"{n} recommended (query, item) pairs have no feature vector (or a "
                            "zero one) and are left out")
        if df["n_missing_pairs"][0]:
            n = int(df["n_missing_pairs"][0])
            mv.details["pairs_without_similarity"] = n
            mv.notes.append(f"{n} item pairs are not in the similarity table: similarity 0")
    mv.notes = [n for n in mv.notes if "undefined" not in n] + [
        n.replace("the value is undefined", "the list has fewer than 2 items")
        for n in mv.notes if "undefined" in n]
    return mv


# --------------------------------------------------------------------------- declarations

_COMMON = "Every query of the predictions counts; relevance plays no part."
SIMILARITY_TEXT = (
    "Similarity (parameter similarity): features, the cosine of the item_features_file "
    "vectors (list column 'features' or numeric columns; items without features are left "
    "out); table, the similarity_file (item_a, item_b, similarity; symmetric, missing pairs "
    "count 0, with a note); cooccurrence, the cosine of the items' co-occurrence in the "
    "train_file, |U_a ∩ U_b| / (√|U_a|·√|U_b|) with U_i the users who interacted with i (two "
    "items nobody shares have similarity 0), as recommenders' item_cooccurrence_count. "
    "similarity=auto takes the first of item_features_file, similarity_file, train_file that "
    "is set.")
ITEMS_LISTED = Param(
    "items_listed", int, 20,
    "how many recommended items the details' item table lists (the most recommended first); "
    "null: every one", ge=0, nullable=True)

METRICS: list[Metric] = [
    Metric(
        name="catalog_coverage", family=FAMILY,
        summary="share of the catalog's items recommended in at least one query's top k",
        formula="coverage@k = |∪_q top_k(q) ∩ catalog| / |catalog|",
        direction="higher", needs=(), stats=_coverage_stats, value=_coverage_value,
        interval_doc="none: the share of the catalog the lists cover is not a sum over "
        "queries, so it does not resample (the report says so)",
        params=(K_REQUIRED, TIES.param, COMPAT),
        conventions=CATALOG_TEXT + " Items recommended outside the catalog are not counted "
        "(recommenders counts every recommended item in the numerator). With ties=average an "
        "item in a group of tied scores straddling k counts with its probability of being in "
        "the top k (the expected coverage). " + _COMMON + " " + conventions_text([TIES]),
        peer="catalog coverage (Ge et al. 2010; recommenders' catalog_coverage)",
        aliases=("coverage", "item_coverage"), cutoff="k", range=(0.0, 1.0), engines=LOCAL,
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "ranking", "metrics": ["catalog_coverage@1"]},
        ...          predictions={"query": [1, 2], "item": [["a", "b"], ["a", "c"]]},
        ...          truth={"query": [1], "item": ["d"]}).values()  # {a} of a, b, c, d
        {'catalog_coverage@1': 0.25}
        """,
    ),
    Metric(
        name="novelty", family=FAMILY,
        summary="mean self-information of the recommended items: how unpopular they are",
        formula="novelty@k = mean over queries of mean_{i in top_k(q)} −log2 p(i); p(i) = share "
        "of users who interacted with i; average=pooled: Σ_q Σ_{i in top_k(q)} −log2 p(i) / "
        "Σ_q |top_k(q)|",
        direction="higher", needs=(), stats=_novelty_stats, value=_novelty_value,
        interval=t_interval_of, interval_doc=T_INTERVAL_DOC,
        params=(K_REQUIRED, TIES.param, NOVELTY_AVERAGE.param, ITEMS_LISTED, THRESHOLD,
                COMPAT),
        conventions="p(i) comes from the popularity_file option (column 'probability', or "
        "'count' divided by the total count), else from the train_file option (the item's "
        "interactions divided by all interactions: recommenders' historical_item_novelty, the "
        "choice model of Castells et al. 2011), else from the truth: the share of queries for "
        "which i is relevant (relevance >= relevance_threshold). Items without popularity "
        "(never interacted with) are left out, with a count. The details list each recommended "
        "item's novelty −log2 p(i) (item_novelty: item, recommended = its expected number of "
        "top-k places, novelty; null without popularity), most recommended first. "
        "average=pooled with a train_file is recommenders' novelty exactly. " + _COMMON + " "
        + conventions_text([TIES, NOVELTY_AVERAGE]),
        peer="novelty as self-information (Zhou et al. 2010); recommenders' novelty "
        "(average=pooled, set by compat: recommenders)",
        aliases=("self_information",), cutoff="k", range=(0.0, None), engines=LOCAL,
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "ranking", "metrics": ["novelty@2"]},
        ...              predictions={"query": [1, 2], "item": [["a", "b"], ["b", "c"]]},
        ...              truth={"query": [1, 2, 2], "item": ["a", "a", "b"]})  # p(a) 1, p(b) 1/2
        >>> r.values(), r.metric("novelty@2").notes  # ((0 + 1) / 2 + 1) / 2: c has no p(c)
        ({'novelty@2': 0.75}, ['1 recommended (query, item) pairs have no popularity
          (never interacted with) and are left out'])
        """,
    ),
    Metric(
        name="intra_list_similarity", family=FAMILY,
        summary="mean pairwise similarity of the items of each query's top k (lower is more "
        "diverse)",
        formula="ILS@k = mean over queries of Σ_{i<j in top_k} sim(i, j) / C(k', 2); with "
        "features, sim is the cosine: (‖Σ u_i‖² − k') / (k'(k'−1)) for unit vectors u",
        direction="lower", needs=(), stats=_ils_stats(False), value=_ils_value,
        interval=t_interval_of, interval_doc=T_INTERVAL_DOC,
        params=(K_REQUIRED, SIMILARITY, STRICT_TIES.param, COMPAT),
        conventions=SIMILARITY_TEXT + " Queries with fewer than 2 items have no value. Ties are "
        "broken strictly (the expected similarity under random tie order is not computed). "
        + _COMMON + " " + conventions_text([STRICT_TIES]),
        peer="intra-list similarity (Ziegler et al. 2005); recommenders' diversity = 1 − ILS",
        aliases=("ils",), cutoff="k", range=(-1.0, 1.0), engines=LOCAL,
        example="""
        >>> import pathlib, tempfile
        >>> from evalcli import evaluate
        >>> features = pathlib.Path(tempfile.mkdtemp(), "features.csv")
        >>> _ = features.write_text("item,x,y\\na,1,0\\nb,1,0\\nc,0,1\\n")  # a and b alike
        >>> evaluate({"task": "ranking", "metrics": ["intra_list_similarity@3"],
        ...           "options": {"item_features_file": str(features)}},
        ...          predictions={"query": [1], "item": [["a", "b", "c"]]}).values()
        {'intra_list_similarity@3': 0.3333333333333333}
        """,
    ),
    Metric(
        name="diversity", family=FAMILY,
        summary="1 − intra-list similarity: mean pairwise dissimilarity of each top k",
        formula="diversity@k = mean over queries of 1 − ILS_q@k",
        direction="higher", needs=(), stats=_ils_stats(True), value=_ils_value,
        interval=t_interval_of, interval_doc=T_INTERVAL_DOC,
        params=(K_REQUIRED, SIMILARITY, STRICT_TIES.param, COMPAT),
        conventions="As intra_list_similarity: " + SIMILARITY_TEXT + " " + _COMMON,
        peer="recommenders' diversity (1 − intra-list similarity; its default similarity is "
        "similarity=cooccurrence with a train_file)",
        aliases=("intra_list_diversity",), cutoff="k", range=(0.0, 2.0), engines=LOCAL,
        example="""
        >>> import pathlib, tempfile
        >>> from evalcli import evaluate
        >>> similarity = pathlib.Path(tempfile.mkdtemp(), "similarity.csv")
        >>> _ = similarity.write_text("item_a,item_b,similarity\\na,b,0.5\\n")
        >>> r = evaluate({"task": "ranking", "metrics": ["diversity@3"],
        ...               "options": {"similarity_file": str(similarity)}},
        ...              predictions={"query": [1], "item": [["a", "b", "c"]]})
        >>> r.values(), r.metric("diversity@3").notes  # 1 − (0.5 + 0 + 0) / 3
        ({'diversity@3': 0.8333333333333334},
         ['2 item pairs are not in the similarity table: similarity 0'])
        """,
    ),
]
