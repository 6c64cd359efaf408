"""The multiclass family: its task and metrics (:mod:`.metrics`)."""

from evalcli.metrics.multiclass.metrics import METRICS, TASK, TASKS

__all__ = ["METRICS", "TASK", "TASKS"]
