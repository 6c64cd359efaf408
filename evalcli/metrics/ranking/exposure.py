"""How the recommendations spread over the items: distributional coverage (the entropy of the
recommendation distribution), the Gini index of that distribution, and the average popularity
of what is recommended (popularity bias).

The first two read one table, the expected number of top-k places of each item (every catalog
item, recommended or not), shared by both; ARP is a mean over queries.

>>> from evalcli.metrics.ranking.exposure import METRICS
>>> [m.name for m in METRICS]
['distributional_coverage', 'gini', 'average_recommendation_popularity']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from evalcli.metrics.base import Context, FrameStat, Metric, MetricValue, Params, Stat, StatValues
from evalcli.metrics.ranking.beyond import (
    CATALOG_TEXT,
    ITEMS_PREFIX,
    LOCAL,
    catalog_items,
    catalog_source,
    top_rows,
)
from evalcli.metrics.ranking.conventions import (
    COMPAT,
    K_REQUIRED,
    THRESHOLD,
    TIES,
    conventions_text,
    effective,
)
from evalcli.metrics.ranking.frame import F64, IT, JUDGED, REL, Q, seg_cols
from evalcli.metrics.ranking.side import TRAIN, item_counts, side_columns, train_pairs
from evalcli.metrics.ranking.stats import (
    T_INTERVAL_DOC,
    grouped_sums,
    keyed,
    mean_ratio,
    query_stat,
    query_sum,
    ratio_rows,
    t_interval_of,
    value_of,
)
from evalcli.metrics.ranking.task import FAMILY
from evalcli.metrics.stats import as_column, in_order_sum, sum_by

c = pl.col


# --------------------------------------------------------------------------- the item table

def _combine(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Partial tables add up per item; the catalog's size is each part's (the same catalog).
    Declared as a function of its own (not a ``sum_by`` partial), so that the table does not
    resample: the entropy and the Gini index of a resampled distribution are biased (a
    percentile interval of them may miss the value)."""
    out = sum_by(df.drop("catalog"), keys, [IT, "in_catalog"])
    size = df.group_by(keys).agg(c("catalog").max()) if keys else \
        df.select(c("catalog").max())
    return out.join(size, on=keys, how="left") if keys else \
        out.with_columns(pl.lit(size.item(), dtype=pl.Int64).alias("catalog"))


