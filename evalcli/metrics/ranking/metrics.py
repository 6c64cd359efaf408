"""Ranking and recommendation: the accuracy metrics (the task is in :mod:`.task`, the
conventions in :mod:`.conventions`, the ranked frame and the per-query statistic they read in
:mod:`.frame` and :mod:`.stats`, the beyond-accuracy metrics in :mod:`.beyond`).

Each metric is a (weighted) mean over queries of a per-query value. Notation, per query: the
recommended list in rank order, ``rel_i`` the relevance of the item at position ``i`` (0 when
unjudged), ``b_i = 1`` when ``rel_i >= relevance_threshold``, ``R`` the number of relevant judged
items (recommended or not), ``hits@k = Σ_{i<=k} b_i``.

Where peers disagree the metric has a parameter (see ``evalcli metrics show NAME``), every one of
them unset by default: unset means the ``compat`` preset's value, else evalcli's default, and
the report's ``details.conventions`` lists the values in force.

>>> from evalcli.metrics.ranking.metrics import METRICS
>>> sorted(m.name for m in METRICS)[:4]
['auc', 'dcg', 'f1', 'hit_rate']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from evalcli.metrics.base import Context, Metric, MetricValue, Param, Params, Stat, StatValues
from evalcli.metrics.ranking.conventions import (
    COMPAT,
    GAIN,
    GAINS,
    LOG_BASE,
    MAP_DEN,
    POLICIES,
    PRECISION_DEN,
    R_AVERAGE,
    RELEVANT,
    RELEVANT_TEXT,
    THRESHOLD,
    TIE_NOTE,
    TIES,
    Convention,
    K,
    conventions_text,
    effective,
)
from evalcli.metrics.ranking.frame import (
    F64,
    Q,
    hits_within,
    joined_per_query,
    truth_per_query,
)
from evalcli.metrics.ranking.stats import (
    T_INTERVAL_DOC,
    mean_ratio,
    query_stat,
    query_sum,
    safe_ratio,
    t_interval_of,
    value_of,
)
from evalcli.metrics.ranking.task import FAMILY
from evalcli.metrics.stats import as_column

c = pl.col

PEER = ("trec_eval (P, recall, map, recip_rank, ndcg_cut, Rprec), Spark MLlib RankingMetrics, "
        "scikit-learn ndcg_score/dcg_score, recommenders, ranx")

ValueExpr = Callable[[Mapping[str, Any], "int | None"], pl.Expr]


def _precision_den(conv: Mapping[str, Any], k: int | None) -> pl.Expr:
    if k is None:
        return c("qlen").cast(F64)
    if conv.get("denominator") == "list":
        return pl.min_horizontal(pl.lit(k), c("qlen")).cast(F64)
    return as_column(k, c("qlen"))


def _precision(conv: Mapping[str, Any], k: int | None) -> pl.Expr:
    return safe_ratio(c("hits"), _precision_den(conv, k))


def _recall(conv: Mapping[str, Any], k: int | None) -> pl.Expr:
    return safe_ratio(c("hits"), c("R").cast(F64))


def _f1(conv: Mapping[str, Any], k: int | None) -> pl.Expr:
    return safe_ratio(2.0 * c("hits"), _precision_den(conv, k) + c("R").cast(F64))


def _hit_rate(conv: Mapping[str, Any], k: int | None) -> pl.Expr:
    return 1.0 - c("p_none")


def _hits(conv: Mapping[str, Any], k: int | None) -> pl.Expr:
    return c("hits")


def _mrr(conv: Mapping[str, Any], k: int | None) -> pl.Expr:
    return c("rr")


def _map(conv: Mapping[str, Any], k: int | None) -> pl.Expr:
    den = c("R").cast(F64)
    if k is not None and conv.get("denominator") == "min_k_relevant":
        den = pl.min_horizontal(den, pl.lit(float(k)))
    return safe_ratio(c("ap_sum"), den)


def _ndcg(conv: Mapping[str, Any], k: int | None) -> pl.Expr:
    return safe_ratio(c("dcg"), c("idcg"))


def _dcg(conv: Mapping[str, Any], k: int | None) -> pl.Expr:
    return c("dcg")


def _per_query(ctx: Context, conv: Mapping[str, Any], k: int | None,
               value: ValueExpr) -> Callable[[pl.LazyFrame, list[str]], pl.LazyFrame]:
    def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        pq = joined_per_query(ctx.memo, lf, conv, k)
        return pq.select(
            Q, *keys, "w", "status", "straddle", "hits", "R",
            pl.when(c("keep")).then(value(conv, k)).alias("value"),
        )

    return per_query


def _own(params: Params, own: Sequence[Param]) -> tuple[dict[str, Any], str]:
    """The metric's own parameters that shape the ranked frames (``gains``, ``log_base``), and
    the part of the statistic's key they make (empty at their defaults)."""
    given = {p.name: params.get(p.name, p.default) for p in own}
    changed = {n: v for n, v in given.items()
               if v != next(p.default for p in own if p.name == n)}
    return given, ("{" + ",".join(f"{n}={v}" for n, v in sorted(changed.items())) + "}"
                   if changed else "")


