"""The binary family's conventions: the parameters where peers disagree (a curve metric's value
when the labels hold one class only, the framing of the curve files), evalcli's default for
each and what each peer's ``compat`` preset sets (as :mod:`evalcli.metrics.ranking.conventions`
does for ranking).

A convention parameter is unset (``None``) by default: unset means the task option ``compat``'s
preset, else evalcli's default; a value set on the metric (or the task option
``curve_framing``) overrides the preset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalcli.metrics.base import Param, Params

COMPATS = ("spark", "sklearn")
"""The peers whose conventions the binary task's ``compat`` preset sets."""


@dataclass(frozen=True)
class Convention:
    """A parameter where peers disagree: its declaration, evalcli's default and each preset."""

    param: Param
    default: str
    presets: Mapping[str, str]
    why: str
    """Which peer each setting matches, one sentence."""

    def text(self) -> str:
        """The conventions paragraph's sentence on this parameter."""
        presets = ", ".join(f"compat: {k} sets {v}" for k, v in self.presets.items())
        return f"{self.param.name}: unset is {self.default}, or the compat preset's " \
               f"({presets}). {self.why}"


def _param(name: str, help_: str, choices: tuple[str, ...], default: str) -> Param:
    return Param(name, str, None, f"{help_}; unset: {default}, or the task option compat's "
                 "preset", choices=choices, nullable=True)


SINGLE_CLASS_ROC = Convention(
    _param("single_class",
           "value when the labels hold one class only: undefined (null, with a note; "
           "scikit-learn's roc_auc_score is nan) or spark (1.0 when every label is positive, "
           "0.0 when every label is negative, with a note, as Spark MLlib's areaUnderROC)",
           ("undefined", "spark"), "undefined"),
    "undefined", {"spark": "spark", "sklearn": "undefined"},
    "undefined matches scikit-learn (roc_auc_score is nan, with a warning); spark matches "
    "Spark MLlib's BinaryClassificationMetrics.areaUnderROC, whose false positive rate is 0 "
    "without negatives and whose true positive rate is 0 without positives, the curve then "
    "closed at (1, 1).",
)
SINGLE_CLASS_PR = Convention(
    _param("single_class",
           "value when no label is positive: undefined (null, with a note) or spark (0.0, "
           "with a note, as Spark MLlib's areaUnderPR, whose recall is 0 and precision 0 "
           "there); with only positives the value is 1.0 whatever the setting",
           ("undefined", "spark"), "undefined"),
    "undefined", {"spark": "spark"},
    "undefined: recall is 0/0 without positives; spark matches Spark MLlib's "
    "BinaryClassificationMetrics.areaUnderPR (0.0).",
)
NO_POSITIVE_AP = Convention(
    _param("no_positive",
           "value when no label is positive: undefined (null, with a note) or zero (0.0, with "
           "a note, as scikit-learn's average_precision_score, which warns that recall is set "
           "to one)", ("undefined", "zero"), "undefined"),
    "undefined", {"sklearn": "zero"},
    "undefined: recall is 0/0 without positives; zero matches scikit-learn's "
    "average_precision_score (0.0, with a warning).",
)

CURVE_FRAMING = Convention(
    _param("curve_framing",
           "the points of the curve files (--curves, the HTML figures): evalcli (ROC from "
           "(0, 0) at threshold inf, then one point per distinct score; PR one point per "
           "distinct score; no curve a class is missing for) or spark (Spark MLlib's "
           "BinaryClassificationMetrics.roc() and pr(): the ROC also ends with (1, 1) at "
           "threshold -inf, the PR starts with (recall 0, precision at the top score) at "
           "threshold inf, and both are written with one class only: a rate whose class is "
           "missing is 0, a precision with nothing predicted positive is 1)",
           ("evalcli", "spark"), "evalcli"),
    "evalcli", {"spark": "spark", "sklearn": "evalcli"},
    "evalcli's ROC points are scikit-learn's roc_curve(drop_intermediate=False); spark "
    "matches Spark MLlib's roc() and pr() point for point.",
)

NUM_BINS_HELP = (
    "down-sample the curve to about this many points as Spark MLlib's "
    "BinaryClassificationMetrics(scoreAndLabels, numBins): the distinct scores, highest "
    "first, are cut into consecutive chunks of floor(distinct scores / num_bins), the last "
    "chunk holding the rest, each chunk one point at its lowest score with the chunk's counts "
    "summed; no down-sampling when num_bins is 0 or above half the distinct scores (as Spark)")
NUM_BINS_OPTION = Param(
    "num_bins", int, 0,
    NUM_BINS_HELP + "; applies to the curve files (--curves; with curve_framing: spark they "
    "are Spark's roc() and pr() with numBins point for point) and is the default of auroc's "
    "and auprc's num_bins; 0: every distinct score (Spark's default)", ge=0)
NUM_BINS = Param(
    "num_bins", int, None,
    NUM_BINS_HELP + "; the area is then computed on the down-sampled curve, as Spark's "
    "areaUnderROC / areaUnderPR with numBins; unset: the task option num_bins (0: every "
    "distinct score, Spark's default)", ge=0, nullable=True)


def num_bins(params: Params, options: Mapping[str, Any]) -> int:
    """The down-sampling in force: the metric's ``num_bins``, else the task option's, else 0.

    >>> num_bins({"num_bins": None}, {"num_bins": 100}), num_bins({"num_bins": 5}, {})
    (100, 5)
    """
    v = params.get("num_bins")
    if v is None:
        v = options.get("num_bins")
    return int(v or 0)


COMPAT = Param(
    "compat", str, None,
    "set the binary conventions to what a peer does: spark (single_class: spark on auroc "
    "and auprc, curve_framing: spark) or sklearn (no_positive: zero on average_precision); a "
    "metric's own parameters and the curve_framing option override it; unset: evalcli's "
    "defaults", choices=COMPATS, nullable=True,
)


def effective(conv: Convention, params: Params, options: Mapping[str, Any]) -> str:
    """The convention in force: the metric's parameter (or the task option of that name), else
    the ``compat`` option's preset, else the default.

    >>> effective(SINGLE_CLASS_ROC, {"single_class": None}, {"compat": "spark"})
    'spark'
    >>> effective(SINGLE_CLASS_ROC, {"single_class": "undefined"}, {"compat": "spark"})
    'undefined'
    >>> effective(NO_POSITIVE_AP, {}, {})
    'undefined'
    """
    name = conv.param.name
    v = params.get(name)
    if v is None:
        v = options.get(name)
    if v is None:
        compat = options.get("compat")
        v = conv.presets.get(compat, conv.default) if compat is not None else conv.default
    return str(v)
