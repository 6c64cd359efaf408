"""YAML -> validated configuration objects. The only module that knows YAML.

Unknown keys are errors with a did-you-mean suggestion; YAML syntax errors name the line.
Relative paths resolve against the config file's folder, so a config runs the same from any
working directory.

A config is untrusted input: a file that is not UTF-8, a tag (``!!python/object``), an alias
that expands into more than :data:`MAX_ALIAS_VALUES` values (a "billion laughs" bomb) or
nesting deeper than the parser's stack is one :class:`~evalcli.errors.ConfigError` naming the
file and the line; every echo of a value, key or list in a message is clipped
(:func:`~evalcli.errors.clip`), and at most :data:`MAX_LISTED_PROBLEMS` problems are listed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from evalcli.errors import ConfigError, clip, did_you_mean, printable
from evalcli.result import Bound, ChangeGate, Drop

MAX_ALIAS_VALUES = 1_000
"""Values (scalars, lists and mappings) a config may reach through YAML aliases, all aliases
together: an anchor reused a few times stays far below, an alias bomb is refused before it is
expanded."""

MAX_LISTED_PROBLEMS = 3
"""Validation problems spelt out in one message; the rest are counted."""


class Format(str, Enum):
    """Input file formats."""

    csv = "csv"
    tsv = "tsv"
    parquet = "parquet"
    jsonl = "jsonl"
    trec = "trec"
    trec_prefs = "trec_prefs"
    trec_qrels_jg = "trec_qrels_jg"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


STDIN_TWICE = ("predictions and truth both read standard input ('-'), which holds one file; "
               "pipe one of them and give the other's path (or pipe one file holding both, and "
               "omit truth)")


class InputSpec(Strict):
    """One input: a path (file, glob or directory), its format and reader options."""

    path: str = Field(description="file, glob (*.parquet) or directory of Parquet files")
    format: Format | None = Field(None, description="overrides the format from the extension")
    separator: str | None = Field(None, description="CSV field separator (default , or tab)")
    compression: Literal["gzip", "zstd", "none"] | None = Field(
        None, description="compression of a CSV/JSONL file (default: from the extension)"
    )
    null_values: list[str] | None = Field(None, description="strings read as null in CSV")
    has_header: bool = Field(True, description="whether a CSV file has a header row")
    encoding: str | None = Field(
        None, description="text encoding of a CSV/TSV/JSONL file (default utf-8): a Python "
        "codec such as latin-1, cp1252, utf-16, or utf8-lossy (bad bytes read as U+FFFD)")

    @field_validator("separator")
    @classmethod
    def _one_byte(cls, v: str | None) -> str | None:
        if v is not None and len(v.encode("utf-8")) != 1:
            raise ValueError("the separator must be one ASCII character, such as ',', ';', "
                             "'|' or a tab (written \"\\t\" in double quotes in YAML)")
        return v


class Columns(Strict):
    """Names of the columns in the files, by role. Each role is a key here; a role's column
    defaults to the role's name, except optional roles (a weight), used only when named.

    The keys a run may use are the roles of its task (:meth:`by_role` checks them): binary
    and multiclass have label, score and prediction; multilabel and regression label and
    prediction; ranking query, item, score, rank and relevance; every task a weight.
    """

    id: list[str] | None = Field(
        None, description="join key(s) between predictions and truth (default: 'id'); not for "
        "ranking, which joins on query and item"
    )
    label: str | None = Field(None, description="the truth (default 'label')")
    score: str | None = Field(
        None, description="score or probability; multiclass and multilabel: per-class or "
        "per-label scores (default 'score'; multilabel reads a score column only when named "
        "here, or wide columns by options.score_columns / score_prefix)")
    prediction: str | None = Field(
        None, description="hard prediction (default 'prediction'); multilabel: the predicted "
        "label set")
    weight: str | None = Field(
        None, description="sample weight (ranking: the query's weight); used only when named "
        "(default: no weights)")
    query: str | None = Field(
        None, description="ranking: the query or user id, a join key (default 'query')")
    item: str | None = Field(
        None, description="ranking: the item or document id, a join key; in the predictions "
        "it may be a list of items in rank order (default 'item')")
    rank: str | None = Field(
        None, description="ranking: the rank, 1 is best, used when there is no score "
        "(default 'rank')")
    relevance: str | None = Field(
        None, description="ranking: graded relevance of a judged item in the truth (default "
        "'relevance'; without one, every judged item has relevance 1)")
    extra: dict[str, str] = Field(
        default_factory=dict, description="roles of a task a plugin defines, as {role: column} "
        "(the built-in roles have their own keys above)"
    )

    @field_validator("id", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    def by_role(self, task: str, roles: Sequence[str], joins_on: Sequence[str] = ()
                ) -> dict[str, str]:
        """The named columns by role (``id`` apart), checked against the task's ``roles``.

        Every task may name a ``weight``, and an ``id`` unless it joins on roles of its own
        (``joins_on``: ranking's query and item). A key for a role the task does not have,
        here or under ``extra``, is a :class:`ConfigError` naming the task's roles; a role
        named both here and under ``extra`` must name one column.

        >>> Columns(label="y", extra={"score": "p"}).by_role("binary", ["label", "score"])
        {'label': 'y', 'score': 'p'}
        >>> Columns(query="u").by_role("binary", ["label", "score"])
        Traceback (most recent call last):
        ...
        evalcli.errors.ConfigError: columns.query: the binary task has no 'query' role. Its \
roles: id, label, score, weight.
          fix: name only the binary task's roles under 'columns:', or check 'task:'
        """
        allowed = [*roles, *(["weight"] if "weight" not in roles else [])]
        keys = allowed if joins_on else ["id", *allowed]

        def refuse(where: str, role: str, why: str = "") -> ConfigError:
            return ConfigError(
                f"{where}: the {task} task has no '{clip(role, 60)}' role{why}."
                f"{did_you_mean(role, allowed)} Its roles: {', '.join(keys)}.",
                hint=f"name only the {task} task's roles under 'columns:', or check 'task:'")

        if self.id is not None and joins_on:
            raise refuse("columns.id", "id", " (predictions and truth join on its "
                         f"{' and '.join(joins_on)} columns)")
        named: dict[str, str] = {}
        for role in type(self).model_fields:
            column = getattr(self, role)
            if role in ("id", "extra") or column is None:
                continue
            if role not in allowed:
                raise refuse(f"columns.{role}", role)
            named[role] = column
        for role, column in self.extra.items():
            where = f"columns.extra.{clip(printable(role), 60)}"
            if role not in allowed:
                raise refuse(where, printable(role))
            if named.get(role, column) != column:
                raise ConfigError(
                    f"columns.{role} ({_echo(named[role])}) and {where} ({_echo(column)}) name "
                    f"different columns for the {role} role",
                    hint=f"keep columns.{role} and remove {where}")
            named[role] = column
        return named


class Alignment(Strict):
    """What to do with rows that do not line up, and with missing values."""

    unmatched: Literal["error", "drop"] = Field(
        "error", description="rows present in only one file: error (default) or drop"
    )
    nulls: Literal["error", "drop"] = Field(
        "error", description="rows with null/NaN in a needed column: error (default) or drop"
    )


Level = Annotated[float, Field(gt=0, lt=1)]


class Confident(Strict):
    """How sure a gate must be (needs intervals: ``uncertainty:``, or ``--ci``)."""

    confidence: Level | None = Field(
        None, description="fail only when the value is significantly on the wrong side of the "
        "threshold: the interval at this level lies wholly beyond it (e.g. 0.95)")
    require_confidence: Level | None = Field(
        None, description="pass only when the value is significantly on the right side: the "
        "interval at this level lies wholly within the threshold (e.g. 0.95)")

    @model_validator(mode="after")
    def _one_confidence(self) -> Confident:
        if self.confidence is not None and self.require_confidence is not None:
            raise ValueError("give either confidence (fail only on evidence of a miss) or "
                             "require_confidence (pass only on evidence of a hit), not both")
        return self


class SegmentGate(Confident):
    """A gate on a metric's per-segment values."""

    min: Bound | None = Field(None, description="fail when a segment's value is below")
    max: Bound | None = Field(None, description="fail when a segment's value is above")

    @model_validator(mode="after")
    def _ordered(self) -> SegmentGate:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"gate min {self.min:g} is above max {self.max:g}")
        return self