def _stats_for(name: str, convs: Sequence[Convention], value: ValueExpr,
               micro: bool = False, own: Sequence[Param] = ()
               ) -> Callable[[Params, Context], Sequence[Stat]]:
    def stats(params: Params, ctx: Context) -> Sequence[Stat]:
        conv = effective(params, ctx, convs)
        given, key_extra = _own(params, own)
        k = params.get("k")
        extra = None
        if micro:
            kept = c("value").is_not_null()
            extra = {"sum_hits": lambda: query_sum(pl.when(kept).then(c("w") * c("hits")),
                                                   "sum_hits"),
                     "sum_rel": lambda: query_sum(pl.when(kept).then(c("w") * c("R")),
                                                  "sum_rel")}
        return [query_stat(name, k, conv, _per_query(ctx, {**conv, **given}, k, value), extra,
                           key_extra=key_extra)]

    return stats


def _micro_ratio(params: Params) -> tuple[str, str]:
    """:attr:`~evalcli.metrics.base.Metric.ratio` of micro recall: Σ w·hits / Σ w·R."""
    return ("sum_hits", "sum_rel")


def _value_for(micro: bool = False) -> Callable[[StatValues, Params], MetricValue]:
    def value(stats: StatValues, params: Params) -> MetricValue:
        return value_of(stats, params.get("k"), ("sum_hits", "sum_rel") if micro else None)

    return value


def _metric(name: str, summary: str, formula: str, value: ValueExpr,
            convs: Sequence[Convention], *, aliases: tuple[str, ...] = (),
            extra_conv: str = "", micro: bool = False, k: Param = K,
            rng: tuple[float | None, float | None] = (0.0, 1.0), example: str = "",
            own: tuple[Param, ...] = (), retired: tuple[tuple[str, str], ...] = ()) -> Metric:
    params = (k, *(cv.param for cv in convs), *own, THRESHOLD, RELEVANT.param, COMPAT)
    return Metric(
        name=name, family=FAMILY, summary=summary, formula=formula, direction="higher",
        needs=(), stats=_stats_for(name, convs, value, micro, own),
        value=_value_for(micro), params=params,
        ratio=_micro_ratio if micro else mean_ratio, interval=None if micro else t_interval_of,
        interval_doc="" if micro else T_INTERVAL_DOC,
        conventions=(extra_conv + " " if extra_conv else "") + conventions_text(convs)
        + " Relevant: relevance >= relevance_threshold (unjudged items are not relevant)."
        + RELEVANT_TEXT + " Mean over queries, weighted by the query weight when a weight "
        "column is given. A run that repeats an item for a query: the task option duplicates "
        "(error, as trec_eval; first; last, as ranx and its compat preset; max_score).",
        peer=PEER, aliases=aliases, retired=retired, cutoff="k", range=rng, example=example,
    )



