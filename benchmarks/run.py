"""The evalcli benchmark: the floor, evalcli end to end and the peers, on the same files.

    python benchmarks/run.py --quick        # 10^5 rows (10^3 queries): checks the setup quickly
    python benchmarks/run.py                # the issue's sizes: 10^6 and 10^7 rows, 10^4 and
                                            # 10^5 queries, plus start-up and alignment
    python benchmarks/run.py --families binary --sizes 1e7 --repeats 7
    python benchmarks/run.py --streaming    # adds the 10^8-row case beyond memory (disk!)
    python benchmarks/run.py --spark --families binary --sizes 1e7 --no-align  # + engine spark
    python benchmarks/run.py --ci --families binary --sizes 1e5 --no-align  # + intervals' cost
    python benchmarks/run.py --ci-segments --families binary --sizes 1e3 --no-align --no-peers
                                            # + intervals over 20 to 100 segments

Every measurement is a fresh process (``/usr/bin/time`` style: wall clock around the process,
peak resident memory from ``wait4``), repeated ``--repeats`` times (at least 5), interleaved
(floor, evalcli, peer, then the next round) so that a burst of load elsewhere hits them alike;
the table shows medians. Before timing a case, one untimed run of evalcli and of the peer
checks that their values agree (and warms the page cache for all three); a case whose values
disagree is reported and not timed, and the command exits 1.

Each case runs in two layouts (``--layouts``): two files, predictions and truth, joined on the
keys; and one file holding both (the two files joined once, beforehand), where there is
nothing to join. Ranking runs as two files only (its truth has rows no prediction has).

- floor: Polars reads the file(s) and joins them on the keys, nothing else;
- evalcli: ``evalcli run config.yaml --format json`` computing every metric of the family;
- peer: scikit-learn (binary, multiclass, multilabel, regression), read and compute timed
  apart inside the process; ranx (ranking), read, build and evaluate apart.

Data is generated (seeded) under ``benchmarks/data/`` (git-ignored) on first use; results go
to ``benchmarks/results/latest.json`` and the table is printed as Markdown.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402

RESULTS = HERE / "results"
PY = sys.executable
EVALCLI = str(Path(sys.executable).parent / "evalcli")
if not Path(EVALCLI).exists():
    EVALCLI = shutil.which("evalcli") or "evalcli"

FULL_SIZES = {"binary": [10**6, 10**7], "multiclass": [10**6, 10**7],
              "multilabel": [10**6], "regression": [10**6, 10**7],
              "ranking": [10**4, 10**5]}
QUICK_SIZES = {"binary": [10**5], "multiclass": [10**5], "multilabel": [10**5],
               "regression": [10**5], "ranking": [10**3]}
PEER = {"binary": "sklearn", "multiclass": "sklearn", "multilabel": "sklearn",
        "regression": "sklearn", "ranking": "ranx"}
PEER_NAME = {"sklearn": "scikit-learn", "ranx": "ranx"}
REL_TOL, ABS_TOL = 1e-9, 1e-12

# targets from the issue: (family, size) -> (max evalcli/floor, min peer/evalcli)
TARGETS = {("binary", 10**7): (1.5, 10.0), ("multiclass", 10**7): (1.5, 10.0),
           ("regression", 10**7): (1.5, 5.0), ("ranking", 10**5): (2.0, 20.0),
           ("ranking", 10**4): (None, 20.0)}

# issue 14: (family, size, layout) -> max evalcli / hand-written Polars script
HANDWRITTEN_TARGETS = {("ranking", 10**5, "two"): 1.0, ("binary", 10**7, "two"): 1.1,
                       ("binary", 10**7, "one"): 1.2}


# --------------------------------------------------------------------------- processes

@dataclass
class Proc:
    wall: float
    rss_mb: float
    stdout: str
    phases: dict[str, float] = field(default_factory=dict)


class ChildFailed(RuntimeError):
    pass


TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None
"""GNU time reports the child's peak RSS. Measured from this process instead (``wait4``), the
peak would include this process's own memory: a child starts as a copy of its parent until it
execs, and Linux counts that copy in the child's maximum."""


def run_proc(cmd: Sequence[str], cwd: Path | None = None) -> Proc:
    """Run ``cmd`` to completion; wall seconds and peak RSS of that one process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r", suffix=".rss") as rss:
        full = [TIME, "-f", "%M", "-o", rss.name, *cmd] if TIME else list(cmd)
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=out, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode()
        if p.returncode != 0:
            tail = err.read().decode().strip().splitlines()[-8:]
            raise ChildFailed(f"{' '.join(cmd)} exited {p.returncode}:\n  " + "\n  ".join(tail))
        kb = float(usage.ru_maxrss)
        if TIME:
            lines = [ln for ln in rss.read().splitlines() if ln.strip().isdigit()]
            kb = float(lines[-1]) if lines else math.nan
    return Proc(wall, kb / 1024, stdout)


def peer_proc(kind: str, family: str, pred: Path, truth: Path) -> Proc:
    p = run_proc([PY, str(HERE / "peers.py"), kind, family, str(pred), str(truth)])
    data = json.loads(p.stdout)
    p.phases = data.get("phases", {})
    p.stdout = json.dumps(data.get("values", {}))
    return p


def evalcli_proc(config: Path) -> Proc:
    return run_proc([EVALCLI, "run", str(config), "--format", "json", "--no-gate"])


def evalcli_values(p: Proc) -> dict[str, Any]:
    report = json.loads(p.stdout)
    return {m["id"]: m["value"] for m in report["metrics"]}


def load() -> tuple[float, float, float]:
    return os.getloadavg()


# --------------------------------------------------------------------------- one case

@dataclass
class CaseResult:
    family: str
    size: int
    fmt: str
    peer: str
    rows: int = 0
    floor: list[Proc] = field(default_factory=list)
    evalcli: list[Proc] = field(default_factory=list)
    peers: list[Proc] = field(default_factory=list)
    check: list[tuple[str, Any, Any, bool]] = field(default_factory=list)
    ok: bool = True
    error: str = ""
    load_before: tuple[float, ...] = ()
    load_after: tuple[float, ...] = ()
    layout: str = "two"
    plain: list[Proc] = field(default_factory=list)
    """The hand-written Polars script (benchmarks/handwritten.py; binary and ranking)."""
    same: list[Proc] = field(default_factory=list)
    """evalcli on the hand-written script's metrics only."""

    @property
    def name(self) -> str:
        files = "two files" if self.layout == "two" else "one file"
        return f"{self.family} {self.size:,} {self.fmt}, {files}"

    @staticmethod
    def med(ps: list[Proc], attr: str = "wall") -> float:
        return statistics.median(getattr(p, attr) for p in ps) if ps else math.nan

    def phase(self, name: str) -> float:
        vals = [p.phases[name] for p in self.peers if name in p.phases]
        return statistics.median(vals) if vals else math.nan

    def as_json(self) -> dict[str, Any]:
        def runs(ps: list[Proc]) -> list[dict[str, Any]]:
            return [{"wall": p.wall, "rss_mb": p.rss_mb, "phases": p.phases} for p in ps]

        return {"family": self.family, "size": self.size, "format": self.fmt, "peer": self.peer,
                "layout": self.layout,
                "ok": self.ok, "error": self.error, "check": self.check,
                "floor": runs(self.floor), "evalcli": runs(self.evalcli),
                "peers": runs(self.peers), "handwritten": runs(self.plain),
                "evalcli_same_metrics": runs(self.same), "load_before": self.load_before,
                "load_after": self.load_after}


