"""The ranking family's core: the task contract, the conventions and presets, the ranked frame.

Every ranking metric is a mean over queries (users) of a per-query value, so its mergeable
statistics are the sums ``Σ w·value`` and ``Σ w`` over queries with counts of the queries each
policy kept or dropped: statistics of two parts with disjoint queries combine by adding.

The per-query values come from one *ranked frame*: the recommended rows sorted once by query,
score (descending) and the tie-break of the ``ties`` policy, with every positional quantity a
metric needs computed by linear scans over the sorted rows (cumulative sums restarted at each
query and each group of tied scores, forward and backward fills) rather than by a window per
query. Metrics and cut-offs that share conventions share this frame (the engine collects all
statistics together, and Polars runs a shared sub-plan once), and every metric at the same
cut-off shares one aggregation per query.

Ties. With ``ties: average`` (the default) a metric is its expected value when the items of each
group of tied scores are put in a uniformly random order: for the measures linear in the
positions (hits, DCG) that is scikit-learn's tie-averaged DCG; for average precision and the
reciprocal rank it is the closed form of McSherry and Najork (ECIR 2008). ``id`` breaks ties by
item id descending (trec_eval's ``comp_sim_docno``), ``input`` by the order of the rows in the
predictions file. Per row of the ranked frame, with positions counted from 1:

- ``pos``: the position under the strict order; ``s``: the number of items ranked strictly
  above the row's tie group (``pos − 1`` under a strict policy); ``n``: the group's size (1
  under a strict policy); ``t = pos − s``: the position inside the group;
- ``b``: 1 if the item is relevant (relevance >= threshold); ``r``: relevant items in the group;
  ``R0``: relevant items ranked above the group; ``G``: the group's total gain.

Expected hits in the top k: ``Σ b·clip(k − s, 0, n)/n``. Expected DCG@k: ``Σ_rows d(pos)·G/n``
with ``d(p) = 1/log2(p+1)`` for ``p <= k`` (each position of a group carries the group's mean
gain). Expected AP: ``Σ_{pos<=k} (r/n)·(R0 + 1 + (t−1)(r−1)/(n−1))/pos``. Expected RR: over the
first group holding a relevant item, ``Σ_t P_t/pos`` with ``P_t = (r/n)·Π_{i<t} (n−r−i+1)/(n−i)``
the probability that its first relevant item is at ``t``. Under a strict policy each formula
reduces to the usual one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from evalcli.errors import InputDataError, MetricError
from evalcli.metrics.base import (
    Check,
    Context,
    FrameStat,
    Memo,
    MetricValue,
    Param,
    Params,
    Stat,
)
from evalcli.metrics.stats import exact_sum, in_order_sum, product01, sum_by
from evalcli.metrics.task import Additions, Asks, Planned, Role, Task, TaskInput

if TYPE_CHECKING:
    from evalcli.metrics.base import Metric

FAMILY = "ranking"
Q, IT = "query", "item"  # role columns: the query and the item
ORDER = "__s"
"""The order key of a recommended row: the score, or minus the rank (higher is better)."""
REC, JUDGED, REL, POS = "__rec", "__judged", "__rel", "__pos"
F64 = pl.Float64
SEG = "seg:"
COMPATS = ("trec_eval", "spark", "sklearn", "recommenders", "ranx")
"""Key of ``Context.options`` that holds the side inputs (items, popularity, features) as
LazyFrames, scanned by the alignment step from the task's ``*_file`` options."""


# --------------------------------------------------------------------------- conventions

@dataclass(frozen=True)
class Convention:
    """A parameter where peers disagree: its declaration, evalcli's default and each preset."""

    param: Param
    default: Any
    presets: Mapping[str, Any]
    why: str
    """One line: which peer the default matches."""


def _conv(name: str, help_: str, choices: tuple[str, ...], default: str,
          presets: Mapping[str, str], why: str) -> Convention:
    param = Param(name, str, None, f"{help_}; unset: {default}, or the compat preset's",
                  choices=choices, nullable=True)
    return Convention(param, default, presets, why)