class Uncertainty(Strict):
    """Confidence intervals on every metric and segment (see docs/uncertainty.md)."""

    level: Level = Field(0.95, description="the intervals' confidence level")
    method: Literal["auto", "bootstrap", "bca"] = Field(
        "auto", description="auto: a closed form where the metric has one (Wilson, DeLong, t), "
        "else the percentile bootstrap; bootstrap: percentile bootstrap for every metric; "
        "bca: bias-corrected and accelerated bootstrap for every metric")
    replicates: int = Field(1000, ge=100, le=100_000,
                            description="bootstrap replicates (resamples)")
    seed: int = Field(0, ge=0, description="seed of the random groups and the resamples: the "
                      "same seed gives the same intervals on every engine and input format")
    unit: str = Field(
        "auto", description="what is resampled: auto (rows; queries for ranking), rows, or a "
        "column (e.g. user_id) whose rows belong together: resampling rows of a user with 500 "
        "rows gives intervals far too narrow")
    groups: int = Field(1000, ge=20, le=100_000,
                        description="random groups the units are hashed into (at most one per "
                        "unit); the bootstrap resamples groups")


class MetricEntry(Strict):
    """A metric as written in the config, before the registry resolves it."""

    model_config = ConfigDict(extra="allow")
    metric: str = Field(description="metric name, optionally with @k (e.g. ndcg@10)")
    min: Bound | None = Field(None, description="gate: fail when the value is below")
    max: Bound | None = Field(None, description="gate: fail when the value is above")
    confidence: Level | None = Field(
        None, description="gate: fail only when the interval at this level lies wholly "
        "beyond min/max (needs uncertainty)")
    require_confidence: Level | None = Field(
        None, description="gate: pass only when the interval at this level lies wholly "
        "within min/max (needs uncertainty)")
    max_drop: Drop | None = Field(
        None, description="with several systems: fail when a system is worse than the "
        "baseline system by more than this (with confidence: significantly so)")
    max_relative_drop: Drop | None = Field(
        None, description="with several systems: as max_drop, as a fraction of the "
        "baseline system's value")
    min_improvement: Bound | None = Field(
        None, description="with several systems: fail unless a system is better than the "
        "baseline system by at least this")
    min_relative_improvement: Bound | None = Field(
        None, description="with several systems: as min_improvement, as a fraction of the "
        "baseline system's value")
    segments: dict[str, SegmentGate] | None = Field(
        None, description="gates per segment (needs group_by): {min: 0.8} holds for every "
        "segment; {'region=EU': {min: 0.8}, '*': {min: 0.7}} for a listed segment and the rest"
    )
    _params: dict[str, Any] = PrivateAttr(default_factory=dict)
    _in_id: dict[str, Any] = PrivateAttr(default_factory=dict)

    @field_validator("segments", mode="before")
    @classmethod
    def _every_segment(cls, v: Any) -> Any:
        if isinstance(v, dict) and v and set(v) <= {"min", "max", "confidence",
                                                     "require_confidence"}:
            return {"*": v}
        return v

    @property
    def params(self) -> dict[str, Any]:
        """Metric parameters: every key but metric/min/max; ``@`` holds a cut-off from the id."""
        return self._params

    @property
    def both_ways(self) -> dict[str, tuple[Any, Any]]:
        """Parameters given in the id's brackets and as keys of the entry, both values
        (``recall[threshold=0.3]`` with ``threshold: 0.5``): the planner refuses those that
        disagree."""
        extra = self.model_extra or {}
        return {k: (v, extra[k]) for k, v in self._in_id.items() if k in extra}

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, v: Any) -> Any:
        if isinstance(v, str):
            return {"metric": v}
        if isinstance(v, dict) and "metric" not in v and len(v) == 1:
            # {ndcg@10: {min: 0.3}} shorthand
            (name, rest), = v.items()
            if isinstance(rest, dict):
                return {"metric": name, **rest}
            if rest is None:
                return {"metric": name}
        return v

    @model_validator(mode="after")
    def _one_confidence(self) -> MetricEntry:
        Confident(confidence=self.confidence, require_confidence=self.require_confidence)
        return self

    @model_validator(mode="after")
    def _collect_params(self) -> MetricEntry:
        name, at, params = parse_metric_id(self.metric)
        self._in_id = dict(params)
        self._params = {**params, **(self.model_extra or {})}
        self.metric = name
        if at is not None:
            self._params.setdefault("@", at)
        return self


