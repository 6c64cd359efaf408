"""The ranking family's task: ranked items per query (a score or a rank) against judged items with
optional graded relevance; the checks, the list columns exploded, the typed columns the metrics
read (:mod:`.frame`), and the run extras (:mod:`.extras`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import polars as pl

from evalcli.errors import InputDataError
from evalcli.metrics.base import Check, Param
from evalcli.metrics.ranking.conventions import COMPATS, DUPLICATES
from evalcli.metrics.ranking.extras import query_stats, query_tables
from evalcli.metrics.ranking.frame import (
    F64,
    FILE_ORDER,
    IT,
    JUDGED,
    LISTED,
    ORDER,
    POS,
    REC,
    REL,
    SEG,
    Q,
)
from evalcli.metrics.task import Role, Task, TaskInput

FAMILY = "ranking"


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


def _unflagged(flag: str) -> pl.Expr:
    return ~pl.col(flag).fill_null(True)


def lists_flag(side: str) -> str:
    """The column flagging the rows of a side whose score, rank or relevance lists hold as many
    elements as their item list (:func:`_reshape`)."""
    return f"__lists_match:{'truth' if side == 'truth' else 'predictions'}"


def _checks(t: TaskInput) -> list[Check]:
    out: list[Check] = []
    for side in ("predictions", "truth"):
        flag = lists_flag(side)
        if flag in t.schema:
            # (the message names the row by a column of that side's file)
            shown = "relevance" if side == "truth" else "score" if "score" in t.schema \
                else "rank"
            out.append(Check(
                f"{side}_lists_match", shown, partial(_unflagged, flag),
                f"rows of the {side} from a list of items whose score, rank or relevance list "
                "holds another number of elements",
                "give each item of a row's list one score (rank, relevance), in the same order"))
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
    cap = t.options.get("max_per_query")
    if cap is not None:  # trec_eval -M: the first N by score, ties by item id descending
        place = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(
            Q, order_by=[pl.when(rec).then(key), pl.col(IT)], descending=True, nulls_last=True)
        rec = rec & (place <= cap)
    listed: list[pl.Expr] = []
    if t.options.get("judged_only"):  # trec_eval -J, after -M as trec_eval applies them;
        # a negative relevance (TREC's -1) is not a judgment there
        listed = [rec.alias(LISTED)]
        rec = rec & judged & (rel >= 0).fill_null(False)
    if t.file_order:
        listed.append(pl.lit(True).alias(FILE_ORDER))
    segs = [c for c in schema if c.startswith(SEG)]
    out = lf.with_columns(
        key.alias(ORDER), rec.alias(REC), judged.alias(JUDGED), rel.alias(REL), *listed,
        *(pl.col(c).fill_null(pl.col(c).max().over(Q)) for c in segs),
    )
    if POS not in schema:
        out = out.with_columns(pl.lit(0, dtype=pl.Int64).alias(POS))
    return out


def _duplicates(options: Mapping[str, Any]) -> str:
    """The duplicates policy in force: the option, else the compat preset's, else error."""
    policy = options.get("duplicates")
    if policy is None:
        policy = DUPLICATES.presets.get(options.get("compat") or "", DUPLICATES.default)
    return str(policy)


def _dedupe(lf: pl.LazyFrame, policy: str, names: list[str]) -> pl.LazyFrame:
    """One row per (query, item) of the predictions under ``policy`` (first, last: in file
    order; max_score: the highest score, else the best rank, ties to the first row)."""
    if policy == "error":
        return lf
    if policy == "max_score":
        if "score" in names:
            key, desc = pl.col("score"), True
        else:
            key, desc = pl.col("rank"), False
        lf = lf.sort([key, POS], descending=[desc, False], nulls_last=True)
        return lf.unique([Q, IT], keep="first", maintain_order=True).sort(POS)
    return lf.sort(POS).unique([Q, IT], keep="first" if policy == "first" else "last",
                               maintain_order=True)


def _kept_once(lf: pl.LazyFrame, options: Mapping[str, Any]) -> tuple[pl.LazyFrame, str] | None:
    """The predictions reshaped without the ``duplicates`` step, and its policy, when one keeps
    a row of each repeated (query, item) (see :attr:`Task.kept_once`)."""
    policy = _duplicates(options)
    if policy == "error":
        return None
    return _reshape(lf, "predictions", {**options, "duplicates": "error"}), policy