TIES = _conv(
    "ties",
    "order of items with equal scores: average (expected value over a random order of the "
    "tied items, as scikit-learn's ndcg_score), id (item id descending, as trec_eval), input "
    "(the order of the rows in the predictions file)",
    ("average", "id", "input"), "average",
    {"trec_eval": "id", "spark": "input", "sklearn": "average", "recommenders": "input",
     "ranx": "input"},
    "average matches scikit-learn and does not depend on ids or file order",
)
STRICT_TIES = _conv(
    "ties",
    "order of items with equal scores: id (item id descending, as trec_eval) or input (the "
    "order of the rows in the predictions file)",
    ("id", "input"), "id",
    {"trec_eval": "id", "spark": "input", "recommenders": "input", "ranx": "input"},
    "id is deterministic whatever the file order, as trec_eval",
)
MISSING = _conv(
    "missing",
    "queries with relevant items and no predictions: zero (count as 0, as trec_eval -c) or "
    "drop (as trec_eval without -c)",
    ("zero", "drop"), "zero",
    {"trec_eval": "drop", "spark": "zero", "sklearn": "zero", "recommenders": "drop",
     "ranx": "zero"},
    "zero: a system that returns nothing for a query is not rewarded for it (trec_eval -c)",
)
NO_RELEVANT = _conv(
    "no_relevant",
    "judged queries without a relevant item: drop them from the average (with a note) or "
    "count them as zero (as trec_eval, Spark MLlib, scikit-learn, ranx)",
    ("drop", "zero"), "drop",
    {"trec_eval": "zero", "spark": "zero", "sklearn": "zero", "recommenders": "drop",
     "ranx": "zero"},
    "drop: recall, AP and NDCG are undefined there (0/0), and a 0 would lower every system",
)
UNJUDGED = _conv(
    "unjudged",
    "queries of the predictions without any truth row: drop (as trec_eval) or zero (as "
    "Spark MLlib, whose empty ground-truth sets count 0)",
    ("drop", "zero"), "drop",
    {"trec_eval": "drop", "spark": "zero", "sklearn": "zero", "recommenders": "drop",
     "ranx": "drop"},
    "drop, as trec_eval: a query nobody judged says nothing about the system",
)
GAIN = _conv(
    "gain",
    "gain of an item of relevance rel: linear (rel, as trec_eval, scikit-learn and ranx's "
    "ndcg), exponential (2^rel − 1, as Spark MLlib and ranx's ndcg_burges) or binary (1 if "
    "relevant, as recommenders' default)",
    ("linear", "exponential", "binary"), "linear",
    {"trec_eval": "linear", "spark": "exponential", "sklearn": "linear",
     "recommenders": "binary", "ranx": "linear"},
    "linear, as trec_eval, scikit-learn and ranx",
)
PRECISION_DEN = _conv(
    "denominator",
    "precision@k's denominator when fewer than k items are recommended: k (as Spark MLlib, "
    "trec_eval, ranx, recommenders) or list (min(k, number recommended))",
    ("k", "list"), "k",
    {c: "k" for c in COMPATS},
    "k, as every peer",
)
MAP_DEN = _conv(
    "denominator",
    "average precision's denominator: relevant (|relevant|, as trec_eval, ranx and "
    "recommenders' map) or min_k_relevant (min(k, |relevant|), as Spark MLlib's "
    "meanAveragePrecisionAt and recommenders' map_at_k)",
    ("relevant", "min_k_relevant"), "relevant",
    {"trec_eval": "relevant", "spark": "min_k_relevant", "sklearn": "relevant",
     "recommenders": "min_k_relevant", "ranx": "relevant"},
    "relevant, as trec_eval and ranx",
)
COMPAT = Param(
    "compat", str, None,
    "set every convention to what a peer does (trec_eval, spark, sklearn, recommenders, ranx); "
    "explicit parameters override it; unset: the task option compat, else evalcli's defaults",
    choices=COMPATS, nullable=True,
)
THRESHOLD = Param(
    "relevance_threshold", float, 1.0,
    "an item is relevant when its relevance is >= this (trec_eval's -l, ranx's rel_lvl)", gt=0,
)
K = Param("k", int, None, "cut-off: the top k items of each query (unset: the whole list)",
          ge=1, nullable=True)
K_REQUIRED = Param("k", int, None, "cut-off: the top k items of each query", ge=1)


def conventions_text(convs: Sequence[Convention]) -> str:
    """The conventions paragraph of a metric: each parameter's default and the presets."""
    parts = []
    for c in convs:
        presets = ", ".join(f"{k}={v}" for k, v in c.presets.items())
        parts.append(f"{c.param.name}: default {c.default} ({c.why}); presets: {presets}.")
    return " ".join(parts)


def effective(params: Params, ctx: Context | None, convs: Sequence[Convention]) -> dict[str, Any]:
    """The conventions in force: explicit parameter, else the compat preset, else the default.

    >>> effective({"ties": None, "compat": "trec_eval"}, None, [TIES])
    {'compat': 'trec_eval', 'ties': 'id'}
    >>> effective({"ties": "input", "compat": "trec_eval"}, None, [TIES])
    {'compat': 'trec_eval', 'ties': 'input'}
    """
    compat = params.get("compat")
    if compat is None and ctx is not None:
        compat = ctx.options.get("compat")
    out: dict[str, Any] = {"compat": compat}
    for c in convs:
        v = params.get(c.param.name)
        if v is None:
            v = c.presets.get(compat, c.default) if compat is not None else c.default
        out[c.param.name] = v
    if "relevance_threshold" in params:
        out["relevance_threshold"] = float(params["relevance_threshold"])
    return out


# --------------------------------------------------------------------------- the task

