"""What regression adds to a run: the residuals' table (``--curves``, the HTML report's
histogram), computed in the run's one pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import polars as pl

from evalcli.metrics.base import Context, FrameStat, Stat
from evalcli.metrics.stats import sum_by
from evalcli.metrics.task import Additions, Asks, Planned

RESIDUALS = "regression.residuals"


def _residuals_build(lf: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    e = (pl.col("label").cast(pl.Float64) - pl.col("prediction").cast(pl.Float64))
    return lf.group_by([*keys, e.round_sig_figs(3).alias("residual")]).agg(
        pl.col("weight").sum().alias("weight"))


def residuals_stat() -> FrameStat:
    """The weight per residual ``label − prediction`` rounded to 3 significant digits: a table
    of at most a few thousand rows whatever the input's size; enough for a histogram, not for
    a metric."""
    return FrameStat(RESIDUALS, _residuals_build, partial(sum_by, by=["residual"]))


def residual_stats(ctx: Context, metrics: Planned, asks: Asks) -> dict[str, Stat]:
    """The residuals' table, when curves are asked for."""
    if not asks.curves or not {"label", "prediction"} <= ctx.roles:
        return {}
    return {RESIDUALS: residuals_stat()}


def residual_table(values: Mapping[str, Any], asks: Asks) -> Additions:
    res = values.get(RESIDUALS)
    if isinstance(res, pl.DataFrame) and res.height:
        return Additions(curves={"residuals": res.sort("residual")})
    return Additions()
