"""trec_eval's preference measures (``-R prefs`` and ``-R qrels_prefs``, ``-m all_prefs``).

Judgments are preferences between documents: within a judgment group (JG, one user's
information need) and one of its sub-groups (JSG), a document with a higher level is preferred
to one with a lower level. A JG of one JSG prefers every document of a higher level to every one
of a lower level (trec_eval's equivalence classes, each judgment row counted); a JG of several
JSGs holds the preferences of each JSG, once each, closed under transitivity (trec_eval's
preference array). Judgments come from the ranking task's ``prefs_file`` (trec_eval's prefs
format, ``qid jg jsg docno level``), or else from the truth itself as trec_eval's
``qrels_prefs`` reads a qrels file: one JG per query, one JSG, the relevance as the level.

A preference A > B is, with the run's documents in trec_eval's order (score descending, ties
by docno ascending, as its ``form_prefs_counts.c``): *fulfilled, retrieved* when both are
retrieved and A ranks above B; *possible, retrieved* when both are retrieved; *implied* when
exactly one is (fulfilled when it is A); *not occurring* when neither is (never fulfilled).
Per query, from these counts by JG (``m_prefs_*.c``):

- ``num_prefs[count=poss]``: every preference; ``count=ful``: the fulfilled ones (retrieved
  and implied); ``count=ful_ret``: the fulfilled retrieved ones (sums over queries);
- ``prefs[measure=simp]``: fulfilled / possible over all preferences (``_ret``: both retrieved;
  ``_imp``: at least one retrieved);
- ``avgjg`` (``_ret``, ``_imp``): that ratio within each JG, averaged over the query's JGs;
- ``pair`` (``_ret``, ``_imp``): over document pairs with a preference in any JG, the share of
  the pair's preferences (all JGs) that the ranking fulfils, averaged over pairs (a pair of two
  documents not retrieved counts with 0);
- ``avgjg_Rnonrel`` (``_ret``): avgjg with each JG's non-relevant documents (level 0) brought
  to R, its relevant ones: fulfilled preferences added when fewer, only the first R kept when
  more (:func:`_rnonrel` gives trec_eval's exact arithmetic, quirks included).

A query without preferences has 0, as in trec_eval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from evalcli.errors import MetricError
from evalcli.metrics.base import (
    Context,
    Metric,
    MetricValue,
    Param,
    Params,
    Stat,
    StatValues,
)
from evalcli.metrics.ranking.conventions import (
    COMPAT,
    MISSING,
    NO_RELEVANT,
    THRESHOLD,
    UNJUDGED,
    conventions_text,
    effective,
)
from evalcli.metrics.ranking.conventions import RELEVANT as RELEVANT_CONV
from evalcli.metrics.ranking.frame import F64, IT, JUDGED, ORDER, REC, REL, Q, joined_per_query
from evalcli.metrics.ranking.stats import (
    mean_ratio,
    query_stat,
    query_sum,
    safe_ratio,
    value_of,
)
from evalcli.metrics.ranking.task import FAMILY

c = pl.col

CONVS = (MISSING, NO_RELEVANT, UNJUDGED)
MEASURES = ("simp", "pair", "avgjg", "avgjg_Rnonrel", "simp_ret", "pair_ret", "avgjg_ret",
            "avgjg_Rnonrel_ret", "simp_imp", "pair_imp", "avgjg_imp")
"""The ratios of ``-m all_prefs`` that ``prefs`` computes (its ``measure``)."""
COUNTS = ("poss", "ful", "ful_ret")
"""The counts of ``-m all_prefs`` (``num_prefs``'s ``count``)."""
MEASURE = Param("measure", str, "simp", "which of trec_eval's preference ratios: simp, pair, "
                "avgjg or avgjg_Rnonrel (all preferences: a preference neither of whose "
                "documents is retrieved fails), or their _ret (both retrieved) or _imp (at "
                "least one retrieved) variants", choices=MEASURES)
COUNT = Param("count", str, "poss", "which preferences to count: poss (all), ful "
              "(fulfilled), ful_ret (fulfilled with both documents retrieved)", choices=COUNTS)


def _judgments(ctx: Context, lf: pl.LazyFrame) -> tuple[pl.LazyFrame, bool]:
    """(query, jg, jsg, item, level) rows, and whether they come from the prefs_file (several
    JSGs possible) rather than the truth (qrels_prefs: one JG and one JSG per query)."""
    side = ctx.frames.get("prefs_file")
    if side is None:
        return lf.filter(c(JUDGED)).select(
            Q, pl.lit("0").alias("jg"), pl.lit("0").alias("jsg"), IT, c(REL).alias("lvl")), False
    schema = lf.collect_schema()
    return side.select(c("query").cast(schema[Q]).alias(Q), "jg", "jsg",
                       c("item").cast(schema[IT]).alias(IT),
                       c("relevance").cast(F64).alias("lvl")), True


def _pairs_of(rows: pl.LazyFrame, on: list[str]) -> pl.LazyFrame:
    """Every (a, b) of ``rows`` sharing ``on`` with a's level above b's."""
    return (rows.join(rows, on=on, how="inner", suffix="_b")
            .filter(c("lvl") > c("lvl_b"))
            .select(Q, "jg", c(IT).alias("a"), c(f"{IT}_b").alias("b"), "lvl_b"))


def _closure(pairs: pl.DataFrame) -> pl.DataFrame:
    """The preferences closed under transitivity within each (query, JG): a > b and b > c
    give a > c (trec_eval multiplies its preference array by itself until it stops changing;
    here a join doubles the path lengths covered per round). A cycle is an error, as there."""
    while True:
        longer = pairs.join(pairs.rename({"a": "b", "b": "c"}), on=[Q, "jg", "b"]).select(
            Q, "jg", "a", c("c").alias("b"))
        grown = pl.concat([pairs, longer]).unique()
        if grown.height == pairs.height:
            break
        pairs = grown
    cyc = pairs.join(pairs.rename({"a": "b", "b": "a"}), on=[Q, "jg", "a", "b"]).head(1)
    if cyc.height or pairs.filter(c("a") == c("b")).height:
        bad = cyc.row(0, named=True) if cyc.height else pairs.filter(c("a") == c("b")).row(
            0, named=True)
        raise MetricError(
            f"prefs_file: the preferences of query {bad[Q]!r}, judgment group {bad['jg']!r} "
            f"conflict: {bad['a']!r} is preferred to {bad['b']!r} and, through other "
            "sub-groups, the reverse",
            hint="a judgment group must be consistent; put conflicting judgments in separate "
                 "judgment groups")
    return pairs


def _preferences(ctx: Context, lf: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The preferences (query, jg, a, b, the level of b: for a JG of classes) and the judgment
    rows (query, jg, jsg, item, level, whether the JG has several sub-groups)."""
    rows, side = _judgments(ctx, lf)
    rows = rows.with_columns((c("jsg").n_unique().over([Q, "jg"]) > 1).alias("pa"))
    if not side:
        return _pairs_of(rows, [Q, "jg"]), rows
    ec = _pairs_of(rows.filter(~c("pa")), [Q, "jg"])
    pa = _pairs_of(rows.filter(c("pa")), [Q, "jg", "jsg"]).drop("lvl_b").unique()
    closed = _closure(pa.collect()).lazy().with_columns(pl.lit(None, F64).alias("lvl_b"))
    return pl.concat([ec, closed]), rows


def _retrieved(lf: pl.LazyFrame) -> pl.LazyFrame:
    """(query, item, place) of the retrieved items, in trec_eval's order for preferences:
    score descending, ties by docno ascending."""
    return (lf.filter(c(REC)).select(Q, IT, ORDER)
            .sort([Q, ORDER, IT], descending=[False, True, False])
            .with_columns(pl.int_range(pl.len()).over(Q).alias("place")).drop(ORDER))


def _counts(ctx: Context, lf: pl.LazyFrame) -> pl.LazyFrame:
    """Per query: the preference counts and ratios every prefs measure reads."""
    prefs, rows = _preferences(ctx, lf)
    jgs = rows.group_by(Q).agg(c("jg").n_unique().alias("njg"))
    ret = _retrieved(lf)
    p = (prefs.join(ret.rename({IT: "a", "place": "pa"}), on=[Q, "a"], how="left")
         .join(ret.rename({IT: "b", "place": "pb"}), on=[Q, "b"], how="left"))
    ra, rb = c("pa").is_not_null(), c("pb").is_not_null()
    p = p.with_columns(
        (ra & rb & (c("pa") < c("pb"))).alias("ful_ret"), (ra & rb).alias("poss_ret"),
        (ra & ~rb).alias("ful_imp"), (ra ^ rb).alias("poss_imp"))
    cnt = ("ful_ret", "poss_ret", "ful_imp", "poss_imp")
    by_jg = p.group_by([Q, "jg"]).agg(*(c(n).sum().cast(F64) for n in cnt),
                                      pl.len().cast(F64).alias("poss"))
    ful_all = c("ful_ret") + c("ful_imp")
    per_jg = by_jg.group_by(Q).agg(
        *(c(n).sum() for n in (*cnt, "poss")),
        safe_ratio(ful_all, c("poss")).sum().alias("jg_all"),
        safe_ratio(c("ful_ret"), c("poss_ret")).sum().alias("jg_ret"),
        safe_ratio(ful_all, c("poss_ret") + c("poss_imp")).sum().alias("jg_imp"))
    # pairs of documents: each preference counted for the pair, by which document it favours
    # (first: the one ranked higher, a retrieved one before one not retrieved)
    key_a = pl.when(ra).then(c("pa")).otherwise(None)
    key_b = pl.when(rb).then(c("pb")).otherwise(None)
    a_first = (key_a.is_not_null() & (key_b.is_null() | (key_a < key_b))) | (
        key_a.is_null() & key_b.is_null() & (c("a") < c("b")))
    pair = (p.with_columns(a_first.alias("af"))
            .with_columns(pl.when(c("af")).then(c("a")).otherwise(c("b")).alias("first"),
                          pl.when(c("af")).then(c("b")).otherwise(c("a")).alias("second"),
                          (ra.cast(pl.Int8) + rb.cast(pl.Int8)).alias("nret"))
            .group_by([Q, "first", "second"])
            .agg(c("af").sum().cast(F64).alias("fs"), pl.len().cast(F64).alias("n"),
                 c("nret").first())
            .with_columns((c("fs") / c("n")).alias("share"))
            .group_by(Q).agg(
                pl.len().cast(F64).alias("np_all"),
                (c("nret") == 2).sum().cast(F64).alias("np_ret"),
                (c("nret") >= 1).sum().cast(F64).alias("np_imp"),
                c("share").filter(c("nret") == 2).sum().alias("ps_ret"),
                c("share").filter(c("nret") >= 1).sum().alias("ps_imp")))
    return (jgs.join(per_jg, on=Q, how="left").join(pair, on=Q, how="left")
            .join(_rnonrel(p, rows, ret), on=Q, how="left")
            .with_columns(pl.exclude(Q).cast(F64).fill_null(0.0)))


def _rnonrel(p: pl.LazyFrame, rows: pl.LazyFrame, ret: pl.LazyFrame) -> pl.LazyFrame:
    """Per query, Σ over JGs of prefs_avgjg_Rnonrel's and prefs_avgjg_Rnonrel_ret's ratios
    (``rn_all``, ``rn_ret``), and whether a JG divided 0 by 0 (``rn_nan_*``: trec_eval's sum
    is then NaN and the query's value 0), as m_prefs_avgjg_Rnonrel(_ret).c compute them.

    R and N: a JG's relevant (level > 0) and non-relevant judgments (of classes: level <= 0,
    each row; of several sub-groups: level 0, each document), Rr and Nr the retrieved ones.
    When R >= N (Rr >= Nr): the JG's ratio with R·(R − N) preferences added, Rr·(R − N)
    fulfilled (_ret: Rr·(Rr − Nr) fulfilled, R·(Rr − Nr) added, as the C code). Else the
    preferences are counted again keeping only the first R non-relevant documents in trec_eval's
    document order (retrieved ones by rank, then the others by docno): for classes, the
    preferences not into the lowest class, plus every judgment of the JG (the lowest class's
    too) against each kept document (_ret: retrieved documents only, Rr kept); for several
    sub-groups, the preferences between documents not discarded (_ret: retrieved ones, the
    first R retrieved non-relevant ones kept)."""
    # trec_eval's document order: retrieved by rank, then the others by docno
    docs = (rows.select(Q, IT).unique().join(ret, on=[Q, IT], how="left")
            .with_columns(c("place").is_not_null().alias("ret")))
    docs = docs.with_columns(pl.when(c("ret")).then(c("place")).otherwise(
        (1 << 40) + c(IT).rank("dense").over([Q, "ret"]).cast(pl.Int64)).alias("rk"))
    rk = rows.join(docs.select(Q, IT, "ret", "rk"), on=[Q, IT], how="left")
    rel, ret_ = c("lvl") > 0, c("ret")
    pa_docs = rk.filter(c("pa")).unique([Q, "jg", IT], keep="last")
    nonrel_ec, nonrel_pa = c("lvl") <= 0, c("lvl") == 0

    def tallies(frame: pl.LazyFrame, nonrel: pl.Expr) -> pl.LazyFrame:
        return frame.group_by([Q, "jg"]).agg(
            rel.sum().alias("R"), nonrel.sum().alias("N"), (rel & ret_).sum().alias("Rr"),
            (nonrel & ret_).sum().alias("Nr"), c("lvl").min().alias("lmin"), c("pa").first())

    stats = pl.concat([tallies(rk.filter(~c("pa")), nonrel_ec),
                       tallies(pa_docs, nonrel_pa)])
    ra, rb = c("pa_r").is_not_null(), c("pb_r").is_not_null()
    ful = ra & (~rb | (c("pa_r") < c("pb_r")))
    ful_both = ra & rb & (c("pa_r") < c("pb_r"))
    pp = p.rename({"pa": "pa_r", "pb": "pb_r"})
    counts = pp.group_by([Q, "jg"]).agg(
        ful.sum().alias("f_all"), pl.len().alias("p_all"), ful_both.sum().alias("f_ret"),
        (ra & rb).sum().alias("p_ret"))

    # classes, recounted: preferences not into the lowest class ...
    ec1 = pp.join(stats.select(Q, "jg", "lmin", "pa"), on=[Q, "jg"]).filter(
        ~c("pa") & (c("lvl_b") > c("lmin")))
    ec1 = ec1.group_by([Q, "jg"]).agg(
        ful.sum().alias("e1f"), pl.len().alias("e1p"), ful_both.sum().alias("e1fr"),
        (ra & rb).sum().alias("e1pr"))
    # ... and every judgment against each kept document of the lowest class
    ec_rows = rk.filter(~c("pa")).join(stats.select(Q, "jg", "lmin", "R", "Rr"), on=[Q, "jg"])
    lowest = ec_rows.filter(c("lvl") == c("lmin")).with_columns(
        pl.int_range(pl.len()).over([Q, "jg"], order_by="rk").alias("_i"))
    kept = lowest.filter(c("_i") < c("R")).select(Q, "jg", c("rk").alias("yk"))
    kept_r = lowest.filter((c("_i") < c("Rr")) & c("ret")).select(Q, "jg", c("rk").alias("yk"))
    x = ec_rows.select(Q, "jg", c("rk").alias("xk"), c("ret").alias("xr"))
    e2 = x.join(kept, on=[Q, "jg"]).group_by([Q, "jg"]).agg(
        (c("xr") & (c("xk") < c("yk"))).sum().alias("e2f"), pl.len().alias("e2p"))
    e2r = x.filter(c("xr")).join(kept_r, on=[Q, "jg"]).group_by([Q, "jg"]).agg(
        (c("xk") < c("yk")).sum().alias("e2fr"), pl.len().alias("e2pr"))
    # several sub-groups, recounted without the discarded non-relevant documents
    disc = pa_docs.join(stats.select(Q, "jg", "R"), on=[Q, "jg"]).with_columns(
        pl.int_range(pl.len()).over([Q, "jg", nonrel_pa], order_by="rk").alias("_i"),
        pl.int_range(pl.len()).over([Q, "jg", nonrel_pa, ret_], order_by="rk").alias("_j"))
    gone = disc.filter(nonrel_pa & (c("_i") >= c("R"))).select(Q, "jg", IT)
    gone_r = disc.filter(nonrel_pa & ret_ & (c("_j") >= c("R"))).select(Q, "jg", IT)

    def kept_pairs(drop: pl.LazyFrame) -> pl.LazyFrame:
        on_pa = pp.join(stats.select(Q, "jg", "pa"), on=[Q, "jg"]).filter(c("pa"))
        return (on_pa.join(drop.rename({IT: "a"}), on=[Q, "jg", "a"], how="anti")
                .join(drop.rename({IT: "b"}), on=[Q, "jg", "b"], how="anti"))

    p1 = kept_pairs(gone).group_by([Q, "jg"]).agg(ful.sum().alias("g_f"),
                                                   pl.len().alias("g_p"))
    p1r = kept_pairs(gone_r).filter(ra & rb).group_by([Q, "jg"]).agg(
        ful_both.sum().alias("g_fr"), pl.len().alias("g_pr"))
    jg = stats
    for part in (counts, ec1, e2, e2r, p1, p1r):
        jg = jg.join(part, on=[Q, "jg"], how="left")
    jg = jg.with_columns(pl.exclude(Q, "jg", "pa").cast(F64).fill_null(0.0))
    f_add, p_add = c("Rr") * (c("R") - c("N")), c("R") * (c("R") - c("N"))
    fr_add, pr_add = c("Rr") * (c("Rr") - c("Nr")), c("R") * (c("Rr") - c("Nr"))
    num_all = pl.when(c("R") >= c("N")).then(c("f_all") + f_add).when(c("pa")).then(
        c("g_f")).otherwise(c("e1f") + c("e2f"))
    den_all = pl.when(c("R") >= c("N")).then(c("p_all") + p_add).when(c("pa")).then(
        c("g_p")).otherwise(c("e1p") + c("e2p"))
    num_ret = pl.when(c("Rr") >= c("Nr")).then(c("f_ret") + fr_add).when(c("pa")).then(
        c("g_fr")).otherwise(c("e1fr") + c("e2fr"))
    den_ret = pl.when(c("Rr") >= c("Nr")).then(c("p_ret") + pr_add).when(c("pa")).then(
        c("g_pr")).otherwise(c("e1pr") + c("e2pr"))
    return jg.group_by(Q).agg(
        safe_ratio(num_all, den_all).sum().alias("rn_all"),
        (den_all == 0).any().cast(F64).alias("rn_nan_all"),
        safe_ratio(num_ret, den_ret).sum().alias("rn_ret"),
        (den_ret == 0).any().cast(F64).alias("rn_nan_ret"))


def _value(measure: str) -> pl.Expr:
    ful_all = c("ful_ret") + c("ful_imp")
    return {
        "poss": c("poss"), "ful": ful_all, "ful_ret": c("ful_ret"),
        "simp": safe_ratio(ful_all, c("poss")),
        "simp_ret": safe_ratio(c("ful_ret"), c("poss_ret")),
        "simp_imp": safe_ratio(ful_all, c("poss_ret") + c("poss_imp")),
        "avgjg": safe_ratio(c("jg_all"), c("njg")),
        "avgjg_ret": safe_ratio(c("jg_ret"), c("njg")),
        "avgjg_imp": safe_ratio(c("jg_imp"), c("njg")),
        "pair": safe_ratio(c("ps_imp"), c("np_all")),
        "pair_ret": safe_ratio(c("ps_ret"), c("np_ret")),
        "pair_imp": safe_ratio(c("ps_imp"), c("np_imp")),
        "avgjg_Rnonrel": pl.when(c("rn_nan_all") > 0).then(0.0).otherwise(
            safe_ratio(c("rn_all"), c("njg"))),
        "avgjg_Rnonrel_ret": pl.when(c("rn_nan_ret") > 0).then(0.0).otherwise(
            safe_ratio(c("rn_ret"), c("njg"))),
    }[measure]


def _stats(name: str, param: str, summed: bool
           ) -> Callable[[Params, Context], Sequence[Stat]]:
    def stats(params: Params, ctx: Context) -> Sequence[Stat]:
        conv = effective(params, ctx, CONVS)
        which = str(params[param])

        def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
            # the order of the counts is fixed (score, then id ascending); ties: id for the
            # query table only (its status and policies)
            counts = ctx.memo.get(lf, ("prefs_counts",), lambda: _counts(ctx, lf).cache())
            pq = joined_per_query(ctx.memo, lf, {**conv, "ties": "id"}, None).join(
                counts, on=Q, how="left")
            counted = c("status").is_in(["ok", "no_relevant"])
            value = pl.when(counted).then(_value(which).fill_null(0.0)).otherwise(0.0)
            return pq.select(Q, *keys, "w", "status", "straddle",
                             pl.when(c("keep")).then(value).alias("value"))

        extra = None
        if summed:
            kept = c("value").is_not_null()
            extra = {"total": lambda: query_sum(pl.when(kept).then(c("value")), "total")}
        return [query_stat(name, None, conv, per_query, extra, key_extra=f"{{{which}}}")]

    return stats


def _mean(stats: StatValues, params: Params) -> MetricValue:
    return value_of(stats, None)


def _sum(stats: StatValues, params: Params) -> MetricValue:
    mv = value_of(stats, None)
    df = next(iter(stats.values()))
    mv.value = float(df["total"][0]) if df.height else 0.0
    return mv


_SOURCE = ("Judgments: the prefs_file option (trec_eval -R prefs: 'qid jg jsg docno level' "
           "lines), else the truth read as trec_eval -R qrels_prefs does (one judgment group "
           "and sub-group per query, the relevance as the level). The run's order: score "
           "descending, ties by item id ascending (trec_eval's order for preferences). ")
_EXAMPLE_DATA = """
    ...     predictions={"query": [1], "item": [["b", "x", "a", "c"]]},
    ...     truth={"query": [1, 1, 1, 1], "item": ["a", "b", "c", "d"],
    ...            "relevance": [2, 1, 0, 1]}).values()"""

METRICS: list[Metric] = [
    Metric(
        name="prefs", family=FAMILY,
        summary="share of the judged document preferences (A better than B) that the ranking "
        "fulfils: trec_eval's preference measures",
        formula="simp = fulfilled / possible preferences (summed over judgment groups); "
        "avgjg = mean over judgment groups of that ratio; pair = mean over document pairs of "
        "the share of the pair's preferences fulfilled; _ret: only preferences between two "
        "retrieved documents; _imp: at least one retrieved (the retrieved one wins); "
        "avgjg_Rnonrel: avgjg with each judgment group's non-relevant documents brought to "
        "its R relevant ones",
        direction="higher", needs=(), stats=_stats("prefs", "measure", False), value=_mean,
        ratio=mean_ratio,
        params=(MEASURE, *(cv.param for cv in CONVS), THRESHOLD, RELEVANT_CONV.param, COMPAT),
        conventions=_SOURCE + "A preference between two documents not retrieved counts as "
        "failed in simp, avgjg and pair. Mean over queries, weighted by the query weight when "
        "a weight column is given. Not in the default set: name it. " + conventions_text(CONVS),
        peer="trec_eval prefs_simp, prefs_pair, prefs_avgjg, prefs_avgjg_Rnonrel and their "
        "_ret/_imp variants (-m all_prefs; prefs_simp_ret is prefs[measure=simp_ret])",
        range=(0.0, 1.0), in_default_set=False,
        example="""
    >>> from evalcli import evaluate  # a > b, a > c, a > d, b > c, d > c: b, a, c retrieved
    >>> evaluate({"task": "ranking", "metrics": ["prefs", "prefs[measure=simp_ret]"]},""" +
        _EXAMPLE_DATA + """  # fulfilled: a > c, a > d, b > c: 3/5; retrieved: 2/3
    {'prefs': 0.6, 'prefs[measure=simp_ret]': 0.6666666666666666}
    """),
    Metric(
        name="num_prefs", family=FAMILY,
        summary="number of judged document preferences (all, fulfilled, or fulfilled between "
        "two retrieved documents), summed over the queries evaluated",
        formula="Σ_q |preferences_q| (count=poss); fulfilled ones (ful); fulfilled with both "
        "documents retrieved (ful_ret) (a sum, not a mean)",
        direction="higher", needs=(), stats=_stats("num_prefs", "count", True), value=_sum,
        params=(COUNT, *(cv.param for cv in CONVS), THRESHOLD, RELEVANT_CONV.param, COMPAT),
        interval_doc="none: a count of the evaluated queries' preferences, not an estimate",
        conventions=_SOURCE + "A count, summed over the queries the policies keep (weights "
        "are not applied). Not in the default set: name it. " + conventions_text(CONVS),
        peer="trec_eval prefs_num_prefs_poss, prefs_num_prefs_ful, prefs_num_prefs_ful_ret "
        "(their 'all' line is the sum over queries)",
        range=(0.0, None), in_default_set=False,
        example="""
    >>> from evalcli import evaluate  # the data of prefs' example
    >>> evaluate({"task": "ranking", "metrics": ["num_prefs", "num_prefs[count=ful]"]},""" +
        _EXAMPLE_DATA + """
    {'num_prefs': 5.0, 'num_prefs[count=ful]': 3.0}
    """),
]