def _role_numeric(role: str, t: TaskInput) -> list[Check]:
    dtype = t.schema.get(role)
    if dtype is None:
        return []
    if not dtype.is_numeric():
        return [Check(f"{role}_numeric", role, lambda: pl.col(role).is_not_null(),
                      f"the {role} column holds {dtype} values, not numbers",
                      f"point '{role}' at a numeric column")]
    return [Check(f"{role}_finite", role, lambda: pl.col(role).cast(F64).is_infinite()
                  | pl.col(role).cast(F64).is_nan(),
                  f"the {role} column holds infinite or NaN values", "replace or drop them")]


def _order_role(t: TaskInput) -> str:
    want = t.options.get("order_by", "auto")
    if want == "auto":
        return "score" if "score" in t.schema else "rank"
    return str(want)


def _checks(t: TaskInput) -> list[Check]:
    out: list[Check] = []
    for role in ("score", "rank", "relevance"):
        out += _role_numeric(role, t)
    order = _order_role(t)
    if order not in t.schema:
        return out
    if "__in_predictions" in t.schema:
        out.append(Check(
            f"{order}_present", order,
            lambda: pl.col("__in_predictions").fill_null(False) & pl.col(order).is_null(),
            f"rows of the predictions have no {order}",
            f"give every recommended item a {order}, or drop those rows"))
    return out


def _normalize(lf: pl.LazyFrame, t: TaskInput) -> pl.LazyFrame:
    """Typed columns the metrics assume: order key, recommended/judged flags, relevance."""
    schema = t.schema
    order = _order_role(t)
    if order not in schema:
        raise InputDataError(f"order_by: {order}, but the predictions have no {order} column",
                             hint="set options: {order_by: auto}, or name the column")
    key = pl.col(order).cast(F64)
    key = -key if order == "rank" else key
    if "__in_predictions" in schema:
        rec = pl.col("__in_predictions").fill_null(False)
    else:
        rec = pl.col(order).is_not_null()
    if "__in_truth" in schema:
        judged = pl.col("__in_truth").fill_null(False)
    elif "relevance" in schema:
        judged = pl.col("relevance").is_not_null()
    else:
        judged = pl.lit(False)
    if "relevance" in schema:
        rel = pl.when(judged).then(pl.col("relevance").cast(F64).fill_null(1.0))
    else:
        rel = pl.when(judged).then(pl.lit(1.0))
    segs = [c for c in schema if c.startswith(SEG)]
    out = lf.with_columns(
        key.alias(ORDER), rec.alias(REC), judged.alias(JUDGED), rel.alias(REL),
        *(pl.col(c).fill_null(pl.col(c).max().over(Q)) for c in segs),
    )
    if POS not in schema:
        out = out.with_columns(pl.lit(0, dtype=pl.Int64).alias(POS))
    return out


def _reshape(lf: pl.LazyFrame, side: str, options: Mapping[str, Any]) -> pl.LazyFrame:
    """List columns exploded to one row per (query, item); input order recorded."""
    schema = lf.collect_schema()
    names = schema.names()
    if IT in schema and isinstance(schema[IT], pl.List):
        lists = [c for c in ("score", "rank", "relevance") if c in schema
                 and isinstance(schema[c], pl.List)]
        if side != "truth" and "score" not in names and "rank" not in names:
            lf = lf.with_columns(pl.int_ranges(1, pl.col(IT).list.len() + 1).alias("rank"))
            lists.append("rank")
        lf = lf.explode([IT, *lists])
        names = lf.collect_schema().names()
    if side != "truth":
        if "score" not in names and "rank" not in names:
            raise InputDataError(
                "the predictions have neither a score nor a rank column, nor a list column of "
                f"items in rank order (columns: {', '.join(n for n in names)})",
                hint="name the score with 'columns: {score: ...}' or the rank with "
                "'columns: {extra: {rank: ...}}'",
            )
        lf = lf.with_row_index(POS)
    return lf




# --------------------------------------------------------------------------- the ranked frame

def seg_cols(lf: pl.LazyFrame) -> list[str]:
    return [c for c in lf.collect_schema().names() if c.startswith(SEG)]


def gain_expr(gain: str, thr: float) -> pl.Expr:
    """Gain of a row from its relevance (null, i.e. unjudged, is 0; negatives count 0)."""
    rel = pl.col(REL).fill_null(0.0).clip(lower_bound=0.0)
    if gain == "exponential":
        return (pl.lit(2.0).pow(rel) - 1.0).alias("g")
    if gain == "binary":
        return (pl.col(REL).fill_null(0.0) >= thr).cast(F64).alias("g")
    return rel.alias("g")


def ranked(memo: Memo, lf: pl.LazyFrame, ties: str, thr: float, gain: str) -> pl.LazyFrame:
    """The recommended rows sorted per query, with the positional columns of the module doc.

    This and the other frames derived from the normalized frame ``lf`` are built once per run
    (``memo``: the run's, :attr:`Context.memo`): the statistics of one run then share one
    sub-plan, which Polars computes once in the engine's ``collect_all``."""
    return memo.get(lf, ("ranked", ties, thr, gain),
                    lambda: _ranked(lf, ties, thr, gain).cache())


