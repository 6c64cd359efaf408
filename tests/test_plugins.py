"""Third-party metric plugins: the example package installed with pip, run through the CLI.

The example plugin's metrics are checked against independent references (scikit-learn's
calibration_curve and confusion_matrix, numpy, scipy), overall and per segment; the loading rules
(origin, isolation of a broken plugin, collisions) are checked end to end.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from sklearn.calibration import calibration_curve
from sklearn.metrics import confusion_matrix

from tests.plugin_env import (
    EXAMPLE,
    active,
    broken_site,
    collide_example_site,
    collide_site,
    example_plugin,
    example_site,
    run_cli,
    write_dist,
)

__all__ = ["broken_site", "collide_example_site", "collide_site", "example_plugin",
           "example_site"]  # fixtures


# --------------------------------------------------------------------------- data and helpers

def binary_data(n: int = 400, seed: int = 7) -> pl.DataFrame:
    """Scores on a 0.01 grid (many exactly on bin edges), miscalibrated labels, weights, a
    segment column."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(size=n), 2)
    y = (rng.uniform(size=n) < p**1.3).astype(int)
    return pl.DataFrame({
        "id": np.arange(n), "label": y, "score": p,
        "w": rng.integers(0, 4, size=n).astype(float),
        "region": rng.choice(["north", "south", "west"], size=n),
    })


def ref_hl(y: np.ndarray, p: np.ndarray, n_bins: int) -> float:
    """The Hosmer–Lemeshow H statistic from scikit-learn's per-bin means (calibration_curve,
    uniform strategy): Σ n_b (ȳ_b − p̄_b)² / (p̄_b (1 − p̄_b)), a bin with p̄_b of 0 or 1 and
    ȳ_b = p̄_b counting 0."""
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy="uniform")
    counts = np.bincount(np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], p),
                         minlength=n_bins)
    counts = counts[counts > 0]
    var = prob_pred * (1 - prob_pred)
    assert np.all((var > 0) | (prob_true == prob_pred))
    terms = np.where(var > 0, counts * (prob_true - prob_pred) ** 2 / np.where(var > 0, var, 1),
                     0.0)
    return float(terms.sum())


def ref_profit(y: np.ndarray, p: np.ndarray, w: np.ndarray, t: float, benefit: float,
               cost: float) -> float:
    _tn, fp, _fn, tp = confusion_matrix(y, (p >= t).astype(int), labels=[0, 1],
                                      sample_weight=w).ravel()
    return float((benefit * tp - cost * (tp + fp)) / w.sum())


def write_run(tmp: Path, df: pl.DataFrame, metrics: list[object], **extra: object) -> Path:
    """A one-file config over ``df`` (written as Parquet) in ``tmp``."""
    df.write_parquet(tmp / "data.parquet")
    cfg = {"task": extra.pop("task", "binary"), "predictions": "data.parquet",
           "metrics": metrics, **extra}
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def values(stdout: str, segments: bool = False) -> dict[str, object]:
    report = json.loads(stdout)
    if segments:
        return {(tuple(s["key"].values()), m["id"]): m["value"]  # type: ignore[misc]
                for s in report["segments"] for m in s["metrics"]}
    return {m["id"]: m["value"] for m in report["metrics"]}


# --------------------------------------------------------------------------- the package

def test_the_example_is_a_real_package_with_an_entry_point(example_site):
    dist_info = next(example_site.glob("evalcli_plugin_example-*.dist-info"))
    assert "[evalcli.metrics]\nexample = evalcli_plugin_example" in \
        (dist_info / "entry_points.txt").read_text()
    assert (EXAMPLE / "pyproject.toml").is_file()
    assert not (EXAMPLE / "build").exists()  # building left the fixture clean


def test_installed_plugin_registers_through_the_same_door(example_plugin):
    from evalcli.metrics.registry import get_registry

    reg = get_registry()
    hl = reg.get("binary", "hl")
    assert hl.name == "hosmer_lemeshow"
    assert hl.origin == "plugin 'example' (evalcli-plugin-example 0.1.0)"
    assert reg.get("regression", "within_tolerance").origin == hl.origin
    assert reg.get("binary", "auroc").origin == "built-in"
    assert reg.get("binary", "ece").origin == "built-in"  # the built-in ece, not a plugin's
    assert reg.broken == []


