"""Issue 19 ("Trust"), the inputs: files that used to run silently wrong, or crash, or explain
themselves badly. Each bad file gets one message naming the file, the column, the row (line) or
key, and the fix, with exit code 2; the checks read only the head of a file (the header line,
the magic bytes), never the data twice.
"""

from __future__ import annotations

import codecs
import gzip
import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from evalcli.errors import InputDataError
from evalcli.io import Source, scan
from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def assert_user_error(r: CliResult, *patterns: str) -> str:
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    assert r.stdout == "", r.stdout
    assert "Traceback" not in r.stderr
    assert r.stderr.count("error:") == 1, r.stderr
    flat = " ".join(r.stderr.split())  # the console may wrap long lines
    for p in patterns:
        assert re.search(p, flat), f"{p!r} not in {flat!r}"
    return flat


def write(folder: Path, name: str, text: str | bytes) -> str:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


PREDS = "id,score\n1,0.9\n2,0.2\n3,0.6\n4,0.4\n"
TRUTH = "id,label\n1,1\n2,0\n3,1\n4,0\n"


def auroc(r: CliResult) -> float:
    assert r.exit_code == 0, r.stderr
    rep = json.loads(r.stdout)
    return float(next(m["value"] for m in rep["metrics"] if m["id"] == "auroc"))


# ------------------------------------------------------------------ 4. duplicated column names

@pytest.mark.parametrize("name,text", [
    ("p.csv", "id,score,score\n1,0.9,0.1\n2,0.2,0.3\n3,0.6,0.5\n4,0.4,0.4\n"),
    ("p.tsv", "id\tscore\tscore\n1\t0.9\t0.1\n2\t0.2\t0.3\n3\t0.6\t0.5\n4\t0.4\t0.4\n"),
    ("p.csv.gz", gzip.compress(b'id,"score",score\n1,0.9,0.1\n2,0.2,0.3\n3,0.6,0.5\n')),
])
def test_a_duplicated_header_is_an_error_naming_file_and_column(
        cli: Cli, tmp_path: Path, name: str, text: str | bytes) -> None:
    p = write(tmp_path, name, text)
    t = write(tmp_path, "t.csv", TRUTH)
    assert_user_error(cli("compare", p, t), re.escape(name), r"'score'", r"columns 2 and 3",
                      r"fix: rename")


def test_a_duplicated_header_fails_run_and_validate_too(cli: Cli, tmp_path: Path) -> None:
    write(tmp_path, "p.csv", PREDS)
    write(tmp_path, "t.csv", "id,label,id\n1,1,1\n2,0,2\n3,1,3\n4,0,4\n")
    cfg = write(tmp_path, "c.yaml", "task: binary\npredictions: p.csv\ntruth: t.csv\n")
    for command in ("run", "validate"):
        assert_user_error(cli(command, cfg), r"t\.csv", r"'id'", r"columns 1 and 3")


