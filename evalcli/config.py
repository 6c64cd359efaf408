"""YAML -> validated configuration objects. The only module that knows YAML.

Unknown keys are errors with a did-you-mean suggestion; YAML syntax errors name the line.
Relative paths resolve against the config file's folder, so a config runs the same from any
working directory.
"""

from __future__ import annotations

import difflib
import os
import re
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from evalcli.errors import ConfigError, did_you_mean

SCHEMA_VERSION = 1


class Format(str, Enum):
    """Input file formats."""

    csv = "csv"
    tsv = "tsv"
    parquet = "parquet"
    jsonl = "jsonl"
    trec = "trec"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


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


class Columns(Strict):
    """Names of the columns in the files, by role. Defaults are the role names."""

    id: list[str] | None = Field(
        None, description="join key(s) between predictions and truth (default: 'id')"
    )
    label: str | None = Field(None, description="the truth (default 'label')")
    score: str | None = Field(None, description="score or probability (default 'score')")
    prediction: str | None = Field(None, description="hard prediction (default 'prediction')")
    weight: str | None = Field(None, description="sample weight column (default: no weights)")
    extra: dict[str, str] = Field(
        default_factory=dict, description="other roles a task defines (e.g. query, item)"
    )

    @field_validator("id", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


class Alignment(Strict):
    """What to do with rows that do not line up, and with missing values."""

    unmatched: Literal["error", "drop"] = Field(
        "error", description="rows present in only one file: error (default) or drop"
    )
    nulls: Literal["error", "drop"] = Field(
        "error", description="rows with null/NaN in a needed column: error (default) or drop"
    )


class SegmentGate(Strict):
    """A gate on a metric's per-segment values."""

    min: float | None = Field(None, description="fail when a segment's value is below")
    max: float | None = Field(None, description="fail when a segment's value is above")


class MetricEntry(Strict):
    """A metric as written in the config, before the registry resolves it."""

    model_config = ConfigDict(extra="allow")
    metric: str = Field(description="metric name, optionally with @k (e.g. ndcg@10)")
    min: float | None = Field(None, description="gate: fail when the value is below")
    max: float | None = Field(None, description="gate: fail when the value is above")
    segments: dict[str, SegmentGate] | None = Field(
        None, description="gates per segment (needs group_by): {min: 0.8} holds for every "
        "segment; {'region=EU': {min: 0.8}, '*': {min: 0.7}} for a listed segment and the rest"
    )
    _params: dict[str, Any] = PrivateAttr(default_factory=dict)

    @field_validator("segments", mode="before")
    @classmethod
    def _every_segment(cls, v: Any) -> Any:
        if isinstance(v, dict) and v and set(v) <= {"min", "max"}:
            return {"*": v}
        return v

    @property
    def params(self) -> dict[str, Any]:
        """Metric parameters: every key but metric/min/max; ``@`` holds a cut-off from the id."""
        return self._params

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
    def _collect_params(self) -> MetricEntry:
        name, at, params = parse_metric_id(self.metric)
        self._params = {**params, **(self.model_extra or {})}
        self.metric = name
        if at is not None:
            self._params.setdefault("@", at)
        return self


def parse_metric_id(text: str) -> tuple[str, int | None, dict[str, str]]:
    """Split a metric id into name, cut-off and parameters.

    >>> parse_metric_id("ndcg@10"), parse_metric_id("auroc")
    (('ndcg', 10, {}), ('auroc', None, {}))
    >>> parse_metric_id("fbeta[beta=2]")
    ('fbeta', None, {'beta': '2'})
    """
    m = re.fullmatch(r"\s*([A-Za-z_][\w\-]*)\s*(?:@\s*([^\s\[]+))?\s*(?:\[(.*)\])?\s*", text)
    if not m:
        raise ConfigError(
            f"'{text}' is not a metric id",
            hint="write a name (f1), a name with a cut-off (ndcg@10), or parameters "
            "(fbeta[beta=2])",
        )
    params: dict[str, str] = {}
    if m.group(3):
        for part in m.group(3).split(","):
            key, sep, val = part.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"in '{text}', parameters must be written key=value")
            params[key.strip()] = val.strip()
    if m.group(2) is None:
        return m.group(1).lower(), None, params
    try:
        k = int(m.group(2))
    except ValueError:
        raise ConfigError(f"in '{text}', the cut-off after @ must be an integer") from None
    return m.group(1).lower(), k, params