def check_values(evalcli: dict[str, Any], peer: dict[str, float]
                 ) -> list[tuple[str, Any, Any, bool]]:
    rows = []
    for key, want in peer.items():
        got = evalcli.get(key)
        ok = isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=REL_TOL,
                                                            abs_tol=ABS_TOL)
        rows.append((key, got, want, ok))
    return rows


def handwritten_cmd(family: str, fmt: str, pred: Path, truth: Path) -> list[str] | None:
    """The hand-written Polars script's command for a case (binary and ranking, Parquet)."""
    if family not in ("binary", "ranking") or fmt != "parquet":
        return None
    return [PY, str(HERE / "handwritten.py"), family, str(pred), str(truth)]


def same_config(family: str, config: Path) -> Path:
    """evalcli's config for the hand-written script's metrics (ranking: ranx's order, as the
    case's config), beside the case's config."""
    from handwritten import METRICS

    text = config.read_text().split("metrics:")[0].rstrip("\n") + "\n"
    out = config.with_name(config.stem + "-handwritten.yaml")
    out.write_text(text + "metrics: [" + ", ".join(f'"{m}"' for m in METRICS[family]) + "]\n")
    return out


def run_case(family: str, size: int, fmt: str, repeats: int, peers: bool,
             layout: str = "two") -> CaseResult:
    """One case: ``layout`` two (predictions and truth files, joined) or one (one file holding
    predictions and labels: nothing to join). Binary and ranking on Parquet also time the
    hand-written Polars script (its values checked against evalcli's first) and evalcli on
    that script's metrics only."""
    peer = PEER[family]
    res = CaseResult(family, size, fmt, PEER_NAME[peer] if peers else "-", layout=layout)
    folder = generate.generate(family, size, ("parquet", "csv"))
    pred, truth = folder / f"predictions.{fmt}", folder / f"truth.{fmt}"
    config = folder / f"config-{fmt}.yaml"
    if layout == "one":
        config = generate.onefile(folder, family, fmt)
        pred, truth = folder / f"onefile.{fmt}", Path("-")
    res.load_before = load()
    say(f"\n== {res.name} (load {res.load_before[0]:.1f})")
    try:
        # the check (and the page-cache warm-up): one untimed run of each
        e = evalcli_proc(config)
        values = evalcli_values(e)
        run_proc([PY, str(HERE / "peers.py"), "floor", family, str(pred), str(truth)])
        plain = handwritten_cmd(family, fmt, pred, truth)
        same = same_config(family, config) if plain else None
        if plain and same:
            mine = evalcli_values(evalcli_proc(same))
            hand = json.loads(run_proc(plain).stdout)
            bad = [r for r in check_values(mine, hand) if not r[3]]
            say(f"   check vs the hand-written script: {len(hand) - len(bad)}/{len(hand)} equal")
            if bad:
                res.ok = False
                res.error = f"values differ from the hand-written script's: {bad}"
                return res
        if peers:
            pp = peer_proc(peer, family, pred, truth)
            res.check = check_values(values, json.loads(pp.stdout))
            bad = [r for r in res.check if not r[3]]
            say(f"   check vs {res.peer}: {len(res.check) - len(bad)}/{len(res.check)} "
                "values equal" + ("" if not bad else " -- MISMATCH:"))
            for key, got, want, _ in bad:
                say(f"     {key}: evalcli {got!r} vs {res.peer} {want!r}")
            if bad:
                res.ok = False
                res.error = "values differ from the peer's; not timed"
                return res
        kinds = ["floor", "evalcli"] + (["peer"] if peers else []) + (
            ["plain", "same"] if plain else [])
        for r in range(repeats):
            order = kinds[r % len(kinds):] + kinds[:r % len(kinds)]
            for kind in order:
                if kind == "floor":
                    res.floor.append(peer_proc("floor", family, pred, truth))
                elif kind == "evalcli":
                    res.evalcli.append(evalcli_proc(config))
                elif kind == "plain" and plain:
                    res.plain.append(run_proc(plain))
                elif kind == "same" and same:
                    res.same.append(evalcli_proc(same))
                else:
                    res.peers.append(peer_proc(peer, family, pred, truth))
            say(f"   round {r + 1}/{repeats}: floor {res.floor[-1].wall:.2f}s  "
                f"evalcli {res.evalcli[-1].wall:.2f}s"
                + (f"  {res.peer} {res.peers[-1].wall:.2f}s" if peers else "")
                + (f"  hand-written {res.plain[-1].wall:.2f}s" if res.plain else "")
                + (f"  evalcli (its metrics) {res.same[-1].wall:.2f}s" if res.same else ""))
    except ChildFailed as exc:
        res.ok = False
        res.error = str(exc)
        say(f"   FAILED: {exc}")
    res.load_after = load()
    return res


