"""Binary classification's task: labels 0/1, true/false or a named positive class, a score
and/or a hard prediction; the checks and the normalisation to 0/1 labels (STYLE.md, example 4),
and the run extras (:mod:`.extras`).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from evalcli.errors import ConfigError
from evalcli.metrics.base import Check, Param
from evalcli.metrics.binary.conventions import COMPAT, CURVE_FRAMING, NUM_BINS_OPTION
from evalcli.metrics.binary.extras import curve_stats, curve_tables
from evalcli.metrics.task import SETS_ELSEWHERE, Role, Task, TaskInput

FAMILY = "binary"
F64 = pl.Float64


def _is_numeric(dtype: pl.DataType) -> bool:
    return dtype.is_numeric()


def _kind(dtype: pl.DataType) -> str:
    return "bool" if dtype == pl.Boolean else "number" if _is_numeric(dtype) else "text"


def _uses_positive(role: str, t: TaskInput) -> bool:
    """Whether ``positive`` maps this role's values: the label's always; the prediction's when
    it is coded like the label (a 0/1 prediction beside "yes"/"no" labels is read as 0/1)."""
    if t.options.get("positive") is None or role not in t.schema:
        return False
    return role == "label" or _kind(t.schema[role]) == _kind(t.schema["label"])


def _binary_rule(role: str, t: TaskInput) -> Check | None:
    """Labels (and hard predictions) must be 0/1 or booleans, unless ``positive`` names one."""
    dtype = t.schema.get(role)
    if dtype is None or _uses_positive(role, t) or dtype == pl.Boolean:
        return None
    col = pl.col(role)
    if _is_numeric(dtype):
        return Check(
            f"{role}_binary",
            role,
            # == rather than is_in: is_in refuses a float column against integer values
            lambda: (col != 0) & (col != 1),
            f"the {role} column must hold 0 and 1 (or true/false) for a binary task",
            "map the labels to 0/1, set 'positive: <value>' under 'options:' to name the "
            "positive class, or use task: multiclass",
        )
    return Check(
        f"{role}_binary",
        role,
        lambda: col.is_not_null(),
        f"the {role} column holds {dtype} values; a binary task needs 0/1, booleans, "
        "or a named positive class",
        "set 'positive: <value>' under 'options:' (for example positive: yes)",
    )


_TRUE, _FALSE = ("true", "1", "yes", "1.0"), ("false", "0", "no", "0.0")


def _positive_value(role: str, t: TaskInput) -> Any:
    """The ``positive`` option as a value of the role's column type; an error if it cannot be.

    A boolean column's positive must read as true or false (anything else would silently
    make False the positive class); a numeric column's must be a number.
    """
    positive, dtype = t.options.get("positive"), t.schema[role]
    text = str(positive).strip()
    if dtype == pl.Boolean:
        if text.lower() not in _TRUE + _FALSE:
            raise ConfigError(f"positive: {text!r} cannot name a class of the {role} column, "
                              "which holds true/false values",
                              hint="write positive: true (or false), or leave it out")
        return text.lower() in _TRUE
    if _is_numeric(dtype):
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"positive: {text!r} is not a number, and the {role} column "
                              f"holds {dtype} numbers",
                              hint="name the positive class as it is written in the column "
                              "(e.g. positive: 1)") from None
    return text


def _checks(t: TaskInput) -> list[Check]:
    for role in ("label", "prediction"):
        if role in t.roles and _uses_positive(role, t):
            _positive_value(role, t)  # raises when the option cannot name a class
    out = [c for role in ("label", "prediction") if role in t.roles
           if (c := _binary_rule(role, t)) is not None]
    if t.options.get("positive") is not None and _uses_positive("label", t):
        out.append(_positive_present(t))
    if "score" in t.roles:
        dtype = t.schema["score"]
        if not _is_numeric(dtype):
            out.append(Check("score_numeric", "score", lambda: pl.col("score").is_not_null(),
                             f"the score column holds {dtype} values, not numbers",
                             "point 'score' at the column of probabilities or scores"))
        else:
            out.append(Check("score_finite", "score",
                             lambda: pl.col("score").cast(F64).is_infinite(),
                             "the score column holds infinite values",
                             "replace them, or clip the scores"))
    return out


def _positive_present(t: TaskInput) -> Check:
    """The named positive class must occur: a typo (``positive: Yes`` for ``yes``) would make
    every row negative and every number wrong without a word."""
    roles = [r for r in ("label", "prediction") if r in t.roles and _uses_positive(r, t)]

    def witness() -> pl.Expr:
        return pl.any_horizontal([_to01(r, t) == 1.0 for r in roles])

    shown = str(t.options.get("positive"))
    return Check(
        "positive_present", "label", witness,
        f"options.positive {shown[:100]!r} matches no value of the label column"
        + (" nor of the prediction column" if len(roles) > 1 else ""),
        "set 'positive:' to a value as it is written in the label column (case and spaces "
        "count), or --positive VALUE",
        require_some=True,
    )


def _to01(role: str, t: TaskInput) -> pl.Expr:
    col = pl.col(role)
    if _uses_positive(role, t):
        pos = _positive_value(role, t)
        if isinstance(pos, str):
            col = col.cast(pl.String)
        out: pl.Expr = (col == pos).cast(F64).alias(role)
        return out
    return col.cast(F64, strict=False).alias(role)


def _normalize(lf: pl.LazyFrame, t: TaskInput) -> pl.LazyFrame:
    exprs = [_to01("label", t)]
    if "prediction" in t.roles:
        exprs.append(_to01("prediction", t))
    if "score" in t.roles:
        exprs.append(pl.col("score").cast(F64))
    return lf.with_columns(exprs)


TASK = Task(
    name=FAMILY,
    summary="two classes: label 0/1 (or a named positive class), a score and/or a hard prediction",
    roles=(
        Role("label", "the true class: 0/1, true/false, or any value with 'positive' set", True,
             elsewhere=SETS_ELSEWHERE),
        Role("score", "the model's score or probability of the positive class", numeric=True),
        Role("prediction", "the hard prediction: coded like the label, or 0/1",
             elsewhere=SETS_ELSEWHERE),
    ),
    options=(
        Param("positive", str, None, "the label value of the positive class (for string labels)",
              nullable=True),
        COMPAT,
        CURVE_FRAMING.param,
        NUM_BINS_OPTION,
    ),
    checks=_checks,
    normalize=_normalize,
    requires_any=(frozenset({"score", "prediction"}),),
    extras=curve_stats,
    finish=curve_tables,
)
TASKS = [TASK]
