"""Decisions on a run's values, in one room.

- :mod:`~evalcli.decide.gates`: thresholds on values (overall, per segment) and the verdict;
- :mod:`~evalcli.decide.diff`: two JSON reports compared, with gates on the change
  (``evalcli diff``);
- :mod:`~evalcli.decide.baseline`: a run compared with its config's baseline report.

The data they decide on and produce (:class:`~evalcli.result.Gate`,
:class:`~evalcli.result.ChangeGate`, :class:`~evalcli.result.Diff`) belongs to the result model
(:mod:`evalcli.result`), which the report writers read.
"""
