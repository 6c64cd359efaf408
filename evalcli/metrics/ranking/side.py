"""The side inputs of the beyond-accuracy metrics (task options naming files, scanned by the
engine into :attr:`Context.frames`) and the item similarity derived from them.

- ``items_file`` (item): the catalog; ``popularity_file`` (item, probability or count);
- ``item_features_file`` (item, features): cosine of feature vectors;
- ``similarity_file`` (item_a, item_b, similarity): a given table;
- ``train_file`` (user or query, item, optional relevance): the training interactions, from
  which come each item's interaction count (novelty's and ARP's popularity, the catalog) and
  the items' co-occurrence similarity, the cosine of their co-occurrence counts (Zhang et al.,
  Auralist, WSDM 2012; recommenders' ``item_sim_measure="item_cooccurrence_count"``):
  ``sim(a, b) = |U_a ∩ U_b| / (√|U_a| · √|U_b|)`` with ``U_i`` the users who interacted with i.

>>> train = pl.LazyFrame({"query": [1, 1, 1, 2, 2, 3, 3, 3], "item": [1, 2, 4, 3, 4, 3, 4, 5]})
>>> sim = cooccurrence(train, pl.LazyFrame({"item": [3]})).sort("item_b").collect()
>>> [(b, round(s, 5)) for b, s in sim.select("item_b", "similarity").rows()]
[(3, 1.0), (4, 0.8165), (5, 0.70711)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from evalcli.errors import MetricError, clip
from evalcli.metrics.base import Context, Param, Params
from evalcli.metrics.ranking.frame import F64, IT, Q
from evalcli.metrics.stats import in_order_sum

c = pl.col
TRAIN = "train_file"
USER_COLUMNS = ("query", "user")
"""The training file's user column: ``query`` (the task's own name) or ``user``."""
OPTION = {"features": "item_features_file", "table": "similarity_file",
          "cooccurrence": TRAIN}
"""The option each similarity source reads, in the order ``similarity: auto`` tries them."""

SIMILARITY = Param(
    "similarity", str, "auto",
    "where the item similarity comes from: features (cosine of the item_features_file "
    "vectors, as recommenders' item_sim_measure='item_feature_vector'), table (the "
    "similarity_file), cooccurrence (cosine of the items' co-occurrence counts in the "
    "train_file, as recommenders' default item_sim_measure='item_cooccurrence_count'), or "
    "auto: the first of item_features_file, similarity_file, train_file that is set",
    choices=("auto", *OPTION),
)


def item_dtype(lf: pl.LazyFrame) -> pl.DataType:
    return lf.collect_schema()[IT]


def side_columns(lf: pl.LazyFrame, side: pl.LazyFrame, cols: Sequence[str], what: str,
                 option: str) -> pl.LazyFrame:
    """``side`` with its item column typed as the run's; a clear error when ``cols`` are
    missing."""
    _require(side, cols, what, option)
    return side.with_columns(c(IT).cast(item_dtype(lf)))


def _require(side: pl.LazyFrame, cols: Sequence[str], what: str, option: str) -> None:
    """A clear error when the side file lacks one of ``cols``."""
    names = side.collect_schema().names()
    missing = [col for col in cols if col not in names]
    if missing:
        raise MetricError(
            f"the {what} file ({option}) has no column {', '.join(repr(m) for m in missing)}; "
            f"its columns: {', '.join(names[:20])}",
            hint=f"give the {what} file the columns {', '.join(cols)}",
        )


def table_pairs(lf: pl.LazyFrame, table: pl.LazyFrame) -> pl.LazyFrame:
    """The similarity file, checked, its items typed as the run's."""
    _require(table, ("item_a", "item_b", "similarity"), "similarity", "similarity_file")
    dtype = item_dtype(lf)
    return table.with_columns(c("item_a").cast(dtype), c("item_b").cast(dtype))


