"""Property-based fuzzing of the readers and the config loader, through the CLI (issue 19).

Whatever the bytes of an input file or the keys and values of a config, evalcli answers with an
exit code in {0, 1, 2}: never a traceback, never an internal error (3); exit 2 is exactly one
``error:`` message, capped in length, with nothing on stdout, and a report that existed before
the run is left as it was. The named cases are in ``tests/test_battery.py``.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CliResult

Cli = Callable[..., CliResult]

SENTINEL = b'{"sentinel": "a report written before this run"}\n'
MAX_STDERR = 2_000
SETTINGS = settings(max_examples=50, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, HealthCheck.data_too_large])

BIN_P = "id,score\n1,0.9\n2,0.2\n3,0.6\n4,0.4\n"
BIN_T = "id,label\n1,1\n2,0\n3,1\n4,0\n"


def folder(base: Path) -> Path:
    """A fresh folder per example (hypothesis reuses the test's tmp_path)."""
    return Path(tempfile.mkdtemp(dir=base))


def invoke(cli: Cli, d: Path, *args: str) -> CliResult:
    """Run the CLI with ``-o out.json`` (sentinel content before) and check the contract."""
    out = d / "out.json"
    out.write_bytes(SENTINEL)
    before = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}
    try:
        r = cli(*args, "-o", str(out))
    except Exception:
        pytest.fail(f"an exception escaped the CLI:\n{traceback.format_exc()}")
    said = f"exit {r.exit_code}\n--- stdout\n{r.stdout[:2000]}\n--- stderr\n{r.stderr[:3000]}"
    assert r.exit_code in (0, 1, 2), said
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, said
    assert len(r.stderr) < MAX_STDERR, f"stderr is {len(r.stderr):,} characters\n{said}"
    if r.exit_code == 2:
        assert r.stdout == "", said
        assert r.stderr.count("error:") == 1, said
        after = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}
        assert after == before, f"a failed run changed files\n{said}"
    else:
        assert "metrics" in json.loads(out.read_text()), said
    assert not [p.name for p in d.iterdir() if p.name.endswith(".tmp")], said
    return r


# --------------------------------------------------------------------------- random bytes

FILE_KINDS = ("csv", "tsv", "jsonl", "parquet", "csv.gz", "qrels", "run")


@SETTINGS
@given(data=st.binary(max_size=3_000), kind=st.sampled_from(FILE_KINDS),
       side=st.sampled_from(["predictions", "truth"]))
def test_random_bytes_as_an_input_file(cli: Cli, tmp_path: Path, data: bytes, kind: str,
                                       side: str) -> None:
    d = folder(tmp_path)
    name = f"{side}.{kind}"
    (d / name).write_bytes(data)
    if kind in ("qrels", "run"):
        trec = ("truth.qrels", "q1 0 d1 1\nq1 0 d2 0\n") if side == "predictions" else (
            "predictions.run", "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\n")
        (d / trec[0]).write_text(trec[1])
        files = (name, trec[0]) if side == "predictions" else (trec[0], name)
        invoke(cli, d, "compare", str(d / files[0]), str(d / files[1]), "--task", "ranking")
        return
    other_name, other = ("truth.csv", BIN_T) if side == "predictions" else ("preds.csv", BIN_P)
    (d / other_name).write_text(other)
    cfg = d / "c.yaml"
    p, t = (name, other_name) if side == "predictions" else (other_name, name)
    cfg.write_text(f"task: binary\npredictions: {p}\ntruth: {t}\n")
    invoke(cli, d, "run", str(cfg))


@SETTINGS
@given(data=st.binary(max_size=3_000))
def test_random_bytes_as_a_compare_input(cli: Cli, tmp_path: Path, data: bytes) -> None:
    d = folder(tmp_path)
    (d / "p.csv").write_bytes(data)
    invoke(cli, d, "compare", str(d / "p.csv"))


