"""The ranking family: ranked items per query (a score or a rank) against judged items with
optional graded relevance.

- :mod:`.task`: the task contract (roles, options, checks, list columns exploded);
- :mod:`.conventions`: where peers disagree (ties, policies, gains, denominators), evalcli's
  defaults and the ``compat`` presets;
- :mod:`.frame`: the ranked frame every metric derives from (one sort per query, linear scans);
- :mod:`.stats`: the per-query statistic (sums over queries) and a metric's value from it;
- :mod:`.metrics`: the accuracy metrics; :mod:`.trec`: trec_eval's other measures (bpref,
  gm_map, ...); :mod:`.beyond`: the beyond-accuracy metrics;
- :mod:`.extras`: what the family adds to a run (query counts, per-query tables).
"""

from evalcli.metrics.ranking.beyond import METRICS as BEYOND_ACCURACY
from evalcli.metrics.ranking.metrics import METRICS as ACCURACY
from evalcli.metrics.ranking.task import TASK, TASKS
from evalcli.metrics.ranking.trec import METRICS as TREC_EVAL

METRICS = [*ACCURACY, *TREC_EVAL, *BEYOND_ACCURACY]

__all__ = ["METRICS", "TASK", "TASKS"]
