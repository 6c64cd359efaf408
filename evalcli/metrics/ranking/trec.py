"""trec_eval's measures beyond the common ones: bpref, the geometric means gm_map and gm_bpref,
interpolated precision at a recall level and its 11-point average, precision at multiples of R,
relative precision, set MAP, utility, binG, and the graded measures G, ndcg_rel and Rndcg (over
trec_eval's ideal ranking: the judged items' gains, best first).

Each is the per-query value of trec_eval 10's ``m_<name>.c`` written as Polars expressions over
the ranked frame (:mod:`.frame`), averaged over queries as the other ranking metrics are (the
geometric means: ``exp`` of the weighted mean of ``log max(value, 0.00001)``, trec_eval's
``MIN_GEO_MEAN``, from sums over queries that add across parts). With ``compat: trec_eval`` the
values equal trec_eval's (``tests/test_trec_eval_suite.py``: its regression suite and random
runs against pytrec_eval). None is in the default metric set: name them.

Per query, with the notation of :mod:`.metrics`: ``R`` relevant judged items, ``N`` items judged
not relevant (0 <= relevance < threshold; trec_eval takes a negative relevance as in the pool but
unjudged), ``|list|`` the items retrieved, ``hits`` the relevant ones among them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from evalcli.metrics.base import (
    Context,
    Direction,
    Metric,
    MetricValue,
    Param,
    Params,
    Stat,
    StatValues,
)
from evalcli.metrics.ranking.conventions import (
    COMPAT,
    GAIN,
    MISSING,
    NO_RELEVANT,
    POLICIES,
    RBP_SCALE,
    RELEVANT_TEXT,
    STRICT_TIES,
    THRESHOLD,
    TIE_NOTE,
    TIES,
    UNJUDGED,
    Convention,
    K,
    conventions_text,
    effective,
)
from evalcli.metrics.ranking.conventions import (
    RELEVANT as RELEVANT_CONV,
)
from evalcli.metrics.ranking.frame import (
    F64,
    Q,
    joined_per_query,
    judged_rows,
    ranked,
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
from evalcli.metrics.stats import as_column, in_order_sum

c = pl.col

STRICT = (STRICT_TIES, MISSING, NO_RELEVANT, UNJUDGED)
GAINED = (STRICT_TIES, GAIN, MISSING, NO_RELEVANT, UNJUDGED)
MIN_GEO_MEAN = 0.00001
"""trec_eval's floor of a per-query value before the log of a geometric mean."""
LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""trec_eval's recall levels of iprec_at_recall and 11pt_avg."""
STRICT_NOTE = ("Ties are broken (id: item id descending, as trec_eval; or input): the value "
               "is a maximum over positions, whose expectation over random tie orders has no "
               "closed form here.")
RELEVANT = ("Relevant: relevance >= relevance_threshold (unjudged items are not relevant). "
            "Mean over queries, weighted by the query weight when a weight column is given.")

# per query: (ctx, conventions, params, normalized frame) -> a frame by query to join (or
# None) and the value's expression over the joined per-query frame
Build = Callable[[Context, Mapping[str, Any], Params, pl.LazyFrame],
                 tuple[pl.LazyFrame | None, pl.Expr]]


def _own(params: Params, names: Sequence[str]) -> str:
    """The part of a statistic's key that the metric's own parameters make."""
    return "{" + ",".join(f"{n}={params.get(n)!r}" for n in names) + "}" if names else ""


