"""Multiclass classification's metrics: the values from the statistics (:mod:`.stats`) and the
declarations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import polars as pl

from evalcli.errors import InputDataError, MetricError
from evalcli.metrics.base import (
    Context,
    Memo,
    Metric,
    MetricValue,
    Param,
    Params,
    Stat,
    StatValues,
    absent_label,
    memo_of,
)
from evalcli.metrics.binary.calibration import BINNING, Bins, bin_counts, calibration_of
from evalcli.metrics.binary.calibration import PARAMS as CAL_PARAMS
from evalcli.metrics.multiclass.stats import (
    CLASS_SCORES,
    CLASS_VS_REST,
    EPS64,
    OUTSIDE,
    RANKS,
    SUMS,
    TOP_LABEL,
    Counts,
    as_number,
    class_scores,
    class_vs_rest,
    confusion,
    counts_of,
    outside,
    proba,
    score_ranks,
    score_sums,
    top_label,
)
from evalcli.metrics.multiclass.task import FAMILY

F64 = pl.Float64

if TYPE_CHECKING:
    import numpy as np

    from evalcli.uncertainty.intervals import Interval


# --------------------------------------------------------------------------- by-label values

ZERO_DIVISION = Param(
    "zero_division", str, "0",
    "value of a label's ratio when its denominator is 0: 0 or 1 (with a note), or nan (the "
    "label is left out of the average, as scikit-learn's zero_division=np.nan)",
    choices=("0", "1", "nan"),
)
AVERAGE = Param("average", str, "macro",
                "micro (pooled counts), macro (mean over labels) or weighted (mean weighted by "
                "each label's true count)", choices=("micro", "macro", "weighted"))
LABEL = Param("label", str, None, "one class: its own value instead of an average",
              nullable=True)
LABELS = Param("labels", tuple, None,
               "the classes that count (default: every class in truth or predictions); others "
               "are left out of the averages", nullable=True)
BETA = Param("beta", float, 1.0, "weight of recall relative to precision", gt=0)

Ratio = Callable[[Counts, Any, Params], tuple[float, float]]
"""Numerator and denominator of a per-label ratio."""


def _precision(c: Counts, k: Any, p: Params) -> tuple[float, float]:
    return c.tp.get(k, 0.0), c.pred.get(k, 0.0)


def _recall(c: Counts, k: Any, p: Params) -> tuple[float, float]:
    return c.tp.get(k, 0.0), c.true.get(k, 0.0)


def _fbeta(c: Counts, k: Any, p: Params) -> tuple[float, float]:
    b2 = p.get("beta", 1.0) ** 2
    num = (1 + b2) * c.tp.get(k, 0.0)
    return num, num + b2 * c.fn(k) + c.fp(k)


def _fpr(c: Counts, k: Any, p: Params) -> tuple[float, float]:
    fp = c.fp(k)
    return fp, c.total - c.true.get(k, 0.0)


def _ratio_metric(ratio: Ratio, what: str) -> Callable[[StatValues, Params], MetricValue]:
    """A by-label ratio, for one label or averaged micro / macro / weighted."""

    def value(stats: StatValues, params: Params) -> MetricValue:
        c = counts_of(stats)
        zd = params.get("zero_division", "0")
        fallback = None if zd == "nan" else float(zd)
        if c.rows == 0:
            return MetricValue(None, notes=["no rows"])
        if params.get("label") is not None:
            k = c.one(params["label"])
            num, den = ratio(c, k, params)
            one = {"label": k, "support": as_number(c.true.get(k, 0.0)),
                   "numerator": as_number(num), "denominator": as_number(den)}
            if den != 0:
                return MetricValue(num / den, details=one)
            absent = "" if k in c.classes else f"class {k!r} occurs in neither truth nor " \
                "predictions; "
            mv = MetricValue(fallback, details=one, notes=[
                f"{absent}{what} of {k!r} is 0/0 (zero_division={zd})"])
            if absent and (params.get("labels") is None or k not in c.labels(params)):
                raise absent_label("label", params["label"], c.classes, mv,
                                   "name a class that occurs in the data, or list the label "
                                   "set explicitly with the 'labels' parameter")
            return mv
        labels = c.labels(params)
        average = params.get("average", "macro")
        by_label = []
        undefined = []
        for k in labels:
            num, den = ratio(c, k, params)
            v = num / den if den != 0 else fallback
            if den == 0:
                undefined.append(k)
            by_label.append({"label": k, "value": v, "support": as_number(c.true.get(k, 0.0))})
        details: dict[str, Any] = {"average": average, "by_label": by_label}
        notes = []
        if undefined:
            shown = ", ".join(map(repr, undefined[:5])) + (" ..." if len(undefined) > 5 else "")
            treat = "left out of the average" if fallback is None else f"counted as {zd}"
            notes.append(f"{what} is 0/0 for {len(undefined)} label(s) ({shown}): {treat} "
                         f"(zero_division={zd})")
        if average == "micro":
            num = den = 0.0
            for k in labels:
                a, b = ratio(c, k, params)
                num, den = num + a, den + b
            if den == 0:
                return MetricValue(fallback, details, [f"pooled {what} is 0/0 "
                                                       f"(zero_division={zd})"])
            return MetricValue(num / den, details, notes)
        return average_labels(by_label, average, details, notes)

    return value


def average_labels(by_label: list[dict[str, Any]], average: str, details: dict[str, Any],
                    notes: list[str]) -> MetricValue:
    """Macro or weighted mean of the defined per-label values (scikit-learn's _nanaverage)."""
    vals = [(d["value"], float(d["support"])) for d in by_label if d["value"] is not None]
    if not vals:
        return MetricValue(None, details, [*notes, "no label with a defined value"])
    mean = sum(v for v, _ in vals) / len(vals)
    if average == "macro":
        return MetricValue(mean, details, notes)
    support = sum(s for _, s in vals)
    if support == 0:
        return MetricValue(mean, details, [*notes, "no true examples among the labels: the "
                                           "weighted average is the plain mean, as scikit-learn"])
    return MetricValue(sum(v * s for v, s in vals) / support, details, notes)


# --------------------------------------------------------------------------- whole-table values

def _confusion_value(stats: StatValues, params: Params) -> MetricValue:
    c = counts_of(stats)
    labels = c.labels(params)
    m = c.matrix(labels)
    norm = params.get("normalize", "none")
    notes = []
    if norm != "none":
        if norm == "true":
            sums = [sum(row) for row in m]
            m = [[x / s if s else 0.0 for x in row] for row, s in zip(m, sums, strict=True)]
        elif norm == "pred":
            sums = [sum(col) for col in zip(*m, strict=True)] if m else []
            m = [[x / s if s else 0.0 for x, s in zip(row, sums, strict=True)] for row in m]
        else:
            total = sum(map(sum, m))
            m = [[x / total if total else 0.0 for x in row] for row in m]
        notes.append(f"normalized over {'all cells' if norm == 'all' else norm + ' labels'}; "
                     "empty rows or columns are 0, as scikit-learn")
    total = sum(c.cell.get((y, p), 0.0) for y in labels for p in labels)
    details = {"labels": labels, "matrix": [[as_number(x) for x in row] for row in m],
               "rows": "true class", "columns": "predicted class"}
    notes.insert(0, f"{len(labels)}×{len(labels)} matrix in the report's details "
                 "(rows true, columns predicted)")
    return MetricValue(total, details=details, notes=notes)


def _accuracy_value(stats: StatValues, params: Params) -> MetricValue:
    c = counts_of(stats)
    if c.total == 0:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    return MetricValue(sum(c.tp.values()) / c.total)


def _hamming_value(stats: StatValues, params: Params) -> MetricValue:
    c = counts_of(stats)
    if c.total == 0:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    return MetricValue(1 - sum(c.tp.values()) / c.total)


def _kappa_value(stats: StatValues, params: Params) -> MetricValue:
    c = counts_of(stats)
    labels = c.labels(params)
    m = c.matrix(labels)
    n = len(labels)
    rows = [sum(r) for r in m]
    cols = [sum(col) for col in zip(*m, strict=True)] if m else []
    total = sum(rows)
    if total == 0:
        return MetricValue(None, notes=["undefined: no rows among the labels"])
    scheme = params.get("weights", "none")

    def wgt(i: int, j: int) -> float:
        if scheme == "linear":
            return abs(i - j)
        if scheme == "quadratic":
            return (i - j) ** 2
        return 0.0 if i == j else 1.0

    observed = sum(wgt(i, j) * m[i][j] for i in range(n) for j in range(n))
    expected = sum(wgt(i, j) * rows[i] * cols[j] / total for i in range(n) for j in range(n))
    if expected == 0:
        return MetricValue(None, notes=["undefined: truth and predictions agree on a single "
                                        "class only (expected disagreement is 0), as "
                                        "scikit-learn's NaN"])
    return MetricValue(1 - observed / expected)


def _mcc_value(stats: StatValues, params: Params) -> MetricValue:
    c = counts_of(stats)
    s = c.total
    if s == 0:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    correct = sum(c.tp.values())
    t = [c.true.get(k, 0.0) for k in c.classes]
    p = [c.pred.get(k, 0.0) for k in c.classes]
    cov_tp = correct * s - sum(a * b for a, b in zip(t, p, strict=True))
    cov_pp = s * s - sum(b * b for b in p)
    cov_tt = s * s - sum(a * a for a in t)
    if cov_pp * cov_tt == 0:
        return MetricValue(0.0, notes=["truth or predictions hold a single class: reported "
                                       "as 0, as scikit-learn's matthews_corrcoef"])
    return MetricValue(cov_tp / math.sqrt(cov_pp * cov_tt))


def _balanced_value(stats: StatValues, params: Params) -> MetricValue:
    c = counts_of(stats)
    present = [k for k in c.classes if c.true.get(k, 0.0) > 0]
    if not present:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    recalls = [c.tp.get(k, 0.0) / c.true[k] for k in present]
    score = sum(recalls) / len(recalls)
    notes = []
    only_pred = [k for k in c.classes if c.true.get(k, 0.0) == 0]
    if only_pred:
        notes.append(f"{len(only_pred)} predicted class(es) never true "
                     f"({', '.join(map(repr, only_pred[:5]))}) are left out, as scikit-learn")
    if params.get("adjusted", False):
        chance = 1 / len(recalls)
        if chance == 1:
            return MetricValue(None, notes=[*notes, "adjusted: undefined with one true class"])
        score = (score - chance) / (1 - chance)
    return MetricValue(score, details={"by_label": [
        {"label": k, "recall": r} for k, r in zip(present, recalls, strict=True)]}, notes=notes)


# --------------------------------------------------------------------------- score values

def _top_k_arrays(df: pl.DataFrame, k: int, ties: str) -> dict[str, Any] | None:
    """The sums of :func:`_top_k_value` in NumPy, for a bootstrap replicate's table (their
    last digits may differ: another order of addition); ``None`` when a column holds a
    null."""
    import numpy as np
    if any(df[c].has_nulls() for c in ("above", "tied", "classes", "w")):
        return None
    above = df["above"].to_numpy().astype(np.float64)
    tied = df["tied"].to_numpy().astype(np.float64)
    w = df["w"].to_numpy().astype(np.float64)
    if ties == "optimistic":
        hit = (above < k).astype(np.float64)
    elif ties == "pessimistic":
        hit = (above + tied <= k).astype(np.float64)
    else:
        hit = np.clip((k - above) / tied, 0.0, 1.0)
    return {"hits": float(w @ hit), "w": float(w.sum()),
            "classes": int(df["classes"].max()) if df.height else None}  # type: ignore[arg-type]


def _top_k_value(stats: StatValues, params: Params) -> MetricValue:
    df: pl.DataFrame = stats[RANKS]
    k = params["k"]
    ties = params.get("ties", "expected")
    fast = _top_k_arrays(df, k, ties) if getattr(stats, "replicate", False) else None
    if fast is not None:
        return _top_k_of(fast, k)
    above, tied = pl.col("above"), pl.col("tied")
    if ties == "optimistic":
        hit = (above < k).cast(F64)
    elif ties == "pessimistic":
        hit = (above + tied <= k).cast(F64)
    else:
        hit = ((k - above) / tied).clip(0.0, 1.0)
    # rows in a fixed order, one chunk: the sums add in the same order whatever the engine
    df = df.sort("above", "tied", "classes").rechunk()
    row = df.select((pl.col("w") * hit).sum().alias("hits"), pl.col("w").sum().alias("w"),
                    pl.col("classes").max().alias("classes")).row(0, named=True)
    return _top_k_of(row, k)


def _top_k_of(row: dict[str, Any], k: int) -> MetricValue:
    if not row["w"]:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    notes = []
    if row["classes"] is not None and k >= row["classes"]:
        notes.append(f"k={k} is not below the number of classes ({row['classes']}): every "
                     "row is a hit")
    return MetricValue(float(row["hits"]) / float(row["w"]), notes=notes)


def _log_loss_value(stats: StatValues, params: Params) -> MetricValue:
    for key, v in stats.items():
        if key.startswith("multiclass.proba["):
            vals = {c.rsplit(".", 1)[1]: float(x) for c, x in v.items()}
            break
    else:  # pragma: no cover - the engine always provides it
        raise KeyError("multiclass.proba")
    if vals["outside"]:
        raise InputDataError(
            f"log_loss needs probabilities, but {int(vals['outside'])} row(s) hold per-class "
            "scores outside [0, 1] (column 'score')",
            hint="give probabilities (e.g. apply a softmax to the scores), or drop log_loss",
        )
    if not vals["w"]:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    notes = []
    if vals["unnormed"]:
        notes.append(f"{int(vals['unnormed'])} row(s) of probabilities do not sum to 1: used "
                     "as given, as scikit-learn (which warns)")
    return MetricValue(vals["logloss"] / vals["w"], notes=notes)


# --------------------------------------------------------------------------- per-class curves

def _truth_of(df: pl.DataFrame) -> str:
    """The column of a per-class table that says which rows are the scored class's: ``pos``
    (a one-vs-rest table, :func:`~evalcli.metrics.multiclass.stats.class_vs_rest`), else
    ``label`` (the true class)."""
    return "pos" if "pos" in df.columns else "label"


def _positive(df: pl.DataFrame) -> pl.Expr:
    """Whether a row of a per-class table is of the scored class (see :func:`_truth_of`)."""
    return pl.col("pos") if "pos" in df.columns else pl.col("label") == pl.col("class")


def _ordered(df: pl.DataFrame) -> pl.DataFrame:
    """The table without zero-weight rows, in one chunk; sorted when the weights are not whole
    numbers, so that sums of several rows add in one order whatever the engine's row order
    (sums of whole numbers are exact in any order: the sort, the costliest step, is skipped)."""
    df = df.filter(pl.col("w") != 0)
    w = pl.col("w")
    if not df.select((w == w.round()).all()).item():
        df = df.sort("class", _truth_of(df), "s")
    return df.rechunk()


def _per_score(df: pl.DataFrame, pooled: bool = False) -> pl.LazyFrame:
    """Per (class, score of that class), highest first: p = weight of rows of the class,
    q = of the other rows, their running totals tp and fp, and r = tp − p/2 (the weight of
    the class's rows scored above, plus half of those tied). ``pooled``: per score over
    every (row, class) pair, one curve (the micro average's).

    Each key's rows are summed as a slice of the rows sorted in one order (a run id flagged
    sorted): a hash group-by added them in an order that changed from run to run, and
    fractional weights then moved the last digit."""
    w, pos = pl.col("w"), _positive(df)
    keys = ["s"] if pooled else ["class", "s"]
    order = ["s", "class"] if pooled else ["class", "s"]
    run = (pl.col("s") if pooled else pl.struct("class", "s")).rle_id().set_sorted()
    running = [pl.col("p").cum_sum().alias("tp"), pl.col("q").cum_sum().alias("fp")]
    return (df.lazy().sort(*order, _truth_of(df), descending=[c == "s" for c in order]
                           + [False])
            .with_columns(run.alias("_run")).group_by("_run", maintain_order=True)
            .agg(*(pl.col(k).first() for k in keys), (w * pos).sum().alias("p"),
                 (w * ~pos).sum().alias("q"))
            .drop("_run")
            .with_columns(running if pooled else [e.over("class") for e in running])
            .with_columns((pl.col("tp") - pl.col("p") / 2).alias("r")))


P, Q, TP, FP = pl.col("p"), pl.col("q"), pl.col("tp"), pl.col("fp")
PREC_TERM = pl.when(P > 0).then(P * TP / (TP + FP)).otherwise(0.0)


def _curves(df: pl.DataFrame, part: str) -> Any:
    """One-vs-rest and one-vs-one areas from the ordered (class, label, score) table, in
    Polars expressions over it (a loop over the classes only, in the callers).

    For class a, rows sorted by a's score, highest first: r(s) = weight of true-a rows scored
    above s + half of those scored s. AUROC(a vs rows of class l) = Σ_{l rows} w·r(s) /
    (P_a·N_l): the trapezoid of the ROC curve, ties counting 1/2. AP(a) = Σ_s pos_s·tp_s /
    (tp_s + fp_s) / P_a: scikit-learn's step-wise average precision. ``part``: classes (per
    class P, N, Σ q·r and Σ AP terms), pairs (per (class, other true class) Σ w·r) or micro
    (the same sums over one curve of every (row, class) pair).
    """
    w, pos = pl.col("w"), _positive(df)
    if part == "classes":
        q = _per_score(df).group_by("class", maintain_order=True).agg(
            P.sum().alias("P"), Q.sum().alias("N"), (Q * pl.col("r")).sum().alias("roc"),
            PREC_TERM.sum().alias("ap"))
        return {r["class"]: r for r in q.collect(engine="in-memory").iter_rows(named=True)}
    if part == "pairs":
        q = (df.lazy().filter(~pos)
             .join(_per_score(df).select("class", "s", "r"), on=["class", "s"])
             .sort("class", "label", "s")
             .group_by("class", "label", maintain_order=True)
             .agg((w * pl.col("r")).sum().alias("num"), w.sum().alias("N")))
        return {(r["class"], r["label"]): r
                for r in q.collect(engine="in-memory").iter_rows(named=True)}
    q = _per_score(df, pooled=True).select(
        P.sum().alias("P"), Q.sum().alias("N"), (Q * pl.col("r")).sum().alias("roc"),
        PREC_TERM.sum().alias("ap"))
    return q.collect(engine="in-memory").row(0, named=True)


def _codes(col: pl.Series) -> tuple[list[Any], np.ndarray] | None:
    """The distinct values of an integer or text column, ascending (Polars' order), and each
    row's value as an index into them; ``None`` for a null or another type."""
    import numpy as np
    if col.has_nulls():
        return None
    if col.dtype.is_integer():
        uniq, codes = np.unique(col.to_numpy(), return_inverse=True)
        return uniq.tolist(), codes
    if col.dtype != pl.String:
        return None
    # (a text column's codes as a categorical's, then put in the order of the values)
    _, first, at = np.unique(col.cast(pl.Categorical).to_physical().to_numpy(),
                             return_index=True, return_inverse=True)
    found = col.gather(first).to_list()
    order = sorted(range(len(found)), key=found.__getitem__)
    rank = np.empty(len(found), dtype=np.int64)
    rank[order] = np.arange(len(found))
    return [found[i] for i in order], rank[at]


def _coded(df: pl.DataFrame) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray | None
                                      ] | None:
    """A per-class table's classes (and true classes) as arrays: the distinct values of the
    ``class`` and ``label`` columns ascending, each row's class as an index into them,
    whether the row is of that class, and its true class's index (``None`` for a one-vs-rest
    table, which has ``pos`` in place of ``label``); ``None`` when a column holds a null,
    the two differ in type, or are of a type other than integer or text."""
    cls = df.get_column("class")
    if "pos" in df.columns:
        pos = df.get_column("pos")
        got = _codes(cls)
        if got is None or pos.has_nulls():
            return None
        return got[0], got[1], pos.to_numpy(), None
    lab = df.get_column("label")
    if cls.dtype != lab.dtype:
        return None
    both = _codes(pl.concat([cls, lab]))
    if both is None:
        return None
    values, codes = both
    n = cls.len()
    return values, codes[:n], codes[:n] == codes[n:], codes[n:]