def _ranked(lf: pl.LazyFrame, ties: str, thr: float, gain: str) -> pl.LazyFrame:
    segs = seg_cols(lf)
    rec = lf.filter(pl.col(REC)).select(Q, IT, ORDER, REL, POS, "weight", *segs)
    # queries ascending with nulls first, as Polars' own sort, so that the query column can be
    # flagged sorted: the per-query aggregations then slice runs instead of hashing (10^7 rows,
    # 10^5 queries: 1.0 s -> 0.6 s)
    if ties == "id":
        rec = rec.sort([Q, ORDER, IT], descending=[False, True, True],
                       nulls_last=[False, True, True])
    elif ties == "input":
        rec = rec.sort([Q, ORDER, POS], descending=[False, True, False],
                       nulls_last=[False, True, True])
    else:  # average: the order inside a tie group does not matter
        rec = rec.sort([Q, ORDER], descending=[False, True], nulls_last=[False, True])
    rec = rec.with_columns(pl.col(Q).set_sorted())
    c = pl.col
    newq = (c(Q) != c(Q).shift(1)).fill_null(True)
    rec = rec.with_columns(
        (c(REL).fill_null(0.0) >= thr).cast(pl.Int64).alias("b"),
        gain_expr(gain, thr),
        pl.int_range(pl.len(), dtype=pl.Int64).alias("_i"),
        newq.alias("_newq"),
        (newq | (c(ORDER) != c(ORDER).shift(1)).fill_null(True)).alias("_newg"),
    ).with_columns(
        c("_newq").shift(-1).fill_null(True).alias("_lastq"),
        c("_newg").shift(-1).fill_null(True).alias("_lastg"),
        c("b").cum_sum().alias("_cb"),
        c("g").cum_sum().alias("_cg"),
    )

    def first(flag: str, value: pl.Expr) -> pl.Expr:
        return pl.when(c(flag)).then(value).forward_fill()

    def last(flag: str, value: pl.Expr) -> pl.Expr:
        return pl.when(c(flag)).then(value).backward_fill()

    rec = rec.with_columns(
        first("_newq", c("_i")).alias("_qs"),
        last("_lastq", c("_i")).alias("_qe"),
        first("_newg", c("_i")).alias("_gs"),
        last("_lastg", c("_i")).alias("_ge"),
        first("_newq", c("_cb") - c("b")).alias("_cbq"),
        first("_newg", c("_cb") - c("b")).alias("_cbg"),
        last("_lastg", c("_cb")).alias("_cbge"),
        first("_newg", c("_cg") - c("g")).alias("_cgg"),
        last("_lastg", c("_cg")).alias("_cgge"),
    )
    pos = c("_i") - c("_qs") + 1
    s_tie = c("_gs") - c("_qs")
    n_tie = c("_ge") - c("_gs") + 1
    base: list[str | pl.Expr] = [
        Q, IT, "weight", *segs, "b", "g",
        pos.alias("pos"),
        (c("_qe") - c("_qs") + 1).alias("qlen"),
        s_tie.alias("s_tie"),
        n_tie.alias("n_tie"),
    ]
    if ties == "average":
        policy = [
            s_tie.alias("s"), n_tie.alias("n"),
            (c("_cbge") - c("_cbg")).alias("r"),
            (c("_cbg") - c("_cbq")).alias("R0"),
            (c("_cgge") - c("_cgg")).alias("G"),
        ]
    else:
        policy = [
            (pos - 1).alias("s"), pl.lit(1, dtype=pl.Int64).alias("n"),
            c("b").alias("r"),
            (c("_cb") - c("_cbq") - c("b")).alias("R0"),
            c("g").alias("G"),
        ]
    return rec.select(*base, *policy).with_columns((c("pos") - c("s")).alias("t"))


def top_per_query(memo: Memo, lf: pl.LazyFrame, conv: Mapping[str, Any], k: int | None
                  ) -> pl.LazyFrame:
    """Per query of the predictions, everything the accuracy metrics need at cut-off ``k``.

    Columns: ``qlen`` (items recommended), ``hits`` (expected relevant items in the top k),
    ``dcg``, ``ap_sum`` (Σ of precisions at the relevant positions), ``rr``, ``p_none``
    (probability of no relevant item in the top k), ``straddle`` (a group of tied scores spans
    the cut-off), ``auc_num``/``auc_pos``/``auc_neg`` (ordered pairs, relevant and other
    recommended items), the weight and the segments.
    """
    key = ("top", conv["ties"], conv["relevance_threshold"], conv.get("gain", "linear"), k)
    return memo.get(lf, key, lambda: _top(memo, lf, conv, k).cache())