# --------------------------------------------------------------------------- start-up

def startup(repeats: int) -> dict[str, Any]:
    folder = generate.generate("binary", 1000, ("parquet", "csv"))
    out: dict[str, Any] = {}
    cmds = {
        "evalcli --version": [EVALCLI, "--version"],
        "evalcli --help": [EVALCLI, "--help"],
        "python -c pass": [PY, "-c", "pass"],
        "python -c 'import polars'": [PY, "-c", "import polars"],
        "evalcli run (1,000 rows, 14 metrics, Parquet)": [
            EVALCLI, "run", str(folder / "config-parquet.yaml"), "--format", "json"],
        "evalcli run (1,000 rows, 14 metrics, CSV)": [
            EVALCLI, "run", str(folder / "config-csv.yaml"), "--format", "json"],
    }
    say("\n== start-up")
    for name, cmd in cmds.items():
        run_proc(cmd)  # warm
        walls = [run_proc(cmd).wall for _ in range(repeats)]
        out[name] = {"median": statistics.median(walls), "runs": walls}
        say(f"   {name}: {statistics.median(walls):.3f}s")
    return out


# --------------------------------------------------------------------------- alignment

ALIGN_KINDS = ("join", "join-1:1", "evalcli-align")


def alignment(size: int, repeats: int) -> dict[str, Any]:
    """Cost of aligning two files: hash joins (plain, validated) vs evalcli's sort-merge path,
    on integer and string keys, the truth shuffled or already in the predictions' order."""
    base = generate.generate("binary", size, ("parquet", "csv"))
    variants = make_align_variants(base, size)
    out: dict[str, Any] = {}
    say(f"\n== alignment, binary {size:,} rows")
    for name, folder in variants.items():
        row: dict[str, Any] = {}
        pred, truth = folder / "predictions.parquet", folder / "truth.parquet"
        for kind in ALIGN_KINDS:
            cmd = [PY, str(HERE / "peers.py"), kind, "binary", str(pred), str(truth)]
            run_proc(cmd)
            ps = []
            for _ in range(repeats):
                p = run_proc(cmd)
                p.phases = json.loads(p.stdout)["phases"]
                ps.append(p)
            row[kind] = {"wall": statistics.median(p.wall for p in ps),
                         "inside": statistics.median(sum(p.phases.values()) for p in ps),
                         "rss_mb": statistics.median(p.rss_mb for p in ps)}
        e = [evalcli_proc(folder / "config-parquet.yaml") for _ in range(repeats)]
        row["evalcli"] = {"wall": statistics.median(p.wall for p in e),
                          "rss_mb": statistics.median(p.rss_mb for p in e)}
        out[name] = row
        say(f"   {name}: " + ", ".join(f"{k} {v['wall']:.2f}s" for k, v in row.items()))
    return out


def make_align_variants(base: Path, size: int) -> dict[str, Path]:
    import polars as pl

    root = generate.DATA / f"align-{size}"
    pred = pl.read_parquet(base / "predictions.parquet")
    truth = pl.read_parquet(base / "truth.parquet")
    as_str = pl.format("id-{}", pl.col("id").cast(pl.String).str.zfill(10)).alias("id")
    variants = {
        "int keys, truth shuffled": (pred, truth),
        "int keys, same order": (pred, truth.sort("id")),
        "string keys, truth shuffled": (pred.with_columns(as_str), truth.with_columns(as_str)),
        "string keys, same order": (pred.with_columns(as_str),
                                    truth.sort("id").with_columns(as_str)),
    }
    out = {}
    for i, (name, (p, t)) in enumerate(variants.items()):
        folder = root / f"v{i}"
        if not (folder / "done").exists():
            folder.mkdir(parents=True, exist_ok=True)
            p.write_parquet(folder / "predictions.parquet")
            t.write_parquet(folder / "truth.parquet")
            (folder / "config-parquet.yaml").write_text(
                generate.config_text("binary", "predictions.parquet", "truth.parquet"))
            (folder / "done").write_text(name)
        out[name] = folder
    return out


# --------------------------------------------------------------------------- beyond memory

def streaming(size: int, chunks: int, keep: bool) -> dict[str, Any]:
    """A binary case larger than the in-memory engine should hold, run with engine: streaming,
    as two files to join and as one file of predictions with labels.

    The files are written in id order (the two sides then merge in constant memory), and
    scores are rounded to 4 decimals: the exact curve metrics keep one row per distinct score
    (10^8 distinct float scores make that table as large as the data), and Polars' streaming
    group-by holds memory in proportion to the rows when the distinct scores number 10^6 or
    more."""
    need = size * 40  # Parquet on disk, both layouts, about 40 bytes a row in all
    free = shutil.disk_usage(generate.DATA.parent).free
    say(f"\n== beyond memory: binary {size:,} rows in {chunks} Parquet chunks")
    if free < 2 * need:
        say(f"   skipped: {free / 2**30:.1f} GiB free on disk, want {2 * need / 2**30:.1f}")
        return {"skipped": "disk"}
    t0 = time.perf_counter()
    folder = generate.generate("binary", size, ("parquet",), chunks=chunks, quantize=4)
    gen_s = time.perf_counter() - t0
    out: dict[str, Any] = {"rows": size, "chunks": chunks, "generate_s": round(gen_s, 1)}
    layouts = {
        # in memory: id twice, score, prediction, label (8 bytes each)
        "two files (join on id)": ("config-parquet.yaml", 40, ("predictions", "truth")),
        # in memory: id, score, prediction, label
        "one file (labels beside the predictions)": ("config-onefile.yaml", 32, ("joined",)),
    }
    for name, (config, row_bytes, dirs) in layouts.items():
        cfg = folder / config.replace(".yaml", "-streaming.yaml")
        cfg.write_text((folder / config).read_text() + "engine: streaming\n")
        disk = sum(f.stat().st_size for d in dirs for f in (folder / d).glob("*.parquet"))
        res: dict[str, Any] = {"disk_mb": disk / 2**20, "in_memory_mb": size * row_bytes / 2**20}
        try:
            p = evalcli_proc(cfg)
            report = json.loads(p.stdout)
            res.update(wall=p.wall, rss_mb=p.rss_mb, engine=report.get("engine"),
                       values=evalcli_values(p), load=load())
            say(f"   {name}: {p.wall:.1f}s, peak {p.rss_mb:,.0f} MB (data in memory "
                f"{res['in_memory_mb']:,.0f} MB, on disk {res['disk_mb']:,.0f} MB)")
        except ChildFailed as exc:
            res["error"] = str(exc)
            say(f"   {name}: FAILED {exc}")
        out[name] = res
    if not keep:
        shutil.rmtree(folder)
        say(f"   deleted {folder}")
    return out