def test_without_the_plugin_its_metrics_are_unknown():
    from evalcli.errors import MetricError
    from evalcli.metrics.registry import get_registry, reset_registry

    reset_registry()
    with pytest.raises(MetricError, match="unknown binary metric 'hosmer_lemeshow'"):
        get_registry().get("binary", "hosmer_lemeshow")


# --------------------------------------------------------------------------- values vs references

@pytest.mark.parametrize("n_bins", [1, 3, 7, 10, 15, 100])
def test_hosmer_lemeshow_matches_scikit_learn_calibration_curve(example_plugin, cli, tmp_path,
                                                                n_bins):
    df = binary_data()
    r = cli("run", str(write_run(tmp_path, df, [{"metric": "hl", "n_bins": n_bins}])),
            "--format", "json")
    assert r.exit_code == 0, r.stderr
    got = values(r.stdout)["hosmer_lemeshow" if n_bins == 10 else
                           f"hosmer_lemeshow[n_bins={n_bins}]"]
    expected = ref_hl(df["label"].to_numpy(), df["score"].to_numpy(), n_bins)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_hosmer_lemeshow_hand_worked_the_edge_convention_and_the_p_value(example_plugin, cli,
                                                                           tmp_path):
    from scipy.stats import chi2

    # bins [0, .5] and (.5, 1]: E = 0.55, O = 1 of 3 rows; E = 2.35, O = 2 of 3 rows
    df = pl.DataFrame({"label": [0, 0, 1, 1, 1, 0], "score": [0.1, 0.2, 0.25, 0.8, 0.95, 0.6]})
    r = cli("run", str(write_run(tmp_path, df, [{"metric": "hl", "n_bins": 2}])),
            "--format", "json")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)["metrics"][0]
    h = (1 - 0.55) ** 2 / (0.55 * (1 - 0.55 / 3)) + (2 - 2.35) ** 2 / (2.35 * (1 - 2.35 / 3))
    assert report["value"] == pytest.approx(h, rel=1e-12)
    assert report["details"] == {"bins_used": 2, "df": 0, "p_value": None}
    # a score on an edge falls in the lower bin, as scikit-learn's calibration_curve
    edge = pl.DataFrame({"label": [1, 0, 1], "score": [0.5, 0.6, 0.2]})
    r = cli("run", str(write_run(tmp_path, edge, [{"metric": "hl", "n_bins": 2}])),
            "--format", "json")
    want = ref_hl(np.array([1, 0, 1]), np.array([0.5, 0.6, 0.2]), 2)
    assert values(r.stdout)["hosmer_lemeshow[n_bins=2]"] == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(2 * 0.65 ** 2 / (0.35 * 0.65) + 0.6 / 0.4)
    # the p-value: the χ² tail with (non-empty bins − 2) degrees of freedom
    big = binary_data(seed=5)
    r = cli("run", str(write_run(tmp_path, big, ["hosmer_lemeshow"])), "--format", "json")
    m = json.loads(r.stdout)["metrics"][0]
    assert m["details"]["df"] == 8
    assert m["details"]["p_value"] == pytest.approx(chi2.sf(m["value"], 8), rel=1e-9)


def test_hosmer_lemeshow_undefined_when_a_certain_bin_is_wrong(example_plugin, cli, tmp_path):
    df = pl.DataFrame({"label": [0, 1, 1], "score": [0.2, 0.0, 0.9]})
    r = cli("run", str(write_run(tmp_path, df, ["hl"])), "--format", "json")
    m = json.loads(r.stdout)["metrics"][0]
    assert m["value"] is None and "an infinite term" in m["notes"][0]


def test_hosmer_lemeshow_weights_equal_repeated_rows(example_plugin, cli, tmp_path):
    df = binary_data(n=200, seed=3)
    r = cli("run", str(write_run(tmp_path, df, ["hl"], columns={"weight": "w"})),
            "--format", "json")
    assert r.exit_code == 0, r.stderr
    reps = df["w"].cast(pl.Int64).to_numpy()
    y = np.repeat(df["label"].to_numpy(), reps)
    p = np.repeat(df["score"].to_numpy(), reps)
    assert values(r.stdout)["hosmer_lemeshow"] == pytest.approx(ref_hl(y, p, 10), rel=1e-9)