def _top(memo: Memo, lf: pl.LazyFrame, conv: Mapping[str, Any], k: int | None) -> pl.LazyFrame:
    c = pl.col
    rk = ranked(memo, lf, conv["ties"], conv["relevance_threshold"], conv.get("gain", "linear"))
    segs = seg_cols(lf)
    n, r, t, s, pos = c("n").cast(F64), c("r").cast(F64), c("t").cast(F64), c("s"), c("pos")
    if k is None:
        m = n
        within = pl.lit(True)
        straddle = pl.lit(0, dtype=pl.Int8)
        src = rk
    else:
        m = (pl.lit(k, dtype=pl.Int64) - s).clip(0, c("n")).cast(F64)
        within = pos <= k
        straddle = ((c("s_tie") < k) & (c("s_tie") + c("n_tie") > k)).cast(pl.Int8)
        src = rk.filter(s < k)
    disc = pl.when(within).then(1.0 / (pos.cast(F64) + 1.0).log(2)).otherwise(0.0)
    inner = pl.when(n > 1).then((t - 1.0) * (r - 1.0) / (n - 1.0)).otherwise(0.0)
    ap_term = pl.when(within).then((r / n) * (c("R0").cast(F64) + 1.0 + inner) / pos).otherwise(0.0)
    # P(no relevant item in the top k) = Π over the rows within k of (n−r−t+1)/(n−t+1)
    none_factor = pl.when(t <= m).then(
        ((n - r - t + 1.0) / (n - t + 1.0)).clip(lower_bound=0.0)).otherwise(1.0)
    # AUC: ordered (relevant, other) pairs among the recommended items; a tie counts 1/2
    above = pl.when(c("n") > 1).then(c("R0").cast(F64) + 0.5 * r).otherwise(c("R0").cast(F64))
    neg = (1 - c("b")).cast(F64)
    rows = src.select(
        Q, "qlen", "weight", *segs,
        (c("b").cast(F64) * m / n).alias("_hits"),
        (disc * c("G") / n).alias("_dcg"),
        ap_term.alias("_ap"),
        straddle.alias("_straddle"),
        none_factor.alias("_none"),
        *([(above * neg).alias("_auc"), c("b").alias("b"), neg.alias("_neg")]
          if k is None else []),
    )
    # a query's rows are in one part and sorted by position: its sums add in that order (the
    # same bits whatever the engine; tied items' terms depend on their positions only)
    aggs = [
        c("qlen").first().alias("qlen"),
        in_order_sum(c("_hits")).alias("hits"),
        in_order_sum(c("_dcg")).alias("dcg"),
        in_order_sum(c("_ap")).alias("ap_sum"),
        c("_straddle").max().cast(pl.Boolean).alias("straddle"),
        product01(c("_none")).alias("p_none"),
        c("weight").max().alias("w"),
        *(c(sg).max().alias(sg) for sg in segs),
    ]
    if k is None:
        aggs += [in_order_sum(c("_auc")).alias("auc_num"), c("b").sum().alias("auc_pos"),
                 c("_neg").sum().alias("auc_neg")]
    per = rows.group_by(Q).agg(aggs)
    # RR: only the first group holding a relevant item matters (one row per query when there
    # are no ties); P_t = (r/n)·Π_{i<t} (n−r−i+1)/(n−i) along that group
    first = src.filter((c("R0") == 0) & (c("r") > 0) & within)
    factor = pl.when(t == 1).then(1.0).otherwise(
        ((n - r - t + 2.0) / (n - t + 1.0)).clip(lower_bound=0.0))
    rr = first.select(Q, (r / n / pos * factor.cum_prod().over(Q)).alias("_rr")).group_by(Q).agg(
        in_order_sum(c("_rr")).alias("rr"))
    return per.join(rr, on=Q, how="left").with_columns(c("rr").fill_null(0.0))


def truth_per_query(memo: Memo, lf: pl.LazyFrame, thr: float, gain: str, k: int | None
                    ) -> pl.LazyFrame:
    """Per judged query: relevant items ``R``, judged items ``J`` and the ideal DCG at ``k``
    (the gains of all judged items of the query, best first)."""
    return memo.get(lf, ("truth", thr, gain, k), lambda: _truth(memo, lf, thr, gain, k).cache())


def _judged(memo: Memo, lf: pl.LazyFrame, thr: float, gain: str) -> pl.LazyFrame:
    """The judged rows sorted by query and gain (best first), with ``ipos``, each row's
    position in its query's ideal ranking: one sort and a linear scan, shared by every cut-off
    (a rank over a window per query costs ten times as much)."""
    def build() -> pl.LazyFrame:
        c = pl.col
        judged = lf.filter(c(JUDGED)).select(Q, REL, "weight", *seg_cols(lf)).with_columns(
            (c(REL).fill_null(0.0) >= thr).cast(pl.Int64).alias("b"), gain_expr(gain, thr),
        ).sort([Q, "g"], descending=[False, True], nulls_last=True)
        i = pl.int_range(pl.len(), dtype=pl.Int64)
        newq = c(Q).ne_missing(c(Q).shift(1)).fill_null(True)
        return judged.with_columns(
            (i - pl.when(newq).then(i).forward_fill() + 1).alias("ipos")).cache()

    return memo.get(lf, ("judged", thr, gain), build)


