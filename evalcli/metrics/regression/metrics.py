"""Regression's metrics: the values from the statistics (:mod:`.stats`) and the declarations."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence

import polars as pl

from evalcli.metrics.base import (
    Context,
    Metric,
    MetricValue,
    Param,
    Params,
    Stat,
    StatValues,
    memo_of,
)
from evalcli.metrics.regression.conventions import DEFINITION, effective
from evalcli.metrics.regression.stats import (
    ABS_ERRORS,
    EPS64,
    MOMENTS,
    SPREAD,
    abs_errors,
    moments,
    spread,
)
from evalcli.metrics.regression.task import FAMILY
from evalcli.metrics.task import options_of


def _m(stats: StatValues) -> dict[str, float]:
    """The moments by short name (NaN for none), once per run or replicate for all its
    metrics (read only)."""
    got = stats[MOMENTS]
    return memo_of(stats).get(got, ("regression moments",), lambda: {
        k.removeprefix(MOMENTS + "."): math.nan if v is None else float(v)
        for k, v in got.items()})


def _value(fn: Callable[[dict[str, float]], MetricValue]) -> Callable[[StatValues, Params],
                                                                      MetricValue]:
    def value(stats: StatValues, params: Params) -> MetricValue:
        m = _m(stats)
        if m["w"] <= 0:
            return MetricValue(None, notes=["no rows (or zero total weight)"])
        return fn(m)

    return value


def _r2(m: dict[str, float]) -> MetricValue:
    if m["n"] < 2:
        return MetricValue(None, notes=["undefined with fewer than two rows, as scikit-learn's "
                                        "r2_score"])
    if m["m2_y"] == 0:
        # exact predictions: every error 0 (the largest |error| is; Σ w·e² may underflow to 0
        # with errors of 1e-200 that are not)
        v = 1.0 if m["max_e"] == 0 else 0.0
        return MetricValue(v, notes=[f"the target is constant: reported as {v:g}, as "
                                     "scikit-learn's force_finite"])
    return MetricValue(1 - m["sse"] / m["m2_y"])


THROUGH_ORIGIN = Param(
    "through_origin", bool, False,
    "false: 1 − SSerr / Σ w·(y − ȳ)² (scikit-learn, Spark's default); true: R² of a fit "
    "through the origin, 1 − SSerr / Σ w·y² (Spark's RegressionMetrics(throughOrigin=true))")


def _r2_value(stats: StatValues, params: Params) -> MetricValue:
    if not params.get("through_origin"):
        return _value(_r2)(stats, params)
    m = _m(stats)
    if m["w"] <= 0:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    ssy = m["m2_y"] + m["w"] * m["mean_y"] * m["mean_y"]  # Σ w·y²
    if ssy == 0:
        return MetricValue(None, notes=["every target is 0: R² through the origin is "
                                        "undefined (Σ w·y² = 0)"])
    return MetricValue(1 - m["sse"] / ssy)


def _explained_variance(m: dict[str, float]) -> MetricValue:
    if m["m2_y"] == 0:
        # errors without spread: all equal (their smallest and largest; Σ w·(e − ē)² may
        # underflow to 0 where they differ by 1e-200)
        v = 1.0 if m["lo_e"] == m["hi_e"] else 0.0
        return MetricValue(v, notes=[f"the target is constant: reported as {v:g}, as "
                                     "scikit-learn's force_finite"])
    return MetricValue(1 - m["m2_e"] / m["m2_y"])


def _ev_stats(p: Params, c: Context) -> Sequence[Stat]:
    """The moments; with definition spark, the predictions' spread too."""
    if effective(DEFINITION, p, c.options) == "spark":
        return [*moments(p, c), *spread(p, c)]
    return moments(p, c)