def _exposure_stats(name: str) -> Callable[[Params, Context], Sequence[Stat]]:
    def stats(params: Params, ctx: Context) -> Sequence[Stat]:
        conv = effective(params, ctx, [TIES])
        conv["relevance_threshold"] = 1.0
        k = int(params["k"])

        def build(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
            # per segment: the recommended items, whether each is in the catalog, and the
            # catalog's size (on a row of its own, item null), not a row per catalog item in
            # every segment (20 segments of a catalog of 8·10^5 items: 5 GB)
            top = top_rows(ctx, lf, conv, k).select(*keys, IT, "p",
                                                    pl.lit(None, dtype=pl.Int64).alias("n"))
            catalog = catalog_items(ctx, lf, name).with_columns(pl.lit(True).alias("cat"))
            size = catalog.select(pl.len().cast(pl.Int64).alias("n"))
            if keys:  # every segment's
                size = lf.select(keys).unique().join(size, how="cross")
            size = size.select(*keys, pl.lit(None, dtype=lf.collect_schema()[IT]).alias(IT),
                               pl.lit(0.0, dtype=F64).alias("p"), "n")
            table = grouped_sums(pl.concat([top, size]), [*keys, IT], lambda: [
                *query_sum(c("p"), "rec"), c("n").max().alias("catalog")])
            return table.join(catalog, on=IT, how="left").with_columns(
                (c(IT).is_null() | c("cat").fill_null(False)).alias("in_catalog")).drop("cat")

        # shared by distributional_coverage and gini at the same k, ties and catalog
        key = ITEMS_PREFIX + keyed("exposure", k, conv, f"{{catalog={catalog_source(ctx)}}}")
        return [FrameStat(key, build, _combine)]

    return stats


def _table(stats: StatValues) -> tuple[pl.DataFrame, dict[str, Any], list[str], int]:
    """The recommended items of the exposure table (see ``build``), its details and notes,
    and the count of items: the catalog's and those recommended outside it."""
    df: pl.DataFrame = next(iter(stats.values()))
    recommended = df.filter(c("rec") > 0)
    outside = recommended.filter(~c("in_catalog")).height
    size = int(df["catalog"].max() or 0)  # type: ignore[arg-type]
    details: dict[str, Any] = {"catalog_items": size, "recommended_items": recommended.height}
    notes = []
    if outside:
        details["recommended_outside_catalog"] = outside
        notes.append(f"{outside} recommended items are not in the catalog; they count as items")
    return recommended, details, notes, size + outside


def _entropy_value(stats: StatValues, params: Params) -> MetricValue:
    df, details, notes, _ = _table(stats)
    total = math.fsum(df["rec"].to_list())
    if total == 0:
        return MetricValue(None, details, [*notes, "no recommendations"])
    # each p(i) the rounded quotient (Polars divides by a float as a product with its
    # reciprocal: 7 / 10 would be 0.7000000000000001)
    p = df.select(c("rec") / as_column(total, c("rec"))).to_series()
    terms = (-p * p.log(2)).to_list()
    return MetricValue(math.fsum(terms), details, notes)


def _gini_value(stats: StatValues, params: Params) -> MetricValue:
    df, details, notes, n = _table(stats)
    total = math.fsum(df["rec"].to_list())
    if n < 2:
        return MetricValue(None, details, [*notes, f"{n} item in the catalog: the Gini index "
                                           "needs 2"])
    if total == 0:
        return MetricValue(None, details, [*notes, "no recommendations"])
    # the items sorted by ascending exposure: those without come first and add 0, the others
    # at places n − m + 1 .. n
    shown = df.sort(["rec", IT], nulls_last=True)
    ranked = shown.with_row_index("j", offset=1 + n - shown.height)
    terms = ranked.select((2.0 * c("j").cast(F64) - n - 1.0) * c("rec")
                          / as_column(total, c("rec")))
    return MetricValue(math.fsum(terms.to_series().to_list()) / (n - 1), details, notes)


# --------------------------------------------------------------------------- ARP

def _counts(ctx: Context, lf: pl.LazyFrame, thr: float) -> pl.LazyFrame:
    """Item -> φ(i), its number of interactions: the train_file's users, else the
    popularity_file's count (or probability), else the truth's queries where it is
    relevant."""
    if ctx.frames.get(TRAIN) is not None:
        return item_counts(train_pairs(ctx, lf, "average_recommendation_popularity"))
    side = ctx.frames.get("popularity_file")
    if side is not None:
        col = "count" if "count" in side.collect_schema().names() else "probability"
        pop = side_columns(lf, side, [IT, col], "popularity", "popularity_file")
        return pop.select(IT, c(col).cast(F64).alias("count"))
    relevant = lf.filter(c(JUDGED) & (c(REL) >= thr)).select(Q, IT)
    return relevant.group_by(IT).agg(c(Q).n_unique().cast(F64).alias("count"))


def _arp_stats(params: Params, ctx: Context) -> Sequence[Stat]:
    conv = effective(params, ctx, [TIES])
    conv["relevance_threshold"] = float(params["relevance_threshold"])
    k = int(params["k"])

    def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        phi = c("count").fill_null(0.0)
        pq = top_rows(ctx, lf, conv, k).join(
            _counts(ctx, lf, conv["relevance_threshold"]), on=IT, how="left").group_by(Q).agg(
            in_order_sum(c("p") * phi, "pos").alias("num"),
            in_order_sum(c("p"), "pos").alias("den"),
            c("weight").max().alias("w"),
            *(c(s).max().alias(s) for s in seg_cols(lf)),
        )
        return ratio_rows(pq, keys)

    source = str(ctx.options.get(TRAIN) or ctx.options.get("popularity_file") or "truth")
    return [query_stat("arp", k, conv, per_query, key_extra=f"{{popularity={source}}}")]


def _arp_value(stats: StatValues, params: Params) -> MetricValue:
    return value_of(stats, None)


# --------------------------------------------------------------------------- declarations

_NO_INTERVAL = ("none: a function of the whole recommendation distribution, not a mean over "
                "queries, and biased under resampling (the report says so)")
_SHARE = ("With ties=average an item of a group of tied scores straddling k counts with its "
          "probability of being in the top k (its expected number of places).")

METRICS: list[Metric] = [
    Metric(
        name="distributional_coverage", family=FAMILY,
        summary="entropy (bits) of the distribution of top-k places over the items: how evenly "
        "the recommendations spread",
        formula="H@k = −Σ_i p(i) log2 p(i); p(i) = top-k places of item i / all top-k places",
        direction="higher", needs=(), stats=_exposure_stats("distributional_coverage"),
        value=_entropy_value, interval_doc=_NO_INTERVAL,
        params=(K_REQUIRED, TIES.param, COMPAT),
        conventions="Every recommended item counts, in the catalog or not; items never "
        "recommended add 0. 0 when every place goes to one item, log2 n when n items share "
        "them equally. Equals recommenders' distributional_coverage (Shani and Gunawardana "
        "2011, eq. 21) when k covers every list. " + _SHARE + " " + conventions_text([TIES]),
        peer="recommenders' distributional_coverage (Shani and Gunawardana 2011)",
        aliases=("recommendation_entropy",), cutoff="k", range=(0.0, None), engines=LOCAL,
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "ranking", "metrics": ["distributional_coverage@2"]},
        ...          predictions={"query": [1, 2], "item": [["a", "b"], ["a", "c"]]},
        ...          truth={"query": [1], "item": ["d"]}).values()  # a 1/2, b 1/4, c 1/4
        {'distributional_coverage@2': 1.5}
        """,
    ),
    Metric(
        name="gini", family=FAMILY,
        summary="Gini index of the distribution of top-k places over the catalog: 0 when "
        "every item gets as many, 1 when one item gets them all",
        formula="Gini@k = 1/(n−1) Σ_{j=1..n} (2j − n − 1) p(i_j); items i_1..i_n of the catalog "
        "sorted by ascending p(i) = top-k places of i / all top-k places",
        direction="lower", needs=(), stats=_exposure_stats("gini"),
        value=_gini_value, interval_doc=_NO_INTERVAL,
        params=(K_REQUIRED, TIES.param, COMPAT),
        conventions=CATALOG_TEXT + " Catalog items never recommended count with p = 0; an "
        "item recommended outside the catalog counts as an item too (with a note). The "
        "normalisation 1/(n−1) makes one item taking every place 1. RankSys and Elliot report "
        "the same index (RankSys as the sales diversity 1 − Gini). " + _SHARE + " "
        + conventions_text([TIES]),
        peer="Gini index of sales (Fleder and Hosanagar 2009; Vargas and Castells 2014, as "
        "RankSys's GiniIndex before its 1 − G and Elliot's GiniIndex)",
        aliases=("gini_index",), cutoff="k", range=(0.0, 1.0), engines=LOCAL,
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "ranking", "metrics": ["gini@1"]},  # a 2 of 2 places, b c d 0
        ...          predictions={"query": [1, 2], "item": [["a", "b"], ["a", "c"]]},
        ...          truth={"query": [1], "item": ["d"]}).values()
        {'gini@1': 1.0}
        """,
    ),
    Metric(
        name="average_recommendation_popularity", family=FAMILY,
        summary="mean popularity (training interactions) of the recommended items: popularity "
        "bias, lower is less biased",
        formula="ARP@k = mean over queries of mean_{i in top_k(q)} φ(i); φ(i) = number of "
        "users who interacted with i in the training data",
        direction="lower", needs=(), stats=_arp_stats, value=_arp_value, ratio=mean_ratio,
        interval=t_interval_of, interval_doc=T_INTERVAL_DOC,
        params=(K_REQUIRED, TIES.param, THRESHOLD, COMPAT),
        conventions="φ(i) comes from the train_file option (distinct users per item), else the "
        "popularity_file option (its 'count' column, else 'probability'), else the truth (the "
        "number of queries for which i is relevant, relevance >= relevance_threshold). An item "
        "without interactions has φ = 0. " + _SHARE + " " + conventions_text([TIES]),
        peer="average recommendation popularity (Abdollahpouri, Burke and Mobasher, FLAIRS "
        "2019)",
        aliases=("arp",), cutoff="k", range=(0.0, None), engines=LOCAL,
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "ranking", "metrics": ["arp@2"]},  # φ(a) 2, φ(b) 1, φ(c) 0
        ...          predictions={"query": [1, 2], "item": [["a", "b"], ["a", "c"]]},
        ...          truth={"query": [1, 1, 2], "item": ["a", "b", "a"]}).values()
        {'average_recommendation_popularity@2': 1.25}
        """,
    ),
]
