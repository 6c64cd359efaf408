"""Multilabel classification's statistics (one pass, Polars list expressions, no per-example
Python):

- ``multilabel.examples``: weighted sums over examples of ``|L∩P|``, ``|L|``, ``|P|``, the
  per-example ratios (precision, recall, Jaccard) and how many examples leave each undefined,
  exact matches and ``|L| + |P| − 2|L∩P|``;
- ``multilabel.fbeta[β]``: the weighted sum of per-example F-beta;
- ``multilabel.by_label``: per label, the weighted true positives, true and predicted counts
  (and unweighted counts, so a label seen only in zero-weight rows still counts).

All of them combine by adding.
"""

from __future__ import annotations

from functools import partial

import polars as pl

from evalcli.metrics.base import AggStat, Context, FrameStat, Params
from evalcli.metrics.stats import (
    WEIGHTED_TOP,
    CombineOp,
    exact_sum,
    is_weighted,
    merge_exact,
    sum_by,
    weight_sum,
)

F64 = pl.Float64


EXAMPLES = "multilabel.examples"
BY_LABEL = "multilabel.by_label"
EXAMPLE_COLUMNS = ("w", "rows", "inter", "true", "pred", "prec", "prec_undef", "prec_undef_n",
                   "rec", "rec_undef", "rec_undef_n", "jac", "both_empty", "both_empty_n",
                   "exact", "xor")


def _sizes() -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """|L∩P|, |L| and |P| of each example (columns the task's normalisation adds)."""
    return pl.col("__inter"), pl.col("__true"), pl.col("__pred")


def _ratio_sum(x: pl.Expr, name: str, weighted: bool) -> list[pl.Expr]:
    """Σ w·ratio: an exact sum (the ratios are in [0, 1])."""
    if weighted:
        return exact_sum(pl.col("weight") * x, name, top=WEIGHTED_TOP, limbs=4)
    return exact_sum(x, name, top=0)


def examples(params: Params, ctx: Context) -> AggStat:
    """Per-example sums: sizes, ratios (0 where undefined) and the weight where undefined.

    Sums of ratios are exact sums; sums of weights too when there is a weight column (else
    they are counts, exact as floats)."""
    w = pl.col("weight")
    weighted = is_weighted(ctx)
    ratios = ("prec", "rec", "jac")
    counted = ("rows", "prec_undef_n", "rec_undef_n", "both_empty_n")

    def exprs() -> list[pl.Expr]:
        inter, nl, np_ = _sizes()
        union = nl + np_ - inter

        def ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
            return pl.when(den > 0).then(num / den).otherwise(0.0)

        weights = {
            "w": w,
            "inter": w * inter,
            "true": w * nl,
            "pred": w * np_,
            "prec_undef": w * (np_ == 0),
            "rec_undef": w * (nl == 0),
            "both_empty": w * (union == 0),
            "exact": w * ((inter == nl) & (inter == np_)),
            "xor": w * (nl + np_ - 2 * inter),
        }
        counts = {
            "rows": pl.len().cast(F64),
            "prec_undef_n": (np_ == 0).sum().cast(F64),
            "rec_undef_n": (nl == 0).sum().cast(F64),
            "both_empty_n": (union == 0).sum().cast(F64),
        }
        out = [e.alias(f"{EXAMPLES}.{c}") for c, e in counts.items()]
        out += [e for c, x in weights.items()
                for e in weight_sum(x, f"{EXAMPLES}.{c}", weighted)]
        out += [e for c, x in (("prec", ratio(inter, np_)), ("rec", ratio(inter, nl)),
                               ("jac", ratio(inter, union)))
                for e in _ratio_sum(x, f"{EXAMPLES}.{c}", weighted)]
        return out

    def op(c: str) -> CombineOp:
        return "sum" if c in counted or (c not in ratios and not weighted) else "exact_sum"

    return AggStat(EXAMPLES, exprs, {f"{EXAMPLES}.{c}": op(c) for c in EXAMPLE_COLUMNS})


def fbeta_sum(params: Params, ctx: Context) -> AggStat:
    """Σ w·(1+β²)|L∩P| / (β²|L| + |P|) over the examples where it is defined (exact)."""
    b2 = float(params.get("beta", 1.0)) ** 2
    key = f"multilabel.fbeta[beta={params.get('beta', 1.0)!r}]"
    weighted = is_weighted(ctx)

    def exprs() -> list[pl.Expr]:
        inter, nl, np_ = _sizes()
        den = b2 * nl + np_
        f = pl.when(den > 0).then((1 + b2) * inter / den).otherwise(0.0)
        return _ratio_sum(f, f"{key}.f", weighted)

    return AggStat(key, exprs, {f"{key}.f": "exact_sum"})


def _by_label_build(lf: pl.LazyFrame, keys: list[str], weighted: bool = False
                    ) -> pl.LazyFrame:
    base = lf.select(*keys, "weight", "label", "prediction",
                     pl.col("label").list.set_intersection("prediction").alias("__tp"))
    parts = []
    for col, name in (("label", "true"), ("prediction", "pred"), ("__tp", "tp")):
        part = (base.select(*keys, "weight", pl.col(col).alias("class")).explode("class")
                .drop_nulls("class").group_by([*keys, "class"])
                .agg(*weight_sum(pl.col("weight"), name, weighted),
                     pl.len().cast(pl.Int64).alias(f"{name}_n")))
        parts.append(part)
    both = pl.concat(parts, how="diagonal")
    columns = both.collect_schema().names()
    counts = [pl.col(c).sum() for c in ("true_n", "pred_n", "tp_n")]
    if not weighted:
        return both.group_by([*keys, "class"]).agg(
            *(pl.col(c).sum() for c in ("true", "pred", "tp")), *counts)
    return both.group_by([*keys, "class"]).agg(
        *(e for name in ("true", "pred", "tp") for e in merge_exact(columns, name)), *counts)


def by_label(params: Params, ctx: Context) -> FrameStat:
    """Per label: weighted true positives, true and predicted counts (and row counts); the
    weights add exactly."""
    return FrameStat(BY_LABEL, partial(_by_label_build, weighted=is_weighted(ctx)),
                     partial(sum_by, by=["class"]))
