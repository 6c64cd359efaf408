"""Multiclass classification's task: the contract, its checks and the normalisation of scores.

Each row has one true class (``label``) and one predicted class (``prediction``), integers or
strings, and optionally a score per class (``score``) for top-k accuracy and log loss. The
scores come in three layouts:

- a struct column (Parquet, JSONL objects): one field per class, named by the class (or by
  ``options.classes`` in field order);
- a list column: position *i* holds class *i* (integer labels ``0 .. n-1``), or the class
  ``options.classes[i]``;
- one column per class (wide, CSV): ``options.score_columns`` lists them (named by the class,
  ``<score_prefix><class>``, or ``options.classes`` in order), or ``options.score_prefix``
  selects every column named ``<prefix><class>``; align packs them into a struct.

The task's normalisation reduces the scores once per row to the numbers the statistics use
(the true class's score, how many classes score above and equal to it, ...), with horizontal
expressions over the fields or list expressions, never a Python loop.

Without a prediction column the predicted class is the one with the highest score (the first
in class order on a tie, as ``numpy.argmax``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import polars as pl

from evalcli.errors import InputDataError
from evalcli.metrics.base import Check, Param
from evalcli.metrics.task import SETS_ELSEWHERE, Role, Task, TaskInput

FAMILY = "multiclass"
F64 = pl.Float64


OPTIONS = (
    Param("classes", tuple, None,
          "the classes, in the order of a list column of scores (default for a list: integer "
          "labels 0..n-1 by position)", nullable=True),
    Param("score_columns", tuple, None,
          "wide scores: one column per class, each named <score_prefix><class> or listed in "
          "the order of 'classes' (default: none)", nullable=True),
    Param("score_prefix", str, None,
          "wide scores: every predictions column whose name starts with this prefix holds the "
          "score of the class named by the rest (e.g. p_ for p_cat, p_dog)", nullable=True),
)


def task_options(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The task options validated (the align hooks receive them as written in the config)."""
    return {p.name: p.check(raw.get(p.name, p.default), f"options.{p.name}") for p in OPTIONS}


def pack_scores(raw: Mapping[str, Any], names: Sequence[str]) -> dict[str, list[str]]:
    """Wide scores: the columns packed into the ``score`` struct (align's ``pack`` hook)."""
    o = task_options(raw)
    cols, prefix = o["score_columns"], o["score_prefix"]
    if cols is None and prefix is None:
        return {}
    if cols is None:
        cols = tuple(n for n in names if n.startswith(prefix) and len(n) > len(prefix))
        if not cols:
            raise InputDataError(
                f"no column of the predictions starts with score_prefix '{prefix}' "
                f"(columns: {', '.join(list(names)[:20])})",
                hint="fix options.score_prefix, or list the columns in options.score_columns",
            )
    if not cols:
        raise InputDataError("options.score_columns is empty",
                             hint="list the score columns, one per class, or remove the option")
    if len(set(cols)) != len(cols):
        raise InputDataError(f"options.score_columns names a column twice: {', '.join(cols)}")
    return {"score": [str(c) for c in cols]}


def class_dtype(t: TaskInput) -> pl.DataType:
    """Int64 when the label and prediction are integers (or booleans, or integral floats),
    else String (integers are then compared as their decimal text)."""
    dtypes = [t.schema[r] for r in ("label", "prediction") if r in t.roles]
    if all(d.is_numeric() or d == pl.Boolean for d in dtypes):
        return pl.Int64()
    return pl.String()


def _class_expr(role: str, t: TaskInput) -> pl.Expr:
    """The role's column as a class value of the run's class dtype."""
    col = pl.col(role)
    src = t.schema[role]
    if src.is_float() or src == pl.Boolean:
        col = col.cast(pl.Int64)
    return col.cast(class_dtype(t))


def as_class(value: Any, dtype: pl.DataType) -> Any:
    """A class name from the config or a score field, in the class dtype (None: no such class).

    >>> as_class("3", pl.Int64()), as_class("cat", pl.Int64()), as_class(3, pl.String())
    (3, None, '3')
    """
    if dtype == pl.Int64:
        if isinstance(value, bool):
            return int(value)
        try:
            f = float(value)
        except (TypeError, ValueError):
            return None
        return int(f) if f.is_integer() else None
    return str(value)


