"""The report as trec_eval prints it: ``measure<TAB>query<TAB>value`` lines, ``all`` for the
value over queries, so scripts written for trec_eval's output read evalcli's.

Measures carry trec_eval's names where evalcli's metric is one of its measures at trec_eval's
conventions (``precision@5`` is ``P_5``, ``ndcg@10`` is ``ndcg_cut_10``, ``mrr`` is
``recip_rank``); any other metric keeps its evalcli id. The name is padded to 22 characters
and values have 4 decimals (counts none), as trec_eval's ``%-22s\\t%s\\t%6.4f``. Each query's
lines come first, query by query (ids in trec_eval's string order), when the run has per-query
values (``--per-query``, as trec_eval's ``-q``); metrics that are not per-query
(classification, regression) print ``all`` only.

>>> from evalcli.result import MetricResult
>>> m = MetricResult("precision@5", "precision", "ranking", {"k": 5}, "higher", 0.26666)
>>> trec_name(m), line("P_5", "all", 0.26666, False)
('P_5', 'P_5                   \\tall\\t0.2667')
>>> trec_name(MetricResult("iprec_at_recall[recall=0.1]", "iprec_at_recall", "ranking",
...                        {"recall": 0.1}, "higher", 0.5))
'iprec_at_recall_0.10'
>>> trec_name(MetricResult("ndcg[gains={1:3,2:9}]", "ndcg", "ranking",
...                        {"gains": {1: 3, 2: 9}}, "higher", 0.5))
'ndcg_1=3,2=9'
"""

from __future__ import annotations

from evalcli.result import MetricResult, RunResult

_AT_K = {"precision": "P", "recall": "recall", "ndcg": "ndcg_cut", "map": "map_cut",
         "hit_rate": "success", "relative_precision": "relative_P", "unjudged_fraction": "unj"}
_WHOLE = {"precision": "set_P", "recall": "set_recall", "f1": "set_F", "map": "map",
          "ndcg": "ndcg", "mrr": "recip_rank", "r_precision": "Rprec",
          "iprec_11pt_avg": "11pt_avg", "relative_precision": "set_relative_P",
          "bin_g": "binG", "g": "G", "ndcg_rel": "ndcg_rel", "rndcg": "Rndcg",
          "infap": "infAP"}
_LEVEL = {"iprec_at_recall": ("iprec_at_recall", "recall"), "rprec_mult": ("Rprec_mult", "mult")}
"""Metrics at a level trec_eval writes after the name (``%s_%3.2f``): its name, the parameter."""
COUNTS = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})
ALL_ONLY = frozenset({"num_q", "gm_map", "gm_bpref"})
"""Measures trec_eval prints on the ``all`` line only."""


def trec_name(m: MetricResult) -> str:
    """trec_eval's name of ``m``, or its evalcli id when it has none."""
    if m.family == "ranking" and m.metric in _LEVEL:
        name, param = _LEVEL[m.metric]
        level = m.params.get(param)
        alone = f"{m.metric}[{param}="  # the level is the only parameter set
        if isinstance(level, float) and m.id.startswith(alone) and m.id.count("=") == 1:
            return f"{name}_{level:3.2f}"
        return m.id
    gains = m.params.get("gains")
    if m.family == "ranking" and m.metric in ("ndcg", "dcg") and gains:
        table = "{" + ",".join(f"{k}:{v}" for k, v in gains.items()) + "}"
        if m.id == f"{m.metric}[gains={table}]":  # the table is the only parameter set
            # trec_eval's ndcg.1=3,2=9 prints as ndcg_1=3,2=9 (the parameters as written)
            return f"{m.metric}_" + ",".join(f"{k}={v}" for k, v in gains.items())
    if m.family != "ranking" or "[" in m.id:
        return m.id
    k = m.params.get("k")
    if k is None:
        return _WHOLE.get(m.metric, m.id) if m.metric not in COUNTS else m.metric
    return f"{_AT_K[m.metric]}_{k}" if m.metric in _AT_K else m.id


def line(name: str, query: str, value: float | None, count: bool) -> str:
    if value is None:
        shown = "nan"
    elif count:
        shown = f"{value:.0f}"
    else:
        shown = f"{value:6.4f}"
    return f"{name:<22}\t{query}\t{shown}"


def render(result: RunResult) -> str:
    out: list[str] = []
    names = [(m, trec_name(m), m.metric in COUNTS) for m in result.metrics]
    pq = result.per_query
    if pq is not None and "query" in pq.columns:
        import polars as pl

        order = pq.with_columns(pl.col("query").cast(pl.String).alias("__q")).sort("__q")
        for row in order.iter_rows(named=True):
            query = str(row["query"])
            for m, name, count in names:
                if m.metric not in ALL_ONLY and m.id in row and row[m.id] is not None:
                    out.append(line(name, query, row[m.id], count))
    for m, name, count in names:
        out.append(line(name, "all", m.value, count))
    return "\n".join(out) + "\n"