# --------------------------------------------------------------------------- engine: spark

SPARK_CASES = {"binary": 10**7, "ranking": 10**5}
"""The Spark rows: the 10^7-row binary and the 10^5-query ranking sets (--quick: the small)."""
SPARK_CONFIG = """engine: spark
spark:
  master: local[*]
  conf:
    spark.driver.memory: 6g
    spark.sql.shuffle.partitions: 16
"""


def spark_rows(quick: bool, repeats: int) -> dict[str, Any]:
    """The cases' configs again with ``engine: spark`` in local mode: fresh processes (JVM
    start included), values checked against the in-process engine's run of the same config."""
    import importlib.util

    if importlib.util.find_spec("pyspark") is None or not (
            shutil.which("java") or os.environ.get("JAVA_HOME")):
        say("\n== engine spark: skipped (needs pip install 'evalcli[spark]' and Java 17+)")
        return {"skipped": "pyspark or Java missing"}
    out: dict[str, Any] = {}
    for family, size in SPARK_CASES.items():
        size = QUICK_SIZES[family][0] if quick else size
        folder = generate.generate(family, size, ("parquet",))
        base, cfg = folder / "config-parquet.yaml", folder / "config-spark.yaml"
        cfg.write_text(_spark_config(base.read_text()))
        name = f"{family} {size:,}"
        say(f"\n== engine spark, local[*]: {name}")
        try:
            local = evalcli_proc(base)
            runs = [evalcli_proc(cfg) for _ in range(repeats)]
        except ChildFailed as exc:
            out[name] = {"error": str(exc)}
            say(f"   FAILED {exc}")
            continue
        got = evalcli_values(runs[-1])
        want = {k: v for k, v in evalcli_values(local).items() if k in got}
        differ = [k for k, v in want.items() if not (
            (v is None and got.get(k) is None)
            or (isinstance(v, int | float) and isinstance(got.get(k), int | float)
                and math.isclose(v, got[k], rel_tol=REL_TOL, abs_tol=ABS_TOL)))]
        walls = [p.wall for p in runs]
        out[name] = {"wall": statistics.median(walls), "walls": walls,
                     "driver_rss_mb": max(p.rss_mb for p in runs), "in_process_wall": local.wall,
                     "metrics": len(want), "values_differ": differ, "load": load()}
        say(f"   {statistics.median(walls):.1f}s median of {repeats} (in-process: "
            f"{local.wall:.1f}s); {len(want)} metrics, "
            + (f"values DIFFER: {', '.join(differ)}" if differ else "values equal"))
    return out


def uncertainty_rows(quick: bool, repeats: int, spark: bool) -> dict[str, Any]:
    """Issue 13's cost of intervals: for binary (10^7 rows; --quick 10^5) and ranking (10^5
    queries x 100; --quick 10^3), the plain run, the same run with 1,000-replicate intervals
    on every metric (``--ci --ci-method bootstrap``: every metric resampled, the dearest
    case), and a two-system paired comparison (the second system's scores perturbed); the
    median of interleaved fresh processes. Then the same intervals from the streaming engine
    (and Spark with ``--spark``) on the smaller case, compared bound for bound."""
    import polars as pl

    out: dict[str, Any] = {}
    for family, size in (("binary", 10**5 if quick else 10**7),
                         ("ranking", 10**3 if quick else 10**5)):
        folder = generate.generate(family, size, ("parquet", "csv"))
        config = folder / "config-parquet.yaml"
        second = folder / "predictions-b.parquet"
        if not second.exists():
            df = pl.read_parquet(folder / "predictions.parquet")
            noise = (pl.int_range(pl.len()).hash(7) % 1000).cast(pl.Float64) / 1000.0 - 0.5
            df.with_columns((pl.col("score") + 0.2 * noise).clip(0.0, 1.0).alias("score")
                            ).write_parquet(second)
        text = config.read_text()
        pred_line = next(ln for ln in text.splitlines() if ln.startswith("predictions:"))
        systems = folder / "config-systems.yaml"
        systems.write_text(text.replace(
            pred_line, f"predictions:\n  a: {folder / 'predictions.parquet'}\n"
            f"  b: {second}") + "\nuncertainty: {method: bootstrap}\n")
        cmds = {
            "plain": [EVALCLI, "run", str(config), "--format", "json", "--no-gate"],
            "ci": [EVALCLI, "run", str(config), "--format", "json", "--no-gate", "--ci",
                   "--ci-method", "bootstrap"],
            "two systems": [EVALCLI, "run", str(systems), "--format", "json", "--no-gate"],
        }
        say(f"\n== intervals: {family} {size:,}")
        try:
            for cmd in cmds.values():
                run_proc(cmd)  # warm-up
            times: dict[str, list[Proc]] = {k: [] for k in cmds}
            for r in range(repeats):
                for k in list(cmds)[r % 3:] + list(cmds)[:r % 3]:
                    times[k].append(run_proc(cmds[k]))
                say(f"   round {r + 1}/{repeats}: " + "  ".join(
                    f"{k} {v[-1].wall:.2f}s" for k, v in times.items()))
            med = {k: statistics.median(p.wall for p in v) for k, v in times.items()}
            rss = {k: statistics.median(p.rss_mb for p in v) for k, v in times.items()}
            out[f"{family} {size:,}"] = {"wall": med, "rss_mb": rss,
                                         "ci_ratio": med["ci"] / med["plain"],
                                         "systems_ratio": med["two systems"] / med["plain"],
                                         "systems_ci_ratio": med["two systems"] / med["ci"]}
        except ChildFailed as exc:
            out[f"{family} {size:,}"] = {"error": str(exc)}
    # the same intervals on every engine
    folder = generate.generate("binary", 10**5, ("parquet", "csv"))
    base = [EVALCLI, "run", str(folder / "config-parquet.yaml"), "--format", "json",
            "--no-gate", "--ci", "--ci-method", "bootstrap"]
    engines = ["polars", "streaming"] + (["spark"] if spark else [])
    bounds = {}
    for e in engines:
        try:
            report = json.loads(run_proc([*base, "--engine", e]).stdout)
            bounds[e] = [(m["id"], m["ci"]["low"], m["ci"]["high"]) for m in report["metrics"]]
        except ChildFailed as exc:
            bounds[e] = [("error", str(exc), None)]
    out["engines"] = {e: b == bounds["polars"] for e, b in bounds.items()}
    return out