METRICS: list[Metric] = [
    _metric("precision", "share of the top k recommended items that are relevant",
            "P@k = hits@k / k (denominator=list: / min(k, |list|); no k: / |list|)",
            _precision, (*POLICIES, PRECISION_DEN), aliases=("p", "precision_at_k", "set_p"),
            extra_conv=TIE_NOTE, example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "ranking", "metrics": [
            ...     "precision@5", {"metric": "precision@5", "denominator": "list"}]},
            ...     predictions={"query": [1], "item": [["a", "b", "c"]]},  # in rank order
            ...     truth={"query": [1, 1], "item": ["b", "x"]}).values()  # 3 items: 1/5, 1/3
            {'precision@5': 0.2, 'precision@5[denominator=list]': 0.3333333333333333}
            """),
    _metric("recall", "share of the relevant items found in the top k",
            "R@k = hits@k / R", _recall, POLICIES, aliases=("r", "recall_at_k", "set_recall"),
            extra_conv=TIE_NOTE, example="""
            >>> from evalcli import evaluate
            >>> r = evaluate({"task": "ranking", "metrics": ["recall@2"]},
            ...              predictions={"query": [1, 2], "item": [["a", "b", "c"], ["d"]]},
            ...              truth={"query": [1, 1, 2], "item": ["b", "c", "d"],
            ...                     "relevance": [1, 1, 0]})  # query 2: nothing relevant
            >>> r.values(), r.metric("recall@2").notes
            ({'recall@2': 0.5}, ['1 query without a relevant item left out (no_relevant=drop)'])
            """),
    _metric("f1", "harmonic mean of precision@k and recall@k, per query",
            "F1@k = 2·P@k·R@k / (P@k + R@k) = 2·hits@k / (k + R)", _f1,
            (*POLICIES, PRECISION_DEN), aliases=("f1_at_k", "f_measure", "set_f"),
            extra_conv=TIE_NOTE,
            example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "ranking", "metrics": ["f1@2"]},  # P@2 = 1/2, R@2 = 1
            ...          predictions={"query": [1], "item": [["a", "b", "c"]]},
            ...          truth={"query": [1], "item": ["b"]}).values()
            {'f1@2': 0.6666666666666666}
            """),
    _metric("hit_rate", "share of queries with at least one relevant item in the top k",
            "HR@k = mean over queries of [hits@k > 0]", _hit_rate, POLICIES,
            aliases=("success", "hit_rate_at_k"),
            extra_conv="The per-query convention (ranx hit_rate, 'success@k'); the other "
            "convention, total hits over total relevant items, is micro_recall. " + TIE_NOTE,
            example="""
            >>> from evalcli import evaluate
            >>> r = evaluate({"task": "ranking", "metrics": [
            ...     "hit_rate@1", {"metric": "hit_rate@1", "compat": "trec_eval"}]},
            ...     predictions={"query": [1], "item": [["a", "b"]]},  # nothing for query 2
            ...     truth={"query": [1, 2], "item": ["a", "x"]})
            >>> r.values(), r.metric("hit_rate@1").notes
            ({'hit_rate@1': 0.5, 'hit_rate@1[compat=trec_eval]': 1.0},
             ['1 query with relevant items but no predictions counted as 0 (missing=zero)'])
            """),
    _metric("hits", "number of relevant items in the top k (a count per query)",
            "hits@k = Σ_{i<=k} b_i; mean over queries", _hits, POLICIES,
            aliases=("hits_at_k",), rng=(0.0, None),
            extra_conv="ranx's hits: a count, not a share (precision@k is hits@k / k). A query "
            "a policy counts as 0 (missing, no_relevant) has 0 hits. " + TIE_NOTE,
            example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "ranking", "metrics": ["hits@3"]},  # 2 hits, then 1
            ...          predictions={"query": [1, 2], "item": [["a", "b", "c"], ["d", "e"]]},
            ...          truth={"query": [1, 1, 2], "item": ["a", "c", "e"]}).values()
            {'hits@3': 1.5}
            """),
    _metric("micro_recall", "total relevant items found in the top k over total relevant items",
            "HR@k (micro) = Σ_q w_q·hits@k / Σ_q w_q·R", _recall, POLICIES,
            aliases=("hit_ratio_micro", "hits_over_relevant"), micro=True,
            extra_conv="What some recommender texts call HR@K (hit ratio): hits over relevant "
            "items, pooled over queries; the per-query share is hit_rate. " + TIE_NOTE,
            example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "ranking", "metrics": ["micro_recall@3", "recall@3"]},
            ...          predictions={"query": [1, 2], "item": [["a", "b", "c"], ["d", "e", "f"]]},
            ...          truth={"query": [1, 2, 2, 2], "item": ["a", "d", "x", "y"]}
            ...          ).values()  # (1 + 1) / (1 + 3), against (1 + 1/3) / 2
            {'micro_recall@3': 0.5, 'recall@3': 0.6666666666666666}
            """),
    _metric("mrr", "mean reciprocal rank of the first relevant item (0 if none in the top k)",
            "RR@k = 1 / min{i <= k : b_i = 1}", _mrr, POLICIES,
            aliases=("reciprocal_rank", "recip_rank", "mrr_at_k"), extra_conv=TIE_NOTE,
            example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "ranking", "metrics": ["mrr", {"metric": "mrr", "ties": "id"}]},
            ...          predictions={"query": [1, 1, 1], "item": ["a", "b", "c"],
            ...                       "score": [0.9, 0.9, 0.1]},  # a and b tie
            ...          truth={"query": [1], "item": ["a"]}).values()  # (1 + 1/2) / 2; b, a
            {'mrr': 0.75, 'mrr[ties=id]': 0.5}
            """),
    _metric("map", "mean average precision (at k)",
            "AP@k = Σ_{i<=k} b_i·P@i / R (denominator=min_k_relevant: / min(k, R))",
            _map, (*POLICIES, MAP_DEN), aliases=("mean_average_precision", "map_cut"),
            retired=(("map_at_k", "it was map at evalcli's defaults, which divides by |relevant|, "
                      "where recommenders' map_at_k divides by min(k, |relevant|); write "
                      "map@k with compat: recommenders (or denominator: min_k_relevant)"),),
            extra_conv=TIE_NOTE, example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "ranking", "metrics": [
            ...     "map@2", {"metric": "map@2", "denominator": "min_k_relevant"}]},
            ...     predictions={"query": [1], "item": [["a", "b", "c"]]},
            ...     truth={"query": [1, 1, 1], "item": ["a", "b", "d"]}
            ...     ).values()  # (1/1 + 2/2) over 3 relevant, or over min(2, 3)
            {'map@2': 0.6666666666666666, 'map@2[denominator=min_k_relevant]': 1.0}
            """),
    _metric("ndcg", "normalized discounted cumulative gain (at k)",
            "NDCG@k = DCG@k / IDCG@k; DCG@k = Σ_{i<=k} gain(rel_i) / log2(i+1); IDCG@k: the "
            "positive gains of all judged items of the query sorted best first; gain: rel, "
            "2^rel − 1 or b, or the gains table's value for a level it lists",
            _ndcg, (*POLICIES, GAIN), aliases=("ndcg_cut",), own=(GAINS,),
            retired=(("ndcg_at_k", "it was ndcg at evalcli's defaults (linear gain), where "
                      "recommenders' ndcg_at_k uses a binary gain by default; write ndcg@k "
                      "with compat: recommenders (or gain: binary)"),),
            extra_conv="The ideal list holds every judged item of the query, recommended or "
            "not (trec_eval, scikit-learn, ranx). gains: trec_eval's per-level gain table "
            "(ndcg.1=3,2=9,4=4.5 is gains={1:3,2:9,4:4.5}; also for ndcg@k, which trec_eval's "
            "ndcg_cut cannot do); unset, every peer's gains. NDCG does not depend on the "
            "logarithm's base (dcg's log_base). " + TIE_NOTE, example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "ranking", "metrics": [
            ...     "ndcg@3", {"metric": "ndcg@3", "gain": "exponential"},
            ...     {"metric": "ndcg@3", "gains": {3: 0.5}}]},  # c gains 0.5: a, d, c ideal
            ...     predictions={"query": [1], "item": [["a", "b", "c"]]},
            ...     truth={"query": [1, 1, 1], "item": ["a", "c", "d"],  # d: not recommended,
            ...            "relevance": [1, 3, 2]}).values()  # but in the ideal list
            {'ndcg@3': 0.5250049893849102, 'ndcg@3[gain=exponential]': 0.47909091485969857,
             'ndcg@3[gains={3:0.5}]': 0.4338877053320681}
            """),
    _metric("dcg", "discounted cumulative gain (at k), not normalized",
            "DCG@k = Σ_{i<=k} gain(rel_i) / log_b(i+1), b = log_base (2)",
            _dcg, (*POLICIES, GAIN), aliases=("dcg_at_k",), rng=(None, None),
            own=(GAINS, LOG_BASE),
            extra_conv="log_base: 2 as every peer's default; scikit-learn's dcg_score takes "
            "log_base=b (log_base: b here). gains: trec_eval's per-level gain table (its "
            "dcg.1=3,2=9 is gains={1:3,2:9}; a negative gain can make DCG negative). "
            + TIE_NOTE, example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "ranking", "metrics": [  # 3/log2(2) + 1/log2(4)
            ...     "dcg@3", {"metric": "dcg@3", "log_base": 10}]},  # 3/log10(2) + 1/log10(4)
            ...     predictions={"query": [1], "item": [["a", "b", "c"]]},
            ...     truth={"query": [1, 1], "item": ["a", "c"], "relevance": [3, 1]}).values()
            {'dcg@3': 3.5, 'dcg@3[log_base=10]': 11.62674833210577}
            """),
]