_CUTOFF_LIST = re.compile(r"\s*([A-Za-z_][\w\-]*)\.(\d+(?:\s*,\s*\d+)+)\s*")


def expand_cutoff_lists(entries: list[Any]) -> list[Any]:
    """Metric entries with trec_eval's ``name.k1,k2`` (one measure at several cut-offs, as its
    ``-m P.5,10``) spelled out as one entry per cut-off; other entries unchanged.

    >>> expand_cutoff_lists(["P.5,10", "map", {"metric": "ndcg@10"}])
    ['P.5', 'P.10', 'map', {'metric': 'ndcg@10'}]
    """
    out: list[Any] = []
    for entry in entries:
        m = _CUTOFF_LIST.fullmatch(entry) if isinstance(entry, str) else None
        if m is None:
            out.append(entry)
        else:
            out += [f"{m[1]}.{k.strip()}" for k in m[2].split(",")]
    return out


def parse_metric_id(text: str) -> tuple[str, int | float | None, dict[str, str]]:
    """Split a metric id into name, cut-off and parameters.

    >>> parse_metric_id("ndcg@10"), parse_metric_id("auroc")
    (('ndcg', 10, {}), ('auroc', None, {}))
    >>> parse_metric_id("fbeta[beta=2]")
    ('fbeta', None, {'beta': '2'})

    A cut-off at a fraction of the rows (``lift@0.01``) is a number:

    >>> parse_metric_id("lift@0.01")
    ('lift', 0.01, {})

    trec_eval's ``name.N`` is ``name@N`` (its ``name_N`` is resolved by the registry):

    >>> parse_metric_id("ndcg_cut.10"), parse_metric_id("P.5")
    (('ndcg_cut', 10, {}), ('p', 5, {}))

    A measure at a level (``iprec_at_recall_0.10``) is a name the registry resolves:

    >>> parse_metric_id("iprec_at_recall_0.10"), parse_metric_id("Rprec_mult.0.2")
    (('iprec_at_recall_0.10', None, {}), ('rprec_mult.0.2', None, {}))

    A table is a parameter in braces, whose commas are its own; trec_eval's ``ndcg.1=3,2=9``
    (a gain per relevance level) is ``gains``:

    >>> parse_metric_id("ndcg@10[gains={1:3,2:9},log_base=10]")
    ('ndcg', 10, {'gains': '{1:3,2:9}', 'log_base': '10'})
    >>> parse_metric_id("ndcg.1=3,2=9,4=4.5")
    ('ndcg', None, {'gains': '1=3,2=9,4=4.5'})
    """
    level = re.fullmatch(r"\s*(\d*[A-Za-z_][\w\-]*?[._]\d*\.\d+)\s*(?:\[(.*)\])?\s*", text)
    if level:
        return level.group(1).lower(), None, _id_params(text, level.group(2))
    m = re.fullmatch(r"\s*(\d*[A-Za-z_][\w\-]*)\s*(?:(?:@\s*|\.)([^\s\[]+))?\s*(?:\[(.*)\])?\s*",
                     text)
    if not m:
        raise ConfigError(
            f"'{clip(text)}' is not a metric id",
            hint="write a name (f1), a name with a cut-off (ndcg@10), or parameters "
            "(fbeta[beta=2])",
        )
    params = _id_params(text, m.group(3))
    if m.group(2) is None:
        return m.group(1).lower(), None, params
    if re.fullmatch(r"-?\d+=[^,=]+(?:,-?\d+=[^,=]+)*", m.group(2)):
        params.setdefault("gains", m.group(2))
        return m.group(1).lower(), None, params
    k: int | float
    if re.fullmatch(r"\d+", m.group(2)):
        k = int(m.group(2))
    elif re.fullmatch(r"\d*\.\d+", m.group(2)) and "@" in text:  # a fraction: lift@0.01
        k = float(m.group(2))
    else:
        raise ConfigError(f"in '{clip(text)}', the cut-off after @ must be an integer (or, "
                          "for a cut-off at a fraction, a number such as 0.01)",
                          hint="write ndcg@10, or lift@0.01")
    return m.group(1).lower(), k, params


