"""A run compared with the accepted report its config names (``baseline:``).

The run's JSON form (:func:`evalcli.result.to_dict`) is diffed with the baseline report as
``evalcli diff`` does (:mod:`evalcli.decide.diff`), under the config's change gates; the
comparison rides on the result (:attr:`evalcli.result.RunResult.baseline`), and its gate
failures join the run's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalcli.decide.diff import Gates, diff_reports, load_report
from evalcli.result import ChangeGate, Diff, RunResult, to_dict

if TYPE_CHECKING:
    from evalcli.config import Baseline


def compare_baseline(result: RunResult, baseline: Baseline, path: Path) -> Diff:
    """The comparison of ``result`` with the baseline report at ``path`` (``baseline.report``
    resolved), under the baseline's gates: its own for every metric, ``metrics:`` per id."""
    gates = Gates(ChangeGate.of(baseline),
                  {id_: ChangeGate.of(g) for id_, g in baseline.metrics.items()})
    return diff_reports(load_report(path), to_dict(result), gates,
                        base_name=str(baseline.report), cand_name="this run")


def add_baseline(result: RunResult, comparison: Diff) -> None:
    """Carry ``comparison`` on ``result``; its gate failures join the run's verdict."""
    result.baseline = comparison
    result.failures += comparison.failures
    result.passed = not result.failures if result.gating else True