def features_long(lf: pl.LazyFrame, side: pl.LazyFrame) -> pl.LazyFrame:
    """Unit feature vectors in long form: item, dim, value."""
    schema = side.collect_schema()
    if "features" in schema and isinstance(schema["features"], pl.List | pl.Array):
        feats = side_columns(lf, side, [IT, "features"], "item features", "item_features_file")
        long = feats.select(IT, c("features").cast(pl.List(F64))).with_columns(
            pl.int_ranges(0, c("features").list.len()).alias("dim")
        ).explode(["features", "dim"]).rename({"features": "value"})
    else:
        numeric = [n for n, t in schema.items() if n != IT and t.is_numeric()]
        if not numeric:
            raise MetricError(
                "the item features file (item_features_file) has no list column 'features' "
                "and no numeric columns",
                hint="give one row per item: item, features (a list of numbers)")
        feats = side_columns(lf, side, [IT], "item features", "item_features_file")
        long = feats.select(IT, *(c(n).cast(F64) for n in numeric)).unpivot(
            index=IT, variable_name="dim", value_name="value"
        ).with_columns(c("dim").rank("dense").cast(pl.Int64))
    norm = in_order_sum(c("value") ** 2, "dim").over(IT).sqrt()
    return long.with_columns((c("value") / norm).alias("value")).filter(norm > 0)


# --------------------------------------------------------------------------- training file

def train_pairs(ctx: Context, lf: pl.LazyFrame, metric: str) -> pl.LazyFrame:
    """The training interactions: one row per distinct (query, item), typed as the run's
    query and item columns (read once per run). Rows with a relevance column's value <= 0 are
    not interactions; a null relevance is one (as the truth's)."""
    side = ctx.frames.get(TRAIN)
    if side is None:
        raise MetricError(
            f"{metric} needs the training interactions",
            hint=f"set options: {{{TRAIN}: PATH}} (columns user or query, item, optionally "
            "relevance)")
    schema = lf.collect_schema()
    path = str(ctx.options.get(TRAIN))
    return ctx.memo.get(side, ("train", str(schema[Q]), str(schema[IT])),
                        lambda: _load_train(side, schema[Q], schema[IT], path))


def _load_train(side: pl.LazyFrame, q_type: pl.DataType, it_type: pl.DataType, path: str
                ) -> pl.LazyFrame:
    where = f"the training file ({TRAIN}: {clip(path, 200)})"
    hint = "give the training file the columns user (or query) and item, optionally relevance"
    try:
        names = side.collect_schema().names()
    except pl.exceptions.PolarsError as err:
        raise MetricError(f"{where} cannot be read: {clip(str(err), 300)}", hint=hint) from None
    user = next((n for n in USER_COLUMNS if n in names), None)
    missing = [n for n, ok in (("user (or query)", user is not None), (IT, IT in names))
               if not ok]
    if missing:
        raise MetricError(f"{where} has no column {' and no column '.join(missing)}; its "
                          f"columns: {clip(', '.join(names[:20]), 300)}", hint=hint)
    assert user is not None
    cols = [user, IT, *(["relevance"] if "relevance" in names else [])]
    try:
        df = side.select(cols).collect()
    except pl.exceptions.PolarsError as err:
        raise MetricError(f"{where} cannot be read: {clip(str(err), 300)}", hint=hint) from None
    if "relevance" in cols:
        if not df.schema["relevance"].is_numeric():
            raise MetricError(f"{where}: column 'relevance' holds {df.schema['relevance']} "
                              "values, not numbers", hint="give numbers, or drop the column")
        df = df.filter(c("relevance").is_null() | (c("relevance") > 0))
    for col, want, role in ((user, q_type, "query"), (IT, it_type, "item")):
        nulls = df[col].null_count()
        if nulls:
            raise MetricError(f"{where}: {nulls} row(s) with a null {col}",
                              hint="drop those rows or fill them")
        typed = df[col].cast(want, strict=False)
        bad = df.filter(typed.is_null())
        if bad.height:
            raise MetricError(
                f"{where}: column '{col}' holds {df.schema[col]} values such as "
                f"{clip(repr(bad[col][0]), 60)} that are not {want} as the {role} ids of the "
                f"predictions", hint=f"write the {role} ids as the predictions do")
        df = df.with_columns(typed.alias(col))
    out = df.select(c(user).alias(Q), IT).unique(maintain_order=True)
    if out.height == 0:
        raise MetricError(f"{where} holds no interaction",
                          hint="give it the users' past interactions, one row each")
    return out.lazy()


def item_counts(train: pl.LazyFrame) -> pl.LazyFrame:
    """Item -> the number of users who interacted with it in the training file."""
    return train.group_by(IT).agg(pl.len().cast(F64).alias("count"))