def _id_params(text: str, inner: str | None) -> dict[str, str]:
    """The ``key=value`` parameters between the brackets of a metric id."""
    params: dict[str, str] = {}
    if inner:
        # commas inside braces belong to a table ({1:3,2:9}); a stray brace is an error
        parts, depth, start = [], 0, 0
        for i, ch in enumerate(inner):
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if depth < 0:
                break
            if ch == "," and depth == 0:
                parts.append(inner[start:i])
                start = i + 1
        if depth != 0:
            raise ConfigError(f"in '{clip(text)}', the braces of a table do not match",
                              hint="write a table as gains={1:3,2:9}")
        for part in [*parts, inner[start:]]:
            key, sep, val = part.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"in '{clip(text)}', parameters must be written key=value")
            if key.strip() in params:
                raise ConfigError(f"in '{clip(text)}', the parameter '{clip(key.strip(), 40)}' "
                                  "is given twice", hint="give each parameter once")
            params[key.strip()] = val.strip()
    return params


class Baseline(ChangeGate):
    """The accepted report a run is compared with; gates here apply to every metric."""

    report: str = Field(description="path of the accepted JSON report")
    metrics: dict[str, ChangeGate] = Field(
        default_factory=dict, description="gates for one metric id, replacing the ones above")


class Curves(Strict):
    """Where to write curve points."""

    path: str = Field(description="folder for roc, pr (binary) and residuals (regression)")
    format: Literal["csv", "parquet"] = Field("csv", description="csv or parquet")


class SparkSettings(Strict):
    """How ``engine: spark`` reaches Spark (see docs/spark.md)."""

    master: str = Field(
        "local[*]", description="Spark master: local[*], local[4], spark://host:7077, yarn, "
        "k8s://https://host:443 (ignored when a session is attached)"
    )
    app_name: str = Field("evalcli", description="application name shown in the Spark UI")
    conf: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="extra Spark settings for a session evalcli starts "
        "(e.g. spark.executor.memory: 4g, spark.sql.shuffle.partitions: 400)"
    )
    attach: Literal["auto", "required"] = Field(
        "auto", description="auto: use the active SparkSession when evalcli runs inside a "
        "Spark application, else start one from master and conf; required: fail unless a "
        "session is active"
    )
    log: Literal["quiet", "console"] = Field(
        "quiet", description="quiet: the output of a Spark evalcli starts goes to a temporary "
        "file (a failed start shows its end); console: Spark logs on stderr, as with -v or "
        "when conf sets spark.log.level"
    )


