"""The binary classification family: labels 0/1 (or a named positive class), a score and/or a
hard prediction.

- :mod:`.task`: the task contract (roles, checks, normalisation to 0/1 labels);
- :mod:`.stats`: the mergeable statistics (confusion counts, counts per score, log-loss sums);
- :mod:`.metrics`: the values from the statistics, and the metric declarations;
- :mod:`.operating`: operating points (recall at a precision, the cost-optimal threshold, the
  top fraction), from the counts per score;
- :mod:`.calibration`: expected and maximum calibration error, from the counts per score;
- :mod:`.extras`: what the family adds to a run (ROC and precision-recall curves).
"""

from evalcli.metrics.binary import calibration, metrics, operating
from evalcli.metrics.binary.task import TASK, TASKS

METRICS = [*metrics.METRICS, *operating.METRICS, *calibration.METRICS]

__all__ = ["METRICS", "TASK", "TASKS"]
