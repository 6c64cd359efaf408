"""The ranking family's ranked frame: the columns the task's normalisation writes, and the
frames every ranking metric derives from them.

The per-query values come from one *ranked frame*: the recommended rows sorted once by query,
score (descending) and the tie-break of the ``ties`` policy, with every positional quantity a
metric needs computed by linear scans over the sorted rows (cumulative sums restarted at each
query and each group of tied scores, forward and backward fills) rather than by a window per
query. Metrics and cut-offs that share conventions share this frame (the engine collects all
statistics together, and Polars runs a shared sub-plan once), and every metric at the same
cut-off shares one aggregation per query.

The accuracy metrics' per-query statistics (:func:`top_per_query`) do not need that frame:
only the recommended rows the truth holds (and, under ``average``, their groups of tied
scores) add anything to their sums, so they take each row's place from a rank per query
(:func:`positions`) and sum over those rows alone, in the same order and with the same
terms (10^7 recommended rows, 10^6 judged: about half the time of the sorted frame).
R-precision's hits at each query's own cut-off (:func:`hits_within`) and the top-k lists of
the beyond-accuracy metrics (:func:`near_top`: coverage, novelty, diversity, exposure) come
from the same ranks; the sorted frame is left to trec_eval's measures that walk whole lists.

Ties. With ``ties: average`` (the default) a metric is its expected value when the items of each
group of tied scores are put in a uniformly random order: for the measures linear in the
positions (hits, DCG) that is scikit-learn's tie-averaged DCG; for average precision and the
reciprocal rank it is the closed form of McSherry and Najork (ECIR 2008). ``id`` breaks ties by
item id descending (trec_eval's ``comp_sim_docno``), ``input`` by the order of the rows in the
predictions file. Per row of the ranked frame, with positions counted from 1:

- ``pos``: the position under the strict order; ``s``: the number of items ranked strictly
  above the row's tie group (``pos − 1`` under a strict policy); ``n``: the group's size (1
  under a strict policy); ``t = pos − s``: the position inside the group;
- ``b``: 1 if the item is relevant (relevance >= threshold); ``jn``: 1 if it is judged not
  relevant (0 <= relevance < threshold: trec_eval counts a negative relevance as in the pool but
  unjudged); ``r``: relevant items in the group;
  ``R0``: relevant items ranked above the group; ``G``: the group's total gain.

Expected hits in the top k: ``Σ b·clip(k − s, 0, n)/n``. Expected DCG@k: ``Σ_rows d(pos)·G/n``
with ``d(p) = 1/log2(p+1)`` for ``p <= k`` (each position of a group carries the group's mean
gain). Expected AP: ``Σ_{pos<=k} (r/n)·(R0 + 1 + (t−1)(r−1)/(n−1))/pos``. Expected RR: over the
first group holding a relevant item, ``Σ_t P_t/pos`` with ``P_t = (r/n)·Π_{i<t} (n−r−i+1)/(n−i)``
the probability that its first relevant item is at ``t``. Under a strict policy each formula
reduces to the usual one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from evalcli.metrics.base import Memo, NumberMap
from evalcli.metrics.stats import in_order_sum, ordered_bits, packed_pair, product01

Q, IT = "query", "item"  # role columns: the query and the item
ORDER = "__s"
"""The order key of a recommended row: the score, or minus the rank (higher is better)."""
REC, JUDGED, REL, POS = "__rec", "__judged", "__rel", "__pos"
"""Whether the row is recommended, whether it is judged, its relevance (null when unjudged), its
position in the predictions file (``ties: input``)."""
FILE_ORDER = "__file_order"
"""Present (a constant) when the recommended rows are in the order of the predictions file
(:attr:`~evalcli.metrics.task.TaskInput.file_order`): the order of ``ties: input`` is then the
score's own ordinal rank, which numbers tied scores in the order they come (half the time of
ranking the score and the place together)."""
LISTED = "__listed"
"""Under ``judged_only`` (trec_eval -J): whether the row was recommended before the unjudged
rows left the lists. A query whose every retrieved item is unjudged still has results, so it is
scored (0 retrieved) rather than counted as missing."""
F64 = pl.Float64
SEG = "seg:"
"""The prefix of segment columns."""


def seg_cols(lf: pl.LazyFrame) -> list[str]:
    return [c for c in lf.collect_schema().names() if c.startswith(SEG)]


Gain = str | tuple[str, NumberMap]
"""How a relevance becomes a gain: ``linear``, ``exponential`` or ``binary``, or one of them
with a table of gains per relevance level (the ``gains`` parameter) that overrides it."""


def gain_of(conv: Mapping[str, Any]) -> Gain:
    """The gain in force: the ``gain`` convention, with the ``gains`` table when one is set."""
    table = conv.get("gains")
    kind = conv.get("gain", "linear")
    return kind if table is None else (kind, table)


def log_base_of(conv: Mapping[str, Any]) -> float:
    """The base of DCG's discount 1/log_b(i+1) (2 unless ``log_base`` is set)."""
    return float(conv.get("log_base", 2.0))