class ComparisonSettings(Strict):
    """A paired comparison of the systems ``predictions:`` names, on the same truth."""

    baseline: str | None = Field(
        None, description="the system the others are compared with (default: the first)")
    test: Literal["auto", "t", "wilcoxon", "sign_flip", "bootstrap"] = Field(
        "auto", description="auto: the paired t-test on per-query values for ranking means, "
        "the paired bootstrap over the random groups of units for every other metric; t, "
        "wilcoxon, sign_flip (Fisher's randomization): on per-query values where a metric "
        "has them, else the bootstrap; bootstrap: for every metric")
    correction: Literal["holm", "bonferroni", "bh", "none"] = Field(
        "holm", description="adjustment of the p-values for the systems x metrics tested: "
        "holm (family-wise, default), bonferroni, bh (Benjamini-Hochberg, false discovery "
        "rate), none")
    alpha: Level = Field(0.05, description="significance level of the adjusted p-values")


SYSTEM_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,63}$")


class Config(Strict):
    """An evalcli run."""

    task: str = Field(description="binary, multiclass, multilabel, ranking or regression")
    predictions: InputSpec = Field(description="the predictions file (may also hold the truth)")
    truth: InputSpec | None = Field(None, description="the truth file (omit if one file)")
    columns: Columns = Field(default_factory=Columns)
    options: dict[str, Any] = Field(
        default_factory=dict, description="task options (e.g. positive: yes); an option named "
        "*_file is a path, relative to the config's folder"
    )
    metrics: list[MetricEntry] = Field(
        default_factory=list, description="metrics to compute (default: the task's set)"
    )
    group_by: list[str] = Field(default_factory=list, description="segment columns")
    alignment: Alignment = Field(default_factory=Alignment)
    engine: Literal["auto", "polars", "streaming", "spark"] = Field(
        "auto", description="auto (in memory, streaming for large inputs), polars, streaming, "
        "spark (needs pip install 'evalcli[spark]' and Java 17+)"
    )
    spark: SparkSettings = Field(
        default_factory=SparkSettings, description="Spark settings for engine: spark"
    )
    plugins: list[str] = Field(
        default_factory=list, description="local Python files with metrics (runs their code)"
    )
    report: list[str] = Field(
        default_factory=list, description="report files to write; or {files: [...], "
        "statistics: true} to store the bootstrap replicates in the JSON report, so that a "
        "later run or evalcli diff can test the difference paired by unit")
    report_statistics: bool = Field(False, exclude=True, description="set by report: "
                                    "{statistics: true}")
    baseline: Baseline | None = Field(
        None, description="an accepted JSON report to compare with, and gates on the change"
    )
    curves: Curves | None = Field(
        None, description="folder to write ROC/PR points (and residuals) as CSV or Parquet"
    )
    systems: dict[str, InputSpec] | None = Field(
        None, description="set by predictions: {name: file, ...} (several systems on one "
        "truth, compared pairwise); then predictions is the first system's file")
    comparison: ComparisonSettings | None = Field(
        None, description="how the systems are compared: {baseline: NAME, test: auto, "
        "correction: holm, alpha: 0.05} (needs predictions: {name: file, ...})")
    uncertainty: Uncertainty | None = Field(
        None, description="confidence intervals on every metric: {level: 0.95, method: auto, "
        "replicates: 1000, seed: 0, unit: auto} (--ci turns them on)")
    per_query: str | None = Field(
        None, description="write each query's metric values (ranking) to this file: .parquet, "
        ".csv or .jsonl, relative to the config's folder"
    )
    base_dir: Path = Field(default=Path("."), exclude=True)

    @model_validator(mode="after")
    def _file_options(self) -> Config:
        """Options naming files (``*_file``) resolve against the config's folder."""
        for key, value in self.options.items():
            if key.endswith("_file") and isinstance(value, str):
                self.options[key] = self.resolve(value)
        return self

    @model_validator(mode="after")
    def _one_stdin(self) -> Config:
        """Standard input is one stream: it can be one of the two inputs, not both."""
        from evalcli.io.readers import is_stdin

        if self.truth is not None and is_stdin(self.predictions.path) \
                and is_stdin(self.truth.path):
            what, fix = STDIN_TWICE.split("; ", 1)
            raise ConfigError(what, hint=fix)
        return self

    @field_validator("predictions", "truth", "curves", mode="before")
    @classmethod
    def _path_or_mapping(cls, v: Any) -> Any:
        return {"path": v} if isinstance(v, str) else v

    @model_validator(mode="before")
    @classmethod
    def _named_systems(cls, v: Any) -> Any:
        """``predictions: {baseline: a.parquet, candidate: {path: b.csv}}``: several systems
        (a mapping without ``path`` whose values are files or file settings)."""
        if not isinstance(v, dict):
            return v
        p = v.get("predictions")
        fields = list(InputSpec.model_fields)
        if isinstance(p, dict) and len(p) == 1 and "comparison" in v and all(
                isinstance(k, str) and not difflib.get_close_matches(k, fields, 1, 0.75)
                for k in p):
            raise ValueError("predictions: name at least two systems to compare "
                             "({name: file, name: file}), or drop comparison:")
        if not isinstance(p, dict) or len(p) < 2 or any(
                not isinstance(k, str) or difflib.get_close_matches(k, fields, 1, 0.75)
                for k in p):
            return v  # one file's settings (a misspelt key among them is reported as such)
        if not all(isinstance(x, str) or (isinstance(x, dict) and "path" in x)
                   for x in p.values()):
            return v
        if "systems" in v:
            raise ValueError("give the systems under predictions: {name: file, ...} only")
        for name in p:
            if not isinstance(name, str) or not SYSTEM_NAME.match(name):
                raise ValueError(f"predictions: system name {clip(repr(name), 60)} must be "
                                 "letters, digits, '_', '-' or '.' (at most 64)")
        named = {k: {"path": x} if isinstance(x, str) else x for k, x in p.items()}
        return {**v, "systems": named, "predictions": next(iter(named.values()))}

    @model_validator(mode="after")
    def _change_gates_need_systems(self) -> Config:
        keys = ("max_drop", "max_relative_drop", "min_improvement", "min_relative_improvement")
        for m in self.metrics:
            if not self.systems and any(getattr(m, k) is not None for k in keys):
                raise ValueError(f"metric {m.metric}: max_drop, max_relative_drop, "
                                 "min_improvement and min_relative_improvement compare systems: "
                                 "give predictions: {name: file, ...}, or gate the change from "
                                 "an accepted report under baseline:")
        return self

    @model_validator(mode="after")
    def _comparison_needs_systems(self) -> Config:
        if self.comparison is not None and not self.systems:
            raise ValueError("comparison: needs several systems: predictions: {name: file, "
                             "...}")
        if self.systems and self.comparison is not None and \
                self.comparison.baseline is not None and \
                self.comparison.baseline not in self.systems:
            raise ValueError(f"comparison: baseline '{clip(self.comparison.baseline, 60)}' is "
                             f"not one of the systems ({', '.join(self.systems)})")
        if self.systems and self.baseline is not None:
            raise ValueError("baseline: compares one system with a stored report; with "
                             "several systems use comparison: instead")
        return self

    @field_validator("metrics", mode="before")
    @classmethod
    def _trec_cutoff_lists(cls, v: Any) -> Any:
        """trec_eval's ``P.5,10`` (a measure at several cut-offs) is ``P.5`` and ``P.10``."""
        return expand_cutoff_lists(v) if isinstance(v, list) else v

    @field_validator("baseline", mode="before")
    @classmethod
    def _report_or_mapping(cls, v: Any) -> Any:
        return {"report": v} if isinstance(v, str) else v

    @model_validator(mode="before")
    @classmethod
    def _report_mapping(cls, v: Any) -> Any:
        if isinstance(v, dict) and isinstance(v.get("report"), dict):
            r = dict(v["report"])
            unknown = set(r) - {"files", "statistics"}
            if unknown:
                raise ValueError(f"report: unknown key(s) {', '.join(map(str, unknown))}; "
                                 "give {files: [...], statistics: true}")
            files = r.get("files", [])
            stored = r.get("statistics", False)
            if not isinstance(stored, bool):
                raise ValueError("report: statistics must be true or false")
            return {**v, "report": files, "report_statistics": stored}
        return v

    @field_validator("group_by", "report", "plugins", mode="before")
    @classmethod
    def _list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    def resolve(self, path: str) -> str:
        """A config path made absolute relative to the config file's folder."""
        from evalcli.io.readers import input_path

        return input_path(path, self.base_dir)


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        part = part if isinstance(part, int) else printable(str(part))
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return clip(out) or "(top level)"