@SETTINGS
@given(data=st.binary(max_size=3_000), command=st.sampled_from(["run", "validate"]))
def test_random_bytes_as_a_config(cli: Cli, tmp_path: Path, data: bytes, command: str) -> None:
    d = folder(tmp_path)
    (d / "preds.csv").write_text(BIN_P)
    (d / "truth.csv").write_text(BIN_T)
    (d / "c.yaml").write_bytes(data)
    if command == "run":
        invoke(cli, d, "run", str(d / "c.yaml"))
        return
    r = cli("validate", str(d / "c.yaml"))
    assert r.exit_code in (0, 2) and "Traceback" not in r.stderr, (r.exit_code, r.stderr)
    assert len(r.stderr) < MAX_STDERR
    if r.exit_code == 2:
        assert r.stderr.count("error:") == 1 and r.stdout == "", r.stderr


# --------------------------------------------------------------------------- broken cells

GOOD_SCORES = st.floats(0, 1, allow_nan=False).map(lambda x: f"{x:.3f}")
BROKEN = st.one_of(
    st.sampled_from(["", "nan", "NaN", "inf", "-inf", "NA", "null", "None", "high", "1e999",
                     "0x1F", "1,5", "\"", "\"\"", "'", " ", "\t", "\x00", "\u00e9", "\ufeff",
                     "1\r", "\u202e1", "😀", "[1, 2]", "{}", "true", "-0", "1e-400"]),
    st.text(max_size=12),
    st.text(alphabet="x", min_size=3_000, max_size=3_000),
)
CELL = st.one_of(GOOD_SCORES, GOOD_SCORES, BROKEN)
LABEL = st.one_of(st.sampled_from(["0", "1"]), st.sampled_from(["0", "1"]), BROKEN)
TASKS = ("binary", "regression", "multiclass", "multilabel")


def csv_line(cells: list[str], quote: bool) -> str:
    if quote:
        return ",".join('"' + c.replace('"', '""') + '"' for c in cells) + "\n"
    return ",".join(cells) + "\n"


@SETTINGS
@given(rows=st.lists(st.tuples(LABEL, CELL), min_size=1, max_size=12),
       quote=st.booleans(), task=st.sampled_from(TASKS), two_files=st.booleans())
def test_csv_with_broken_cells(cli: Cli, tmp_path: Path, rows: list[tuple[str, str]],
                               quote: bool, task: str, two_files: bool) -> None:
    d = folder(tmp_path)
    role = "score" if task == "binary" else "prediction"
    if two_files:
        (d / "p.csv").write_text("id," + role + "\n" + "".join(
            csv_line([str(i), s], quote) for i, (_, s) in enumerate(rows)), encoding="utf-8")
        (d / "t.csv").write_text("id,label\n" + "".join(
            csv_line([str(i), y], quote) for i, (y, _) in enumerate(rows)), encoding="utf-8")
        invoke(cli, d, "compare", str(d / "p.csv"), str(d / "t.csv"), "--task", task)
    else:
        (d / "p.csv").write_text(f"label,{role}\n" + "".join(
            csv_line([y, s], quote) for y, s in rows), encoding="utf-8")
        invoke(cli, d, "compare", str(d / "p.csv"), "--task", task)


JSON_VALUE = st.one_of(
    st.floats(0, 1), st.floats(allow_nan=True, allow_infinity=True), st.integers(),
    st.booleans(), st.none(), st.text(max_size=10), st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.text(alphabet="y", min_size=3_000, max_size=3_000),
)