# --------------------------------------------------------------------------- R-precision

R_CONVS = (*POLICIES, R_AVERAGE)


def _rprec_stats(params: Params, ctx: Context) -> Sequence[Stat]:
    conv = effective(params, ctx, R_CONVS)
    k = params.get("k")

    def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        thr = conv["relevance_threshold"]
        rel = truth_per_query(ctx.memo, lf, thr, "linear", None).select(Q, "R")
        # recommenders' r_precision_at_k: R capped by k
        r_eff = c("R") if k is None else pl.min_horizontal(c("R"), pl.lit(k))
        rel = rel.with_columns(r_eff.alias("R_eff"))
        at_r = hits_within(ctx.memo, lf, conv, rel.select(Q, c("R_eff").alias("cut"))).select(
            Q, c("hits").alias("hits_r"), c("straddle").alias("straddle_r"))
        pq = (joined_per_query(ctx.memo, lf, conv, None)
              .join(rel.select(Q, "R_eff"), on=Q, how="left")
              .join(at_r, on=Q, how="left"))
        hits_r = c("hits_r").fill_null(0.0)
        status = c("status")
        if conv["average_over"] == "hit":  # recommenders: users without a hit are left out
            status = pl.when(c("keep") & (hits_r <= 0.0)).then(pl.lit("undefined")
                                                                ).otherwise(status)
        return pq.select(
            Q, *keys, "w", status.alias("status"),
            c("straddle_r").fill_null(False).alias("straddle"),
            pl.when(c("keep") & (status != "undefined"))
            .then(safe_ratio(hits_r, c("R_eff").fill_null(0).cast(F64))).alias("value"),
        )

    return [query_stat("r_precision", k, conv, per_query)]