def _said(error: Mapping[str, Any]) -> str:
    """A pydantic error's message without its "Value error, " prefix."""
    return str(error["msg"]).removeprefix("Value error, ")


def _echo(value: Any) -> str:
    """A value of the config as a message shows it: its repr, bounded and clipped."""
    if isinstance(value, str):
        return clip(repr(value))
    import reprlib

    short = reprlib.Repr()
    short.maxlevel, short.maxlist, short.maxdict, short.maxstring, short.maxother = 3, 8, 8, 60, 60
    return clip(short.repr(value))


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    model: Any = Config
    for part in loc:
        if isinstance(part, int):
            continue
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return None
        ann = fields[part].annotation
        for cand in (InputSpec, Columns, Alignment, MetricEntry, SegmentGate, Baseline,
                     ChangeGate, Curves, SparkSettings):
            if ann is cand or cand in getattr(ann, "__args__", ()):
                model = cand
                break
        else:
            return None
    return model if isinstance(model, type) else None


def explain(err: ValidationError, source: str) -> ConfigError:
    """One readable message for pydantic's errors, with did-you-mean for unknown keys.

    Echoes of the config (keys, values) are clipped, and the first
    :data:`MAX_LISTED_PROBLEMS` problems are spelt out, the others counted: a list of 10,000
    bad entries is one short message.
    """
    errors = err.errors()
    # a misspelt required key is reported once, as the unknown key with its suggestion
    suggested = set()
    for e in errors:
        if e["type"] == "extra_forbidden":
            parent = _model_at(tuple(e["loc"])[:-1])
            close = difflib.get_close_matches(str(e["loc"][-1]), list(parent.model_fields)
                                              if parent else [], n=1, cutoff=0.6)
            suggested |= {(*tuple(e["loc"])[:-1], c) for c in close}
    problems = [e for e in errors if e["type"] != "missing" or tuple(e["loc"]) not in suggested]
    shown: list[str] = []
    for e in problems[:MAX_LISTED_PROBLEMS]:
        loc = tuple(e["loc"])
        where = _format_loc(loc)
        if e["type"] == "extra_forbidden":
            parent = _model_at(loc[:-1])
            known = list(parent.model_fields) if parent else []
            known = [k for k in known if k not in ("base_dir", "params")]
            shown.append(
                f"unknown key '{where}'.{did_you_mean(str(loc[-1]), known)}"
                + (f" Known keys here: {', '.join(known)}." if known else "")
            )
        elif e["type"] == "missing":
            shown.append(f"missing required key '{where}'")
        elif not loc or (e["type"] == "value_error" and isinstance(e.get("input"), dict)):
            # a rule across keys (a model's validator): its message says what is wrong, and
            # the echo would be the whole section (with evalcli's own keys)
            shown.append(clip(_said(e), 400) if not loc else f"'{where}': {clip(_said(e), 400)}")
        else:
            shown.append(f"'{where}': {clip(_said(e))} (got {_echo(e.get('input'))})")
    more = len(problems) - len(shown)
    if more:
        shown.append(f"and {more:,} more problem{'s' if more != 1 else ''}")
    return ConfigError(f"{source}: " + "; ".join(shown), hint="see 'evalcli schema' for every key")