def _stats_for(name: str, convs: Sequence[Convention], build: Build, own: Sequence[str],
               geometric: bool) -> Callable[[Params, Context], Sequence[Stat]]:
    def stats(params: Params, ctx: Context) -> Sequence[Stat]:
        conv = effective(params, ctx, convs)
        k = params.get("k")

        def per_query(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
            pq = joined_per_query(ctx.memo, lf, conv, k)
            frame, value = build(ctx, conv, params, lf)
            if frame is not None:
                pq = pq.join(frame, on=Q, how="left")
            # a query without predictions (missing=zero) or without truth (unjudged=zero)
            # counts 0, as trec_eval -c: it computes nothing for it
            counted = c("status").is_in(["ok", "no_relevant"])
            return pq.select(
                Q, *keys, "w", "status", "straddle",
                pl.when(c("keep")).then(pl.when(counted).then(value).otherwise(0.0))
                .alias("value"),
            )

        extra = None
        if geometric:
            kept = c("value").is_not_null()
            log = c("value").clip(lower_bound=MIN_GEO_MEAN).log()
            extra = {"sum_wlog": lambda: query_sum(pl.when(kept).then(c("w") * log),
                                                   "sum_wlog")}
        return [query_stat(name, k, conv, per_query, extra, key_extra=_own(params, own))]

    return stats


def _mean_value(stats: StatValues, params: Params) -> MetricValue:
    return value_of(stats, params.get("k"))


def _geometric_value(stats: StatValues, params: Params) -> MetricValue:
    mv = value_of(stats, None)
    df = next(iter(stats.values()))
    if mv.value is not None and df.height:
        mv.value = math.exp(float(df["sum_wlog"][0]) / float(df["sum_w"][0]))
    return mv


def _metric(name: str, summary: str, formula: str, build: Build, *,
            convs: Sequence[Convention] = POLICIES, own: Sequence[Param] = (),
            k: Param | None = None, aliases: tuple[str, ...] = (), peer: str,
            conventions: str = "", rng: tuple[float | None, float | None] = (0.0, 1.0),
            geometric: bool = False, direction: Direction = "higher", example: str) -> Metric:
    params = (*((k,) if k is not None else ()), *own, *(cv.param for cv in convs), THRESHOLD,
              RELEVANT_CONV.param, COMPAT)
    ties = TIE_NOTE if TIES in convs else STRICT_NOTE
    return Metric(
        name=name, family=FAMILY, summary=summary, formula=formula, direction=direction,
        needs=(),
        stats=_stats_for(name, convs, build, [p.name for p in own], geometric),
        value=_geometric_value if geometric else _mean_value, params=params,
        ratio=None if geometric else mean_ratio,
        interval=None if geometric else t_interval_of,
        interval_doc="" if geometric else T_INTERVAL_DOC,
        conventions=(conventions + " " if conventions else "") + ties + " "
        + conventions_text(convs) + " " + RELEVANT + RELEVANT_TEXT
        + " Not in the default set: name it.",
        peer=peer, aliases=aliases, cutoff="k" if k is not None else None, range=rng,
        in_default_set=False, example=example,
    )


def _relevant_rows(ctx: Context, conv: Mapping[str, Any], lf: pl.LazyFrame) -> pl.LazyFrame:
    """The ranked rows with the query's ``R`` and ``N`` (queries of the truth only)."""
    thr = conv["relevance_threshold"]
    rk = ranked(ctx.memo, lf, conv["ties"], thr, "linear")
    truth = truth_per_query(ctx.memo, lf, thr, "linear", None).select(Q, "R", "N")
    # the rows stay in list order (the running sums over them read it)
    return rk.join(truth, on=Q, how="inner", maintain_order="left")


# --------------------------------------------------------------------------- bpref

def _bpref_frame(ctx: Context, conv: Mapping[str, Any], lf: pl.LazyFrame) -> pl.LazyFrame:
    """Per query ``bpref_sum``: Σ over the relevant items retrieved of the share of the
    preferences kept, ``1 − min(x, R)/min(N, R)`` with ``x`` the items judged not relevant
    ranked above (1 when ``x`` is 0). Under ties=average, ``x`` is the count above the tie
    group plus ``j``, uniform on 0..u (the position of the item among the group's ``u`` items
    judged not relevant): the term is the mean of the formula over ``j``, in closed form."""
    rows = _relevant_rows(ctx, conv, lf).with_columns(c("jn").cum_sum().over(Q).alias("_cj"))
    if conv["ties"] == "average":
        rows = rows.with_columns(
            (c("_cj") - c("jn")).first().over([Q, "s"]).alias("_a"),
            c("jn").sum().over([Q, "s"]).alias("_u"))
    else:
        rows = rows.with_columns((c("_cj") - c("jn")).alias("_a"), c("jn").alias("_u"))
    a, u, r = c("_a"), c("_u"), c("R")
    b = a + u
    lo = pl.max_horizontal(a, pl.lit(1))
    m = pl.min_horizontal(b, r)
    # Σ_{x=lo..b} min(x, R): x up to R, then R for each x above it
    below = pl.when(m >= lo).then((lo + m) * (m - lo + 1) // 2).otherwise(0)
    above = r * (b - pl.max_horizontal(lo, r + 1) + 1).clip(lower_bound=0)
    count = (b - lo + 1).clip(lower_bound=0)
    d = pl.min_horizontal(c("N"), r).cast(F64)
    total = (a == 0).cast(F64) + pl.when(count > 0).then(
        count.cast(F64) - (below + above).cast(F64) / d).otherwise(0.0)
    term = total / (u + 1).cast(F64)
    return rows.filter(c("b") == 1).group_by(Q).agg(
        in_order_sum(term, "pos").alias("bpref_sum"))


def _bpref(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
           ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    return _bpref_frame(ctx, conv, lf), safe_ratio(c("bpref_sum").fill_null(0.0), c("R").cast(F64))


def _ap(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
        ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    return None, safe_ratio(c("ap_sum"), c("R").cast(F64))


# --------------------------------------------------------------------------- interpolated precision

def _cut(level: float, rounding: str) -> pl.Expr:
    """trec_eval's number of relevant items at a recall level: lround(level·R) (trec_eval
    10), or (long)(level·R + 0.9) (trec_eval 9, and pytrec_eval's copy of it)."""
    at = pl.lit(level, dtype=F64) * c("R").cast(F64)
    if rounding == "v9":
        return (at + 0.9).floor()
    return at.round(0, mode="half_away_from_zero")


def _iprec_frame(ctx: Context, conv: Mapping[str, Any], levels: Sequence[float],
                 rounding: str) -> Callable[[pl.LazyFrame], pl.LazyFrame]:
    """Per query and level ``i``, ``ip<i>``: the highest precision at or below the position of
    the lround(level·R)-th relevant item (from the first one for level 0), trec_eval's
    ``Int_Prec(X) = max_{Y >= X} Prec(Y)`` (precision falls between relevant items, so the
    maximum is at one of them)."""
    def build(lf: pl.LazyFrame) -> pl.LazyFrame:
        rows = _relevant_rows(ctx, conv, lf).filter(c("b") == 1).with_columns(
            c("b").cum_sum().over(Q).alias("_m"))
        prec = c("_m").cast(F64) / c("pos").cast(F64)
        return rows.group_by(Q).agg(
            prec.filter(c("_m").cast(F64) >= pl.max_horizontal(_cut(lv, rounding), pl.lit(1.0)))
            .max()
            .alias(f"ip{i}") for i, lv in enumerate(levels))

    return build


def _iprec_value(i: int, level: float, rounding: str) -> pl.Expr:
    """0 when fewer than lround(level·R) relevant items are retrieved (trec_eval's 0)."""
    return pl.when(_cut(level, rounding) > c("hits")).then(0.0).otherwise(
        c(f"ip{i}").fill_null(0.0))


def _iprec(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
           ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    level, rounding = params["recall"], params["rounding"]
    return (_iprec_frame(ctx, conv, [level], rounding)(lf),
            _iprec_value(0, level, rounding))


def _11pt(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
          ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    rounding, levels = params["rounding"], params["levels"] or LEVELS
    total = pl.lit(0.0)
    for i in reversed(range(len(levels))):  # trec_eval adds from the highest level down
        total = total + _iprec_value(i, levels[i], rounding)
    return (_iprec_frame(ctx, conv, levels, rounding)(lf),
            total / as_column(float(len(levels)), c("R")))


# ------------------------------------------------------------------ set and cut-off measures

def _rprec_mult(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
                ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    """Expected hits in the top ``cut = (long)(mult·R + 0.9)`` (trec_eval's cut-off), over
    ``cut`` (also when fewer items are retrieved: trec_eval's num_rel_ret / cut)."""
    mult = params["mult"]
    cut = (pl.lit(mult, dtype=F64) * c("R").cast(F64) + 0.9).floor().cast(pl.Int64)
    rows = _relevant_rows(ctx, conv, lf).with_columns(cut.alias("_cut"))
    m = (c("_cut") - c("s")).clip(0, c("n")).cast(F64)
    at = rows.filter(c("s") < c("_cut")).group_by(Q).agg(
        in_order_sum(c("b").cast(F64) * m / c("n").cast(F64), "pos").alias("hits_cut"))
    return at, safe_ratio(c("hits_cut").fill_null(0.0), cut.cast(F64))


def _relative_p(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
                ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    k = params.get("k")
    size = c("qlen") if k is None else pl.lit(k, dtype=pl.Int64)
    return None, safe_ratio(c("hits"), pl.min_horizontal(size, c("R")).cast(F64))


def _set_map(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
             ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    return None, safe_ratio(c("hits") * c("hits"), c("qlen").cast(F64) * c("R").cast(F64))


def _utility(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
             ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    hits, ret, rel = c("hits"), c("qlen").cast(F64), c("R").cast(F64)
    docs = float(params["num_docs"])
    return None, (params["rel_ret"] * hits + params["nonrel_ret"] * (ret - hits)
                  + params["rel_missed"] * (rel - hits)
                  + params["nonrel_missed"] * (docs + hits - ret - rel))


def _bin_g(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
           ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    """Σ over the relevant items retrieved of 1 / log2(2 + o), ``o`` the other items above it
    (trec_eval's 3 + i − rel_so_far, i from 0), over R."""
    rows = _relevant_rows(ctx, conv, lf).filter(c("b") == 1).with_columns(
        c("b").cum_sum().over(Q).alias("_m"))
    term = 1.0 / (c("pos") + 2 - c("_m")).cast(F64).log(2)
    return (rows.group_by(Q).agg(in_order_sum(term, "pos").alias("bin_g_sum")),
            safe_ratio(c("bin_g_sum").fill_null(0.0), c("R").cast(F64)))



# ------------------------------------------------------- gain measures: G, ndcg_rel, Rndcg

def _log2(x: pl.Expr) -> pl.Expr:
    return x.cast(F64).log(2)


def _ideal(ctx: Context, conv: Mapping[str, Any], lf: pl.LazyFrame) -> pl.LazyFrame:
    """The judged items of each query, best gain first (``ipos``: the ideal position), with
    trec_eval's running sums along the ideal ranking at each position: ``icost`` (Σ max(gain,
    1), G's cost), ``iidcg`` (the ideal DCG; only positive gains count, as trec_eval's ideal
    ranking stops at the first gain <= 0) and ``last`` (the ideal gain changes after this
    position: the next item's gain differs, or there is none)."""
    judged = judged_rows(ctx.memo, lf, conv["relevance_threshold"], conv["gain"])
    g, ipos = c("g"), c("ipos")
    pos_g = pl.when(g > 0).then(g).otherwise(0.0)
    return judged.select(
        Q, ipos, g.alias("ig"),
        pl.max_horizontal(g, pl.lit(1.0)).cum_sum().over(Q).alias("icost"),
        (pos_g / _log2(ipos + 1)).cum_sum().over(Q).alias("iidcg"),
        g.shift(-1).over(Q).ne_missing(g).alias("last"),
    )


def _gain_rows(ctx: Context, conv: Mapping[str, Any], lf: pl.LazyFrame
               ) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The ranked rows (ties broken) with the running sums along the list, ``cg`` (Σ gain) and
    ``cdcg`` (DCG), and the ideal's at the same position, ``icost`` and ``iidcg`` (past the
    judged items: the cost grows by 1 a position, the ideal DCG stays); and per query the
    ideal's totals: ``M`` (items of positive gain), ``IG`` (their gain), ``IDCG``, ``J``."""
    ideal = _ideal(ctx, conv, lf)
    totals = ideal.group_by(Q).agg(
        (c("ig") > 0).sum().cast(pl.Int64).alias("M"),
        in_order_sum(pl.when(c("ig") > 0).then(c("ig")).otherwise(0.0), "ipos").alias("IG"),
        c("iidcg").last().alias("IDCG"), c("icost").last().alias("COST"),
        pl.len().cast(pl.Int64).alias("J"))
    rk = ranked(ctx.memo, lf, conv["ties"], conv["relevance_threshold"], conv["gain"])
    rows = rk.select(
        Q, "pos", "g", "qlen",
        c("g").cum_sum().over(Q).alias("cg"),
        (c("g") / _log2(c("pos") + 1)).cum_sum().over(Q).alias("cdcg"),
    ).join(totals, on=Q, how="inner", maintain_order="left").join(
        ideal.select(Q, c("ipos").alias("pos"), "icost", "iidcg"), on=[Q, "pos"], how="left",
        maintain_order="left",  # list order: the last row of a query is its end
    ).with_columns(
        c("icost").fill_null(c("COST") + (c("pos") - c("J")).cast(F64)),
        c("iidcg").fill_null(c("IDCG")),
    )
    return rows, totals


def _g(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
       ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    """Σ over the items retrieved with a gain of gain / log2(2 + cost − Σ gains so far), the
    cost the ideal's Σ max(gain, 1) to that position, over the ideal's total gain."""
    rows, totals = _gain_rows(ctx, conv, lf)
    term = c("g") / _log2(2.0 + c("icost") - c("cg"))
    per = rows.filter(c("g") != 0).group_by(Q).agg(in_order_sum(term, "pos").alias("g_sum"))
    frame = totals.select(Q, "IG").join(per, on=Q, how="left")
    return frame, safe_ratio(c("g_sum").fill_null(0.0), c("IG"))


def _ndcg_rel(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
              ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    """NDCG at each item of positive gain, retrieved (at its position) or not (at the end of
    the list), averaged over the M items of positive gain."""
    rows, totals = _gain_rows(ctx, conv, lf)
    term = c("cdcg") / c("iidcg")
    per = rows.group_by(Q).agg(
        in_order_sum(pl.when(c("g") > 0).then(term).otherwise(0.0), "pos").alias("nr_sum"),
        (c("g") > 0).sum().cast(pl.Int64).alias("nr_ret"),
        c("cdcg").last().alias("nr_dcg"))
    frame = totals.select(Q, "M", "IDCG").join(per, on=Q, how="left")
    total = c("nr_sum").fill_null(0.0) + (
        (c("M") - c("nr_ret").fill_null(0)).cast(F64) * c("nr_dcg").fill_null(0.0)
        / c("IDCG"))
    return frame, pl.when((c("M") > 0) & (total > 0)).then(total / c("M").cast(F64)
                                                           ).otherwise(0.0)


def _rndcg(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
           ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    """NDCG at each position where the ideal gain changes (after the last item of each gain
    of the ideal ranking, the last one of positive gain included) and, when the list goes on
    past the item after that one, at its end, averaged (0 without a relevant item)."""
    rows, totals = _gain_rows(ctx, conv, lf)
    ideal = _ideal(ctx, conv, lf).filter(c("last") & (c("ig") > 0))
    dcg_at = rows.select(Q, c("pos").alias("ipos"), "cdcg")
    ends = rows.group_by(Q).agg(c("cdcg").last().alias("rn_dcg"), c("qlen").first())
    points = ideal.join(dcg_at, on=[Q, "ipos"], how="left").join(ends, on=Q, how="inner")
    at = c("cdcg").fill_null(c("rn_dcg")) / c("iidcg")
    per = points.group_by(Q).agg(in_order_sum(at, "ipos").alias("rn_sum"),
                                 pl.len().cast(pl.Int64).alias("rn_n"))
    frame = totals.select(Q, "M", "IDCG").join(ends, on=Q, how="left").join(
        per, on=Q, how="left")
    tail = ((c("qlen") > c("M") + 1) & (c("M") > 0)).fill_null(False)
    num = c("rn_sum").fill_null(0.0) + pl.when(tail).then(c("rn_dcg") / c("IDCG")).otherwise(0.0)
    den = (c("rn_n").fill_null(0) + tail.cast(pl.Int64)).cast(F64)
    return frame, pl.when(c("R") > 0).then(safe_ratio(num, den)).otherwise(0.0)


# ------------------------------------------------------------ rank-biased precision, unjudged

def _rbp(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
         ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    """(1 − p) Σ gain_i·p^(i−1), the gains of the query divided by its highest judged gain when
    that is above 1 (trec_eval's normalisation of the gains to [0, 1]). Under ties=average
    each position of a tie group carries the group's mean gain (the expectation: the sum is
    linear in the gains at each position)."""
    p = params["p"]
    thr = conv["relevance_threshold"]
    top = judged_rows(ctx.memo, lf, thr, conv["gain"]).group_by(Q).agg(
        c("g").max().alias("_gmax"))
    rows = ranked(ctx.memo, lf, conv["ties"], thr, conv["gain"]).join(
        top, on=Q, how="inner", maintain_order="left")  # list order: running sums below
    if conv["scale"] == "none":  # ranx: the relevant items' relevance, unscaled
        gain = c("b").cast(F64) * c("g")
        if conv["ties"] == "average":  # the tie group's mean of it
            gain = gain.sum().over(Q, "s_tie") / c("n").cast(F64)
        term = gain * pl.lit(p, dtype=F64).pow(c("pos") - 1)
    else:
        scale = pl.when(c("_gmax") > 1.0).then(c("_gmax")).otherwise(1.0)
        term = (c("G") / c("n").cast(F64)) / scale * pl.lit(p, dtype=F64).pow(c("pos") - 1)
    frame = rows.group_by(Q).agg(in_order_sum(term, "pos").alias("rbp_sum"))
    return frame, (1.0 - p) * c("rbp_sum").fill_null(0.0)


def _unjudged_rows(ctx: Context, conv: Mapping[str, Any], lf: pl.LazyFrame) -> pl.LazyFrame:
    """The ranked rows with ``u``: the expected share of unjudged items (no truth row, or a
    negative relevance: trec_eval's -1 and -2) at the row's position (under ties=average,
    the tie group's share)."""
    rows = ranked(ctx.memo, lf, conv["ties"], conv["relevance_threshold"], "linear")
    unj = (~c("judged")).cast(F64)
    if conv["ties"] == "average":
        return rows.with_columns((unj.sum().over([Q, "s"]) / c("n").cast(F64)).alias("u"))
    return rows.with_columns(unj.alias("u"))


def _rbp_resid(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
               ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    """When the list holds an unjudged item: p^|list| + (1 − p) Σ_{unjudged i} p^(i−1), the
    most rbp could rise if every unjudged item (and every item past the list) had the
    highest gain; 0 otherwise (as trec_eval)."""
    p = params["p"]
    rows = _unjudged_rows(ctx, conv, lf)
    pp = pl.lit(p, dtype=F64)
    frame = rows.group_by(Q).agg(
        in_order_sum(c("u") * pp.pow(c("pos") - 1), "pos").alias("resid_sum"),
        c("u").sum().alias("resid_n"))
    value = pp.pow(c("qlen")) + (1.0 - p) * c("resid_sum")
    return frame, pl.when(c("resid_n").fill_null(0.0) > 0).then(value).otherwise(0.0)


def _unj(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
         ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    """Unjudged items in the top k over k (no k: over the list); under ties=average the
    expected count, as hits@k."""
    k = params.get("k")
    rows = _unjudged_rows(ctx, conv, lf)
    if k is None:
        frame = rows.group_by(Q).agg(in_order_sum(c("u"), "pos").alias("unj_n"))
        return frame, safe_ratio(c("unj_n").fill_null(0.0), c("qlen").cast(F64))
    # each unjudged item of a tie group is in the top k with probability clip(k − s, 0, n)/n
    within = (pl.lit(k, dtype=pl.Int64) - c("s")).clip(0, c("n")).cast(F64) / c("n").cast(F64)
    frame = rows.filter(c("s") < k).group_by(Q).agg(
        in_order_sum((~c("judged")).cast(F64) * within, "pos").alias("unj_n"))
    return frame, c("unj_n").fill_null(0.0) / float(k)


# --------------------------------------------------------------------------- infAP

INFAP_EPSILON = 0.00001
"""trec_eval's smoothing of infAP's estimate of the precision among the judged items above."""


def _infap(ctx: Context, conv: Mapping[str, Any], params: Params, lf: pl.LazyFrame
           ) -> tuple[pl.LazyFrame | None, pl.Expr]:
    """Yilmaz and Aslam's inferred AP as m_infap.c computes it: at each relevant item at
    position j + 1 (j items above), 1 at the top, else 1/(j+1) + (j/(j+1))·(a/j)·((r + ε)/(r +
    n + 2ε)), with r, n and u the relevant, judged non-relevant and pooled-unjudged
    (relevance < 0) items above and a = r + n + u (items outside the truth count only in j);
    summed and divided by R."""
    rows = ranked(ctx.memo, lf, conv["ties"], conv["relevance_threshold"], "linear")
    unj = (c("pooled") & ~c("judged")).cast(pl.Int64)
    rows = rows.with_columns(
        (c("b").cum_sum().over(Q) - c("b")).alias("_r"),
        (c("jn").cum_sum().over(Q) - c("jn")).alias("_n"),
        (unj.cum_sum().over(Q) - unj).alias("_u"),
    ).filter(c("b") == 1)
    j = (c("pos") - 1).cast(F64)
    r, n = c("_r").cast(F64), c("_n").cast(F64)
    above = (c("_r") + c("_n") + c("_u")).cast(F64)
    term = pl.when(c("pos") == 1).then(1.0).otherwise(
        1.0 / (j + 1.0) + (j / (j + 1.0)) * (above / j)
        * ((r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)))
    frame = rows.group_by(Q).agg(in_order_sum(term, "pos").alias("infap_sum"))
    return frame, safe_ratio(c("infap_sum").fill_null(0.0), c("R").cast(F64))

MULT = Param("mult", float, None, "the multiple of R: the cut-off is (long)(mult·R + 0.9) "
             "(trec_eval's Rprec_mult_0.20 is mult=0.2)", gt=0.0)
UTILITY = (
    Param("rel_ret", float, 1.0, "worth of each relevant item retrieved (trec_eval's p1)"),
    Param("nonrel_ret", float, -1.0, "worth of each other item retrieved (p2)"),
    Param("rel_missed", float, 0.0, "worth of each relevant item not retrieved (p3)"),
    Param("nonrel_missed", float, 0.0, "worth of each other item not retrieved (p4; with "
          "num_docs)"),
    Param("num_docs", int, 0, "items in the collection, for nonrel_missed (trec_eval's -N)",
          ge=0),
)
RECALL = Param("recall", float, None, "the recall level, from 0 to 1 (trec_eval's "
               "iprec_at_recall_0.10 is recall=0.1)", ge=0.0, le=1.0)
PERSISTENCE = Param("p", float, 0.9, "the persistence: the chance the user goes on to the next "
                    "item (trec_eval's rbp.p, default 0.9)", gt=0.0, lt=1.0)


def _levels(levels: tuple[float, ...]) -> tuple[float, ...]:
    """Recall levels in ascending order (the mean does not depend on it; one id per set),
    at least one, none twice."""
    if not levels:
        raise ValueError("give at least one recall level")
    ordered = tuple(sorted(levels))
    twice = [a for a, b in itertools.pairwise(ordered) if a == b]
    if twice:
        raise ValueError(f"recall level {twice[0]:g} is listed twice")
    return ordered


LEVELS_PARAM = Param(
    "levels", tuple, None,
    "the recall levels averaged, e.g. [0.25, 0.5, 0.75] (trec_eval's 11pt_avg..25,.5,.75); "
    "unset: trec_eval's eleven, 0, 0.1, ..., 1", item=float, ge=0.0, le=1.0,
    normalize=_levels, nullable=True,
)
ROUNDING = Param("rounding", str, "nearest",
                 "relevant items a recall level x takes: nearest (lround(x·R), trec_eval 10) "
                 "or v9 ((long)(x·R + 0.9), trec_eval 9 and pytrec_eval)",
                 choices=("nearest", "v9"))


# --------------------------------------------------------------------------- metrics

METRICS: list[Metric] = [
    _metric(
        "bpref", "binary preference: share of the (relevant, judged non-relevant) preferences "
        "the ranking keeps, ignoring unjudged items",
        "bpref = (1/R) Σ_{relevant i retrieved} (1 − min(n_i, R) / min(N, R)), n_i the items "
        "judged not relevant ranked above i (a term is 1 when n_i = 0)", _bpref,
        peer="trec_eval bpref (Buckley and Voorhees, SIGIR 2004)",
        conventions="Unjudged items play no part; N counts the judged items that are not "
        "relevant, retrieved or not.", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["bpref"]},  # b, d above c: 1 − 2/min(2, 2)
    ...     predictions={"query": [1], "item": [["a", "b", "x", "d", "c"]]},
    ...     truth={"query": [1, 1, 1, 1], "item": ["a", "b", "c", "d"],
    ...            "relevance": [1, 0, 1, 0]}).values()  # x unjudged: (1 + 0) / 2
    {'bpref': 0.5}
    """),
    _metric(
        "gm_map", "geometric mean over queries of average precision",
        "gm_map = exp(Σ_q w_q·log max(AP_q, 0.00001) / Σ_q w_q)", _ap, geometric=True,
        aliases=("gmap",),
        peer="trec_eval gm_map (its per-query lines are empty; the per-query value here is AP)",
        conventions="Each query's AP is floored at 0.00001 (trec_eval's MIN_GEO_MEAN) before "
        "the log, so a query at 0 lowers the mean without zeroing it. The interval: the "
        "bootstrap over queries.", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["gm_map", "map"]},  # APs 1 and 1/2
    ...     predictions={"query": [1, 2], "item": [["a", "b"], ["c", "d"]]},
    ...     truth={"query": [1, 2], "item": ["a", "d"]}).values()
    {'gm_map': 0.7071067811865476, 'map': 0.75}
    """),
    _metric(
        "gm_bpref", "geometric mean over queries of bpref",
        "gm_bpref = exp(Σ_q w_q·log max(bpref_q, 0.00001) / Σ_q w_q)", _bpref, geometric=True,
        peer="trec_eval gm_bpref (its per-query lines are empty; the per-query value here is "
        "bpref)",
        conventions="Each query's bpref is floored at 0.00001 (trec_eval's MIN_GEO_MEAN) "
        "before the log. The interval: the bootstrap over queries.", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["gm_bpref", "bpref"]},  # bprefs 1 and 0
    ...     predictions={"query": [1, 2], "item": [["a", "b"], ["c", "d"]]},
    ...     truth={"query": [1, 1, 2, 2], "item": ["a", "b", "c", "d"],
    ...            "relevance": [1, 0, 0, 1]}).values()  # sqrt(1 · 0.00001)
    {'gm_bpref': 0.003162277660168379, 'bpref': 0.5}
    """),
    _metric(
        "iprec_at_recall", "interpolated precision at a recall level: the best precision at "
        "or beyond the point where the level's share of the relevant items is retrieved",
        "iprec(x) = max_{j >= rank of the c-th relevant item} P@j, c = lround(x·R) (from the "
        "first relevant item when c = 0); 0 when fewer than c relevant items are retrieved",
        _iprec, convs=STRICT, own=(RECALL, ROUNDING), aliases=("interpolated_precision",),
        peer="trec_eval iprec_at_recall (its iprec_at_recall_0.10 is iprec_at_recall"
        "[recall=0.1])",
        conventions="The level takes lround(x·R) relevant items, as trec_eval 10 (rounding=v9: "
        "(long)(x·R + 0.9), as trec_eval 9 and the pytrec_eval builds that copy it).", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["iprec_at_recall[recall=0.5]"]},
    ...     predictions={"query": [1], "item": [["x", "a", "b", "y"]]},  # P@2 = 1/2, P@3 = 2/3
    ...     truth={"query": [1, 1, 1, 1], "item": ["a", "b", "c", "d"]}).values()  # c = 2
    {'iprec_at_recall[recall=0.5]': 0.6666666666666666}
    """),
    _metric(
        "iprec_11pt_avg", "interpolated precision averaged over the 11 recall levels 0, 0.1, "
        "..., 1 (or the levels given)",
        "11pt_avg = (1/|L|) Σ_{x in L} iprec(x), L = levels (0, 0.1, ..., 1)", _11pt,
        convs=STRICT, own=(LEVELS_PARAM, ROUNDING),
        aliases=("11pt_avg", "eleven_point_average"),
        peer="trec_eval 11pt_avg (its 11pt_avg..25,.5,.75 is levels=[0.25, 0.5, 0.75]); "
        "pytrec_eval 11pt_avg at rounding=v9",
        conventions="The levels take lround(x·R) relevant items, as trec_eval 10 (rounding=v9: "
        "(long)(x·R + 0.9), as trec_eval 9 and pytrec_eval; see iprec_at_recall). levels: "
        "any recall levels, sorted (trec_eval expects them in ascending order and gives "
        "another number when they are not; a level given twice is an error here, where "
        "trec_eval counts it twice).",
        example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": [  # R = 2; levels 0-0.7 take 1 relevant item
    ...     "11pt_avg", {"metric": "11pt_avg", "rounding": "v9"},  # (v9: 0-0.5), 0.8-1 take 2
    ...     {"metric": "11pt_avg", "levels": [0.25, 0.5, 0.75]}]},  # 0.75 takes 2: 2/3
    ...     predictions={"query": [1], "item": [["a", "x"]]},  # 1 where 1 item, 0 where 2
    ...     truth={"query": [1, 1], "item": ["a", "b"]}).values()  # 8/11 (v9: 6/11)
    {'iprec_11pt_avg': 0.7272727272727273, 'iprec_11pt_avg[rounding=v9]': 0.5454545454545454,
     'iprec_11pt_avg[levels=0.25|0.5|0.75]': 0.6666666666666666}
    """),
    _metric(
        "rprec_mult", "precision at a multiple of R, the number of relevant items of the query",
        "Rprec_mult(m) = hits@c / c, c = (long)(m·R + 0.9)", _rprec_mult, own=(MULT,),
        peer="trec_eval Rprec_mult (its Rprec_mult_0.20 is rprec_mult[mult=0.2])",
        conventions="Below R the value leans to precision, above it to recall; when fewer "
        "than c items are retrieved the denominator is still c.", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["rprec_mult[mult=2]", "Rprec_mult_0.5"]},
    ...     predictions={"query": [1], "item": [["a", "x", "b", "y"]]},  # R = 2: top 4, top 1
    ...     truth={"query": [1, 1], "item": ["a", "b"]}).values()  # 2/4, 1/1
    {'rprec_mult[mult=2]': 0.5, 'rprec_mult[mult=0.5]': 1.0}
    """),
    _metric(
        "relative_precision", "precision at k over the best precision possible at k: "
        "precision up to R, recall beyond it",
        "relative_P@k = hits@k / min(k, R) (no k: hits / min(|list|, R), set_relative_P)",
        _relative_p, k=K, aliases=("relative_p", "set_relative_p"),
        peer="trec_eval relative_P (relative_P_5 is relative_precision@5) and set_relative_P "
        "(no k)", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["relative_precision@2", "relative_P_5",
    ...                                          "set_relative_P"]},
    ...     predictions={"query": [1], "item": [["a", "x", "b"]]},  # R = 3
    ...     truth={"query": [1, 1, 1], "item": ["a", "b", "c"]}).values()  # 1/2, 2/3, 2/3
    {'relative_precision@2': 0.5, 'relative_precision@5': 0.6666666666666666,
     'relative_precision': 0.6666666666666666}
    """),
    _metric(
        "set_map", "unranked average precision: set precision times set recall",
        "set_map = hits² / (|list|·R)", _set_map,
        peer="trec_eval set_map (exact_unranked_avg_prec in its earlier versions)", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["set_map"]},  # (1/3)·(1/2)
    ...     predictions={"query": [1], "item": [["a", "x", "y"]]},
    ...     truth={"query": [1, 1], "item": ["a", "b"]}).values()
    {'set_map': 0.16666666666666666}
    """),
    _metric(
        "utility", "set utility: a worth for each retrieved or missed, relevant or other item, "
        "summed per query",
        "utility = p1·hits + p2·(|list| − hits) + p3·(R − hits) + p4·(num_docs + hits − |list| "
        "− R)", _utility, own=UTILITY, rng=(None, None),
        peer="trec_eval utility (default coefficients 1, −1, 0, 0)",
        conventions="Unjudged items retrieved count as other items. A query the policies count "
        "as 0 (missing=zero, unjudged=zero) is 0, as trec_eval -c; a judged query without a "
        "relevant item has its utility (the items retrieved cost p2 each).", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": [
    ...     "utility", {"metric": "utility", "rel_ret": 3, "rel_missed": -1}]},
    ...     predictions={"query": [1], "item": [["a", "x", "y"]]},  # 1 hit, 2 others, 1 missed
    ...     truth={"query": [1, 1], "item": ["a", "b"]}).values()  # 1 − 2; 3 − 2 − 1
    {'utility': -1.0, 'utility[rel_missed=-1,rel_ret=3]': 0.0}
    """),
    _metric(
        "bin_g", "binary G: each relevant item retrieved gains 1 / log2(2 + the other items "
        "above it), over R",
        "binG = (1/R) Σ_{relevant i retrieved} 1 / log2(2 + o_i), o_i the items ranked above i "
        "that are not relevant", _bin_g, convs=STRICT, aliases=("bing", "binary_g"),
        peer="trec_eval binG (G with binary gains, Buckley's experimental measure)",
        conventions="Unjudged items above count as not relevant.", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["binG"]},  # a: 1/log2(2); b: 1/log2(3)
    ...     predictions={"query": [1], "item": [["a", "x", "b"]]},
    ...     truth={"query": [1, 1, 1], "item": ["a", "b", "c"]}).values()  # over R = 3
    {'bin_g': 0.5436432511904857}
    """),
    _metric(
        "g", "trec_eval's G: each item retrieved gains gain / log2(2 + how far the "
        "gain so far lags the ideal's), over the ideal total gain",
        "G = (1/Σ_j ig_j) Σ_{i retrieved, gain_i ≠ 0} gain_i / log2(2 + Σ_{j<=i} max(ig_j, 1) − "
        "Σ_{j<=i} gain_j), ig_j the j-th best gain of the judged items (0 past them)", _g,
        convs=GAINED, aliases=("normalized_gain", "trec_g"),
        peer="trec_eval G (Buckley's experimental measure, 2008)",
        conventions="The ideal ranking is every judged item of positive gain, best first; its "
        "cost counts each position at least 1. Gains are the relevance (gain: linear, as "
        "trec_eval), whatever relevance_threshold is; unjudged items gain 0.", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["G"]},  # ideal gains 2, 1: costs 2, 3
    ...     predictions={"query": [1], "item": [["b", "a"]]},  # b: 1/log2(2 + 2 − 1)
    ...     truth={"query": [1, 1], "item": ["a", "b"],  # a: 2/log2(2 + 3 − 3)
    ...            "relevance": [2, 1]}).values()  # over 2 + 1
    {'g': 0.8769765845238191}
    """),
    _metric(
        "ndcg_rel", "NDCG averaged over the items of positive gain: at each one's position, "
        "or at the end of the list for those not retrieved",
        "ndcg_rel = (1/M) (Σ_{i retrieved, gain_i > 0} NDCG@i + (M − m)·DCG/IDCG), M the judged "
        "items of positive gain, m those retrieved", _ndcg_rel, convs=GAINED,
        peer="trec_eval ndcg_rel (experimental)",
        conventions="NDCG@i is DCG@i over the ideal DCG@i (the judged items' gains best first, "
        "the positive ones). Gains are the relevance (gain: linear, as trec_eval), whatever "
        "relevance_threshold is.", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["ndcg_rel"]},  # b at 1: NDCG@1 = 1/2
    ...     predictions={"query": [1], "item": [["b", "x"]]},  # a, c missed: 2 × DCG/IDCG,
    ...     truth={"query": [1, 1, 1], "item": ["a", "b", "c"],  # IDCG = 2 + 1/log2(3) + 1/2
    ...            "relevance": [2, 1, 1]}).values()  # (1/2 + 2/IDCG) / 3
    {'ndcg_rel': 0.37959596215986596}
    """),
    _metric(
        "rndcg", "NDCG averaged at the R levels: where the ideal ranking moves to a lower gain, "
        "and at the end of the list",
        "Rndcg = mean of NDCG@c over c in {last position of each positive gain of the ideal "
        "ranking} (and |list| when |list| > M + 1, M the judged items of positive gain)",
        _rndcg, convs=GAINED, aliases=("r_ndcg",),
        peer="trec_eval Rndcg (experimental)",
        conventions="The levels are those of the judged items' gains (gain: linear, as "
        "trec_eval); a query without a relevant item (relevance_threshold) is 0.", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["Rndcg"]},  # levels end at 1, 2; 4 > 2 + 1
    ...     predictions={"query": [1], "item": [["b", "x", "a", "y"]]},  # NDCG@1 = 1/2,
    ...     truth={"query": [1, 1], "item": ["a", "b"],  # NDCG@2 = 1/(2 + 1/log2(3)),
    ...            "relevance": [2, 1]}).values()  # NDCG@4 = (1 + 1)/(2 + 1/log2(3))
    {'rndcg': 0.5467604333826009}
    """),
    _metric(
        "rbp", "rank-biased precision: the gain a user collects per item viewed, going on from "
        "each item to the next with probability p",
        "RBP = (1 − p) Σ_i gain_i·p^(i−1), gains divided by the query's highest judged gain "
        "when it is above 1 (scale=none: gain_i = rel_i if relevant, else 0)", _rbp,
        convs=(*POLICIES, GAIN, RBP_SCALE), own=(PERSISTENCE,),
        aliases=("rank_biased_precision",),
        peer="trec_eval rbp (Moffat and Zobel, TOIS 2008; rbp.p=x is rbp[p=x]); ranx rbp.p "
        "(rbp[p=0.p] with compat: ranx, or scale: none)",
        conventions="Gains are the relevance (gain: linear, as trec_eval), brought to [0, 1] "
        "per query: divided by the highest gain among the query's judged items when it is "
        "above 1 (trec_eval 10 leaves the minimum and maximum of that scaling uninitialised; "
        "its printed values are those of a scaling from 0). scale=none (ranx): the relevance "
        "of each relevant item (relevance >= relevance_threshold) as it is, not scaled, so a "
        "graded query can exceed 1; items below the threshold gain 0. Unjudged items gain 0; "
        "the residual is rbp_resid.", rng=(0.0, None), example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["rbp", "rbp[p=0.5]"]},  # gains / 2: 1, 0, 1/2
    ...     predictions={"query": [1], "item": [["a", "x", "b"]]},
    ...     truth={"query": [1, 1], "item": ["a", "b"],  # 0.1·(1 + 0.81/2); 0.5·(1 + 0.25/2)
    ...            "relevance": [2, 1]}).values()
    {'rbp': 0.14049999999999996, 'rbp[p=0.5]': 0.5625}
    """),
    _metric(
        "rbp_resid", "rank-biased precision's residual: how much rbp could still rise if "
        "every unjudged item, and every item past the list, had the highest gain",
        "rbp_resid = p^|list| + (1 − p) Σ_{unjudged i} p^(i−1) when an item of the list is "
        "unjudged, else 0", _rbp_resid, own=(PERSISTENCE,), direction="lower",
        peer="trec_eval rbp_resid",
        conventions="Unjudged: no truth row, or a negative relevance (TREC's -1). A list "
        "without an unjudged item is 0, as trec_eval (the tail p^|list| is then left out).",
        example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["rbp_resid[p=0.5]"]},  # x unjudged at 2
    ...     predictions={"query": [1], "item": [["a", "x", "b"]]},  # 0.5^3 + 0.5·0.5
    ...     truth={"query": [1, 1], "item": ["a", "b"]}).values()
    {'rbp_resid[p=0.5]': 0.375}
    """),
    _metric(
        "unjudged_fraction", "share of unjudged items in the top k: a red flag for a run the "
        "judgments barely cover",
        "unj@k = |{i <= k : i unjudged}| / k (no k: over |list|)", _unj, k=K,
        aliases=("unj",), direction="lower",
        peer="trec_eval unj (unj_5 is unjudged_fraction@5)",
        conventions="Unjudged: no truth row, or a negative relevance (TREC's -1). A list "
        "shorter than k counts the missing places as judged (the denominator stays k), as "
        "trec_eval.", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["unj_5", "unjudged_fraction"]},
    ...     predictions={"query": [1], "item": [["a", "x", "b"]]},  # x: 1/5, 1/3
    ...     truth={"query": [1, 1], "item": ["a", "b"]}).values()
    {'unjudged_fraction@5': 0.2, 'unjudged_fraction': 0.3333333333333333}
    """),
    _metric(
        "infap", "inferred average precision: AP estimated from a random sample of the pool "
        "being judged (items of the pool left unjudged carry relevance < 0)",
        "infAP = (1/R) Σ_{relevant i retrieved} (1/i + ((i−1)/i)·(a_i/(i−1))·(r_i + ε)/(r_i + "
        "n_i + 2ε)), r_i, n_i, u_i the relevant, judged non-relevant and pooled-unjudged items "
        "above i, a_i = r_i + n_i + u_i, ε = 0.00001 (the term is 1 at the top)", _infap,
        convs=STRICT, aliases=("inf_ap", "inferred_ap"),
        peer="trec_eval infAP (Yilmaz and Aslam, CIKM 2006)",
        conventions="Pooled but unjudged: a truth row with a negative relevance (TREC's -1); an "
        "item without a truth row is outside the pool and counts as not relevant. On fully "
        "judged lists infAP is close to AP (not equal: ε).", example="""
    >>> from evalcli import evaluate
    >>> evaluate({"task": "ranking", "metrics": ["infAP", "map"]},  # b at 3: 1/3 + (2/3)·
    ...     predictions={"query": [1], "item": [["a", "x", "b"]]},  # (1/2)·(1 + ε)/(1 + 2ε)
    ...     truth={"query": [1, 1], "item": ["a", "b"]}).values()  # x outside the pool
    {'infap': 0.8333316666999994, 'map': 0.8333333333333333}
    """),
]