@pytest.mark.parametrize(("t", "benefit", "cost"), [(0.5, 10.0, 2.0), (0.3, 1.0, 0.0),
                                                    (0.0, 5.0, 1.0), (1.01, 5.0, 1.0)])
def test_expected_profit_matches_the_confusion_matrix(example_plugin, cli, tmp_path, t,
                                                      benefit, cost):
    df = binary_data(seed=11)
    entry = {"metric": "profit", "threshold": t, "benefit": benefit, "cost": cost}
    r = cli("run", str(write_run(tmp_path, df, [entry], columns={"weight": "w"})),
            "--format", "json")
    assert r.exit_code == 0, r.stderr
    (m,) = json.loads(r.stdout)["metrics"]
    assert m["metric"] == "expected_profit"
    assert m["params"] == {"threshold": t, "benefit": benefit, "cost": cost}
    y, p, w = (df[c].to_numpy() for c in ("label", "score", "w"))
    assert m["value"] == pytest.approx(ref_profit(y, p, w, t, benefit, cost), abs=1e-12)


def test_entries_differing_only_in_value_parameters_share_one_statistic(example_plugin):
    from evalcli.metrics.base import Context
    from evalcli.metrics.registry import get_registry

    m = get_registry().get("binary", "expected_profit")
    ctx = Context("binary", frozenset({"label", "score"}))
    key = [m.stats({"threshold": 0.5, "benefit": b, "cost": 1.0}, ctx)[0].key for b in (1, 9)]
    assert key[0] == key[1]
    assert m.stats({"threshold": 0.4, "benefit": 1, "cost": 1.0}, ctx)[0].key != key[0]


@pytest.mark.parametrize(("tol", "relative"), [(0.5, False), (0.0, False), (0.1, True)])
def test_within_tolerance_matches_numpy(example_plugin, cli, tmp_path, tol, relative):
    rng = np.random.default_rng(5)
    y = np.round(rng.normal(3, 2, 300), 1)
    yhat = np.where(rng.uniform(size=300) < 0.2, y, np.round(y + rng.normal(0, 0.6, 300), 1))
    w = rng.uniform(0, 2, 300)
    df = pl.DataFrame({"label": y, "prediction": yhat, "w": w})
    entry = {"metric": "within_tolerance", "tolerance": tol, "relative": relative}
    r = cli("run", str(write_run(tmp_path, df, [entry], task="regression",
                                 columns={"weight": "w"})), "--format", "json")
    assert r.exit_code == 0, r.stderr
    bound = tol * np.abs(y) if relative else tol
    expected = np.average(np.abs(y - yhat) <= bound, weights=w)
    assert next(iter(values(r.stdout).values())) == pytest.approx(expected, abs=1e-12)


def test_plugin_metrics_run_per_segment_like_built_ins(example_plugin, cli, tmp_path):
    df = binary_data(seed=21)
    entry = {"metric": "expected_profit", "benefit": 4.0, "cost": 1.0}
    r = cli("run", str(write_run(tmp_path, df, ["hl", entry, "auroc"], group_by=["region"],
                                 columns={"weight": "w"})), "--format", "json")
    assert r.exit_code == 0, r.stderr
    got = values(r.stdout, segments=True)
    seen = set()
    for (region,), part in df.group_by("region"):
        reps = part["w"].cast(pl.Int64).to_numpy()
        y, p, w = (part[c].to_numpy() for c in ("label", "score", "w"))
        assert got[((region,), "hosmer_lemeshow")] == pytest.approx(
            ref_hl(np.repeat(y, reps), np.repeat(p, reps), 10), rel=1e-9)
        assert got[((region,), "expected_profit[benefit=4,cost=1]")] == pytest.approx(
            ref_profit(y, p, w, 0.5, 4.0, 1.0), abs=1e-12)
        seen.add(region)
    assert seen == {"north", "south", "west"}


# --------------------------------------------------------------------------- the CLI shows them

