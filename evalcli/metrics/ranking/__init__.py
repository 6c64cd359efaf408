"""The ranking family: its task (:mod:`.frame`), the accuracy metrics (:mod:`.metrics`) and the
beyond-accuracy metrics (:mod:`.beyond`)."""

from evalcli.metrics.ranking.beyond import METRICS as BEYOND_ACCURACY
from evalcli.metrics.ranking.frame import TASK
from evalcli.metrics.ranking.metrics import METRICS as ACCURACY

METRICS = [*ACCURACY, *BEYOND_ACCURACY]
TASKS = [TASK]

__all__ = ["METRICS", "TASK", "TASKS"]