def gain_expr(gain: Gain, thr: float) -> pl.Expr:
    """Gain of a row from its relevance (null, i.e. unjudged, is 0; negatives count 0). With
    a table, a relevance equal to one of its levels gains the table's value (0 or negative
    allowed, as trec_eval's ndcg.1=3,...); any other relevance keeps the gain of the kind."""
    kind, table = (gain, None) if isinstance(gain, str) else gain
    rel = pl.col(REL).fill_null(0.0).clip(lower_bound=0.0)
    if kind == "exponential":
        out = pl.lit(2.0).pow(rel) - 1.0
    elif kind == "binary":
        out = (pl.col(REL) >= thr).fill_null(False).cast(F64)
    else:
        out = rel
    for level, value in reversed(list((table or {}).items())):
        # null (unjudged) equals no level: it gains 0 whatever the table says of level 0
        out = pl.when(pl.col(REL) == float(level)).then(pl.lit(float(value), dtype=F64)
                                                        ).otherwise(out)
    return out.alias("g")


def ranked(memo: Memo, lf: pl.LazyFrame, ties: str, thr: float, gain: Gain) -> pl.LazyFrame:
    """The recommended rows sorted per query, with the positional columns of the module doc.

    This and the other frames derived from the normalized frame ``lf`` are built once per run
    (``memo``: the run's, :attr:`Context.memo`): the statistics of one run then share one
    sub-plan, which Polars computes once in the engine's ``collect_all``."""
    return memo.get(lf, ("ranked", ties, thr, gain),
                    lambda: _ranked(lf, ties, thr, gain).cache())


def _ranked(lf: pl.LazyFrame, ties: str, thr: float, gain: Gain) -> pl.LazyFrame:
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
        (c(REL) >= thr).fill_null(False).cast(pl.Int64).alias("b"),
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
        # judged as trec_eval counts it: a negative relevance (TREC's -1) is not a judgment
        (c(REL) >= 0).fill_null(False).alias("judged"),
        # in the pool: a truth row, whatever its relevance (infAP's pooled-but-unjudged: < 0)
        c(REL).is_not_null().alias("pooled"),
        ((c(REL) >= 0.0) & (c(REL) < thr)).fill_null(False).cast(pl.Int64).alias("jn"),
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
    key = ("top", conv["ties"], conv["relevance_threshold"], gain_of(conv), log_base_of(conv), k)
    return memo.get(lf, key, lambda: _top(memo, lf, conv, k).cache())


def positions(memo: Memo, lf: pl.LazyFrame, ties: str) -> pl.LazyFrame:
    """The recommended rows, unsorted, each with its place in its query's ranking: ``pos``
    under a strict policy (``id``, ``input``), ``s_tie`` and ``n_tie`` (the items ranked
    strictly above its group of tied scores, the group's size) under ``average``.

    A rank per query over the rows as they are, not a sort of the rows: a sort of 10^7 rows
    by query, score and tie-break, then a scan, costs two to three times the rank (see
    :func:`_top`). Shared by every cut-off and relevance convention of the run."""
    return memo.get(lf, ("positions", ties), lambda: _positions(lf, ties).cache())


