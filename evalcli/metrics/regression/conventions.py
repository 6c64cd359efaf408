"""The regression family's conventions: the parameters where peers disagree (what "explained
variance" means), evalcli's default for each and what each peer's ``compat`` preset sets. The
declaration (:class:`Convention`) and the rule that resolves it (:func:`effective`) are the
binary family's.

A convention parameter is unset (``None``) by default: unset means the task option ``compat``'s
preset, else evalcli's default; a value set on the metric overrides the preset.

>>> from evalcli import evaluate
>>> data = {"label": [1.0, 2.0, 3.0], "prediction": [2.0, 3.0, 4.0]}
>>> evaluate({"task": "regression", "options": {"compat": "spark"},
...           "metrics": ["explained_variance"]}, predictions=data).values()  # (0² + 1² + 2²) / 3
{'explained_variance': 1.6666666666666667}
>>> evaluate({"task": "regression", "options": {"compat": "spark"}, "metrics": [
...     {"metric": "explained_variance", "definition": "ratio"}]}, predictions=data).values()
{'explained_variance[definition=ratio]': 1.0}
"""

from __future__ import annotations

from evalcli.metrics.base import Param
from evalcli.metrics.binary.conventions import Convention, effective

__all__ = ["COMPAT", "COMPATS", "DEFINITION", "Convention", "effective"]

COMPATS = ("spark", "sklearn")
"""The peers whose conventions the regression task's ``compat`` preset sets."""

DEFINITION = Convention(
    Param("definition", str, None,
          "which quantity: ratio (1 − Var_w(y − ŷ) / Var_w(y), a share at most 1, as "
          "scikit-learn's explained_variance_score) or spark (Σ w·(ŷ − ȳ)² / Σ w, the "
          "predictions' mean squared deviation from the mean target, in the target's squared "
          "units, as Spark MLlib's RegressionMetrics.explainedVariance); unset: ratio, or the "
          "task option compat's preset", choices=("ratio", "spark"), nullable=True),
    "ratio", {"spark": "spark", "sklearn": "ratio"},
    "ratio matches scikit-learn's explained_variance_score; spark matches Spark MLlib's "
    "RegressionMetrics.explainedVariance and RegressionEvaluator(metricName='var'), SSreg / "
    "Σ w, which is not a share of anything.",
)

COMPAT = Param(
    "compat", str, None,
    "set the regression conventions to what a peer does: spark (definition: spark on "
    "explained_variance) or sklearn (definition: ratio); a metric's own parameters override "
    "it; unset: evalcli's defaults", choices=COMPATS, nullable=True,
)