SEGMENT_CASES: tuple[tuple[str, int, int, tuple[str, ...], str], ...] = (
    # family, size, segments, the --ci flags, the metrics (YAML; "" for every metric)
    ("binary", 10**3, 20, ("--ci",),
     "[accuracy, precision, recall, specificity, fpr, f1, {metric: fbeta, beta: 2}, mcc, "
     "balanced_accuracy, auroc, auprc, average_precision, log_loss, brier, peak_f1, "
     "{metric: recall_at_precision, min_precision: 0.9}, "
     "{metric: precision_at_recall, min_recall: 0.9}, "
     "{metric: sensitivity_at_specificity, min_specificity: 0.9}, "
     "{metric: specificity_at_sensitivity, min_sensitivity: 0.9}, "
     "{metric: min_cost, fp_cost: 1, fn_cost: 5}, precision_at_top@0.1, lift@0.1, lift_table, "
     "ece, mce]"),
    ("ranking", 10**3, 100, ("--ci", "--ci-method", "bootstrap"),
     "[precision, recall, f1, hit_rate, hits@10, micro_recall, mrr, map, ndcg, dcg, "
     "r_precision, auc, precision@10, recall@10, f1@10, hit_rate@10, mrr@10, map@10, ndcg@10, "
     "dcg@10, map@100]"),
    ("ranking", 10**3, 100, ("--ci", "--ci-method", "bootstrap"),
     "[num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret, bpref, gm_map, set_map, "
     "utility, bin_g, g, ndcg_rel, rndcg, rbp, unjudged_fraction, infap]"),
    ("multiclass", 10**5, 20, ("--ci",), ""),
    # per-class scores (a list column derived from the prediction: see _with_scores)
    ("multiclass+scores", 10**4, 5, ("--ci",),
     "[accuracy, log_loss, top_k_accuracy, auroc, {metric: auroc, multi_class: ovo}, "
     "{metric: auroc, average: micro}, average_precision, ece, mce, "
     "{metric: ece, kind: classwise}]"),
    ("regression", 10**5, 20, ("--ci", "--ci-method", "bca"), ""),
)
"""Intervals over many segments: each metric's replicates are computed per segment too."""


def _with_scores(folder: Path) -> str:
    """The multiclass case's predictions with a probability per class (a list column
    ``score``): a softmax of noise plus 1.5 for the predicted class, two decimals (ties).
    Written once beside the case's files; the file's name."""
    import numpy as np
    import polars as pl

    out = folder / "predictions-scores.parquet"
    if not out.exists():
        pred = pl.read_parquet(folder / "predictions.parquet")
        rng = np.random.default_rng(7)
        k = generate.N_CLASSES
        logits = rng.normal(size=(pred.height, k))
        logits[np.arange(pred.height), pred["prediction"].to_numpy()] += 1.5
        p = np.exp(logits)
        p = np.round(p / p.sum(axis=1, keepdims=True), 2)
        p[:, -1] = np.round(1.0 - p[:, :-1].sum(axis=1), 2)  # (rows summing to 1)
        keep = (p >= 0).all(axis=1)
        pred.filter(pl.Series(keep)).select("id", pl.Series("score", p[keep].tolist())
                                            ).write_parquet(out)
    return out.name


def segment_rows(repeats: int) -> dict[str, Any]:
    """Intervals per segment (:data:`SEGMENT_CASES`): each case's data with a segment column
    added to the truth (the id's or the query's hash, modulo the count), timed as the median
    of fresh processes."""
    import polars as pl
    import yaml

    out: dict[str, Any] = {}
    for i, (case, size, n, flags, metrics) in enumerate(SEGMENT_CASES):
        family = case.split("+")[0]
        folder = generate.generate(family, size, ("parquet", "csv"))
        key = "query" if family == "ranking" else "id"
        truth = folder / f"truth-seg{n}.parquet"
        if not truth.exists():
            pl.read_parquet(folder / "truth.parquet").with_columns(
                pl.format("s{}", pl.col(key).hash(3) % n).alias("seg")).write_parquet(truth)
        cfg = yaml.safe_load((folder / "config-parquet.yaml").read_text())
        cfg.update({"truth": truth.name, "group_by": ["seg"]})
        if case.endswith("+scores"):
            cfg.update({"predictions": _with_scores(folder), "alignment": {"unmatched": "drop"}})
        if metrics:
            cfg["metrics"] = yaml.safe_load(metrics)
        config = folder / f"config-seg-{i}.yaml"
        config.write_text(yaml.safe_dump(cfg, sort_keys=False))
        name = (f"{case.replace('+', ' with ')} {size:,}, {n} segments, "
                f"{len(cfg['metrics']) if metrics else 'every'} metrics, {' '.join(flags)}")
        cmd = [EVALCLI, "run", str(config), "--format", "json", "--no-gate", *flags]
        say(f"\n== {name}")
        try:
            run_proc(cmd)  # warm-up
            runs = [run_proc(cmd) for _ in range(repeats)]
        except ChildFailed as exc:
            out[name] = {"error": str(exc)}
            continue
        out[name] = {"wall": statistics.median(p.wall for p in runs),
                     "rss_mb": statistics.median(p.rss_mb for p in runs), "load": load()}
        say(f"   {out[name]['wall']:.2f}s median of {repeats}")
    return out