def test_metrics_lists_the_origin_of_each_metric(example_plugin, cli):
    r = cli("metrics", "--family", "binary")
    assert r.exit_code == 0, r.stderr
    lines = {line.split()[0]: line for line in r.stdout.splitlines() if line.strip()}
    assert "'example' (evalcli-plugin-example 0.1.0)" in lines["hosmer_lemeshow"]
    assert "built-in" in lines["ece"]
    assert "built-in" in lines["auroc"]
    assert "benefit=required" in lines["expected_profit"]
    assert r.stderr == ""


def test_metrics_show_renders_a_plugin_like_a_built_in(example_plugin, cli):
    r = cli("metrics", "show", "profit")
    assert r.exit_code == 0, r.stderr
    out = " ".join(r.stdout.split())
    for text in ("expected_profit (binary)", "formula: (benefit · TP − cost · (TP + FP))",
                 "aliases: profit", "better: higher", "needs: label and score",
                 "benefit float required", "cost float required >= 0", "threshold float 0.5",
                 "origin: plugin 'example' (evalcli-plugin-example 0.1.0)"):
        assert text in out
    r = cli("metrics", "show", "hl@3")
    assert "n_bins int 10 >= 1; <= 10000" in " ".join(r.stdout.split())


def test_a_missing_required_parameter_is_a_usage_error(example_plugin, cli, tmp_path):
    r = cli("run", str(write_run(tmp_path, binary_data(), ["expected_profit"])))
    assert r.exit_code == 2
    assert "parameter 'benefit'" in r.stderr and "may not be empty" in r.stderr


def test_a_plugins_row_check_runs_in_the_same_pass(example_plugin, cli, tmp_path):
    df = pl.DataFrame({"label": [0, 1, 1], "score": [0.2, 1.7, 0.9]})
    r = cli("run", str(write_run(tmp_path, df, ["hl"])))
    assert r.exit_code == 2
    assert "hosmer_lemeshow needs probabilities" in r.stderr and "score=1.7" in r.stderr


def test_a_plugin_gate_fails_the_run(example_plugin, cli, tmp_path):
    r = cli("run", str(write_run(tmp_path, binary_data(), [{"metric": "hl", "max": 0.001}])))
    assert r.exit_code == 1
    assert "hosmer_lemeshow" in r.stdout


# --------------------------------------------------------------------------- a fresh process

def test_end_to_end_in_a_fresh_process(example_site, tmp_path):
    df = binary_data(seed=2)
    cfg = write_run(tmp_path, df, [{"metric": "hl", "n_bins": 5, "max": 50}, "auroc"])
    r = run_cli("run", str(cfg), "--format", "json", sites=(example_site,))
    assert r.returncode == 0, r.stderr
    assert values(r.stdout)["hosmer_lemeshow[n_bins=5]"] == pytest.approx(
        ref_hl(df["label"].to_numpy(), df["score"].to_numpy(), 5), rel=1e-9)
    r = run_cli("run", str(cfg), "--format", "json")  # not installed: a usage error, no gate
    assert r.returncode == 2
    assert "unknown binary metric 'hl'" in r.stderr and "Traceback" not in r.stderr


# --------------------------------------------------------------------------- a broken plugin

def test_a_broken_plugin_the_run_does_not_use_is_a_warning(example_site, broken_site, cli,
                                                             tmp_path):
    cfg = write_run(tmp_path, binary_data(), ["auroc", "hl"])
    with active(example_site, broken_site):
        r = cli("run", str(cfg))
    assert r.exit_code == 0, r.stderr
    assert "auroc" in r.stdout and "hosmer_lemeshow" in r.stdout
    assert ("warning: plugin 'broken' (evalcli-plugin-broken 0.1.0) failed to load: "
            "ModuleNotFoundError: No module named 'evalcli_missing_dependency_for_tests'"
            in " ".join(r.stderr.split()))


