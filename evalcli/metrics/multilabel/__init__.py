"""The multilabel classification family: a set of true and a set of predicted labels per
example.

- :mod:`.task`: the task contract (roles, the list, delimited and long layouts, checks,
  normalisation to sets);
- :mod:`.stats`: the mergeable statistics (sums over examples, counts by label);
- :mod:`.metrics`: the values from the statistics, and the metric declarations;
- :mod:`.scores`: auroc and average precision from per-label scores (their statistics too).
"""

from evalcli.metrics.multilabel.metrics import METRICS as SET_METRICS
from evalcli.metrics.multilabel.scores import METRICS as SCORE_METRICS
from evalcli.metrics.multilabel.task import TASK, TASKS

METRICS = [*SET_METRICS, *SCORE_METRICS]

__all__ = ["METRICS", "TASK", "TASKS"]
