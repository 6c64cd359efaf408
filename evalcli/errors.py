"""User-facing errors and the exit codes, defined once.

A :class:`UserError` is bad usage, configuration or input: the CLI prints its message (one
paragraph naming the file, the column, the row or key, and the fix) and exits with
:data:`EXIT_ERROR`, never with a traceback. Anything else that escapes is a bug: the CLI says
so in one line, keeps the traceback in a file, and exits with :data:`EXIT_INTERNAL` (never 1,
which means a gate failed).
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
    INTERNAL = 3
    """An internal error: a bug in evalcli (or a plugin), never a verdict on the model."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C (SIGINT); no output file changed."""
    BROKEN_PIPE = 141
    """Standard output was closed before everything was printed (``evalcli ... | head``), as
    for a program killed by SIGPIPE."""


EXIT_OK = ExitCode.OK
EXIT_GATE_FAILED = ExitCode.GATE_FAILED
EXIT_ERROR = ExitCode.ERROR
EXIT_INTERNAL = ExitCode.INTERNAL
EXIT_INTERRUPTED = ExitCode.INTERRUPTED
EXIT_BROKEN_PIPE = ExitCode.BROKEN_PIPE


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
    if len(word) > 200:  # nothing that long is a typo of a name (and matching it is slow)
        return ""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" Did you mean '{clip(close[0], 100)}'?" if close else ""


def printable(text: str) -> str:
    """``text`` with control characters (a terminal escape, a line break) written as escapes:
    data shown on a terminal cannot move its cursor or colour it.

    >>> printable("a\\x1b[31mb"), printable("café")
    ('a\\\\x1b[31mb', 'café')
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def clip(text: str, limit: int = 200) -> str:
    """``text`` cut to about ``limit`` characters for a message (an echo of user input must
    never flood the terminal), saying how much was cut.

    >>> clip("abc")
    'abc'
    >>> clip("x" * 1000, 10)
    'xxxxxxxxxx… (990 more characters)'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"