def _explained_variance_value(stats: StatValues, params: Params) -> MetricValue:
    """ratio: scikit-learn's score; spark: SSreg / Σw, where SSreg = Σw·(ŷ − ȳ)² is taken
    as Σw·(ŷ − ŷ̄)² + Σw·(ŷ̄ − ȳ)² (both terms non-negative: no cancellation), ŷ̄ − ȳ being
    minus the mean error."""
    if effective(DEFINITION, params, options_of(stats)) != "spark":
        return _value(_explained_variance)(stats, params)
    m = _m(stats)
    if m["w"] <= 0:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    ss_reg = float(stats[SPREAD][f"{SPREAD}.m2_p"]) + m["w"] * m["mean_e"] ** 2
    return MetricValue(ss_reg / m["w"])


def _median_ae(stats: StatValues, params: Params) -> MetricValue:
    df: pl.DataFrame = stats[ABS_ERRORS]
    if not df.get_column("abs_e").is_sorted():  # the in-memory engine sorts it (O(n) check)
        df = df.sort("abs_e")
    # weighted median, averaging the two middle values when the half falls on a boundary
    # (the unweighted case gives numpy's median; weights follow scikit-learn's averaged
    # inverted CDF). "On a boundary" allows for rounding: 0.1 + 0.2 misses 0.3 by an ulp,
    # and scikit-learn treats such a miss as a hit too.
    total, high, lower, at, upper = (_median_numpy if "numpy" in sys.modules
                                     else _median_polars)(df)
    if not total:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    if at > high:
        return MetricValue(lower)
    return MetricValue((lower + upper) / 2)


Middle = tuple[float, float, float, float, float]
"""The weighted median's parts, for the rows sorted by absolute error: the total weight,
the half plus the tolerance (``high``), the first row's error and running weight where the
running weight reaches the half minus the tolerance (``lower``, ``at``), and the first error
past ``high`` (``upper``). A weight of 0 or less adds 0 to the running sum, as if its row were
not there (0 everywhere when there is no row)."""


def _median_polars(df: pl.DataFrame) -> Middle:
    """:data:`Middle` in one query (a plain run loads no NumPy: 0.06 s of a small run)."""
    c = pl.col
    cw = pl.when(c("w") > 0).then(c("w").cast(pl.Float64)).otherwise(0.0).cum_sum()
    total = cw.last().fill_null(0.0)
    tol = pl.lit(8 * EPS64) * total
    low, high = total / 2 - tol, total / 2 + tol
    row = df.select(total.alias("total"), high.alias("high"),
                    c("abs_e").filter(cw >= low).first().alias("lower"),
                    cw.filter(cw >= low).first().alias("at"),
                    c("abs_e").filter(cw > high).first().alias("upper")).row(0)
    if not row[0]:
        return 0.0, 0.0, 0.0, 0.0, 0.0
    return tuple(0.0 if v is None else float(v) for v in row)  # type: ignore[return-value]


def _median_numpy(df: pl.DataFrame) -> Middle:
    """:data:`Middle` in NumPy, once it is loaded (a bootstrap asks once per replicate and
    segment: 0.02 ms against 0.3 ms a query); the running sum adds row after row, as Polars'
    cum_sum does, so both give the same bits."""
    import numpy as np
    w = df.get_column("w").cast(pl.Float64).to_numpy()
    cw = np.where(w > 0, w, 0.0).cumsum()
    if not cw.size or not cw[-1]:
        return 0.0, 0.0, 0.0, 0.0, 0.0
    abs_e = df.get_column("abs_e").cast(pl.Float64).to_numpy()
    total = float(cw[-1])
    tol = 8 * EPS64 * total
    low, high = total / 2 - tol, total / 2 + tol
    at = int(np.argmax(cw >= low))  # (the last running sum, the total, reaches both)
    return (total, high, float(abs_e[at]), float(cw[at]),
            float(abs_e[int(np.argmax(cw > high))]))


REG = (frozenset({"label"}), frozenset({"prediction"}))
PEER = "scikit-learn (sklearn.metrics) and Spark MLlib RegressionMetrics"