def _positions(lf: pl.LazyFrame, ties: str) -> pl.LazyFrame:
    c = pl.col
    rec = lf.filter(c(REC)).select(Q, IT, ORDER, REL, POS, "weight", *seg_cols(lf))
    if ties == "average":
        lo = c(ORDER).rank("min", descending=True).over(Q).cast(pl.Int64)
        hi = c(ORDER).rank("max", descending=True).over(Q).cast(pl.Int64)
        return rec.with_columns((lo - 1).alias("s_tie"), (hi - lo + 1).alias("n_tie"))
    # the order of ranked(): score descending, then item id descending (id) or the place in
    # the predictions file ascending (input)
    return rec.with_columns(_strict_place(lf, ties).alias("pos"))


_FITS_64 = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32)
"""Item id types that fit the low half of the order key (:func:`packed_pair`)."""


def _strict_place(lf: pl.LazyFrame, ties: str) -> pl.Expr:
    """Each row's place in its query by score descending, then item id descending (``id``)
    or the place in the predictions file (``input``)."""
    c = pl.col
    schema = lf.collect_schema()
    if ties == "input" and FILE_ORDER in schema:
        # (Polars' ordinal rank numbers equal values in the order they come, within each
        # query's rows in the order of the frame; -0.0 and 0.0 are equal to it, as to
        # ordered_bits)
        return c(ORDER).rank("ordinal", descending=True).over(Q).cast(pl.Int64)
    tie = c(IT) if ties == "id" else -c(POS).cast(pl.Int64)
    item = schema[IT]
    if ties == "input" or item in _FITS_64:
        # one Int128 ordering as (score, tie-break) do: a rank of one integer column, not of a
        # struct (10^7 rows: 0.26 s instead of 0.41 s)
        order = packed_pair(ordered_bits(c(ORDER)), tie)
    else:
        order = pl.struct(c(ORDER), tie.alias("_tie"))
    return order.rank("ordinal", descending=True).over(Q).cast(pl.Int64)


def near_top(memo: Memo, lf: pl.LazyFrame, ties: str, thr: float, k: int) -> pl.LazyFrame:
    """The recommended rows that may be in their query's top ``k``, from the ranks of
    :func:`positions` (not the sorted :func:`ranked` frame): ``s`` and ``n`` (the items above
    the row's group of tied scores and the group's size: ``pos − 1`` and 1 under a strict
    policy), ``g`` (linear gain, 0 when unjudged) and ``pos``, a strict order of the rows of
    a query (under ``average``, ties by item id descending: the order its sums add in)."""
    def build() -> pl.LazyFrame:
        c = pl.col
        at = positions(memo, lf, ties)
        g = gain_expr("linear", thr)
        if ties != "average":
            return at.filter(c("pos") <= k).with_columns(
                (c("pos") - 1).alias("s"), pl.lit(1, dtype=pl.Int64).alias("n"), g)
        # whole groups of ties (s < k): a row's place among them is its place in the query
        return at.filter(c("s_tie") < k).with_columns(
            c("s_tie").alias("s"), c("n_tie").alias("n"), g,
            _strict_place(lf, "id").alias("pos"))

    return memo.get(lf, ("near_top", ties, thr, k), lambda: build().cache())


