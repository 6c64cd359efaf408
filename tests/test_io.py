"""Readers: format detection, lazy scans, and the errors a bad file produces (one message each,
naming the file)."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

from evalcli.errors import InputDataError
from evalcli.io import Source, scan
from evalcli.io.readers import detect_format


@pytest.mark.parametrize("path,expected", [
    ("a.csv", ("csv", None)),
    ("a.CSV", ("csv", None)),
    ("a.tsv", ("tsv", None)),
    ("a.parquet", ("parquet", None)),
    ("a.pq", ("parquet", None)),
    ("a.jsonl", ("jsonl", None)),
    ("a.ndjson", ("jsonl", None)),
    ("a.csv.gz", ("csv", "gzip")),
    ("a.jsonl.zst", ("jsonl", "zstd")),
    ("data/*.parquet", ("parquet", None)),
])
def test_detect_format(path: str, expected: tuple[str, str | None]) -> None:
    assert detect_format(path) == expected


def test_detect_format_directory_is_parquet(tmp_path: Path) -> None:
    assert detect_format(str(tmp_path)) == ("parquet", None)


def test_unknown_extension_names_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "scores.out"
    path.write_text("label,score\n1,0.5\n")
    with pytest.raises(InputDataError, match=r"scores\.out.*extension '\.out'") as info:
        scan(Source(str(path)))
    assert "format" in (info.value.hint or "")
    # ... and the config's format settles it
    assert scan(Source(str(path), format="csv")).collect().height == 1


def test_missing_file_suggests_a_near_name(tmp_path: Path) -> None:
    (tmp_path / "predictions.csv").write_text("a\n1\n")
    with pytest.raises(InputDataError, match=r"predictons\.csv does not exist.*"
                       r"Did you mean .*predictions\.csv"):
        scan(Source(str(tmp_path / "predictons.csv")))


def test_glob_matching_nothing(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="no file matches"):
        scan(Source(str(tmp_path / "part-*.parquet")))


def test_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="holds no files"):
        scan(Source(str(tmp_path)))


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("")
    with pytest.raises(InputDataError, match=r"empty\.csv is empty"):
        scan(Source(str(path)))


def test_corrupt_parquet_names_file_and_format(tmp_path: Path) -> None:
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"not a parquet file")
    with pytest.raises(InputDataError, match=r"cannot read .*broken\.parquet as parquet"):
        scan(Source(str(path)))


def test_invalid_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"label": 1, "score": 0.5}\nnot json\n')
    with pytest.raises(InputDataError, match=r"bad\.jsonl"):
        scan(Source(str(path))).collect()  # the schema or the rows: either names the file


def test_scan_is_lazy_and_reads_gzip(tmp_path: Path) -> None:
    path = tmp_path / "x.csv.gz"
    path.write_bytes(gzip.compress(b"label,score\n1,0.5\n0,0.25\n"))
    lf = scan(Source(str(path)))
    assert isinstance(lf, pl.LazyFrame)
    assert lf.collect().to_dict(as_series=False) == {"label": [1, 0], "score": [0.5, 0.25]}


def test_tsv_and_null_values(tmp_path: Path) -> None:
    path = tmp_path / "x.tsv"
    path.write_text("label\tscore\n1\tNA\n0\t0.25\n")
    df = scan(Source(str(path), null_values=("NA",))).collect()
    assert df["score"].to_list() == [None, 0.25]


def test_csv_without_header(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("1,0.5\n0,0.25\n")
    df = scan(Source(str(path), has_header=False)).collect()
    assert df.shape == (2, 2)


def test_hive_partitioned_directory(tmp_path: Path) -> None:
    df = pl.DataFrame({"label": [1, 0, 1, 0], "score": [0.9, 0.1, 0.8, 0.3],
                       "day": ["mon", "mon", "tue", "tue"]})
    df.write_parquet(tmp_path / "data", partition_by="day")
    got = scan(Source(str(tmp_path / "data"))).collect().sort("score")
    assert sorted(got.columns) == ["day", "label", "score"]
    assert got["day"].to_list() == ["mon", "tue", "tue", "mon"]
