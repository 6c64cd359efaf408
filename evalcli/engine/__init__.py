"""Running an evaluation's statistics, in the order the data flows.

- :mod:`~evalcli.engine.plan`: the metrics resolved, and the statistics they share;
- :mod:`~evalcli.engine.align`: the roles' columns found, predictions and truth joined;
- :mod:`~evalcli.engine.core`: one part's counts, checks and partial statistics, the errors,
  and the combination of parts: written once, for every engine;
- :mod:`~evalcli.engine.base`: the ``Engine`` interface and the choice of an engine;
- :mod:`~evalcli.engine.polars_engine` (in process: one part) and
  :mod:`~evalcli.engine.spark_engine` (a part per Spark partition).
"""