def test_a_broken_plugin_whose_metric_the_run_uses_stops_it(broken_site, cli, tmp_path):
    cfg = write_run(tmp_path, binary_data(), ["auroc", {"metric": "fairness_gap", "max": 0.1}])
    with active(broken_site):
        r = cli("run", str(cfg))
    assert r.exit_code == 2
    err = " ".join(r.stderr.split())
    assert "unknown binary metric 'fairness_gap'" in err
    assert "plugin 'broken' (evalcli-plugin-broken 0.1.0) failed to load" in err
    assert "No module named 'evalcli_missing_dependency_for_tests'" in err
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_a_broken_plugin_in_a_fresh_process(broken_site, tmp_path):
    used = write_run(tmp_path, binary_data(), [{"metric": "fairness_gap", "max": 0.1}])
    r = run_cli("run", str(used), sites=(broken_site,))
    assert r.returncode == 2 and "failed to load" in r.stderr
    r = run_cli("metrics", sites=(broken_site,))
    assert r.returncode == 0 and "auroc" in r.stdout
    assert "warning: plugin 'broken'" in r.stderr


def test_metrics_lists_the_rest_and_warns_about_a_broken_plugin(broken_site, cli):
    with active(broken_site):
        r = cli("metrics")
        assert r.exit_code == 0
        assert "auroc" in r.stdout
        assert "warning: plugin 'broken'" in r.stderr
        r = cli("metrics", "show", "fairness_gap")
    assert r.exit_code == 2
    assert "An installed plugin failed to load, and it may be one of its metrics: plugin " \
        "'broken'" in " ".join(r.stderr.split())


@pytest.mark.parametrize(("source", "error"), [
    ("raise SystemExit(0)", "SystemExit: 0"),
    ("METRICS = [42]", "METRICS holds 42, not an evalcli Metric"),
    ("from evalcli.plugin import mean_metric\nimport polars as pl\n"
     "METRICS = [mean_metric('Gap', 'binary', summary='', formula='', direction='higher',"
     " needs=['label'], row=lambda p, c: pl.col('label'))]",
     "metric name 'Gap' is not valid"),
    ("from evalcli.plugin import mean_metric\nimport polars as pl\n"
     "METRICS = [mean_metric('gap', 'fairness', summary='', formula='', direction='higher',"
     " needs=['label'], row=lambda p, c: pl.col('label'))]",
     "declares family 'fairness', which no task provides"),
    ("X = 1", "defines no METRICS list"),
])
def test_a_plugin_that_cannot_be_registered_is_isolated(tmp_path, cli, source, error):
    site = write_dist(tmp_path / "site", "evalcli-plugin-bad", {"evalcli_plugin_bad": source},
                      {"bad": "evalcli_plugin_bad"})
    cfg = write_run(tmp_path, binary_data(), ["auroc"])
    with active(site):
        from evalcli.metrics.registry import get_registry

        (broken,) = get_registry().broken
        r = cli("run", str(cfg))
    assert broken.name == "bad" and error in broken.error
    assert r.exit_code == 0, r.stderr  # the process survived, auroc ran
    assert "warning: plugin 'bad'" in r.stderr


def test_a_plugin_that_fails_at_run_time_is_named(tmp_path, cli):
    source = """
        from evalcli.plugin import sum_metric
        import polars as pl

        METRICS = [sum_metric(
            "fragile", "binary", summary="divides by zero", formula="1/0", direction="higher",
            needs=["label"], sums=lambda p, c: {"n": pl.col("weight")},
            value=lambda s, p: 1 / 0)]
    """
    site = write_dist(tmp_path / "site", "evalcli-plugin-fragile",
                      {"evalcli_plugin_fragile": source}, {"fragile": "evalcli_plugin_fragile"})
    with active(site):
        r = cli("run", str(write_run(tmp_path, binary_data(), ["fragile", "auroc"])))
    assert r.exit_code == 2
    err = " ".join(r.stderr.split())
    assert ("metric 'fragile' from plugin 'fragile' (evalcli-plugin-fragile 0.1.0) failed in "
            "its value function: ZeroDivisionError: division by zero") in err
    assert "Traceback" not in r.stderr


# --------------------------------------------------------------------------- collisions

def test_a_collision_with_a_built_in_names_both_and_fails(collide_site, cli, tmp_path):
    cfg = write_run(tmp_path, binary_data(), ["accuracy"])
    with active(collide_site):
        r = cli("run", str(cfg))
        listing = cli("metrics")
    for out in (r, listing):
        assert out.exit_code == 2
        err = " ".join(out.stderr.split())
        assert ("metric name 'auroc' (binary) from plugin 'collide' (evalcli-plugin-collide "
                "0.1.0) collides with 'auroc' from built-in") in err
        assert "Traceback" not in out.stderr


