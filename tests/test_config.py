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
    ("11pt_avg", ("11pt_avg", None, {})),  # trec_eval's name: a leading digit
    ("iprec_at_recall_0.10[rounding=v9]", ("iprec_at_recall_0.10", None, {"rounding": "v9"})),
])
def test_parse_metric_id(text: str, expected: tuple[str, int | None, dict[str, str]]) -> None:
    assert parse_metric_id(text) == expected


@pytest.mark.parametrize("text,match", [
    ("ndcg@ten", "integer"),
    ("fbeta[beta]", "key=value"),
    ("123", "not a metric id"),
    ("1-abc", "not a metric id"),
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


# --------------------------------------------------------------------------- column roles

def _ranking_files(tmp_path: Path) -> tuple[str, str]:
    """Ranking files whose columns are not named after the roles (as users' files are)."""
    import polars as pl

    preds = tmp_path / "recs.parquet"
    truth = tmp_path / "ratings.parquet"
    pl.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u2", "u2"],
                  "item_id": ["a", "b", "c", "a", "b", "d"],
                  "p": [0.9, 0.8, 0.1, 0.7, 0.6, 0.5]}).write_parquet(preds)
    pl.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["b", "c", "d", "e"],
                  "rating": [3, 1, 2, 1]}).write_parquet(truth)
    return str(preds), str(truth)


def _ranking_values(tmp_path: Path, columns: dict[str, object]) -> dict[str, float | None]:
    from evalcli.runner import run_config

    preds, truth = _ranking_files(tmp_path)
    cfg = parse_config({"task": "ranking", "predictions": preds, "truth": truth,
                        "columns": columns,
                        "metrics": ["ndcg@3", "map", "precision@2", "recall@3"]}, "t", tmp_path)
    return {m.id: m.value for m in run_config(cfg).metrics}


def test_ranking_roles_are_keys_of_columns(tmp_path: Path) -> None:
    """The columns a user guesses first (issue 16, item 7): query, item and relevance are keys
    of 'columns' as label and score are; the old 'extra' form gives the same values."""
    first_class = _ranking_values(tmp_path, {"query": "user_id", "item": "item_id",
                                             "relevance": "rating", "score": "p"})
    old_form = _ranking_values(tmp_path, {"score": "p", "extra": {
        "query": "user_id", "item": "item_id", "relevance": "rating"}})
    assert first_class == old_form
    assert first_class["recall@3"] == pytest.approx((2 / 2 + 1 / 2) / 2)
    assert all(v is not None for v in first_class.values())
    cfg = load_config(_yaml(tmp_path, "task: ranking\npredictions: p.csv\ncolumns:\n"
                                      "  query: user_id\n  item: item_id\n  rank: pos\n"
                                      "  relevance: rating\n"))
    assert (cfg.columns.query, cfg.columns.item, cfg.columns.rank, cfg.columns.relevance) == (
        "user_id", "item_id", "pos", "rating")


def test_every_role_of_every_family_is_a_key_of_columns() -> None:
    """A family's role that is not a key of 'columns' would have to hide under 'extra'."""
    from evalcli.config import Columns
    from evalcli.metrics.registry import builtin_registry

    keys = set(Columns.model_fields)
    for task in builtin_registry().tasks.values():
        missing = set(task.role_names()) - keys
        assert not missing, f"roles of the {task.name} task missing from Columns: {missing}"
    props = json_schema()["$defs"]["Columns"]["properties"]
    for role in ("id", "label", "score", "prediction", "weight", "query", "item", "rank",
                 "relevance", "extra"):
        assert role in props and props[role].get("description"), role


@pytest.mark.parametrize("task,columns,match", [
    # a role of another family: named, with the task's own roles
    ("binary", {"query": "user_id"},
     r"columns\.query: the binary task has no 'query' role\. Its roles: id, label, score, "
     r"prediction, weight\b"),
    ("regression", {"score": "s"}, r"columns\.score: the regression task has no 'score' role.*"
     r"Its roles: id, label, prediction, weight\b"),
    ("ranking", {"label": "rating"}, r"columns\.label: the ranking task has no 'label' role.*"
     r"query, item, score, rank, relevance, weight"),
    # the old form is checked the same way, with did-you-mean among the task's roles
    ("ranking", {"extra": {"querry": "user_id"}},
     r"columns\.extra\.querry: the ranking task has no 'querry' role\. Did you mean 'query'\?"),
    ("binary", {"extra": {"relevance": "r"}}, r"columns\.extra\.relevance: the binary task"),
    # one role named twice, differently
    ("ranking", {"query": "user_id", "extra": {"query": "uid"}},
     r"columns\.query \('user_id'\) and columns\.extra\.query \('uid'\) name different "
     r"columns for the query role"),
])
def test_a_role_the_task_does_not_have_is_an_error(tmp_path: Path, task: str,
                                                  columns: dict[str, object],
                                                  match: str) -> None:
    cfg = parse_config({"task": task, "predictions": _data(tmp_path), "columns": columns},
                       "t", tmp_path)
    with pytest.raises(ConfigError, match=match):
        prepare(cfg)


def test_a_misspelt_role_key_suggests_the_role(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown key 'columns\.relevence'\. Did you mean "
                                          r"'relevance'\?"):
        load_config(_yaml(tmp_path, "task: ranking\npredictions: p.csv\n"
                                    "columns: {relevence: rating}\n"))


def test_role_errors_reach_the_command_line(cli, tmp_path: Path) -> None:
    import re

    path = _yaml(tmp_path, f"task: binary\npredictions: {_data(tmp_path)}\n"
                           "columns: {query: user_id}\n")
    r = cli("run", str(path))
    assert r.exit_code == 2 and r.stdout == "" and "Traceback" not in r.stderr
    flat = " ".join(r.stderr.split())
    assert r.stderr.count("error:") == 1
    assert re.search(r"the binary task has no 'query' role\. Its roles: id, label, score, "
                     r"prediction, weight", flat), flat
    assert "columns.query" in flat and "fix:" in flat


def test_sample_configs_use_the_role_keys() -> None:
    """The shipped configs show the first-class form: no built-in role under 'extra'."""
    from tests.conftest import CONFIGS

    for path in sorted(CONFIGS.glob("*.yaml")):
        cfg = load_config(path)
        assert not cfg.columns.extra, f"{path.name} names roles under columns.extra"
