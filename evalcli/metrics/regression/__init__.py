"""The regression family: its task and metrics (:mod:`.metrics`)."""

from evalcli.metrics.regression.metrics import METRICS, TASK, TASKS

__all__ = ["METRICS", "TASK", "TASKS"]
