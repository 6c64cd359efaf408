"""A team's own metric, kept next to its config: decision-curve net benefit.

The config names this file under ``plugins:``; evalcli imports it (it RUNS this code) and
registers ``METRICS`` exactly like its built-in metrics.

Net benefit (Vickers & Elkin, 2006, "Decision curve analysis") weighs true positives against
false positives at the exchange rate implied by a threshold probability p_t:

    NB(p_t) = TP / N − FP / N · p_t / (1 − p_t),   acting on rows with score ≥ p_t.
"""

from __future__ import annotations

import polars as pl

from evalcli.plugin import Context, MetricValue, Param, Params, sum_metric


def _sums(p: Params, ctx: Context) -> dict[str, pl.Expr]:
    y, w = pl.col("label"), pl.col("weight")
    act = (pl.col("score") >= p["threshold"]).cast(pl.Float64)
    return {"n": w, "tp": w * y * act, "fp": w * (1 - y) * act}


def _value(s: dict[str, float], p: Params) -> MetricValue:
    if s["n"] <= 0:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    t = p["threshold"]
    nb = s["tp"] / s["n"] - s["fp"] / s["n"] * t / (1 - t)
    return MetricValue(nb)


METRICS = [
    sum_metric(
        "net_benefit", "binary",
        summary="decision-curve net benefit of acting on rows scored at or above threshold",
        formula="TP/N − FP/N · t/(1 − t), acting on rows with score ≥ t",
        direction="higher",
        needs=["label", "score"],
        sums=_sums,
        value=_value,
        params=[Param("threshold", float, 0.2, "threshold probability t", gt=0, lt=1)],
        conventions="Weighted by the weight column. Vickers & Elkin (2006).",
        peer="Vickers & Elkin 2006 (decision curve analysis)",
    ),
]
