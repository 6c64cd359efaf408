"""The benchmark's verdicts (``benchmarks/run.py``): each issue's target is printed MET or MISS
from the medians of the runs, never from a clock in a test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _targets(evalcli_s: float, same_s: float, same_mb: float, ranx_s: float) -> list[str]:
    here = str(ROOT / "benchmarks")
    sys.path.insert(0, here)
    try:
        from run import CaseResult, Proc, targets
    finally:  # (run.py puts its folder on the path too: none of it stays)
        sys.path[:] = [p for p in sys.path if p != here]

    def runs(wall: float, mb: float) -> list[Proc]:
        return [Proc(wall, mb, "") for _ in range(5)]

    r = CaseResult("ranking", 10**5, "parquet", "ranx")
    r.floor, r.evalcli, r.peers = runs(0.6, 500), runs(evalcli_s, 1300), runs(ranx_s, 5000)
    r.plain, r.same = runs(1.0, 700), runs(same_s, same_mb)
    start = {"evalcli --help": {"median": 0.25}, "evalcli --version": {"median": 0.05},
             "evalcli run (1,000 rows, 14 metrics, Parquet)": {"median": 0.55}}
    return targets([r], start, None)


@pytest.mark.parametrize("times, verdict, fragments", [
    ((3.0, 2.0, 1300), "MISS", ["2.00x the hand-written", "whole ranking family 3.00x",
                                "peak memory on its metrics 1.86x",
                                "15.0x faster than ranx on the script's"]),
    ((1.9, 1.0, 840), "MET ", ["1.00x the hand-written", "family 1.90x",
                               "peak memory on its metrics 1.20x",
                               "30.0x faster than ranx on the script's"]),
])
def test_issue_14s_ranking_targets_are_judged(times, verdict, fragments):
    evalcli_s, same_s, same_mb = times
    lines = _targets(evalcli_s=evalcli_s, same_s=same_s, same_mb=same_mb, ranx_s=30.0)
    for fragment in fragments:
        assert any(x.startswith(verdict) and fragment in x for x in lines), fragment


def test_the_start_up_targets_of_both_rounds():
    lines = _targets(evalcli_s=3.0, same_s=2.0, same_mb=1300, ranx_s=30.0)
    assert "MET  evalcli --help: 0.250s (target < 0.3s)" in lines
    assert "MISS evalcli --help: 0.250s (target < 0.2s)" in lines
    assert "MET  evalcli run (1,000 rows, 14 metrics, Parquet): 0.550s (target < 0.6s)" in lines
    assert "MISS evalcli run (1,000 rows, 14 metrics, Parquet): 0.550s (target < 0.5s)" in lines
