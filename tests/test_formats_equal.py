"""The same data in every input format gives the same report.

CSV, TSV, Parquet, JSONL, gzip and zstd-compressed CSV and JSONL, a glob of Parquet files and a
hive-partitioned Parquet directory: the JSON report (minus the file paths) must be identical,
metric values bit for bit.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from evalcli.config import parse_config
from evalcli.result import to_dict
from evalcli.runner import run_config

BINARY_METRICS = ["accuracy", "precision", "recall", "f1", "mcc", "auroc", "auprc",
                  "average_precision", "log_loss", "brier", "peak_f1"]
REGRESSION_METRICS = ["mse", "rmse", "mae", "r2", "explained_variance", "mape", "max_error",
                      "median_absolute_error"]


def _binary_frames() -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(11)
    n = 200
    ids = rng.permutation(n)
    label = rng.integers(0, 2, n)
    # scores with ties and full-precision floats (a format that rounds floats would show)
    score = np.where(rng.random(n) < 0.3, rng.choice([0.25, 0.5, 0.75], n), rng.random(n))
    preds = pl.DataFrame({"id": ids, "score": score, "part": ids % 3})
    truth = pl.DataFrame({"id": ids[::-1].copy(), "label": label[::-1].copy()})
    return preds, truth


def _write(df: pl.DataFrame, folder: Path, name: str, fmt: str) -> str:
    """Write ``df`` in ``fmt`` under ``folder``; return the path to give the config."""
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet_dir":  # hive partitions: folder/part=0/..., the key as a column again
        root = folder / name
        df.write_parquet(root, partition_by="part")
        return str(root)
    if fmt == "parquet_glob":
        for i, chunk in enumerate(df.iter_slices(n_rows=70)):
            chunk.write_parquet(folder / f"{name}-{i}.parquet")
        return str(folder / f"{name}-*.parquet")
    path = folder / f"{name}.{fmt}"
    if fmt == "parquet":
        df.write_parquet(path)
    elif fmt == "csv":
        df.write_csv(path)
    elif fmt == "tsv":
        df.write_csv(path, separator="\t")
    elif fmt == "jsonl":
        df.write_ndjson(path)
    elif fmt in ("csv.gz", "jsonl.gz"):
        text = df.write_csv() if fmt.startswith("csv") else df.write_ndjson()
        path.write_bytes(gzip.compress(text.encode()))
    elif fmt in ("csv.zst", "jsonl.zst"):
        import pyarrow as pa

        text = df.write_csv() if fmt.startswith("csv") else df.write_ndjson()
        with pa.CompressedOutputStream(str(path), "zstd") as out:
            out.write(text.encode())
    else:  # pragma: no cover
        raise ValueError(fmt)
    return str(path)


FORMATS = ["parquet", "csv", "tsv", "jsonl", "csv.gz", "jsonl.gz", "csv.zst", "jsonl.zst",
           "parquet_glob", "parquet_dir"]


def _report(cfg: dict[str, Any], base: Path) -> dict[str, Any]:
    out = to_dict(run_config(parse_config(cfg, "test", base)))
    for side in out["inputs"].values():
        side.pop("path")
    out.pop("engine", None)
    return out


@pytest.fixture(scope="module")
def binary_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    base = tmp_path_factory.mktemp("formats")
    preds, truth = _binary_frames()
    out = {}
    for fmt in FORMATS:
        cfg = {
            "task": "binary",
            "predictions": _write(preds, base / fmt, "preds", fmt),
            # the truth always in another format than the predictions
            "truth": _write(truth, base / fmt, "truth", "jsonl" if fmt == "parquet" else "parquet"),
            "metrics": BINARY_METRICS,
            "group_by": ["part"],
        }
        out[fmt] = _report(cfg, base)
    return out


@pytest.mark.parametrize("fmt", FORMATS[1:])
def test_binary_report_is_identical_in_every_format(
        binary_reports: dict[str, dict[str, Any]], fmt: str) -> None:
    ref, got = binary_reports["parquet"], binary_reports[fmt]
    # segment keys: a hive partition reads back as a (possibly narrower) integer column
    assert json.dumps(got, sort_keys=True) == json.dumps(ref, sort_keys=True)


def test_the_reports_are_about_the_data() -> None:
    """Guard against comparing empty reports: the reference values are the data's."""
    from sklearn.metrics import roc_auc_score

    preds, truth = _binary_frames()
    joined = preds.join(truth, on="id")
    assert joined.height == 200
    ref = roc_auc_score(joined["label"].to_numpy(), joined["score"].to_numpy())
    base = Path(__import__("tempfile").mkdtemp())
    cfg = {"task": "binary", "predictions": _write(preds, base, "p", "csv"),
           "truth": _write(truth, base, "t", "csv"), "metrics": ["auroc"]}
    rep = _report(cfg, base)
    assert rep["metrics"][0]["value"] == pytest.approx(ref, rel=1e-12)
    assert rep["alignment"]["matched"] == 200


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "csv.gz", "parquet_glob", "parquet_dir"])
def test_regression_single_file_in_every_format(tmp_path: Path, fmt: str) -> None:
    rng = np.random.default_rng(5)
    n = 120
    y = rng.normal(100, 20, n)
    df = pl.DataFrame({"label": y, "prediction": y + rng.normal(0, 5, n),
                       "w": rng.integers(1, 4, n).astype(float), "part": np.arange(n) % 2})
    reports = []
    for f in ("parquet", fmt):
        cfg = {"task": "regression", "predictions": _write(df, tmp_path / f, "data", f),
               "metrics": REGRESSION_METRICS, "columns": {"weight": "w"}}
        reports.append(_report(cfg, tmp_path))
    # Sums of floats depend on how a reader chunks the column (Polars adds chunk by chunk),
    # so values may differ in the last bits between formats; everything else is identical.
    ref, got = (r.pop("metrics") for r in reports)
    assert json.dumps(reports[0], sort_keys=True) == json.dumps(reports[1], sort_keys=True)
    assert [m["id"] for m in got] == [m["id"] for m in ref]
    for g, r in zip(got, ref, strict=True):
        assert g["value"] == pytest.approx(r["value"], rel=1e-13, abs=0), g["id"]
        assert {k: v for k, v in g.items() if k != "value"} == \
            {k: v for k, v in r.items() if k != "value"}


def test_format_override_reads_an_unknown_extension(tmp_path: Path) -> None:
    df = pl.DataFrame({"label": [1, 0, 1], "score": [0.9, 0.1, 0.4]})
    path = tmp_path / "scores.data"
    df.write_csv(path)
    cfg = {"task": "binary", "predictions": {"path": str(path), "format": "csv"},
           "metrics": ["auroc"]}
    assert _report(cfg, tmp_path)["metrics"][0]["value"] == 1.0


def test_separator_option(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    path.write_text("label;score\n1;0.9\n0;0.1\n1;0.4\n")
    cfg = {"task": "binary", "predictions": {"path": str(path), "separator": ";"},
           "metrics": ["auroc"]}
    assert _report(cfg, tmp_path)["metrics"][0]["value"] == 1.0