def uncertainty_table(rows: dict[str, Any]) -> list[str]:
    lines = ["", "| intervals (1,000 replicates, every metric bootstrapped) | plain s | "
             "with intervals s | ratio (target <= 2x) | two systems paired s | ratio to plain | "
             "ratio to one system with intervals (target <= 2.5x) |",
             "|---|---|---|---|---|---|---|"]
    for name, row in rows.items():
        if name == "engines":
            continue
        if "error" in row:
            lines.append(f"| {name} | failed: {row['error'].splitlines()[0][:80]} | | | | | |")
            continue
        w = row["wall"]
        lines.append(f"| {name} | {w['plain']:.2f} | {w['ci']:.2f} | {row['ci_ratio']:.2f}x | "
                     f"{w['two systems']:.2f} | {row['systems_ratio']:.2f}x | "
                     f"{row['systems_ci_ratio']:.2f}x |")
    same = rows.get("engines", {})
    lines.append("same intervals as the in-memory engine (binary 10^5, seed 0): " + ", ".join(
        f"{e} {'yes' if ok else 'NO'}" for e, ok in same.items() if e != "polars"))
    return lines


def _spark_config(text: str) -> str:
    """The config on engine: spark, without the metrics that run in-process only."""
    import yaml

    from evalcli.config import MetricEntry
    from evalcli.metrics.registry import get_registry

    cfg = yaml.safe_load(text)
    reg = get_registry()
    keep = [m for m in cfg.get("metrics", []) if "spark" in reg.get(
        cfg["task"], MetricEntry.model_validate(m).metric).engines]
    dropped = len(cfg.get("metrics", [])) - len(keep)
    if dropped:
        cfg["metrics"] = keep
        say(f"   ({dropped} in-process-only metric(s) left out of the Spark run)")
    return yaml.safe_dump(cfg, sort_keys=False) + SPARK_CONFIG


def spark_table(rows: dict[str, Any]) -> list[str]:
    """The Spark rows of the Markdown report."""
    if "skipped" in rows:
        return ["", f"engine spark: skipped ({rows['skipped']})"]
    out = ["", "| engine spark (local[*], JVM start included) | median s | in-process s | "
           "values |", "|---|---|---|---|"]
    for name, r in rows.items():
        if "error" in r:
            out.append(f"| {name} | failed | - | - |")
        else:
            out.append(f"| {name} | {fmt_s(r['wall'])} | {fmt_s(r['in_process_wall'])} | "
                       + ("differ: " + ", ".join(r["values_differ"]) if r["values_differ"]
                          else f"equal ({r['metrics']} metrics)") + " |")
    return out


# --------------------------------------------------------------------------- the table

def fmt_s(x: float) -> str:
    return "-" if math.isnan(x) else (f"{x:.2f}" if x < 100 else f"{x:.0f}")


def table(results: list[CaseResult]) -> str:
    head = ("| case | floor s | evalcli s | peer s (phases) | evalcli/floor | evalcli/peer "
            "| peer/evalcli | hand-written Polars s | evalcli (its metrics; all) / hand-written "
            "| peak MB floor / evalcli / peer / hand-written | load |")
    lines = [head, "|" + "---|" * 11]
    for r in results:
        name = r.name
        if not r.ok:
            lines.append(f"| {name} | {r.error.splitlines()[0][:80]} |" + " |" * 9)
            continue
        hw = r.med(r.plain)
        if r.plain:
            hand = f"{fmt_s(hw)} | {r.med(r.same) / hw:.2f}; {r.med(r.evalcli) / hw:.2f}"
        else:
            hand = "- | -"
        fl, ev = r.med(r.floor), r.med(r.evalcli)
        pe = r.med(r.peers)
        if r.peers:
            names = [k for k in r.peers[0].phases]
            phases = " + ".join(f"{k} {fmt_s(r.phase(k))}" for k in names)
            peer = f"{r.peer} {fmt_s(pe)} ({phases})"
        else:
            peer = "-"
        mem = " / ".join(f"{r.med(ps, 'rss_mb'):,.0f}" if ps else "-"
                         for ps in (r.floor, r.evalcli, r.peers, r.plain))
        lines.append(
            f"| {name} | {fmt_s(fl)} | {fmt_s(ev)} | {peer} | {ev / fl:.2f} | "
            + (f"{ev / pe:.3f} | {pe / ev:.1f}x" if r.peers else "- | -")
            + f" | {hand} | {mem} | {r.load_before[0]:.1f}-{r.load_after[0]:.1f} |")
    return "\n".join(lines)


