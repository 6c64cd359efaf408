"""The binary classification family: labels 0/1 (or a named positive class), a score and/or a
hard prediction.

- :mod:`.task`: the task contract (roles, checks, normalisation to 0/1 labels);
- :mod:`.stats`: the mergeable statistics (confusion counts, counts per score, log-loss sums);
- :mod:`.metrics`: the values from the statistics, and the metric declarations;
- :mod:`.extras`: what the family adds to a run (ROC and precision-recall curves).
"""

from evalcli.metrics.binary.metrics import METRICS
from evalcli.metrics.binary.task import TASK, TASKS

__all__ = ["METRICS", "TASK", "TASKS"]