class ChangeGate(Strict):
    """Gates on the change from a baseline, in the metric's direction (better is positive)."""

    max_drop: float | None = Field(
        None, ge=0, description="fail when the metric gets worse by more than this (absolute)")
    max_relative_drop: float | None = Field(
        None, ge=0, description="fail when it gets worse by more than this fraction of the "
        "baseline (0.02 = 2%)")
    min_improvement: float | None = Field(
        None, description="fail unless the metric gets better by at least this (absolute)")
    min_relative_improvement: float | None = Field(
        None, description="fail unless it gets better by at least this fraction of the baseline")


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
    report: list[str] = Field(default_factory=list, description="report files to write")
    baseline: Baseline | None = Field(
        None, description="an accepted JSON report to compare with, and gates on the change"
    )
    curves: Curves | None = Field(
        None, description="folder to write ROC/PR points (and residuals) as CSV or Parquet"
    )
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

    @field_validator("predictions", "truth", "curves", mode="before")
    @classmethod
    def _path_or_mapping(cls, v: Any) -> Any:
        return {"path": v} if isinstance(v, str) else v

    @field_validator("baseline", mode="before")
    @classmethod
    def _report_or_mapping(cls, v: Any) -> Any:
        return {"report": v} if isinstance(v, str) else v

    @field_validator("group_by", "report", "plugins", mode="before")
    @classmethod
    def _list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    def resolve(self, path: str) -> str:
        """A config path made absolute relative to the config file's folder."""
        if "://" in path:
            return path
        p = Path(path).expanduser()
        return os.path.normpath(p if p.is_absolute() else self.base_dir / p)


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


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
    """One readable message for pydantic's errors, with did-you-mean for unknown keys."""
    lines = []
    errors = err.errors()
    # a misspelt required key is reported once, as the unknown key with its suggestion
    suggested = set()
    for e in errors:
        if e["type"] == "extra_forbidden":
            parent = _model_at(tuple(e["loc"])[:-1])
            close = difflib.get_close_matches(str(e["loc"][-1]), list(parent.model_fields)
                                              if parent else [], n=1, cutoff=0.6)
            suggested |= {(*tuple(e["loc"])[:-1], c) for c in close}
    for e in errors:
        loc = tuple(e["loc"])
        where = _format_loc(loc)
        if e["type"] == "extra_forbidden":
            parent = _model_at(loc[:-1])
            known = list(parent.model_fields) if parent else []
            known = [k for k in known if k not in ("base_dir", "params")]
            lines.append(
                f"unknown key '{where}'.{did_you_mean(str(loc[-1]), known)}"
                + (f" Known keys here: {', '.join(known)}." if known else "")
            )
        elif e["type"] == "missing":
            if loc not in suggested:
                lines.append(f"missing required key '{where}'")
        else:
            lines.append(f"'{where}': {e['msg']} (got {e.get('input')!r})")
    return ConfigError(f"{source}: " + "; ".join(lines), hint="see 'evalcli schema' for every key")


def parse_config(data: Any, source: str, base_dir: Path) -> Config:
    """Validate a mapping (already parsed from YAML, or built in Python) into a Config."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: the config must be a mapping of keys (task, predictions, ...)")
    try:
        cfg = Config.model_validate({**data, "base_dir": base_dir})
    except ValidationError as err:
        raise explain(err, source) from None
    return cfg


def _strict_loader() -> type:
    """PyYAML's SafeLoader, refusing a key given twice in one mapping, with YAML 1.2 booleans.

    PyYAML silently keeps the last of two equal keys, so a config saying two things (two
    ``predictions:`` lines) would run on one of them without a word. And it reads ``yes``,
    ``no``, ``on`` and ``off`` as booleans (YAML 1.1), so ``positive: yes`` named the class
    ``True``; only ``true`` and ``false`` are booleans here, as in YAML 1.2.
    """
    import yaml

    class StrictLoader(yaml.SafeLoader):
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
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} is given twice (also at line {first + 1})",
                        key_node.start_mark)
                seen[key] = key_node.start_mark.line
            return super().construct_mapping(node, deep=deep)

    bool_tag = "tag:yaml.org,2002:bool"
    StrictLoader.yaml_implicit_resolvers = {
        first: [r for r in resolvers if r[0] != bool_tag]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    StrictLoader.add_implicit_resolver(
        bool_tag, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
    return StrictLoader


def load_config(path: Path) -> Config:
    """Read and validate a YAML config file."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        data = yaml.load(text, Loader=_strict_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}: invalid YAML{where}: {problem}",
                          hint="check the indentation and quoting on that line") from None
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