def _metric(name: str, summary: str, formula: str, fn: Callable[[dict[str, float]], MetricValue],
            direction: str = "lower", aliases: tuple[str, ...] = (), conventions: str = "",
            rng: tuple[float | None, float | None] = (0.0, None), example: str = "",
            params: tuple[Param, ...] = (),
            value: Callable[[StatValues, Params], MetricValue] | None = None,
            stats: Callable[[Params, Context], Sequence[Stat]] = moments) -> Metric:
    return Metric(
        name, FAMILY, summary, formula, direction,  # type: ignore[arg-type]
        REG, stats, value or _value(fn), params=params,
        conventions=conventions or "Weighted by the weight column.",
        peer=PEER, aliases=aliases, range=rng, example=example,
    )


METRICS: list[Metric] = [
    _metric("mse", "mean squared error", "Σ w·(y − ŷ)² / Σ w",
            lambda m: MetricValue(m["sse"] / m["w"]), aliases=("mean_squared_error",),
            example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "regression", "metrics": ["mse"]},
            ...          predictions={"label": [3.0, -0.5, 2.0, 7.0],
            ...                       "prediction": [2.5, 0.0, 2.0, 8.0]}).values()
            {'mse': 0.375}
            """),
    _metric("rmse", "root mean squared error", "√(Σ w·(y − ŷ)² / Σ w)",
            lambda m: MetricValue((m["sse"] / m["w"]) ** 0.5),
            aliases=("root_mean_squared_error",),
            example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "regression", "metrics": ["rmse"], "columns": {"weight": "w"}},
            ...          predictions={"label": [1.0, 2.0, 3.0], "prediction": [1.0, 2.0, 5.0],
            ...                       "w": [1, 1, 2]}).values()  # √(2·2² / 4)
            {'rmse': 1.4142135623730951}
            """),
    _metric("mae", "mean absolute error", "Σ w·|y − ŷ| / Σ w",
            lambda m: MetricValue(m["sae"] / m["w"]), aliases=("mean_absolute_error",),
            example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "regression", "metrics": ["mae"]},
            ...          predictions={"label": [3.0, -0.5, 2.0, 7.0],
            ...                       "prediction": [2.5, 0.0, 2.0, 8.0]}).values()
            {'mae': 0.5}
            """),
    _metric("r2", "coefficient of determination",
            "1 − Σ w·(y − ŷ)² / Σ w·(y − ȳ)² (through_origin: 1 − Σ w·(y − ŷ)² / Σ w·y²)", _r2,
            direction="higher", aliases=("r_squared", "r2_score"), rng=(None, 1.0),
            params=(THROUGH_ORIGIN,), value=_r2_value,
            conventions="Weighted; ȳ is the weighted mean. A constant target gives 1 when "
            "the predictions are exact, else 0, with a note (scikit-learn's force_finite). "
            "Undefined with fewer than two rows, as scikit-learn. through_origin=true is "
            "Spark's R² without an intercept (RegressionMetrics(throughOrigin=true), "
            "RegressionEvaluator's throughOrigin): undefined when every target is 0.",
            example="""
            >>> from evalcli import evaluate
            >>> r = evaluate({"task": "regression", "metrics": ["r2"]},
            ...              predictions={"label": [2.0, 2.0, 2.0], "prediction": [2.0, 2.0, 2.5]})
            >>> r.values()
            {'r2': 0.0}
            >>> r.metric("r2").notes
            ["the target is constant: reported as 0, as scikit-learn's force_finite"]
            >>> evaluate({"task": "regression", "metrics": [
            ...     "r2", {"metric": "r2", "through_origin": True}]},
            ...     predictions={"label": [1.0, 2.0, 3.0], "prediction": [2.0, 2.0, 2.0]}
            ...     ).values()  # 1 − 2/2 and 1 − 2/14
            {'r2': 0.0, 'r2[through_origin=true]': 0.8571428571428572}
            """),
    _metric("explained_variance",
            "share of the target's variance the errors do not have; definition spark: the "
            "predictions' mean squared deviation from the mean target (Spark MLlib's)",
            "1 − Var_w(y − ŷ) / Var_w(y) (definition spark: Σ w·(ŷ − ȳ)² / Σ w)",
            _explained_variance, direction="higher", aliases=("explained_variance_score",),
            rng=(None, None), params=(DEFINITION.param,), value=_explained_variance_value,
            stats=_ev_stats,
            conventions="Weighted population variances; ȳ is the weighted mean of the "
            "target. definition: unset is ratio, or the task option compat's (compat: spark "
            "sets spark, compat: sklearn ratio). ratio (scikit-learn's "
            "explained_variance_score) is at most 1; a constant target gives 1 or 0 with a "
            "note (scikit-learn's force_finite). spark is Spark MLlib's "
            "RegressionMetrics.explainedVariance (RegressionEvaluator's 'var'): SSreg / Σ w, "
            "the mean squared deviation of the predictions from the mean target, in the "
            "target's squared units, at least 0 and not bounded by 1 (0 only when every "
            "prediction is ȳ); it is not a share of the target's variance, and with perfect "
            "predictions it is the target's variance. Spark's weighted mean and weight sum "
            "are Σ w·y / Σ w and Σ w, as here.",
            example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "regression", "metrics": ["explained_variance", "r2"]},
            ...          predictions={"label": [1.0, 2.0, 3.0], "prediction": [2.0, 3.0, 4.0]}
            ...          ).values()  # a constant error is no variance, but it lowers R²
            {'explained_variance': 1.0, 'r2': -0.5}
            """),
    _metric("mape", "mean absolute percentage error (as a fraction, not ×100)",
            "Σ w·|y − ŷ| / max(|y|, ε) / Σ w", lambda m: MetricValue(m["sape"] / m["w"]),
            aliases=("mean_absolute_percentage_error",),
            conventions="Weighted; |y| is floored at float64 epsilon, so a zero target gives "
            "a huge but finite term, as scikit-learn's mean_absolute_percentage_error. "
            "A fraction (0.1 = 10%).",
            example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "regression", "metrics": ["mape"]},
            ...          predictions={"label": [100.0, 200.0], "prediction": [110.0, 180.0]}
            ...          ).values()  # 10% off each: a fraction, not ×100
            {'mape': 0.1}
            """),
    _metric("max_error", "largest absolute error", "max |y − ŷ|",
            lambda m: MetricValue(m["max_e"]),
            conventions="The maximum over the rows with a positive weight (other weights "
            "do not change a maximum; a zero weight is no row). scikit-learn's max_error "
            "takes no weights.",
            example="""
            >>> from evalcli import evaluate
            >>> evaluate({"task": "regression", "metrics": ["max_error"],
            ...           "columns": {"weight": "w"}},
            ...          predictions={"label": [1.0, 2.0, 3.0], "prediction": [1.5, 2.0, 9.0],
            ...                       "w": [1, 1, 0]}).values()  # a zero weight is no row
            {'max_error': 0.5}
            """),
    Metric("median_absolute_error", FAMILY, "median of the absolute errors",
           "median |y − ŷ| (weighted median with weights)", "lower", REG, abs_errors,
           _median_ae,
           conventions="Exact; with an even count the mean of the two middle values, as "
           "numpy's median and scikit-learn's median_absolute_error. With weights, the "
           "weighted median averaging at a boundary.",
           peer="scikit-learn median_absolute_error", aliases=("medae",), range=(0.0, None),
           example="""
           >>> from evalcli import evaluate
           >>> evaluate({"task": "regression", "metrics": ["median_absolute_error"]},
           ...          predictions={"label": [1.0, 2.0, 3.0, 4.0],
           ...                       "prediction": [1.0, 3.0, 5.0, 8.0]}).values()  # |e|: 0 1 2 4
           {'median_absolute_error': 1.5}
           """),
]
