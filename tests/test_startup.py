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


def test_the_collector_is_paused_while_loading_and_back_on_for_the_pass(tmp_path):
    """The console script pauses Python's cycle collector while modules load; a run turns it
    back on before its pass (and main() leaves it on); the Python API never touches it."""
    pred = tmp_path / "p.csv"
    pred.write_text("id,score,label\n1,0.9,1\n2,0.2,0\n3,0.6,1\n")
    code = (
        "import gc, sys\n"
        "import evalcli.runner as r\n"
        "seen = []\n"
        "pass_ = r.run_config\n"
        "def spy(*a, **k):\n"
        "    seen.append(gc.isenabled())\n"
        "    return pass_(*a, **k)\n"
        "r.run_config = spy\n"
        "import evalcli.engine.polars_engine as pe\n"
        "run_ = pe.PolarsEngine.run\n"
        "def at_pass(self, *a, **k):\n"
        "    seen.append(gc.isenabled())\n"
        "    return run_(self, *a, **k)\n"
        "pe.PolarsEngine.run = at_pass\n"
        f"sys.argv = ['evalcli', 'compare', {str(pred)!r}, '--task', 'binary', '-q']\n"
        "from evalcli.cli import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
        "print(seen, gc.isenabled())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[-2] == "[False, True] True"
    api = subprocess.run([sys.executable, "-c", (
        "import gc, polars as pl, evalcli\n"
        "df = pl.DataFrame({'id': [1, 2], 'score': [0.9, 0.1], 'label': [1, 0]})\n"
        "evalcli.evaluate({'task': 'binary', 'metrics': ['auroc']}, predictions=df)\n"
        "print(gc.isenabled())\n")], capture_output=True, text=True)
    assert api.returncode == 0, api.stderr[-2000:]
    assert api.stdout.strip() == "True"
