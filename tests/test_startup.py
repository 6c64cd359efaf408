"""Start-up stays light: ``evalcli --help``/``--version`` load no data library.

Importing Polars alone takes about 0.3 s, so it (and NumPy, pandas, PyArrow, scikit-learn,
pydantic, YAML) loads only when a command computes something. Checked with ``python -X
importtime`` in a fresh interpreter, never with a clock: the benchmark (``benchmarks/run.py``)
times start-up.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

DATA_LIBS = {"polars", "numpy", "pandas", "pyarrow", "sklearn", "scipy", "pyspark"}
CONFIG_LIBS = {"pydantic", "pydantic_core", "yaml"}


def imported(code: str) -> set[str]:
    """Top-level packages a fresh interpreter imports while running ``code``."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                          capture_output=True, text=True, env={"NO_COLOR": "1", "COLUMNS": "100"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name.split(".")[0])
    assert "evalcli" in names  # the parse worked
    return names


def cli(*args: str) -> str:
    """Code running ``evalcli ARGS`` (bare ``evalcli`` prints the help and exits 2)."""
    ok = (0, None) if args else (2,)
    return ("import sys; sys.argv = ['evalcli', " + ", ".join(repr(a) for a in args) + "]\n"
            "from evalcli.cli import main\n"
            f"try:\n    main()\nexcept SystemExit as e:\n    assert e.code in {ok!r}, e.code")


def test_importing_the_cli_loads_no_data_library():
    assert not imported("import evalcli.cli") & (DATA_LIBS | CONFIG_LIBS)


@pytest.mark.parametrize("args", [("--help",), ("--version",), ()])
def test_help_and_version_load_no_data_library(args):
    assert not imported(cli(*args)) & (DATA_LIBS | CONFIG_LIBS)


@pytest.mark.parametrize("command", ["run", "compare", "validate", "diff", "metrics"])
def test_command_help_loads_no_data_library(command):
    assert not imported(cli(command, "--help")) & DATA_LIBS


def test_the_package_import_is_light():
    assert not imported("import evalcli") & DATA_LIBS


def test_a_json_report_loads_neither_rich_nor_the_other_writers():
    """A CI job writing JSON pays for Polars and its config, not for the terminal table's
    Rich or the HTML writer's modules: each report format imports only its own module, and
    messages on a non-terminal stderr are plain lines."""
    from tests.conftest import CONFIGS

    code = cli("run", str(CONFIGS / "binary-gated.yaml"), "--format", "json")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c",
                           code + "\nimport sys\nprint(sorted(m for m in sys.modules))"],
                          capture_output=True, text=True, env={"NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = proc.stdout.strip().splitlines()[-1]
    assert "'polars'" in modules and "'evalcli.report.json'" in modules  # it did run
    for absent in ("'rich'", "'evalcli.report.html'", "'evalcli.report.junit'",
                   "'evalcli.report.markdown'", "'evalcli.report.table'"):
        assert absent not in modules


@pytest.mark.parametrize("config", ["binary-quickstart.yaml", "multiclass-quickstart.yaml",
                                    "ranking-quickstart.yaml", "regression-quickstart.yaml"])
def test_a_run_without_intervals_loads_no_numpy(config):
    """NumPy (about 0.06 s of a 0.4 s small run) serves the bootstrap, the paired tests, the
    calibration bins and the per-class curves only: a plain run computes in Polars alone."""
    from tests.conftest import CONFIGS

    names = imported(cli("run", str(CONFIGS / config), "--format", "json"))
    assert "polars" in names  # it did run
    assert not names & {"numpy", "pandas", "scipy", "sklearn"}