def _rprec_value(stats: StatValues, params: Params) -> MetricValue:
    mv = value_of(stats, params.get("k"))
    df = next(iter(stats.values()))
    if df.height and df["n_straddle"][0]:
        mv.details["ties_straddling_r"] = int(df["n_straddle"][0])
    return mv


METRICS.append(Metric(
    name="r_precision", family=FAMILY,
    summary="precision at R, the number of relevant items of the query (R capped by k)",
    formula="R-prec = hits@R / R; with k: R' = min(R, k), hits@R' / R'", direction="higher",
    needs=(), stats=_rprec_stats, value=_rprec_value, ratio=mean_ratio,
    params=(K, *(cv.param for cv in R_CONVS), THRESHOLD, RELEVANT.param, COMPAT),
    interval=t_interval_of, interval_doc=T_INTERVAL_DOC,
    conventions=TIE_NOTE + " k: R is capped by k (recommenders' r_precision_at_k); unset, R "
    "(trec_eval Rprec, ranx r_precision). average_over=hit leaves out the queries without a "
    "relevant item in their first R (counted as undefined; under ties=average, those whose "
    "expected hits there are 0). " + conventions_text(R_CONVS) + RELEVANT_TEXT,
    peer="trec_eval Rprec; ranx r_precision; recommenders r_precision_at_k (r_precision@k "
    "with compat: recommenders)",
    aliases=("rprec", "r_prec"), cutoff="k", range=(0.0, 1.0),
    example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["r_precision"]},  # R = 2: one hit in the top 2
    ...          predictions={"query": [1], "item": [["a", "b", "c"]]},
    ...          truth={"query": [1, 1], "item": ["b", "c"]}).values()
    {'r_precision': 0.5}
    """,
))


# --------------------------------------------------------------------------- per-user AUC

UNSCORED = Param(
    "unscored_relevant", str, "bottom",
    "relevant items the predictions do not score: bottom (ranked below every scored item) or "
    "ignore (left out of the pairs)", choices=("bottom", "ignore"),
)
AUC_CONVS = (TIES,)


def _auc_stats(params: Params, ctx: Context) -> Sequence[Stat]:
    conv = effective(params, ctx, AUC_CONVS)
    unscored = params.get("unscored_relevant", "bottom")

    def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        pq = joined_per_query(ctx.memo, lf, conv, None)
        pos = c("R") if unscored == "bottom" else c("auc_pos").fill_null(0)
        pairs = pos.cast(F64) * c("auc_neg").fill_null(0).cast(F64)
        defined = (pairs > 0) & (c("status") == "ok")
        undefined = (pairs <= 0) & (c("status") == "ok")
        return pq.select(
            Q, *keys, "w", "straddle",
            pl.when(undefined).then(pl.lit("undefined")).otherwise(c("status")).alias("status"),
            pl.when(defined).then(c("auc_num") / pairs).alias("value"),
        )

    return [query_stat("auc", None, conv, per_query, key_extra=f"{{unscored={unscored}}}")]


def _auc_value(stats: StatValues, params: Params) -> MetricValue:
    mv = value_of(stats, None)
    mv.details["conventions"]["unscored_relevant"] = params.get("unscored_relevant", "bottom")
    return mv


METRICS.append(Metric(
    name="auc", family=FAMILY,
    summary="per-query AUC: share of (relevant, non-relevant) pairs ranked in the right order, "
    "averaged over queries",
    formula="AUC_q = #{(i relevant, j not): i above j} / (#relevant · #non-relevant), a tie "
    "counts 1/2; mean over queries",
    direction="higher", needs=(), stats=_auc_stats, value=_auc_value, ratio=mean_ratio,
    interval=t_interval_of,
    interval_doc=T_INTERVAL_DOC,
    params=(*(cv.param for cv in AUC_CONVS), UNSCORED, THRESHOLD, RELEVANT.param, COMPAT),
    conventions="Pairs are formed within each query's recommended items: relevant items against "
    "the other recommended items (judged not relevant or unjudged). Relevant items the "
    "predictions do not score rank below every scored item (unscored_relevant=bottom) or are "
    "left out (ignore). Tied scores count 1/2 under ties=average. A query without such a pair "
    "(no relevant item, no non-relevant recommended item, no predictions, no truth) has no "
    "AUC: it is left out, with a count; the missing/no_relevant/unjudged policies of the other "
    "metrics do not apply. "
    + conventions_text(AUC_CONVS) + RELEVANT_TEXT,
    peer="per-user AUC of BPR (Rendle et al. 2009) and recommenders' group AUC",
    aliases=("user_auc", "gauc"), range=(0.0, 1.0),
    example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": [
    ...     "auc", {"metric": "auc", "unscored_relevant": "ignore"}]},
    ...     predictions={"query": [1], "item": [["a", "b", "c", "d"]]},
    ...     truth={"query": [1, 1, 1], "item": ["a", "c", "e"]}  # e is not recommended
    ...     ).values()  # a > b, d; c > d; e last: 3 of 3·2 pairs, or 3 of 2·2
    {'auc': 0.5, 'auc[unscored_relevant=ignore]': 0.75}
    """,
))


