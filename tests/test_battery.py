"""The bad-input and fault battery (issue 19, "Trust"): one table of named cases, one driver.

Each case is the files to write, the command line, the exit code it must give and the patterns
its single message must match. The driver (:func:`drive`) runs the CLI in-process and checks,
for every case: the exit code; no traceback anywhere; on an error, nothing on stdout, exactly
one ``error:`` message, capped in length; the patterns (the file, the column, the row or the
key named); and that the folder is byte-identical afterwards: a report that was there before
(``out.json``, written with sentinel content before every run) is unchanged, the inputs too,
and no temporary file is left. Successful cases (exit 0 or 1) check what they are about with a
``check`` function instead (a column named ``weight`` changes nothing, a BOM or CRLF reads as
plain text, a Markdown report escapes HTML from the data).

A few cases need a real process: SIGINT in the middle of a large run, a YAML alias bomb under a
memory limit, and an internal error through the console-script entry point.

Hypothesis fuzzing of the readers and the config loader is in ``tests/test_battery_fuzz.py``.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.conftest import ROOT, CliResult

Cli = Callable[..., CliResult]

SENTINEL = b'{"sentinel": "a report written before this run; it must survive a failed run"}\n'
MAX_STDERR = 2_000
LONG = 100_000  # a 100 KB column name, cell or key: the message must not echo all of it


# --------------------------------------------------------------------------- file contents

@dataclass(frozen=True)
class Parquet:
    """A Parquet file of these columns; ``cut`` keeps that fraction of its bytes (truncated)."""

    columns: Mapping[str, list[Any]]
    cut: float | None = None
    schema: Mapping[str, Any] | None = None

    def data(self) -> bytes:
        buf = io.BytesIO()
        pl.DataFrame(dict(self.columns), schema=dict(self.schema) if self.schema else None,
                     strict=False).write_parquet(buf)
        raw = buf.getvalue()
        return raw[: int(len(raw) * self.cut)] if self.cut is not None else raw


@dataclass(frozen=True)
class Link:
    """A symbolic link to another file of the case."""

    target: str


Content = str | bytes | Parquet | Link


def materialize(folder: Path, files: Mapping[str, Content]) -> None:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            path.symlink_to(content.target)
        elif isinstance(content, Parquet):
            path.write_bytes(content.data())
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))


def cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v != v:
        return "NaN"
    return str(v)


def table(fmt: str, columns: Mapping[str, list[Any]]) -> Content:
    """The same columns as a csv, tsv, csv.gz, parquet or jsonl file."""
    names = list(columns)
    rows = list(zip(*columns.values(), strict=True))
    if fmt in ("csv", "tsv", "csv.gz"):
        sep = "\t" if fmt == "tsv" else ","
        text = sep.join(names) + "\n" + "".join(sep.join(cell(v) for v in r) + "\n" for r in rows)
        return gzip.compress(text.encode()) if fmt == "csv.gz" else text
    if fmt == "jsonl":
        return "".join(json.dumps(dict(zip(names, r, strict=True))) + "\n" for r in rows)
    assert fmt == "parquet"
    return Parquet(columns)


# --------------------------------------------------------------------------- the driver

@dataclass(frozen=True)
class Case:
    """One battery case: files, command line, expected exit code and message patterns."""

    args: tuple[str, ...]
    files: Mapping[str, Content] = field(default_factory=dict)
    code: int = 2
    patterns: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    """Patterns the message must NOT match."""
    output: bool = True
    """Add ``-o out.json`` (a report that exists before the run, with sentinel content)."""
    check: Callable[[Path, CliResult, Cli], None] | None = None
    """Extra checks of a successful run: (folder, result, cli)."""
    bug: str | None = None
    """``module:attribute`` replaced by a function raising an unexpected exception (a bug)."""
    usage: bool = False
    """A command-line usage error reported by the option parser (its own error box)."""


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every file below ``folder``: its bytes (a link: where it points)."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = path.read_bytes()
        elif path.is_dir():
            out[rel] = "dir"
    return out


def temp_files(folder: Path) -> list[str]:
    return [str(p.relative_to(folder)) for p in folder.rglob("*")
            if p.name.endswith((".tmp", ".temp", ".part")) or p.name.startswith(".")]


class Bug(RuntimeError):
    """The unexpected exception an injected bug raises."""


def _raise_bug(*_args: Any, **_kwargs: Any) -> Any:
    raise Bug("injected failure: an internal error, not bad input")


def one_message(stderr: str) -> None:
    assert stderr.count("error:") == 1, f"not exactly one 'error:' message:\n{stderr}"


def drive(cli: Cli, folder: Path, monkeypatch: pytest.MonkeyPatch, case: Case) -> CliResult:
    """Run one case in ``folder`` (the working directory) and check everything it promises."""
    monkeypatch.chdir(folder)
    materialize(folder, case.files)
    (folder / "out.json").write_bytes(SENTINEL)
    before = snapshot(folder)
    args = [a.replace("{d}", str(folder)) for a in case.args]
    if case.output:  # first, so that a bad output named later must not let it be written
        args = [args[0], "-o", "out.json", *args[1:]]
    if case.bug:
        module, attr = case.bug.split(":")
        monkeypatch.setattr(f"{module}.{attr}", _raise_bug)
    try:
        r = cli(*args)
    except Exception:  # escaped the CLI: the user would see a traceback
        pytest.fail(f"evalcli {' '.join(a[:80] for a in args)}: an exception escaped the CLI "
                    f"(a traceback for the user):\n{traceback.format_exc()}")
    said = f"exit {r.exit_code}\n--- stdout\n{r.stdout[:3000]}\n--- stderr\n{r.stderr[:3000]}"
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, said
    assert len(r.stderr) < MAX_STDERR, f"stderr is {len(r.stderr):,} characters:\n{said}"
    assert r.exit_code == case.code, said
    flat = " ".join(r.stderr.split())  # the console may wrap long lines
    if case.code == 2:
        assert r.stdout == "", said
        if case.usage:
            assert len(re.findall(r"(?m)^(?:╭─ Error|Error:|error:)", r.stderr)) == 1, said
        else:
            one_message(r.stderr)
    if case.code == 3:
        assert r.stdout == "", said
        assert r.exit_code != 1
        bug_lines = [line for line in r.stderr.splitlines() if re.search(r"(?i)\bbug\b", line)]
        assert len(bug_lines) == 1, f"no single line saying it is a bug:\n{said}"
        assert len(r.stderr.strip().splitlines()) <= 3, said
    for p in case.patterns:
        assert re.search(p, flat), f"{p!r} not in the message:\n{said}"
    for p in case.absent:
        assert not re.search(p, flat), f"{p!r} should not be in the message:\n{said}"
    if case.code >= 2:
        after = snapshot(folder)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        assert not changed, f"a failed run changed or left files: {changed}\n{said}"
    else:
        assert not temp_files(folder), temp_files(folder)
        if case.output:
            written = json.loads((folder / "out.json").read_text())
            assert "metrics" in written, written
    if case.check is not None:
        case.check(folder, r, cli)
    return r


# --------------------------------------------------------------------------- the table

CASES: list[Any] = []


def add(id_: str, case: Case) -> None:
    CASES.append(pytest.param(case, id=id_))


def run(id_: str, config: str | bytes, files: Mapping[str, Content], *patterns: str,
        code: int = 2, args: tuple[str, ...] = (), **kw: Any) -> None:
    """``evalcli run -o out.json c.yaml ARGS`` with the config ``config``."""
    add(f"run-{id_}", Case(("run", "c.yaml", *args), {**files, "c.yaml": config}, code,
                           patterns, **kw))


def validate(id_: str, config: str | bytes, files: Mapping[str, Content], *patterns: str,
             code: int = 2, **kw: Any) -> None:
    add(f"validate-{id_}", Case(("validate", "c.yaml"), {**files, "c.yaml": config}, code,
                                patterns, output=False, **kw))


def compare(id_: str, args: tuple[str, ...], files: Mapping[str, Content], *patterns: str,
            code: int = 2, **kw: Any) -> None:
    add(f"compare-{id_}", Case(("compare", *args), files, code, patterns, **kw))


def command(id_: str, args: tuple[str, ...], files: Mapping[str, Content], *patterns: str,
            code: int = 2, output: bool = False, **kw: Any) -> None:
    add(id_, Case(args, files, code, patterns, output=output, **kw))


# The smallest valid inputs of each family.
BIN_P = "id,score\n1,0.9\n2,0.2\n3,0.6\n4,0.4\n"
BIN_T = "id,label\n1,1\n2,0\n3,1\n4,0\n"
BIN = {"preds.csv": BIN_P, "truth.csv": BIN_T}
BIN_CFG = "task: binary\npredictions: preds.csv\ntruth: truth.csv\n"

MC_P = "id,prediction\n1,cat\n2,dog\n3,bird\n4,cat\n"
MC_T = "id,label\n1,cat\n2,dog\n3,dog\n4,bird\n"
MC = {"preds.csv": MC_P, "truth.csv": MC_T}
MC_CFG = "task: multiclass\npredictions: preds.csv\ntruth: truth.csv\n"

ML_P = "id,prediction\n1,politics|sports\n2,sports\n3,travel\n4,politics|travel\n"
ML_T = "id,label\n1,politics\n2,sports|travel\n3,travel\n4,politics\n"
ML = {"preds.csv": ML_P, "truth.csv": ML_T}
ML_CFG = "task: multilabel\npredictions: preds.csv\ntruth: truth.csv\n"

RK_P = "query,item,score\nq1,i1,0.9\nq1,i2,0.5\nq2,i1,0.3\nq2,i3,0.8\n"
RK_T = "query,item,relevance\nq1,i1,1\nq1,i3,2\nq2,i3,1\n"
RK = {"preds.csv": RK_P, "truth.csv": RK_T}
RK_CFG = "task: ranking\npredictions: preds.csv\ntruth: truth.csv\n"

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\nq2 0 d3 1\n"
TREC_RUN = "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d1 1 0.7 t\nq2 Q0 d3 2 0.6 t\n"
TREC = {"p.run": TREC_RUN, "t.qrels": QRELS}
TREC_CFG = "task: ranking\npredictions: p.run\ntruth: t.qrels\n"

REG = "label,prediction\n1.0,1.1\n2.0,1.9\n3.0,3.2\n4.0,3.7\n"
REG_FILES = {"r.csv": REG}
REG_CFG = "task: regression\npredictions: r.csv\n"

PLUGIN = (ROOT / "examples" / "local_plugin" / "my_metrics.py").read_text()
ACCEPTED = (ROOT / "configs" / "binary-baseline-accepted.json").read_text()
NOT_A_DIR = {"notadir.txt": "a regular file: nothing can be written below it\n"}


def with_(files: Mapping[str, Content], **changes: Content) -> dict[str, Content]:
    """``files`` with some replaced (``preds_csv=...`` names ``preds.csv``)."""
    out = dict(files)
    for key, value in changes.items():
        out[key.replace("_", ".", 1) if "." not in key else key] = value
    return out


# ----------------------------------------------- 1. every input format: the same faults

FORMATS = ("csv", "tsv", "csv.gz", "parquet", "jsonl")
PRED_COLS: dict[str, list[Any]] = {"id": [1, 2, 3, 4], "score": [0.9, 0.2, 0.6, 0.4]}
TRUTH_COLS: dict[str, list[Any]] = {"id": [1, 2, 3, 4], "label": [1, 0, 1, 0]}


def _fmt_cases() -> None:
    for fmt in FORMATS:
        ext = re.escape(fmt)
        p, t = f"preds.{fmt}", f"truth.{fmt}"
        cfg_p = f"task: binary\npredictions: {p}\ntruth: truth.csv\n"
        cfg_t = f"task: binary\npredictions: preds.csv\ntruth: {t}\n"
        pn, tn = rf"preds\.{ext}", rf"truth\.{ext}"

        def pred(fmt: str = fmt, p: str = p, **cols: list[Any]) -> dict[str, Content]:
            return {"truth.csv": BIN_T, p: table(fmt, {**PRED_COLS, **cols})}

        def truth(fmt: str = fmt, t: str = t, **cols: list[Any]) -> dict[str, Content]:
            return {"preds.csv": BIN_P, t: table(fmt, {**TRUTH_COLS, **cols})}

        run(f"{fmt}-ok", cfg_p, {"truth.csv": BIN_T, p: table(fmt, PRED_COLS)}, code=0)
        renamed: dict[str, list[Any]] = {"id": [1, 2, 3, 4], "scroe": [0.9, 0.2, 0.6, 0.4]}
        run(f"{fmt}-misspelled-score-column", cfg_p, {"truth.csv": BIN_T, p: table(fmt, renamed)},
            pn, r"score", r"scroe")
        empty_cols: dict[str, list[Any]] = {"id": [], "score": []}
        content: Content = table(fmt, empty_cols)
        if fmt == "parquet":
            content = Parquet(empty_cols, schema={"id": pl.Int64, "score": pl.Float64})
        if fmt == "jsonl":
            content = "\n\n"  # JSONL has no header: blank lines only
        run(f"{fmt}-no-data-rows", cfg_p, {"truth.csv": BIN_T, p: content}, pn,
            r"no (data )?rows|is empty" + (r"|cannot read" if fmt == "jsonl" else ""))
        run(f"{fmt}-zero-bytes", cfg_p, {"truth.csv": BIN_T, p: b""}, pn, r"empty|cannot read")
        run(f"{fmt}-duplicate-id", cfg_p, pred(id=[1, 2, 3, 3]), pn, r"duplicated key", r"id=3")
        run(f"{fmt}-null-score", cfg_p, pred(score=[0.9, None, 0.6, 0.4]), r"null", r"score",
            r"id=2", r"nulls: drop")
        # JSON has no NaN: a JSONL writer's NaN is a syntax error, named by its line
        nan_says = (pn, r"line 3") if fmt == "jsonl" else (r"NaN", r"score", r"id=3")
        run(f"{fmt}-nan-score", cfg_p, pred(score=[0.9, 0.2, float("nan"), 0.4]), *nan_says)
        run(f"{fmt}-text-score", cfg_p, pred(score=["high", "0.2", "0.6", "0.4"]), pn, r"score",
            r"'high'")
        run(f"{fmt}-label-outside-binary", cfg_t, truth(label=[1, 0, 2, 0]), tn, r"0 and 1",
            r"id=3", r"label=2")
        run(f"{fmt}-duplicate-truth-id", cfg_t, truth(id=[1, 2, 2, 4]), tn, r"duplicated key",
            r"id=2")
        run(f"{fmt}-null-label", cfg_t, truth(label=[1, None, 1, 0]), r"null", r"label", r"id=2")
        run(f"{fmt}-random-bytes", cfg_p,
            {"truth.csv": BIN_T, p: bytes(range(256)) * 4}, pn)


_fmt_cases()

# the truncated and the mislabelled binary formats
_GOOD_PARQUET = Parquet(PRED_COLS)
run("parquet-truncated", BIN_CFG.replace("preds.csv", "preds.parquet"),
    {"truth.csv": BIN_T, "preds.parquet": Parquet(PRED_COLS, cut=0.5)}, r"preds\.parquet",
    r"parquet")
run("parquet-magic-only", BIN_CFG.replace("preds.csv", "preds.parquet"),
    {"truth.csv": BIN_T, "preds.parquet": b"PAR1\x00\x00PAR1"}, r"preds\.parquet")
run("parquet-actually-csv", BIN_CFG.replace("preds.csv", "preds.parquet"),
    {"truth.csv": BIN_T, "preds.parquet": BIN_P}, r"preds\.parquet", r"parquet")
run("csv-actually-parquet", BIN_CFG, with_(BIN, preds_csv=_GOOD_PARQUET), r"preds\.csv")
run("gz-not-gzip-csv", BIN_CFG.replace("preds.csv", "preds.csv.gz"),
    {"truth.csv": BIN_T, "preds.csv.gz": BIN_P}, r"preds\.csv\.gz", r"gzip")
run("gz-not-gzip-jsonl", BIN_CFG.replace("truth.csv", "truth.jsonl.gz"),
    {"preds.csv": BIN_P, "truth.jsonl.gz": '{"id": 1, "label": 1}\n'}, r"truth\.jsonl\.gz",
    r"gzip")
run("gz-truncated", BIN_CFG.replace("preds.csv", "preds.csv.gz"),
    {"truth.csv": BIN_T, "preds.csv.gz": gzip.compress(BIN_P.encode() * 50)[:60]},
    r"preds\.csv\.gz")
compare("gz-not-gzip", ("preds.csv.gz", "truth.csv"),
        {"truth.csv": BIN_T, "preds.csv.gz": BIN_P}, r"preds\.csv\.gz", r"gzip")

# ----------------------------------------------- 2. text-level faults of CSV and JSONL files


def _same_metrics_as(plain: Mapping[str, Content], args: tuple[str, ...]
                     ) -> Callable[[Path, CliResult, Cli], None]:
    """A check: the run's report has the metric values of the same run on ``plain`` files."""
    def check(folder: Path, r: CliResult, cli: Cli) -> None:
        got = json.loads((folder / "out.json").read_text())
        ref_dir = folder / "reference"
        ref_dir.mkdir()
        materialize(ref_dir, plain)
        os.chdir(ref_dir)
        ref = cli(*args, "--format", "json")
        assert ref.exit_code == r.exit_code, ref.stderr
        want = json.loads(ref.stdout)
        assert [(m["id"], m["value"]) for m in got["metrics"]] == [
            (m["id"], m["value"]) for m in want["metrics"]]
        assert got["alignment"]["matched"] == want["alignment"]["matched"]
    return check


