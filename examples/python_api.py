"""evalcli from Python (a notebook or a script): the same run as the CLI, as data.

    python examples/python_api.py

Each block is a notebook cell. Nothing here prints unless asked, and nothing exits: bad input
raises evalcli.UserError subclasses, a failed gate is ``result.passed is False``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

import evalcli

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "sample_data"

# --- 1. In-memory frames: predictions and truth joined on `id`, a gate, segments.
predictions = pl.read_parquet(DATA / "binary_predictions.parquet")
truth = pl.read_csv(DATA / "binary_truth.csv")
result = evalcli.evaluate(
    {
        "task": "binary",
        "metrics": ["auroc", "log_loss", {"metric": "recall", "threshold": 0.3, "min": 0.9}],
        "group_by": ["size"],
    },
    predictions=predictions,
    truth=truth,
)
print(result.passed, result.values())
print(result.to_polars().select("id", "value", "gate_min", "passed"))
print(result.to_polars(segments=True).select("size", "rows", "id", "value"))

# --- 2. A YAML config, with its inputs swapped for a LazyFrame (nothing is read twice).
result = evalcli.evaluate(
    HERE.parent / "configs" / "binary-quickstart.yaml",
    predictions=pl.scan_parquet(DATA / "binary_predictions.parquet"),
)
print(result.metric("auroc").value)

# --- 3. A local metric plugin (evalcli runs my_metrics.py), on the same frames.
result = evalcli.evaluate(
    {"task": "binary", "plugins": [str(HERE / "local_plugin" / "my_metrics.py")],
     "metrics": ["net_benefit"]},
    predictions=predictions,
    truth=truth,
)
print(result.metric("net_benefit").value)

# --- 4. Errors are exceptions with one clear message.
try:
    evalcli.evaluate({"task": "binary", "metrics": ["aucroc"]}, predictions=predictions,
                     truth=truth)
except evalcli.MetricError as exc:
    print(f"error: {exc}")

# --- 5. What is available: built-in metrics and installed plugins, with their origin.
for m in evalcli.list_metrics("binary")[:3]:
    print(m.name, m.direction, m.origin, m.formula)
