"""The multilabel family: its task and metrics (:mod:`.metrics`)."""

from evalcli.metrics.multilabel.metrics import METRICS, TASK, TASKS

__all__ = ["METRICS", "TASK", "TASKS"]