BOM = "\ufeff"
CRLF_BIN = {"preds.csv": BIN_P.replace("\n", "\r\n"), "truth.csv": BIN_T.replace("\n", "\r\n")}
compare("bom-csv", ("preds.csv", "truth.csv"), with_(BIN, preds_csv=BOM + BIN_P), code=0,
        check=_same_metrics_as(BIN, ("compare", "preds.csv", "truth.csv")))
run("bom-truth-csv", BIN_CFG, with_(BIN, truth_csv=BOM + BIN_T), code=0,
    check=_same_metrics_as({**BIN, "c.yaml": BIN_CFG}, ("run", "c.yaml")))
run("bom-tsv", "task: regression\npredictions: r.tsv\n",
    {"r.tsv": BOM + REG.replace(",", "\t")}, code=0,
    check=_same_metrics_as({"r.tsv": REG.replace(",", "\t"),
                            "c.yaml": "task: regression\npredictions: r.tsv\n"}, ("run", "c.yaml")))
compare("crlf-csv", ("preds.csv", "truth.csv"), CRLF_BIN, code=0,
        check=_same_metrics_as(BIN, ("compare", "preds.csv", "truth.csv")))
run("crlf-multiclass-labels", MC_CFG,
    {"preds.csv": MC_P.replace("\n", "\r\n"), "truth.csv": MC_T.replace("\n", "\r\n")}, code=0,
    check=_same_metrics_as({**MC, "c.yaml": MC_CFG}, ("run", "c.yaml")))