def targets(results: list[CaseResult], start: dict[str, Any] | None,
            mem: dict[str, Any] | None) -> list[str]:
    out = []
    for r in results:
        t = TARGETS.get((r.family, r.size))
        if t is None or not r.ok or r.fmt != "parquet":
            continue
        where = f"{r.family} {r.size:,} ({'two files' if r.layout == 'two' else 'one file'})"
        ev, fl, pe = r.med(r.evalcli), r.med(r.floor), r.med(r.peers)
        max_floor, min_peer = t
        if max_floor is not None:
            out.append(f"{'MET ' if ev / fl <= max_floor else 'MISS'} {where}: "
                       f"evalcli/floor {ev / fl:.2f} (target <= {max_floor})")
        if r.peers:
            out.append(f"{'MET ' if pe / ev >= min_peer else 'MISS'} {where}: "
                       f"{pe / ev:.1f}x faster than {r.peer} (target >= {min_peer}x)")
        hand = HANDWRITTEN_TARGETS.get((r.family, r.size, r.layout))
        if hand is not None and r.plain:
            hw = r.med(r.plain)
            mine = r.med(r.same)
            out.append(f"{'MET ' if mine / hw <= hand else 'MISS'} {where}: evalcli on its "
                       f"metrics {mine / hw:.2f}x the hand-written Polars script "
                       f"(target <= {hand}x)")
            if r.family == "ranking":
                out.append(f"{'MET ' if ev / hw <= 2.0 else 'MISS'} {where}: evalcli's whole "
                           f"ranking family {ev / hw:.2f}x the script (target <= 2x)")
                mem_ratio = r.med(r.same, "rss_mb") / r.med(r.plain, "rss_mb")
                out.append(f"{'MET ' if mem_ratio <= 1.2 else 'MISS'} {where}: evalcli's peak "
                           f"memory on its metrics {mem_ratio:.2f}x the script's "
                           "(target <= 1.2x)")
                if r.peers:  # issue 14: ranx's time on the family's work, against these five
                    out.append(f"{'MET ' if pe / mine >= 30 else 'MISS'} {where}: "
                               f"{pe / mine:.1f}x faster than {r.peer} on the script's metrics "
                               "(target >= 30x)")
    if start:
        # the first round's limits, then issue 14's
        for name, limit in (("evalcli --help", 0.3), ("evalcli --version", 0.3),
                            ("evalcli run (1,000 rows, 14 metrics, Parquet)", 0.6),
                            ("evalcli --help", 0.2),
                            ("evalcli run (1,000 rows, 14 metrics, Parquet)", 0.5)):
            v = start[name]["median"]
            out.append(f"{'MET ' if v < limit else 'MISS'} {name}: {v:.3f}s (target < {limit}s)")
    if mem:
        ratio = mem["evalcli_rss_mb"] / mem["needed_mb"]
        out.append(f"{'MET ' if ratio <= 2 else 'MISS'} peak memory, binary 10,000,000 "
                   f"Parquet: {mem['evalcli_rss_mb']:,.0f} MB = {ratio:.2f}x the "
                   f"{mem['needed_mb']:,.0f} MB of needed columns (target <= 2x)")
    return out


def needed_mb(folder: Path) -> float:
    """In-memory size of the columns a binary run reads (both files, keys on both sides)."""
    import polars as pl

    size = sum(pl.read_parquet(folder / f"{side}.parquet").estimated_size()
               for side in ("predictions", "truth"))
    return size / 2**20


def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0.0
    with contextlib.suppress(ValueError, OSError):
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import polars as pl

    versions = {"python": platform.python_version(), "polars": pl.__version__}
    from importlib.metadata import PackageNotFoundError, version

    for dist in ("scikit-learn", "ranx", "evalcli"):
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            versions[dist] = "not installed"
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem, 1),
            "system": platform.platform(), "versions": versions}


