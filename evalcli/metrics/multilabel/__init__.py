"""The multilabel classification family: a set of true and a set of predicted labels per
example.

- :mod:`.task`: the task contract (roles, the list, delimited and long layouts, checks,
  normalisation to sets);
- :mod:`.stats`: the mergeable statistics (sums over examples, counts by label);
- :mod:`.metrics`: the values from the statistics, and the metric declarations.
"""

from evalcli.metrics.multilabel.metrics import METRICS
from evalcli.metrics.multilabel.task import TASK, TASKS

__all__ = ["METRICS", "TASK", "TASKS"]
