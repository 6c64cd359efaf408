"""The Spark engine: the same config on a Spark cluster, with the Polars engine's results.

A run goes as DESIGN.md's mergeable statistics describe:

1. The driver scans the inputs with Spark (Parquet, CSV/TSV, JSONL at any path or URI Spark
   reads) and hands empty Polars frames with the same schema to
   :func:`evalcli.engine.align.align`, so the roles, join keys, segments and row checks are
   resolved as on every engine, and config or column errors come before any row is read.
2. Spark co-partitions the rows. With two files both sides go into one shuffle keyed by the join
   keys (or by the roles a statistic needs together, e.g. the query: ``Stat.partition_by``), so
   every key's rows of both files meet in one partition. One file is not shuffled at all unless
   a statistic needs rows together.
3. Each partition aligns its rows and runs the engine core
   (:func:`evalcli.engine.core.partials`) inside ``mapInArrow``, and returns its counts,
   partial statistics and diagnostics as Arrow IPC.
4. The driver hands the partitions' parts to the core as the in-process engine hands its one
   part: :func:`~evalcli.engine.core.verdict` for the errors,
   :func:`~evalcli.engine.core.combine` for the statistics, then the values. Every metric and
   every check is written once, and the engines agree bit for bit.

pyspark is imported only inside the functions here, so the module (and evalcli) imports without
it; :func:`require_pyspark` turns its absence into a clear error.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import socket
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import polars as pl

from evalcli.engine import core
from evalcli.engine.align import Aligned, Inputs, align
from evalcli.engine.core import Computed, Evaluated, Part, first_line
from evalcli.engine.plan import Plan
from evalcli.errors import ConfigError, InputDataError, UserError
from evalcli.io import Source
from evalcli.io.readers import check_source, detect_format, is_http, is_stdin, scan
from evalcli.metrics.base import Context, Metric, Stat

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

    from evalcli.config import SparkSettings

INSTALL = "pip install 'evalcli[spark]'"
P, T = "p:", "t:"
"""Prefixes of the predictions' and the truth's columns in the co-partitioned frame."""
SIDE = "__side"
ORDER = "__evalcli_input_order"
"""A row's place in its input, kept through the shuffle when the task's reshape reads row order
(e.g. ranking's tie-break by input position): each partition sorts its rows by it."""
PARTS = "at string, part string, data binary"
"""What each partition returns: its tag, and its named partial results (a
:data:`~evalcli.engine.core.Part`), each a Polars frame as Arrow IPC."""
SESSION_DEFAULTS = {"spark.ui.showConsoleProgress": "false"}
"""Settings of a session evalcli starts itself, unless ``spark.conf`` sets them."""
PYTHON_KEYS = {"spark.pyspark.python": "PYSPARK_PYTHON",
               "spark.pyspark.driver.python": "PYSPARK_DRIVER_PYTHON"}
"""Spark's settings of the workers' and the driver's Python, and the environment variables
PySpark actually reads (when the SparkContext starts) unless launched by spark-submit."""
QUIET_LOGGERS = ("org.apache.spark.executor.Executor", "org.apache.spark.scheduler.TaskSetManager")
"""Loggers that print a failed task's whole traceback (the executor's in local mode, the
driver's "Lost task"): evalcli reports the failure itself, as one message."""
PLUGIN_PREFIX = "evalcli_local_plugin_"
"""Module-name prefix of plugin files (see registry.load_plugin_path): shipped by value."""


# --------------------------------------------------------------------------- session, inputs

def require_pyspark() -> None:
    """Raise a :class:`ConfigError` naming the extra to install when pyspark is missing."""
    missing = []
    for module in ("pyspark", "pyarrow", "pandas"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise ConfigError(
            f"engine: spark needs {', '.join(missing)}, which {verb} not installed",
            hint=f"{INSTALL} (Spark also needs Java 17 or newer), or use engine: auto",
        )


def check_supported(plan: Plan) -> None:
    """Every planned metric must run on Spark: said before any data is read."""
    for pm in plan.metrics:
        pm.metric.check_engine("spark", pm.id)


def _conf_value(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _local(master: str) -> bool:
    """Whether the executors run here: ``local``, ``local[4]``, ``local-cluster[...]``."""
    return master == "local" or master.startswith(("local[", "local-cluster["))


def python_settings(settings: SparkSettings, environ: Mapping[str, str]
                    ) -> tuple[dict[str, str], dict[str, str]]:
    """The Spark settings and environment variables that choose the executors' Python.

    PySpark reads ``PYSPARK_PYTHON`` when the SparkContext starts and ignores
    ``spark.pyspark.python`` unless spark-submit launched the process, so a
    ``spark.pyspark.python`` (or ``spark.pyspark.driver.python``) of the config is also set as
    that variable. In local mode the workers run evalcli's own interpreter (``sys.executable``:
    the venv or pipx environment evalcli runs from, not a ``python3`` from PATH that may lack
    evalcli) unless the user chose one with ``PYSPARK_PYTHON`` or ``spark.pyspark.python``.
    """
    conf = {key: _conf_value(v) for key, v in {**SESSION_DEFAULTS, **settings.conf}.items()}
    env = {var: conf[key] for key, var in PYTHON_KEYS.items() if conf.get(key)}
    if ("PYSPARK_PYTHON" not in env and not environ.get("PYSPARK_PYTHON")
            and _local(settings.master) and sys.executable):
        conf["spark.pyspark.python"] = env["PYSPARK_PYTHON"] = sys.executable
    return conf, env


@contextlib.contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    """The process environment with ``values`` set, restored afterwards (the Python API may
    start several sessions in one process)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Without pyspark's warning about the installed pandas version, which evalcli's use of
    pandas (none on the hot path: Arrow in, Arrow out) does not concern."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                                category=FutureWarning)
        yield


def _check_master(master: str) -> None:
    """A standalone master (``spark://host:port[,host2:port2]``) must answer before Spark starts:
    otherwise Spark retries for a minute and ends with no clear error."""
    if not master.startswith("spark://"):
        return
    reasons = []
    for hostport in master.removeprefix("spark://").split(","):
        host, _, port = hostport.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"spark.master '{master}' is not a valid standalone master URL",
                              hint="write it as spark://HOST:PORT (the master's port, often "
                              "7077), e.g. spark://spark-master:7077")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=5):
                return
        except OSError as exc:
            reasons.append(f"{host}:{port}: {exc.strerror or exc}")
    raise ConfigError(
        f"cannot connect to the Spark master {master} ({'; '.join(reasons)})",
        hint="check spark.master in the config (the master's host and port, often 7077), that "
        "the master is running, and that this machine can reach it",
    )


def session(settings: SparkSettings) -> SparkSession:
    """The active SparkSession (evalcli inside a Spark application), or a new one.

    A session evalcli starts runs the Python workers with the interpreter
    :func:`python_settings` chooses, and logs only errors (unless ``spark.conf`` sets
    ``spark.log.level``), without the tracebacks of failed tasks, which evalcli reports itself.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if settings.attach == "required":
        raise ConfigError(
            "spark.attach is 'required', but no SparkSession is active",
            hint="call evalcli from inside a Spark application (after "
            "SparkSession.builder.getOrCreate()), or set 'spark: {attach: auto}' to start one",
        )
    _check_master(settings.master)
    conf, env = python_settings(settings, os.environ)
    builder = SparkSession.builder.master(settings.master).appName(settings.app_name)
    for key, value in conf.items():
        builder = builder.config(key, value)
    quiet = settings.log == "quiet" and "spark.log.level" not in settings.conf
    log = _log_file() if quiet else None
    try:
        with _environ(env), _quiet():
            if log is not None:
                _launch_gateway(settings, conf, log)
            spark = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start: Java missing, bad master URL, ...
        text = first_line(exc) + _log_tail(log)
        if "master url" in text.lower():
            hint = ("spark.master must be local[*], local[N], spark://HOST:PORT, yarn or "
                    "k8s://https://HOST:PORT")
        else:
            hint = ("Spark needs Java 17 or newer (install e.g. openjdk-17-jre-headless, or set "
                    "JAVA_HOME); check spark.master and spark.conf in the config")
        raise ConfigError(f"Spark could not start (master {settings.master}): {text}",
                          hint=hint) from None
    if "spark.log.level" not in settings.conf:  # else the user's level, set by Spark
        spark.sparkContext.setLogLevel("ERROR")
        _silence(spark, QUIET_LOGGERS)
    return spark


_LOGS: list[str] = []


def _log_file() -> str:
    """Where the JVM a quiet session starts writes its output (removed at exit)."""
    import atexit
    import tempfile

    fd, path = tempfile.mkstemp(prefix="evalcli-spark-", suffix=".log")
    os.close(fd)
    if not _LOGS:
        atexit.register(_remove_logs)
    _LOGS.append(path)
    return path


def _remove_logs() -> None:
    for f in _LOGS:
        with contextlib.suppress(OSError):
            os.unlink(f)


def _launch_gateway(settings: SparkSettings, conf: Mapping[str, str], log: str) -> None:
    """Start the JVM with its standard output and error in ``log``: Spark's start-up lines
    (the log4j profile, the host's address, native libraries, the JVM's incubator modules)
    and its Python workers' output stay out of the terminal, and out of a report printed on
    stdout. Evalcli's own messages say what went wrong; a failed start shows the log's end.
    Nothing to do when a JVM is already running in this process."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    spark_conf = SparkConf(loadDefaults=False).setMaster(settings.master) \
        .setAppName(settings.app_name)
    for key, value in conf.items():
        spark_conf.set(key, value)
    with open(log, "ab") as out:
        gateway = launch_gateway(  # type: ignore[no-untyped-call]
            spark_conf, popen_kwargs={"stdout": out, "stderr": out})
    SparkContext._ensure_initialized(gateway=gateway)


def _log_tail(log: str | None, lines: int = 3) -> str:
    """The last lines of a quiet session's log that say something, for a failed start."""
    if log is None or not os.path.exists(log):
        return ""
    with open(log, encoding="utf-8", errors="replace") as fh:
        said = [line.strip() for line in fh if line.strip()
                and "log4j" not in line and "WARN" not in line]
    return ("; Spark said: " + " / ".join(said[-lines:])) if said else ""


def _silence(spark: SparkSession, loggers: Iterable[str]) -> None:
    """Turn the JVM's ``loggers`` off (best effort: the logging backend may differ)."""
    with contextlib.suppress(Exception):  # quieter logs are a nicety, never a failure
        log4j = spark.sparkContext._jvm.org.apache.logging.log4j  # type: ignore[union-attr]
        for name in loggers:
            log4j.core.config.Configurator.setLevel(name, log4j.Level.OFF)


def _col(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


SPARK_CHARSETS = {"iso8859-1": "iso-8859-1", "ascii": "us-ascii", "utf-16": "utf-16",
                  "utf-16-be": "utf-16be", "utf-16-le": "utf-16le", "utf-32": "utf-32"}
"""Python codec name -> the charsets Spark 4's CSV and JSON readers accept."""


def _charset(source: Source) -> str | None:
    """The Spark charset of ``source.encoding`` ('' for UTF-8 and utf8-lossy, which Spark reads
    as UTF-8 with bad bytes as U+FFFD), or None when Spark cannot decode it."""
    import codecs

    enc = (source.encoding or "utf-8").strip().lower()
    if enc in ("utf8-lossy", "utf-8-lossy"):
        return ""
    try:
        name = codecs.lookup(enc).name
    except LookupError:
        return None  # evalcli's reader says which names it knows
    return "" if name == "utf-8" else SPARK_CHARSETS.get(name)


def read(spark: SparkSession, source: Source) -> DataFrame:
    """A Spark DataFrame over ``source``, read the way the Polars readers read it.

    Parquet, CSV/TSV and JSONL are read by Spark (local paths, globs, directories with hive
    partitions, or any URI Spark reads); other formats (TREC), text in an encoding Spark cannot
    decode (cp1252, ...), standard input, http(s) URLs and in-memory frames are read by evalcli
    on the driver and handed to Spark.
    """
    if source.frame is not None:
        return spark.createDataFrame(source.frame.collect().to_arrow())
    if is_stdin(source.path) or is_http(source.path):  # a copy on the driver: evalcli reads it
        return spark.createDataFrame(scan(source).collect().to_arrow())
    remote = "://" in source.path
    if not remote:
        check_source(source)  # the Polars readers' checks: duplicate headers, bytes, encoding
    fmt = source.format or detect_format(source.path)[0]
    try:
        if fmt == "parquet":
            df = spark.read.parquet(source.path)
        elif fmt in ("csv", "tsv") and len(source.null_values or ()) <= 1 \
                and _charset(source) is not None:
            options = {
                "header": _conf_value(source.has_header),
                "sep": source.separator or ("\t" if fmt == "tsv" else ","),
                "inferSchema": "true",
                "mode": "FAILFAST",
            }
            if source.null_values:
                options["nullValue"] = source.null_values[0]
            if _charset(source):
                options["encoding"] = str(_charset(source))
            df = spark.read.options(**options).csv(source.path)
            if not source.has_header:  # Polars' names for headerless files
                df = df.toDF(*(f"column_{i + 1}" for i in range(len(df.columns))))
        elif fmt == "jsonl" and _charset(source) is not None:
            json_options = {"mode": "FAILFAST"}
            if _charset(source):
                json_options["encoding"] = str(_charset(source))
            df = spark.read.options(**json_options).json(source.path)
        elif remote:
            raise InputDataError(
                f"{source.path}: engine spark reads {fmt} files from local paths only",
                hint="convert the file to Parquet, or copy it to a local path")
        else:
            df = spark.createDataFrame(scan(source).collect().to_arrow())
        df.schema  # noqa: B018 - resolves the files and the schema now
    except UserError:
        raise
    except Exception as exc:
        raise InputDataError(f"cannot read {source.path} as {fmt} with Spark: {first_line(exc)}",
                             hint="check the path and the format (set format: in the config)"
                             ) from None
    if not df.columns:
        raise InputDataError(f"{source.path} has no columns")
    return df


def _timezone(spark: SparkSession) -> str:
    return str(spark.conf.get("spark.sql.session.timeZone"))


def _arrow_schema(df: DataFrame, tz: str) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema, timezone=tz)


def standin(df: DataFrame, tz: str, path: str) -> pl.LazyFrame:
    """An empty Polars frame with the schema the partitions will see."""
    try:
        return pl.from_arrow(_arrow_schema(df, tz).empty_table()).lazy()  # type: ignore[union-attr]
    except Exception as exc:
        raise InputDataError(f"{path}: a column has a type evalcli cannot read: "
                             f"{first_line(exc)}",
                             hint="select or cast the columns to numbers, strings, booleans or "
                             "lists") from None


@dataclass
class SparkInputs:
    """The Spark side of a prepared run: the session and one DataFrame per input."""

    spark: SparkSession
    predictions: DataFrame
    truth: DataFrame | None
    inputs: Inputs
    """The run's inputs, each source carrying an empty stand-in frame with the Spark schema."""


def open_inputs(settings: SparkSettings, inputs: Inputs) -> SparkInputs:
    """Start (or attach to) Spark and scan the inputs: schemas only, no rows."""
    require_pyspark()
    spark = session(settings)
    tz = _timezone(spark)
    pred = read(spark, inputs.predictions)
    truth = read(spark, inputs.truth) if inputs.truth is not None else None
    stood = replace(
        inputs,
        predictions=replace(inputs.predictions,
                            frame=standin(pred, tz, inputs.predictions.path)),
        truth=replace(inputs.truth, frame=standin(truth, tz, inputs.truth.path))
        if inputs.truth is not None and truth is not None else None,
    )
    return SparkInputs(spark, pred, truth, stood)


# --------------------------------------------------------------------------- per partition

def _ipc(df: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.write_ipc(buf)
    return buf.getvalue()


def _in_order(df: pl.DataFrame, order: str) -> pl.DataFrame:
    """The rows in input order, without the order column (when the run shipped one)."""
    return df.sort(order).drop(order) if order in df.columns else df


@dataclass
class PartitionJob:
    """What every partition runs (pickled to the executors): the engine core on its rows."""

    plan: Plan
    inputs: Inputs
    stats: dict[str, Stat]
    pred_cols: list[str]
    truth_cols: list[str] | None
    schema: pa.Schema

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        got = list(batches)
        table = pa.Table.from_batches(got) if got else self.schema.empty_table()
        rows = pl.from_arrow(table)
        assert isinstance(rows, pl.DataFrame)
        part = core.partials(self.plan, self.aligned(rows), self.stats, whole=False)
        tag = os.urandom(8).hex()  # which partition: its frames go together
        yield pa.RecordBatch.from_pydict(
            {"at": [tag] * len(part), "part": list(part),
             "data": [_ipc(df) for df in part.values()]},
            schema=pa.schema([("at", pa.string()), ("part", pa.string()),
                              ("data", pa.binary())]),
        )

    def aligned(self, df: pl.DataFrame) -> Aligned:
        """This partition's rows aligned by the Polars engine's code."""
        if self.truth_cols is None:
            pred = _in_order(df, ORDER)
            truth = None
        else:
            pred = _in_order(df.filter(pl.col(SIDE) == 0), P + ORDER).select(
                [pl.col(P + c).alias(c) for c in self.pred_cols])
            truth = _in_order(df.filter(pl.col(SIDE) == 1), T + ORDER).select(
                [pl.col(T + c).alias(c) for c in self.truth_cols])
        inputs = replace(
            self.inputs,
            predictions=replace(self.inputs.predictions, frame=pred.lazy()),
            truth=replace(self.inputs.truth, frame=truth.lazy())
            if self.inputs.truth is not None and truth is not None else None,
        )
        return align(self.plan.task, inputs)


# --------------------------------------------------------------------------- the driver

def _source_columns(a: Aligned, side: str) -> list[str]:
    """The columns of one input that the run reads (the rest stay in the files)."""
    src = a.inputs.predictions if side == "predictions" else a.inputs.truth
    if src is None or src.frame is None:
        return []
    names = list(src.frame.collect_schema().names())
    wanted = {*a.ids, *a.segments, *(a.inputs.id_columns or ()),
              *([a.inputs.unit] if a.inputs.unit else [])}
    for col in a.columns.values():
        wanted |= {col, *col.split(", ")}
    return [c for c in names if c in wanted]


def _prune(plan: Plan, a: Aligned) -> tuple[list[str], list[str] | None]:
    """Columns to ship per side; all of them if the pruned frames would not align the same."""
    pred_cols = _source_columns(a, "predictions")
    truth_cols = _source_columns(a, "truth") if a.inputs.truth is not None else None

    def only(src: Source, cols: list[str]) -> Source:
        return replace(src, frame=src.frame.select(cols) if src.frame is not None else None)

    try:
        trial = replace(a.inputs, predictions=only(a.inputs.predictions, pred_cols),
                        truth=only(a.inputs.truth, truth_cols or [])
                        if a.inputs.truth is not None else None)
        if align(plan.task, trial).schema == a.schema:
            return pred_cols, truth_cols
    except (UserError, pl.exceptions.PolarsError):
        pass
    every = list(a.inputs.predictions.frame.collect_schema().names()) \
        if a.inputs.predictions.frame is not None else []
    every_t = list(a.inputs.truth.frame.collect_schema().names()) \
        if a.inputs.truth is not None and a.inputs.truth.frame is not None else None
    return every, every_t


def together(stats: Mapping[str, Stat]) -> list[str]:
    """Roles whose rows some statistic needs in one partition."""
    roles: list[str] = []
    for st in stats.values():
        for r in st.partition_by:
            if r not in roles:
                roles.append(r)
    return roles


def co_partitioned(si: SparkInputs, plan: Plan, a: Aligned, stats: Mapping[str, Stat],
                   pred_cols: list[str], truth_cols: list[str] | None) -> DataFrame:
    """One Spark frame whose partitions hold every key's rows (of both inputs) together."""
    from pyspark.sql import functions as F

    keep = together(stats)
    for role in keep:
        if role not in a.roles:
            raise ConfigError(f"a statistic needs the rows of each {role} together, and the "
                              f"inputs have no {role} column",
                              hint=f"name the {role} column under 'columns:'")
    ordered = plan.task.reshape is not None
    order = [F.monotonically_increasing_id().alias(ORDER)] if ordered else []
    if si.truth is None or truth_cols is None:
        df = si.predictions.select([_col(c) for c in pred_cols] + order)
        if keep:
            df = df.repartition(*(_col(a.columns[r]) for r in keep))
        return df
    keys = a.ids
    outside = [r for r in keep if r not in keys]
    if outside:
        raise ConfigError(
            f"engine spark: a statistic needs the rows of each {outside[0]} together, but the "
            f"inputs are joined on {', '.join(keys)}",
            hint="join on that column too (columns: {id: [...]}), or use engine: auto")
    by = keep or keys

    def src(key: str) -> str:
        return a.columns.get(key, key)

    left = si.predictions.select([_col(c).alias(P + c) for c in pred_cols]
                                 + [o.alias(P + ORDER) for o in order]
                                 + [F.lit(0).cast("tinyint").alias(SIDE)])
    right = si.truth.select([_col(c).alias(T + c) for c in truth_cols]
                            + [o.alias(T + ORDER) for o in order]
                            + [F.lit(1).cast("tinyint").alias(SIDE)])
    both = left.unionByName(right, allowMissingColumns=True)
    return both.repartition(*(F.coalesce(_col(P + src(k)), _col(T + src(k))) for k in by))


def _ship_plugins() -> None:
    """Plugin files are not importable on the executors: pickle their code by value."""
    from pyspark import cloudpickle

    for name, module in list(sys.modules.items()):
        if name.startswith(PLUGIN_PREFIX):
            cloudpickle.register_pickle_by_value(module)  # type: ignore[no-untyped-call]


def _spark_failure(exc: Exception) -> UserError:
    """An error raised while Spark ran the job, as one message."""
    text = str(exc)
    for line in reversed(text.splitlines()):
        line = line.strip()
        for kind in ("InputDataError", "ConfigError", "MetricError"):
            prefix = f"evalcli.errors.{kind}: "
            if line.startswith(prefix):
                return InputDataError(line.removeprefix(prefix))
    return InputDataError(f"Spark could not evaluate the inputs: {first_line(exc)}",
                          hint="check the input files (the message above names the failing "
                          "file or row)")


def _worker_setup_failure(exc: Exception, python: str, master: str) -> ConfigError | None:
    """The executors' Python cannot run evalcli (evalcli or a dependency missing, another
    Python version, no such program): one message naming that Python (``python``, what the
    SparkContext told the executors to run) and the fix; None for any other failure."""
    from evalcli._version import __version__

    text = str(exc)
    local = _local(master)
    named = python if os.sep in python else f"{python}, the first on the executors' PATH"
    where = f"the Spark {'workers' if local else 'executors'}' Python ({named})"
    install = f"'evalcli[spark]=={__version__}'"
    if local:
        choose = (f"or leave the workers' Python to evalcli (unset PYSPARK_PYTHON and "
                  f"spark.pyspark.python: the workers then run {sys.executable})")
    else:
        choose = ("or run the executors with a Python that has it: set 'spark: {conf: "
                  "{spark.pyspark.python: /path/to/python}}' in the config (a path valid on "
                  "every node) or the PYSPARK_PYTHON environment variable")
    everywhere = "" if local else " on every Spark worker"
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", text)
    package = re.search(r"(\w+) >= [\w.]+ must be installed; however, it was not found", text)
    found = missing or package
    if found:
        module = found.group(1).split(".")[0] if missing else found.group(1).lower()
        extra = "" if module == "evalcli" else \
            " (it brings evalcli's dependencies; a plugin's package must be installed too)"
        return ConfigError(f"{where} cannot import {module}",
                           hint=f"with that Python, pip install {install}{everywhere}{extra}; "
                           + choose)
    versions = re.search(r"different version:? ([\d.]+) than that in driver:? ([\d.]+)", text)
    if versions or "PYTHON_VERSION_MISMATCH" in text:
        said = (f" is Python {versions.group(1)} and evalcli runs on Python {versions.group(2)}"
                if versions else " is not evalcli's Python version")
        return ConfigError(f"{where}{said}: Spark needs the same minor version on both sides",
                           hint=f"use a Python {sys.version_info[0]}.{sys.version_info[1]} with "
                           f"pip install {install}{everywhere}; " + choose)
    absent = re.search(r'Cannot run program "([^"]+)"(?:[^\n]*?error=\d+, ([^\n)]+))?', text)
    if absent and (absent.group(1) == python
                   or os.path.basename(absent.group(1)).startswith("python")):
        reason = f" ({absent.group(2).strip()})" if absent.group(2) else ""
        return ConfigError(f"the Spark {'workers' if local else 'executors'} cannot run "
                           f"Python {absent.group(1)}{reason}",
                           hint=f"install a Python with pip install {install} at that path"
                           f"{everywhere}, " + choose)
    return None


def collect_parts(df: DataFrame, job: PartitionJob) -> list[Part]:
    """Run the job on every partition; each partition's partial results by name."""
    _ship_plugins()
    try:
        with _quiet():
            table = df.mapInArrow(job, PARTS).toArrow()
    except UserError:
        raise
    except Exception as exc:
        sc = df.sparkSession.sparkContext
        setup = _worker_setup_failure(exc, str(sc.pythonExec), str(sc.master))
        if setup is not None:
            raise setup from None
        if "PythonException" in type(exc).__name__ and "evalcli.errors." not in str(exc):
            raise
        raise _spark_failure(exc) from None
    parts: dict[str, Part] = {}
    for at, name, data in zip(table.column("at").to_pylist(), table.column("part").to_pylist(),
                              table.column("data").to_pylist(), strict=True):
        parts.setdefault(at, {})[name] = pl.read_ipc(io.BytesIO(data))
    return list(parts.values())


@dataclass
class SparkEngine:
    """The Spark engine (see :class:`evalcli.engine.base.Engine`): the session and the
    inputs' DataFrames once prepared."""

    settings: SparkSettings
    name: str = "spark"
    opened: SparkInputs | None = None

    @property
    def starting(self) -> str:
        return f"starting Spark (master {self.settings.master}) and reading the inputs' schemas"

    def prepare(self, plan: Plan, inputs: Inputs) -> Inputs:
        check_supported(plan)  # before any data is read
        self.opened = open_inputs(self.settings, inputs)
        return self.opened.inputs

    def runs(self, metric: Metric) -> bool:
        return "spark" in metric.engines

    def run(self, plan: Plan, a: Aligned, extra: dict[str, Any] | None = None,
            ctx: Context | None = None) -> Evaluated:
        if self.opened is None:
            raise RuntimeError("SparkEngine.run before prepare")
        return run_spark(plan, a, self.opened, extra, ctx)


def run_spark(plan: Plan, a: Aligned, si: SparkInputs, extra: dict[str, Any] | None = None,
              ctx: Context | None = None) -> Evaluated:
    """Compute the plan on Spark; the same values as the in-process engine."""
    return core.run(plan, a, "spark", lambda stats: compute(plan, a, si, stats), extra, ctx)


def compute(plan: Plan, a: Aligned, si: SparkInputs, stats: Mapping[str, Stat]) -> Computed:
    """Every statistic of the plan, per partition, combined on the driver; the input checked."""
    pred_cols, truth_cols = _prune(plan, a)
    frame = co_partitioned(si, plan, a, stats, pred_cols, truth_cols)
    job = PartitionJob(
        plan=plan,
        inputs=replace(a.inputs, predictions=replace(a.inputs.predictions, frame=None),
                       truth=replace(a.inputs.truth, frame=None)
                       if a.inputs.truth is not None else None),
        stats=dict(stats), pred_cols=pred_cols, truth_cols=truth_cols,
        schema=_arrow_schema(frame, _timezone(si.spark)),
    )
    parts = collect_parts(frame, job)
    alignment = core.verdict(plan, a, parts)  # raises unless some rows are left
    overall, segments = core.combine(stats, a, parts)
    return Computed(overall, segments, alignment, "spark", parts)