def _truth(memo: Memo, lf: pl.LazyFrame, thr: float, gain: str, k: int | None) -> pl.LazyFrame:
    c = pl.col
    segs = seg_cols(lf)
    judged = _judged(memo, lf, thr, gain)
    ipos = c("ipos")
    ideal = c("g") / (ipos.cast(F64) + 1.0).log(2)
    if k is not None:
        ideal = pl.when(ipos <= k).then(ideal).otherwise(0.0)
    return judged.group_by(Q).agg(
        c("b").sum().alias("R"),
        pl.len().alias("J"),
        in_order_sum(ideal).alias("idcg"),  # gains best first: the order is the data's
        c("weight").max().alias("w_t"),
        *(c(s).max().alias(s + "_t") for s in segs),
    )


def joined_per_query(memo: Memo, lf: pl.LazyFrame, conv: Mapping[str, Any], k: int | None
                     ) -> pl.LazyFrame:
    """Queries of the predictions and of the truth, with their status under the policies.

    ``status`` is ``ok``, ``missing`` (relevant items, no predictions), ``no_relevant`` (judged,
    nothing relevant) or ``unjudged`` (no truth row); ``keep`` says whether the policies keep
    the query in the average (as 0 when it is not ``ok``).
    """
    key = ("joined", *sorted((a, str(b)) for a, b in conv.items()), k)
    return memo.get(lf, key, lambda: _joined(memo, lf, conv, k).cache())


def _joined(memo: Memo, lf: pl.LazyFrame, conv: Mapping[str, Any], k: int | None
            ) -> pl.LazyFrame:
    c = pl.col
    segs = seg_cols(lf)
    thr = conv["relevance_threshold"]
    gain = conv.get("gain", "linear")
    top = top_per_query(memo, lf, conv, k)
    truth = truth_per_query(memo, lf, thr, gain, k)
    both = top.join(truth, on=Q, how="full", coalesce=True)
    in_rec = c("qlen").is_not_null()
    judged = c("J").is_not_null()
    rel = c("R").fill_null(0)
    status = (pl.when(~judged).then(pl.lit("unjudged"))
              .when(rel == 0).then(pl.lit("no_relevant"))
              .when(~in_rec).then(pl.lit("missing"))
              .otherwise(pl.lit("ok")))
    keep = (
        (status == "ok")
        | ((status == "missing") & (conv.get("missing", "zero") == "zero"))
        | ((status == "no_relevant") & (conv.get("no_relevant", "drop") == "zero"))
        | ((status == "unjudged") & (conv.get("unjudged", "drop") == "zero"))
    )
    fills = {name: 0.0 for name in ("hits", "dcg", "ap_sum", "rr", "idcg")}
    return both.select(
        Q,
        *(pl.coalesce(c(s), c(s + "_t")).alias(s) for s in segs),
        pl.coalesce(c("w"), c("w_t")).fill_null(1.0).alias("w"),
        *(c(name).fill_null(v).alias(name) for name, v in fills.items()),
        c("qlen").fill_null(0).alias("qlen"),
        c("p_none").fill_null(1.0).alias("p_none"),
        c("straddle").fill_null(False).alias("straddle"),
        rel.alias("R"),
        c("J").fill_null(0).alias("J"),
        *([c("auc_num"), c("auc_pos"), c("auc_neg")] if k is None else []),
        status.alias("status"),
        keep.alias("keep"),
    )


# --------------------------------------------------------------------------- statistics

STATUSES = ("ok", "missing", "no_relevant", "unjudged", "undefined")


@dataclass(frozen=True)
class QueryStat(FrameStat):
    """A FrameStat that is a mean over queries, and can also give its per-query values.

    ``per_query(lf, keys)`` returns the query, the segment ``keys``, ``w`` (the query's weight),
    ``value`` (null when the query is not in the average), ``status`` and ``straddle``.
    """

    per_query: Callable[[pl.LazyFrame, list[str]], pl.LazyFrame] = field(
        default=lambda lf, keys: lf)
    conventions: Mapping[str, Any] = field(default_factory=dict)


SUM_TOP = 30
"""Top of the grid of the sums over queries (a query's value, times its weight)."""


def query_sum(x: pl.Expr, name: str) -> list[pl.Expr]:
    """Σ over queries of a per-query term: an exact sum (queries come in any order, and from
    several parts), on a grid from 2^30 down (four limbs: weights and gains of any size)."""
    return exact_sum(x, name, top=SUM_TOP, limbs=4)


def reduce_queries(pq: pl.LazyFrame, keys: list[str],
                   extra: Mapping[str, pl.Expr | list[pl.Expr]] | None = None
                   ) -> pl.LazyFrame:
    """Sums over the queries of a per-query frame (by segment), the mergeable statistics.

    ``extra``: more aggregations by name (a list of expressions: their partial columns)."""
    c = pl.col
    defined = c("value").is_not_null()
    aggs = [
        *query_sum(pl.when(defined).then(c("w") * c("value")), "sum_wv"),
        *query_sum(pl.when(defined).then(c("w").cast(F64)), "sum_w"),
        defined.sum().cast(pl.Int64).alias("n"),
        c("straddle").sum().cast(pl.Int64).alias("n_straddle"),
        *((c("status") == st).sum().cast(pl.Int64).alias(f"n_{st}") for st in STATUSES),
    ]
    for name, e in (extra or {}).items():
        aggs += e if isinstance(e, list) else [e.cast(F64).alias(name)]
    if keys:
        return pq.group_by(keys).agg(aggs)
    return pq.select(aggs)


