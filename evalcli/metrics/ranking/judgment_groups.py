"""trec_eval's measures over judgment groups (``-R qrels_jg``, ``-m qrels_jg``): map_avgjg,
P_avgjg and Rprec_mult_avgjg.

A qrels_jg file is a qrels file whose second field names a judgment group (JG: say, one
assessor's judgments): each JG judges the query's documents on its own. Each measure is
computed per JG, as if the JG's judgments were the query's qrels, then averaged over the
query's JGs (``m_map_avgjg.c``, ``m_P_avgjg.c``, ``m_Rprec_mult_avgjg.c``). Judgments come
from the ranking task's ``qrels_jg_file``, or else from the truth (one JG: the measures are then
map, precision@k and rprec_mult). The run's order is trec_eval's: score descending, ties by
docno descending (``form_res_rels_jg.c``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from evalcli.metrics.base import (
    Context,
    Metric,
    MetricValue,
    Params,
    Stat,
    StatValues,
)
from evalcli.metrics.ranking.conventions import (
    COMPAT,
    K_REQUIRED,
    MISSING,
    NO_RELEVANT,
    THRESHOLD,
    UNJUDGED,
    conventions_text,
    effective,
)
from evalcli.metrics.ranking.conventions import RELEVANT as RELEVANT_CONV
from evalcli.metrics.ranking.frame import F64, IT, JUDGED, ORDER, REC, REL, Q, joined_per_query
from evalcli.metrics.ranking.stats import mean_ratio, query_stat, safe_ratio, value_of
from evalcli.metrics.ranking.task import FAMILY
from evalcli.metrics.ranking.trec import MULT

c = pl.col

CONVS = (MISSING, NO_RELEVANT, UNJUDGED)


def _judgments(ctx: Context, lf: pl.LazyFrame) -> pl.LazyFrame:
    """(query, jg, item, level): the qrels_jg_file's rows, else the truth's (one JG)."""
    side: pl.LazyFrame | None = ctx.frames.get("qrels_jg_file")
    if side is None:
        return lf.filter(c(JUDGED)).select(Q, pl.lit("0").alias("jg"), IT, c(REL).alias("lvl"))
    schema = lf.collect_schema()
    return side.select(c("query").cast(schema[Q]).alias(Q), c("iteration").alias("jg"),
                       c("item").cast(schema[IT]).alias(IT),
                       c("relevance").cast(F64).alias("lvl"))


def _per_jg(ctx: Context, lf: pl.LazyFrame, thr: float) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Each JG's R (``R``), and its relevant retrieved rows: place (1-based, trec_eval's
    order) and hit number (``h``: the how-many-th relevant item of the JG it is)."""
    judged = _judgments(ctx, lf)
    jgs = judged.group_by([Q, "jg"]).agg((c("lvl") >= thr).sum().alias("R"))
    ret = (lf.filter(c(REC)).select(Q, IT, ORDER)
           .sort([Q, ORDER, IT], descending=[False, True, True])
           .with_columns(pl.int_range(1, pl.len() + 1).over(Q).alias("place")))
    hits = (ret.join(judged.filter(c("lvl") >= thr), on=[Q, IT])
            .sort([Q, "jg", "place"])
            .with_columns(pl.int_range(1, pl.len() + 1).over([Q, "jg"]).alias("h")))
    return jgs, hits


def _build(name: str, params: Params, ctx: Context, lf: pl.LazyFrame, thr: float
           ) -> pl.LazyFrame:
    """Per query: ``jg_sum`` (Σ over JGs of the measure) and ``njg``."""
    jgs, hits = _per_jg(ctx, lf, thr)
    hits = hits.join(jgs, on=[Q, "jg"])
    if name == "map_avgjg":
        per = hits.group_by([Q, "jg"]).agg(
            ((c("h") / c("place")).sum() / c("R").first()).alias("v"))
    elif name == "precision_avgjg":
        k = int(params["k"])
        per = hits.group_by([Q, "jg"]).agg(((c("place") <= k).sum() / k).alias("v"))
    else:  # rprec_mult_avgjg: hits in the top (long)(mult·R + 0.9), over that cut-off
        cut = (pl.lit(float(params["mult"])) * c("R").cast(F64) + 0.9).floor()
        per = hits.group_by([Q, "jg"]).agg(
            safe_ratio((c("place") <= cut).sum().cast(F64), cut.first()).alias("v"))
    return jgs.join(per, on=[Q, "jg"], how="left").group_by(Q).agg(
        c("v").fill_null(0.0).sum().alias("jg_sum"), pl.len().alias("njg"))


