"""The Python API: ``evalcli.evaluate`` returns the report object the CLI renders."""

from __future__ import annotations

import json
import re
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from sklearn.metrics import roc_auc_score

import evalcli
from tests.conftest import CONFIGS, ROOT, SAMPLES
from tests.plugin_env import (
    active,
    broken_site,
    collide_site,
    example_plugin,
    example_site,
)
from tests.test_plugins import binary_data, ref_hl

__all__ = ["broken_site", "collide_site", "example_plugin", "example_site"]  # fixtures

QUICKSTART = CONFIGS / "binary-quickstart.yaml"


def preds() -> pl.DataFrame:
    return pl.read_parquet(SAMPLES / "binary_predictions.parquet")


def truth() -> pl.DataFrame:
    return pl.read_csv(SAMPLES / "binary_truth.csv")


def without_paths(report: dict[str, object]) -> dict[str, object]:
    out = dict(report)
    out.pop("inputs")
    return out


# --------------------------------------------------------------------------- same as the CLI

def test_the_api_returns_what_the_cli_renders(cli):
    r = cli("run", str(QUICKSTART), "--format", "json")
    assert r.exit_code == 0, r.stderr
    from_cli = json.loads(r.stdout)
    from_path = evalcli.evaluate(QUICKSTART)
    assert isinstance(from_path, evalcli.RunResult)
    assert from_path.to_dict() == from_cli
    cfg = yaml.safe_load(QUICKSTART.read_text())
    del cfg["predictions"], cfg["truth"]
    from_frames = evalcli.evaluate(cfg, predictions=preds(), truth=truth().lazy())
    assert without_paths(from_frames.to_dict()) == without_paths(from_cli)
    assert from_frames.to_dict()["inputs"]["predictions"]["path"] == "<predictions DataFrame>"
    assert from_frames.predictions.rows == 228 and from_frames.truth is not None


def test_every_kind_of_config_and_input(monkeypatch, tmp_path):
    df = truth().join(preds(), on="id")
    df.write_csv(tmp_path / "scored.csv")
    expected = roc_auc_score(df["label"].to_numpy(), df["score"].to_numpy())
    monkeypatch.chdir(tmp_path)
    as_dict = {"task": "binary", "predictions": "scored.csv", "metrics": ["auroc"]}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(as_dict))
    runs = [
        evalcli.evaluate(as_dict),                                 # paths relative to the cwd
        evalcli.evaluate("c.yaml"),
        evalcli.evaluate(tmp_path / "c.yaml"),
        evalcli.evaluate(evalcli.load_config(as_dict)),
        evalcli.evaluate({"task": "binary", "metrics": ["auroc"]}, predictions=df),
        evalcli.evaluate({"task": "binary", "metrics": ["auroc"]}, predictions=df.lazy()),
        evalcli.evaluate(as_dict, predictions=Path("scored.csv")),
        evalcli.evaluate({"task": "binary", "predictions": "elsewhere.csv",
                          "metrics": ["auroc"]}, predictions="scored.csv"),
    ]
    for res in runs:
        assert res.values() == {"auroc": pytest.approx(expected, abs=1e-12)}


def test_frames_for_both_sides_with_a_config_that_has_one_file(tmp_path):
    cfg = {"task": "regression", "predictions": "unused.csv", "columns": {"id": "k"},
           "metrics": ["mae", "r2"]}
    t = pl.DataFrame({"k": [3, 1, 2], "label": [4.0, 1.0, 2.0]})
    p = pl.DataFrame({"k": [1, 2, 3], "prediction": [1.5, 2.0, 3.0]})
    res = evalcli.evaluate(cfg, predictions=p, truth=t)
    assert res.values()["mae"] == pytest.approx(0.5)
    assert res.alignment.matched == 3


# --------------------------------------------------------------------------- the result as data

def test_values_and_the_polars_views():
    res = evalcli.evaluate(
        {"task": "binary", "metrics": ["auroc", {"metric": "recall", "min": 0.99},
                                       {"metric": "log_loss", "max": 1.0}],
         "group_by": ["size"]},
        predictions=preds(), truth=truth())
    assert res.passed is False
    assert res.failures == [f"recall: {res.metric('recall').value:.6g} is below the minimum 0.99"
                            " (gate >= 0.99)"]
    df = res.to_polars()
    assert df.schema == pl.Schema({
        "id": pl.String, "metric": pl.String, "family": pl.String, "value": pl.Float64,
        "direction": pl.String, "gate_min": pl.Float64, "gate_max": pl.Float64,
        "passed": pl.Boolean, "notes": pl.List(pl.String)})
    assert df.select("id", "gate_min", "gate_max", "passed").rows() == [
        ("auroc", None, None, None), ("recall", 0.99, None, False), ("log_loss", None, 1.0, True)]
    assert dict(zip(df["id"], df["value"], strict=True)) == res.values()
    assert res.to_frame().equals(df)
    seg = res.to_polars(segments=True)
    assert seg.columns[:2] == ["size", "rows"] and seg.height == 2 * 3
    merged = truth().join(preds(), on="id")
    for size in ("large", "small"):
        part = merged.filter(pl.col("size") == size)
        got = seg.filter((pl.col("size") == size) & (pl.col("id") == "auroc"))
        assert got["rows"].item() == part.height
        assert got["value"].item() == pytest.approx(
            roc_auc_score(part["label"].to_numpy(), part["score"].to_numpy()), abs=1e-12)