run("crlf-multilabel-sets", ML_CFG,
    {"preds.csv": ML_P.replace("\n", "\r\n"), "truth.csv": ML_T.replace("\n", "\r\n")}, code=0,
    check=_same_metrics_as({**ML, "c.yaml": ML_CFG}, ("run", "c.yaml")))
run("crlf-trec", TREC_CFG, {"p.run": TREC_RUN.replace("\n", "\r\n"),
                            "t.qrels": QRELS.replace("\n", "\r\n")}, code=0,
    check=_same_metrics_as({**TREC, "c.yaml": TREC_CFG}, ("run", "c.yaml")))
run("bom-and-crlf-config", (BOM + BIN_CFG).replace("\n", "\r\n"), BIN, code=0,
    check=_same_metrics_as({**BIN, "c.yaml": BIN_CFG}, ("run", "c.yaml")))

compare("csv-cr-only-line-endings", ("p.csv",), {"p.csv": "label,score\r1,0.9\r0,0.2\r"},
        r"p\.csv")
run("csv-gz-cr-only-line-endings", BIN_CFG.replace("preds.csv", "preds.csv.gz"),
    {"truth.csv": BIN_T, "preds.csv.gz": gzip.compress(BIN_P.replace("\n", "\r").encode())},
    r"preds\.csv\.gz")
run("csv-ragged-row", BIN_CFG, with_(BIN, preds_csv="id,score\n1,0.9\n2,0.2,7\n3,0.6\n4,0.4\n"),
    r"preds\.csv")
run("csv-unclosed-quote", BIN_CFG, with_(BIN, preds_csv='id,score\n1,0.9\n2,"0.2\n3,0.6\n'),
    r"preds\.csv")
run("csv-semicolons", BIN_CFG, with_(BIN, preds_csv=BIN_P.replace(",", ";")), r"preds\.csv",
    r"separator")
compare("csv-semicolons", ("preds.csv", "truth.csv"), with_(BIN, preds_csv=BIN_P.replace(",", ";")),
        r"preds\.csv", r"separator")
run("csv-duplicated-header", BIN_CFG, with_(BIN, preds_csv="id,score,score\n1,0.9,0.1\n2,0.2,0.3\n"
                                                          "3,0.6,0.5\n4,0.4,0.2\n"),
    r"preds\.csv", r"'score'", r"(duplicate|twice|more than once)")
run("tsv-duplicated-header", "task: binary\npredictions: preds.tsv\ntruth: truth.csv\n",
    {"truth.csv": BIN_T, "preds.tsv": "id\tscore\tscore\n1\t0.9\t0.1\n2\t0.2\t0.1\n"
                                      "3\t0.6\t0.1\n4\t0.4\t0.1\n"},
    r"preds\.tsv", r"'score'", r"(duplicate|twice|more than once)")
run("csv-duplicated-truth-header", BIN_CFG,
    with_(BIN, truth_csv="id,label,label\n1,1,1\n2,0,0\n3,1,1\n4,0,0\n"), r"truth\.csv",
    r"'label'", r"(duplicate|twice|more than once)")
compare("csv-duplicated-header", ("preds.csv", "truth.csv"),
        with_(BIN, preds_csv="id,score,score\n1,0.9,0.1\n2,0.2,0.3\n3,0.6,0.5\n4,0.4,0.2\n"),
        r"preds\.csv", r"'score'", r"(duplicate|twice|more than once)")
LATIN1_T = "id,label\n1,cat\n2,dog\n3,caf\xe9\n4,bird\n".encode("latin-1")
run("csv-latin1", MC_CFG, with_(MC, truth_csv=LATIN1_T), r"truth\.csv", r"(row|line) \d",
    r"encoding")
compare("csv-latin1", ("preds.csv", "truth.csv", "--task", "multiclass"),
        with_(MC, truth_csv=LATIN1_T), r"truth\.csv", r"(row|line) \d", r"encoding")
run("csv-nul-in-cell", BIN_CFG, with_(BIN, preds_csv="id,score\n1,0.9\n2,0.\x002\n3,0.6\n4,0.4\n"),
    r"preds\.csv", r"score", r"id=2")
run("csv-text-score-second-row", BIN_CFG,
    with_(BIN, preds_csv="id,score\n1,0.9\n2,high\n3,0.6\n4,0.4\n"), r"preds\.csv", r"score",
    r"id=2", r"'high'")
run("csv-100kb-cell", BIN_CFG, with_(BIN, preds_csv=f"id,score\n1,{'x' * LONG}\n2,0.2\n3,0.6\n"
                                                    "4,0.4\n"), r"preds\.csv", r"score")
run("csv-100kb-column-name", BIN_CFG, with_(BIN, preds_csv=f"id,{'s' * LONG}\n1,0.9\n2,0.2\n"),
    r"preds\.csv", r"'score'")
compare("csv-100kb-label-value", ("preds.csv", "truth.csv", "--task", "binary"),
        with_(BIN, truth_csv=f"id,label\n1,{'y' * LONG}\n2,0\n3,1\n4,0\n"), r"truth\.csv",
        r"label")
run("jsonl-bad-line-number", BIN_CFG.replace("preds.csv", "preds.jsonl"),
    {"truth.csv": BIN_T, "preds.jsonl": '{"id": 1, "score": 0.9}\n{"id": 2, "score": 0.2}\n'
                                        'not json\n{"id": 4, "score": 0.4}\n'},
    r"preds\.jsonl", r"line 3")
run("jsonl-truncated-object", BIN_CFG.replace("preds.csv", "preds.jsonl"),
    {"truth.csv": BIN_T, "preds.jsonl": '{"id": 1, "score": 0.9}\n{"id": 2, "sco'},
    r"preds\.jsonl", r"line 2")
run("jsonl-array-lines", BIN_CFG.replace("preds.csv", "preds.jsonl"),
    {"truth.csv": BIN_T, "preds.jsonl": "[1, 0.9]\n[2, 0.2]\n"}, r"preds\.jsonl")
run("jsonl-mixed-types", BIN_CFG.replace("preds.csv", "preds.jsonl"),
    {"truth.csv": BIN_T, "preds.jsonl": '{"id": 1, "score": 0.9}\n{"id": 2, "score": "x"}\n'
                                        '{"id": 3, "score": [1]}\n{"id": 4, "score": {}}\n'},
    r"preds\.jsonl", r"score")
run("csv-named-file-holding-zstd-magic", BIN_CFG, with_(BIN, preds_csv=b"(\xb5/\xfd"),
    r"preds\.csv")
compare("csv-named-file-holding-zstd-magic", ("p.csv",), {"p.csv": b"(\xb5/\xfd"}, r"p\.csv")
run("jsonl-binary-label-objects", BIN_CFG.replace("truth.csv", "t.jsonl"),
    {"preds.csv": BIN_P, "t.jsonl": "".join(f'{{"id": {i}, "label": {{"a": 1}}}}\n'
                                            for i in range(1, 5))}, r"t\.jsonl", r"label")
compare("jsonl-regression-label-objects", ("p.jsonl", "t.jsonl", "--task", "regression"),
        {"p.jsonl": '{"id": 0, "prediction": true}\n{"id": 1, "prediction": false}\n',
         "t.jsonl": '{"id": 0, "label": {"a": 1}}\n{"id": 1, "label": {"a": 1}}\n'},
        r"t\.jsonl", r"label")
run("unknown-extension", BIN_CFG.replace("preds.csv", "preds.out"),
    {"truth.csv": BIN_T, "preds.out": BIN_P}, r"preds\.out", r"format")
run("folder-without-files", BIN_CFG.replace("preds.csv", "parts"),
    {"truth.csv": BIN_T, "parts/sub/.gitkeep": ""}, r"parts")
run("glob-matching-nothing", BIN_CFG.replace("preds.csv", "part-*.parquet"), BIN,
    r"part-\*\.parquet")

# ----------------------------------------------- 3. config files (run and validate)

