"""z-scores of the per-query values (the ranking task's ``zscores_file``, trec_eval's ``-Z``).

A z-scores file gives, per query and trec_eval measure, the mean and standard deviation of a
reference set of runs (``qid measure mean stddev`` lines; trec_eval's ``make_zscore_file.py``
writes them). Each query's value ``v`` of a metric trec_eval names (:mod:`.names`) becomes
``(v − mean) / stddev``, as trec_eval's ``convert_zscores.c``: with ``stddev`` 0 it is 0 when
``v`` equals the mean and −1000000 otherwise, and −1000000 when the file has no line for the
query and measure (trec_eval's ``MISSING_ZSCORE_VALUE``). The values over queries are then
trec_eval's accumulations of the z-scores: the mean over the queries evaluated (unweighted), the
sum for the counts (``num_ret``, ...), ``num_q`` unchanged, and for ``gm_map``/``gm_bpref``,
whose per-query value in trec_eval is ``log(max(v, 0.00001))``, ``exp`` of the mean z-score.

>>> pq = pl.LazyFrame({"query": ["1", "2"], "map": [0.5, 0.25], "num_ret": [10.0, 8.0]})
>>> table = pl.LazyFrame({"query": ["1", "1", "2"], "measure": ["map", "num_ret", "map"],
...                       "mean": [0.25, 10.0, 0.25], "stddev": [0.125, 0.0, 0.0]})
>>> names = {"map": ("map", "mean"), "num_ret": ("num_ret", "sum")}
>>> z = zscored(pq, names, table).collect()
>>> z.sort("query").rows()
[('1', 2.0, 0.0), ('2', 0.0, -1000000.0)]
>>> over_queries(z, names)
{'map': 1.0, 'num_ret': -1000000.0}
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

from evalcli.metrics.ranking.frame import Q
from evalcli.metrics.ranking.names import COUNTS, GEOMETRIC, trec_measure
from evalcli.metrics.task import Planned

MIN_GEO_MEAN = 0.00001
"""trec_eval's floor of a value before its log (gm_map, gm_bpref), as :mod:`.trec`'s."""
MISSING_ZSCORE = -1_000_000.0
"""trec_eval's value of a query and measure the z-scores file has no mean for."""
NOTE = ("z-scores (zscores_file): each query's value as (value − mean) / stddev of the file's "
        "line for the query and trec_eval measure (−1000000 without one), then averaged")


def kinds(metrics: Planned) -> dict[str, tuple[str, str]]:
    """Metric id -> (trec_eval's measure name or the id, how trec_eval accumulates it over
    queries: ``mean``, ``sum``, ``geometric`` or ``none``)."""
    out = {}
    for mid, metric, params in metrics:
        name = trec_measure(mid, metric.name, params) or mid
        how = ("none" if metric.name == "num_q" else "sum" if metric.name in COUNTS
               else "geometric" if metric.name in GEOMETRIC else "mean")
        out[mid] = (name, how)
    return out


def zscored(per_query: pl.LazyFrame, names: Mapping[str, tuple[str, str]],
            table: pl.LazyFrame) -> pl.LazyFrame:
    """The per-query frame (query, then one column per metric id) with each value its
    z-score against ``table`` (``query``, ``measure``, ``mean``, ``stddev``): the table's
    measures as columns (one join by query), then one expression per metric."""
    cols = [mid for mid in names if mid in per_query.collect_schema().names()]
    wanted = sorted({names[mid][0] for mid in cols})
    rows = (table.select(pl.col("query").cast(pl.String).alias("__q"), "measure", "mean",
                         "stddev")
            .filter(pl.col("measure").is_in(wanted)).collect()  # the side file, small
            .unique(["__q", "measure"], keep="last", maintain_order=True))
    present = set(rows["measure"].unique().to_list())
    side = []
    for what in ("mean", "stddev"):
        one = rows.pivot("measure", index="__q", values=what)
        side.append(one.rename({c: f"__{what}:{c}" for c in one.columns if c != "__q"}))
    wide = side[0].join(side[1], on="__q", how="full", coalesce=True)
    joined = per_query.with_columns(pl.col(Q).cast(pl.String).alias("__q")).join(
        wide.lazy(), on="__q", how="left", maintain_order="left")
    out: list[pl.Expr] = [pl.col(Q)]
    for mid in cols:
        name, how = names[mid]
        raw = pl.col(mid).cast(pl.Float64)
        if how == "none":
            out.append(raw.alias(mid))
            continue
        if name not in present:
            out.append(pl.when(raw.is_not_null()).then(pl.lit(MISSING_ZSCORE)).alias(mid))
            continue
        v = raw.clip(lower_bound=MIN_GEO_MEAN).log() if how == "geometric" else raw
        mean, sd = pl.col(f"__mean:{name}"), pl.col(f"__stddev:{name}")
        out.append(pl.when(raw.is_null()).then(raw)
                   .when(mean.is_null()).then(pl.lit(MISSING_ZSCORE))
                   .when(sd != 0).then((v - mean) / sd)
                   .when(v == mean).then(pl.lit(0.0))
                   .otherwise(pl.lit(MISSING_ZSCORE)).alias(mid))
    return joined.select(out)


def over_queries(z: pl.DataFrame, names: Mapping[str, tuple[str, str]]
                 ) -> dict[str, float | None]:
    """The value over queries of each metric's z-scores (``num_q``: left as computed), from
    exactly rounded sums: the same bits whatever order the queries' rows come in."""
    out: dict[str, float | None] = {}
    for mid, (_, how) in names.items():
        if mid not in z.columns or how == "none":
            continue
        values = z[mid].drop_nulls().to_list()
        total = math.fsum(values)
        if not values:
            out[mid] = None
        elif how == "sum":
            out[mid] = total
        elif how == "geometric":
            out[mid] = math.exp(total / len(values))
        else:
            out[mid] = total / len(values)
    return out
