"""Config: YAML -> validated objects, and one clear ConfigError (with did-you-mean) otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcli.config import (
    Config,
    MetricEntry,
    json_schema,
    load_config,
    parse_config,
    parse_metric_id,
)
from evalcli.errors import ConfigError, MetricError
from evalcli.runner import prepare


def _yaml(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _data(tmp_path: Path) -> str:
    path = tmp_path / "p.csv"
    path.write_text("label,score\n1,0.9\n0,0.2\n")
    return str(path)


# --------------------------------------------------------------------------- valid configs

def test_minimal_config_and_defaults(tmp_path: Path) -> None:
    cfg = load_config(_yaml(tmp_path, "task: binary\npredictions: p.csv\n"))
    assert cfg.task == "binary"
    assert cfg.predictions.path == "p.csv" and cfg.truth is None
    assert cfg.metrics == [] and cfg.group_by == []
    assert cfg.alignment.unmatched == "error" and cfg.alignment.nulls == "error"
    assert cfg.columns.id is None


def test_relative_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    sub = tmp_path / "configs"
    sub.mkdir()
    cfg = load_config(_yaml(sub, "task: binary\npredictions: ../data/p.csv\n"))
    assert Path(cfg.resolve(cfg.predictions.path)) == sub.resolve().parent / "data" / "p.csv"
    assert cfg.resolve("/abs/x.csv") == "/abs/x.csv"


def test_input_as_mapping_with_reader_options(tmp_path: Path) -> None:
    cfg = load_config(_yaml(tmp_path, "task: binary\npredictions:\n  path: p.txt\n"
                                      "  format: csv\n  separator: ';'\n  null_values: [NA]\n"))
    assert cfg.predictions.format is not None and cfg.predictions.format.value == "csv"
    assert cfg.predictions.separator == ";" and cfg.predictions.null_values == ["NA"]


def test_one_or_many_ids_and_group_by(tmp_path: Path) -> None:
    cfg = load_config(_yaml(tmp_path, "task: binary\npredictions: p.csv\ntruth: t.csv\n"
                                      "columns: {id: user}\ngroup_by: country\n"))
    assert cfg.columns.id == ["user"] and cfg.group_by == ["country"]
    cfg = load_config(_yaml(tmp_path, "task: binary\npredictions: p.csv\n"
                                      "columns: {id: [user, day]}\ngroup_by: [a, b]\n"))
    assert cfg.columns.id == ["user", "day"] and cfg.group_by == ["a", "b"]


def test_metric_entries_every_spelling(tmp_path: Path) -> None:
    cfg = load_config(_yaml(tmp_path, """\
task: binary
predictions: p.csv
metrics:
  - auroc
  - fbeta[beta=2]
  - {metric: recall, threshold: 0.3, min: 0.9}
  - {log_loss: {max: 0.4}}
  - {brier: null}
