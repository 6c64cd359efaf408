"""The ranking family: ranked items per query (a score or a rank) against judged items with
optional graded relevance.

- :mod:`.task`: the task contract (roles, options, checks, list columns exploded);
- :mod:`.conventions`: where peers disagree (ties, policies, gains, denominators), evalcli's
  defaults and the ``compat`` presets;
- :mod:`.frame`: the ranked frame every metric derives from (one sort per query, linear scans);
- :mod:`.stats`: the per-query statistic (sums over queries) and a metric's value from it;
- :mod:`.metrics`: the accuracy metrics; :mod:`.trec`: trec_eval's other measures (bpref,
  gm_map, ...); :mod:`.prefs` and :mod:`.judgment_groups`: trec_eval's
  preference and judgment-group measures; :mod:`.beyond`: the
  beyond-accuracy metrics (coverage, novelty, intra-list
  similarity), :mod:`.serendipity` and :mod:`.exposure` (distributional coverage, Gini,
  popularity bias), with :mod:`.side` (the side files, the training interactions and the item
  similarity derived from them);
- :mod:`.extras`: what the family adds to a run (query counts, per-query tables).
"""

from evalcli.metrics.ranking.beyond import METRICS as BEYOND_ACCURACY
from evalcli.metrics.ranking.exposure import METRICS as EXPOSURE
from evalcli.metrics.ranking.judgment_groups import METRICS as JUDGMENT_GROUPS
from evalcli.metrics.ranking.metrics import METRICS as ACCURACY
from evalcli.metrics.ranking.prefs import METRICS as PREFERENCES
from evalcli.metrics.ranking.serendipity import METRICS as SERENDIPITY
from evalcli.metrics.ranking.task import TASK, TASKS
from evalcli.metrics.ranking.trec import METRICS as TREC_EVAL

METRICS = [*ACCURACY, *TREC_EVAL, *PREFERENCES, *JUDGMENT_GROUPS, *BEYOND_ACCURACY, *SERENDIPITY,
           *EXPOSURE]

__all__ = ["METRICS", "TASK", "TASKS"]
