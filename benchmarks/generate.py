"""Seeded benchmark data: predictions and truth as two files per case, Parquet and CSV.

Each case is a folder ``benchmarks/data/<family>-<size>/`` holding ``predictions.<fmt>``,
``truth.<fmt>`` and one evalcli config per format (``config-<fmt>.yaml``, every metric of the
family that the columns allow, so one run computes them all). The same seed gives the same bytes.

- binary: ``id`` (int64), ``score`` (float64, a noisy sigmoid), ``prediction`` (score >= 0.5)
  in predictions; ``id``, ``label`` (0/1, 30% positive) in truth, rows in another order;
- multiclass: 10 classes; ``prediction`` right 60% of the time; truth ``label``;
- multilabel: 20 labels, label sets and predicted sets as ``|``-delimited strings;
- regression: ``label`` ~ N(50, 20²), ``prediction`` = label + N(0, 5²);
- ranking: ``size`` queries x 100 recommended items (``query``, ``item``, ``score``), and about
  10 graded relevant items per query (``query``, ``item``, ``relevance`` in 1..3), some of them
  not recommended.

The truth file's rows are shuffled relative to the predictions, so the join is a real one.
``--chunks N`` writes each side as a folder of N Parquet files instead (for data larger than
memory: each chunk is generated and written on its own), both in key order, as partitioned
pipelines usually write them (the streaming engine then merges the two sides in constant
memory; unsorted sides need Polars' hash join, whose memory grows with the data), plus
``joined/``: the same rows as one input holding predictions and labels
(``config-onefile.yaml``).

    python benchmarks/generate.py binary 1000000            # -> benchmarks/data/binary-1000000/
    python benchmarks/generate.py ranking 10000 --formats parquet
    python benchmarks/generate.py binary 100000000 --chunks 20 --formats parquet --quantize 6
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl

DATA = Path(__file__).resolve().parent / "data"
FAMILIES = ("binary", "multiclass", "multilabel", "regression", "ranking")
SEED = 20240611
N_CLASSES = 10
N_LABELS = 20
ITEMS_PER_QUERY = 100
RELEVANT_PER_QUERY = 10

RANKING_AT = ("precision", "recall", "f1", "hit_rate", "mrr", "map", "ndcg", "dcg", "r_precision")

# every metric of the family that the generated columns allow (the config lists them so a run
# computes them all in one pass; names only, default parameters)
METRICS: dict[str, list[str]] = {
    "binary": [],  # empty list = the family's full applicable set, chosen by evalcli
    "multiclass": ["confusion_matrix", "accuracy", "precision", "recall", "f1",
                   "precision[average=micro]", "recall[average=micro]", "f1[average=micro]",
                   "precision[average=weighted]", "recall[average=weighted]",
                   "f1[average=weighted]", "cohen_kappa", "mcc", "balanced_accuracy",
                   "hamming_loss"],
    "multilabel": [],
    "regression": [],
    "ranking": [*RANKING_AT, *(f"{m}@10" for m in RANKING_AT if m != "r_precision"),
                "micro_recall", "auc", "catalog_coverage@10", "novelty@10"],
}


def _rng(family: str, size: int, chunk: int) -> np.random.Generator:
    return np.random.default_rng([SEED, FAMILIES.index(family), size, chunk])


def _shuffled(df: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    return df[rng.permutation(df.height)]


def binary(n: int, rng: np.random.Generator, start: int = 0,
           quantize: int | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    label = (rng.random(n) < 0.3).astype(np.int64)
    logit = np.where(label == 1, 1.0, -1.0) + rng.normal(0.0, 1.5, n)
    score = 1.0 / (1.0 + np.exp(-logit))
    if quantize is not None:
        score = np.round(score, quantize)
    ids = np.arange(start, start + n, dtype=np.int64)
    pred = pl.DataFrame({"id": ids, "score": score, "prediction": (score >= 0.5).astype(np.int64)})
    truth = pl.DataFrame({"id": ids, "label": label})
    return pred, _shuffled(truth, rng)


def multiclass(n: int, rng: np.random.Generator, start: int = 0,
               quantize: int | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    label = rng.integers(0, N_CLASSES, n)
    right = rng.random(n) < 0.6
    prediction = np.where(right, label, rng.integers(0, N_CLASSES, n))
    ids = np.arange(start, start + n, dtype=np.int64)
    pred = pl.DataFrame({"id": ids, "prediction": prediction})
    truth = pl.DataFrame({"id": ids, "label": label})
    return pred, _shuffled(truth, rng)


def _label_sets(bits: np.ndarray) -> pl.Series:
    """Rows of a 0/1 matrix -> '|'-joined label names ('' for an empty set)."""
    names = np.array([f"L{j:02d}" for j in range(bits.shape[1])])
    df = pl.DataFrame(bits.astype(bool), schema=list(names))
    return df.select(pl.concat_str(
        [pl.when(pl.col(c)).then(pl.lit(c)) for c in names], separator="|", ignore_nulls=True
    ).fill_null("")).to_series()


def multilabel(n: int, rng: np.random.Generator, start: int = 0,
               quantize: int | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    freq = np.linspace(0.02, 0.3, N_LABELS)
    truth_bits = rng.random((n, N_LABELS)) < freq
    flip = rng.random((n, N_LABELS)) < 0.08
    pred_bits = truth_bits ^ flip
    ids = np.arange(start, start + n, dtype=np.int64)
    pred = pl.DataFrame({"id": ids, "prediction": _label_sets(pred_bits)})
    truth = pl.DataFrame({"id": ids, "label": _label_sets(truth_bits)})
    return pred, _shuffled(truth, rng)


def regression(n: int, rng: np.random.Generator, start: int = 0,
               quantize: int | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    label = rng.normal(50.0, 20.0, n)
    prediction = label + rng.normal(0.0, 5.0, n)
    ids = np.arange(start, start + n, dtype=np.int64)
    pred = pl.DataFrame({"id": ids, "prediction": prediction})
    truth = pl.DataFrame({"id": ids, "label": label})
    return pred, _shuffled(truth, rng)


def ranking(queries: int, rng: np.random.Generator, start: int = 0,
            quantize: int | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each query has a window of 130 candidate items of a large catalog: 100 recommended (by
    score), 10 relevant (drawn from the window, so most but not all are recommended)."""
    window = ITEMS_PER_QUERY + 30
    q = np.arange(start, start + queries, dtype=np.int64)
    base = (q * 7919) % 1_000_000  # the query's window in a catalog of ~10^6 items
    order = np.argsort(rng.random((queries, window)), axis=1)
    rec = order[:, :ITEMS_PER_QUERY]  # window positions recommended, in rank order
    is_rec = np.zeros((queries, window), dtype=bool)
    np.put_along_axis(is_rec, rec, True, axis=1)
    # relevant: drawn from the window, likelier among the recommended ones
    rel = np.argsort(rng.random((queries, window)) - 0.1 * is_rec, axis=1)[:, :RELEVANT_PER_QUERY]
    rel_mask = np.zeros((queries, window), dtype=bool)
    np.put_along_axis(rel_mask, rel, True, axis=1)
    items = base[:, None] + rec
    rel_items = base[:, None] + rel
    # scores: higher for relevant items, so metrics are far from 0 and 1
    score = rng.random((queries, ITEMS_PER_QUERY)) + 0.5 * np.take_along_axis(rel_mask, rec, 1)
    if quantize is not None:
        score = np.round(score, quantize)
    pred = pl.DataFrame({
        "query": np.repeat(q, ITEMS_PER_QUERY),
        "item": items.ravel(),
        "score": score.ravel(),
    })
    truth = pl.DataFrame({
        "query": np.repeat(q, RELEVANT_PER_QUERY),
        "item": rel_items.ravel(),
        "relevance": rng.integers(1, 4, queries * RELEVANT_PER_QUERY),
    })
    return pred, _shuffled(truth, rng)


