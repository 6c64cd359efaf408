"""The multiclass classification family: one true and one predicted class per row, and
optionally a score per class.

- :mod:`.task`: the task contract (roles, the score layouts, checks, normalisation);
- :mod:`.stats`: the mergeable statistics (confusion table, score ranks, log-loss sums) and the
  per-class counts read from the confusion table;
- :mod:`.metrics`: the values from the statistics, and the metric declarations.
"""

from evalcli.metrics.multiclass.metrics import METRICS
from evalcli.metrics.multiclass.task import TASK, TASKS

__all__ = ["METRICS", "TASK", "TASKS"]
