"""The binary family: its task and metrics (:mod:`.metrics`)."""

from evalcli.metrics.binary.metrics import METRICS, TASK, TASKS

__all__ = ["METRICS", "TASK", "TASKS"]