def _score_layout(t: TaskInput) -> tuple[str, list[str] | None]:
    """``("struct", field names)``, ``("list", None)`` or raise for an unusable score column."""
    dtype = t.schema["score"]
    if isinstance(dtype, pl.Struct):
        bad = [f.name for f in dtype.fields if not f.dtype.is_numeric()]
        if bad:
            raise InputDataError(
                f"the per-class score column(s) {', '.join(bad)} do not hold numbers",
                hint="point options.score_columns/score_prefix at the numeric score columns",
            )
        return "struct", [f.name for f in dtype.fields]
    if isinstance(dtype, pl.List | pl.Array):
        if not dtype.inner.is_numeric():
            raise InputDataError(f"the score column holds lists of {dtype.inner}, not numbers",
                                 hint="give one list of per-class scores (floats) per row")
        return "list", None
    raise InputDataError(
        f"the score column holds {dtype} values; a multiclass score is one score per class",
        hint="give a list or struct column of per-class scores, or name the columns with "
        "options.score_columns (or options.score_prefix, e.g. p_); for one score per row "
        "use task: binary",
    )


def score_classes(t: TaskInput) -> list[Any] | None:
    """The class of each score position, in the class dtype; ``None``: integer positions."""
    layout, fields = _score_layout(t)
    o = task_options(t.options)
    named = o["classes"]
    if named is not None and len(set(named)) != len(named):
        twice = next(c for i, c in enumerate(named) if c in named[:i])
        raise InputDataError(f"options.classes names {twice!r} twice",
                             hint="list each class once, in the order of the scores")
    dtype = class_dtype(t)
    if layout == "struct":
        assert fields is not None
        if o["classes"] is not None:
            if len(o["classes"]) != len(fields):
                raise InputDataError(
                    f"options.classes lists {len(o['classes'])} classes and there are "
                    f"{len(fields)} score columns ({', '.join(fields)})",
                    hint="list one class per score column, in the same order",
                )
            return [as_class(c, dtype) for c in o["classes"]]
        prefix = o["score_prefix"] or ""
        return [as_class(f[len(prefix):] if prefix and f.startswith(prefix) else f, dtype)
                for f in fields]
    if o["classes"] is not None:
        return [as_class(c, dtype) for c in o["classes"]]
    if dtype != pl.Int64:
        raise InputDataError(
            "the labels are not integers, so the positions of the score list cannot name them",
            hint="list the classes in score order under 'options: {classes: [...]}'",
        )
    return None


