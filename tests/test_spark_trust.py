"""engine: spark outside the test's own session: the Python the executors run, and its failures.

evalcli is run here the way users run it: by its path (a venv not activated, pipx), as a
subprocess whose ``python3`` on PATH has no evalcli. In local mode the Python workers must run
evalcli's own interpreter; on a standalone cluster (a master and two workers on 127.0.0.1,
started with pyspark's own ``spark-class``) ``spark.pyspark.python`` from the config must take
effect, and executors whose Python lacks evalcli must give one clear error, exit 2.

Every Spark run is its own process (its own JVM and SparkContext: the Python the workers run is
fixed when a context starts), so these tests do not share test_spark.py's session.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import yaml

from evalcli.config import SparkSettings, parse_config
from evalcli.errors import ConfigError
from evalcli.result import to_dict
from evalcli.runner import run_config

pytestmark = pytest.mark.spark

BIN = Path(sys.executable).parent
"""The test interpreter's bin folder: its ``evalcli`` script is the one users call by path."""
METRICS = ["auroc", "average_precision", "log_loss", "f1", "mcc",
           {"metric": "recall", "threshold": 0.3}]
RUN_TIMEOUT = 150
FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""JVM options for short runs on a small machine (about a third less time to start Spark)."""


# --------------------------------------------------------------------------- helpers

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def close(a: Any, b: Any, where: str = "") -> None:
    """Equal reports: floats to 1e-9 relative, everything else exactly (as test_spark.py)."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, int | float) and isinstance(b, int | float), (where, a, b)
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (where, a, b)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), (where, sorted(a), sorted(b))
        for k in a:
            close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (where, a, b)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            close(x, y, f"{where}[{i}]")
    else:
        assert a == b, (where, a, b)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Small binary predictions and truth (ties, a segment), as Parquet."""
    folder = tmp_path_factory.mktemp("data")
    rng = np.random.default_rng(7)
    n = 300
    label = rng.integers(0, 2, n)
    score = np.clip(0.3 * label + rng.normal(0.35, 0.25, n), 0, 1).round(2)
    pl.DataFrame({"id": rng.permutation(n), "score": score,
                  "region": rng.choice(["north", "south"], n)}).write_parquet(folder / "p.parquet")
    pl.DataFrame({"id": np.arange(n), "label": label}).write_parquet(folder / "t.parquet")
    return {"predictions": str(folder / "p.parquet"), "truth": str(folder / "t.parquet")}


def config(files: dict[str, str], spark: dict[str, Any] | None = None) -> dict[str, Any]:
    cfg: dict[str, Any] = {"task": "binary", **files, "metrics": METRICS,
                           "group_by": ["region"]}
    if spark is not None:
        cfg |= {"engine": "spark", "spark": spark}
    return cfg


def polars_report(cfg: dict[str, Any], folder: Path) -> dict[str, Any]:
    report = to_dict(run_config(parse_config({**cfg, "engine": "polars"}, "test", folder)))
    report.pop("engine")
    return dict(json.loads(json.dumps(report)))


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python of the driver's version without evalcli (nor Polars, pyarrow): a fresh venv."""
    folder = tmp_path_factory.mktemp("bare") / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=60)
    python = folder / "bin" / "python3"
    probe = subprocess.run([str(python), "-c", "import evalcli"], cwd=folder,
                           capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert "No module named 'evalcli'" in probe.stderr, probe
    return python


def user_env(bare_python: Path) -> dict[str, str]:
    """The environment of a user who calls evalcli by its path: the venv is not on PATH, the
    first ``python3`` on PATH has no evalcli, and nothing tells Spark which Python to use."""
    path = [str(bare_python.parent)] + [
        p for p in os.environ.get("PATH", "").split(os.pathsep)
        if p and Path(p).resolve() != BIN.resolve()]
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON",
                        "PYSPARK_SUBMIT_ARGS", "SPARK_HOME")}
    return {**env, "PATH": os.pathsep.join(path), "NO_COLOR": "1"}