BAD_CONFIGS: list[tuple[str, str | bytes, tuple[str, ...]]] = [
    ("malformed-yaml", BIN_CFG + "metrics: [auroc, {metric: f1\n",
     (r"c\.yaml", r"invalid YAML", r"line \d")),
    ("tab-indentation", BIN_CFG + "alignment:\n\tunmatched: drop\n",
     (r"c\.yaml", r"line 5")),
    ("unknown-top-level-key", BIN_CFG + "metircs: [auroc]\n",
     (r"c\.yaml", r"unknown key 'metircs'", r"Did you mean 'metrics'")),
    ("unknown-columns-key", BIN_CFG + "columns: {scroe: s}\n",
     (r"c\.yaml", r"columns\.scroe", r"Did you mean 'score'")),
    ("unknown-alignment-key", BIN_CFG + "alignment: {unmatch: drop}\n",
     (r"alignment\.unmatch", r"Did you mean 'unmatched'")),
    ("unknown-input-key", "task: binary\npredictions: {path: preds.csv, seperator: ';'}\n"
     "truth: truth.csv\n", (r"predictions\.seperator", r"Did you mean 'separator'")),
    ("unknown-spark-key", BIN_CFG + "spark: {mastr: 'local[1]'}\n",
     (r"spark\.mastr", r"Did you mean 'master'")),
    ("unknown-metric-param", BIN_CFG + "metrics: [{metric: fbeta, betta: 2}]\n",
     (r"betta", r"fbeta", r"Did you mean 'beta'")),
    ("duplicate-key", BIN_CFG + "task: regression\n", (r"c\.yaml", r"'task'", r"twice")),
    ("python-object-tag", "task: !!python/object/apply:os.system ['touch pwned']\n"
     "predictions: preds.csv\n", (r"c\.yaml", r"line 1", r"python")),
    ("python-name-tag", BIN_CFG + "options:\n  x: !!python/name:os.system ''\n",
     (r"c\.yaml", r"line 5", r"python")),
    ("python-module-tag", BIN_CFG + "metrics: !!python/module:os\n",
     (r"c\.yaml", r"line 4", r"python")),
    ("not-a-mapping", "- task: binary\n- predictions: preds.csv\n", (r"c\.yaml", r"mapping")),
    ("scalar", "binary\n", (r"c\.yaml", r"mapping")),
    ("empty-config", "", (r"c\.yaml", r"empty")),
    ("comments-only", "# nothing here\n", (r"c\.yaml", r"empty")),
    ("missing-task", "predictions: preds.csv\ntruth: truth.csv\n", (r"c\.yaml", r"'task'")),
    ("missing-predictions", "task: binary\ntruth: truth.csv\n", (r"c\.yaml", r"'predictions'")),
    ("unknown-task", BIN_CFG.replace("binary", "binray"), (r"binray", r"binary")),
    ("task-is-a-list", BIN_CFG.replace("task: binary", "task: [binary]"), (r"c\.yaml", r"task")),
    ("unknown-metric", BIN_CFG + "metrics: [aucroc]\n", (r"'aucroc'", r"Did you mean 'auroc'")),
    ("metric-id-garbage", BIN_CFG + "metrics: ['auroc@@3']\n", (r"auroc@@3", r"metric id|cut")),
    ("metric-params-not-key-value", BIN_CFG + "metrics: ['fbeta[beta]']\n",
     (r"fbeta\[beta\]", r"key=value")),
    ("cutoff-not-integer", RK_CFG + "metrics: ['ndcg@ten']\n", (r"ndcg@ten", r"integer")),
    ("gate-not-a-number", BIN_CFG + "metrics: [{metric: auroc, min: high}]\n",
     (r"min", r"'high'")),
    ("param-wrong-type", BIN_CFG + "metrics: [{metric: fbeta, beta: two}]\n",
     (r"beta", r"two")),
    ("beta-zero", BIN_CFG + "metrics: [{metric: fbeta, beta: 0}]\n", (r"beta", r"> 0")),
    ("unmatched-policy-value", BIN_CFG + "alignment: {unmatched: ignore}\n",
     (r"alignment\.unmatched", r"ignore")),
    ("engine-value", BIN_CFG + "engine: sparkk\n", (r"engine", r"sparkk")),
    ("segments-without-group-by", BIN_CFG + "metrics: [{metric: auroc, segments: {min: 0.5}}]\n",
     (r"auroc", r"group_by")),
    ("report-extension", BIN_CFG + "report: [r.pdf]\n", (r"r\.pdf", r"extension")),
    ("plugin-missing", BIN_CFG + "plugins: [nope.py]\n", (r"nope\.py",)),
    ("predictions-missing", BIN_CFG.replace("preds.csv", "pred.csv"),
     (r"pred\.csv does not exist", r"Did you mean '\S*preds\.csv'")),
    ("truth-missing", BIN_CFG.replace("truth.csv", "truht.csv"),
     (r"truht\.csv does not exist", r"truth\.csv")),
    ("non-utf8", BIN_CFG.encode() + b"# caf\xe9 cr\xe8me\n", (r"c\.yaml", r"byte|offset")),
    ("utf16", BIN_CFG.encode("utf-16"), (r"c\.yaml",)),
    ("nul-bytes", BIN_CFG.encode() + b"\x00\x00\n", (r"c\.yaml",)),
    ("100kb-key", BIN_CFG + "? " + "k" * LONG + "\n: 1\n", (r"c\.yaml", r"unknown key")),
    ("100kb-metric-name", BIN_CFG + f"metrics: [{'m' * LONG}]\n", (r"unknown binary metric",)),
    ("100kb-task", BIN_CFG.replace("task: binary", "task: " + "t" * LONG), (r"task",)),
    ("100kb-column-name", BIN_CFG + f"columns: {{score: {'s' * LONG}}}\n",
     (r"preds\.csv", r"score")),
    ("100kb-path", BIN_CFG.replace("preds.csv", "p" * 2000 + ".csv"), (r"\.csv",)),
    ("alias-bomb-small", BIN_CFG.replace("task: binary\n", "")
     + "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
       "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
       "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
       "task: *e\n", (r"c\.yaml",)),
]
for _id, _body, _patterns in BAD_CONFIGS:
    run(_id, _body, BIN if "ndcg" not in str(_body) else RK, *_patterns)
for _id, _body, _patterns in BAD_CONFIGS[:12] + [c for c in BAD_CONFIGS if c[0] in (
        "non-utf8", "alias-bomb-small", "unknown-metric", "predictions-missing",
        "100kb-key", "not-a-mapping")]:
    validate(_id, _body, BIN, *_patterns)

add("run-config-missing", Case(("run", "nope.yaml"), BIN, 2, (r"nope\.yaml does not exist",)))
command("run-config-is-a-folder", ("run", "."), BIN, r"director", usage=True)
command("validate-config-missing", ("validate", "nope.yaml"), BIN, r"nope\.yaml")

# a config that is fine apart from the one thing
run("group-by-missing-column", BIN_CFG + "group_by: [country]\n", BIN, r"'country'",
    r"(preds|truth)\.csv|neither input")
run("segment-gate-names-no-segment", BIN_CFG + "group_by: [g]\n"
    "metrics: [{metric: auroc, segments: {'h=1': {min: 0.5}}}]\n",
    with_(BIN, truth_csv="id,label,g\n1,1,x\n2,0,x\n3,1,y\n4,0,y\n"), r"h=1", r"g=VALUE")
run("weight-column-missing", BIN_CFG + "columns: {weight: w}\n", BIN, r"'w'",
    r"(preds|truth)\.csv")
run("id-column-missing", BIN_CFG + "columns: {id: key}\n", BIN, r"'key'",
    r"(preds|truth)\.csv")
run("label-column-missing", BIN_CFG + "columns: {label: churned}\n", BIN, r"'churned'",
    r"truth\.csv")
run("baseline-missing", BIN_CFG + "baseline: accepted.json\n", BIN, r"accepted\.json",
    r"does not exist")
run("baseline-not-json", BIN_CFG + "baseline: accepted.json\n",
    {**BIN, "accepted.json": "not json {"}, r"accepted\.json", r"not JSON")
run("baseline-other-task", BIN_CFG + "baseline: accepted.json\n",
    {**BIN, "accepted.json": ACCEPTED.replace('"task": "binary"', '"task": "regression"')},
    r"accepted\.json", r"task")
run("plugin-syntax-error", BIN_CFG + "plugins: [mine.py]\nmetrics: [auroc]\n",
    {**BIN, "mine.py": "def broken(:\n"}, r"mine\.py")
run("plugin-raises", BIN_CFG + "plugins: [mine.py]\nmetrics: [auroc]\n",
    {**BIN, "mine.py": "raise RuntimeError('plugin exploded')\n"}, r"mine\.py", r"exploded")
run("plugin-no-metrics", BIN_CFG + "plugins: [mine.py]\nmetrics: [auroc]\n",
    {**BIN, "mine.py": "X = 1\n"}, r"mine\.py", r"METRICS")


def _plugin_named(folder: Path, r: CliResult, cli: Cli) -> None:
    assert "mine.py" in r.stderr, r.stderr


run("plugin-that-ran-is-named", BIN_CFG + "plugins: [mine.py]\n"
    "metrics: [auroc, {metric: net_benefit, threshold: 0.3}]\n", {**BIN, "mine.py": PLUGIN},
    code=0, check=_plugin_named)
validate("plugin-that-ran-is-named", BIN_CFG + "plugins: [mine.py]\nmetrics: [net_benefit]\n",
         {**BIN, "mine.py": PLUGIN}, code=0, check=_plugin_named)

# ----------------------------------------------- 4. each family's faults

# binary
run("binary-labels-yes-no-without-positive", BIN_CFG,
    with_(BIN, truth_csv="id,label\n1,yes\n2,no\n3,yes\n4,no\n"), r"truth\.csv", r"label",
    r"positive")
run("binary-positive-matches-no-label", BIN_CFG + "options: {positive: maybe}\n",
    with_(BIN, truth_csv="id,label\n1,yes\n2,no\n3,yes\n4,no\n"), r"'maybe'", r"yes", r"no",
    r"truth\.csv")
