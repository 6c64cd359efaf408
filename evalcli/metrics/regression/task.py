"""Regression's task: a numeric target (``label``) and a numeric ``prediction``, both finite;
and the run extras (:mod:`.extras`).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from evalcli.metrics.base import Check
from evalcli.metrics.regression.conventions import COMPAT
from evalcli.metrics.regression.extras import residual_stats, residual_table
from evalcli.metrics.task import Role, Task, TaskInput

FAMILY = "regression"
F64 = pl.Float64


def _not_null(role: str) -> Callable[[], pl.Expr]:
    return lambda: pl.col(role).is_not_null()


def _infinite(role: str) -> Callable[[], pl.Expr]:
    return lambda: pl.col(role).cast(F64).is_infinite()


def _checks(t: TaskInput) -> list[Check]:
    out = []
    for role in ("label", "prediction"):
        dtype = t.schema.get(role)
        if dtype is not None and not dtype.is_numeric():
            out.append(Check(f"{role}_numeric", role, _not_null(role),
                             f"the {role} column holds {dtype} values; regression needs numbers",
                             f"point '{role}' at a numeric column"))
        elif dtype is not None:
            out.append(Check(f"{role}_finite", role, _infinite(role),
                             f"the {role} column holds infinite values",
                             "replace or drop them"))
    return out


def _normalize(lf: pl.LazyFrame, t: TaskInput) -> pl.LazyFrame:
    return lf.with_columns(pl.col("label").cast(F64), pl.col("prediction").cast(F64))


TASK = Task(
    name=FAMILY,
    summary="numeric target (label) and numeric prediction",
    roles=(
        Role("label", "the true value (target)", True, numeric=True),
        Role("prediction", "the predicted value", True, numeric=True),
    ),
    options=(COMPAT,),
    checks=_checks,
    normalize=_normalize,
    extras=residual_stats,
    finish=residual_table,
)
TASKS = [TASK]