def cooccurrence(train: pl.LazyFrame, items: pl.LazyFrame, to: pl.LazyFrame | None = None
                 ) -> pl.LazyFrame:
    """The co-occurrence cosine ``sim(a, b)`` for every ``a`` of ``items`` and every ``b``
    (of ``to``, when given) some user interacted with together with ``a``; pairs that never
    co-occur have no row (their similarity is 0). ``sim(a, a) = 1``."""
    # items as dense integers, a pair as one integer key: grouping the Σ_u |H(u)|² pairs of
    # the self-join by one Int64 key is about twice as fast as by two item columns
    # (the training interactions are in memory: their item count is known at once)
    ids = item_counts(train).collect().with_row_index("id").with_columns(
        c("id").cast(pl.Int64))
    size = max(ids.height, 1)
    coded = train.join(ids.lazy().select(IT, "id"), on=IT)
    a = coded.join(items.select(IT).unique(), on=IT, how="semi").select(Q, c("id").alias("a"))
    b = coded if to is None else coded.join(to.select(IT).unique(), on=IT, how="semi")
    pairs = a.join(b.select(Q, c("id").alias("b")), on=Q).group_by(
        (c("a") * size + c("b")).alias("key")).agg(pl.len().cast(F64).alias("co"))
    side = ids.lazy().select(c("id"), c(IT), c("count").sqrt().alias("root"))
    return pairs.select((c("key") // size).alias("a"), (c("key") % size).alias("b"), "co").join(
        side.rename({"id": "a", IT: "item_a", "root": "ra"}), on="a").join(
        side.rename({"id": "b", IT: "item_b", "root": "rb"}), on="b").select(
        "item_a", "item_b", (c("co") / (c("ra") * c("rb"))).alias("similarity"))


# --------------------------------------------------------------------------- similarity

def similarity_source(params: Params, ctx: Context, metric: str) -> tuple[str, str]:
    """The similarity in force (``features``, ``table`` or ``cooccurrence``) and the file it
    reads; ``auto`` is the first of item_features_file, similarity_file, train_file given."""
    mode = str(params.get("similarity", "auto"))
    if mode == "auto":
        found = [m for m, opt in OPTION.items() if ctx.frames.get(opt) is not None]
        if not found:
            raise MetricError(
                f"{metric} needs an item similarity: item features, a similarity table or the "
                "training interactions",
                hint="set options: {item_features_file: PATH} (item, features), "
                "{similarity_file: PATH} (item_a, item_b, similarity) or {train_file: PATH} "
                "(user, item)")
        mode = found[0]
    option = OPTION[mode]
    if ctx.frames.get(option) is None:
        raise MetricError(f"{metric}: similarity {mode} reads the {option} option, which is "
                          "not set", hint=f"set options: {{{option}: PATH}}, or choose "
                          "another similarity")
    return mode, f"{mode}:{ctx.options.get(option)}"


def pair_similarity(ctx: Context, lf: pl.LazyFrame, mode: str, pairs: pl.LazyFrame,
                    metric: str) -> pl.LazyFrame:
    """``pairs`` (columns item_a, item_b and any others; one row per pair and other columns)
    with ``similarity``: 1 for an item with itself, null when the source has no value for the
    pair (no features, not in the table) and 0 when two items never co-occur."""
    frames: dict[str, Any] = dict(ctx.frames)
    if mode == "features":
        long = features_long(lf, frames["item_features_file"])
        keys = pairs.collect_schema().names()
        dots = pairs.join(long.rename({IT: "item_a", "value": "va"}), on="item_a").join(
            long.rename({IT: "item_b", "value": "vb"}), on=["item_b", "dim"]).group_by(
            keys).agg(in_order_sum(c("va") * c("vb"), "dim").alias("similarity"))
        out = pairs.join(dots, on=keys, how="left")
    elif mode == "table":
        sim = table_pairs(lf, frames["similarity_file"]).select(
            "item_a", "item_b", c("similarity").cast(F64))
        both = pl.concat([sim, sim.select(c("item_b").alias("item_a"),
                                          c("item_a").alias("item_b"), "similarity")])
        out = pairs.join(both.unique(["item_a", "item_b"], keep="first"),
                         on=["item_a", "item_b"], how="left")
    else:
        train = train_pairs(ctx, lf, metric)
        sim = cooccurrence(train, pairs.select(c("item_a").alias(IT)),
                           pairs.select(c("item_b").alias(IT)))
        out = pairs.join(sim, on=["item_a", "item_b"], how="left").with_columns(
            c("similarity").fill_null(0.0))
    return out.with_columns(
        pl.when(c("item_a") == c("item_b")).then(1.0).otherwise(c("similarity"))
        .alias("similarity"))