def pooled_rows(memo: Memo, lf: pl.LazyFrame, conv: Mapping[str, Any]) -> pl.LazyFrame:
    """The recommended rows the truth holds, sorted by query and position, with what
    :func:`_top` sums: under a strict policy one row per item (``pos``, ``s``, ``n`` = 1,
    ``t`` = 1, ``b`` = ``r``, ``g`` = ``G``, ``R0``, and ``jn``); under ``average`` one row
    per group of tied scores holding such an item (``s_tie``, its size ``n``, ``r``, ``G``,
    ``R0``, ``jn``). Shared by every cut-off."""
    ties, thr, gain = conv["ties"], conv["relevance_threshold"], gain_of(conv)

    def build() -> pl.LazyFrame:
        c = pl.col
        judged = positions(memo, lf, ties).filter(c(REL).is_not_null()).with_columns(
            (c(REL) >= thr).fill_null(False).cast(pl.Int64).alias("b"),
            gain_expr(gain, thr),
            ((c(REL) >= 0.0) & (c(REL) < thr)).fill_null(False).cast(pl.Int64).alias("jn"),
        )
        newq = c(Q).ne_missing(c(Q).shift(1)).fill_null(True)

        def before(x: str) -> pl.Expr:  # Σ x over the earlier rows of the same query
            run = c(x).cum_sum()
            return run - c(x) - pl.when(newq).then(run - c(x)).forward_fill()

        # (the query flagged sorted: the per-query sums in order then slice runs instead of
        # gathering each group's rows)
        if ties != "average":
            return judged.select(Q, "pos", "b", "g", "jn").sort([Q, "pos"]).with_columns(
                c(Q).set_sorted(), before("b").alias("R0"),
                (c("pos") - 1).alias("s"), pl.lit(1, dtype=pl.Int64).alias("n"),
                c("b").alias("r"), c("g").alias("G"), pl.lit(1, dtype=pl.Int64).alias("t"),
            ).cache()
        return judged.group_by(Q, "s_tie").agg(
            c("n_tie").first().alias("n"), c("b").sum().alias("r"), c("g").sum().alias("G"),
            c("jn").sum().alias("jn"),
        ).sort([Q, "s_tie"]).with_columns(c(Q).set_sorted(), before("r").alias("R0")).cache()

    return memo.get(lf, ("pooled", ties, thr, gain), build)