class _Runs(NamedTuple):
    """A table's rows sorted by class (all one class for the micro curve) and score, best
    first, and their groups of (class, score): see :func:`_runs`."""

    values: list[Any]
    cls: np.ndarray
    label: np.ndarray | None
    """Each row's true class (``None`` for a one-vs-rest table)."""
    w: np.ndarray
    group: np.ndarray
    """Each row's group."""
    heads: np.ndarray
    """The first group of each class."""
    gcls: np.ndarray
    p: np.ndarray
    q: np.ndarray
    tp: np.ndarray
    fp: np.ndarray


def _runs(df: pl.DataFrame, micro: bool) -> _Runs | None:
    """The groups of (class, score) of :func:`_per_score` (one curve of every row and class:
    ``micro``) in NumPy; ``None`` when the table does not suit (see :func:`_coded`)."""
    import numpy as np
    got = _coded(df)
    if got is None:
        return None
    values, c, pos, lab = got
    s = df.get_column("s").cast(pl.Float64).to_numpy()
    w = df.get_column("w").cast(pl.Float64).to_numpy()
    live = w != 0
    c, pos, s, w = c[live], pos[live], s[live], w[live]
    cls = np.zeros(s.size, dtype=np.int64) if micro else c
    order = np.lexsort((-s, cls))
    cls, c, s, w, pos = cls[order], c[order], s[order], w[order], pos[order]
    if lab is not None:
        lab = lab[live][order]
    new = np.ones(s.size, dtype=bool)
    new[1:] = (cls[1:] != cls[:-1]) | (s[1:] != s[:-1])
    starts = np.flatnonzero(new)
    p = np.add.reduceat(np.where(pos, w, 0.0), starts)
    q = np.add.reduceat(np.where(pos, 0.0, w), starts)
    gcls = cls[starts]
    first = np.ones(gcls.size, dtype=bool)
    first[1:] = gcls[1:] != gcls[:-1]
    heads = np.flatnonzero(first)
    # running totals restarted at each class (whole weights: exact)
    run_p, run_q = np.cumsum(p), np.cumsum(q)
    sizes = np.diff(np.append(heads, gcls.size))
    tp = run_p - np.repeat(run_p[heads] - p[heads], sizes)
    fp = run_q - np.repeat(run_q[heads] - q[heads], sizes)
    return _Runs(values, c, lab, w, np.cumsum(new) - 1, heads, gcls, p, q, tp, fp)