compare("binary-positive-matches-no-label",
        ("preds.csv", "truth.csv", "--positive", "maybe"),
        with_(BIN, truth_csv="id,label\n1,yes\n2,no\n3,yes\n4,no\n"), r"'maybe'", r"yes", r"no")
compare("binary-positive-numeric-matches-no-label",
        ("preds.csv", "truth.csv", "--positive", "7", "--task", "binary"), BIN, r"'?7'?", r"0",
        r"1")
compare("binary-label-2", ("preds.csv", "truth.csv", "--task", "binary"),
        with_(BIN, truth_csv="id,label\n1,1\n2,0\n3,2\n4,0\n"), r"0 and 1", r"id=3")
compare("binary-inf-score", ("preds.csv", "truth.csv"),
        with_(BIN, preds_csv="id,score\n1,inf\n2,0.2\n3,0.6\n4,-inf\n"), r"preds\.csv",
        r"infinite", r"id=1")
compare("binary-probability-above-1", ("preds.csv", "truth.csv", "-m", "log_loss"),
        with_(BIN, preds_csv="id,score\n1,0.9\n2,0.2\n3,1.6\n4,0.4\n"), r"outside \[0, 1\]",
        r"id=3")
compare("binary-threshold-on-hard-predictions",
        ("h.csv", "-m", "f1[threshold=0.3]", "--task", "binary"),
        {"h.csv": "label,prediction\n1,1\n0,1\n1,0\n"}, r"threshold=0\.3")
compare("binary-unmatched-ids", ("preds.csv", "truth.csv"),
        with_(BIN, preds_csv="id,score\n1,0.9\n2,0.2\n3,0.6\n5,0.4\n"), r"id=5", r"id=4",
        r"drop-unmatched|unmatched")
compare("binary-no-id-overlap", ("preds.csv", "truth.csv", "--drop-unmatched"),
        with_(BIN, preds_csv="id,score\n11,0.9\n12,0.2\n"), r"no rows to evaluate")
compare("binary-null-id", ("preds.csv", "truth.csv"),
        with_(BIN, preds_csv="id,score\n1,0.9\n,0.2\n3,0.6\n4,0.4\n"), r"preds\.csv", r"id")
compare("binary-weight-configured-negative",
        ("p.csv", "--task", "binary", "--weight", "w", "-m", "auroc"),
        {"p.csv": "label,score,w\n1,0.9,1\n0,0.2,-1\n1,0.6,1\n0,0.4,1\n"}, r"p\.csv", r"'?w'?",
        r"negative|< ?0|>= ?0")
compare("binary-weight-option-missing-column", ("preds.csv", "truth.csv", "--weight", "w"), BIN,
        r"'w'")


compare("binary-unconfigured-weight-column-ignored", ("preds.csv", "truth.csv"),
        with_(BIN, preds_csv="id,score,weight\n1,0.9,100\n2,0.2,0.001\n3,0.6,7\n4,0.4,0\n"),
        code=0, check=_same_metrics_as(BIN, ("compare", "preds.csv", "truth.csv")))
run("binary-unconfigured-weight-column-ignored", BIN_CFG,
    with_(BIN, truth_csv="id,label,weight\n1,1,0\n2,0,50\n3,1,0.5\n4,0,3\n"), code=0,
    check=_same_metrics_as({**BIN, "c.yaml": BIN_CFG}, ("run", "c.yaml")))
run("regression-unconfigured-weight-column-ignored", REG_CFG,
    {"r.csv": "label,prediction,weight\n1.0,1.1,9\n2.0,1.9,0\n3.0,3.2,1\n4.0,3.7,0.1\n"},
    code=0, check=_same_metrics_as({**REG_FILES, "c.yaml": REG_CFG}, ("run", "c.yaml")))
run("multiclass-unconfigured-weight-column-ignored", MC_CFG,
    with_(MC, preds_csv="id,prediction,weight\n1,cat,5\n2,dog,0\n3,bird,1\n4,cat,2\n"), code=0,
    check=_same_metrics_as({**MC, "c.yaml": MC_CFG}, ("run", "c.yaml")))

# multiclass
run("multiclass-label-param-unknown-class", MC_CFG + "metrics: [{metric: precision, label: cta}]\n",
    MC, r"'cta'", r"cat", r"dog", r"bird", r"Did you mean 'cat'")
run("multiclass-recall-label-unknown-class", MC_CFG + "metrics: [{metric: recall, label: fish}]\n",
    MC, r"'fish'", r"cat")
run("multiclass-label-param-listed-in-labels", MC_CFG
    + "metrics: [{metric: precision, label: fish, labels: [cat, dog, bird, fish]}]\n", MC, code=0)
compare("multiclass-label-param-unknown-class",
        ("preds.csv", "truth.csv", "--task", "multiclass", "-m", "f1[label=dgo]"), MC,
        r"'dgo'", r"Did you mean 'dog'")
run("multiclass-top-k-zero", MC_CFG + "metrics: ['top_k_accuracy@0']\n", MC, r"top_k_accuracy",
    r"\bk\b", r">= ?1|≥ ?1|positive")
run("multiclass-top-k-negative", MC_CFG + "metrics: ['top_k_accuracy@-2']\n", MC,
    r"top_k_accuracy", r"-2")
run("multiclass-log-loss-without-scores", MC_CFG + "metrics: [log_loss]\n", MC, r"log_loss",
    r"score")
run("multiclass-missing-prediction-column", MC_CFG,
    with_(MC, preds_csv="id,pred_class\n1,cat\n2,dog\n3,bird\n4,cat\n"), r"preds\.csv",
    r"prediction")
run("multiclass-null-label", MC_CFG, with_(MC, truth_csv="id,label\n1,cat\n2,\n3,dog\n4,bird\n"),
    r"null", r"label", r"id=2")
run("multiclass-float-label", MC_CFG, with_(MC, truth_csv="id,label\n1,0.5\n2,1.5\n3,2.5\n4,1\n"),
    r"truth\.csv", r"label")
run("multiclass-bad-average", MC_CFG + "metrics: [{metric: f1, average: mean}]\n", MC,
    r"average", r"'mean'", r"macro")
run("multiclass-labels-not-a-class", MC_CFG.replace("preds.csv", "pi.csv").replace(
    "truth.csv", "ti.csv") + "metrics: [{metric: confusion_matrix, labels: [1, x]}]\n",
    {"pi.csv": "id,prediction\n1,0\n2,1\n", "ti.csv": "id,label\n1,0\n2,1\n"}, r"'x'",
    r"labels")
compare("multiclass-unknown-metric", ("preds.csv", "truth.csv", "--task", "multiclass", "-m",
                                      "peak_f1"), MC, r"'peak_f1'", r"multiclass", r"binary")

# multilabel
run("multilabel-label-param-unknown", ML_CFG + "metrics: [{metric: recall, label: sprots}]\n",
    ML, r"'sprots'", r"politics", r"Did you mean 'sports'")
run("multilabel-f1-label-unknown", ML_CFG + "metrics: [{metric: f1, label: cooking}]\n", ML,
    r"'cooking'", r"travel")
run("multilabel-bad-layout", ML_CFG + "options: {layout: wide}\n", ML, r"layout", r"'wide'")
run("multilabel-unknown-option", ML_CFG + "options: {delimeter: ';'}\n", ML, r"delimeter",
    r"Did you mean 'delimiter'")
run("multilabel-missing-label-column", ML_CFG,
    with_(ML, truth_csv="id,tags\n1,politics\n2,sports\n3,travel\n4,politics\n"),
    r"truth\.csv", r"'label'", r"tags")
run("multilabel-rows-sharing-an-id-are-gathered", ML_CFG,
    with_(ML, preds_csv=ML_P + "4,sports\n"), code=0,
    check=_same_metrics_as({"truth.csv": ML_T, "c.yaml": ML_CFG, "preds.csv": ML_P.replace(
        "4,politics|travel", "4,politics|travel|sports")}, ("run", "c.yaml")))
run("multilabel-numeric-list-and-text", ML_CFG.replace("preds.csv", "p.jsonl"),
    {"truth.csv": "id,label\n1,politics\n2,sports\n",
     "p.jsonl": '{"id": 1, "prediction": [1, 2]}\n{"id": 2, "prediction": "x"}\n'},
    r"p\.jsonl", r"prediction")
compare("multilabel-bad-average", ("preds.csv", "truth.csv", "--task", "multilabel", "-m",
                                   "f1[average=mean]"), ML, r"average", r"'mean'")

# ranking
for _m in ("ndcg@0", "precision@0", "recall@-1", "map@0", "hit_rate@-5"):
    run(f"ranking-{_m.replace('@', '-at-')}", RK_CFG + f"metrics: ['{_m}']\n", RK,
        re.escape(_m.split("@")[0]), r"\bk\b|cut-off")
run("ranking-k-zero-as-param", RK_CFG + "metrics: [{metric: ndcg, k: 0}]\n", RK, r"ndcg",
    r"\bk\b")
compare("ranking-k-zero", ("preds.csv", "truth.csv", "--task", "ranking", "-m", "ndcg@0"), RK,
        r"ndcg", r"\bk\b|cut-off")
