"""What the benchmark times besides evalcli, each run as its own process by ``run.py``.

    python benchmarks/peers.py floor FAMILY PREDICTIONS TRUTH   (TRUTH '-': one file)
    python benchmarks/peers.py sklearn FAMILY PREDICTIONS TRUTH
    python benchmarks/peers.py ranx ranking PREDICTIONS TRUTH

Each prints one JSON object on stdout: ``phases`` (seconds, measured inside the process) and,
for the peers, ``values`` (metric id -> value, named as in evalcli's report) so the runner can
check them against evalcli's before it times anything.

- floor: Polars reads both files and joins them on the keys, as evalcli's task does, nothing
  else (the least any tool reading these files must spend).
- sklearn: read and join with Polars (the fastest reader there is; a pandas user pays more),
  hand the columns to scikit-learn as NumPy arrays (``read``), then compute every metric the
  evalcli run reports (``compute``).
- ranx: read with Polars, build ranx's Qrels and Run from the frames (``build``), evaluate
  every metric ranx has that evalcli reports (``evaluate``).

Imports happen inside the functions, so each process pays for what it uses, as a user would.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

KEYS = {"ranking": ["query", "item"]}
HOW = {"ranking": "full"}  # evalcli's ranking task keeps unrecommended relevant items


def _scan(path: str) -> Any:
    import polars as pl

    if path.endswith(".csv"):
        return pl.scan_csv(path)
    return pl.scan_parquet(path)


def _read_join(family: str, pred: str, truth: str) -> Any:
    """Both files joined on the keys; ``truth`` '-' means one file holding both."""
    if truth == "-":
        return _scan(pred).collect()
    how = HOW.get(family, "inner")
    keys = KEYS.get(family, ["id"])
    lf = _scan(pred).join(_scan(truth), on=keys, how=how,  # type: ignore[arg-type]
                          coalesce=True)
    return lf.collect()


def floor(family: str, pred: str, truth: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    df = _read_join(family, pred, truth)
    return {"phases": {"read+join": time.perf_counter() - t0}, "rows": df.height}


# --------------------------------------------------------------------------- scikit-learn

def _sk_binary(df: Any) -> tuple[dict[str, float], float, float]:
    t0 = time.perf_counter()
    y = df.get_column("label").to_numpy()
    s = df.get_column("score").to_numpy()
    yhat = df.get_column("prediction").to_numpy()
    t1 = time.perf_counter()
    import numpy as np
    from sklearn import metrics as M

    spec = M.recall_score(y, yhat, pos_label=0, zero_division=0)
    precision, recall, _ = M.precision_recall_curve(y, s)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1s = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0)
    # Spark's areaUnderPR: trapezoids from (recall 0, precision at the top score)
    p_spark = precision.copy()
    p_spark[-1] = precision[-2]
    values = {
        "accuracy": M.accuracy_score(y, yhat),
        "precision": M.precision_score(y, yhat, zero_division=0),
        "recall": M.recall_score(y, yhat, zero_division=0),
        "specificity": spec,
        "fpr": 1 - spec,
        "f1": M.f1_score(y, yhat, zero_division=0),
        "mcc": M.matthews_corrcoef(y, yhat),
        "balanced_accuracy": M.balanced_accuracy_score(y, yhat),
        "auroc": M.roc_auc_score(y, s),
        "auprc": M.auc(recall, p_spark),
        "average_precision": M.average_precision_score(y, s),
        "peak_f1": float(f1s.max()),
        "log_loss": M.log_loss(y, s),
        "brier": M.brier_score_loss(y, s),
    }
    return values, t1 - t0, time.perf_counter() - t1


def _sk_multiclass(df: Any) -> tuple[dict[str, float], float, float]:
    t0 = time.perf_counter()
    y = df.get_column("label").to_numpy()
    yhat = df.get_column("prediction").to_numpy()
    t1 = time.perf_counter()
    from sklearn import metrics as M

    values: dict[str, float] = {
        "confusion_matrix": float(M.confusion_matrix(y, yhat).sum()),
        "accuracy": M.accuracy_score(y, yhat),
        "cohen_kappa": M.cohen_kappa_score(y, yhat),
        "mcc": M.matthews_corrcoef(y, yhat),
        "balanced_accuracy": M.balanced_accuracy_score(y, yhat),
        "hamming_loss": M.hamming_loss(y, yhat),
    }
    for avg in ("macro", "micro", "weighted"):
        suffix = "" if avg == "macro" else f"[average={avg}]"
        values["precision" + suffix] = M.precision_score(y, yhat, average=avg, zero_division=0)
        values["recall" + suffix] = M.recall_score(y, yhat, average=avg, zero_division=0)
        values["f1" + suffix] = M.f1_score(y, yhat, average=avg, zero_division=0)
    return values, t1 - t0, time.perf_counter() - t1


def _sk_multilabel(df: Any) -> tuple[dict[str, float], float, float]:
    t0 = time.perf_counter()
    from sklearn.preprocessing import MultiLabelBinarizer

    truth_sets = [s.split("|") if s else [] for s in df.get_column("label").to_list()]
    pred_sets = [s.split("|") if s else [] for s in df.get_column("prediction").to_list()]
    mlb = MultiLabelBinarizer(sparse_output=True)
    mlb.fit(truth_sets + pred_sets)
    y, yhat = mlb.transform(truth_sets), mlb.transform(pred_sets)
    t1 = time.perf_counter()
    from sklearn import metrics as M

    values = {
        "precision": M.precision_score(y, yhat, average="samples", zero_division=0),
        "recall": M.recall_score(y, yhat, average="samples", zero_division=0),
        "f1": M.f1_score(y, yhat, average="samples", zero_division=0),
        "accuracy": M.jaccard_score(y, yhat, average="samples", zero_division=0),
        "subset_accuracy": M.accuracy_score(y, yhat),
        "hamming_loss": M.hamming_loss(y, yhat),
    }
    return values, t1 - t0, time.perf_counter() - t1


def _sk_regression(df: Any) -> tuple[dict[str, float], float, float]:
    t0 = time.perf_counter()
    y = df.get_column("label").to_numpy()
    yhat = df.get_column("prediction").to_numpy()
    t1 = time.perf_counter()
    from sklearn import metrics as M

    values = {
        "mse": M.mean_squared_error(y, yhat),
        "rmse": M.root_mean_squared_error(y, yhat),
        "mae": M.mean_absolute_error(y, yhat),
        "r2": M.r2_score(y, yhat),
        "explained_variance": M.explained_variance_score(y, yhat),
        "mape": M.mean_absolute_percentage_error(y, yhat),
        "max_error": M.max_error(y, yhat),
        "median_absolute_error": M.median_absolute_error(y, yhat),
    }
    return values, t1 - t0, time.perf_counter() - t1


SKLEARN: dict[str, Callable[[Any], tuple[dict[str, float], float, float]]] = {
    "binary": _sk_binary, "multiclass": _sk_multiclass, "multilabel": _sk_multilabel,
    "regression": _sk_regression,
}


def sklearn(family: str, pred: str, truth: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    df = _read_join(family, pred, truth)
    read = time.perf_counter() - t0
    values, to_numpy, compute = SKLEARN[family](df)
    return {"phases": {"read": read + to_numpy, "compute": compute},
            "values": {k: float(v) for k, v in values.items()}}


# --------------------------------------------------------------------------- ranx

RANX_NAMES = {"precision": "precision", "recall": "recall", "f1": "f1", "hit_rate": "hit_rate",
              "mrr": "mrr", "map": "map", "ndcg": "ndcg", "dcg": "dcg",
              "r_precision": "r-precision"}
# evalcli id -> ranx metric, with and without the cut-off (the config sets compat: ranx, so
# evalcli uses ranx's conventions: linear gain, MAP over all relevant items, ...)
RANX_METRICS = {**RANX_NAMES,
                **{f"{k}@10": f"{v}@10" for k, v in RANX_NAMES.items() if k != "r_precision"}}


def ranx(family: str, pred: str, truth: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    import polars as pl

    run_df = _scan(pred).collect()
    qrels_df = _scan(truth).collect()
    read = time.perf_counter() - t0
    t1 = time.perf_counter()
    from ranx import Qrels, Run, evaluate

    def frame(df: pl.DataFrame, score: pl.Expr) -> Any:
        # ranx wants string ids in pandas frames, as object columns (pandas 3 would make them
        # its str dtype, which ranx refuses)
        out = df.select(pl.col("query").cast(pl.String).alias("q_id"),
                        pl.col("item").cast(pl.String).alias("doc_id"),
                        score.alias("score")).to_pandas()
        return out.astype({"q_id": object, "doc_id": object})

    qrels = Qrels.from_df(frame(qrels_df, pl.col("relevance").cast(pl.Int64)))
    run = Run.from_df(frame(run_df, pl.col("score").cast(pl.Float64)))
    build = time.perf_counter() - t1
    t2 = time.perf_counter()
    res = evaluate(qrels, run, list(RANX_METRICS.values()), make_comparable=True)
    evaluate_s = time.perf_counter() - t2
    values = {k: float(res[v]) for k, v in RANX_METRICS.items()}
    return {"phases": {"read": read, "build": build, "evaluate": evaluate_s}, "values": values}


# --------------------------------------------------------------------------- alignment

def join_validated(family: str, pred: str, truth: str) -> dict[str, Any]:
    """The floor's join with Polars' own 1:1 check (evalcli's lazy and streaming path)."""
    t0 = time.perf_counter()
    keys = KEYS.get(family, ["id"])
    df = _scan(pred).join(_scan(truth), on=keys, how=HOW.get(family, "inner"),  # type: ignore[arg-type]
                          validate="1:1", coalesce=True).collect()
    return {"phases": {"read+join": time.perf_counter() - t0}, "rows": df.height}


def evalcli_align(family: str, pred: str, truth: str) -> dict[str, Any]:
    """evalcli's in-memory alignment alone (read, sort or not, 1:1 check, merge or line up)."""
    from pathlib import Path

    from evalcli.config import load_config
    from evalcli.engine.align import materialize
    from evalcli.runner import prepare

    t0 = time.perf_counter()
    prep = prepare(load_config(Path(pred).parent / "config-parquet.yaml"))
    a = materialize(prep.aligned, prep.plan.task.join)
    df = a.lf.collect()
    return {"phases": {"align": time.perf_counter() - t0}, "rows": df.height}


KINDS = {"floor": floor, "sklearn": sklearn, "ranx": ranx, "join": floor,
         "join-1:1": join_validated, "evalcli-align": evalcli_align}


def main() -> None:
    kind, family, pred, truth = sys.argv[1:5]
    out = KINDS[kind](family, pred, truth)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