def _curves_arrays(runs: _Runs, part: str) -> Any:
    """:func:`_curves` in NumPy from :func:`_runs`, for a bootstrap replicate's table (a few
    thousand rows at most, a thousand tables: a Polars query costs more to plan than to run
    on each). The same sums in another order: the values agree with :func:`_curves`' to the
    last few digits (the counts and ROC sums exactly, for whole weights)."""
    import numpy as np
    r = runs.tp - runs.p / 2
    if part == "pairs":
        assert runs.label is not None  # (a table of true classes)
        other = runs.cls != runs.label
        k = len(runs.values)
        cell = runs.cls[other] * k + runs.label[other]
        w = runs.w[other]
        num = np.bincount(cell, weights=w * r[runs.group[other]], minlength=k * k)
        tot = np.bincount(cell, weights=w, minlength=k * k)
        return {(runs.values[x // k], runs.values[x % k]): {"num": num[x], "N": tot[x]}
                for x in np.unique(cell).tolist()}
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(runs.p > 0, runs.p * runs.tp / (runs.tp + runs.fp), 0.0)
    sums = [np.add.reduceat(x, runs.heads).tolist() if runs.heads.size else []
            for x in (runs.p, runs.q, runs.q * r, prec)]
    rows = [{"P": a, "N": b, "roc": e, "ap": f} for a, b, e, f in zip(*sums, strict=True)]
    if part == "micro":
        return rows[0] if rows else {"P": 0.0, "N": 0.0, "roc": 0.0, "ap": 0.0}
    return {runs.values[g]: {"class": runs.values[g], **row}
            for g, row in zip(runs.gcls[runs.heads].tolist(), rows, strict=True)}


def curves_of(stats: StatValues, *parts: str, key: str = CLASS_SCORES) -> dict[str, Any]:
    """The table's row count and the ``parts`` of :func:`_curves` (each computed once a run);
    ``key``: the statistic holding the (class, label, s) table, or a one-vs-rest (class, pos,
    s) table (no ``pairs`` then; multilabel's has its own).
    A bootstrap replicate's (``stats.replicate``) come from :func:`_curves_arrays`."""
    table: pl.DataFrame = stats[key]
    memo = memo_of(stats)
    if getattr(stats, "replicate", False):
        fast = _replicate_curves(table, memo, parts)
        if fast is not None:
            return fast
    df = memo.get(table, ("multiclass curves", "table"), lambda: _ordered(table))
    out: dict[str, Any] = {"rows": int(df.get_column("n").sum()) if df.height else 0}
    if out["rows"]:
        for part in parts:
            out[part] = memo.get(table, ("multiclass curves", part),
                                 partial(_curves, df, part))
    return out


def _replicate_curves(table: pl.DataFrame, memo: Memo, parts: Sequence[str]
                      ) -> dict[str, Any] | None:
    """:func:`curves_of` in NumPy (:func:`_curves_arrays`), or ``None`` when the table does
    not suit."""
    w = table.get_column("w").cast(pl.Float64).to_numpy()
    out: dict[str, Any] = {"rows": int(table.get_column("n").to_numpy()[w != 0].sum())}
    if not out["rows"]:
        return out
    for part in parts:
        runs = memo.get(table, ("multiclass runs", part == "micro"),
                        partial(_runs, table, part == "micro"))
        if runs is None:
            return None
        out[part] = memo.get(table, ("multiclass curves arrays", part),
                             partial(_curves_arrays, runs, part))
    return out


def _shown(ks: Sequence[Any]) -> str:
    return ", ".join(map(repr, ks[:5])) + (" ..." if len(ks) > 5 else "")


def ovr(c: dict[str, Any], what: str, average: str, noun: str = "class",
        keys: Callable[[Any], Any] | None = None, zero_ap: bool = False) -> MetricValue:
    """A one-vs-rest average of the per-class areas (``what``: roc or ap). ``noun``: what a
    class is called in the notes; ``keys``: their sort key; ``zero_ap``: average precision
    without a positive is 0 (scikit-learn's) instead of undefined."""
    name = "AUROC" if what == "roc" else "average precision"
    by_label, no_pos, no_neg, zeroed = [], [], [], []
    for k in sorted(c["classes"], key=keys):
        r = c["classes"][k]
        P, N = float(r["P"]), float(r["N"])
        v: float | None = None
        if P <= 0 and what == "ap" and zero_ap:
            v = 0.0
            zeroed.append(k)
        elif P <= 0:
            no_pos.append(k)
        elif what == "roc" and N <= 0:
            no_neg.append(k)
        else:
            v = _area(float(r["roc"]) / (P * N) if what == "roc" else float(r["ap"]) / P)
        by_label.append({"label": k, "value": v, "support": as_number(P)})
    details: dict[str, Any] = {"multi_class": "ovr", "average": average, "by_label": by_label}
    notes: list[str] = []
    if zeroed and average != "micro":
        notes.append(f"{len(zeroed)} {noun}{_es(noun)} with no positive ({_shown(zeroed)}): "
                     "average precision 0, as scikit-learn's (no_positive=zero)")
    if average == "micro":
        m = c["micro"]
        P, N = float(m["P"] or 0.0), float(m["N"] or 0.0)
        if P <= 0 and what == "ap" and zero_ap and N > 0:
            return MetricValue(0.0, details, ["no positive (row, " + noun + ") pair: 0, as "
                                              "scikit-learn's (no_positive=zero)"])
        if P <= 0 or (what == "roc" and N <= 0):
            return MetricValue(None, details, ["undefined: the pooled one-vs-rest pairs hold "
                                               "no positive or no negative"])
        return MetricValue(_area(float(m["roc"]) / (P * N) if what == "roc"
                                 else float(m["ap"]) / P),
                           details)
    es = _es(noun)
    if average == "weighted" and no_pos:
        notes.append(f"{len(no_pos)} {noun}{es} with no true rows ({_shown(no_pos)}) weigh 0 "
                     "in the weighted average, as scikit-learn's")
        no_pos = []
    if no_pos or no_neg:
        why = [f"{noun}{es} {_shown(no_pos)} never true" if no_pos else "",
               f"{noun}{es} {_shown(no_neg)} true on every row" if no_neg else ""]
        return MetricValue(None, details, [
            f"undefined: the one-vs-rest {name} of {' and '.join(x for x in why if x)} is not "
            f"defined (scikit-learn gives NaN or refuses); the defined {noun}{es[1:-1]}' "
            "values are in details.by_label"])
    vals = [(d["value"], float(d["support"])) for d in by_label if d["value"] is not None]
    if not vals or (average == "weighted" and not sum(sw for _, sw in vals)):
        return MetricValue(None, details, [*notes, f"undefined: no {noun} is true on any row"])
    if average == "macro":
        return MetricValue(sum(v for v, _ in vals) / len(vals), details, notes)
    total = sum(sw for _, sw in vals)
    return MetricValue(sum(v * sw for v, sw in vals) / total, details, notes)


def _area(v: float) -> float:
    """An area in [0, 1]: sums of fractional weights may round a perfect curve's to
    1.0000000000000002, which a gate at 1 would read as above it.

    >>> _area(1.0000000000000002), _area(0.25)
    (1.0, 0.25)
    """
    return min(1.0, max(0.0, v))


def _es(noun: str) -> str:
    """The plural ending shown in parentheses: class(es), label(s)."""
    return "(es)" if noun.endswith("s") else "(s)"


def _check_sums(stats: StatValues, metric: str) -> None:
    bad = int(float(stats[SUMS][f"{SUMS}.unnormed"]))
    if bad:
        raise InputDataError(
            f"{metric} needs per-class probabilities that sum to 1 on every row, as "
            f"scikit-learn's roc_auc_score; {bad} row(s) of the score column do not "
            "(|1 − sum| > 1e-8 + 1e-5·sum)",
            hint="give probabilities (e.g. apply a softmax to the scores), or use "
            "average_precision, which takes any scores",
        )


def _auroc_value(stats: StatValues, params: Params) -> MetricValue:
    multi, average = params.get("multi_class", "ovr"), params.get("average", "macro")
    if multi == "ovo" and average == "micro":
        raise MetricError("auroc: average=micro is for multi_class=ovr only (as scikit-learn's "
                          "roc_auc_score)", hint="use average: macro or weighted with ovo")
    c = curves_of(stats, "classes", "micro" if average == "micro" else
                   "pairs" if multi == "ovo" else "classes",
                   key=CLASS_SCORES if multi == "ovo" else CLASS_VS_REST)
    if not c["rows"]:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    _check_sums(stats, "auroc")
    if multi == "ovr":
        return ovr(c, "roc", average)
    present = sorted(k for k, r in c["classes"].items() if float(r["P"]) > 0)
    total = sum(float(c["classes"][k]["P"]) for k in present)
    by_pair: list[dict[str, Any]] = []
    for i, a in enumerate(present):
        for b in present[i + 1:]:
            pa, pb = float(c["classes"][a]["P"]), float(c["classes"][b]["P"])
            ab = float(c["pairs"][(a, b)]["num"]) / (pa * pb)
            ba = float(c["pairs"][(b, a)]["num"]) / (pb * pa)
            by_pair.append({"labels": [a, b], "value": (ab + ba) / 2,
                            "prevalence": (pa + pb) / total})
    details: dict[str, Any] = {"multi_class": "ovo", "average": average, "by_pair": by_pair}
    notes = []
    absent = sorted(k for k in c["classes"] if k not in present)
    if absent:
        notes.append(f"{len(absent)} scored class(es) never true ({_shown(absent)}) make no "
                     "pair, as scikit-learn's")
    if not by_pair:
        return MetricValue(None, details, [*notes, "undefined: fewer than two classes are "
                                           "true on some row"])
    if average == "macro":
        return MetricValue(sum(d["value"] for d in by_pair) / len(by_pair), details, notes)
    return MetricValue(sum(d["value"] * d["prevalence"] for d in by_pair)
                       / sum(d["prevalence"] for d in by_pair), details, notes)


def _ap_value(stats: StatValues, params: Params) -> MetricValue:
    average = params.get("average", "macro")
    c = curves_of(stats, "classes", *(("micro",) if average == "micro" else ()),
                  key=CLASS_VS_REST)
    if not c["rows"]:
        return MetricValue(None, notes=["no rows (or zero total weight)"])
    return ovr(c, "ap", average)


# --------------------------------------------------------------------------- calibration

def _top_label_bins(stats: StatValues, bins: int, strategy: str) -> Bins:
    """The bins of the top label's confidence, once per table and binning (the run's memo)."""
    table: pl.DataFrame = stats[TOP_LABEL]
    return memo_of(stats).get(table, ("top-label bins", bins, strategy),
                              lambda: _top_label(table, bins, strategy))


def _top_label(df: pl.DataFrame, bins: int, strategy: str) -> Bins:
    import numpy as np
    # one fixed order (confidence, then wrong before right): the same sums from any engine
    # (a sort of arrays: a Polars sort per bootstrap replicate cost more to plan than to run)
    if df["conf"].has_nulls() or df["correct"].has_nulls():
        df = df.filter(pl.col("w") != 0).sort("conf", "correct")
        conf = df["conf"].to_numpy()
        w = df["w"].to_numpy().astype(np.float64)
        right = np.where(df["correct"].to_numpy(), w, 0.0)
    else:
        conf, correct = df["conf"].to_numpy(), df["correct"].to_numpy()
        w = df["w"].to_numpy().astype(np.float64)
        order = np.lexsort((correct, conf))
        order = order[w[order] != 0]
        conf, w = conf[order], w[order]
        right = np.where(correct[order], w, 0.0)
    score, at = np.unique(conf, return_inverse=True)
    return bin_counts(score, np.bincount(at, weights=right, minlength=score.size),
                      np.bincount(at, weights=w, minlength=score.size), bins, strategy)


def _classwise_bins(stats: StatValues, bins: int, strategy: str
                    ) -> list[tuple[Any, Bins]]:
    """Each class's bins of its own score (one-vs-rest), in class order; computed once per
    table and binning (the run's memo: ECE and MCE share them, in each replicate too)."""
    table: pl.DataFrame = stats[CLASS_VS_REST]
    return memo_of(stats).get(table, ("classwise bins", bins, strategy),
                              lambda: _classwise(table, bins, strategy))


def _classwise(table: pl.DataFrame, bins: int, strategy: str) -> list[tuple[Any, Bins]]:
    import numpy as np
    # the rows sorted by class, score and label, then the classes' runs of rows as slices of
    # arrays (a bootstrap bins a table per replicate and segment: a query each cost more to
    # plan than to run); the sort of arrays puts the (unique) keys in Polars' order
    coded = _coded(table)
    if coded is not None and not table.get_column("s").has_nulls():
        values, c, pos, lab = coded
        s_all = table.get_column("s").to_numpy()
        w_all = table.get_column("w").cast(pl.Float64).to_numpy()
        order = np.lexsort((pos if lab is None else lab, s_all, c))
        order = order[w_all[order] != 0]
        c, s_all, w_all = c[order], s_all[order], w_all[order]
        pos_all = np.where(pos[order], w_all, 0.0)
        heads = np.flatnonzero(np.diff(c, prepend=-1))
        starts, names, size = heads.tolist(), [values[i] for i in c[heads].tolist()], c.size
    else:
        df = table.filter(pl.col("w") != 0).sort("class", "s", _truth_of(table)).select(
            "class", "s", pl.col("w").cast(pl.Float64),
            _positive(table).fill_null(False).alias("pos"),
            pl.col("class").rle_id().alias("run"))
        s_all, w_all = df.get_column("s").to_numpy(), df.get_column("w").to_numpy()
        pos_all = np.where(df.get_column("pos").to_numpy(), w_all, 0.0)
        starts = np.flatnonzero(np.diff(df.get_column("run").to_numpy(), prepend=-1)).tolist()
        names = [df.get_column("class")[a] for a in starts]
        size = df.height
    out = []
    # (no row of positive weight, as in a segment whose rows all weigh 0: no class)
    for name, a, b in zip(names, starts, [*starts[1:], size][:len(starts)], strict=True):
        w, pos = w_all[a:b], pos_all[a:b]
        score, at = np.unique(s_all[a:b], return_inverse=True)
        out.append((name, bin_counts(score, np.bincount(at, weights=pos, minlength=score.size),
                                     np.bincount(at, weights=w, minlength=score.size),
                                     bins, strategy)))
    return out


def _calibration(kind: str) -> Callable[[StatValues, Params], MetricValue]:
    def value(stats: StatValues, params: Params) -> MetricValue:
        bad = int(float(stats[OUTSIDE][f"{OUTSIDE}.rows"]))
        if bad:
            raise InputDataError(
                f"{kind} needs probabilities, but {bad} row(s) hold per-class scores outside "
                "[0, 1] (column 'score')",
                hint="give probabilities (e.g. apply a softmax to the scores), or drop "
                f"{kind}")
        bins, strategy = int(params["bins"]), str(params["strategy"])
        if params.get("kind", "top_label") == "top_label":
            mv = calibration_of(_top_label_bins(stats, bins, strategy), kind)
            return replace(mv, details={"kind": "top_label", **mv.details})
        per = [(k, calibration_of(t, kind)) for k, t in _classwise_bins(stats, bins, strategy)]
        per = [(k, v) for k, v in per if v.value is not None]
        if not per:
            return MetricValue(None, notes=["no rows (or zero total weight)"])
        by_label = [{"label": k, "value": v.value, **v.details} for k, v in per]
        details: dict[str, Any] = {"kind": "classwise", "by_label": by_label}
        vals = [float(v.value) for _, v in per if v.value is not None]
        if kind == "ece":
            return MetricValue(sum(vals) / len(vals), details)
        i = vals.index(max(vals))  # the first class (in class order) reaching the maximum
        details["label"] = per[i][0]
        return MetricValue(vals[i], details)

    return value


# --------------------------------------------------------------------------- declarations

HARD = frozenset({"prediction", "score"})
SCORE = frozenset({"score"})
PEERS = "scikit-learn (sklearn.metrics) and Spark MLlib's weighted MulticlassMetrics"
COUNTS_NOTE = ("Counts are sums of the weight column (Spark MLlib's weighted MulticlassMetrics, "
               "scikit-learn's sample_weight). The predicted class is the prediction column, "
               "or the class with the highest score when there is none.")


def _confusion_stats(p: Params, c: Context) -> Sequence[Stat]:
    return [confusion(p, c)]


def _ranks_stats(p: Params, c: Context) -> Sequence[Stat]:
    return [score_ranks(p, c)]


def _proba_stats(p: Params, c: Context) -> Sequence[Stat]:
    return [proba(p, c)]


def _auroc_stats(p: Params, c: Context) -> Sequence[Stat]:
    # one-vs-one needs the true class of the rows; one-vs-rest only whether it is the scored
    # class (a table a bootstrap draws per replicate: classes x 2 rows per score, not classes²)
    table = class_scores if p.get("multi_class", "ovr") == "ovo" else class_vs_rest
    return [table(p, c), score_sums(p, c)]


def _class_scores_stats(p: Params, c: Context) -> Sequence[Stat]:
    return [class_vs_rest(p, c)]


def _calibration_stats(p: Params, c: Context) -> Sequence[Stat]:
    main = top_label(p, c) if p.get("kind", "top_label") == "top_label" else class_vs_rest(p, c)
    return [main, outside(p, c)]


CALIBRATION_PARAMS = (
    Param("kind", str, "top_label",
          "top_label: the highest score as the confidence, right when its class is the true "
          "class; classwise: each class's score against that class one-vs-rest, then over "
          "the classes (Kull et al. 2019)", choices=("top_label", "classwise")),
    *CAL_PARAMS,
)
CALIBRATION_NOTE = (
    "kind=top_label (Guo et al. 2017): per row the confidence is the highest score and the "
    "top label its class (the first in class order on a tie, as numpy.argmax; the prediction "
    "column is not used), correct when that class is the true class; the confidences are "
    "binned as binary ece's bins over (correct, confidence). kind=classwise (Kull et al. "
    "2019, classwise-ECE): for each scored class k, the binary calibration of the score of k "
    "against [y = k] over every row, binned per class (quantile edges from that class's "
    "scores). ")


def _calibration_conventions(what: str) -> str:
    return CALIBRATION_NOTE + what + " " + BINNING.replace(
        "Scores must be probabilities", "Per-class scores must be probabilities") + (
        "Weights as scikit-learn's sample_weight. details.kind; top_label: as binary's; "
        "classwise: details.by_label, each class's value with its binary details.")


OVR_AVERAGE = Param("average", str, "macro",
                    "macro (mean over classes), weighted (mean weighted by each class's true "
                    "count) or micro (one curve of every (row, class) pair; one-vs-rest only)",
                    choices=("macro", "weighted", "micro"))
MULTI_CLASS = Param("multi_class", str, "ovr",
                    "ovr: each class against the rest; ovo: each pair of classes (Hand & Till), "
                    "averaged over the pairs", choices=("ovr", "ovo"))
CURVES_NOTE = (
    "Curves of each class's score, the rows sorted highest first, tied scores one step (a "
    "tie counts 1/2 in AUROC). Weights are scikit-learn's sample_weight (every count a sum of "
    "weights; zero-weight rows count as absent). The per-class values are in "
    "details.by_label (one-vs-one: details.by_pair, with each pair's prevalence). ")


def _by_label(name: str, summary: str, formula: str, ratio: Ratio, what: str, *,
              aliases: tuple[str, ...] = (), extra: tuple[Param, ...] = (),
              direction: str = "higher", default_set: bool = True,
              peer: str = PEERS, conventions: str = "", example: str = "") -> Metric:
    return Metric(
        name=name, family=FAMILY, summary=summary, formula=formula,
        direction=direction,  # type: ignore[arg-type]
        needs=(HARD,), stats=_confusion_stats, value=_ratio_metric(ratio, what),
        params=(AVERAGE, LABEL, LABELS, *extra, ZERO_DIVISION),
        conventions=(
            f"By label, {what} of class ℓ treats ℓ as positive and every other class as "
            "negative. average=micro pools the counts of the labels; macro is the mean over "
            "labels (scikit-learn average='macro'); weighted weights each label by its true "
            "count (Spark MLlib's weighted* metrics, scikit-learn average='weighted'). The "
            "labels are every class seen in truth or predictions unless 'labels' lists them; "
            "'label' gives one class's value. The per-label values are in the report's "
            f"details.by_label. When a label's denominator is 0 its value is zero_division (0 "
            "by default, with a note naming the labels), as scikit-learn; Spark MLlib also "
            "uses 0. " + conventions + COUNTS_NOTE),
        peer=peer, aliases=aliases, range=(0.0, 1.0), in_default_set=default_set,
        example=example,
    )


def _table_metric(name: str, summary: str, formula: str, value: Callable[..., MetricValue], *,
                  params: tuple[Param, ...] = (), direction: str = "higher",
                  aliases: tuple[str, ...] = (), conventions: str = "", peer: str = PEERS,
                  rng: tuple[float | None, float | None] = (0.0, 1.0),
                  default_set: bool = True, example: str = "",
                  interval: Callable[..., Interval | None] | None = None) -> Metric:
    return Metric(
        name=name, family=FAMILY, summary=summary, formula=formula,
        direction=direction,  # type: ignore[arg-type]
        needs=(HARD,), stats=_confusion_stats, value=value, params=params,
        conventions=(conventions + " " + COUNTS_NOTE).strip(), peer=peer, aliases=aliases,
        range=rng, in_default_set=default_set, example=example, interval=interval,
        interval_doc="Wilson score interval (method: auto, unweighted rows); else the "
        "bootstrap" if interval is not None else "",
    )


def _accuracy_interval(stats: StatValues, params: Params, level: float, unweighted: bool
                       ) -> Interval | None:
    """Wilson's interval of the share of rows predicted right (unweighted; else ``None``:
    the bootstrap)."""
    from evalcli.uncertainty.intervals import wilson_interval

    if not unweighted:
        return None
    c = counts_of(stats)
    return wilson_interval(sum(c.tp.values()), c.total, level)


METRICS: list[Metric] = [
    _table_metric(
        "confusion_matrix", "weighted counts of (true class, predicted class); the matrix is in "
        "the report's details, the value is its total weight",
        "C[i][j] = Σ w·[y = ℓ_i]·[ŷ = ℓ_j], rows true classes, columns predicted classes",
        _confusion_value,
        params=(LABELS, Param("normalize", str, "none",
                              "divide by the row (true), column (pred) or grand (all) total",
                              choices=("none", "true", "pred", "all"))),
        aliases=("confusion",), rng=(0.0, None),
        conventions="Classes sorted (numbers numerically, strings alphabetically); with "
        "'labels', those classes in that order, and rows whose class is not listed are left "
        "out. details.labels names the rows and columns, details.matrix holds the counts.",
        peer="scikit-learn confusion_matrix; Spark MLlib MulticlassMetrics.confusionMatrix",
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "multiclass", "metrics": ["confusion_matrix"]},
        ...              predictions={"label": ["cat", "dog", "cat", "bird"],
        ...                           "prediction": ["cat", "cat", "dog", "bird"]})
        >>> r.values(), r.metric("confusion_matrix").details["labels"]
        ({'confusion_matrix': 4.0}, ['bird', 'cat', 'dog'])
        >>> r.metric("confusion_matrix").details["matrix"]  # rows true, columns predicted
        [[1, 0, 0], [0, 1, 1], [0, 1, 0]]
        """,
    ),
    _table_metric(
        "accuracy", "share of rows whose predicted class is the true class",
        "Σ w·[ŷ = y] / Σ w", _accuracy_value, interval=_accuracy_interval,
        conventions="Micro-averaged precision and recall over all classes equal accuracy.",
        peer="scikit-learn accuracy_score; Spark MLlib MulticlassMetrics.accuracy",
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multiclass", "metrics": ["accuracy"],
        ...           "options": {"score_prefix": "p_"}},  # no prediction: the best score
        ...          predictions={"label": ["a", "b", "c"], "p_a": [0.6, 0.5, 0.2],
        ...                       "p_b": [0.3, 0.4, 0.2], "p_c": [0.1, 0.1, 0.6]}).values()
        {'accuracy': 0.6666666666666666}
        """,
    ),
    _by_label("precision", "precision by label, averaged micro / macro / weighted",
              "PPV(ℓ) = tp_ℓ / (tp_ℓ + fp_ℓ) = C[ℓ][ℓ] / Σ_i C[i][ℓ]", _precision, "precision",
              aliases=("ppv",), example="""
              >>> from evalcli import evaluate
              >>> r = evaluate({"task": "multiclass", "metrics": ["precision"]},  # macro
              ...              predictions={"label": [0, 1, 2, 2], "prediction": [0, 0, 2, 2]})
              >>> r.values(), r.metric("precision").notes  # (1/2 + 0 + 1) / 3
              ({'precision': 0.5},
               ['precision is 0/0 for 1 label(s) (1): counted as 0 (zero_division=0)'])
              """),
    _by_label("recall", "recall (true positive rate) by label, averaged micro / macro / weighted",
              "TPR(ℓ) = tp_ℓ / (tp_ℓ + fn_ℓ) = C[ℓ][ℓ] / Σ_j C[ℓ][j]", _recall, "recall",
              aliases=("tpr", "sensitivity"), example="""
              >>> from evalcli import evaluate
              >>> evaluate({"task": "multiclass", "metrics": [
              ...     "recall", {"metric": "recall", "average": "weighted"}, "micro_recall"]},
              ...     predictions={"label": [0, 0, 0, 1], "prediction": [0, 0, 1, 1]}).values()
              {'recall': 0.8333333333333333, 'recall[average=weighted]': 0.75,
               'recall[average=micro]': 0.75}
              """),
    _by_label("f1", "F1 by label, averaged micro / macro / weighted",
              "F1(ℓ) = 2·tp_ℓ / (2·tp_ℓ + fp_ℓ + fn_ℓ)", _fbeta, "F1",
              aliases=("f1_score", "f_measure"),
              conventions="F is computed from the counts, so a label with tp = 0 and some "
              "fp or fn has F = 0 (scikit-learn ≥ 1.3; Spark MLlib gives the same). ",
              example="""
              >>> from evalcli import evaluate
              >>> evaluate({"task": "multiclass", "metrics": [{"metric": "f1", "label": "dog"}]},
              ...          predictions={"label": ["cat", "dog", "cat", "bird"],
              ...                       "prediction": ["cat", "dog", "dog", "bird"]}).values()
              {'f1[label=dog]': 0.6666666666666666}
              """),
    _by_label("fbeta", "F-beta by label, averaged micro / macro / weighted",
              "F_β(ℓ) = (1+β²)·tp_ℓ / ((1+β²)·tp_ℓ + β²·fn_ℓ + fp_ℓ)", _fbeta, "F-beta",
              aliases=("f_beta", "fbeta_score"), extra=(BETA,), default_set=False,
              conventions="F is computed from the counts (scikit-learn ≥ 1.3). ",
              example="""
              >>> from evalcli import evaluate
              >>> evaluate({"task": "multiclass",
              ...           "metrics": [{"metric": "fbeta", "beta": 0.5, "average": "weighted"}]},
              ...          predictions={"label": [0, 0, 0, 1, 2],
              ...                       "prediction": [0, 1, 1, 1, 2]}).values()
              {'fbeta[average=weighted,beta=0.5]': 0.7054945054945054}
              """),
    _by_label("fpr", "false positive rate by label, averaged micro / macro / weighted",
              "FPR(ℓ) = fp_ℓ / (fp_ℓ + tn_ℓ), tn_ℓ = rows neither true nor predicted ℓ", _fpr,
              "FPR", direction="lower", aliases=("false_positive_rate",), default_set=False,
              peer="Spark MLlib MulticlassMetrics.falsePositiveRate / weightedFalsePositiveRate",
              example="""
              >>> from evalcli import evaluate
              >>> evaluate({"task": "multiclass", "metrics": ["fpr"]},  # (0 + 2/4 + 0) / 3
              ...          predictions={"label": [0, 0, 0, 1, 2],
              ...                       "prediction": [0, 1, 1, 1, 2]}).values()
              {'fpr': 0.16666666666666666}
              """),
    _table_metric(
        "cohen_kappa", "Cohen's kappa: agreement of predictions with truth beyond chance",
        "κ = 1 − Σ W_ij·C_ij / Σ W_ij·E_ij, E_ij = row_i·col_j / N, W = 1 − I (or |i−j|, "
        "(i−j)²)", _kappa_value,
        params=(LABELS, Param("weights", str, "none",
                              "disagreement weights: none, linear |i−j| or quadratic (i−j)² "
                              "over the classes in order", choices=("none", "linear",
                                                                     "quadratic"))),
        aliases=("kappa", "cohen_kappa_score"), rng=(-1.0, 1.0),
        conventions="Classes sorted, or as listed in 'labels' (their order sets i−j for "
        "linear and quadratic weights). Undefined (with a note) when the expected "
        "disagreement is 0, as scikit-learn (NaN).",
        peer="scikit-learn cohen_kappa_score",
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multiclass", "metrics": [
        ...     "cohen_kappa", {"metric": "cohen_kappa", "weights": "quadratic"}]},
        ...     predictions={"label": [1, 2, 3, 3], "prediction": [1, 3, 3, 2]}).values()
        {'cohen_kappa': 0.19999999999999996,
         'cohen_kappa[weights=quadratic]': 0.6363636363636364}
        """,
    ),
    _table_metric(
        "mcc", "Matthews correlation coefficient (multiclass, Gorodkin's R_K)",
        "(c·s − Σ t_k·p_k) / √((s² − Σ p_k²)·(s² − Σ t_k²)); c correct, s total, t_k true and "
        "p_k predicted counts", _mcc_value, aliases=("matthews_corrcoef",), rng=(-1.0, 1.0),
        conventions="0 with a note when truth or predictions hold a single class, as "
        "scikit-learn's matthews_corrcoef.",
        peer="scikit-learn matthews_corrcoef",
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multiclass", "metrics": ["mcc"]},
        ...          predictions={"label": [0, 1, 2, 2], "prediction": [0, 2, 2, 2]}).values()
        {'mcc': 0.6454972243679028}
        """,
    ),
    _table_metric(
        "balanced_accuracy", "mean recall over the classes present in the truth",
        "(1/|K|) Σ_{k∈K} tp_k / true_k over classes K with true_k > 0; adjusted: "
        "(score − 1/|K|) / (1 − 1/|K|)", _balanced_value,
        params=(Param("adjusted", bool, False, "rescale so chance scores 0 and perfect 1"),),
        conventions="Classes that are predicted but never true are left out (with a note), "
        "as scikit-learn's balanced_accuracy_score.",
        peer="scikit-learn balanced_accuracy_score",
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "multiclass", "metrics": ["balanced_accuracy"]},
        ...              predictions={"label": [0, 0, 1, 1], "prediction": [0, 2, 1, 1]})
        >>> r.values(), r.metric("balanced_accuracy").notes  # (1/2 + 1) / 2
        ({'balanced_accuracy': 0.75},
         ['1 predicted class(es) never true (2) are left out, as scikit-learn'])
        """,
    ),
    _table_metric(
        "hamming_loss", "share of rows whose predicted class is wrong (1 − accuracy)",
        "Σ w·[ŷ ≠ y] / Σ w", _hamming_value, direction="lower", default_set=False,
        aliases=("hamming", "zero_one_loss"),
        peer="Spark MLlib MulticlassMetrics.hammingLoss; scikit-learn hamming_loss",
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multiclass", "metrics": ["hamming_loss"],
        ...           "columns": {"weight": "w"}},  # the wrong row weighs 2 of 4
        ...          predictions={"label": ["a", "b", "c"], "prediction": ["a", "b", "b"],
        ...                       "w": [1, 1, 2]}).values()
        {'hamming_loss': 0.5}
        """,
    ),
    Metric(
        "top_k_accuracy", FAMILY, "share of rows whose true class is among the k best scored",
        "Σ w·hit_k / Σ w; hit_k = [#{classes scored above the true class} < k], ties by "
        "'ties'", "higher", (SCORE,), _ranks_stats, _top_k_value,
        params=(Param("k", int, 2, "how many of the best-scored classes count", ge=1),
                Param("ties", str, "expected",
                      "classes scored equal to the true class: expected (the hit chance under "
                      "a random order), optimistic (the true class first) or pessimistic (last)",
                      choices=("expected", "optimistic", "pessimistic"))),
        conventions="Needs per-class scores (any real numbers; probabilities are not "
        "required). Without tied scores all three tie rules agree with scikit-learn's "
        "top_k_accuracy_score, which breaks ties by class order instead. k at or above the "
        "number of classes gives 1, with a note.",
        peer="scikit-learn top_k_accuracy_score", aliases=("top_k", "topk_accuracy"),
        cutoff="k", range=(0.0, 1.0),
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multiclass", "options": {"score_prefix": "p_"}, "metrics": [
        ...     "top_k_accuracy@1", {"metric": "top_k_accuracy@1", "ties": "optimistic"}]},
        ...     predictions={"label": ["a", "c"], "p_a": [0.5, 0.2], "p_b": [0.5, 0.3],
        ...                  "p_c": [0.0, 0.5]}).values()  # a ties b: a hit half the time
        {'top_k_accuracy@1': 0.75, 'top_k_accuracy@1[ties=optimistic]': 1.0}
        """,
    ),
    Metric(
        "log_loss", FAMILY, "mean negative log-probability of the true class",
        "−Σ w·log clip(p_{y}, eps, 1−eps) / Σ w", "lower", (SCORE,), _proba_stats,
        _log_loss_value,
        params=(Param("eps", float, EPS64, "clipping of probabilities away from 0 and 1",
                      gt=0, lt=0.5),),
        conventions="Scores must be probabilities in [0, 1] (an error otherwise); rows are "
        "used as given when they do not sum to 1 (a note counts them), as scikit-learn, which "
        "only warns. Clipped at float64 machine epsilon by default, as scikit-learn's log_loss.",
        peer="scikit-learn log_loss; Spark MLlib MulticlassMetrics.logLoss",
        aliases=("logloss", "cross_entropy"), range=(0.0, None),
        example="""
        >>> from evalcli import evaluate
        >>> r = evaluate({"task": "multiclass", "metrics": ["log_loss"],
        ...               "options": {"classes": ["a", "b", "c"]}},  # the list's order
        ...              predictions={"label": ["a", "c"],
        ...                           "score": [[0.7, 0.2, 0.1], [0.2, 0.2, 0.5]]})
        >>> r.values(), r.metric("log_loss").notes  # (−log 0.7 − log 0.5) / 2
        ({'log_loss': 0.5249110622493389},
         ['1 row(s) of probabilities do not sum to 1: used as given, as scikit-learn
           (which warns)'])
        """,
    ),
    Metric(
        "auroc", FAMILY, "area under the ROC curve from per-class scores, one-vs-rest or "
        "one-vs-one, averaged",
        "ovr: AUC_ℓ = P(s_ℓ(x⁺) > s_ℓ(x⁻)) + ½·P(tie), x⁺ of class ℓ, x⁻ of any other; "
        "macro (1/K)·Σ AUC_ℓ, weighted Σ n_ℓ·AUC_ℓ / Σ n_ℓ, micro one curve of all (row, class) "
        "pairs. ovo: A(a,b) = (AUC(a|b) + AUC(b|a)) / 2 over rows of a and b; macro mean over "
        "pairs, weighted by the pairs' prevalence (n_a + n_b) / n",
        "higher", (SCORE,), _auroc_stats, _auroc_value,
        params=(MULTI_CLASS, OVR_AVERAGE),
        conventions=CURVES_NOTE + "As scikit-learn's roc_auc_score, the scores must be "
        "probabilities summing to 1 on each row (numpy.allclose): otherwise exit 2 naming the "
        "rows. One-vs-rest: a scored class never true (or one true on every row) has no "
        "AUROC: the macro average is then undefined with a note (scikit-learn: NaN, or an "
        "error without 'labels'), the weighted average gives such a class weight 0 as "
        "scikit-learn does. One-vs-one pairs the classes true on some row (a scored class "
        "never true makes no pair, with a note), as scikit-learn. average=micro with ovo is "
        "refused (exit 2). Weights with ovo: scikit-learn refuses sample_weight there; evalcli "
        "computes each pair's AUROC from the weights and weighs pairs by their weighted "
        "prevalence (with whole-number weights, the same as repeating rows).",
        peer="scikit-learn roc_auc_score(multi_class=ovr|ovo, average=macro|weighted|micro)",
        aliases=("roc_auc", "auc"), range=(0.0, 1.0), in_default_set=False,
        example="""
        >>> from evalcli import evaluate
        >>> rows = {"label": ["a", "b", "c", "a"], "p_a": [0.6, 0.3, 0.2, 0.3],
        ...         "p_b": [0.3, 0.4, 0.3, 0.3], "p_c": [0.1, 0.3, 0.5, 0.4]}
        >>> r = evaluate({"task": "multiclass", "options": {"score_prefix": "p_"}, "metrics": [
        ...     "auroc", {"metric": "auroc", "multi_class": "ovo"}]}, predictions=rows)
        >>> r.values()
        {'auroc': 0.9583333333333334, 'auroc[multi_class=ovo]': 0.9583333333333334}
        >>> [(d["label"], d["value"]) for d in r.metric("auroc").details["by_label"]]
        [('a', 0.875), ('b', 1.0), ('c', 1.0)]
        >>> # a: the second a's 0.3 ties b's 0.3, half a pair: (2 + 1.5) / 4 = 0.875
        """,
    ),
    Metric(
        "average_precision", FAMILY, "average precision from per-class scores, one-vs-rest, "
        "averaged", "AP_ℓ = Σ_n (R_n − R_{n−1})·P_n over the distinct thresholds of s_ℓ, class ℓ "
        "positive; macro (1/K)·Σ AP_ℓ, weighted Σ n_ℓ·AP_ℓ / Σ n_ℓ, micro one curve of all "
        "(row, class) pairs",
        "higher", (SCORE,), _class_scores_stats, _ap_value, params=(OVR_AVERAGE,),
        conventions=CURVES_NOTE + "Any real scores (probabilities are not required), as "
        "scikit-learn's average_precision_score on one-hot truth. A scored class never true "
        "has no AP: the macro average is then undefined with a note (scikit-learn refuses "
        "a class missing from y_true), the weighted average gives it weight 0.",
        peer="scikit-learn average_precision_score (one-hot y_true, average=macro|weighted|"
        "micro)",
        aliases=("ap",), range=(0.0, 1.0), in_default_set=False,
        example="""
        >>> from evalcli import evaluate
        >>> evaluate({"task": "multiclass", "metrics": [
        ...     "average_precision", {"metric": "average_precision", "average": "micro"}]},
        ...     predictions={"label": [0, 1, 2, 1], "score": [[.5, .3, .2], [.5, .4, .1],
        ...                                                   [.2, .2, .6], [.1, .8, .1]]}
        ...     ).values()  # class 0: rows 0 and 1 tie at 0.5, one of them true: AP 1/2
        {'average_precision': 0.8333333333333334,
         'average_precision[average=micro]': 0.8875}
        """,
    ),
    Metric(
        "ece", FAMILY, "expected calibration error from per-class probabilities: top-label "
        "(of the predicted class's confidence) or classwise (mean over the classes)",
        "top_label: Σ_b (W_b / W)·|conf̄_b − acc_b| over the bins of the top score, acc_b the "
        "weighted share of rows whose top class is true; classwise: (1/K)·Σ_k ECE_k, ECE_k "
        "the binary ECE of the score of class k against [y = k]",
        "lower", (SCORE,), _calibration_stats, _calibration("ece"), params=CALIBRATION_PARAMS,
        conventions=_calibration_conventions(
            "Classwise ECE is the unweighted mean over the K scored classes."),
        peer="top_label: ECE of Guo et al. 2017 over scikit-learn's calibration_curve bins of "
        "(correct, confidence); classwise: the mean of the per-class calibration_curve ECEs "
        "(Kull et al. 2019)",
        aliases=("expected_calibration_error",), range=(0.0, 1.0), in_default_set=False,
        example="""
        >>> from evalcli import evaluate
        >>> rows = {"label": [0, 1, 1, 2], "score": [[.7, .2, .1], [.6, .3, .1],
        ...                                          [.1, .8, .1], [.2, .2, .6]]}
        >>> evaluate({"task": "multiclass", "metrics": [
        ...     {"metric": "ece", "bins": 2}, {"metric": "ece", "bins": 2, "kind": "classwise"}]},
        ...     predictions=rows).values()  # top-label: one bin (0.5, 1], mean 0.675, 3/4 right
        {'ece[bins=2]': 0.07499999999999996, 'ece[bins=2,kind=classwise]': 0.15}
        >>> # classwise: class 0 gaps 0.15 and 0.15, class 1 (3·0.1 + 0.2)/4, class 2 0.175
        """,
    ),
    Metric(
        "mce", FAMILY, "maximum calibration error from per-class probabilities: top-label or "
        "classwise (the largest over the classes)",
        "top_label: max_b |conf̄_b − acc_b| over the non-empty bins of the top score; "
        "classwise: max_k MCE_k = the largest gap over every (class, bin)",
        "lower", (SCORE,), _calibration_stats, _calibration("mce"), params=CALIBRATION_PARAMS,
        conventions=_calibration_conventions(
            "Classwise MCE is the maximum over the classes of each class's binary MCE, that "
            "is the largest gap of any (class, bin); details.label names the first class "
            "(in class order) reaching it."),
        peer="top_label: MCE of Guo et al. 2017 over scikit-learn's calibration_curve bins of "
        "(correct, confidence); classwise: the maximum of the per-class calibration_curve MCEs",
        aliases=("maximum_calibration_error",), range=(0.0, 1.0), in_default_set=False,
        example="""
        >>> from evalcli import evaluate
        >>> rows = {"label": [0, 1, 1, 2], "score": [[.7, .2, .1], [.6, .3, .1],
        ...                                          [.1, .8, .1], [.2, .2, .6]]}
        >>> r = evaluate({"task": "multiclass", "metrics": [
        ...     {"metric": "mce", "bins": 2}, {"metric": "mce", "bins": 2, "kind": "classwise"}]},
        ...     predictions=rows)
        >>> r.values()
        {'mce[bins=2]': 0.07499999999999996, 'mce[bins=2,kind=classwise]': 0.4}
        >>> r.metric("mce[bins=2,kind=classwise]").details["label"]  # (0.5, 1]: 0.6, true
        2
        """,
    ),
]
