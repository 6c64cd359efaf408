"""Multilabel classification's task: the contract, the three input layouts, checks and
normalisation to sets.

Each example has a set of true labels ``L`` and a set of predicted labels ``P`` (either may be
empty). Three input layouts give the same sets:

- ``list``: a list column per side (Parquet, JSONL), e.g. ``["sports", "politics"]``;
- ``delimited``: a text column with the labels joined by ``options.delimiter`` (``|`` by
  default), e.g. ``sports|politics`` in CSV; an empty field is the empty set;
- ``long``: one row per (id, label) in each file; an id's rows are gathered into its set, and
  a row with an empty label stands for an example with no labels. An id of the truth with no
  prediction row is an example whose predicted set is empty (``options.absent_as_empty``, on
  by default; the count is reported), so an empty predicted set needs no row.

``options.layout: auto`` (the default) uses list columns as they are, splits text columns on the
delimiter, and, when predictions and truth are two files, gathers the rows sharing an id, which
reads the delimited and the long layout alike. Labels are names, compared as text (the
integer 2 and the text "2" are one label), and sets are sets: duplicates count once, order does
not matter, a null is the empty set.

An optional ``score`` per label (for auroc and average_precision) comes in the multiclass
task's layouts, read by its code (:class:`~evalcli.metrics.multiclass.task.Scores`): a struct
column (a field per label), a list column (position *i* is ``options.classes[i]``, or the label
``i``), or one column per label (``options.score_columns`` / ``score_prefix``). The scored labels
are the label space: every true label needs a score.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from evalcli.errors import ConfigError, InputDataError
from evalcli.metrics.base import Check, Param
from evalcli.metrics.multiclass.task import OPTIONS as SCORE_OPTIONS
from evalcli.metrics.multiclass.task import Scores, pack_scores, score_classes
from evalcli.metrics.multiclass.task import task_options as score_options
from evalcli.metrics.task import Role, Task, TaskInput

if TYPE_CHECKING:
    from polars._typing import PolarsDataType


FAMILY = "multilabel"
F64 = pl.Float64
ROLES = ("label", "prediction")


OPTIONS = (
    Param("layout", str, "auto",
          "list (a list column), delimited (labels joined by 'delimiter' in a text column), "
          "long (one row per id and label; needs two files) or auto",
          choices=("auto", "list", "delimited", "long")),
    Param("delimiter", str, "|", "separator of labels in a delimited text column"),
    Param("absent_as_empty", bool, True,
          "layout long or auto with two files: an id of the truth with no prediction row is an "
          "example whose predicted set is empty, as in Spark MLlib's MultilabelMetrics example "
          "(the count is reported as empty_predicted_sets); false: it is unmatched"),
    *SCORE_OPTIONS,
)


def _join(raw: Mapping[str, Any]) -> Literal["inner", "truth"]:
    """The join the options ask for: in the long layout an empty predicted set has no row, so
    every truth id is kept and one without predictions reads as the empty set (Task.join_for)."""
    o = task_options(raw)
    return "truth" if o["absent_as_empty"] and o["layout"] in ("long", "auto") else "inner"


def task_options(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The task options validated (the reshape hook receives them as written in the config)."""
    return {p.name: p.check(raw.get(p.name, p.default), f"options.{p.name}") for p in OPTIONS}


def _is_list(dtype: pl.DataType) -> bool:
    return isinstance(dtype, pl.List | pl.Array)


def _is_text(dtype: pl.DataType) -> bool:
    return dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum)


def _clean_list(role: str, dtype: pl.DataType, split: str | None) -> pl.Expr:
    """Row-wise: the role's labels as a list without nulls and empty names, ready to be
    concatenated per example. Done on every row at once before the group-by: the same work
    inside the aggregation runs group by group (10^6 rows of ``a|b|c``: 1.2 s -> 0.65 s)."""
    col = pl.col(role)
    inner: PolarsDataType
    if isinstance(dtype, pl.Array):
        lst, inner = col.arr.to_list(), dtype.inner
    elif isinstance(dtype, pl.List):
        lst, inner = col, dtype.inner
    elif _is_text(dtype):
        text = col.cast(pl.String)
        lst = text.str.split(split) if split is not None else pl.concat_list([text])
        lst, inner = lst.list.eval(pl.element().str.strip_chars()), pl.String
    else:
        lst, inner = pl.concat_list([col]), dtype
    el = pl.element()
    keep = el.is_not_null()
    if _is_text(dtype) or inner == pl.String:
        keep = keep & (el.cast(pl.String) != "")
    return lst.list.eval(el.filter(keep)).alias(role)