def test_help_still_works_with_a_colliding_plugin(collide_site, tmp_path):
    for args in (["--help"], ["run", "--help"], ["--version"]):
        r = run_cli(*args, sites=(collide_site,))
        assert r.returncode == 0, r.stderr
    r = run_cli("run", str(write_run(tmp_path, binary_data(), ["accuracy"])),
                sites=(collide_site,))
    assert r.returncode == 2 and "collides with 'auroc' from built-in" in r.stderr


def test_a_collision_between_two_plugins_names_both(example_site, collide_example_site, cli,
                                                      tmp_path):
    with active(example_site, collide_example_site):
        r = cli("run", str(write_run(tmp_path, binary_data(), ["auroc"])))
    assert r.exit_code == 2
    err = " ".join(r.stderr.split())
    assert "metric name 'hosmer_lemeshow' (binary)" in err
    assert "plugin 'calibration' (evalcli-plugin-calibration 0.1.0)" in err
    assert "plugin 'example' (evalcli-plugin-example 0.1.0)" in err


def test_registration_is_all_or_nothing():
    from evalcli.errors import PluginError
    from evalcli.metrics.registry import builtin_registry
    from evalcli.plugin import mean_metric

    reg = builtin_registry()
    before = dict(reg.metrics), dict(reg.aliases)

    def m(name: str, aliases: tuple[str, ...] = ()) -> object:
        return mean_metric(name, "binary", summary="", formula="", direction="higher",
                           needs=["label"], row=lambda p, c: pl.col("label"), aliases=aliases)

    for batch, clash in (([m("fine"), m("roc_auc")], "'roc_auc'"),       # alias of auroc
                         ([m("fine", ("twin",)), m("twin")], "'twin'"),   # within one plugin
                         ([m("fine"), m("fine")], "'fine'")):
        with pytest.raises(PluginError, match=f"metric name {clash}"):
            reg.register_all(batch, "plugin file x.py")  # type: ignore[arg-type]
        assert (reg.metrics, reg.aliases) == before


# --------------------------------------------------------------------------- local plugin files

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_a_local_plugin_file_named_in_the_config(cli):
    r = cli("run", str(EXAMPLES / "local_plugin" / "release-gate.yaml"), "--format", "json")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    truth = pl.read_csv(EXAMPLES.parent / "sample_data" / "binary_truth.csv")
    preds = pl.read_parquet(EXAMPLES.parent / "sample_data" / "binary_predictions.parquet")
    df = truth.join(preds, on="id")
    y, p = df["label"].to_numpy(), df["score"].to_numpy()
    _tn, fp, _fn, tp = confusion_matrix(y, (p >= 0.2).astype(int)).ravel()
    expected = tp / len(y) - fp / len(y) * 0.2 / 0.8  # Vickers & Elkin (2006)
    (nb,) = [m for m in report["metrics"] if m["metric"] == "net_benefit"]
    assert nb["value"] == pytest.approx(expected, abs=1e-12) and nb["passed"] is True
    r = cli("metrics", "show", "net_benefit", "--plugin",
            str(EXAMPLES / "local_plugin" / "my_metrics.py"))
    assert r.exit_code == 0 and "origin: plugin file" in r.stdout


def test_a_local_plugin_does_not_leak_into_other_runs(cli, tmp_path):
    from evalcli.metrics.registry import get_registry, reset_registry

    reset_registry()
    assert cli("run", str(EXAMPLES / "local_plugin" / "release-gate.yaml")).exit_code == 0
    assert "net_benefit" not in get_registry().names("binary")