"""))
    names = [(m.metric, m.params, m.min, m.max) for m in cfg.metrics]
    assert names == [
        ("auroc", {}, None, None),
        ("fbeta", {"beta": "2"}, None, None),
        ("recall", {"threshold": 0.3}, 0.9, None),
        ("log_loss", {}, None, 0.4),
        ("brier", {}, None, None),
    ]


@pytest.mark.parametrize("text,expected", [
    ("ndcg@10", ("ndcg", 10, {})),
    ("NDCG@10", ("ndcg", 10, {})),
    (" auroc ", ("auroc", None, {})),
    ("fbeta[beta=2,zero_division=1]", ("fbeta", None, {"beta": "2", "zero_division": "1"})),
    ("ndcg@5[gain=exponential]", ("ndcg", 5, {"gain": "exponential"})),
])
def test_parse_metric_id(text: str, expected: tuple[str, int | None, dict[str, str]]) -> None:
    assert parse_metric_id(text) == expected


@pytest.mark.parametrize("text,match", [
    ("ndcg@ten", "integer"),
    ("fbeta[beta]", "key=value"),
    ("1abc", "not a metric id"),
    ("", "not a metric id"),
])
def test_parse_metric_id_errors(text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        parse_metric_id(text)


def test_json_schema_lists_keys_but_not_internals() -> None:
    schema = json_schema()
    props = schema["properties"]
    for key in ("task", "predictions", "truth", "columns", "metrics", "group_by", "alignment"):
        assert key in props
    assert "base_dir" not in props
    assert schema["$schema"].startswith("https://json-schema.org/")


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("text,match", [
    ("task: binary\npredictions: p.csv\nmetrik: [auroc]\n",
     r"unknown key 'metrik'\. Did you mean 'metrics'\?"),
    ("task: binary\npredictions: {pth: p.csv}\n",
     r"unknown key 'predictions\.pth'\. Did you mean 'path'\?"),
    ("task: binary\npredictions: p.csv\ncolumns: {lable: y}\n",
     r"unknown key 'columns\.lable'\. Did you mean 'label'\?"),
    ("task: binary\npredictions: p.csv\nalignment: {unmached: drop}\n",
     r"unknown key 'alignment\.unmached'\. Did you mean 'unmatched'\?"),
    ("predictions: p.csv\n", r"missing required key 'task'"),
    ("task: binary\n", r"missing required key 'predictions'"),
    ("task: binary\npredictions: p.csv\nalignment: {nulls: skip}\n",
     r"'alignment\.nulls'.*'error' or 'drop'.*'skip'"),
    ("task: binary\npredictions: p.csv\nmetrics: [{metric: auroc, min: high}]\n",
     r"'metrics\[0\]\.min'.*number.*'high'"),
    ("- 1\n- 2\n", "must be a mapping"),
    ("", "is empty"),
])
def test_config_errors_name_the_key(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        load_config(_yaml(tmp_path, text))
    assert "c.yaml" in str(info.value)


@pytest.mark.parametrize("text,line", [
    ("task: binary\npredictions: p.csv\nmetrics: [auroc, {metric: f1\n", 4),
    ("task: binary\npredictions: p.csv\n  metrics: x\n", 3),
    ("task: binary\n\tpredictions: p.csv\n", 2),
    ("task: binary\npredictions: 'p.csv\n", 3),
])
def test_yaml_syntax_errors_show_the_line(tmp_path: Path, text: str, line: int) -> None:
    with pytest.raises(ConfigError, match=rf"invalid YAML at line {line}\b"):
        load_config(_yaml(tmp_path, text))


def test_duplicate_yaml_keys_are_an_error(tmp_path: Path) -> None:
    """PyYAML keeps the last of two equal keys; a config that says two things is refused."""
    with pytest.raises(ConfigError, match=r"line 3.*'predictions'.*twice|twice.*line 3"):
        load_config(_yaml(tmp_path, "task: binary\npredictions: a.csv\npredictions: b.csv\n"))


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_parse_config_from_python() -> None:
    cfg = parse_config({"task": "regression", "predictions": "x.csv"}, "api", Path("/data"))
    assert isinstance(cfg, Config) and cfg.resolve("x.csv") == "/data/x.csv"
    with pytest.raises(ConfigError, match=r"^api: unknown key 'tsk'\. Did you mean 'task'\?"):
        parse_config({"tsk": "regression", "predictions": "x.csv"}, "api", Path("/data"))


# --------------------------------------------------------------------------- planning errors

def _prepare(tmp_path: Path, metrics: list[object], **extra: object) -> None:
    prepare(parse_config({"task": "binary", "predictions": _data(tmp_path), "metrics": metrics,
                          **extra}, "test", tmp_path))


@pytest.mark.parametrize("metrics,exc,match", [
    (["aucroc"], MetricError, r"unknown binary metric 'aucroc'\. Did you mean 'auroc'\?"),
    (["rmse"], MetricError, r"It is a regression metric"),
    ([{"metric": "recall", "threshhold": 0.3}], MetricError, r"Did you mean 'threshold'\?"),
    ([{"metric": "fbeta", "beta": 0}], MetricError, r"'beta'.*must be > 0, got 0"),
    (["fbeta[beta=-2]"], MetricError, r"'beta'.*must be > 0"),
    ([{"metric": "precision", "zero_division": "2"}], MetricError,
     r"zero_division.*one of 0, 1, nan"),
    (["auroc@5"], MetricError, r"takes no @k"),
    (["auroc", "roc_auc"], ConfigError, r"'auroc' is listed twice"),
    ([{"metric": "auroc", "min": 0.9, "max": 0.1}], ConfigError, r"min 0\.9 is above max 0\.1"),
])
def test_planning_errors(tmp_path: Path, metrics: list[object], exc: type[Exception],
                         match: str) -> None:
    with pytest.raises(exc, match=match):
        _prepare(tmp_path, metrics)


def test_unknown_task_and_option(tmp_path: Path) -> None:
    with pytest.raises(MetricError, match=r"unknown task 'binry'\. Did you mean 'binary'\?"):
        prepare(parse_config({"task": "binry", "predictions": _data(tmp_path)}, "t", tmp_path))
    with pytest.raises(ConfigError, match=r"unknown option 'positve'.*Did you mean 'positive'"):
        _prepare(tmp_path, [], options={"positve": "yes"})


def test_metric_entry_model_is_shared_with_the_command_line() -> None:
    e = MetricEntry.model_validate("recall[threshold=0.3]")
    assert (e.metric, e.params) == ("recall", {"threshold": "0.3"})


def test_yes_and_no_stay_strings(tmp_path: Path) -> None:
    """YAML 1.1 reads yes/no/on/off as booleans; 'positive: yes' must name the class 'yes'."""
    cfg = load_config(_yaml(tmp_path, "task: binary\npredictions:\n  path: p.csv\n"
                                      "  has_header: false\noptions: {positive: yes}\n"))
    assert cfg.options == {"positive": "yes"}
    assert cfg.predictions.has_header is False
    cfg = load_config(_yaml(tmp_path, "task: binary\npredictions: {path: p.csv, has_header: no}\n"
                                      "options: {positive: off}\n"))
    assert cfg.options == {"positive": "off"} and cfg.predictions.has_header is False