def _as_list(role: str, dtype: pl.DataType, split: str | None) -> pl.Expr:
    """Row-wise: the role's column as a list of labels."""
    col = pl.col(role)
    if isinstance(dtype, pl.Array):
        return col.arr.to_list().alias(role)
    if isinstance(dtype, pl.List):
        return col
    if _is_text(dtype) and split is not None:
        return col.cast(pl.String).str.split(split).list.eval(
            pl.element().str.strip_chars()).alias(role)
    return pl.concat_list([col]).alias(role)


def _reshape(lf: pl.LazyFrame, side: str, raw: Mapping[str, Any]) -> pl.LazyFrame:
    """Every layout to one row per example with a list per role (Task.reshape hook)."""
    o = task_options(raw)
    layout, delim = o["layout"], o["delimiter"]
    schema = lf.collect_schema()
    roles = [r for r in ROLES if r in schema]
    for r in roles:
        dtype = schema[r]
        if (isinstance(dtype, pl.List | pl.Array) and dtype.inner.is_nested()) or isinstance(
                dtype, pl.Struct):
            raise InputDataError(f"the {r} column holds {dtype} values, not labels or lists "
                                 "of labels", hint="give one list of labels per example")
        if layout == "list" and not _is_list(dtype):
            raise ConfigError(f"options.layout is list, but the {r} column holds {dtype} values",
                              hint="use layout: delimited for text such as a|b, or auto")
        if layout == "delimited" and not _is_text(dtype):
            raise ConfigError(f"options.layout is delimited, but the {r} column holds {dtype} "
                              "values, not text", hint="use layout: auto")
    if layout == "long" and side == "single":
        raise ConfigError(
            "options.layout is long (one row per id and label), which needs the predictions "
            "and the truth in two files joined on the id",
            hint="give a truth file, or put the labels of an example in one list or delimited "
            "text field",
        )
    split = None if layout in ("list", "long") else delim
    group = side != "single" and (
        layout == "long" or (layout == "auto" and any(not _is_list(schema[r]) for r in roles)))
    if not group:
        return lf.with_columns([_as_list(r, schema[r], split) for r in roles])
    keys = [c for c in schema.names() if c not in (*ROLES, "score")]
    first = [pl.col("score").first()] if "score" in schema else []
    return lf.with_columns([_clean_list(r, schema[r], split) for r in roles]).group_by(
        keys, maintain_order=True).agg(
        *(pl.col(r).list.explode(keep_nulls=False, empty_as_null=False) for r in roles), *first)


def _set_expr(role: str, t: TaskInput) -> pl.Expr:
    """The role's labels as a list of distinct label names (text), never null.

    Labels are names: integers (and integral floats) become their decimal text, so a list of
    integers, the text ``0|2`` and long rows ``0`` and ``2`` give the same set and the same
    report.
    """
    col = pl.col(role)
    inner = t.schema[role].inner  # type: ignore[attr-defined]
    if inner.is_float() or inner == pl.Boolean:
        col = col.cast(pl.List(pl.Int64))
    el = pl.element()
    return (col.cast(pl.List(pl.String)).list.eval(el.filter(el.is_not_null() & (el != "")))
            .list.unique().fill_null(pl.lit([], dtype=pl.List(pl.String)))
            .alias(role))


def label_order(label: str) -> tuple[int, float, str]:
    """Sort key of label names: numbers numerically first, then text.

    >>> sorted(["10", "b", "2", "a"], key=label_order)
    ['2', '10', 'a', 'b']
    """
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


def score_labels(t: TaskInput) -> list[str] | None:
    """The label of each score position, as text (labels are names); ``None``: a list column
    without ``options.classes``, whose position *i* is the label ``i``."""
    if not isinstance(t.schema["score"], pl.Struct) and score_options(t.options)["classes"] \
            is None:
        return None
    return [str(c) for c in score_classes(t) or ()]


def label_scores(t: TaskInput) -> Scores:
    """The per-label scores of the rows (the multiclass task's reader, labels as text)."""
    return Scores(t, score_labels)


