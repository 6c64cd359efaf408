"""The command line's start-up: Python's cycle collector paused while the modules load.

Loading evalcli's modules and its libraries (Polars, pydantic, Typer, Rich) allocates some
10^5 objects that live until the process exits. The collector's passes over them while they
load cost about 20 ms of a 0.33 s run of 1,000 rows. The console script pauses it first
(:func:`pause`); a run resumes it once its modules are loaded, before its pass
(:func:`resume`), with what exists so far frozen (never scanned again). A command that never
resumes it is short and allocates little. Nothing here runs for the Python API.
"""

from __future__ import annotations

import gc

_PAUSED = [False]


def pause() -> None:
    """Pause the cycle collector (the console script, first thing)."""
    if gc.isenabled():
        gc.disable()
        _PAUSED[0] = True


def resume() -> None:
    """Freeze the objects that exist and turn the collector back on, if :func:`pause` paused
    it (a no-op otherwise: the Python API never pauses it)."""
    if _PAUSED[0]:
        _PAUSED[0] = False
        gc.freeze()
        gc.enable()
