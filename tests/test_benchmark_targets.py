"""The benchmark's verdicts (``benchmarks/run.py``): each issue's target is printed MET or MISS
from the medians of the runs, never from a clock in a test."""

from __future__ import annotations

import sys
from pathlib import Path

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


def test_issue_14s_ranking_targets_are_judged():
    lines = _targets(evalcli_s=3.0, same_s=2.0, same_mb=1300, ranx_s=30.0)
    assert any(x.startswith("MISS") and "2.00x the hand-written" in x for x in lines)
    assert any(x.startswith("MISS") and "whole ranking family 3.00x" in x for x in lines)
    assert any(x.startswith("MISS") and "peak memory on its metrics 1.86x" in x for x in lines)
    assert any(x.startswith("MISS") and "15.0x faster than ranx on the script's" in x
               for x in lines)
    met = _targets(evalcli_s=1.9, same_s=1.0, same_mb=840, ranx_s=30.0)
    assert any(x.startswith("MET ") and "1.00x the hand-written" in x for x in met)
    assert any(x.startswith("MET ") and "family 1.90x" in x for x in met)
    assert any(x.startswith("MET ") and "peak memory on its metrics 1.20x" in x for x in met)
    assert any(x.startswith("MET ") and "30.0x faster than ranx on the script's" in x
               for x in met)


def test_the_start_up_targets_of_both_rounds():
    lines = _targets(evalcli_s=3.0, same_s=2.0, same_mb=1300, ranx_s=30.0)
    assert "MET  evalcli --help: 0.250s (target < 0.3s)" in lines
    assert "MISS evalcli --help: 0.250s (target < 0.2s)" in lines
    assert "MET  evalcli run (1,000 rows, 14 metrics, Parquet): 0.550s (target < 0.6s)" in lines
    assert "MISS evalcli run (1,000 rows, 14 metrics, Parquet): 0.550s (target < 0.5s)" in lines