@pytest.mark.parametrize(("source", "error"), [
    ("import evalcli_missing_dependency_for_tests\n", "failed to import: ModuleNotFoundError"),
    ("raise SystemExit(0)\n", "failed to import: SystemExit: 0"),
    ("from evalcli.plugin import mean_metric\nimport polars as pl\n"
     "METRICS = [mean_metric('log_loss', 'binary', summary='', formula='', direction='lower',"
     " needs=['label'], row=lambda p, c: pl.col('label'))]",
     "metric name 'log_loss' (binary) from plugin file"),
    (None, "does not exist"),
])
def test_a_local_plugin_that_fails_stops_the_run(cli, tmp_path, source, error):
    if source is not None:
        (tmp_path / "team_metrics.py").write_text(source, encoding="utf-8")
    cfg = write_run(tmp_path, binary_data(), ["auroc"], plugins=["team_metrics.py"])
    r = cli("run", str(cfg))
    assert r.exit_code == 2
    err = " ".join(r.stderr.split())
    assert error in err and "team_metrics.py" in err and "Traceback" not in r.stderr


# --------------------------------------------------------------------------- the docs' code runs

def test_the_walkthrough_in_docs_plugins_runs(tmp_path):
    import evalcli

    doc = (Path(__file__).resolve().parent.parent / "docs" / "plugins.md").read_text()
    section = doc.split("## The easy way", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "my_metrics.py").write_text(code, encoding="utf-8")
    df = pl.DataFrame({"label": [1, 0, 1, 0], "score": [0.9, 0.8, 0.3, 0.1]})
    res = evalcli.evaluate(
        {"task": "binary", "plugins": [str(tmp_path / "my_metrics.py")],
         "metrics": [{"metric": "expected_profit", "benefit": 10, "cost": 1}]},
        predictions=df)
    # acting on scores >= 0.5: one positive, one negative: (10·1 − 1·2) / 4 rows
    assert res.values() == {"expected_profit[benefit=10,cost=1]": 2.0}
    assert res.metric("expected_profit[benefit=10,cost=1]").details == {"total": 8.0}


# --------------------------------------------------------------------------- tasks and engines

COUNTING_TASK = '''
import polars as pl
from evalcli.metrics.task import Role, Task
from evalcli.plugin import mean_metric

TASKS = [Task("counting", "a count target and a predicted count",
              roles=(Role("label", "true count", True, numeric=True),
                     Role("prediction", "predicted count", True, numeric=True)))]
METRICS = [mean_metric(
    "exact_count", "counting", summary="share of exact counts", formula="Σ w·[y = ŷ] / Σ w",
    direction="higher", needs=["label", "prediction"],
    row=lambda p, c: pl.col("label") == pl.col("prediction"))]
'''


def test_a_plugin_can_bring_its_own_task(cli, tmp_path):
    (tmp_path / "counting.py").write_text(COUNTING_TASK, encoding="utf-8")
    df = pl.DataFrame({"label": [1, 2, 3, 4], "prediction": [1, 2, 0, 4],
                       "w": [1.0, 1.0, 2.0, 0.5]})
    cfg = write_run(tmp_path, df, ["exact_count"], task="counting", plugins=["counting.py"],
                    columns={"weight": "w"})
    r = cli("run", str(cfg), "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert values(r.stdout) == {"exact_count": pytest.approx(2.5 / 4.5)}


def test_a_task_collision_names_both_sources(cli, tmp_path):
    (tmp_path / "binary_again.py").write_text(
        COUNTING_TASK.replace('Task("counting"', 'Task("binary"'), encoding="utf-8")
    r = cli("run", str(write_run(tmp_path, binary_data(), ["auroc"], plugins=["binary_again.py"])))
    assert r.exit_code == 2
    assert "task 'binary' from plugin file" in r.stderr
    assert "collides with task 'binary' from built-in" in " ".join(r.stderr.split())


def test_a_plugin_metric_gives_the_same_values_on_the_streaming_engine(example_plugin, tmp_path):
    import evalcli

    df = binary_data(seed=8)
    cfg = {"task": "binary", "metrics": ["hl", {"metric": "profit", "benefit": 3, "cost": 1}],
           "group_by": ["region"], "columns": {"weight": "w"}}
    runs = [evalcli.evaluate({**cfg, "engine": e}, predictions=df).to_dict()
            for e in ("polars", "streaming")]
    assert runs[1]["engine"] == "streaming"
    for a, b in zip(runs[0]["segments"], runs[1]["segments"], strict=True):
        for ma, mb in zip(a["metrics"], b["metrics"], strict=True):
            assert ma["value"] == pytest.approx(mb["value"], rel=1e-12)
