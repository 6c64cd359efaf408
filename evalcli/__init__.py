"""evalcli: evaluate model predictions against ground truth from files.

The command line is ``evalcli``; from Python, :func:`evalcli.evaluate` runs a config and returns
the report object the CLI renders.
"""

from evalcli._version import __version__

__all__ = ["__version__"]
