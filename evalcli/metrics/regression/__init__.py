"""The regression family: a numeric target and a numeric prediction.

- :mod:`.task`: the task contract (roles, checks);
- :mod:`.stats`: the mergeable statistics (exact moments, weight per absolute error);
- :mod:`.metrics`: the values from the statistics, and the metric declarations;
- :mod:`.extras`: what the family adds to a run (the residuals' table).
"""

from evalcli.metrics.regression.metrics import METRICS
from evalcli.metrics.regression.task import TASK, TASKS

__all__ = ["METRICS", "TASK", "TASKS"]
