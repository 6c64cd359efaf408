"""The ranking family's conventions: the parameters where peers disagree (ties, the policies for
queries without predictions, without a relevant item or without truth, the gain, the
denominators), evalcli's default for each and what each peer's ``compat`` preset sets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalcli.metrics.base import Context, Param, Params

COMPATS = ("trec_eval", "spark", "sklearn", "recommenders", "ranx")
"""The peers whose conventions a ``compat`` preset sets."""


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
R_AVERAGE = _conv(
    "average_over",
    "which queries r_precision averages over: all (every query the policies keep, as trec_eval "
    "and ranx) or hit (only those with at least one relevant item in their first R, as "
    "recommenders' r_precision_at_k, whose mean over users skips the users without such a hit)",
    ("all", "hit"), "all",
    {"trec_eval": "all", "spark": "all", "sklearn": "all", "recommenders": "hit",
     "ranx": "all"},
    "all, as trec_eval and ranx",
)
RBP_SCALE = _conv(
    "scale",
    "rbp's gains: max_judged (the relevance, divided by the query's highest judged gain when "
    "that is above 1, as trec_eval) or none (the relevance of the relevant items as it is, "
    "0 for the others, as ranx's rbp)",
    ("max_judged", "none"), "max_judged",
    {"trec_eval": "max_judged", "spark": "max_judged", "sklearn": "max_judged",
     "recommenders": "max_judged", "ranx": "none"},
    "max_judged, as trec_eval (rbp stays in [0, 1])",
)
NOVELTY_AVERAGE = _conv(
    "average",
    "how novelty averages the items' self-information: query (the mean over queries of each "
    "top k's mean, items without popularity left out) or pooled (Σ over every recommended "
    "(query, item) of −log2 p(i) / their number, an item without popularity counting 0 in "
    "the sum and 1 in the number, as recommenders' novelty)",
    ("query", "pooled"), "query",
    {"recommenders": "pooled"},
    "query: every query weighs the same, as the accuracy metrics",
)
DUPLICATES = Convention(
    Param("duplicates", str, None, "a run that repeats an item for a query: error (as "
          "trec_eval, which stops on 'duplicate docs'), first or last (the first or the "
          "last such row in file order; last is ranx, whose run is a dict per query), or "
          "max_score (the highest score, else the best rank); unset: error, or the compat "
          "preset's (ranx: last; trec_eval, spark, sklearn, recommenders: error)",
          choices=("error", "first", "last", "max_score"), nullable=True),
    "error",
    {"trec_eval": "error", "spark": "error", "sklearn": "error", "recommenders": "error",
     "ranx": "last"},
    "error, as trec_eval (it stops on 'duplicate docs', form_res_rels.c); ranx builds a dict "
    "per query, so a later row overwrites an earlier one; Spark MLlib and recommenders count "
    "each repeat (no equivalent here: error)",
)
"""A task option (it changes the predictions' rows before any metric), not a metric's
parameter."""
POLICIES = (TIES, MISSING, NO_RELEVANT, UNJUDGED)
"""The conventions every per-query accuracy metric takes."""
TIE_NOTE = ("Ties: with ties=average the value is the expectation over a random order of "
            "tied items (exact, not sampled).")


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
RELEVANT = _conv(
    "relevant",
    "which judged items are relevant for the binary measures (precision, recall, MAP, MRR, "
    "hits): threshold (relevance >= relevance_threshold, as trec_eval, ranx, scikit-learn, "
    "recommenders) or listed (every item of the truth, whatever its grade, 0 and negative "
    "included, as Spark MLlib's RankingMetrics, whose ground-truth list is the relevant set "
    "and whose grades only enter NDCG)",
    ("threshold", "listed"), "threshold",
    {"trec_eval": "threshold", "spark": "listed", "sklearn": "threshold",
     "recommenders": "threshold", "ranx": "threshold"},
    "threshold: a grade 0 means judged not relevant, as trec_eval",
)
RELEVANT_TEXT = (" relevant: default threshold; presets: spark=listed (Spark MLlib counts every "
                 "listed ground-truth item as relevant, grade 0 included; NDCG still uses the "
                 "grades), every other peer threshold. relevant=listed is relevance_threshold "
                 "-inf: every truth row is relevant, unjudged items are not.")


def _gain_table(table: Any) -> Any:
    """A gains table's own rules: not empty, no negative level."""
    if not table:
        raise ValueError("an empty table changes no gain: leave gains out")
    negative = [level for level in table if level < 0]
    if negative:
        raise ValueError(f"level {negative[0]} is negative: a negative relevance (TREC's -1) "
                         "is unjudged and gains 0")
    return table


GAINS = Param(
    "gains", dict, None,
    "a gain per relevance level, e.g. {1: 3, 2: 9, 4: 4.5} (trec_eval's ndcg.1=3,2=9,4=4.5): a "
    "level listed gains its value (0 and negative gains allowed; the ideal list keeps the "
    "positive ones), any other level keeps the gain 'gain' gives it (linear: its relevance, "
    "as trec_eval); unset: no table (every peer's default)",
    nullable=True, normalize=_gain_table,
)
LOG_BASE = Param(
    "log_base", float, 2.0,
    "base b of the discount 1/log_b(i+1): 2 as trec_eval, Spark MLlib, ranx, recommenders and "
    "scikit-learn's default; another base as scikit-learn's dcg_score(log_base=b). DCG at "
    "base b is DCG at base 2 times log2(b); NDCG does not depend on it (ndcg_score has no "
    "log_base)", gt=1.0,
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
        relevant = params.get("relevant")
        if relevant is None:
            relevant = RELEVANT.presets.get(compat, RELEVANT.default) if compat else "threshold"
        if relevant == "listed":  # every truth row: any grade is >= -inf, unjudged is null
            out["relevance_threshold"] = float("-inf")
    return out
