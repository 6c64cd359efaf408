"""User-facing errors and the exit codes, defined once.

A :class:`UserError` is bad usage, configuration or input: the CLI prints its message (one
paragraph naming the file, the column, the row or key, and the fix) and exits with
:data:`EXIT_ERROR`, never with a traceback. Anything else that escapes is a bug.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes of every evalcli command."""

    OK = 0
    """Everything computed and every gate passed."""
    GATE_FAILED = 1
    """At least one gate failed."""
    ERROR = 2
    """Bad usage, configuration or input."""


EXIT_OK = ExitCode.OK
EXIT_GATE_FAILED = ExitCode.GATE_FAILED
EXIT_ERROR = ExitCode.ERROR


class UserError(Exception):
    """An error in what the user gave us (usage, config, input files).

    ``hint`` is the fix, printed after the message.
    """

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  fix: {self.hint}"
        return self.message


class ConfigError(UserError):
    """The configuration (YAML or command-line options) is invalid."""


class InputDataError(UserError):
    """An input file is unreadable or its content violates what the task needs."""


class MetricError(UserError):
    """A metric name or parameter is invalid."""


class PluginError(UserError):
    """A plugin failed to load, or collides with another metric."""


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """Return ``" Did you mean 'x'?"`` for the closest candidate, or an empty string.

    >>> did_you_mean("aucroc", ["auroc", "auprc", "f1"])
    " Did you mean 'auroc'?"
    >>> did_you_mean("zzz", ["auroc"])
    ''
    """
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""