def _score_checks(t: TaskInput) -> list[Check]:
    """Finite scores, one per label on every row, and one for every true label."""
    sc = label_scores(t)
    out = [Check("score_finite", "score", sc.bad,
                 "the per-label scores hold null, NaN or infinite values",
                 "every example needs a finite score for every label")]
    n, labels = sc.count(), sc.classes
    el, truth = pl.element(), _set_expr("label", t)
    if sc.fields is None:
        out.append(Check(
            "score_length", "score",
            (lambda: n != len(labels)) if labels is not None else (lambda: n != n.max()),
            f"a score list does not hold {len(labels)} scores, one per label in "
            "options.classes" if labels is not None else "the score lists differ in length",
            "give one score per label on every example, in the order of options.classes"))
    if labels is not None:
        shown = ", ".join(labels[:10]) + (" ..." if len(labels) > 10 else "")
        out.append(Check(
            "label_scored", "label", lambda: ~truth.list.eval(el.is_in(labels)).list.all(),
            f"a true label has no score (scored labels: {shown})",
            "give a score for every label, or name the labels with options.classes / "
            "score_columns"))
    else:
        def unscored() -> pl.Expr:
            pos = truth.list.eval(el.cast(pl.Int64, strict=False))
            return pos.list.eval(el.is_null() | (el < 0)).list.any() | (pos.list.max() >= n)

        out.append(Check(
            "label_scored", "label", unscored,
            "a true label has no score: without options.classes the labels are the positions "
            "0..n-1 of the score list",
            "list the labels in score order under 'options: {classes: [...]}'"))
    return out


def _checks(t: TaskInput) -> list[Check]:
    out = []
    if "score" in t.roles:
        out += _score_checks(t)
    for role in ROLES:
        if role not in t.roles:
            continue
        inner = t.schema[role].inner  # type: ignore[attr-defined]
        if inner.is_float():
            out.append(Check(
                f"{role}_labels", role, partial(_not_whole, role),
                f"the {role} sets hold numbers that are not whole, so not labels",
                "labels are integers or strings",
            ))
        if inner == pl.String:
            out.append(Check(
                f"{role}_list_as_text", role, partial(_list_as_text, role),
                f"the {role} sets hold a list written as text (such as [1, 2] or "
                "['a', 'b']), which would count as one label",
                "give each example's labels as a list on every line (JSONL: [\"x\"] for one "
                "label, never \"x\" on some lines and lists on others), or as delimited text "
                "(a|b)",
            ))
    return out


_SCALAR = r"""(?:-?[0-9][0-9.eE+-]*|"[^"]*"|'[^']*'|true|false|null|True|False|None)"""
_LIST_TEXT = rf"^\[\s*(?:{_SCALAR}\s*(?:,\s*{_SCALAR}\s*)*)?\]$"
"""A label that is a list's text: Polars reads a JSONL list among text values as its JSON
text, pandas writes a list into a CSV cell as its repr. ``[draft]`` is a label."""


def _list_as_text(role: str) -> pl.Expr:
    return pl.col(role).list.eval(pl.element().str.contains(_LIST_TEXT)).list.any()


def _not_whole(role: str) -> pl.Expr:
    el = pl.element()
    return pl.col(role).list.eval(el.is_infinite() | (el != el.round())).list.any()


def _normalize(lf: pl.LazyFrame, t: TaskInput) -> pl.LazyFrame:
    """Both sides as sets of label names, and the set sizes every statistic uses:
    ``__inter`` = |L∩P|, ``__true`` = |L|, ``__pred`` = |P| (computed once per example)."""
    lab, pred = pl.col("label"), pl.col("prediction")
    return lf.with_columns([_set_expr(r, t) for r in ROLES]).with_columns(
        lab.list.set_intersection(pred).list.len().cast(F64).alias("__inter"),
        lab.list.len().cast(F64).alias("__true"),
        pred.list.len().cast(F64).alias("__pred"),
    )


TASK = Task(
    name=FAMILY,
    summary="a set of labels per example: true set and predicted set (list column, delimited "
    "text, or one row per id and label)",
    roles=(
        Role("label", "the true labels: a list, delimited text, or one per row (long layout)",
             True, nullable=True, takes=("value", "list")),
        Role("prediction", "the predicted labels, in the same layouts", True, nullable=True,
             takes=("value", "list")),
        Role("score", "per-label scores (auroc, average_precision): a struct or list column "
             "named under columns (a column that merely happens to be called score changes "
             "nothing), or the wide columns named by options.score_columns / score_prefix",
             takes=("list", "struct"), opt_in=True),
    ),
    options=OPTIONS,
    checks=_checks,
    normalize=_normalize,
    reshape=_reshape,
    join_for=_join,
    pack=pack_scores,
)
TASKS = [TASK]