def run_by_path(cfg: dict[str, Any], folder: Path, env: dict[str, str]
                ) -> subprocess.CompletedProcess[str]:
    """``/path/to/venv/bin/evalcli run cfg.yaml --format json`` from a folder without evalcli."""
    path = folder / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg))
    exe = BIN / "evalcli"
    assert exe.is_file(), f"{exe} is missing: pip install -e . in this interpreter's venv"
    return subprocess.run([str(exe), "run", str(path), "--format", "json"],
                          cwd=folder, env=env, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT)


def assert_same_values(proc: subprocess.CompletedProcess[str], want: dict[str, Any]) -> None:
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    assert got.pop("engine") == "spark"
    close(want, got)


def assert_user_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 2, one ``error:`` message on stderr holding ``needles``, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert proc.stdout == ""
    err = proc.stderr
    assert "Traceback" not in err and "\tat " not in err, err[-3000:]
    assert err.count("error:") == 1, err[-3000:]
    message = err[err.index("error:"):]
    for needle in needles:
        assert needle in message, (needle, message)
    return message


# --------------------------------------------------------------------------- session settings

class _Started(BaseException):  # passes through session()'s except Exception
    """Raised by the stand-in getOrCreate, carrying what Spark would have seen at start."""

    def __init__(self, env: dict[str, str | None], options: dict[str, str]) -> None:
        super().__init__("started")
        self.env, self.options = env, options


@pytest.fixture
def start(monkeypatch: pytest.MonkeyPatch) -> Any:
    """session(settings) up to SparkSession.getOrCreate, which reports the process
    environment and the builder's settings at that moment instead of starting Spark."""
    from pyspark.sql import SparkSession

    def get_or_create(builder: Any) -> Any:
        env = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
        raise _Started(env, dict(builder._options))

    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", get_or_create)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)

    def started(**settings: Any) -> _Started:
        from evalcli.engine.spark_engine import session

        before = dict(os.environ)
        with pytest.raises(_Started) as info:
            session(SparkSettings(**settings))
        assert dict(os.environ) == before, "the process environment was not restored"
        return info.value

    return started


def test_local_workers_run_this_interpreter(start):
    got = start(master="local[2]")
    assert got.env["PYSPARK_PYTHON"] == sys.executable
    assert got.options["spark.pyspark.python"] == sys.executable


