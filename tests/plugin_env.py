"""Installing plugins for the tests, without touching the shared virtualenv.

The example plugin (``tests/fixtures/evalcli-plugin-example``) is built and installed for real
with pip, once per test session, into a private site folder (``pip install --target``): a
wheel built by its own pyproject, a ``.dist-info`` with its ``evalcli.metrics`` entry point.
A test activates a site by putting it on ``sys.path`` (in-process) or ``PYTHONPATH``
(subprocesses); the registry is reset on the way in and out, so no other test sees it.

The failure paths (a plugin that fails to import, one whose names collide) are small
distributions written by :func:`write_dist`: the same on-disk layout pip produces, a module
and a ``.dist-info`` folder with ``METADATA`` and ``entry_points.txt``.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tests" / "fixtures" / "evalcli-plugin-example"


def pip_install(project: Path, target: Path) -> None:
    """Build ``project`` with its own build backend and install it into ``target``.

    Offline: ``--no-build-isolation`` uses the hatchling of this environment (a test extra).
    """
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
           "--no-build-isolation", "--disable-pip-version-check", "--target", str(target),
           str(project)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"installing {project} failed:\n{done.stdout}\n{done.stderr}")


def write_dist(site: Path, dist: str, modules: dict[str, str], entry_points: dict[str, str],
               version: str = "0.1.0") -> Path:
    """An installed distribution in ``site``: its modules and its dist-info."""
    site.mkdir(parents=True, exist_ok=True)
    for name, source in modules.items():
        (site / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8")
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[evalcli.metrics]\n{lines}", encoding="utf-8")
    return site


@contextmanager
def active(*sites: Path) -> Iterator[None]:
    """Make the plugins installed in ``sites`` visible to this process, then forget them."""
    from evalcli.metrics.registry import reset_registry

    before = set(sys.modules)
    for s in sites:
        sys.path.insert(0, str(s))
    importlib.invalidate_caches()
    reset_registry()
    try:
        yield
    finally:
        for s in sites:
            sys.path.remove(str(s))
        roots = tuple(str(s) for s in sites)
        for name in set(sys.modules) - before:
            if (getattr(sys.modules[name], "__file__", None) or "").startswith(roots):
                del sys.modules[name]
        importlib.invalidate_caches()
        reset_registry()


def env_with(*sites: Path) -> dict[str, str]:
    """The environment for a subprocess that sees the plugins installed in ``sites``."""
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200", TERM="dumb")
    env["PYTHONPATH"] = os.pathsep.join([*map(str, sites), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)
    return env


def run_cli(*args: str, sites: tuple[Path, ...] = (), cwd: Path | None = None
            ) -> subprocess.CompletedProcess[str]:
    """``evalcli ARGS`` in a fresh interpreter (real entry-point discovery, real exit code)."""
    code = "import sys; from evalcli.cli import main; sys.argv[0] = 'evalcli'; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env_with(*sites), cwd=cwd or ROOT, check=False, timeout=120)


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example plugin, built and installed with pip into a private site folder."""
    site = tmp_path_factory.mktemp("site-example")
    pip_install(EXAMPLE, site)
    return site


@pytest.fixture
def example_plugin(example_site: Path) -> Iterator[Path]:
    """The example plugin is installed for this test (in-process)."""
    with active(example_site):
        yield example_site


BROKEN = {
    "evalcli_plugin_broken": """
        import evalcli_missing_dependency_for_tests  # fails: not installed

        METRICS = []
    """,
}

COLLIDE_BUILTIN = {
    "evalcli_plugin_collide": """
        from evalcli.plugin import mean_metric
        import polars as pl

        METRICS = [mean_metric(
            "auroc", "binary", summary="not the real AUROC", formula="mean(label)",
            direction="higher", needs=["label"], row=lambda p, c: pl.col("label"))]
    """,
}

COLLIDE_EXAMPLE = {
    "evalcli_plugin_calibration": """
        from evalcli.plugin import mean_metric
        import polars as pl

        METRICS = [mean_metric(
            "hosmer_lemeshow", "binary", summary="another hosmer_lemeshow",
            formula="mean(|label - score|)",
            direction="lower", needs=["label", "score"],
            row=lambda p, c: (pl.col("label") - pl.col("score")).abs())]
    """,
}


@pytest.fixture
def broken_site(tmp_path: Path) -> Path:
    """An installed plugin whose import fails (a missing dependency)."""
    return write_dist(tmp_path / "site-broken", "evalcli-plugin-broken", BROKEN,
                      {"broken": "evalcli_plugin_broken"})


@pytest.fixture
def collide_site(tmp_path: Path) -> Path:
    """An installed plugin that declares a metric named like a built-in (binary auroc)."""
    return write_dist(tmp_path / "site-collide", "evalcli-plugin-collide", COLLIDE_BUILTIN,
                      {"collide": "evalcli_plugin_collide"})


@pytest.fixture
def collide_example_site(tmp_path: Path) -> Path:
    """An installed plugin that declares ``hosmer_lemeshow`` too (collides with the example
    plugin)."""
    return write_dist(tmp_path / "site-calibration", "evalcli-plugin-calibration",
                      COLLIDE_EXAMPLE, {"calibration": "evalcli_plugin_calibration"})