# --------------------------------------------------------------------------- counts

COUNT_CONVS = POLICIES  # ties does not change a count; the shared frames take it
COUNTS: dict[str, tuple[str, str, Callable[[], pl.Expr], str]] = {
    # name: (summary, formula, per-query count, example's value)
    "num_q": ("number of queries evaluated (kept by the policies)", "Σ_q 1",
              lambda: pl.lit(1.0), "2.0"),
    "num_ret": ("number of items retrieved, summed over the queries evaluated",
                "Σ_q |list_q|", lambda: c("qlen").cast(F64), "5.0"),
    "num_rel": ("number of relevant items, summed over the queries evaluated",
                "Σ_q R_q", lambda: c("R").cast(F64), "3.0"),
    "num_rel_ret": ("number of relevant items retrieved, summed over the queries evaluated",
                    "Σ_q |list_q ∩ relevant_q|", lambda: c("hits"), "1.0"),
    "num_nonrel_judged_ret": (
        "number of retrieved items judged not relevant, summed over the queries evaluated",
        "Σ_q |list_q ∩ judged_q \\ relevant_q|", lambda: c("nonrel_judged").cast(F64), "2.0"),
}


def _count_stats(name: str) -> Callable[[Params, Context], Sequence[Stat]]:
    count = COUNTS[name][2]

    def stats(params: Params, ctx: Context) -> Sequence[Stat]:
        conv = effective(params, ctx, COUNT_CONVS)

        def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
            pq = joined_per_query(ctx.memo, lf, conv, None)
            return pq.select(Q, *keys, "w", "status", "straddle",
                             pl.when(c("keep")).then(count()).alias("value"))

        kept = c("value").is_not_null()
        extra = {"total": lambda: query_sum(pl.when(kept).then(c("value")), "total")}
        return [query_stat(name, None, conv, per_query, extra)]

    return stats


