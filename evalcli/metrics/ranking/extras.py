"""What the ranking family adds to a run: the query-level alignment counts (queries in the
predictions, in the truth, in both ...), and each metric's per-query values (``per_query:``),
computed in the run's one pass with the metrics' own frames; with a ``zscores_file``, their
z-scores and the metrics' values from them (:mod:`.zscores`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from evalcli.errors import MetricError
from evalcli.metrics.base import Context, FrameStat, Stat
from evalcli.metrics.ranking.frame import JUDGED, REC, SEG, Q
from evalcli.metrics.ranking.stats import add_by, per_query_frame
from evalcli.metrics.ranking.zscores import NOTE, kinds, over_queries, zscored
from evalcli.metrics.task import Additions, Asks, Planned

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


def query_stats(ctx: Context, metrics: Planned, asks: Asks) -> dict[str, Stat]:
    """Statistics a ranking run adds to its one pass: query-level alignment counts, and the
    per-query values of every metric when asked for (the metrics' own frames: ``ctx`` is the
    run's context, its memo theirs)."""
    out: dict[str, Stat] = {QUERIES: FrameStat(QUERIES, _queries_build, add_by)}
    table = ctx.frames.get("zscores_file")
    if asks.per_query or table is not None:
        def build(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
            pq = per_query_frame(metrics, lf, ctx)
            if table is None:
                return pq
            if keys:
                raise MetricError(
                    "zscores_file: z-scores are computed over the whole run, not per segment "
                    "or bootstrap group", hint="drop group_by and uncertainty, or zscores_file")
            return zscored(pq, kinds(metrics), table)

        def combine(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
            return df

        out[PER_QUERY] = FrameStat(PER_QUERY, build, combine)
    return out


def query_tables(values: Mapping[str, Any], asks: Asks) -> Additions:
    """The query counts of the alignment; the per-query table as written (segment columns under
    their own names; sorted by query: engine spark gathers the queries by partition)."""
    counts: pl.DataFrame = values[QUERIES]
    out = Additions(alignment={k: int(v) for k, v in counts.row(0, named=True).items()}
                    if counts.height else {})
    if PER_QUERY not in values:
        return out
    df: pl.DataFrame = values[PER_QUERY]
    if asks.options.get("zscores_file"):  # the per-query values are z-scores
        out.values = over_queries(df, kinds(asks.metrics))
        out.values_note = NOTE
    if asks.per_query:
        out.per_query = df.rename({c: c[len(SEG):] for c in df.columns if c.startswith(SEG)}
                                  ).sort(Q, nulls_last=True)
    return out
