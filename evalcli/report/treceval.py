"""The report as trec_eval prints it: ``measure<TAB>query<TAB>value`` lines, ``all`` for the
value over queries, so scripts written for trec_eval's output read evalcli's.

Measures carry trec_eval's names where evalcli's metric is one of its measures at trec_eval's
conventions (``precision@5`` is ``P_5``, ``ndcg@10`` is ``ndcg_cut_10``, ``mrr`` is
``recip_rank``); any other metric keeps its evalcli id. The name is padded to 22 characters
and values have 4 decimals (counts none), as trec_eval's ``%-22s\\t%s\\t%6.4f``. Each query's
lines come first, query by query (ids in trec_eval's string order), when the run has per-query
values (``--per-query``, as trec_eval's ``-q``); metrics that are not per-query
(classification, regression) print ``all`` only. A run with z-scores (the ranking task's
``zscores_file``, trec_eval's ``-Z``) prints trec_eval's ``Z`` before each name.

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

from evalcli.metrics.ranking.names import ALL_ONLY, COUNTS, trec_measure
from evalcli.result import MetricResult, RunResult


def trec_name(m: MetricResult) -> str:
    """trec_eval's name of ``m``, or its evalcli id when it has none."""
    name = trec_measure(m.id, m.metric, m.params) if m.family == "ranking" else None
    return m.id if name is None else name


def line(name: str, query: str, value: float | None, count: bool, z: bool = False) -> str:
    """One line, as trec_eval's ``%-22s\\t%s\\t%6.4f`` (``Z%-22s`` for a z-score)."""
    if value is None:
        shown = "nan"
    elif count:
        shown = f"{value:.0f}"
    else:
        shown = f"{value:6.4f}"
    return f"{'Z' if z else ''}{name:<22}\t{query}\t{shown}"


def render(result: RunResult) -> str:
    out: list[str] = []
    # z-scores (the ranking task's zscores_file, trec_eval -Z): "Z" before each name, every
    # value with 4 decimals (a count's z-score too)
    z = bool(result.options.get("zscores_file"))
    names = [(m, trec_name(m), not z and m.metric in COUNTS) for m in result.metrics]
    pq = result.per_query
    if pq is not None and "query" in pq.columns:
        import polars as pl

        order = pq.with_columns(pl.col("query").cast(pl.String).alias("__q")).sort("__q")
        for row in order.iter_rows(named=True):
            query = str(row["query"])
            for m, name, count in names:
                if m.metric not in ALL_ONLY and m.id in row and row[m.id] is not None:
                    out.append(line(name, query, row[m.id], count, z))
    for m, name, count in names:
        out.append(line(name, "all", m.value, count, z))
    return "\n".join(out) + "\n"