def jsonl_line(record: dict[str, Any], broken: int) -> str:
    text = json.dumps(record, allow_nan=True)
    if broken == 1:
        return text[: max(1, len(text) // 2)] + "\n"  # a truncated record
    if broken == 2:
        return text.replace("{", "[", 1) + "\n"  # not an object
    return text + "\n"


@SETTINGS
@given(rows=st.lists(st.tuples(JSON_VALUE, JSON_VALUE, st.sampled_from([0] * 8 + [1, 2])),
                     min_size=1, max_size=10),
       task=st.sampled_from(TASKS))
def test_jsonl_with_broken_cells(cli: Cli, tmp_path: Path,
                                 rows: list[tuple[Any, Any, int]], task: str) -> None:
    d = folder(tmp_path)
    role = "score" if task == "binary" else "prediction"
    (d / "p.jsonl").write_text("".join(
        jsonl_line({"id": i, role: s}, broken) for i, (_, s, broken) in enumerate(rows)))
    (d / "t.jsonl").write_text("".join(
        jsonl_line({"id": i, "label": y}, 0) for i, (y, _, _) in enumerate(rows)))
    invoke(cli, d, "compare", str(d / "p.jsonl"), str(d / "t.jsonl"), "--task", task)


PARQUET_COLUMN = st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=3, max_size=3),
    st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=3, max_size=3),
    st.lists(st.text(max_size=5), min_size=3, max_size=3),
    st.lists(st.integers(-(2**63), 2**63 - 1), min_size=3, max_size=3),
    st.lists(st.booleans(), min_size=3, max_size=3),
    st.lists(st.lists(st.integers(0, 3), max_size=3), min_size=3, max_size=3),
)


@SETTINGS
@given(label=PARQUET_COLUMN, score=PARQUET_COLUMN, task=st.sampled_from(TASKS),
       cut=st.one_of(st.none(), st.floats(0.05, 0.99)))
def test_parquet_with_odd_columns(cli: Cli, tmp_path: Path, label: list[Any], score: list[Any],
                                  task: str, cut: float | None) -> None:
    d = folder(tmp_path)
    role = "score" if task == "binary" else "prediction"
    buf = io.BytesIO()
    pl.DataFrame({"label": label, role: score}, strict=False).write_parquet(buf)
    raw = buf.getvalue()
    (d / "p.parquet").write_bytes(raw[: int(len(raw) * cut)] if cut is not None else raw)
    invoke(cli, d, "compare", str(d / "p.parquet"), "--task", task)


@SETTINGS
@given(text=st.text(max_size=400), compress=st.sampled_from(["none", "gzip", "truncated"]))
def test_text_file_as_csv_gz(cli: Cli, tmp_path: Path, text: str, compress: str) -> None:
    d = folder(tmp_path)
    data = text.encode("utf-8", "surrogatepass") if compress == "none" else gzip.compress(
        text.encode("utf-8", "surrogatepass"))
    if compress == "truncated":
        data = data[: len(data) // 2]
    (d / "p.csv.gz").write_bytes(data)
    (d / "t.csv").write_text(BIN_T)
    invoke(cli, d, "compare", str(d / "p.csv.gz"), str(d / "t.csv"))


# --------------------------------------------------------------------------- random configs

KNOWN_KEYS = ["task", "predictions", "truth", "columns", "options", "metrics", "group_by",
              "alignment", "engine", "report", "baseline", "curves", "per_query", "spark"]
NESTED_KEYS = ["path", "format", "separator", "compression", "null_values", "has_header", "id",
               "label", "score", "prediction", "weight", "extra", "unmatched", "nulls",
               "metric", "min", "max", "segments", "k", "threshold", "average", "positive",
               "labels", "label", "layout", "delimiter", "compat", "master", "conf"]
SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 20), st.floats(allow_nan=True),
    st.text(max_size=12).filter(lambda s: s.strip().lower() != "spark"),
    st.sampled_from(["binary", "multiclass", "multilabel", "ranking", "regression", "preds.csv",
                     "truth.csv", "auroc", "ndcg@10", "f1", "fbeta[beta=2]", "drop", "error",
                     "csv", "parquet", "label", "score", "id", "nope.csv", "r.md", "x.pdf",
                     "polars", "streaming", "auto", "*", "@", "[", "{", "!!python/none"]),
)