MAKERS = {"binary": binary, "multiclass": multiclass, "multilabel": multilabel,
          "regression": regression, "ranking": ranking}


def case_dir(family: str, size: int, root: Path = DATA, suffix: str = "") -> Path:
    return root / f"{family}-{size}{suffix}"


def config_text(family: str, pred: str, truth: str | None) -> str:
    lines = [f"task: {family}", f"predictions: {pred}"] + ([f"truth: {truth}"] if truth else [])
    if family == "ranking":  # the columns have the roles' names; ranx's conventions
        lines += ["options: {compat: ranx}"]
    metrics = METRICS[family]
    if metrics:
        lines.append("metrics:")
        lines += [f"  - \"{m}\"" for m in metrics]
    return "\n".join(lines) + "\n"


def _chunks(size: int, chunks: int) -> Iterator[tuple[int, int, int]]:
    step = -(-size // chunks)
    for i in range(chunks):
        lo = i * step
        if lo < size:
            yield i, lo, min(step, size - lo)


def generate(family: str, size: int, formats: tuple[str, ...] = ("parquet", "csv"),
             root: Path = DATA, chunks: int = 1, quantize: int | None = None,
             force: bool = False) -> Path:
    """Write the case (if missing) and return its folder."""
    suffix = f"-q{quantize}" if quantize is not None else ""
    suffix += f"-c{chunks}" if chunks > 1 else ""
    out = case_dir(family, size, root, suffix)
    stamp = out / "done.json"
    want = {"family": family, "size": size, "seed": SEED, "chunks": chunks,
            "quantize": quantize, "formats": sorted(formats)}
    if stamp.exists() and not force:
        have = json.loads(stamp.read_text())
        if have == want or (have | {"formats": []} == want | {"formats": []}
                            and set(formats) <= set(have["formats"])):
            return out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    make = MAKERS[family]
    if chunks == 1:
        pred, truth = make(size, _rng(family, size, 0), 0, quantize)
        for fmt in formats:
            for name, df in (("predictions", pred), ("truth", truth)):
                path = out / f"{name}.{fmt}"
                if fmt == "parquet":
                    df.write_parquet(path)
                else:
                    df.write_csv(path)
            (out / f"config-{fmt}.yaml").write_text(
                config_text(family, f"predictions.{fmt}", f"truth.{fmt}"))
    else:
        if formats != ("parquet",):
            raise SystemExit("--chunks writes Parquet only")
        for side in ("predictions", "truth", "joined"):
            (out / side).mkdir()
        keys = ["query", "item"] if family == "ranking" else ["id"]
        for i, lo, n in _chunks(size, chunks):
            pred, truth = make(n, _rng(family, size, i), lo, quantize)
            truth = truth.sort(keys)  # chunked data is written in key order (see the docstring)
            pred.write_parquet(out / "predictions" / f"part-{i:04d}.parquet")
            truth.write_parquet(out / "truth" / f"part-{i:04d}.parquet")
            # the same rows as one file of predictions with their labels (no join to do)
            pred.join(truth, on=keys, how="left" if family == "ranking" else "inner").write_parquet(
                out / "joined" / f"part-{i:04d}.parquet")
            del pred, truth
            print(f"  chunk {i + 1}/{chunks}", file=sys.stderr, flush=True)
        (out / "config-parquet.yaml").write_text(
            config_text(family, "predictions/*.parquet", "truth/*.parquet"))
        (out / "config-onefile.yaml").write_text(config_text(family, "joined/*.parquet", None))
    stamp.write_text(json.dumps(want))
    return out


def onefile(folder: Path, family: str, fmt: str) -> Path:
    """The case's rows as one file of predictions with their labels (written once, from the
    two files), and its config ``config-onefile-<fmt>.yaml``; returns the config."""
    config = folder / f"config-onefile-{fmt}.yaml"
    path = folder / f"onefile.{fmt}"
    if config.exists() and path.exists():
        return config
    read = pl.read_parquet if fmt == "parquet" else pl.read_csv
    keys = ["query", "item"] if family == "ranking" else ["id"]
    df = read(folder / f"predictions.{fmt}").join(read(folder / f"truth.{fmt}"), on=keys,
                                                  how="inner", maintain_order="left")
    tmp = folder / f"onefile.tmp.{fmt}"
    if fmt == "parquet":
        df.write_parquet(tmp)
    else:
        df.write_csv(tmp)
    tmp.replace(path)
    config.write_text(config_text(family, path.name, None))
    return config


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("family", choices=FAMILIES)
    ap.add_argument("size", type=int, help="rows (queries for ranking)")
    ap.add_argument("--formats", default="parquet,csv", help="comma-separated: parquet,csv")
    ap.add_argument("--chunks", type=int, default=1, help="write each side as N Parquet files")
    ap.add_argument("--quantize", type=int, default=None,
                    help="round scores to this many decimals (fewer distinct scores)")
    ap.add_argument("--root", type=Path, default=DATA)
    ap.add_argument("--force", action="store_true", help="rewrite even if present")
    args = ap.parse_args(argv)
    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
    out = generate(args.family, args.size, formats, args.root, args.chunks, args.quantize,
                   args.force)
    print(out)


if __name__ == "__main__":
    main()
