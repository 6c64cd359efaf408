"""The package's rooms and which may import which (issue 12, item 5).

The contracts live in pyproject.toml (``[tool.importlinter]``); import-linter checks them over
every import, lazy ones inside functions included. The top level holds the pipeline's steps
and entry points only: a new module goes into its room, or this test says where rooms are.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept():
    exe = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(exe), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert f"Contracts: {len(contracts)} kept, 0 broken." in proc.stdout, proc.stdout[-2000:]


def test_the_layers_name_every_room():
    """Each subpackage and top-level module (but the entry shims) sits in a layer, so no room
    escapes the contracts."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"]
    layers = {m for c in contracts if c["type"] == "layers" for m in c["layers"]}
    pkg = ROOT / "evalcli"
    rooms = {f"evalcli.{p.name}" for p in pkg.iterdir() if p.is_dir() and (p / "__init__.py")
             .exists()}
    rooms |= {f"evalcli.{p.stem}" for p in pkg.glob("*.py")
              if p.stem not in ("__init__", "__main__", "_version")}
    assert rooms == layers, (sorted(rooms - layers), sorted(layers - rooms))