def _reshape(lf: pl.LazyFrame, side: str, options: Mapping[str, Any]) -> pl.LazyFrame:
    """List columns exploded to one row per (query, item); input order recorded; a repeated
    item of the predictions kept once under the ``duplicates`` policy."""
    schema = lf.collect_schema()
    # fixed-size lists (Parquet written from NumPy arrays) read as lists
    arrays = {c: t for c, t in schema.items() if c in (IT, "score", "rank", "relevance")
              and isinstance(t, pl.Array)}
    if arrays:
        lf = lf.with_columns(pl.col(c).cast(pl.List(t.inner)) for c, t in arrays.items())
        schema = lf.collect_schema()
    names = schema.names()
    if IT in schema and isinstance(schema[IT], pl.List):
        lists = [c for c in ("score", "rank", "relevance") if c in schema
                 and isinstance(schema[c], pl.List)]
        if lists:
            # a row whose lists hold other counts than its items would stop the explode: each
            # (a null one too) is cut or padded (nulls) to the items' count (null with a null
            # item list), and flagged for the check that names the row (_checks)
            n = pl.col(IT).list.len()
            lf = lf.with_columns(
                pl.all_horizontal([pl.col(c).list.len().eq_missing(n) for c in lists])
                .alias(lists_flag(side)),
                *(pl.when(n.is_not_null()).then(
                    pl.col(c).fill_null(pl.lit([], dtype=schema[c])).list.gather(
                        pl.int_ranges(0, n.fill_null(0)), null_on_oob=True)).alias(c)
                  for c in lists))
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
        lf = _dedupe(lf.with_row_index(POS), _duplicates(options), names)
    return lf


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
        DUPLICATES.param,
        Param("order_by", str, "auto", "what orders the predictions: score, rank, or auto "
              "(score when there is one)", choices=("auto", "score", "rank")),
        Param("items_file", str, None, "catalog of items (column 'item') for catalog_coverage "
              "and gini; unset: the train_file's items, else the items of the truth and the "
              "predictions", nullable=True),
        Param("popularity_file", str, None, "item popularity for novelty: columns 'item' and "
              "'probability' (share of users) or 'count' (normalised by the total); unset: the "
              "train_file, else the truth's relevant interactions", nullable=True),
        Param("item_features_file", str, None, "item feature vectors for intra-list similarity "
              "and serendipity: column 'item' and a list column 'features' or numeric columns",
              nullable=True),
        Param("similarity_file", str, None, "pairwise item similarity for intra-list "
              "similarity and serendipity: columns 'item_a', 'item_b', 'similarity'",
              nullable=True),
        Param("train_file", str, None, "training interactions (columns 'user' or 'query', "
              "'item', optional 'relevance': rows <= 0 are left out) for serendipity, "
              "co-occurrence similarity, popularity (novelty, ARP) and the catalog",
              nullable=True),
        Param("max_per_query", int, None, "keep only the first N predictions of each query, "
              "by descending score, ties by item id descending (trec_eval -M N); unset: all",
              nullable=True, ge=1),
        Param("judged_only", bool, False, "evaluate only the predictions the truth judges: "
              "unjudged items (no truth row, or a negative relevance) are removed from each "
              "list before ranking (trec_eval -J; applied after max_per_query, as trec_eval)"),
        Param("zscores_file", str, None, "per-query z-scores, as trec_eval -Z: a file of "
              "'qid measure mean stddev' lines (trec_eval's measure names); each query's value "
              "becomes (value - mean) / stddev, then is averaged; unset: the values",
              nullable=True),
        Param("prefs_file", str, None, "preference judgments for the prefs measures, as "
              "trec_eval -R prefs: 'qid jg jsg docno level' lines; unset: the truth read as "
              "-R qrels_prefs (one judgment group per query)", nullable=True),
        Param("qrels_jg_file", str, None, "judgment groups for map_avgjg, precision_avgjg "
              "and rprec_mult_avgjg, as trec_eval -R qrels_jg: a qrels file whose second field "
              "is the judgment group; unset: the truth (one group)", nullable=True),
    ),
    checks=_checks,
    normalize=_normalize,
    join="full",
    reshape=_reshape,
    kept_once=_kept_once,
    per_query=True,
    extras=query_stats,
    finish=query_tables,
)
TASKS = [TASK]