def _kind(data: Any) -> str:
    """What a YAML document holds, in words: ``a list``, ``text``, ``a number``..."""
    if isinstance(data, list):
        return "a list"
    if isinstance(data, str):
        return "text"
    if isinstance(data, bool):
        return "true/false"
    if isinstance(data, int | float):
        return "a number"
    return f"a {type(data).__name__}"


def parse_config(data: Any, source: str, base_dir: Path) -> Config:
    """Validate a mapping (already parsed from YAML, or built in Python) into a Config."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: the config must be a mapping of keys (task, predictions, ...), "
            f"but it holds {_kind(data)}",
            hint="write one key per line, such as 'task: binary' (see configs/ for examples)")
    try:
        cfg = Config.model_validate({**data, "base_dir": base_dir})
    except ValidationError as err:
        raise explain(err, source) from None
    except ConfigError as err:  # from a validator (a metric id): say which config
        raise ConfigError(f"{source}: {err.message}", hint=err.hint) from None
    except RecursionError:
        raise ConfigError(f"{source}: the config is nested too deeply",
                          hint="a config needs a few levels of keys and lists") from None
    return cfg


def _strict_loader() -> type:
    """PyYAML's SafeLoader, refusing a key given twice in one mapping, with YAML 1.2 booleans,
    no tags, and a bound on what aliases expand to.

    PyYAML silently keeps the last of two equal keys, so a config saying two things (two
    ``predictions:`` lines) would run on one of them without a word. And it reads ``yes``,
    ``no``, ``on`` and ``off`` as booleans (YAML 1.1), so ``positive: yes`` named the class
    ``True``; only ``true`` and ``false`` are booleans here, as in YAML 1.2.

    An alias (``*name``) stands for the whole value of its anchor (``&name``), and anchors can
    hold aliases: 12 lines reach billions of values ("billion laughs"), which pydantic would
    walk and a message would print. Composing counts the values each alias stands for, all
    aliases together, and stops at the alias that passes :data:`MAX_ALIAS_VALUES`, before
    anything is expanded (or at an alias inside its own anchor's value: a cycle). A tag
    (``!!python/object``, ``!custom``) is refused: a config holds plain values only.
    """
    import yaml

    def refuse(cls: type[yaml.MarkedYAMLError], problem: str, mark: Any,
               hint: str) -> yaml.MarkedYAMLError:
        exc = cls(None, None, problem, mark)
        exc.hint = hint  # type: ignore[attr-defined]
        return exc

    class StrictLoader(yaml.SafeLoader):
        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            self.alias_values = 0
            self.expanded: dict[int, int] = {}

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()  # type: ignore[no-untyped-call]
                node = self.anchors.get(event.anchor)
                if node is not None:  # (an undefined alias: the base class says so)
                    self._count(event, node)
            return super().compose_node(parent, index)

        def _count(self, event: Any, node: Any) -> None:
            alias = f"*{clip(printable(str(event.anchor)), 60)}"
            if node.end_mark is None:  # its anchor's value is still being read
                raise refuse(yaml.composer.ComposerError,
                             f"the alias {alias} is inside the value it stands for",
                             event.start_mark, "write the value out instead of the alias")
            self.alias_values += self._values(node)
            if self.alias_values > MAX_ALIAS_VALUES:
                raise refuse(
                    yaml.composer.ComposerError,
                    f"the alias {alias} brings the values that aliases stand for to "
                    f"{self.alias_values:,}, more than the {MAX_ALIAS_VALUES:,} allowed "
                    "(an alias bomb?)", event.start_mark,
                    "write the values out, or reuse anchors less")

        def _values(self, node: Any) -> int:
            """The number of values (scalars, lists, mappings) ``node`` stands for."""
            n = self.expanded.get(id(node))
            if n is None:
                if isinstance(node, yaml.SequenceNode):
                    n = 1 + sum(self._values(child) for child in node.value)
                elif isinstance(node, yaml.MappingNode):
                    n = 1 + sum(self._values(k) + self._values(v) for k, v in node.value)
                else:
                    n = 1
                self.expanded[id(node)] = n
            return n

        def construct_undefined(self, node: Any) -> Any:
            tag = clip(printable(str(node.tag)).replace("tag:yaml.org,2002:", "!!"), 100)
            raise refuse(yaml.constructor.ConstructorError,
                         f"the tag {tag} is not allowed: a config holds plain text, numbers, "
                         "lists and mappings", node.start_mark,
                         "remove the tag (quote the value if it is text)")

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: the base class reports it
                    continue
                if first is not None:
                    raise refuse(yaml.constructor.ConstructorError,
                                 f"the key {_echo(key)} is given twice (also at line "
                                 f"{first + 1})", key_node.start_mark,
                                 "keep one of the two (a key says one thing)")
                seen[key] = key_node.start_mark.line
            return super().construct_mapping(node, deep=deep)

    StrictLoader.add_constructor(None, StrictLoader.construct_undefined)
    bool_tag = "tag:yaml.org,2002:bool"
    StrictLoader.yaml_implicit_resolvers = {
        first: [r for r in resolvers if r[0] != bool_tag]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    StrictLoader.add_implicit_resolver(
        bool_tag, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
    return StrictLoader


SAVE_AS_UTF8 = "save the file as UTF-8 (in most editors: Save As, Encoding: UTF-8)"


def _decode(raw: bytes, path: Path) -> str:
    """The text of a config file, which must be UTF-8 (a byte-order mark is allowed)."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ConfigError(f"{path} is UTF-16 text (it starts with a UTF-16 byte-order mark), "
                          "not UTF-8", hint=SAVE_AS_UTF8)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start
        line, column = raw.count(b"\n", 0, at) + 1, at - raw.rfind(b"\n", 0, at)
        raise ConfigError(
            f"{path} is not UTF-8 text: the byte 0x{raw[at]:02x} at offset {at:,} "
            f"(line {line}, column {column}) is not valid "
            "UTF-8; the file may be Latin-1 or Windows-1252 text",
            hint=SAVE_AS_UTF8) from None