run("ranking-text-relevance", RK_CFG,
    with_(RK, truth_csv="query,item,relevance\nq1,i1,high\nq1,i3,2\nq2,i3,1\n"), r"truth\.csv",
    r"relevance", r"'high'")
run("ranking-nan-score", RK_CFG,
    with_(RK, preds_csv="query,item,score\nq1,i1,NaN\nq1,i2,0.5\nq2,i1,0.3\nq2,i3,0.8\n"),
    r"score", r"NaN")
run("ranking-missing-query-column", RK_CFG,
    with_(RK, preds_csv="user,item,score\nq1,i1,0.9\nq2,i1,0.3\n"), r"preds\.csv", r"query")
run("ranking-missing-item-column", RK_CFG,
    with_(RK, truth_csv="query,doc,relevance\nq1,i1,1\n"), r"truth\.csv", r"item")
run("ranking-duplicate-pair", RK_CFG, with_(RK, preds_csv=RK_P + "q1,i1,0.1\n"), r"preds\.csv",
    r"q1", r"i1")
run("ranking-gain-value", RK_CFG + "metrics: [{metric: ndcg, k: 3, gain: huge}]\n", RK,
    r"gain", r"'huge'")
run("ranking-compat-value", RK_CFG + "options: {compat: trec}\n", RK, r"compat", r"trec_eval")
run("ranking-items-file-missing", RK_CFG + "options: {items_file: items.parquet}\n"
    "metrics: ['catalog_coverage@2']\n", RK, r"items\.parquet")
run("ranking-per-query-on-binary", BIN_CFG, BIN, r"per_query|per-query", r"ranking",
    args=("--per-query", "pq.csv"))
run("ranking-per-query-extension", RK_CFG, RK, r"pq\.xlsx", r"extension",
    args=("--per-query", "pq.xlsx"))
run("trec-qrels-five-fields", TREC_CFG, with_(TREC, t_qrels="q1 0 d1 1 extra\nq1 0 d2 0 x\n"),
    r"t\.qrels", r"4 fields|qrels")
run("trec-qrels-text-relevance", TREC_CFG, with_(TREC, t_qrels="q1 0 d1 high\nq1 0 d2 0\n"),
    r"t\.qrels", r"relevance|'high'")
run("trec-run-text-score", TREC_CFG,
    with_(TREC, p_run="q1 Q0 d1 1 high t\nq1 Q0 d2 2 0.5 t\n"), r"p\.run", r"score|'high'")
run("trec-run-text-rank", TREC_CFG,
    with_(TREC, p_run="q1 Q0 d1 first 0.9 t\nq1 Q0 d2 2 0.5 t\n"), r"p\.run", r"rank|'first'")
run("trec-run-mixed-field-counts", TREC_CFG,
    with_(TREC, p_run="q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5\n"), r"p\.run", r"fields")
run("trec-empty-qrels", TREC_CFG, with_(TREC, t_qrels=""), r"t\.qrels", r"empty")
run("trec-blank-lines-run", TREC_CFG, with_(TREC, p_run="\n\n  \n"), r"p\.run", r"empty")
run("trec-qrels-gz-not-gzip", TREC_CFG.replace("t.qrels", "t.qrels.gz"),
    {"p.run": TREC_RUN, "t.qrels.gz": QRELS}, r"t\.qrels\.gz", r"gzip")
run("trec-qrels-latin1", TREC_CFG,
    with_(TREC, t_qrels="q1 0 d1 1\nq1 0 caf\xe9 0\n".encode("latin-1")), r"t\.qrels",
    r"encoding|UTF-8|utf-8")
compare("trec-random-bytes", ("p.run", "t.qrels"), with_(TREC, p_run=bytes(range(256)) * 3),
        r"p\.run")

# regression
run("regression-text-label", REG_CFG, {"r.csv": "label,prediction\na,1.0\nb,2.0\n"}, r"r\.csv",
    r"label", r"numbers")
run("regression-inf-prediction", REG_CFG, {"r.csv": "label,prediction\n1,inf\n2,0.2\n"},
    r"r\.csv", r"prediction", r"infinite")
run("regression-null-prediction", REG_CFG, {"r.csv": "label,prediction\n1,\n2,0.2\n"},
    r"null", r"prediction")
run("regression-missing-prediction", REG_CFG, {"r.csv": "label,pred\n1,1\n2,2\n"}, r"r\.csv",
    r"'prediction'", r"pred")
run("regression-binary-metric", REG_CFG + "metrics: [auroc]\n", REG_FILES,
    r"unknown regression metric 'auroc'")
run("regression-100kb-text-cell", REG_CFG,
    {"r.csv": f"label,prediction\n1,{'z' * LONG}\n2,0.2\n"}, r"r\.csv", r"prediction")
compare("regression-text-prediction", ("r.csv", "--task", "regression"),
        {"r.csv": "label,prediction\n1,one\n2,0.2\n"}, r"r\.csv", r"prediction", r"'one'")

# ----------------------------------------------- 5. compare: inference and options

compare("missing-file", ("pred.csv", "truth.csv"), BIN, r"pred\.csv does not exist",
        r"preds\.csv", absent=(r"config",))
compare("missing-truth-file", ("preds.csv", "truht.csv"), BIN, r"truht\.csv",
        absent=(r"config",))
compare("header-only", ("preds.csv", "truth.csv"), with_(BIN, preds_csv="id,score\n"),
        r"preds\.csv", r"no (data )?rows")
compare("empty-file", ("preds.csv", "truth.csv"), with_(BIN, preds_csv=""), r"preds\.csv",
        r"empty")
compare("ambiguous-score", ("p.csv",), {"p.csv": "label,score,prob\n1,0.9,0.8\n0,0.1,0.2\n"},
        r"score", r"prob", r"--score")
compare("no-label-column", ("p.csv",), {"p.csv": "x,score\n1,0.9\n0,0.1\n"}, r"p\.csv",
        r"label")
compare("two-string-labels", ("preds.csv", "truth.csv"),
        with_(BIN, truth_csv="id,label\n1,yes\n2,no\n3,yes\n4,no\n"), r"positive", r"yes")
compare("score-option-missing", ("preds.csv", "truth.csv", "--score", "scroe"), BIN,
        r"'scroe'", r"Did you mean 'score'")
compare("id-option-missing", ("preds.csv", "truth.csv", "--id", "key"), BIN, r"'key'")
compare("group-by-missing", ("preds.csv", "truth.csv", "--group-by", "country"), BIN,
        r"'?country'?")
compare("unknown-task", ("preds.csv", "truth.csv", "--task", "binray"), BIN, r"binray",
        r"binary")
compare("unknown-metric", ("preds.csv", "truth.csv", "-m", "aucroc"), BIN, r"'aucroc'",
        r"Did you mean 'auroc'")
compare("100kb-metric", ("preds.csv", "truth.csv", "-m", "m" * LONG), BIN, r"metric")
for _i, _gate in enumerate(("auroc=>0.8", "auroc>=", "auroc>=high", "auroc>0.8", ">=0.8",
                            "auroc >= 0.8 extra", "auroc>=0.8>=0.9")):
    compare(f"gate-syntax-{_i}", ("preds.csv", "truth.csv", "--gate", _gate), BIN,
            re.escape(_gate.strip()), r"METRIC>=VALUE")
compare("gate-unknown-metric", ("preds.csv", "truth.csv", "--gate", "aucroc>=0.8"), BIN,
        r"'aucroc'", r"Did you mean 'auroc'")
compare("gate-adds-its-metric", ("preds.csv", "truth.csv", "-m", "f1", "--gate",
                                 "auroc>=0.8"), BIN, code=0)
compare("gate-100kb", ("preds.csv", "truth.csv", "--gate", "auroc>=" + "x" * LONG), BIN,
        r"gate")
compare("gate-nan-threshold", ("preds.csv", "truth.csv", "--gate", "auroc>=nan"), BIN,
        r"gate|nan")
compare("format-value", ("preds.csv", "truth.csv", "--format", "pdf"), BIN, r"pdf",
        usage=True)
compare("format-100kb-value", ("preds.csv", "truth.csv", "--format", "p" * LONG), BIN,
        r"format", usage=True)
compare("unknown-option", ("preds.csv", "truth.csv", "--scroe", "s"), BIN, r"--scroe",
        usage=True)
compare("output-extension", ("preds.csv", "truth.csv", "-o", "r.pdf"), BIN, r"r\.pdf",
        r"extension")
compare("gate-failed-exits-1", ("preds.csv", "truth.csv", "--gate", "accuracy>=0.99"),
        with_(BIN, preds_csv="id,score\n1,0.9\n2,0.2\n3,0.4\n4,0.6\n"), code=1)

# ----------------------------------------------- 6. outputs: inputs, all-or-none, unwritable

run("output-is-the-truth-file", BIN_CFG.replace("truth.csv", "truth.json"),
    {"preds.csv": BIN_P, "truth.json": "".join(
        json.dumps({"id": i, "label": v}) + "\n" for i, v in zip(
            [1, 2, 3, 4], [1, 0, 1, 0], strict=True))}, r"truth\.json", r"input",
    args=("-o", "truth.json"))
run("output-is-the-predictions-file", BIN_CFG.replace("preds.csv", "preds.txt"),
    {"preds.txt": BIN_P, "truth.csv": BIN_T}, r"preds\.txt", r"input", args=("-o", "preds.txt"))
