"""trec_eval's names of evalcli's ranking metrics: ``precision@5`` is ``P_5``, ``ndcg@10`` is
``ndcg_cut_10``, ``mrr`` is ``recip_rank``; a metric at trec_eval's conventions under the name
trec_eval prints it with (its output format, and the measures of a z-scores file).

>>> trec_measure("precision@5", "precision", {"k": 5})
'P_5'
>>> trec_measure("iprec_at_recall[recall=0.1]", "iprec_at_recall", {"recall": 0.1})
'iprec_at_recall_0.10'
>>> trec_measure("ndcg[gains={1:3,2:9}]", "ndcg", {"gains": {1: 3, 2: 9}})
'ndcg_1=3,2=9'
>>> trec_measure("prefs[measure=avgjg_ret]", "prefs", {"measure": "avgjg_ret"})
'prefs_avgjg_ret'
>>> trec_measure("novelty@10", "novelty", {"k": 10}) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_AT_K = {"precision": "P", "recall": "recall", "ndcg": "ndcg_cut", "map": "map_cut",
         "hit_rate": "success", "relative_precision": "relative_P", "unjudged_fraction": "unj",
         "precision_avgjg": "P_avgjg"}
_WHOLE = {"precision": "set_P", "recall": "set_recall", "f1": "set_F", "map": "map",
          "ndcg": "ndcg", "mrr": "recip_rank", "r_precision": "Rprec",
          "iprec_11pt_avg": "11pt_avg", "relative_precision": "set_relative_P",
          "bin_g": "binG", "g": "G", "ndcg_rel": "ndcg_rel", "rndcg": "Rndcg",
          "infap": "infAP", "bpref": "bpref", "gm_map": "gm_map", "gm_bpref": "gm_bpref",
          "set_map": "set_map", "utility": "utility", "rbp": "rbp", "rbp_resid": "rbp_resid",
          "map_avgjg": "map_avgjg"}
_LEVEL = {"iprec_at_recall": ("iprec_at_recall", "recall"), "rprec_mult": ("Rprec_mult", "mult"),
          "rprec_mult_avgjg": ("Rprec_mult_avgjg", "mult")}
"""Metrics at a level trec_eval writes after the name (``%s_%3.2f``): its name, the parameter."""
_PREFS = {"prefs": ("measure", "simp", "prefs_"),
          "num_prefs": ("count", "poss", "prefs_num_prefs_")}
"""trec_eval's preference measures: the metric's parameter naming the measure, its default, and
the prefix of trec_eval's name."""
COUNTS = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret",
                    "num_prefs"})
"""Measures trec_eval sums over queries (and prints as integers)."""
ALL_ONLY = frozenset({"num_q", "gm_map", "gm_bpref"})
"""Measures trec_eval prints on the ``all`` line only."""
GEOMETRIC = frozenset({"gm_map", "gm_bpref"})
"""Measures trec_eval averages geometrically (its per-query value is the log)."""


def trec_measure(mid: str, metric: str, params: Mapping[str, Any]) -> str | None:
    """trec_eval's name of the ranking metric ``metric`` with id ``mid`` and ``params``, or
    ``None`` when trec_eval has no such measure (or not with these parameters)."""
    if metric in _PREFS:  # prefs[measure=simp_ret] is prefs_simp_ret
        param, default, prefix = _PREFS[metric]
        value = params.get(param, default)
        return f"{prefix}{value}" if mid in (metric, f"{metric}[{param}={value}]") else None
    if metric in _LEVEL:
        name, param = _LEVEL[metric]
        level = params.get(param)
        alone = f"{metric}[{param}="  # the level is the only parameter set
        if isinstance(level, float) and mid.startswith(alone) and mid.count("=") == 1:
            return f"{name}_{level:3.2f}"
        return None
    gains = params.get("gains")
    if metric in ("ndcg", "dcg") and gains:
        table = "{" + ",".join(f"{k}:{v}" for k, v in gains.items()) + "}"
        if mid == f"{metric}[gains={table}]":  # the table is the only parameter set
            # trec_eval's ndcg.1=3,2=9 prints as ndcg_1=3,2=9 (the parameters as written)
            return f"{metric}_" + ",".join(f"{k}={v}" for k, v in gains.items())
    if "[" in mid:
        return None
    k = params.get("k")
    if k is None:
        return metric if metric in COUNTS else _WHOLE.get(metric)
    return f"{_AT_K[metric]}_{k}" if metric in _AT_K else None