def load_config(path: Path) -> Config:
    """Read and validate a YAML config file."""
    import yaml

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    text = _decode(raw, path)
    try:
        data = yaml.load(text, Loader=_strict_loader())
    except yaml.reader.ReaderError as exc:  # a control character (the reader has no mark)
        line = text.count("\n", 0, exc.position) + 1
        nul = exc.character == 0
        raise ConfigError(
            f"{path}: invalid YAML at line {line}: the character #x{exc.character:04x} "
            "(a control character) is not allowed in YAML",
            hint=("the file has NUL bytes: was it saved as UTF-16? " + SAVE_AS_UTF8) if nul
            else "remove it (write it as an escape such as \\t inside double quotes)"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        hint = getattr(exc, "hint", None)  # set by the strict loader's own refusals
        raise ConfigError(f"{path}: {'invalid YAML' if hint is None else 'refused'}{where}: "
                          f"{clip(problem, 400)}",
                          hint=hint or "check the indentation and quoting on that line") from None
    except RecursionError:
        raise ConfigError(f"{path}: the config is nested too deeply to read",
                          hint="a config needs a few levels of keys and lists") from None
    if data is None:
        raise ConfigError(f"{path} is empty", hint="see configs/ for examples")
    return parse_config(data, str(path), path.resolve().parent)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the config file, for editors."""
    schema = Config.model_json_schema(mode="validation")
    schema["properties"].pop("base_dir", None)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "evalcli config"
    return schema