def _top(memo: Memo, lf: pl.LazyFrame, conv: Mapping[str, Any], k: int | None) -> pl.LazyFrame:
    """The statistics of :func:`top_per_query` from the rows that can add to them.

    Only a group of tied scores holding a judged item adds to hits, DCG, AP, RR and the
    probability of no hit (every other term of the module doc's sums is 0, or a factor 1):
    under a strict policy the judged rows themselves, under ``average`` each such group's
    rows, written out from its place and size. Those rows are sorted by position and summed
    in that order, which gives the bits the full ranked frame gives (its other terms add 0).
    The count of items, the weight, the segments and whether a group of ties straddles the
    cut-off come from the ranks of all the rows (:func:`positions`), and AUC's pairs from
    the relevant rows' places (integer and half-integer sums: exact in any order)."""
    c = pl.col
    ties = conv["ties"]
    strict = ties != "average"
    segs = seg_cols(lf)
    at = positions(memo, lf, ties)
    # per query, over every recommended row: the count of items, and the weight and the
    # segments (their largest values on the query's rows, as the weight role says)
    lengths = memo.get(lf, ("lengths", ties), lambda: at.group_by(Q).agg(
        pl.len().cast(pl.Int64).alias("qlen"), c("weight").max().alias("w"),
        *(c(sg).max() for sg in segs)).cache())
    if k is None:
        base = lengths.with_columns(pl.lit(False).alias("straddle"))
    else:
        base = lengths.join(_straddling(at, strict, pl.lit(k, dtype=pl.Int64)), on=Q,
                            how="left").with_columns(c("straddle").fill_null(False))
    pooled = pooled_rows(memo, lf, conv)
    if strict:
        rows = pooled if k is None else pooled.filter(c("s") < k)
    else:
        rows = _written_out(pooled if k is None else pooled.filter(c("s_tie") < k))
    n, r, t, s, pos = c("n").cast(F64), c("r").cast(F64), c("t").cast(F64), c("s"), c("pos")
    if k is None:
        m = n
        within = pl.lit(True)
    else:
        m = (pl.lit(k, dtype=pl.Int64) - s).clip(0, c("n")).cast(F64)
        within = pos <= k
    disc = pl.when(within).then(1.0 / (pos.cast(F64) + 1.0).log(log_base_of(conv))
                                ).otherwise(0.0)
    inner = pl.when(n > 1).then((t - 1.0) * (r - 1.0) / (n - 1.0)).otherwise(0.0)
    ap_term = pl.when(within).then((r / n) * (c("R0").cast(F64) + 1.0 + inner) / pos).otherwise(0.0)
    # P(no relevant item in the top k) = Π over the rows within k of (n−r−t+1)/(n−t+1)
    none_factor = pl.when(t <= m).then(
        ((n - r - t + 1.0) / (n - t + 1.0)).clip(lower_bound=0.0)).otherwise(1.0)
    # a query's rows are in one part and sorted by position: its sums add in that order (the
    # same bits whatever the engine; tied items' terms depend on their positions only)
    aggs = [
        in_order_sum(c("b").cast(F64) * m / n).alias("hits"),
        in_order_sum(disc * c("G") / n).alias("dcg"),
        in_order_sum(ap_term).alias("ap_sum"),
        product01(none_factor).alias("p_none"),
    ]
    if strict:  # the same values, cheaper: each hit adds 1.0 (exact), a factor is 0 or 1
        aggs[0] = c("b").sum().cast(F64).alias("hits")
        aggs[3] = pl.when(c("b").sum() > 0).then(0.0).otherwise(1.0).alias("p_none")
    if k is None:
        # AUC's ordered (relevant, other) pairs: for each relevant item, the other items
        # below its group, and half of the others in its group (a tie counts 1/2); with R
        # relevant of L recommended, Σ (L − s − n) − (R − R0 − r) over the relevant items
        below = (c("R0") + c("r") - s - c("n")).cast(F64)
        half = pl.when(c("n") > 1).then(0.5 * (n - r)).otherwise(0.0)
        aggs += [((below + half) * c("b")).sum().alias("_auc"), c("b").sum().alias("auc_pos")]
    per = rows.group_by(Q).agg(aggs)
    if k is None:
        per = per.join(pooled.group_by(Q).agg(c("jn").sum().alias("_jn")), on=Q, how="full",
                       coalesce=True)
    # RR: only the first group holding a relevant item matters (one row per query when there
    # are no ties); P_t = (r/n)·Π_{i<t} (n−r−i+1)/(n−i) along that group
    first = rows.filter((c("R0") == 0) & (c("r") > 0) & within)
    factor = pl.when(t == 1).then(1.0).otherwise(
        ((n - r - t + 2.0) / (n - t + 1.0)).clip(lower_bound=0.0))
    if strict:  # one row per query, t = 1
        rr = first.select(Q, (r / n / pos * 1.0).alias("rr"))
    else:
        rr = first.select(Q, (r / n / pos * factor.cum_prod().over(Q)).alias("_rr")
                          ).group_by(Q).agg(in_order_sum(c("_rr")).alias("rr"))
    out = base.join(per, on=Q, how="left").join(rr, on=Q, how="left")
    cols: list[pl.Expr] = [
        c("qlen"), c("hits").fill_null(0.0), c("dcg").fill_null(0.0),
        c("ap_sum").fill_null(0.0), c("straddle"), c("p_none").fill_null(1.0), c("w"),
        *(c(sg) for sg in segs),
    ]
    if k is None:
        pos_n = c("auc_pos").fill_null(0)
        cols += [(c("_auc").fill_null(0.0) + (pos_n * (c("qlen") - pos_n)).cast(F64)
                  ).alias("auc_num"),
                 pos_n.alias("auc_pos"), (c("qlen") - pos_n).cast(F64).alias("auc_neg"),
                 c("_jn").fill_null(0).cast(pl.Int64).alias("nonrel_judged")]
    return out.select(Q, *cols, c("rr").fill_null(0.0))


def _written_out(groups: pl.LazyFrame) -> pl.LazyFrame:
    """Each group of tied scores of :func:`pooled_rows` (``average``) as its rows (t = 1..n),
    the relevant ones first (a group's terms depend on its relevant count, not on which of its
    rows hold them), in the groups' order."""
    c = pl.col
    return groups.with_columns(pl.int_ranges(1, c("n") + 1, dtype=pl.Int64).alias("t")
                               ).explode("t").with_columns(
        c(Q).set_sorted(), c("s_tie").alias("s"), (c("s_tie") + c("t")).alias("pos"),
        (c("t") <= c("r")).cast(pl.Int64).alias("b"),
    )