run("output-is-a-link-to-an-input", BIN_CFG.replace("truth.csv", "truth.json"),
    {"preds.csv": BIN_P, "truth.json": '{"id": 1, "label": 1}\n{"id": 2, "label": 0}\n'
     '{"id": 3, "label": 1}\n{"id": 4, "label": 0}\n', "link.json": Link("truth.json")},
    r"link\.json|truth\.json", r"input", args=("-o", "link.json"))
run("output-is-the-input-by-another-name", BIN_CFG.replace("truth.csv", "truth.json"),
    {"preds.csv": BIN_P, "truth.json": '{"id": 1, "label": 1}\n{"id": 2, "label": 0}\n'
     '{"id": 3, "label": 1}\n{"id": 4, "label": 0}\n', "sub/.keep": ""},
    r"truth\.json", r"input", args=("-o", "sub/../truth.json"))
run("report-key-is-an-input", BIN_CFG.replace("truth.csv", "truth.json")
    + "report: [truth.json]\n",
    {"preds.csv": BIN_P, "truth.json": '{"id": 1, "label": 1}\n{"id": 2, "label": 0}\n'
     '{"id": 3, "label": 1}\n{"id": 4, "label": 0}\n'}, r"truth\.json", r"input")
compare("output-is-an-input", ("preds.txt", "truth.csv", "-o", "preds.txt"),
        {"preds.txt": BIN_P, "truth.csv": BIN_T}, r"preds\.txt", r"input")
run("per-query-is-an-input", RK_CFG, RK, r"truth\.csv", r"input",
    args=("--per-query", "truth.csv"))
compare("per-query-is-an-input", ("preds.csv", "truth.csv", "--per-query", "preds.csv"), RK,
        r"preds\.csv", r"input")
run("curves-folder-holds-an-input", BIN_CFG.replace("preds.csv", "roc.csv"),
    {"roc.csv": BIN_P, "truth.csv": BIN_T}, r"roc\.csv", r"input", args=("--curves", "."))
run("output-is-the-baseline", BIN_CFG + "baseline: accepted.json\n",
    {**BIN, "accepted.json": ACCEPTED}, r"accepted\.json", r"input",
    args=("-o", "accepted.json"))
run("all-or-none-missing-folder", BIN_CFG, BIN, r"nope", args=("-o", "nope/r.md"))
run("all-or-none-second-bad-extension", BIN_CFG, BIN, r"r\.pdf", args=("-o", "r.pdf"))
run("all-or-none-report-under-a-file", BIN_CFG, {**BIN, **NOT_A_DIR}, r"notadir\.txt/r\.md",
    args=("-o", "notadir.txt/r.md"))
run("all-or-none-per-query-under-a-file", RK_CFG, {**RK, **NOT_A_DIR},
    r"notadir\.txt/pq\.csv", args=("--per-query", "notadir.txt/pq.csv"))
run("all-or-none-curves-under-a-file", BIN_CFG, {**BIN, **NOT_A_DIR}, r"notadir\.txt",
    args=("--curves", "notadir.txt/curves"))
run("all-or-none-curves-is-a-file", BIN_CFG, {**BIN, **NOT_A_DIR}, r"notadir\.txt",
    args=("--curves", "notadir.txt"), usage=True)
add("run-unwritable-output-under-a-file", Case(
    ("run", "c.yaml", "-o", "notadir.txt/report.json"), {**BIN, **NOT_A_DIR, "c.yaml": BIN_CFG},
    2, (r"notadir\.txt/report\.json",), output=False))
add("run-unwritable-output-in-proc", Case(
    ("run", "c.yaml", "-o", "/proc/version/report.json"), {**BIN, "c.yaml": BIN_CFG}, 2,
    (r"/proc/version/report\.json",), output=False))
add("compare-unwritable-output-under-a-file", Case(
    ("compare", "preds.csv", "truth.csv", "-o", "notadir.txt/report.md"), {**BIN, **NOT_A_DIR},
    2, (r"notadir\.txt/report\.md",), output=False))
add("run-unwritable-per-query", Case(
    ("run", "c.yaml", "--per-query", "notadir.txt/pq.parquet"),
    {**RK, **NOT_A_DIR, "c.yaml": RK_CFG}, 2, (r"notadir\.txt/pq\.parquet",), output=False))
add("run-unwritable-curves", Case(
    ("run", "c.yaml", "--curves", "notadir.txt/c"), {**BIN, **NOT_A_DIR, "c.yaml": BIN_CFG}, 2,
    (r"notadir\.txt/c",), output=False))
run("config-report-under-a-file", BIN_CFG + "report: [notadir.txt/r.json]\n",
    {**BIN, **NOT_A_DIR}, r"notadir\.txt/r\.json")

# ----------------------------------------------- 7. diff, metrics, schema

DIFF_FILES = {"base.json": ACCEPTED, "cand.json": ACCEPTED}
command("diff-ok", ("diff", "base.json", "cand.json"), DIFF_FILES, code=0, output=False)
command("diff-baseline-missing", ("diff", "nope.json", "cand.json"), DIFF_FILES, r"nope\.json",
        r"does not exist", output=True)
command("diff-not-json", ("diff", "base.json", "cand.json"),
        with_(DIFF_FILES, **{"cand.json": "{not json"}), r"cand\.json", r"not JSON", r"line 1",
        output=True)
command("diff-not-a-report", ("diff", "base.json", "cand.json"),
        with_(DIFF_FILES, **{"cand.json": '{"a": 1}'}), r"cand\.json", r"not an evalcli",
        output=True)
command("diff-json-list", ("diff", "base.json", "cand.json"),
        with_(DIFF_FILES, **{"base.json": "[]"}), r"base\.json", output=True)
command("diff-metrics-not-objects", ("diff", "base.json", "cand.json"),
        with_(DIFF_FILES, **{"cand.json": '{"schema_version": 1, "task": "binary", '
                                          '"metrics": [1, "x", null]}'}),
        r"cand\.json", output=True)
command("diff-metric-without-id", ("diff", "base.json", "cand.json"),
        with_(DIFF_FILES, **{"cand.json": '{"schema_version": 1, "task": "binary", '
                                          '"metrics": [{"value": 0.5}]}'}),
        r"cand\.json", output=True)
command("diff-other-task", ("diff", "base.json", "cand.json"),
        with_(DIFF_FILES, **{"cand.json": ACCEPTED.replace('"task": "binary"',
                                                           '"task": "ranking"')}),
        r"task", output=True)
command("diff-non-utf8", ("diff", "base.json", "cand.json"),
        with_(DIFF_FILES, **{"cand.json": b'{"task": "caf\xe9"}'}), r"cand\.json", output=True)
command("diff-max-drop-text", ("diff", "base.json", "cand.json", "--max-drop", "abc"),
        DIFF_FILES, r"max.drop", r"abc", output=True)
command("diff-max-drop-metric-text", ("diff", "base.json", "cand.json", "--max-drop",
                                      "auroc=abc"), DIFF_FILES, r"auroc=abc", output=True)
command("diff-max-drop-negative", ("diff", "base.json", "cand.json", "--max-drop", "-0.1"),
        DIFF_FILES, r"max.drop", r"-0\.1", output=True)
command("diff-max-drop-unknown-metric", ("diff", "base.json", "cand.json", "--max-drop",
                                         "aucroc=0.1"), DIFF_FILES, r"aucroc", output=True)
command("diff-output-extension", ("diff", "base.json", "cand.json", "-o", "d.pdf"), DIFF_FILES,
        r"d\.pdf", output=False)
command("diff-output-is-the-baseline", ("diff", "base.json", "cand.json", "-o", "base.json"),
        DIFF_FILES, r"base\.json", r"input", output=False)
command("diff-output-under-a-file", ("diff", "base.json", "cand.json", "-o",
                                     "notadir.txt/d.json"), {**DIFF_FILES, **NOT_A_DIR},
        r"notadir\.txt/d\.json", output=False)
command("diff-gate-fails-exits-1", ("diff", "base.json", "cand.json", "--min-improvement",
                                    "0.5"), DIFF_FILES, code=1, output=False)
command("metrics-show-unknown", ("metrics", "show", "aucroc"), {}, r"'aucroc'",
        r"Did you mean 'auroc'")
command("metrics-show-100kb-name", ("metrics", "show", "n" * LONG), {}, r"unknown metric")
command("metrics-show-wrong-family", ("metrics", "show", "auroc", "--family", "ranking"), {},
        r"auroc")
command("metrics-show-unknown-family", ("metrics", "show", "auroc", "--family", "binray"), {},
        r"binray", r"binary")
command("metrics-unknown-family", ("metrics", "--family", "rankng"), {}, r"rankng",
        r"ranking")
command("metrics-show-garbage-id", ("metrics", "show", "ndcg@@@"), {}, r"ndcg@@@")
command("metrics-plugin-missing", ("metrics", "--plugin", "nope.py"), {}, r"nope\.py")
command("metrics-plugin-syntax-error", ("metrics", "show", "x", "--plugin", "bad.py"),
        {"bad.py": "def (\n"}, r"bad\.py")
command("metrics-show-ok", ("metrics", "show", "ndcg@10"), {}, code=0)
command("schema-unknown-option", ("schema", "--bogus"), {}, r"--bogus", usage=True)
command("schema-extra-argument", ("schema", "extra"), {}, r"extra", usage=True)
command("unknown-command", ("evaluate", "c.yaml"), {}, r"evaluate", usage=True)