def _values(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = st.one_of(st.sampled_from(NESTED_KEYS + KNOWN_KEYS), st.text(max_size=8))
    return st.one_of(st.lists(children, max_size=4),
                     st.dictionaries(keys, children, max_size=4))


VALUE = st.recursive(SCALAR, _values, max_leaves=12)
BASE = {"task": "binary", "predictions": "preds.csv", "truth": "truth.csv"}


@SETTINGS
@given(mapping=st.dictionaries(st.one_of(st.sampled_from(KNOWN_KEYS), st.text(max_size=10)),
                               VALUE, max_size=6),
       keep_base=st.booleans(), command=st.sampled_from(["run", "validate"]))
def test_random_yaml_mappings(cli: Cli, tmp_path: Path, mapping: dict[str, Any],
                              keep_base: bool, command: str) -> None:
    d = folder(tmp_path)
    (d / "preds.csv").write_text(BIN_P)
    (d / "truth.csv").write_text(BIN_T)
    config = {**BASE, **mapping} if keep_base else mapping
    if str(config.get("engine", "")).strip().lower() == "spark":
        config["engine"] = "polars"  # a Spark session is not what this property is about
    (d / "c.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    if command == "run":
        invoke(cli, d, "run", str(d / "c.yaml"))
        return
    r = cli("validate", str(d / "c.yaml"))
    said = f"exit {r.exit_code}\n{r.stderr[:3000]}"
    assert r.exit_code in (0, 2) and "Traceback" not in r.stderr, said
    assert len(r.stderr) < MAX_STDERR, said
    if r.exit_code == 2:
        assert r.stderr.count("error:") == 1 and r.stdout == "", said


METRIC_ENTRY = st.one_of(
    st.sampled_from(["auroc", "f1", "fbeta", "accuracy", "log_loss", "peak_f1", "aucroc"]),
    st.builds(lambda m, k: f"{m}@{k}", st.sampled_from(["auroc", "precision", "f1"]),
              st.integers(-3, 3)),
    st.fixed_dictionaries({"metric": st.sampled_from(["auroc", "fbeta", "recall", "f1"])},
                          optional={"min": SCALAR, "max": SCALAR, "beta": SCALAR,
                                    "threshold": SCALAR, "segments": VALUE,
                                    "bogus": SCALAR}),
)


@SETTINGS
@given(metrics=st.lists(METRIC_ENTRY, max_size=4),
       columns=st.dictionaries(st.sampled_from(["id", "label", "score", "prediction", "weight",
                                                "scroe"]),
                               st.one_of(st.sampled_from(["id", "label", "score", "w"]), SCALAR),
                               max_size=2),
       alignment=st.dictionaries(st.sampled_from(["unmatched", "nulls", "unmatch"]),
                                 st.sampled_from(["error", "drop", "ignore", None]), max_size=2))
def test_random_metric_and_column_entries(cli: Cli, tmp_path: Path, metrics: list[Any],
                                          columns: dict[str, Any],
                                          alignment: dict[str, Any]) -> None:
    d = folder(tmp_path)
    (d / "preds.csv").write_text(BIN_P)
    (d / "truth.csv").write_text(BIN_T)
    config: dict[str, Any] = dict(BASE)
    if metrics:
        config["metrics"] = metrics
    if columns:
        config["columns"] = columns
    if alignment:
        config["alignment"] = alignment
    (d / "c.yaml").write_text(yaml.safe_dump(config))
    invoke(cli, d, "run", str(d / "c.yaml"))


def test_fuzz_strategies_make_what_they_promise() -> None:
    """The JSONL helper breaks lines as asked (so the property tests what it says)."""
    rec = {"id": 1, "score": math.inf}
    assert jsonl_line(rec, 0) == '{"id": 1, "score": Infinity}\n'
    with pytest.raises(json.JSONDecodeError):
        json.loads(jsonl_line(rec, 1))
    assert jsonl_line(rec, 2).startswith("[")