def test_duplicated_parquet_columns_are_an_error(cli: Cli, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_arrays([pa.array([1, 2]), pa.array([0.9, 0.2]), pa.array([0.1, 0.3])],
                                 names=["id", "score", "score"])
    pq.write_table(table, tmp_path / "p.parquet")
    t = write(tmp_path, "t.csv", TRUTH)
    assert_user_error(cli("compare", str(tmp_path / "p.parquet"), t), r"p\.parquet",
                      r"'score'", r"more than once", r"fix: ")


def test_a_duplicated_jsonl_key_is_an_error_naming_the_line(cli: Cli, tmp_path: Path) -> None:
    p = write(tmp_path, "p.jsonl", '{"id": 1, "score": 0.9}\n{"id": 2, "score": 0.2, '
              '"score": 0.7}\n')
    t = write(tmp_path, "t.csv", "id,label\n1,1\n2,0\n")
    assert_user_error(cli("compare", p, t), r"p\.jsonl", r"line 2", r"'score'", r"twice")


def test_other_readers_get_the_same_checks(tmp_path: Path) -> None:
    from evalcli.io.readers import check_source

    with pytest.raises(InputDataError, match=r"p\.csv: the header names a column more than once"):
        check_source(Source(write(tmp_path, "p.csv", "id,score,score\n1,2,3\n")))
    with pytest.raises(InputDataError, match=r"p\.csv\.gz is named \.gz but is not gzip"):
        check_source(Source(write(tmp_path, "p.csv.gz", PREDS), encoding="latin-1"))
    check_source(Source(write(tmp_path, "ok.csv", PREDS)))  # no error, nothing read but the head


def test_header_check_reads_only_the_head(tmp_path: Path) -> None:
    # a bad byte far beyond the head: the scan (schema only) does not see it, the rows do
    rows = "".join(f"{i},0.5\n" for i in range(200_000))
    path = tmp_path / "p.csv"
    path.write_bytes(b"id,score\n" + rows.encode() + b"7,\xff\n")
    lf = scan(Source(str(path)))
    assert lf.collect_schema().names() == ["id", "score"]
    with pytest.raises(pl.exceptions.PolarsError):
        lf.collect()


# ------------------------------------------------------------------ 5. compression by content

@pytest.mark.parametrize("name,kind", [
    ("p.csv.gz", "gzip"), ("p.jsonl.gz", "gzip"), ("p.csv.zst", "zstd"), ("p.tsv.gzip", "gzip")])
def test_a_compressed_name_on_plain_text_is_an_error(cli: Cli, tmp_path: Path, name: str,
                                                      kind: str) -> None:
    text = ('{"id": 1, "score": 0.9}\n{"id": 2, "score": 0.2}\n' if "jsonl" in name
            else PREDS.replace(",", "\t") if ".tsv" in name else PREDS)
    p = write(tmp_path, name, text)
    t = write(tmp_path, "t.csv", TRUTH)
    assert_user_error(cli("compare", p, t), re.escape(name), rf"not {kind}-compressed",
                      r"plain text", r"fix: rename")


def test_compression_none_reads_a_plain_file_named_gz(cli: Cli, tmp_path: Path) -> None:
    write(tmp_path, "p.csv.gz", PREDS)
    write(tmp_path, "t.csv", TRUTH)
    cfg = write(tmp_path, "c.yaml", "task: binary\npredictions: {path: p.csv.gz, compression: "
                "none}\ntruth: t.csv\nmetrics: [auroc]\n")
    assert auroc(cli("run", cfg, "-f", "json")) == 1.0


def test_a_gzip_file_is_read_by_its_content_whatever_its_name(cli: Cli, tmp_path: Path
                                                              ) -> None:
    p = write(tmp_path, "p.csv", gzip.compress(PREDS.encode()))
    t = write(tmp_path, "t.csv", TRUTH)
    assert auroc(cli("compare", p, t, "-f", "json", "-m", "auroc")) == 1.0
    # ... unless the config says it is not compressed
    write(tmp_path, "c.yaml", "task: binary\npredictions: {path: p.csv, compression: none}\n"
          "truth: t.csv\n")
    assert_user_error(cli("run", str(tmp_path / "c.yaml")), r"p\.csv is gzip-compressed",
                      r"compression: none")


def test_a_gzip_compressed_parquet_file_says_so(cli: Cli, tmp_path: Path) -> None:
    pl.DataFrame({"id": [1, 2], "score": [0.9, 0.2]}).write_parquet(tmp_path / "p.parquet")
    raw = (tmp_path / "p.parquet").read_bytes()
    (tmp_path / "p.parquet.gz").write_bytes(gzip.compress(raw))
    t = write(tmp_path, "t.csv", TRUTH)
    assert_user_error(cli("compare", str(tmp_path / "p.parquet.gz"), t), r"p\.parquet\.gz",
                      r"gzip", r"fix: .*gunzip")


def test_a_truncated_gzip_file(cli: Cli, tmp_path: Path) -> None:
    p = write(tmp_path, "p.csv.gz", gzip.compress(PREDS.encode())[:20])
    t = write(tmp_path, "t.csv", TRUTH)
    assert_user_error(cli("compare", p, t), r"p\.csv\.gz", r"truncated or corrupt")


def test_a_qrels_file_named_gz_that_is_not_gzip(cli: Cli, tmp_path: Path) -> None:
    q = write(tmp_path, "t.qrels.gz", "q1 0 d1 1\nq1 0 d2 0\n")
    r = write(tmp_path, "p.run", "q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n")
    assert_user_error(cli("compare", r, q), r"t\.qrels\.gz", r"not gzip-compressed")


# ------------------------------------------------------------------ 11. encodings

LATIN1 = b"id,label,city\n1,1,Paris\n2,0,K\xf6ln\n3,1,Z\xfcrich\n4,0,Paris\n"
GROUPED = "id,score,g\n1,0.9,a\n2,0.2,b\n3,0.6,a\n4,0.4,b\n"


@pytest.mark.parametrize("extra", [[], ["--task", "binary"]])
def test_latin1_bytes_name_the_file_the_line_and_the_encoding_option(
        cli: Cli, tmp_path: Path, extra: list[str]) -> None:
    p = write(tmp_path, "p.csv", GROUPED)
    t = write(tmp_path, "latin1.csv", LATIN1)
    flat = assert_user_error(cli("compare", p, t, "--group-by", "g", *extra), r"latin1\.csv",
                             r"not valid UTF-8", r"line 3", r"encoding: latin-1")
    assert "column types" not in flat


def test_latin1_bytes_beyond_the_head_in_an_inferred_compare(cli: Cli, tmp_path: Path) -> None:
    rows = "".join(f"{i},{i % 2},Paris\n" for i in range(1, 20_000)).encode()
    t = write(tmp_path, "t.csv", b"id,label,city\n" + rows + b"20000,0,K\xf6ln\n")
    p = write(tmp_path, "p.csv", "id,score\n" + "".join(f"{i},0.5\n" for i in range(1, 20_001)))
    assert_user_error(cli("compare", p, t), r"t\.csv", r"not valid UTF-8", r"line 20001",
                      r"encoding")


def test_a_read_error_after_the_head_is_explained_with_file_and_line(tmp_path: Path) -> None:
    rows = "".join(f"{i},Paris\n" for i in range(30_000)).encode()
    path = write(tmp_path, "t.csv", b"id,city\n" + rows + b"30000,K\xf6ln\n")
    source = Source(path)
    from evalcli.io.readers import explain_read_error

    with pytest.raises(pl.exceptions.PolarsError) as info:
        scan(source).collect()
    err = explain_read_error([Source(write(tmp_path, "ok.csv", PREDS)), source], info.value)
    assert err is not None
    assert re.search(r"t\.csv.*not valid UTF-8.*line 30002", err.message), err.message
    assert "encoding" in (err.hint or "")


def test_a_number_that_does_not_parse_after_the_inferred_rows(tmp_path: Path) -> None:
    rows = "".join(f"{i},0.5\n" for i in range(20_000))
    path = write(tmp_path, "p.csv", "id,score\n" + rows + "20000,n/a\n")
    source = Source(path)
    from evalcli.io.readers import explain_read_error

    with pytest.raises(pl.exceptions.PolarsError) as info:
        scan(source).collect()
    err = explain_read_error([source], info.value)
    assert err is not None
    assert re.search(r"p\.csv.*column 'score'.*line 20002.*'n/a'", err.message), err.message
    assert "null_values" in (err.hint or "")


@pytest.mark.parametrize("compress", [False, True])
def test_encoding_latin1_reads_the_file(tmp_path: Path, compress: bool) -> None:
    data = gzip.compress(LATIN1) if compress else LATIN1
    path = write(tmp_path, "t.csv.gz" if compress else "t.csv", data)
    df = scan(Source(path, encoding="latin-1")).collect()
    assert df["city"].to_list() == ["Paris", "Köln", "Zürich", "Paris"]
    assert df["label"].dtype == pl.Int64


def test_encoding_utf8_lossy_and_unknown(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", LATIN1)
    df = scan(Source(path, encoding="utf8-lossy")).collect()
    assert df["city"].to_list()[1] == "K\ufffdln"
    with pytest.raises(InputDataError, match=r"t\.csv: unknown encoding 'klingon'"):
        scan(Source(path, encoding="klingon"))


def test_encoding_utf16_and_its_hint(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "id,city\n1,Köln\n".encode("utf-16"))
    with pytest.raises(InputDataError, match=r"t\.csv is not valid UTF-8: line 1") as info:
        scan(Source(path))
    assert "encoding: utf-16" in (info.value.hint or "")
    assert scan(Source(path, encoding="utf-16")).collect()["city"].to_list() == ["Köln"]


def test_unnamed_trailing_columns_are_not_duplicates(tmp_path: Path) -> None:
    path = write(tmp_path, "p.csv", "id,score,,\n1,0.5,,\n")
    assert scan(Source(path)).collect()["score"].to_list() == [0.5]


def test_encoding_of_jsonl(tmp_path: Path) -> None:
    path = write(tmp_path, "t.jsonl", '{"id": 1, "city": "Köln"}\n'.encode("cp1252"))
    assert scan(Source(path, encoding="cp1252")).collect()["city"].to_list() == ["Köln"]


# ------------------------------------------------------------------ 17. messages

@pytest.mark.parametrize("pred,truth,bad", [
    ("id,score\n", TRUTH, "p.csv"),
    (PREDS, "id,label\n", "t.csv"),
    ("id,score\r\n\r\n", "id,label\n", "p.csv"),
])
def test_a_header_only_csv(cli: Cli, tmp_path: Path, pred: str, truth: str, bad: str) -> None:
    p = write(tmp_path, "p.csv", pred)
    t = write(tmp_path, "t.csv", truth)
    flat = assert_user_error(cli("compare", p, t), rf"{re.escape(bad)} has no data rows, only a "
                             r"header")
    assert "compare string" not in flat and "multiclass" not in flat


def test_a_header_only_single_file(cli: Cli, tmp_path: Path) -> None:
    f = write(tmp_path, "one.csv", "id,score,label\n")
    assert_user_error(cli("compare", f), r"one\.csv has no data rows, only a header")


def test_a_non_numeric_score_quotes_the_bad_value(cli: Cli, tmp_path: Path) -> None:
    p = write(tmp_path, "p.csv", "id,score\n1,0.9\n2,0.2\n3,abc\n4,0.4\n")
    t = write(tmp_path, "t.csv", TRUTH)
    for extra in ([], ["--task", "binary"]):
        flat = assert_user_error(cli("compare", p, t, *extra), r"p\.csv", r"id=3: score='abc'")
        assert "'0.9'" not in flat


def test_a_non_numeric_target_in_one_file_names_the_row(cli: Cli, tmp_path: Path) -> None:
    f = write(tmp_path, "r.csv", "label,prediction\n1.5,1.0\n2.5,2.0\n-,3.0\n4.5,4.0\n")
    flat = assert_user_error(cli("compare", f, "--task", "regression"), r"r\.csv",
                             r"data row 3 .*label='-'")
    assert "'1.5'" not in flat


def test_a_jsonl_syntax_error_names_the_line(cli: Cli, tmp_path: Path) -> None:
    p = write(tmp_path, "p.jsonl", '{"id": 1, "score": 0.9}\n{"id": 2, "score": 0.2}\n'
              '{"id": 3, "score": 0.6\n{"id": 4, "score": 0.4}\n')
    t = write(tmp_path, "t.csv", TRUTH)
    assert_user_error(cli("compare", p, t), r"p\.jsonl", r"line 3", r'\{"id": 3, "score": 0\.6')


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_a_csv_with_another_separator_suggests_it(cli: Cli, tmp_path: Path, sep: str) -> None:
    p = write(tmp_path, "p.csv", PREDS.replace(",", sep))
    t = write(tmp_path, "t.csv", TRUTH)
    shown = "\\t" if sep == "\t" else sep
    assert_user_error(cli("compare", p, t), r"p\.csv", r"one column",
                      rf"separator: \"{re.escape(shown)}\"")


def test_a_tsv_that_is_comma_separated_suggests_it(cli: Cli, tmp_path: Path) -> None:
    write(tmp_path, "p.tsv", PREDS)
    write(tmp_path, "t.csv", TRUTH)
    cfg = write(tmp_path, "c.yaml", "task: binary\npredictions: p.tsv\ntruth: t.csv\n")
    assert_user_error(cli("run", cfg), r"p\.tsv", r'separator: ","')


def test_missing_file_paths_are_relative_to_the_working_directory_in_compare(
        cli: Cli, tmp_path: Path) -> None:
    t = write(tmp_path, "t.csv", TRUTH)
    flat = assert_user_error(cli("compare", str(tmp_path / "nope.csv"), t),
                             r"nope\.csv does not exist", r"working directory")
    assert "config" not in flat
    cfg = write(tmp_path, "c.yaml", "task: binary\npredictions: nope.csv\ntruth: t.csv\n")
    assert_user_error(cli("run", cfg), r"nope\.csv does not exist", r"config's folder")


def test_echoes_of_the_input_are_capped(cli: Cli, tmp_path: Path) -> None:
    wide = ";".join(f"column_number_{i}" for i in range(500))
    p = write(tmp_path, "p.csv", f"{wide}\n" + ";".join("1" * 500) + "\n")
    t = write(tmp_path, "t.csv", TRUTH)
    flat = assert_user_error(cli("compare", p, t), r"p\.csv")
    assert len(flat) < 1200, flat


# ================================================================== second round: the battery's
# findings (issue 19): each ends as exit 2 with one message (file, column, line or key, fix)

# ------------------------------------------------------------------ CR-only line endings

CR_PREDS = "id,score\r1,0.9\r2,0.2\r3,0.6\r4,0.4\r"


@pytest.mark.parametrize("name,data,fix", [
    ("p.csv", CR_PREDS.encode(), r"tr '\\r' '\\n' < p\.csv"),
    ("p.csv.gz", gzip.compress(CR_PREDS.encode()), r"gunzip -c p\.csv\.gz \| tr '\\r' '\\n'"),
    ("p.jsonl", b'{"id": 1, "score": 0.9}\r{"id": 2, "score": 0.2}\r', r"tr '\\r' '\\n'"),
])
def test_cr_only_line_endings_say_so_and_how_to_convert(cli: Cli, tmp_path: Path, name: str,
                                                        data: bytes, fix: str) -> None:
    p = write(tmp_path, name, data)
    t = write(tmp_path, "t.csv", TRUTH)
    assert_user_error(cli("compare", p, t), re.escape(name), r"line 1", r"carriage return",
                      r"\(CR", fix)


def test_cr_only_line_endings_of_a_trec_file_and_of_one_file(cli: Cli, tmp_path: Path) -> None:
    q = write(tmp_path, "t.qrels", "q1 0 d1 1\rq1 0 d2 0\r")
    r = write(tmp_path, "p.run", "q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n")
    assert_user_error(cli("compare", r, q), r"t\.qrels", r"carriage return")
    one = write(tmp_path, "one.csv", "label,score\r1,0.9\r0,0.2\r")
    assert_user_error(cli("compare", one), r"one\.csv", r"carriage return")
    from evalcli.io.readers import check_source

    with pytest.raises(InputDataError, match=r"carriage return"):
        check_source(Source(one))


def test_crs_that_are_not_line_endings_still_read(tmp_path: Path) -> None:
    # CRLF, a CR inside a quoted header name, a CR between the tokens of a JSON record
    assert scan(Source(write(tmp_path, "a.csv", PREDS.replace("\n", "\r\n")))).collect() \
        .height == 4
    df = scan(Source(write(tmp_path, "b.csv", '"a\rb",score\n1,2\n'))).collect()
    assert df.columns == ["a\rb", "score"]
    df = scan(Source(write(tmp_path, "c.jsonl", '{"id": 1,\r "score": 0.9}\n{"id": 2, '
                                                '"score": 0.2}\n'))).collect()
    assert df["score"].to_list() == [0.9, 0.2]


# ------------------------------------------------------------------ magic bytes, long paths

@pytest.mark.parametrize("data", [b"(\xb5/\xfd", b"(\xb5/\xfd" + b"\x00" * 40])
def test_a_csv_holding_the_zstd_magic_bytes_is_one_message(cli: Cli, tmp_path: Path,
                                                             data: bytes) -> None:
    p = write(tmp_path, "p.csv", data)
    t = write(tmp_path, "t.csv", TRUTH)
    for args in (("compare", p, t), ("compare", p)):
        assert_user_error(cli(*args), r"p\.csv", r"zstd", r"magic bytes", r"truncated or "
                          r"corrupt")


def test_a_path_too_long_for_the_system_is_one_short_message(cli: Cli, tmp_path: Path) -> None:
    long = "p" * 2000 + ".csv"
    write(tmp_path, "t.csv", TRUTH)
    cfg = write(tmp_path, "c.yaml", f"task: binary\npredictions: {long}\ntruth: t.csv\n")
    for args in (("run", cfg), ("validate", cfg), ("compare", str(tmp_path / long),
                                                   str(tmp_path / "t.csv"))):
        flat = assert_user_error(cli(*args), r"too long", r"p\.csv", r"2,0\d\d characters")
        assert len(flat) < 800, flat
    with pytest.raises(InputDataError, match=r"too long"):
        scan(Source(str(tmp_path / ("q" * 300) / "p.csv")))


# ------------------------------------------------------------------ objects where values go

def _jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


OBJ_TRUTH = _jsonl([{"id": i, "label": {"a": 1}} for i in range(1, 5)])


@pytest.mark.parametrize("task,preds", [
    ("binary", PREDS),
    ("regression", "id,prediction\n1,0.5\n2,1.5\n3,2.5\n4,3.5\n"),
    ("multiclass", "id,prediction\n1,a\n2,b\n3,a\n4,b\n"),
])
def test_objects_where_a_label_is_wanted_are_named(cli: Cli, tmp_path: Path, task: str,
                                                   preds: str) -> None:
    p = write(tmp_path, "p.csv", preds)
    t = write(tmp_path, "t.jsonl", OBJ_TRUTH)
    cfg = write(tmp_path, "c.yaml", f"task: {task}\npredictions: p.csv\ntruth: t.jsonl\n")
    for args in (("run", cfg), ("validate", cfg), ("compare", p, t, "--task", task)):
        assert_user_error(cli(*args), r"t\.jsonl", r"column 'label'", r"objects",
                          r"row 1: \{'a': 1\}", r"fix: ")


def test_lists_of_labels_for_a_binary_task_point_at_multilabel(cli: Cli, tmp_path: Path
                                                               ) -> None:
    write(tmp_path, "p.csv", PREDS)
    write(tmp_path, "t.jsonl", _jsonl([{"id": i, "label": [i % 2]} for i in range(1, 5)]))
    cfg = write(tmp_path, "c.yaml", "task: binary\npredictions: p.csv\ntruth: t.jsonl\n")
    assert_user_error(cli("run", cfg), r"t\.jsonl", r"'label'", r"holds lists",
                      r"row 1: \[1\]", r"task: multilabel")


def test_object_labels_are_refused_when_compare_infers_the_task(cli: Cli, tmp_path: Path
                                                                ) -> None:
    p = write(tmp_path, "p.csv", PREDS)
    t = write(tmp_path, "t.jsonl", _jsonl([{"id": i, "label": {"a": i % 2}} for i in range(1, 5)]))
    flat = assert_user_error(cli("compare", p, t), r"t\.jsonl", r"label column 'label'",
                             r"objects", r"fix: ")
    assert "--positive" not in flat


def test_a_boolean_prediction_beside_object_labels_is_refused_every_time(
        cli: Cli, tmp_path: Path) -> None:
    # the battery's compare-jsonl-regression-label-objects: a Polars panic in ~3 of 5 runs
    p = write(tmp_path, "p.jsonl", '{"id": 0, "prediction": true}\n'
                                   '{"id": 1, "prediction": false}\n')
    t = write(tmp_path, "t.jsonl", '{"id": 0, "label": {"a": 1}}\n{"id": 1, "label": {"a": 1}}\n')
    for _ in range(5):
        assert_user_error(cli("compare", p, t, "--task", "regression"), r"t\.jsonl",
                          r"'label'", r"objects")


@pytest.mark.parametrize("cfg_extra,files,role", [
    ("", {"p.jsonl": _jsonl([{"id": i, "score": [0.5]} for i in range(1, 5)])}, "score"),
    ("columns: {weight: w}\n",
     {"p.jsonl": _jsonl([{"id": i, "score": 0.5, "w": {"x": 1}} for i in range(1, 5)])},
     "weight"),
])
def test_lists_and_objects_where_a_number_is_wanted(cli: Cli, tmp_path: Path, cfg_extra: str,
                                                   files: dict[str, str], role: str) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    write(tmp_path, "t.csv", TRUTH)
    cfg = write(tmp_path, "c.yaml", "task: binary\npredictions: p.jsonl\ntruth: t.csv\n"
                + cfg_extra)
    assert_user_error(cli("run", cfg), r"p\.jsonl", rf"\(the {role}\)", r"(lists|objects)")


def test_multilabel_and_ranking_refuse_objects_and_keep_their_lists(cli: Cli, tmp_path: Path
                                                                   ) -> None:
    write(tmp_path, "p.jsonl", _jsonl([{"id": 1, "prediction": [{"a": 1}]},
                                       {"id": 2, "prediction": [{"a": 2}]}]))
    write(tmp_path, "t.jsonl", _jsonl([{"id": 1, "label": ["x"]}, {"id": 2, "label": ["y"]}]))
    cfg = write(tmp_path, "c.yaml", "task: multilabel\npredictions: p.jsonl\ntruth: t.jsonl\n")
    assert_user_error(cli("run", cfg), r"p\.jsonl", r"'prediction'", r"lists of objects")
    # lists of labels, and ranked lists of items, are what these tasks read
    write(tmp_path, "p.jsonl", _jsonl([{"id": 1, "prediction": ["x"]},
                                       {"id": 2, "prediction": ["x", "y"]}]))
    assert cli("run", cfg).exit_code == 0
    write(tmp_path, "rp.jsonl", _jsonl([{"query": "q1", "item": ["i1", "i2"]}]))
    write(tmp_path, "rt.csv", "query,item,relevance\nq1,i2,1\n")
    rcfg = write(tmp_path, "r.yaml", "task: ranking\npredictions: rp.jsonl\ntruth: rt.csv\n"
                 "metrics: [mrr]\n")
    r = cli("run", rcfg, "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["metrics"][0]["value"] == 0.5


@pytest.mark.parametrize("engine", ["polars", "streaming"])
def test_ranking_lists_of_other_lengths_name_the_row(cli: Cli, tmp_path: Path, engine: str
                                                    ) -> None:
    """A row whose score (or relevance) list is shorter or longer than its item list: one
    message naming that side's file and the first row, exit 2 (it was an internal error,
    exit 3: the explode of lists of other lengths failed). Lists of equal lengths still run."""
    write(tmp_path, "p.jsonl", _jsonl([{"query": "q1", "item": ["i1", "i2", "i3"],
                                        "score": [0.9, 0.5]},
                                       {"query": "q2", "item": ["i4"], "score": [0.3]}]))
    write(tmp_path, "t.jsonl", _jsonl([{"query": "q1", "item": ["i2"], "relevance": [1]},
                                       {"query": "q2", "item": ["i4", "i5"],
                                        "relevance": [1, 2, 3]}]))
    cfg = write(tmp_path, "c.yaml", f"task: ranking\npredictions: p.jsonl\ntruth: t.jsonl\n"
                f"engine: {engine}\nmetrics: [mrr]\n")
    r = cli("run", cfg)
    assert_user_error(r, r"p\.jsonl", r"rows of the predictions from a list of items",
                      r"first at query='q1'")
    assert "t.jsonl" not in r.stderr
    write(tmp_path, "p.jsonl", _jsonl([{"query": "q1", "item": ["i1", "i2", "i3"],
                                        "score": [0.9, 0.5, 0.1]},
                                       {"query": "q2", "item": ["i4"], "score": [0.3]}]))
    assert_user_error(cli("run", cfg), r"t\.jsonl", r"rows of the truth from a list",
                      r"first at query='q2'")
    write(tmp_path, "t.jsonl", _jsonl([{"query": "q1", "item": ["i2"], "relevance": [1]},
                                       {"query": "q2", "item": ["i4", "i5"],
                                        "relevance": [1, 2]}]))
    r = cli("run", cfg, "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["metrics"][0]["value"] == (1 / 2 + 1) / 2
    # no score list beside an item list: that row is named
    write(tmp_path, "p.jsonl", _jsonl([{"query": "q1", "item": ["i1", "i2"], "score": None},
                                       {"query": "q2", "item": ["i4"], "score": [0.3]}]))
    assert_user_error(cli("run", cfg), r"p\.jsonl", r"rows of the predictions from a list",
                      r"first at query='q1'")
    # no item list at all beside a score list: the null item is the error
    write(tmp_path, "p.jsonl", _jsonl([{"query": "q1", "item": ["i1", "i2"],
                                        "score": [0.9, 0.5]},
                                       {"query": "q2", "item": None, "score": [0.3]}]))
    assert_user_error(cli("run", cfg), r"p\.jsonl", r"null or NaN item", r"query='q2'")


# ------------------------------------------------------------------ lists mixed with text

def test_a_jsonl_key_mixing_lists_and_single_values_names_the_lines(cli: Cli, tmp_path: Path
                                                                    ) -> None:
    write(tmp_path, "p.jsonl", '{"id": 1, "prediction": [1, 2]}\n{"id": 2, "prediction": "x"}\n')
    write(tmp_path, "t.csv", "id,label\n1,politics\n2,sports\n")
    cfg = write(tmp_path, "c.yaml", "task: multilabel\npredictions: p.jsonl\ntruth: t.csv\n")
    assert_user_error(cli("run", cfg), r"p\.jsonl", r"'prediction'", r"line 2", r"line 1",
                      r"list", r"fix: .*\[\"x\"\]")


def test_lists_written_as_text_beyond_the_head_are_refused_by_key(cli: Cli, tmp_path: Path
                                                                  ) -> None:
    # text in the head (64 KiB), a list after it: Polars reads the list as its JSON text
    n = 3000
    rows = [{"id": i, "prediction": "politics"} for i in range(1, n)]
    write(tmp_path, "p.jsonl", _jsonl([*rows, {"id": n, "prediction": ["sports", "travel"]}]))
    write(tmp_path, "t.csv", "id,label\n" + "".join(f"{i},politics\n" for i in range(1, n + 1)))
    cfg = write(tmp_path, "c.yaml", "task: multilabel\npredictions: p.jsonl\ntruth: t.csv\n")
    assert_user_error(cli("run", cfg), r"p\.jsonl", r"prediction", rf"id={n}",
                      r"list written as text")
    # a Python list written into a CSV cell is the same mistake
    write(tmp_path, "p.csv", "id,prediction\n1,\"['politics', 'sports']\"\n2,sports\n")
    write(tmp_path, "t2.csv", "id,label\n1,politics\n2,sports\n")
    cfg2 = write(tmp_path, "c2.yaml", "task: multilabel\npredictions: p.csv\ntruth: t2.csv\n")
    assert_user_error(cli("run", cfg2), r"p\.csv", r"id=1", r"list written as text")
    # a label that merely has brackets is a label
    write(tmp_path, "p.csv", "id,prediction\n1,[draft]|politics\n2,sports\n")
    assert cli("run", cfg2).exit_code == 0


# ------------------------------------------------------------------ TREC fields

@pytest.mark.parametrize("name,text,line,field", [
    ("t.qrels", "q1 0 d1 1\nq1 0 d2 high\n", 2, r"field 4 \(relevance\) holds 'high'"),
    ("p.run", "q1 Q0 d1 1 high t\nq1 Q0 d2 2 0.5 t\n", 1, r"field 5 \(score\) holds 'high'"),
    ("p.run", "q1 Q0 d1 first 0.9 t\nq1 Q0 d2 2 0.5 t\n", 1,
     r"field 4 \(rank\) holds 'first'"),
    ("p.run", "".join(f"q1 Q0 d{i} {i} 0.9 t\n" for i in range(1, 81)) + "q1 Q0 d0 0.5 t\n",
     81, r"5 fields, not at least 6"),
])
def test_a_bad_trec_line_is_named_by_file_line_field_and_value(
        cli: Cli, tmp_path: Path, name: str, text: str, line: int, field: str) -> None:
    files = {"p.run": "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\n", "t.qrels": "q1 0 d1 1\n", name: text}
    for n, content in files.items():
        write(tmp_path, n, content)
    flat = assert_user_error(cli("compare", str(tmp_path / "p.run"), str(tmp_path / "t.qrels")),
                             re.escape(name), rf"line {line}\b", field, r"fix: ")
    other = "t.qrels" if name == "p.run" else "p.run"
    assert other not in flat and "'line'" not in flat and "column types" not in flat, flat


# ------------------------------------------------------------------ JSON has no NaN

@pytest.mark.parametrize("token,line", [("NaN", 3), ("Infinity", 3), ("-Infinity", 2000)])
def test_a_jsonl_nan_names_the_line_and_says_null(cli: Cli, tmp_path: Path, token: str,
                                                  line: int) -> None:
    rows = [f'{{"id": {i}, "score": 0.5}}\n' for i in range(1, 2001)]
    rows[line - 1] = f'{{"id": {line}, "score": {token}}}\n'
    p = write(tmp_path, "p.jsonl", "".join(rows))
    t = write(tmp_path, "t.csv", "id,label\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 2001)))
    assert_user_error(cli("compare", p, t), r"p\.jsonl", rf"line {line}\b", re.escape(token),
                      r"JSON has no", r"null")


# ------------------------------------------------------------------ huge names, clipped

BIG = 100_000


def test_huge_column_names_are_clipped_and_did_you_mean_still_works(cli: Cli, tmp_path: Path
                                                                     ) -> None:
    write(tmp_path, "p.csv", f"id,scroe,{'s' * BIG}\n1,0.9,1\n2,0.2,1\n")
    write(tmp_path, "t.csv", TRUTH)
    cfg = write(tmp_path, "c.yaml", "task: binary\npredictions: p.csv\ntruth: t.csv\n")
    flat = assert_user_error(cli("run", cfg), r"p\.csv", r"'score'", r"Did you mean 'scroe'",
                             r"more characters")
    assert len(flat) < 1000, len(flat)
    # the configured name is the huge one, and the file's column is close to it
    write(tmp_path, "p.csv", f"id,{'s' * BIG}x\n1,0.9\n2,0.2\n")
    write(tmp_path, "c.yaml", f"task: binary\npredictions: p.csv\ntruth: t.csv\n"
          f"columns: {{score: {'s' * BIG}}}\n")
    flat = assert_user_error(cli("run", cfg), r"p\.csv", r"score", r"Did you mean 'sss")
    assert len(flat) < 1000, len(flat)


@pytest.mark.parametrize("args,files", [
    (("--id", "k" * BIG), {"p.csv": PREDS, "t.csv": TRUTH}),
    (("--group-by", "g" * BIG), {"p.csv": PREDS, "t.csv": TRUTH}),
    ((), {"p.csv": PREDS, "t.csv": f"id,{'y' * BIG},{'z' * BIG}\n1,1,1\n"}),
    ((), {"p.csv": f"id,score,{'i' * BIG},{'x' * BIG}_id\n1,0.5,1,1\n",
          "t.csv": f"id,label,{'i' * BIG},{'x' * BIG}_id\n1,1,1,1\n"}),
])
def test_other_messages_that_list_columns_are_clipped(cli: Cli, tmp_path: Path,
                                                      args: tuple[str, ...],
                                                      files: dict[str, str]) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    flat = assert_user_error(cli("compare", str(tmp_path / "p.csv"), str(tmp_path / "t.csv"),
                                 *args))
    assert len(flat) < 1500, flat[:3000]


@pytest.mark.parametrize("engine", ["polars", "streaming"])
def test_integer_and_float_keys_join_as_numbers(cli: Cli, tmp_path: Path, engine: str) -> None:
    """An id written as integers in one file and as floats in the other (pandas writes a column
    with a missing value as floats) joins 12 with 12.0; it was an internal error (exit 3,
    Polars refuses to join i64 with f64). Ranking's query and item alike."""
    pl.DataFrame({"id": [0, 1, 2, 3], "score": [0.9, 0.2, 0.7, 0.4]}).write_parquet(
        tmp_path / "p.parquet")
    pl.DataFrame({"id": [3.0, 2.0, 1.0, 0.0], "label": [0, 1, 0, 1]}).write_parquet(
        tmp_path / "t.parquet")
    cfg = write(tmp_path, "c.yaml", f"task: binary\npredictions: p.parquet\ntruth: t.parquet\n"
                f"engine: {engine}\nmetrics: [auroc]\n")
    r = cli("run", cfg, "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["metrics"][0]["value"] == 1.0
    pl.DataFrame({"query": [1.0, 1.0, 2.0], "item": [5, 6, 5], "score": [0.9, 0.8, 0.7]}
                 ).write_parquet(tmp_path / "rp.parquet")
    pl.DataFrame({"query": [1, 2], "item": [6.0, 5.0], "relevance": [1, 1]}).write_parquet(
        tmp_path / "rt.parquet")
    rcfg = write(tmp_path, "r.yaml", f"task: ranking\npredictions: rp.parquet\n"
                 f"truth: rt.parquet\nengine: {engine}\nmetrics: [mrr]\n")
    r = cli("run", rcfg, "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["metrics"][0]["value"] == (1 / 2 + 1) / 2


def test_segment_columns_of_lists_twice_named_or_with_nan(cli: Cli, tmp_path: Path) -> None:
    """group_by on a list (or struct) column, or naming a column twice: one message, exit 2; a
    float segment column holding NaN: NaN is the missing segment. Each was an internal error
    (exit 3: an unhashable list, a duplicated key, a NaN that equals no segment)."""
    pl.DataFrame({"id": range(6), "score": [0.9, 0.2, 0.7, 0.4, 0.6, 0.1]}).write_parquet(
        tmp_path / "p.parquet")
    pl.DataFrame({"id": range(6), "label": [1, 0, 1, 0, 1, 0],
                  "tags": [["a"], ["b"], ["a"], ["b"], ["a"], ["b"]],
                  "f": [float("nan"), 1.0] * 3}).write_parquet(tmp_path / "t.parquet")

    def cfg(group: str) -> str:
        return write(tmp_path, "c.yaml", "task: binary\npredictions: p.parquet\ntruth: "
                     f"t.parquet\nmetrics: [auroc]\ngroup_by: {group}\n")

    assert_user_error(cli("run", cfg("[tags]")), r"t\.parquet", r"'tags' holds lists",
                      r"one value per row")
    assert_user_error(cli("run", cfg("[f, f]")), r"group_by names column 'f' twice")
    r = cli("run", cfg("[f]"), "-f", "json")
    assert r.exit_code == 0, r.stderr
    segs = json.loads(r.stdout)["segments"]
    assert [(s["key"]["f"], s["rows"]) for s in segs] == [(1.0, 3), (None, 3)]


def test_weights_near_the_largest_float_and_empty_score_objects(cli: Cli, tmp_path: Path
                                                               ) -> None:
    """Weights of 1e308 (their sums overflow): the metrics are undefined with a note, exit 0
    and a quiet stderr (it was exit 3 from math.fsum or a Fraction's float, with NumPy
    warnings printed). Score objects without fields, or an empty score_columns: one message,
    exit 2 (both were internal errors)."""
    pl.DataFrame({"id": range(6), "score": [0.9, 0.2, 0.7, 0.4, 0.6, 0.1],
                  "label": [1, 0, 1, 0, 1, 0], "w": [1e308] * 6}).write_parquet(
        tmp_path / "p.parquet")
    cfg = write(tmp_path, "c.yaml", "task: binary\npredictions: p.parquet\n"
                "columns: {weight: w}\nmetrics: [accuracy, auroc, ece, lift_table, log_loss]\n")
    r = cli("run", cfg, "-q", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ""
    for m in json.loads(r.stdout)["metrics"]:
        assert m["value"] is None or math.isfinite(m["value"]), m
        assert m["value"] is not None or m["notes"], m
    write(tmp_path, "s.jsonl", _jsonl([{"id": "a", "label": 0, "score": {}},
                                       {"id": "b", "label": 1, "score": {}}]))
    scfg = write(tmp_path, "s.yaml", "task: multiclass\npredictions: s.jsonl\n"
                 "metrics: [accuracy, log_loss]\n")
    assert_user_error(cli("run", scfg), r"s\.jsonl", r"'score'", r"objects without fields")
    pl.DataFrame({"id": ["a", "b"], "label": [0, 1], "p0": [0.3, 0.6], "p1": [0.7, 0.4]}
                 ).write_parquet(tmp_path / "w.parquet")
    wcfg = write(tmp_path, "w.yaml", "task: multiclass\npredictions: w.parquet\n"
                 "options: {score_columns: []}\nmetrics: [log_loss]\n")
    assert_user_error(cli("run", wcfg), r"options\.score_columns is empty")


def test_messages_name_the_real_mistake(cli: Cli, tmp_path: Path) -> None:
    """Three configs that got a misleading message (found by the bad-input battery): a column
    named for a second role ('no column label ... Did you mean label?'), a resampling unit
    holding lists ('cannot cast List type'), and a class listed twice in options.classes
    (Polars' "`old` input for `replace` must not contain duplicates")."""
    pl.DataFrame({"id": range(6), "score": [0.9, 0.2, 0.7, 0.4, 0.6, 0.1],
                  "label": [1, 0, 1, 0, 1, 0], "user": [[1], [2], [1], [2], [1], [2]]}
                 ).write_parquet(tmp_path / "p.parquet")
    cfg = write(tmp_path, "c.yaml", "task: binary\npredictions: p.parquet\n"
                "columns: {score: label}\nmetrics: [auroc]\n")
    assert_user_error(cli("run", cfg), r"column 'label' is named for the score role",
                      r"columns: \{label: \.\.\.\}")
    cfg = write(tmp_path, "u.yaml", "task: binary\npredictions: p.parquet\n"
                "metrics: [auroc]\nuncertainty: {unit: user}\n")
    assert_user_error(cli("run", cfg), r"p\.parquet", r"unit column 'user' holds lists",
                      r"one value per row")
    pl.DataFrame({"id": ["a", "b"], "label": [0, 1], "score": [[0.3, 0.7], [0.6, 0.4]]}
                 ).write_parquet(tmp_path / "m.parquet")
    cfg = write(tmp_path, "m.yaml", "task: multiclass\npredictions: m.parquet\n"
                "options: {classes: [0, 1, 1]}\nmetrics: [log_loss]\n")
    assert_user_error(cli("run", cfg), r"options\.classes names 1 twice")


# ------------------------------------------------------------------ misleading messages (battery)

@pytest.mark.parametrize("text,line", [
    ('id,label,score\n1,0,"0.1\n2,1,0.9\n', 2),  # the first row: Polars counts no row at all
    ('id,label,score\n1,0,0.1\n2,1,0.9\n3,1,"0.8\n4,0,0.2\n', 4),  # a later row
])
@pytest.mark.parametrize("gz", [False, True])
def test_an_unclosed_quote_names_its_line(cli: Cli, tmp_path: Path, text: str, line: int,
                                          gz: bool) -> None:
    """A quote that never closes swallowed the rest of the file: it was "no data rows (a
    header only)" when it opened in the first row, and Polars' multi-line parse error later."""
    name = "q.csv.gz" if gz else "q.csv"
    f = write(tmp_path, name, gzip.compress(text.encode()) if gz else text)
    flat = assert_user_error(cli("compare", f, "--task", "binary"), re.escape(name),
                             rf"line {line} opens a quote", r"never closed")
    assert "header only" not in flat


def test_a_ranking_file_whose_lists_are_all_empty(cli: Cli, tmp_path: Path) -> None:
    write(tmp_path, "p.jsonl", _jsonl([{"query": "q1", "item": []},
                                           {"query": "q2", "item": []}]))
    write(tmp_path, "t.jsonl", _jsonl([{"query": "q1", "item": "a", "relevance": 1}]))
    cfg = write(tmp_path, "c.yaml", "task: ranking\npredictions: p.jsonl\ntruth: t.jsonl\n"
                "metrics: [ndcg@5]\n")
    flat = assert_user_error(cli("run", cfg), r"p\.jsonl: every list in column 'item' is "
                             r"empty \(or null\), on all 2 row\(s\)")
    assert "header only" not in flat


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_an_empty_jsonl_file(cli: Cli, tmp_path: Path, text: str) -> None:
    p = write(tmp_path, "p.jsonl", text)
    t = write(tmp_path, "t.csv", TRUTH)
    flat = assert_user_error(cli("compare", p, t), r"p\.jsonl is empty \(no records\)")
    assert "NDJSON" not in flat


@pytest.mark.parametrize("row", ["2,1,0.9,extra", "2,1,0,9"])
def test_a_row_with_more_fields_than_the_header(cli: Cli, tmp_path: Path, row: str) -> None:
    """Polars drops a field beyond the header without a word when it reads some of the
    columns (a one-file run needs no id): a decimal comma gave the score 0 instead of 0.9."""
    f = write(tmp_path, "r.csv", f"id,label,score\n1,0,0.1\n{row}\n3,1,0.8\n")
    assert_user_error(cli("compare", f, "--task", "binary"), r"r\.csv: line 3 holds 4 fields "
                      r"where the header names 3", re.escape(repr(row)), r"decimal comma")
    # a trailing separator on every line (spreadsheets) is an unnamed column, not an error
    ok = write(tmp_path, "ok.csv", "id,label,score,\n1,0,0.1,\n2,1,0.9,\n")
    r = cli("compare", ok, "--task", "binary", "-f", "json")
    assert r.exit_code == 0, r.stderr
    # ... but not on the rows alone (Polars refuses those when it reads every column)
    bad = write(tmp_path, "t.csv", "id,label\n1,1,\n2,0,\n")
    assert_user_error(cli("compare", ok, bad), r"t\.csv: line 2 holds 3 fields where the "
                      r"header names 2 \('1,1,'\)")


def test_a_wide_row_beyond_the_head_is_located(cli: Cli, tmp_path: Path) -> None:
    """Beyond the 64 KiB the head check reads, Polars' "found more fields than defined in
    'Schema'" (a run reading every column) names the line."""
    rows = [f"{i},0.{i % 9}" for i in range(20_000)]
    p = write(tmp_path, "p.csv", "id,score\n" + "\n".join([*rows, "20000,0,5"]) + "\n")
    t = write(tmp_path, "t.csv", "id,label\n" + "".join(f"{i},{i % 2}\n" for i in range(20_001)))
    assert_user_error(cli("compare", p, t), r"p\.csv: line 20002 holds 3 fields where the "
                      r"header names 2 \('20000,0,5'\)")


def test_a_text_weight_column(cli: Cli, tmp_path: Path) -> None:
    pl.DataFrame({"id": [1, 2, 3, 4], "score": [0.9, 0.2, 0.6, 0.4], "label": [1, 0, 1, 0],
                  "w": ["1", "2", "1", "x"]}).write_parquet(tmp_path / "p.parquet")
    cfg = write(tmp_path, "c.yaml", "task: binary\npredictions: p.parquet\n"
                "columns: {weight: w}\nmetrics: [accuracy, log_loss]\n")
    flat = assert_user_error(cli("run", cfg), r"p\.parquet: column 'w' \(the weight\) holds "
                             r"String values, first at row 4: 'x'; a weight is a number")
    assert "arithmetic" not in flat
    pl.DataFrame({"id": [1, 2], "score": [0.9, 0.2], "label": [1, 0],
                  "w": pl.Series(["1", "x"], dtype=pl.Categorical)}
                 ).write_parquet(tmp_path / "c.parquet")
    cfg = write(tmp_path, "cc.yaml", "task: binary\npredictions: c.parquet\n"
                "columns: {weight: w}\nmetrics: [accuracy]\n")
    assert_user_error(cli("run", cfg), r"holds Categorical values, first at row 2: 'x'")
    # a CSV weight column left empty reads as text without a value: its rows are nulls
    f = write(tmp_path, "e.csv", "id,label,score,w\n1,1,0.9,\n2,0,0.2,\n")
    assert_user_error(cli("compare", f, "--task", "binary", "--weight", "w"),
                      r"2 row\(s\) with a null or NaN weight")


def test_a_jsonl_value_of_another_type_names_its_line(cli: Cli, tmp_path: Path) -> None:
    p = write(tmp_path, "p.jsonl", _jsonl([{"id": 1, "label": 0, "score": 1},
                                           {"id": 2, "label": 1, "score": 0.9},
                                           {"id": 3, "label": 1, "score": True}]))
    assert_user_error(cli("compare", p, "--task", "binary"), r"p\.jsonl: line 3: the key "
                      r"'score' holds true \(a boolean\), but on line 1 it holds 1 \(a number\)")


def test_fixed_size_ranking_lists_read_as_lists(cli: Cli, tmp_path: Path) -> None:
    """An Array column (Parquet written from NumPy) was not taken for a list of items."""
    items, scores = [["a", "b", "c"], ["d", "e", "f"]], [[0.9, 0.5, 0.1], [0.3, 0.8, 0.2]]
    for name, dtype_i, dtype_s in (("list", pl.List(pl.String), pl.List(pl.Float64)),
                                   ("array", pl.Array(pl.String, 3), pl.Array(pl.Float64, 3))):
        pl.DataFrame({"query": ["q1", "q2"], "item": pl.Series(items, dtype=dtype_i),
                      "score": pl.Series(scores, dtype=dtype_s)}
                     ).write_parquet(tmp_path / f"{name}.parquet")
    write(tmp_path, "t.jsonl", _jsonl([{"query": "q1", "item": "b", "relevance": 1},
                                       {"query": "q2", "item": "d", "relevance": 2}]))
    reports = []
    for name in ("list", "array"):
        cfg = write(tmp_path, f"{name}.yaml", f"task: ranking\npredictions: {name}.parquet\n"
                    "truth: t.jsonl\nmetrics: [ndcg@2, mrr, precision@1]\n")
        r = cli("run", cfg, "-f", "json")
        assert r.exit_code == 0, r.stderr
        reports.append([(m["id"], m["value"]) for m in json.loads(r.stdout)["metrics"]])
    assert reports[0] == reports[1]
    assert dict(reports[0])["mrr"] == pytest.approx((1 / 2 + 1 / 2) / 2)


def test_a_number_column_with_integers_first_reads_a_later_fraction(cli: Cli, tmp_path: Path
                                                                    ) -> None:
    """Polars infers a text file's column types from its first 10,000 rows: a regression
    target of integers there and 2.5 after was refused ("cannot parse '2.5' (f64) as Int64");
    the numbers of a run's number roles are read as floats."""
    rows = [(i % 7, i % 5) for i in range(10_500)] + [(2.5, 1.5)]
    csv_f = write(tmp_path, "r.csv", "label,prediction\n" + "".join(f"{a},{b}\n" for a, b in rows))
    jsonl_f = write(tmp_path, "r.jsonl", _jsonl([{"label": a, "prediction": b} for a, b in rows]))
    want = sum(abs(a - b) for a, b in rows) / len(rows)
    for f in (csv_f, jsonl_f):
        r = cli("compare", f, "--task", "regression", "-f", "json")
        assert r.exit_code == 0, r.stderr
        got = next(m["value"] for m in json.loads(r.stdout)["metrics"] if m["id"] == "mae")
        assert got == pytest.approx(want, rel=1e-12)


def test_floats_read_for_a_late_fraction_keep_segments_and_lists(cli: Cli, tmp_path: Path
                                                                  ) -> None:
    """A number role's column that is also a segment column keeps its integers (the segment
    named 5 stays 5, so a gate on it still finds it); a JSONL ranking's score lists of
    integers then a fraction are read as lists of floats."""
    write(tmp_path, "r.csv", "label,prediction\n" + "".join(
        f"{1 + i % 5},{1 + i % 4}\n" for i in range(20)))
    cfg = write(tmp_path, "s.yaml", "task: regression\npredictions: r.csv\ngroup_by: [label]\n"
                'metrics: [{metric: mae, segments: {"label=5": {max: 5.0}}}]\n')
    r = cli("run", cfg, "-f", "json")
    assert r.exit_code == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["passed"] is True
    assert [s["key"]["label"] for s in rep["segments"]] == [1, 2, 3, 4, 5]
    lines = [{"query": f"q{i}", "item": ["a", "b"], "score": [2, 1]} for i in range(10_500)]
    lines.append({"query": "q_last", "item": ["a", "b"], "score": [0.2, 0.5]})
    p = write(tmp_path, "p.jsonl", _jsonl(lines))
    t = write(tmp_path, "t.jsonl", _jsonl([{"query": q["query"], "item": "a", "relevance": 1}
                                           for q in lines]))
    r = cli("compare", p, t, "--task", "ranking", "-m", "mrr", "-f", "json")
    assert r.exit_code == 0, r.stderr
    mrr = json.loads(r.stdout)["metrics"][0]["value"]
    assert mrr == pytest.approx((10_500 + 0.5) / 10_501, rel=1e-12)


def test_more_reading_messages(cli: Cli, tmp_path: Path) -> None:
    """The second look at the battery's messages (a review): a quoted header name holding a
    line end is one column; a closed multi-line value is a value, not an open quote; CRLF;
    blank lines in JSONL; a bad separator; a JSONL byte-order mark; blank CSV lines."""
    f = write(tmp_path, "h.csv", '"my\nid",label,score\n1,0,0.1\n2,1,0.9\n')
    r = cli("compare", f, "--task", "binary", "-f", "json")
    assert r.exit_code == 0, r.stderr
    for n in (3, 10_100):  # the value within the rows Polars infers types from, and after
        rows = "".join(f"{i},{i % 2},0.{i % 9}\n" for i in range(n))
        f = write(tmp_path, "m.csv", f'id,label,score\n{rows}{n},1,"0.5\nx"\n0,0,0.2\n')
        flat = assert_user_error(cli("compare", f, "--task", "binary"),
                                 rf"data row {n + 1} .*'0\.5\\nx'")
        assert "opens a quote" not in flat
    f = write(tmp_path, "c.csv", b'id,label,score\r\n1,0,0.1\r\n2,1,"0.8\r\n3,0,0.2\r\n')
    assert_user_error(cli("compare", f, "--task", "binary"), r"line 3 opens a quote")
    f = write(tmp_path, "j.jsonl", '{"id": 1, "label": 0, "score": 0.1}\n\n'
              '{"id": 2, "label": true, "score": 0.9}\n')
    assert_user_error(cli("compare", f, "--task", "binary"), r"line 3: the key 'label' holds true")
    write(tmp_path, "s.csv", "id;label;score\n1;0;0.1\n2;1;0.9\n")
    cfg = write(tmp_path, "s.yaml", 'task: binary\npredictions: {path: s.csv, separator: ";;"}\n'
                "metrics: [auroc]\n")
    assert_user_error(cli("run", cfg), r"predictions\.separator", r"one ASCII character")
    # a JSONL byte-order mark (Polars' "TapeError") is skipped, plain or gzip
    body = b'{"id": 1, "label": 0, "score": 0.1}\n{"id": 2, "label": 1, "score": 0.9}\n'
    plain = auroc(cli("compare", write(tmp_path, "p.jsonl", body), "--task", "binary", "-f",
                      "json"))
    for name, data in (("b.jsonl", codecs.BOM_UTF8 + body),
                       ("b.jsonl.gz", gzip.compress(codecs.BOM_UTF8 + body))):
        r = cli("compare", write(tmp_path, name, data), "--task", "binary", "-f", "json")
        assert auroc(r) == plain
    f = write(tmp_path, "n.csv", "id,label,score\n\n1,0,0.1\n\n2,1,0.9\n")
    assert_user_error(cli("compare", f, "--task", "binary"), r"null or NaN label",
                      r"line 2 of \S*n\.csv is blank, and a blank line reads as a row of nulls")
    # ... but not a blank line inside a quoted value
    f = write(tmp_path, "q.csv", 'id,label,score,note\n1,0,0.1,"a\n\nb"\n2,,0.9,c\n')
    flat = assert_user_error(cli("compare", f, "--task", "binary"), r"null or NaN label")
    assert "blank" not in flat
    pl.DataFrame({"query": ["q1", "q2"], "item": pl.Series([[], []], dtype=pl.Array(pl.String, 0))}
                 ).write_parquet(tmp_path / "a.parquet")
    write(tmp_path, "t.jsonl", _jsonl([{"query": "q1", "item": "a", "relevance": 1}]))
    cfg = write(tmp_path, "a.yaml", "task: ranking\npredictions: a.parquet\ntruth: t.jsonl\n"
                "metrics: [ndcg@5]\n")
    assert_user_error(cli("run", cfg), r"a\.parquet: every list in column 'item' is empty")


@pytest.mark.parametrize("engine", ["polars", "streaming"])
def test_ranking_rows_dropped_for_a_null_are_counted(cli: Cli, tmp_path: Path, engine: str
                                                     ) -> None:
    """Under nulls: drop, a ranking's rows with a null item left the lists, but the report
    said 'dropped_nulls: 0' (its full join was not counted) while the hint promises the
    count."""
    pl.DataFrame({"query": ["q1", "q1", "q1", "q1", "q2", "q2"],
                  "item": ["a", None, "b", None, "c", "d"],
                  "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]}).write_parquet(tmp_path / "p.parquet")
    pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["a", "b", "d"]}
                 ).write_parquet(tmp_path / "t.parquet")
    cfg = write(tmp_path, "c.yaml", "task: ranking\npredictions: p.parquet\ntruth: t.parquet\n"
                "metrics: [ndcg@5]\nalignment: {nulls: drop}\n")
    r = cli("run", cfg, "--engine", engine, "-f", "json")
    assert r.exit_code == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["alignment"]["dropped_nulls"] == 2
    assert rep["alignment"]["matched"] == 3
    # q1 ranks a then b once the null items are gone: ndcg@5 = 1; q2: d second of two
    assert rep["metrics"][0]["value"] == pytest.approx((1 + 1 / math.log2(3) / 1) / 2)
    r = cli("run", cfg, "--engine", engine)
    assert "rows dropped for a null (nulls: drop): 2" in " ".join(r.stdout.split())