class Scores:
    """Per-row expressions over the scores, in class order, for either layout.

    A struct (or wide columns) is handled field by field with horizontal expressions; a list
    column with list expressions. Nothing builds a list from the fields: that would cost a
    copy of every score.
    """

    def __init__(self, t: TaskInput,
                 classes: Callable[[TaskInput], list[Any] | None] | None = None) -> None:
        """``classes``: the class of each score position (default :func:`score_classes`; the
        multilabel task names positions its own way)."""
        layout, fields = _score_layout(t)
        col = pl.col("score")
        self.fields = ([col.struct.field(f).cast(F64) for f in fields]
                       if layout == "struct" and fields is not None else None)
        if isinstance(t.schema["score"], pl.Array):
            col = col.arr.to_list()
        self.list = col.cast(pl.List(F64))
        self.classes = (classes or score_classes)(t)

    def count(self) -> pl.Expr:
        if self.fields is not None:
            return pl.lit(len(self.fields), dtype=pl.Int64)
        return self.list.list.len().cast(pl.Int64)

    def bad(self) -> pl.Expr:
        """Some score is null, NaN or infinite."""
        if self.fields is not None:
            return pl.any_horizontal([f.is_null() | f.is_nan() | f.is_infinite()
                                      for f in self.fields])
        el = pl.element()
        return self.list.list.eval(el.is_null() | el.is_nan() | el.is_infinite()).list.any()

    def at(self, idx: pl.Expr) -> pl.Expr:
        """The score at position ``idx`` (null when out of range)."""
        if self.fields is not None:
            return pl.coalesce([pl.when(idx == j).then(f) for j, f in enumerate(self.fields)])
        return self.list.list.get(idx, null_on_oob=True)

    def arg_max(self) -> pl.Expr:
        """Position of the highest score (the first one on a tie)."""
        if self.fields is not None:
            top = pl.max_horizontal(self.fields)
            return pl.coalesce([pl.when(f == top).then(pl.lit(j, dtype=pl.Int64))
                                for j, f in enumerate(self.fields)])
        return self.list.list.arg_max().cast(pl.Int64)

    def compare(self, ref: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
        """How many scores are above ``ref``, and how many equal it."""
        if self.fields is not None:
            return (pl.sum_horizontal([(f > ref).cast(pl.Int64) for f in self.fields]),
                    pl.sum_horizontal([(f == ref).cast(pl.Int64) for f in self.fields]))
        diff = self.list - ref
        return (diff.list.eval(pl.element() > 0).list.sum().cast(pl.Int64),
                diff.list.eval(pl.element() == 0).list.sum().cast(pl.Int64))

    def outside(self) -> pl.Expr:
        """Some score is outside [0, 1]."""
        if self.fields is not None:
            return pl.any_horizontal([(f < 0) | (f > 1) for f in self.fields])
        return (self.list.list.min() < 0) | (self.list.list.max() > 1)

    def total(self) -> pl.Expr:
        if self.fields is not None:
            return pl.sum_horizontal(self.fields)
        return self.list.list.sum()


def _label_index(t: TaskInput) -> pl.Expr:
    """Position of the true class among the scores (null when it has no score)."""
    classes = score_classes(t)
    label = _class_expr("label", t)
    if classes is None:
        return label.cast(pl.Int64)
    pairs = [(c, i) for i, c in enumerate(classes) if c is not None]
    return label.replace_strict([c for c, _ in pairs], [i for _, i in pairs], default=None,
                                return_dtype=pl.Int64)


def _not_whole(role: str) -> pl.Expr:
    col = pl.col(role)
    return col.is_infinite() | (col != col.round())


def _checks(t: TaskInput) -> list[Check]:
    out: list[Check] = []
    for role in ("label", "prediction"):
        if role not in t.roles:
            continue
        dtype = t.schema[role]
        if dtype.is_nested():
            raise InputDataError(
                f"the {role} column holds {dtype} values, not one class per row",
                hint="for sets of labels per example use task: multilabel",
            )
        if dtype.is_float():
            out.append(Check(
                f"{role}_class", role, partial(_not_whole, role),
                f"the {role} column holds numbers that are not whole, so not classes",
                "multiclass labels are integers or strings; for a numeric target use "
                "task: regression",
            ))
    if "score" not in t.roles:
        return out
    sc = Scores(t)
    out.append(Check("score_finite", "score", sc.bad,
                     "the per-class scores hold null, NaN or infinite values",
                     "every row needs a finite score for every class"))
    classes = sc.classes
    if sc.fields is None:
        n = sc.count()
        if classes is not None:
            out.append(Check("score_length", "score", lambda: n != len(classes),
                             f"a score list does not hold {len(classes)} scores, one per class "
                             "in options.classes", "give one score per class, in class order"))
        else:
            out.append(Check("score_length", "score", lambda: n != n.max(),
                             "the score lists differ in length",
                             "give one score per class on every row, in class order"))
    known = ", ".join(map(str, [c for c in classes if c is not None][:10])) if classes else ""

    def unscored() -> pl.Expr:
        idx = _label_index(t)
        return idx.is_null() | (idx < 0) | (idx >= sc.count())

    out.append(Check(
        "label_scored", "label", unscored,
        "the true class has no score" + (f" (scored classes: {known})" if known else
                                         " (labels are positions 0..n-1 in the score list)"),
        "give a score for every class, or set options.classes / score_columns to name them",
    ))
    return out


def _normalize(lf: pl.LazyFrame, t: TaskInput) -> pl.LazyFrame:
    """Class columns in one dtype; the scores reduced to the per-row numbers the statistics
    use: the true class's score, how many classes score above and equal to it, the number of
    classes, whether a score is outside [0, 1], and the row's sum."""
    exprs = [_class_expr("label", t).alias("label")]
    if "prediction" in t.roles:
        exprs.append(_class_expr("prediction", t).alias("prediction"))
    if "score" not in t.roles:
        return lf.with_columns(exprs)
    sc = Scores(t)
    exprs.append(sc.at(_label_index(t)).alias("__p_true"))
    if "prediction" not in t.roles:
        best = sc.arg_max()
        if sc.classes is not None:
            best = best.replace_strict(list(range(len(sc.classes))), sc.classes, default=None,
                                       return_dtype=class_dtype(t))
        exprs.append(best.cast(class_dtype(t)).alias("prediction"))
    above, tied = sc.compare(pl.col("__p_true"))
    return lf.with_columns(exprs).with_columns(
        above.alias("__above"), tied.alias("__tied"), sc.count().alias("__classes"),
        sc.outside().alias("__outside"), sc.total().alias("__sum"),
    )


TASK = Task(
    name=FAMILY,
    summary="one class per row: label and predicted class (integers or strings), optionally a "
    "score per class",
    roles=(
        Role("label", "the true class (integer or string)", True, elsewhere=SETS_ELSEWHERE),
        Role("prediction", "the predicted class, coded like the label (default: the class "
             "with the highest score)", elsewhere=SETS_ELSEWHERE),
        Role("score", "per-class scores: a struct or list column, or the wide columns named "
             "by options.score_columns / score_prefix", takes=("list", "struct")),
    ),
    options=OPTIONS,
    checks=_checks,
    normalize=_normalize,
    requires_any=(frozenset({"prediction", "score"}),),
    pack=pack_scores,
)
TASKS = [TASK]