def _total(params: Params) -> tuple[str, None]:
    """:attr:`~evalcli.metrics.base.Metric.ratio` of a count: its total itself."""
    return ("total", None)


def _count_value(stats: StatValues, params: Params) -> MetricValue:
    mv = value_of(stats, None)
    df = next(iter(stats.values()))
    mv.value = float(df["total"][0]) if df.height else 0.0
    return mv


def _count_metric(name: str) -> Metric:
    summary, formula, _, value = COUNTS[name]
    return Metric(
        name=name, family=FAMILY, summary=summary, formula=formula + " (a sum, not a mean)",
        direction="higher", needs=(), stats=_count_stats(name), value=_count_value,
        ratio=_total,
        params=(*(cv.param for cv in COUNT_CONVS), THRESHOLD, RELEVANT.param, COMPAT),
        interval_doc="none: a count of the evaluated queries' items, not an estimate",
        conventions="A count, summed over the queries the policies keep (weights are not "
        "applied): with compat: trec_eval, the queries of both files (trec_eval's default); "
        "with missing=zero, also the queries of the truth without predictions (trec_eval -c), "
        "which add their relevant items. Relevant: relevance >= relevance_threshold. "
        "Not in the default set: name it. " + conventions_text(COUNT_CONVS) + RELEVANT_TEXT,
        peer=f"trec_eval {name} (its 'all' line is the sum over queries)",
        range=(0.0, None), in_default_set=False,
        example=f"""
    >>> from evalcli import evaluate
    >>> evaluate({{"task": "ranking", "metrics": ["{name}"]}},
    ...     predictions={{"query": [1, 2], "item": [["a", "b", "c"], ["x", "y"]]}},
    ...     truth={{"query": [1, 1, 1, 2, 2], "item": ["a", "b", "e", "z", "y"],
    ...            "relevance": [1, 0, 1, 1, 0]}}).values()
    {{'{name}': {value}}}
    """,
    )


METRICS += [_count_metric(name) for name in COUNTS]