def add_by(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Combine partial sums (rows of several parts) by adding, per segment (exact sums add
    exactly and become their values)."""
    return sum_by(df, keys, [])


def keyed(name: str, k: int | None, conv: Mapping[str, Any], extra: str = "") -> str:
    """A statistic's key: the metric, the cut-off, the conventions in force, then ``extra``
    (e.g. the side file it reads).

    >>> keyed("ndcg", 10, {"ties": "id", "compat": None}, "")
    'ranking.ndcg@10[compat=None,ties=id]'
    """
    conv_s = ",".join(f"{a}={b}" for a, b in sorted(conv.items()))
    return f"ranking.{name}@{k}[{conv_s}]{extra}"


def conventions_of(key: str) -> dict[str, Any]:
    """The conventions recorded in a statistic's key (see :func:`keyed`).

    >>> conventions_of("ranking.ndcg@10[compat=None,relevance_threshold=1.0,ties=id]")
    {'compat': None, 'relevance_threshold': 1.0, 'ties': 'id'}
    """
    inner = key[key.index("[") + 1:key.index("]")]
    out: dict[str, Any] = {}
    for part in inner.split(","):
        name, _, v = part.partition("=")
        if name:
            out[name] = float(v) if name == "relevance_threshold" else (
                None if v == "None" else v)
    return out


def query_stat(name: str, k: int | None, conv: Mapping[str, Any],
               per_query: Callable[[pl.LazyFrame, list[str]], pl.LazyFrame],
               extra: Mapping[str, Callable[[], pl.Expr | list[pl.Expr]]] | None = None,
               key_extra: str = "") -> QueryStat:
    """The statistic of a per-query metric: reduced sums, and the per-query frame on demand."""

    def build(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        return reduce_queries(per_query(lf, keys), keys,
                              {n: f() for n, f in (extra or {}).items()})

    # rows of one query must be in one part (for engines that split the data)
    return QueryStat(key=keyed(name, k, conv, key_extra), build=build, combine=add_by,
                     partition_by=(Q,), per_query=per_query, conventions=dict(conv))


def value_of(stats: Mapping[str, Any], k: int | None,
             ratio: tuple[str, str] | None = None) -> MetricValue:
    """A mean over queries (or a ratio of sums) with details and notes on the policies used
    (read from the statistic's key: the conventions in force, task-level compat included)."""
    key, df = next((key, v) for key, v in stats.items() if key.startswith("ranking."))
    conv = conventions_of(key)
    details: dict[str, Any] = {"conventions": {a: b for a, b in conv.items() if b is not None}}
    if df.height == 0:
        return MetricValue(None, details, ["no query to evaluate"])
    row = df.row(0, named=True)
    counts = {st: int(row[f"n_{st}"]) for st in STATUSES}
    details["queries"] = int(row["n"])
    details["query_status"] = {st: n for st, n in counts.items() if n}
    notes = []
    for st, what in (
        ("no_relevant", "without a relevant item"),
        ("missing", "with relevant items but no predictions"),
        ("unjudged", "without any truth row"),
    ):
        n = counts[st]
        if n and st in conv:
            how = "left out" if conv[st] == "drop" else "counted as 0"
            notes.append(f"{_queries(n)} {what} {how} ({st}={conv[st]})")
        elif n:
            notes.append(f"{_queries(n)} {what} left out")
    if counts["undefined"]:
        notes.append(f"{_queries(counts['undefined'])} where the value is undefined left out")
    if k is not None:
        details["ties_straddling_k"] = int(row["n_straddle"])
        if row["n_straddle"] and conv.get("ties") in ("id", "input"):
            notes.append(f"tied scores straddle k={k} in {_queries(row['n_straddle'])}: the "
                         f"value depends on the tie order (ties={conv['ties']})")
    if ratio is not None:
        num, den = float(row[ratio[0]]), float(row[ratio[1]])
        if den == 0:
            return MetricValue(None, details, [*notes, "no relevant item in the kept queries"])
        return MetricValue(num / den, details, notes)
    if not row["sum_w"]:
        return MetricValue(None, details, [*notes, "no query to average"])
    return MetricValue(float(row["sum_wv"]) / float(row["sum_w"]), details, notes)


def _queries(n: int) -> str:
    return f"{n} quer{'y' if n == 1 else 'ies'}"


def per_query_frame(metrics: Sequence[tuple[str, Metric, Params]], lf: pl.LazyFrame,
                    ctx: Context) -> pl.LazyFrame:
    """One row per query, one column per metric id: the per-query values of a run.

    ``lf`` is the normalized frame. Queries a policy drops have a null value.
    """
    segs = seg_cols(lf)
    frames: list[pl.LazyFrame] = []
    for mid, metric, params in metrics:
        for st in metric.stats(params, ctx):
            if isinstance(st, QueryStat):
                frames.append(st.per_query(lf, segs).select(Q, *segs, pl.col("value").alias(mid)))
    if not frames:
        raise MetricError("none of the metrics has per-query values",
                          hint="per-query values are written for the ranking metrics")
    out = frames[0]
    for f in frames[1:]:
        out = out.join(f.drop(segs), on=Q, how="full", coalesce=True)
    return out.sort(Q)


# --------------------------------------------------------------------------- run-level extras

QUERIES = "ranking.queries"
PER_QUERY = "ranking.per_query"


def _queries_build(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    per = lf.group_by(Q).agg(pl.col(REC).any().alias("p"), pl.col(JUDGED).any().alias("t"),
                             *(pl.col(k).max() for k in keys))
    p, t = pl.col("p"), pl.col("t")
    aggs = [
        p.sum().cast(pl.Int64).alias("queries_in_predictions"),
        t.sum().cast(pl.Int64).alias("queries_in_truth"),
        (p & t).sum().cast(pl.Int64).alias("queries_in_both"),
        (t & ~p).sum().cast(pl.Int64).alias("queries_only_in_truth"),
        (p & ~t).sum().cast(pl.Int64).alias("queries_only_in_predictions"),
    ]
    return per.group_by(keys).agg(aggs) if keys else per.select(aggs)


def _extras(ctx: Context, metrics: Planned, asks: Asks) -> dict[str, Stat]:
    """Statistics a ranking run adds to its one pass: query-level alignment counts, and the
    per-query values of every metric when asked for (the metrics' own frames: ``ctx`` is the
    run's context, its memo theirs)."""
    out: dict[str, Stat] = {QUERIES: FrameStat(QUERIES, _queries_build, add_by)}
    if asks.per_query:
        def build(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
            return per_query_frame(metrics, lf, ctx)

        def combine(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
            return df

        out[PER_QUERY] = FrameStat(PER_QUERY, build, combine)
    return out


def _finish(values: Mapping[str, Any], asks: Asks) -> Additions:
    """The query counts of the alignment; the per-query table as written (segment columns under
    their own names; sorted by query: engine spark gathers the queries by partition)."""
    counts: pl.DataFrame = values[QUERIES]
    out = Additions(alignment={k: int(v) for k, v in counts.row(0, named=True).items()}
                    if counts.height else {})
    if asks.per_query:
        df: pl.DataFrame = values[PER_QUERY]
        out.per_query = df.rename({c: c[len(SEG):] for c in df.columns if c.startswith(SEG)}
                                  ).sort(Q, nulls_last=True)
    return out


# --------------------------------------------------------------------------- the task

TASK = Task(
    name=FAMILY,
    summary="ranked items per query (score or rank) against judged items with optional graded "
    "relevance",
    roles=(
        Role("query", "the query or user id (a join key)", True, side="both"),
        Role("item", "the document or item id (a join key); in the predictions, a list column "
             "of items in rank order is exploded", True, side="both", takes=("value", "list")),
        Role("score", "the model's score, higher is better", numeric=True, nullable=True,
             takes=("value", "list")),
        Role("rank", "the rank, 1 is best (used when there is no score)", numeric=True,
             nullable=True, takes=("value", "list")),
        Role("relevance", "graded relevance of a judged item (default 1; 0 = judged not "
             "relevant)", numeric=True, side="truth", nullable=True, takes=("value", "list")),
        Role("weight", "the query's weight in the means (its largest value on the query's "
             "rows)", numeric=True, nullable=True, opt_in=True),
    ),
    options=(
        Param("compat", str, None, "convention preset for every ranking metric of the run "
              "(a metric's own compat or parameters override it)", choices=COMPATS,
              nullable=True),
        Param("order_by", str, "auto", "what orders the predictions: score, rank, or auto "
              "(score when there is one)", choices=("auto", "score", "rank")),
        Param("items_file", str, None, "catalog of items (column 'item') for catalog_coverage; "
              "unset: the items of the truth and the predictions", nullable=True),
        Param("popularity_file", str, None, "item popularity for novelty: columns 'item' and "
              "'probability' (share of users) or 'count' (normalised by the total); unset: the "
              "truth's relevant interactions", nullable=True),
        Param("item_features_file", str, None, "item feature vectors for intra-list similarity: "
              "column 'item' and a list column 'features' or numeric columns", nullable=True),
        Param("similarity_file", str, None, "pairwise item similarity for intra-list "
              "similarity: columns 'item_a', 'item_b', 'similarity'", nullable=True),
    ),
    checks=_checks,
    normalize=_normalize,
    join="full",
    reshape=_reshape,
    per_query=True,
    extras=_extras,
    finish=_finish,
)