def hits_within(memo: Memo, lf: pl.LazyFrame, conv: Mapping[str, Any], cut: pl.LazyFrame
                ) -> pl.LazyFrame:
    """Per query of ``cut`` (columns ``Q`` and ``cut``: a cut-off of each query's own, such as
    its count of relevant items for R-precision), ``hits``, the expected relevant items in its
    top ``cut`` (a sum with :func:`top_per_query`'s terms, in its order), and ``straddle``,
    whether a group of tied scores spans the cut-off. From the judged rows
    (:func:`pooled_rows`) and the ranks (:func:`positions`), not the sorted frame."""
    c = pl.col
    ties = conv["ties"]
    pooled = pooled_rows(memo, lf, conv).join(cut, on=Q, how="inner", maintain_order="left")
    at = positions(memo, lf, ties)
    strict = ties != "average"
    if strict:
        hits = pooled.filter(c("pos") <= c("cut")).group_by(Q).agg(
            c("b").sum().cast(F64).alias("hits"))
        at = at.select(Q, ORDER, "pos")
    else:
        rows = _written_out(pooled.filter(c("s_tie") < c("cut")))
        m = (c("cut") - c("s")).clip(0, c("n")).cast(F64)
        hits = rows.group_by(Q).agg(
            in_order_sum(c("b").cast(F64) * m / c("n").cast(F64)).alias("hits"))
        at = at.select(Q, "s_tie", "n_tie")
    straddle = _straddling(at.join(cut, on=Q, how="inner"), strict, c("cut"))
    return cut.select(Q).join(hits, on=Q, how="left").join(straddle, on=Q, how="left").select(
        Q, c("hits").fill_null(0.0), c("straddle").fill_null(False))


def _straddling(at: pl.LazyFrame, strict: bool, cut: pl.Expr) -> pl.LazyFrame:
    """The queries of :func:`positions`' rows ``at`` where a group of tied scores spans the
    cut-off ``cut`` (column ``straddle``; a query without is absent or false), from the rows
    at it: under a strict policy the items at ``cut`` and ``cut + 1`` tie."""
    c = pl.col
    if strict:
        return at.filter((c("pos") == cut) | (c("pos") == cut + 1)).group_by(Q).agg(
            (c(ORDER).filter(c("pos") == cut).first()
             == c(ORDER).filter(c("pos") == cut + 1).first()).fill_null(False)
            .alias("straddle"))
    return at.filter((c("s_tie") < cut) & (c("s_tie") + c("n_tie") > cut)).group_by(Q).agg(
        pl.lit(True).alias("straddle"))


def truth_per_query(memo: Memo, lf: pl.LazyFrame, thr: float, gain: Gain, k: int | None,
                    log_base: float = 2.0) -> pl.LazyFrame:
    """Per judged query: relevant items ``R``, judged items ``J``, items judged not relevant
    ``N`` (0 <= relevance < threshold, as trec_eval) and the ideal DCG at ``k`` (the positive
    gains of all judged items of the query, best first; discount 1/log_b(i+1), b =
    ``log_base``)."""
    return memo.get(lf, ("truth", thr, gain, k, log_base),
                    lambda: _truth(memo, lf, thr, gain, k, log_base).cache())


def judged_rows(memo: Memo, lf: pl.LazyFrame, thr: float, gain: Gain) -> pl.LazyFrame:
    """The judged rows sorted by query and gain (best first), with ``ipos``, each row's
    position in its query's ideal ranking: one sort and a linear scan, shared by every cut-off
    (a rank over a window per query costs ten times as much)."""
    def build() -> pl.LazyFrame:
        c = pl.col
        judged = lf.filter(c(JUDGED)).select(Q, REL, "weight", *seg_cols(lf)).with_columns(
            (c(REL) >= thr).fill_null(False).cast(pl.Int64).alias("b"), gain_expr(gain, thr),
        )
        if lf.collect_schema()[Q] in _FITS_64:
            # one integer ordering as (query, gain descending) do: a third of the time of a
            # sort by two columns (10^6 judged rows: 0.05 s instead of 0.16 s); the complement
            # of the gain's bits reverses its order (a gain is never null). A null query's
            # rows would sort last but not by gain: none gets here with a value that counts
            # (a null query is an input error, whose run fails after the pass, or its rows
            # are dropped by ``nulls: drop`` before it). Flagged sorted, as a sort by the two
            # columns flags it: the aggregations per query then slice runs.
            judged = judged.sort(packed_pair(c(Q), ordered_bits(c("g")).not_()),
                                 nulls_last=True).with_columns(c(Q).set_sorted())
        else:
            judged = judged.sort([Q, "g"], descending=[False, True], nulls_last=True)
        i = pl.int_range(pl.len(), dtype=pl.Int64)
        newq = c(Q).ne_missing(c(Q).shift(1)).fill_null(True)
        return judged.with_columns(
            (i - pl.when(newq).then(i).forward_fill() + 1).alias("ipos")).cache()

    return memo.get(lf, ("judged", thr, gain), build)