def _stats(name: str) -> Callable[[Params, Context], Sequence[Stat]]:
    def stats(params: Params, ctx: Context) -> Sequence[Stat]:
        conv = effective(params, ctx, CONVS)
        k = params.get("k")

        def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
            frame = _build(name, params, ctx, lf, float(conv["relevance_threshold"]))
            # ties: id, for the query table's status and policies only
            pq = joined_per_query(ctx.memo, lf, {**conv, "ties": "id"}, None).join(
                frame, on=Q, how="left")
            counted = c("status").is_in(["ok", "no_relevant"])
            value = safe_ratio(c("jg_sum").fill_null(0.0), c("njg").fill_null(0).cast(F64))
            return pq.select(Q, *keys, "w", "status", "straddle", pl.when(c("keep")).then(
                pl.when(counted).then(value).otherwise(0.0)).alias("value"))

        extra = "" if name != "rprec_mult_avgjg" else f"{{mult={params['mult']!r}}}"
        return [query_stat(name, k, conv, per_query, key_extra=extra)]

    return stats


def _mean(stats: StatValues, params: Params) -> MetricValue:
    return value_of(stats, params.get("k"))


_SOURCE = ("Judgments: the qrels_jg_file option (trec_eval -R qrels_jg: a qrels file whose "
           "second field is the judgment group), else the truth (one group). Each judgment "
           "group is a qrels of its own; the value is the mean over the query's groups, then "
           "over queries (weighted by the query weight when a weight column is given). Ties: "
           "item id descending (trec_eval). Not in the default set: name it. ")
_DATA = """
    ...     predictions={"query": [1], "item": [["a", "b", "c"]]},
    ...     truth={"query": [1, 1, 1], "item": ["a", "b", "c"], "relevance": [0, 1, 1]}
    ... ).values()"""


def _metric(name: str, summary: str, formula: str, peer: str, example: str,
            extra: Sequence[Any] = (), aliases: tuple[str, ...] = ()) -> Metric:
    return Metric(
        name=name, family=FAMILY, summary=summary, formula=formula, direction="higher",
        needs=(), stats=_stats(name), value=_mean, ratio=mean_ratio,
        params=(*extra, *(cv.param for cv in CONVS), THRESHOLD, RELEVANT_CONV.param, COMPAT),
        conventions=_SOURCE + conventions_text(CONVS), peer=peer, aliases=aliases,
        cutoff="k" if any(p.name == "k" for p in extra) else None, range=(0.0, 1.0),
        in_default_set=False, example=example)


METRICS: list[Metric] = [
    _metric("map_avgjg", "average precision of each judgment group, averaged over the "
            "query's groups",
            "map_avgjg = (1/|JG|) Σ_g AP_g, AP_g = (1/R_g) Σ_{i relevant in g} hits_g@i / i",
            "trec_eval map_avgjg (-R qrels_jg)", """
    >>> from evalcli import evaluate  # one judgment group: AP = (1/2 + 2/3) / 2
    >>> evaluate({"task": "ranking", "metrics": ["map_avgjg"]},""" + _DATA + """
    {'map_avgjg': 0.5833333333333333}
    """),
    _metric("precision_avgjg", "precision at k of each judgment group, averaged over the "
            "query's groups",
            "P_avgjg@k = (1/|JG|) Σ_g hits_g@k / k", "trec_eval P_avgjg (its P_avgjg_5 is "
            "precision_avgjg@5; -R qrels_jg)", """
    >>> from evalcli import evaluate  # one judgment group: 1 relevant in the top 2
    >>> evaluate({"task": "ranking", "metrics": ["precision_avgjg@2"]},""" + _DATA + """
    {'precision_avgjg@2': 0.5}
    """, extra=(K_REQUIRED,), aliases=("p_avgjg",)),
    _metric("rprec_mult_avgjg", "precision at a multiple of R of each judgment group (its R), "
            "averaged over the query's groups",
            "Rprec_mult_avgjg(m) = (1/|JG|) Σ_g hits_g@c_g / c_g, c_g = (long)(m·R_g + 0.9)",
            "trec_eval Rprec_mult_avgjg (its Rprec_mult_avgjg_0.20 is "
            "rprec_mult_avgjg[mult=0.2]; -R qrels_jg)", """
    >>> from evalcli import evaluate  # R = 2, c = (long)(0.5·2 + 0.9) = 1: a is not relevant
    >>> evaluate({"task": "ranking", "metrics": ["rprec_mult_avgjg[mult=0.5]"]},""" + _DATA + """
    {'rprec_mult_avgjg[mult=0.5]': 0.0}
    """, extra=(MULT,)),
]