def section(fn: Any, *args: Any) -> Any:
    """Run one section of the benchmark; a failure is reported and the others still run."""
    try:
        return fn(*args)
    except Exception as exc:  # the table of the other sections must still print
        say(f"   section {fn.__name__} FAILED: {type(exc).__name__}: {exc}")
        return None


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--quick", action="store_true", help="10^5 rows / 10^3 queries only")
    ap.add_argument("--families", default=",".join(FULL_SIZES),
                    help="comma-separated (default: all)")
    ap.add_argument("--sizes", default=None,
                    help="comma-separated sizes for every family chosen, e.g. 1e6,1e7 "
                    "(queries for ranking); default: the issue's sizes")
    ap.add_argument("--formats", default="parquet", help="parquet, csv, or parquet,csv")
    ap.add_argument("--layouts", default="two,one",
                    help="two (predictions and truth files, joined), one (one file with both; "
                    "not for ranking, whose truth has rows no prediction has), or two,one")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per tool (>= 5)")
    ap.add_argument("--no-peers", action="store_true", help="floor and evalcli only")
    ap.add_argument("--no-startup", action="store_true", help="skip the start-up timings")
    ap.add_argument("--align", action="store_true",
                    help="time the alignment variants (default: on in a full run)")
    ap.add_argument("--no-align", action="store_true")
    ap.add_argument("--streaming", action="store_true",
                    help="add the 10^8-row binary case run with engine: streaming")
    ap.add_argument("--streaming-rows", type=float, default=1e8)
    ap.add_argument("--keep", action="store_true", help="keep the streaming case's data")
    ap.add_argument("--spark", action="store_true", help="add engine: spark rows (local mode) "
                    "for the 10^7-row binary and 10^5-query ranking sets (needs the spark "
                    "extra and Java 17+)")
    ap.add_argument("--spark-repeats", type=int, default=3, help="timed Spark runs per case")
    ap.add_argument("--ci", action="store_true", help="add the cost of confidence intervals "
                    "and of a two-system paired comparison (binary 10^7 rows, ranking 10^5 "
                    "queries; --quick: 10^5 and 10^3) and the engines' equal intervals")
    ap.add_argument("--ci-segments", action="store_true",
                    help="add intervals over many segments (small data, every family)")
    args = ap.parse_args(argv)
    load_start = load()
    if args.repeats < 5:
        say("note: fewer than 5 repeats; the issue asks for the median of at least 5")
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = [f for f in families if f not in FULL_SIZES]
    if unknown:
        ap.error(f"unknown families: {', '.join(unknown)}")
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    layouts = [f.strip() for f in args.layouts.split(",") if f.strip()]

    import importlib.util

    registered = _families_in_evalcli()
    results: list[CaseResult] = []
    missing: list[str] = []
    for family in families:
        if family not in registered:
            missing.append(family)
            say(f"\n== {family}: evalcli has no '{family}' task yet (evalcli metrics lists "
                f"{', '.join(sorted(registered))}); skipped")
            continue
        peers = not args.no_peers
        if peers and PEER[family] == "ranx" and importlib.util.find_spec("ranx") is None:
            say("ranx is not installed (pip install 'evalcli[bench]'): ranking without a peer")
            peers = False
        sizes = QUICK_SIZES[family] if args.quick else FULL_SIZES[family]
        if args.sizes:
            sizes = [int(float(s)) for s in args.sizes.split(",")]
        for size in sizes:
            for layout in layouts:
                if layout == "one" and family == "ranking":
                    continue
                for fmt in formats:
                    results.append(run_case(family, size, fmt, args.repeats, peers, layout))

    start = None if args.no_startup else section(startup, max(args.repeats, 10))
    mem = None
    for r in results:
        if (r.family == "binary" and r.size == 10**7 and r.fmt == "parquet" and r.ok
                and r.layout == "two"):
            mem = {"needed_mb": needed_mb(generate.case_dir("binary", 10**7)),
                   "evalcli_rss_mb": r.med(r.evalcli, "rss_mb")}
    align = None
    if (args.align or not (args.quick or args.no_align or args.sizes)) and "binary" in families:
        align = section(alignment, 10**5 if args.quick else 10**7, args.repeats)
    beyond = None
    if args.streaming:
        rows = int(args.streaming_rows)
        beyond = section(streaming, rows, max(2, rows // 5_000_000), args.keep)

    sparked = spark_rows(args.quick, args.spark_repeats) if args.spark else None
    intervals = uncertainty_rows(args.quick, args.repeats, args.spark) if args.ci else None
    per_segment = section(segment_rows, args.repeats) if args.ci_segments else None

    info = machine()
    report = [
        f"evalcli benchmark, {time.strftime('%Y-%m-%d %H:%M')} -- {info['cpu']}, "
        f"{info['cores']} cores, {info['memory_gib']} GiB; "
        + ", ".join(f"{k} {v}" for k, v in info["versions"].items()),
        f"command: python benchmarks/run.py {' '.join(argv if argv is not None else sys.argv[1:])}",
        f"load average (1/5/15 min) before the run: {' / '.join(f'{x:.2f}' for x in load_start)}"
        f", at the end: {' / '.join(f'{x:.2f}' for x in load())} on {info['cores']} cores "
        "(the benchmark itself keeps one or two cores busy; the table's last column is the "
        "1-minute load around each case)" + (
            "  ** other work was running when it started: times are inflated **"
            if load_start[0] > 0.7 else ""),
        "",
        f"Median wall seconds of {args.repeats} fresh processes each; peak memory is the "
        "process's max RSS.",
        "",
        table(results),
    ]
    if start:
        report += ["", "| start-up | median s |", "|---|---|"]
        report += [f"| {k} | {v['median']:.3f} |" for k, v in start.items()]
    if align:
        report += ["", "| alignment (binary, two files) | hash join | hash join, 1:1 checked "
                   "| evalcli's sort/merge align | evalcli end to end |", "|---|---|---|---|---|"]
        for name, row in align.items():
            report.append(f"| {name} | " + " | ".join(
                f"{row[k]['wall']:.2f} ({row[k].get('inside', row[k]['wall']):.2f})"
                for k in (*ALIGN_KINDS, "evalcli")) + " |")
        report.append("(whole process, and in parentheses the time inside it after imports)")
    if beyond and "rows" in beyond:
        report += ["", f"| beyond memory: binary {beyond['rows']:,} rows, engine: streaming "
                   "| wall s | peak MB | data in memory MB | on disk MB | peak / in memory |",
                   "|---|---|---|---|---|---|"]
        for k, v in beyond.items():
            if isinstance(v, dict) and "wall" in v:
                report.append(f"| {k} | {v['wall']:.1f} | {v['rss_mb']:,.0f} | "
                              f"{v['in_memory_mb']:,.0f} | {v['disk_mb']:,.0f} | "
                              f"{v['rss_mb'] / v['in_memory_mb']:.2f} |")
            elif isinstance(v, dict) and "error" in v:
                report.append(f"| {k} | failed: {v['error'].splitlines()[-1][:80]} | | | | |")
    if sparked:
        report += spark_table(sparked)
    if intervals:
        report += uncertainty_table(intervals)
    if per_segment:
        report += ["", "| intervals per segment | median s | peak MB |", "|---|---|---|"]
        report += [f"| {k} | failed: {v['error'].splitlines()[0][:80]} | |" if "error" in v
                   else f"| {k} | {v['wall']:.2f} | {v['rss_mb']:,.0f} |"
                   for k, v in per_segment.items()]
    checks = targets(results, start, mem)
    if checks:
        report += ["", "Targets:"] + [f"  {c}" for c in checks]
    if missing:
        report += ["", "Not run (no such task in evalcli yet): " + ", ".join(missing)]
    print("\n".join(report))

    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps({
        "machine": info, "argv": argv if argv is not None else sys.argv[1:],
        "cases": [r.as_json() for r in results], "startup": start, "memory": mem,
        "alignment": align, "streaming": beyond, "spark": sparked, "intervals": intervals,
        "intervals_per_segment": per_segment,
        "targets": checks,
        "load_end": load(),
    }, indent=1, default=str))
    (RESULTS / "latest.md").write_text("\n".join(report) + "\n")
    return 0 if all(r.ok for r in results) else 1


def _families_in_evalcli() -> set[str]:
    out = subprocess.run([PY, "-c", "from evalcli.metrics.registry import get_registry;"
                          "print(' '.join(sorted({m.family for m in get_registry()})))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


if __name__ == "__main__":
    sys.exit(main())
