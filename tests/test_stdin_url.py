"""Inputs that are not local files (issue 16, items 9 and 10): standard input (``-``) and URLs.

Standard input is read through a real pipe (a subprocess): ``some_model | evalcli compare -
truth.parquet`` must give the values the file gives, whatever its format, and name itself
``<stdin>`` in messages and reports. An http(s) URL is read from a local server that does not
answer range requests (Polars alone cannot read from such a server); an unreachable host fails
at once with "cannot reach", not after retries with "check the file's format".
"""

from __future__ import annotations

import gzip
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "sample_data"
PRED = DATA / "binary_predictions.csv"
TRUTH = DATA / "binary_truth.csv"


def evalcli(*args: str, stdin: bytes | None = None, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "evalcli", *args], input=stdin,
                          capture_output=True, cwd=cwd, timeout=120,
                          env={**os.environ, **(env or {})},
                          stdin=subprocess.DEVNULL if stdin is None else None)


def values(proc: subprocess.CompletedProcess[bytes]) -> dict[str, float | None]:
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout)
    return {m["id"]: m["value"] for m in report["metrics"]}


@pytest.fixture(scope="module")
def expected() -> dict[str, float | None]:
    return values(evalcli("compare", str(PRED), str(TRUTH), "-f", "json"))


def error_of(proc: subprocess.CompletedProcess[bytes]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr.decode())
    err = proc.stderr.decode()
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("kind", ["csv", "tsv", "jsonl", "jsonl.gz", "parquet"])
def test_standard_input_gives_the_values_the_file_gives(kind: str,
                                                        expected: dict[str, float | None],
                                                        tmp_path: Path) -> None:
    import polars as pl

    frame = pl.read_csv(PRED)
    if kind == "csv":
        data = PRED.read_bytes()
    elif kind == "tsv":
        frame.write_csv(tmp_path / "p.tsv", separator="\t")
        data = (tmp_path / "p.tsv").read_bytes()
    elif kind.startswith("jsonl"):
        frame.write_ndjson(tmp_path / "p.jsonl")
        data = (tmp_path / "p.jsonl").read_bytes()
        data = gzip.compress(data) if kind.endswith(".gz") else data
    else:
        frame.write_parquet(tmp_path / "p.parquet")
        data = (tmp_path / "p.parquet").read_bytes()
    proc = evalcli("compare", "-", str(TRUTH), "-f", "json", stdin=data)
    assert values(proc) == expected
    assert json.loads(proc.stdout)["inputs"]["predictions"]["path"] == "<stdin>"


def test_truth_on_standard_input_and_dev_stdin(expected: dict[str, float | None]) -> None:
    assert values(evalcli("compare", str(PRED), "-", "-f", "json",
                          stdin=TRUTH.read_bytes())) == expected
    assert values(evalcli("compare", "/dev/stdin", str(TRUTH), "-f", "json",
                          stdin=PRED.read_bytes())) == expected


def test_format_in_wins_over_the_content_and_names_a_file_without_extension(
        expected: dict[str, float | None], tmp_path: Path) -> None:
    err = error_of(evalcli("compare", "-", str(TRUTH), "--format-in", "parquet",
                           stdin=PRED.read_bytes()))
    assert "<stdin>" in err and "parquet" in err
    out = tmp_path / "preds.out"
    out.write_bytes(PRED.read_bytes())
    err = error_of(evalcli("compare", str(out), str(TRUTH)))
    assert "cannot tell the file format" in err
    assert values(evalcli("compare", str(out), str(TRUTH), "--format-in", "csv",
                          "-f", "json")) == expected


def test_a_config_may_read_standard_input(expected: dict[str, float | None],
                                          tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"task: binary\npredictions: '-'\ntruth: {TRUTH}\n"
                   "columns: {id: id, label: label, score: score, prediction: prediction}\n")
    got = values(evalcli("run", str(cfg), "-f", "json", stdin=PRED.read_bytes()))
    assert got == expected


def test_empty_standard_input_is_one_message() -> None:
    err = error_of(evalcli("compare", "-", str(TRUTH), stdin=b""))
    assert "standard input ('-') is empty" in err


def test_both_inputs_on_standard_input_is_refused(tmp_path: Path) -> None:
    err = error_of(evalcli("compare", "-", "-", stdin=PRED.read_bytes()))
    assert "both read standard input" in err and "fix: pipe one of them" in err
    cfg = tmp_path / "c.yaml"
    cfg.write_text("task: binary\npredictions: '-'\ntruth: /dev/stdin\n")
    err = error_of(evalcli("run", str(cfg), stdin=b""))
    assert f"{cfg}: predictions and truth both read standard input" in err


def test_a_bad_standard_input_is_named_in_the_message() -> None:
    err = error_of(evalcli("compare", "-", str(TRUTH), stdin=b"id,score,score\n1,0.5,0.5\n"))
    assert err.startswith("error: <stdin>:") and "'score'" in err


# --------------------------------------------------------------------------- URLs

class _NoRanges(http.server.SimpleHTTPRequestHandler):
    """Plain GET only (Python's server ignores Range: Polars' object store cannot read it)."""

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    def handler(*a: object, **k: object) -> _NoRanges:
        return _NoRanges(*a, directory=str(DATA), **k)  # type: ignore[arg-type]

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("name", ["binary_predictions.csv", "binary_predictions.parquet",
                                  "binary_predictions.jsonl"])
def test_an_http_url_is_read(server: str, name: str, expected: dict[str, float | None]) -> None:
    got = values(evalcli("compare", f"{server}/{name}?token=x", str(TRUTH), "-f", "json"))
    assert got == expected


def test_an_http_error_names_the_url_and_the_status(server: str) -> None:
    err = error_of(evalcli("compare", f"{server}/nothere.csv", str(TRUTH)))
    assert f"cannot read {server}/nothere.csv: the server answered HTTP 404" in err


@pytest.mark.parametrize("scheme", ["http", "s3"])
def test_an_unreachable_url_fails_at_once(scheme: str) -> None:
    port = _closed_port()
    if scheme == "http":
        url, env = f"http://127.0.0.1:{port}/p.csv", {}
    else:
        url, env = "s3://bucket/p.parquet", {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"}
    err = error_of(evalcli("compare", url, str(TRUTH), env=env))
    assert f"cannot reach {url}" in err and "check the file's format" not in err
    assert "Warning" not in err


def test_engine_spark_reads_standard_input(expected: dict[str, float | None]) -> None:
    """Spark's readers take paths its executors can open; standard input is read by evalcli
    on the driver and handed to Spark, with the same values."""
    got = values(evalcli("compare", "-", str(TRUTH), "-f", "json", "--engine", "spark",
                         stdin=PRED.read_bytes()))
    assert got == expected