# ----------------------------------------------- 8. internal errors: exit 3, one line, never 1

run("internal-error-while-computing", BIN_CFG, BIN, code=3,
    bug="evalcli.engine.polars_engine:run_polars")
run("internal-error-while-writing", BIN_CFG, BIN, code=3, bug="evalcli.report:render")
add("run-internal-error-writing-the-second-report", Case(
    ("run", "c.yaml", "-o", "out.json", "-o", "r.html"), {**BIN, "c.yaml": BIN_CFG}, 3,
    output=False, bug="evalcli.report.html:render"))
add("run-internal-error-writing-the-curves", Case(
    ("run", "c.yaml", "-o", "out.json", "--curves", "curves"),
    {**BIN, "c.yaml": BIN_CFG, "curves/.keep": ""}, 3, output=False,
    bug="evalcli.report.outputs:write_table"))
compare("internal-error", ("preds.csv", "truth.csv"), BIN, code=3,
        bug="evalcli.infer:build_config")
validate("internal-error", BIN_CFG, BIN, code=3, bug="evalcli.runner:prepare")
command("diff-internal-error", ("diff", "base.json", "cand.json"), DIFF_FILES, code=3,
        bug="evalcli.decide.diff:diff_reports")
command("metrics-internal-error", ("metrics", "show", "auroc"), {}, code=3,
        bug="evalcli.metrics.registry:get_registry")


# ----------------------------------------------- 9. Markdown reports escape what data says

def _markdown_escapes(folder: Path, r: CliResult, cli: Cli) -> None:
    text = (folder / "r.md").read_text()
    for raw in ("<script", "<img", "</script"):
        assert raw not in text, f"{raw!r} unescaped in the Markdown report:\n{text}"


XSS_SEG = "<script>alert(1)</script>"
XSS_IMG = "<img src=x onerror=alert(1)>"
run("markdown-escapes-segment-values", BIN_CFG + "group_by: [g]\nmetrics: [accuracy]\n",
    with_(BIN, truth_csv=f"id,label,g\n1,1,{XSS_SEG}\n2,0,{XSS_SEG}\n3,1,\"{XSS_IMG}\"\n"
                         f"4,0,\"{XSS_IMG}\"\n"), code=0, args=("-o", "r.md"),
    check=_markdown_escapes)
run("markdown-escapes-class-names", MC_CFG + "metrics: [confusion_matrix, "
    "{metric: precision, average: macro}]\n",
    {"preds.csv": f"id,prediction\n1,{XSS_SEG}\n2,\"{XSS_IMG}\"\n3,cat\n",
     "truth.csv": f"id,label\n1,{XSS_SEG}\n2,cat\n3,\"{XSS_IMG}\"\n"}, code=0,
    args=("-o", "r.md"), check=_markdown_escapes)
run("markdown-escapes-metric-notes", ML_CFG + "metrics: [{metric: recall, average: macro}]\n",
    {"preds.csv": f"id,prediction\n1,{XSS_SEG}\n2,b\n", "truth.csv": "id,label\n1,a\n2,b\n"},
    code=0, args=("-o", "r.md"), check=_markdown_escapes)


# --------------------------------------------------------------------------- the driver's test

@pytest.mark.parametrize("case", CASES)
def test_battery(case: Case, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drive(cli, tmp_path, monkeypatch, case)


def test_the_battery_is_large_and_ids_are_unique() -> None:
    ids = [p.id for p in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert len(ids) >= 160, len(ids)
    families = {"binary", "multiclass", "multilabel", "ranking", "regression", "trec"}
    assert all(any(f in i for i in ids) for f in families)
    for fmt in FORMATS:
        assert any(i.startswith(f"run-{fmt}-") for i in ids), fmt


# --------------------------------------------------------------------------- real processes

def _env() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="session")
def large_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """~3e6 rows of binary predictions and truth (CSV), made once per session."""
    import numpy as np

    folder = tmp_path_factory.mktemp("large")
    n = 3_000_000
    rng = np.random.default_rng(19)
    ids = np.arange(n)
    label = rng.integers(0, 2, n)
    score = np.clip(label * 0.3 + rng.random(n) * 0.7, 0, 1)
    pl.DataFrame({"id": ids, "score": score}).write_csv(folder / "preds.csv")
    pl.DataFrame({"id": rng.permutation(ids), "label": label}).write_csv(folder / "truth.csv")
    (folder / "c.yaml").write_text(BIN_CFG)
    return folder


@contextlib.contextmanager
def _process(args: list[str], cwd: Path, **kw: Any) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, *args], cwd=cwd, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigint_during_a_large_run(large_run: Path) -> None:
    """Ctrl-C in the middle of the computation: exit 130, a word on stderr, no traceback, the
    report that was there before unchanged, no temporary file left."""
    out = large_run / "out.json"
    out.write_bytes(SENTINEL)
    before = snapshot(large_run)
    with _process(["-m", "evalcli", "run", "c.yaml", "-o", "out.json", "-v"], large_run) as p:
        assert p.stderr is not None
        # -v prints a line when the run moves from aligning to computing: interrupt after it
        deadline = time.monotonic() + 60
        first = b""
        while time.monotonic() < deadline and p.poll() is None:
            ready, _, _ = select.select([p.stderr], [], [], 0.1)
            if ready:
                first = p.stderr.readline()
                break
        assert p.poll() is None, "the run ended before it could be interrupted"
        # (the computation of these 3e6 rows takes about 0.5 s on an idle 2-core machine
        # since the pass runs on Polars' streaming executor: 0.1 s in, it is still running)
        time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        stdout, stderr_rest = p.communicate(timeout=120)
    stderr = (first + stderr_rest).decode(errors="replace")
    assert "Traceback" not in stderr, stderr
    assert p.returncode == 130, (p.returncode, stderr)
    assert re.search(r"(?i)interrupt", stderr), stderr
    assert stdout == b""
    assert snapshot(large_run) == before
    assert not temp_files(large_run)


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


ALIAS_BOMB = "".join(
    [f"{c}: &{c} [" + ", ".join([f"*{p}"] * 9) + "]\n" for p, c in zip("abcdefgh", "bcdefghi",
                                                                      strict=True)])


@pytest.mark.parametrize("where", ["task", "options", "metrics"])
def test_yaml_alias_bomb(tmp_path: Path, where: str) -> None:
    """A billion-laughs config (9^9 leaves) is refused fast, with a short message."""
    head = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + ALIAS_BOMB
    tail = {"task": "task: *i\npredictions: preds.csv\n",
            "options": "task: binary\npredictions: preds.csv\ntruth: truth.csv\n"
                       "options: {x: *i}\n",
            "metrics": "task: binary\npredictions: preds.csv\ntruth: truth.csv\nmetrics: *i\n"}
    (tmp_path / "c.yaml").write_text(head + tail[where])
    materialize(tmp_path, BIN)
    (tmp_path / "out.json").write_bytes(SENTINEL)
    before = snapshot(tmp_path)
    started = time.monotonic()
    with _process(["-m", "evalcli", "run", "c.yaml", "-o", "out.json"], tmp_path,
                  preexec_fn=_limit_memory) as p:
        try:
            stdout, stderr_b = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("an alias bomb kept evalcli busy for more than 30 s")
    took = time.monotonic() - started
    stderr = stderr_b.decode(errors="replace")
    assert "Traceback" not in stderr and "MemoryError" not in stderr, stderr[:3000]
    assert p.returncode == 2, (p.returncode, stderr[:3000])
    assert stdout == b""
    assert stderr.count("error:") == 1 and len(stderr) < MAX_STDERR, stderr[:3000]
    assert "c.yaml" in stderr, stderr
    assert took < 10, f"{took:.1f} s"
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("module,attr,argv", [
    ("evalcli.engine.polars_engine", "run_polars", ["run", "c.yaml", "-o", "out.json"]),
    ("evalcli.config", "json_schema", ["schema"]),
    ("evalcli.infer", "build_config", ["compare", "preds.csv", "truth.csv", "-o", "out.json"]),
], ids=["run", "schema", "compare"])
def test_internal_error_through_the_entry_point(tmp_path: Path, module: str, attr: str,
                                                argv: list[str]) -> None:
    """A bug, through the console-script entry point: exit 3, one line saying it is a bug."""
    materialize(tmp_path, {**BIN, "c.yaml": BIN_CFG})
    (tmp_path / "out.json").write_bytes(SENTINEL)
    before = snapshot(tmp_path)
    code = (f"import sys, {module} as m\n"
            "def boom(*a, **k):\n    raise ZeroDivisionError('injected')\n"
            f"m.{attr} = boom\n"
            "from evalcli.cli import main\n"
            f"sys.argv = ['evalcli', *{argv!r}]\n"
            "main()\n")
    with _process(["-c", code], tmp_path) as p:
        stdout, stderr_b = p.communicate(timeout=120)
    stderr = stderr_b.decode(errors="replace")
    assert p.returncode == 3, (p.returncode, stderr)
    assert "Traceback" not in stderr, stderr
    assert len([x for x in stderr.splitlines() if re.search(r"(?i)\bbug\b", x)]) == 1, stderr
    assert stdout == b""
    assert snapshot(tmp_path) == before