def test_users_python_is_kept(start, monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/env/bin/python")
    got = start(master="local[*]")
    assert got.env["PYSPARK_PYTHON"] == "/opt/env/bin/python"
    assert "spark.pyspark.python" not in got.options
    got = start(master="local[*]", conf={"spark.pyspark.python": "/opt/other/bin/python",
                                         "spark.pyspark.driver.python": "/opt/d/bin/python"})
    assert got.env == {"PYSPARK_PYTHON": "/opt/other/bin/python",
                       "PYSPARK_DRIVER_PYTHON": "/opt/d/bin/python"}
    assert os.environ["PYSPARK_PYTHON"] == "/opt/env/bin/python"


def test_cluster_python_from_the_config(start):
    with socket.socket() as listener:  # a "master" that accepts connections
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        got = start(master=f"spark://127.0.0.1:{port}", conf={"spark.pyspark.python": "/opt/p"})
    assert got.env["PYSPARK_PYTHON"] == "/opt/p"
    assert start(master="yarn").env["PYSPARK_PYTHON"] is None  # the cluster's default


def test_unreachable_master_is_one_clear_error(start):
    port = free_port()  # nothing listens there
    with pytest.raises(ConfigError, match=rf"cannot connect to the Spark master "
                       rf"spark://127\.0\.0\.1:{port}") as info:
        start(master=f"spark://127.0.0.1:{port}")
    assert "spark.master" in str(info.value.hint)


WORKER_FAILURES = [  # the tails of what Spark raised in runs against such Pythons
    ("/opt/py/bin/python3", "spark://h:7077",
     "org.apache.spark.api.python.PythonException: [PYTHON_EXCEPTION] An exception was thrown "
     "from the Python worker: Traceback (most recent call last):\n  File \"/x/serializers.py\", "
     "line 483, in loads\n    return cloudpickle.loads(obj, encoding=encoding)\n"
     "ModuleNotFoundError: No module named 'evalcli'\n SQLSTATE: 38000",
     ["executors' Python (/opt/py/bin/python3) cannot import evalcli",
      "on every Spark worker", "spark.pyspark.python", "PYSPARK_PYTHON"]),
    ("python3", "yarn", "ModuleNotFoundError: No module named 'polars.dataframe'",
     ["(python3, the first on the executors' PATH) cannot import polars"]),
    ("/usr/bin/python3.12", "local[2]",
     "[PYTHON_VERSION_MISMATCH] Python in worker has different version: 3.12 than that in "
     "driver: 3.11, PySpark cannot run with different minor versions.",
     ["workers' Python (/usr/bin/python3.12) is Python 3.12 and evalcli runs on Python 3.11",
      "unset PYSPARK_PYTHON"]),
    ("/nope/python", "spark://h:7077",
     'java.io.IOException: Cannot run program "/nope/python": error=2, No such file or '
     "directory\n\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1143)",
     ["executors cannot run Python /nope/python (No such file or directory)"]),
]


@pytest.mark.parametrize(("python", "master", "text", "said"), WORKER_FAILURES)
def test_executor_python_failures_are_named(python, master, text, said):
    from evalcli.engine.spark_engine import _worker_setup_failure

    err = _worker_setup_failure(RuntimeError(text), python, master)
    assert isinstance(err, ConfigError)
    for needle in said:
        assert needle in str(err), (needle, str(err))
    assert "Traceback" not in str(err) and "\tat " not in str(err)


def test_other_spark_failures_are_not_blamed_on_python():
    from evalcli.engine.spark_engine import _worker_setup_failure

    text = ("org.apache.spark.SparkException: Job aborted due to stage failure: "
            "java.io.FileNotFoundException: File file:/data/p.parquet does not exist")
    assert _worker_setup_failure(RuntimeError(text), "python3", "local[*]") is None


# --------------------------------------------------------------------------- local, by path

def test_local_run_by_path_uses_its_own_python(files, bare_python, tmp_path):
    """(issue 19, 12) evalcli by its path, python3 on PATH without evalcli: same values."""
    cfg = config(files, {"master": "local[2]",
                         "conf": {"spark.sql.shuffle.partitions": 2, "spark.ui.enabled": False,
                                  "spark.driver.extraJavaOptions": FAST_JVM}})
    proc = run_by_path(cfg, tmp_path, user_env(bare_python))
    assert_same_values(proc, polars_report(config(files), tmp_path))
    assert "Traceback" not in proc.stderr and "FutureWarning" not in proc.stderr, proc.stderr
    # (issue 16, 2) the JVM's start-up lines stay out of the terminal
    for noise in ("log4j", "WARN", "incubator", "NativeCodeLoader", "setLogLevel"):
        assert noise not in proc.stderr, proc.stderr


def test_a_failed_start_says_what_the_jvm_said(files, tmp_path):
    """(issue 16, 2) the JVM's output goes to a log; a start that fails shows its end."""
    cfg = config(files, {"master": "local[1]",
                         "conf": {"spark.driver.memory": "12x"}})  # not a size
    proc = run_by_path(cfg, tmp_path, {**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr
    assert err.startswith("error: Spark could not start (master local[1])"), err
    assert "Spark said:" in err and "12x" in err, err
    assert "Traceback" not in err


def test_verbose_shows_sparks_log():
    from evalcli.runner import override

    cfg = parse_config({"task": "binary", "predictions": "p.csv", "engine": "spark"}, "t",
                       Path("."))
    assert cfg.spark.log == "quiet"
    assert override(cfg, verbose=True).spark.log == "console"
    assert override(cfg).spark.log == "quiet"


# --------------------------------------------------------------------------- standalone cluster

def _wait_for_workers(ui: int, procs: list[subprocess.Popen[bytes]], logs: list[Path],
                      timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    alive = 0
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                alive = int(json.load(r).get("aliveworkers", 0))
            if alive == 2:
                return
        except OSError:
            pass
        time.sleep(0.5)
    tails = "\n".join(f"--- {log.name}\n{log.read_text()[-1500:]}" for log in logs)
    pytest.fail(f"the standalone cluster did not start ({alive} of 2 workers)\n{tails}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, bare_python: Path) -> Iterator[str]:
    """A Spark standalone master and two 1-core workers on 127.0.0.1; its master URL. The
    workers' ``python3`` (on their PATH) has no evalcli, as on a fresh cluster."""
    from pyspark.find_spark_home import _find_spark_home

    home = Path(_find_spark_home())
    folder = tmp_path_factory.mktemp("cluster")
    env = {**user_env(bare_python), "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_DAEMON_MEMORY": "256m", "SPARK_DAEMON_JAVA_OPTS": FAST_JVM,
           "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
           "SPARK_WORKER_OPTS": "-Dspark.worker.cleanup.enabled=false"}
    port, ui = free_port(), free_port()
    master = f"spark://127.0.0.1:{port}"
    deploy = "org.apache.spark.deploy"
    commands = [[f"{deploy}.master.Master", "--host", "127.0.0.1", "--port", str(port),
                 "--webui-port", str(ui)]]
    commands += [[f"{deploy}.worker.Worker", master, "--host", "127.0.0.1", "--cores", "1",
                  "--memory", "1g", "--webui-port", str(free_port()),
                  "--work-dir", str(folder / f"work{i}")] for i in (1, 2)]
    procs: list[subprocess.Popen[bytes]] = []
    logs: list[Path] = []
    try:
        for i, command in enumerate(commands):
            logs.append(folder / f"daemon{i}.log")
            with logs[-1].open("wb") as log:
                procs.append(subprocess.Popen(
                    [str(home / "bin" / "spark-class"), *command], env=env, cwd=folder,
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
            if i == 0:
                time.sleep(1)  # the workers retry, but a master first saves a round
        _wait_for_workers(ui, procs, logs)
        yield master
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=15)


def cluster_settings(master: str, python: Path | str, executors: int) -> dict[str, Any]:
    return {"master": master, "conf": {"spark.pyspark.python": str(python),
                                       "spark.executor.memory": "512m",
                                       "spark.cores.max": executors,
                                       "spark.sql.shuffle.partitions": 4,
                                       "spark.ui.enabled": False,
                                       "spark.driver.host": "127.0.0.1",
                                       "spark.driver.bindAddress": "127.0.0.1",
                                       "spark.driver.extraJavaOptions": FAST_JVM,
                                       "spark.executor.extraJavaOptions": FAST_JVM}}


def test_cluster_runs_the_configured_python(cluster, files, bare_python, tmp_path):
    """spark.pyspark.python in the config reaches the executors of a standalone cluster."""
    cfg = config(files, cluster_settings(cluster, sys.executable, 2))
    proc = run_by_path(cfg, tmp_path, user_env(bare_python))
    assert_same_values(proc, polars_report(config(files), tmp_path))


def test_cluster_python_without_evalcli_is_one_clear_error(cluster, files, bare_python,
                                                           tmp_path):
    cfg = config(files, cluster_settings(cluster, bare_python, 1))
    proc = run_by_path(cfg, tmp_path, user_env(bare_python))
    message = assert_user_error(proc, str(bare_python), "cannot import evalcli",
                                "pip install", "spark.pyspark.python", "PYSPARK_PYTHON")
    assert len(message) < 1200, message