def test_no_gating_reports_without_failing():
    res = evalcli.evaluate({"task": "binary", "metrics": [{"metric": "auroc", "min": 1.0}]},
                           predictions=preds(), truth=truth(), gating=False)
    assert res.passed is True and res.metric("auroc").passed is None


def test_nothing_is_printed_and_nothing_exits(capsys):
    res = evalcli.evaluate({"task": "binary", "metrics": [{"metric": "auroc", "min": 1.0}]},
                           predictions=preds(), truth=truth())
    assert res.passed is False
    with pytest.raises(evalcli.MetricError):
        evalcli.evaluate({"task": "binary", "metrics": ["nope"]}, predictions=preds(),
                         truth=truth())
    assert capsys.readouterr() == ("", "")


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize(("kwargs", "error", "text"), [
    ({"config": {"task": "binary", "metrics": ["aucroc"]}}, evalcli.MetricError,
     "unknown binary metric 'aucroc'. Did you mean 'auroc'?"),
    ({"config": {"task": "binary", "metrcs": ["auroc"]}}, evalcli.ConfigError,
     "unknown key 'metrcs'. Did you mean 'metrics'?"),
    ({"config": {"task": "binary"}, "predictions": [1, 2]}, evalcli.ConfigError,
     "predictions= must be a Polars DataFrame/LazyFrame or a path, got builtins.list"),
    ({"config": 42}, evalcli.ConfigError, "config must be a mapping"),
    ({"config": {"task": "binary", "engine": "spark"}}, evalcli.ConfigError,
     "engine: spark reads files or tables, not in-memory Polars frames"),
    ({"config": {"task": "binary", "columns": {"score": "p"}}}, evalcli.InputDataError,
     "<predictions DataFrame>: no column 'p' for the score role"),
    ({"config": {"task": "binary"}, "predictions": pl.DataFrame()}, evalcli.InputDataError,
     "<predictions DataFrame> has no columns"),
    ({"config": "no/such/config.yaml"}, evalcli.ConfigError, "does not exist"),
    ({"config": {"task": "binary"}, "predictions": "no/such/file.csv"}, evalcli.InputDataError,
     "does not exist"),
])
def test_bad_input_raises_a_user_error(kwargs, error, text):
    kwargs = {"predictions": truth().join(preds(), on="id"), **kwargs}
    with pytest.raises(error) as info:
        evalcli.evaluate(**kwargs)
    assert isinstance(info.value, evalcli.UserError)
    assert text in str(info.value)


def test_a_pandas_frame_gets_the_conversion_hint():
    fake = type("DataFrame", (), {"__module__": "pandas.core.frame"})()  # no pandas needed
    with pytest.raises(evalcli.ConfigError, match=r"got pandas\.core\.frame\.DataFrame") as info:
        evalcli.evaluate({"task": "binary"}, predictions=fake)
    assert info.value.hint == "convert it with polars.from_pandas(df)"


def test_bad_rows_name_the_frame_and_the_row():
    df = pl.DataFrame({"label": [0, 1, 2], "score": [0.1, 0.9, 0.5]})
    with pytest.raises(evalcli.InputDataError, match=r"<predictions DataFrame>.*0 and 1"):
        evalcli.evaluate({"task": "binary", "metrics": ["auroc"]}, predictions=df)


# --------------------------------------------------------------------------- plugins from Python