def _truth(memo: Memo, lf: pl.LazyFrame, thr: float, gain: Gain, k: int | None,
           log_base: float) -> pl.LazyFrame:
    c = pl.col
    segs = seg_cols(lf)
    judged = judged_rows(memo, lf, thr, gain)
    ipos = c("ipos")
    # the ideal list stops at the last positive gain (a table may give 0 or less: trec_eval)
    ideal = c("g").clip(lower_bound=0.0) / (ipos.cast(F64) + 1.0).log(log_base)
    if k is not None:
        ideal = pl.when(ipos <= k).then(ideal).otherwise(0.0)
    return judged.group_by(Q).agg(
        c("b").sum().alias("R"),
        pl.len().alias("J"),
        ((c(REL) >= 0.0) & (c("b") == 0)).sum().cast(pl.Int64).alias("N"),
        in_order_sum(ideal).alias("idcg"),  # gains best first: the order is the data's
        c("weight").max().alias("w_t"),
        *(c(s).max().alias(s + "_t") for s in segs),
    )


def joined_per_query(memo: Memo, lf: pl.LazyFrame, conv: Mapping[str, Any], k: int | None
                     ) -> pl.LazyFrame:
    """Queries of the predictions and of the truth, with their status under the policies.

    ``status`` is ``ok``, ``missing`` (relevant items, no predictions), ``no_relevant`` (judged,
    nothing relevant) or ``unjudged`` (no truth row); ``keep`` says whether the policies keep
    the query in the average (as 0 when it is not ``ok``; a query without a relevant item and
    without predictions only when both ``no_relevant`` and ``missing`` count it).
    """
    key = ("joined", *sorted((a, str(b)) for a, b in conv.items()), k)
    return memo.get(lf, key, lambda: _joined(memo, lf, conv, k).cache())


def _joined(memo: Memo, lf: pl.LazyFrame, conv: Mapping[str, Any], k: int | None
            ) -> pl.LazyFrame:
    c = pl.col
    segs = seg_cols(lf)
    thr = conv["relevance_threshold"]
    top = top_per_query(memo, lf, conv, k)
    truth = truth_per_query(memo, lf, thr, gain_of(conv), k, log_base_of(conv))
    both = top.join(truth, on=Q, how="full", coalesce=True)
    in_rec = c("qlen").is_not_null()
    if LISTED in lf.collect_schema():  # -J: a query with results, none of them judged
        listed = lf.filter(c(LISTED)).select(Q).unique().with_columns(pl.lit(True).alias("_l"))
        both = both.join(listed, on=Q, how="full", coalesce=True)
        in_rec = in_rec | c("_l").fill_null(False)
    judged = c("J").is_not_null()
    rel = c("R").fill_null(0)
    status = (pl.when(~judged).then(pl.lit("unjudged"))
              .when(rel == 0).then(pl.lit("no_relevant"))
              .when(~in_rec).then(pl.lit("missing"))
              .otherwise(pl.lit("ok")))
    keep = (
        (status == "ok")
        | ((status == "missing") & (conv.get("missing", "zero") == "zero"))
        # a query of the truth alone without a relevant item: only when both policies count
        # it (trec_eval leaves it out without -c, as any query it has no results for)
        | ((status == "no_relevant") & (conv.get("no_relevant", "drop") == "zero")
           & (in_rec | (conv.get("missing", "zero") == "zero")))
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
        c("N").fill_null(0).alias("N"),
        *([c("auc_num"), c("auc_pos"), c("auc_neg"),
           c("nonrel_judged").fill_null(0).alias("nonrel_judged")] if k is None else []),
        status.alias("status"),
        keep.alias("keep"),
    )