def test_plugin_metrics_from_python(example_plugin):
    df = binary_data(seed=4)
    res = evalcli.evaluate({"task": "binary", "metrics": ["hl", "auroc"],
                            "group_by": ["region"]}, predictions=df)
    assert res.metric("hosmer_lemeshow").value == pytest.approx(
        ref_hl(df["label"].to_numpy(), df["score"].to_numpy(), 10), rel=1e-9)
    per = res.to_polars(segments=True).filter(pl.col("id") == "hosmer_lemeshow")
    for region, value in zip(per["region"], per["value"], strict=True):
        part = df.filter(pl.col("region") == region)
        assert value == pytest.approx(
            ref_hl(part["label"].to_numpy(), part["score"].to_numpy(), 10), rel=1e-9)
    origins = {m.name: m.origin for m in evalcli.list_metrics("binary")}
    assert origins["hosmer_lemeshow"] == "plugin 'example' (evalcli-plugin-example 0.1.0)"
    assert origins["ece"] == "built-in"
    assert origins["auroc"] == "built-in"


def test_broken_plugin_from_python_warns_or_raises(broken_site):
    df = truth().join(preds(), on="id")
    with active(broken_site):
        with pytest.warns(evalcli.PluginWarning, match="plugin 'broken' .* failed to load: "
                          "ModuleNotFoundError"):
            res = evalcli.evaluate({"task": "binary", "metrics": ["auroc"]}, predictions=df)
        assert res.passed
        with warnings.catch_warnings(), pytest.raises(evalcli.MetricError,
                                                      match="plugin 'broken'"):
            warnings.simplefilter("ignore", evalcli.PluginWarning)
            evalcli.evaluate({"task": "binary", "metrics": ["fairness_gap"]}, predictions=df)


def test_colliding_plugin_from_python_raises(collide_site):
    with active(collide_site), pytest.raises(evalcli.PluginError,
                                             match="collides with 'auroc' from built-in"):
        evalcli.evaluate({"task": "binary", "metrics": ["accuracy"]},
                         predictions=truth().join(preds(), on="id"))


def test_a_local_plugin_file_from_python():
    plugin = ROOT / "examples" / "local_plugin" / "my_metrics.py"
    df = truth().join(preds(), on="id")
    res = evalcli.evaluate({"task": "binary", "plugins": [str(plugin)],
                            "metrics": [{"metric": "net_benefit", "threshold": 0.5}]},
                           predictions=df)
    y, p = df["label"].to_numpy(), df["score"].to_numpy()
    tp, fp = np.sum((p >= 0.5) & (y == 1)), np.sum((p >= 0.5) & (y == 0))
    assert res.metric("net_benefit[threshold=0.5]").value == pytest.approx(
        tp / len(y) - fp / len(y), abs=1e-12)
    assert "net_benefit" in [m.name for m in evalcli.list_metrics(plugins=[plugin])]
    assert "net_benefit" not in [m.name for m in evalcli.list_metrics()]


# --------------------------------------------------------------------------- the package surface

def test_stable_names_load_lazily_from_the_package_root():
    code = (
        "import sys, evalcli\n"
        "assert 'polars' not in sys.modules, 'import evalcli must stay light'\n"
        "import evalcli.runner\n"                       # the run path shared with the CLI
        "assert callable(evalcli.evaluate) and evalcli.evaluate.__module__ == 'evalcli.api'\n"
        "for name in evalcli.__all__:\n"
        "    getattr(evalcli, name)\n"
        "assert sorted(evalcli.__all__) == sorted(set(evalcli.__all__))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr


def test_the_package_is_typed():
    assert (ROOT / "evalcli" / "py.typed").is_file()
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        evalcli.nope  # noqa: B018


def test_the_python_api_example_runs(capsys):
    runpy.run_path(str(ROOT / "examples" / "python_api.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "error: unknown binary metric 'aucroc'. Did you mean 'auroc'?" in out
    # the AUROC the example prints is scikit-learn's on the same files
    data = ROOT / "sample_data"
    df = pl.read_parquet(data / "binary_predictions.parquet").join(
        pl.read_csv(data / "binary_truth.csv"), on="id")
    expected = roc_auc_score(df["label"].to_numpy(), df["score"].to_numpy())
    printed = re.search(r"'auroc': ([0-9.e-]+)", out)
    assert printed is not None
    assert float(printed.group(1)) == pytest.approx(expected, rel=1e-12, abs=0)


def test_a_lazyframe_that_does_not_resolve_is_a_user_error(tmp_path):
    """A LazyFrame whose plan names a missing column, or scans a missing file, raised Polars'
    own exception (docs/python-api.md promises a UserError)."""
    cfg = {"task": "binary", "metrics": ["auroc"]}
    good = pl.DataFrame({"label": [1, 0], "score": [0.9, 0.1]}).lazy()
    for bad, said in ((good.with_columns(pl.col("nope") + 1), "nope"),
                      (pl.scan_parquet(tmp_path / "missing.parquet"), "missing.parquet")):
        with pytest.raises(evalcli.UserError, match=f"the LazyFrame cannot be read: .*{said}"):
            evalcli.evaluate(cfg, predictions=bad)
