"""Several systems on one truth (issue 13 §2) and changes with intervals (§3).

References: scipy.stats.ttest_rel and ranx's ``compare`` (Student's paired t-test) on the same
per-query values; statsmodels' ``multipletests`` for the correction; a paired bootstrap written
here from the stored replicates; the decisions of confident change gates on hand-made
intervals.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from evalcli.decide.diff import check_change, compare_values
from evalcli.result import ChangeGate
from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def user_error(r: CliResult, *patterns: str) -> None:
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    flat = " ".join(r.stderr.split())
    for p in patterns:
        assert re.search(p, flat), f"{p!r} not in {flat!r}"


@pytest.fixture
def ranking(tmp_path: Path) -> dict[str, Path]:
    """A truth of 80 queries and two systems: b is a noisier copy of a."""
    rng = np.random.default_rng(3)
    q, items = 80, 20
    truth = pl.DataFrame({
        "query": np.repeat([f"q{i}" for i in range(q)], items),
        "item": np.tile([f"d{j}" for j in range(items)], q),
        "relevance": rng.integers(0, 3, q * items),
    })
    signal = truth["relevance"].to_numpy().astype(float)
    a = truth.select("query", "item").with_columns(
        score=pl.Series(signal + rng.normal(0, 1.0, q * items)))
    b = truth.select("query", "item").with_columns(
        score=pl.Series(signal + rng.normal(0, 2.5, q * items)))
    out = {"truth": tmp_path / "truth.parquet", "a": tmp_path / "a.parquet",
           "b": tmp_path / "b.parquet"}
    truth.write_parquet(out["truth"])
    a.write_parquet(out["a"])
    b.write_parquet(out["b"])
    return out


@pytest.fixture
def binary(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(5)
    n = 600
    y = rng.integers(0, 2, n)
    truth = pl.DataFrame({"id": range(n), "label": y})
    a = pl.DataFrame({"id": range(n), "score": np.clip(0.5 * y + rng.uniform(0, 0.5, n), 0, 1)})
    b = pl.DataFrame({"id": range(n), "score": np.clip(0.25 * y + rng.uniform(0, 0.75, n), 0, 1)})
    out = {"truth": tmp_path / "truth.csv", "a": tmp_path / "a.csv", "b": tmp_path / "b.csv"}
    truth.write_csv(out["truth"])
    a.write_csv(out["a"])
    b.write_csv(out["b"])
    return out


def run_json(cli: Cli, config: Path, *args: str) -> dict[str, Any]:
    r = cli("run", str(config), "--format", "json", *args)
    assert r.exit_code in (0, 1), r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def write_config(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- ranking: paired t

def test_ranking_paired_t_equals_scipy_and_ranx(cli: Cli, ranking: dict[str, Path],
                                                tmp_path: Path) -> None:
    import ranx

    cfg = write_config(tmp_path / "c.yaml", f"""
task: ranking
predictions: {{a: {ranking['a']}, b: {ranking['b']}}}
truth: {ranking['truth']}
metrics: [ndcg@10, precision@5]
comparison: {{baseline: a, correction: holm}}
""")
    rep = run_json(cli, cfg)
    rows = {r["id"]: r for r in rep["comparison"]["results"]}
    # per-query values of each system, evaluated alone
    per = {}
    for name in ("a", "b"):
        one = write_config(tmp_path / f"{name}.yaml", f"""
task: ranking
predictions: {ranking[name]}
truth: {ranking['truth']}
metrics: [ndcg@10, precision@5]
""")
        out = tmp_path / f"{name}-pq.parquet"
        assert cli("run", str(one), "--per-query", str(out), "-f", "none").exit_code == 0
        per[name] = pl.read_parquet(out).sort("query")
    raw = []
    for id_ in ("ndcg@10", "precision@5"):
        a, b = per["a"][id_].to_numpy(), per["b"][id_].to_numpy()
        ref = stats.ttest_rel(b, a)
        assert rows[id_]["test"] == "paired-t"
        assert rows[id_]["p_value"] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
        assert rows[id_]["delta"] == pytest.approx(float(np.mean(b - a)), abs=1e-12)
        ci = stats.t.interval(0.95, len(a) - 1, loc=np.mean(b - a),
                              scale=stats.sem(b - a))
        assert rows[id_]["ci"]["low"] == pytest.approx(ci[0], abs=1e-12)
        assert rows[id_]["ci"]["high"] == pytest.approx(ci[1], abs=1e-12)
        assert rows[id_]["n"] == 80
        raw.append(ref.pvalue)
    holm = multipletests(raw, method="holm")[1]
    assert [rows[i]["adjusted_p_value"] for i in ("ndcg@10", "precision@5")] == \
        pytest.approx(list(holm), rel=1e-12)
    # ranx's compare with Student's t on the same runs and qrels
    t = pl.read_parquet(ranking["truth"])
    qrels = ranx.Qrels({q: {d: int(r) for d, r in zip(g["item"], g["relevance"], strict=True)}
                        for (q,), g in t.group_by("query")})
    runs = []
    for name in ("a", "b"):
        p = pl.read_parquet(ranking[name])
        runs.append(ranx.Run({q: {d: float(s) for d, s in zip(g["item"], g["score"],
                                                               strict=True)}
                              for (q,), g in p.group_by("query")}, name=name))
    report = ranx.compare(qrels, runs, metrics=["ndcg@10", "precision@5"], stat_test="student")
    for id_ in ("ndcg@10", "precision@5"):
        assert rep["systems"]["b"]["metrics"][0 if id_ == "ndcg@10" else 1]["value"] == \
            pytest.approx(report.results["b"][id_], abs=1e-12)
        assert rows[id_]["p_value"] == pytest.approx(
            report.comparisons[("a", "b")][id_]["p_value"], rel=1e-9)


def test_ranking_sign_flip_and_wilcoxon(cli: Cli, ranking: dict[str, Path],
                                        tmp_path: Path) -> None:
    for test, name in (("sign_flip", "sign-flip"), ("wilcoxon", "wilcoxon")):
        cfg = write_config(tmp_path / f"{test}.yaml", f"""
task: ranking
predictions: {{a: {ranking['a']}, b: {ranking['b']}}}
truth: {ranking['truth']}
metrics: [ndcg@10]
comparison: {{test: {test}}}
""")
        row = run_json(cli, cfg)["comparison"]["results"][0]
        assert row["test"].startswith(name)
        assert 0 < row["p_value"] < 0.05  # b is much noisier: ndcg@10 drops clearly
        assert row["change"] == "worse"


# --------------------------------------------------------------------------- binary: bootstrap

def test_binary_paired_bootstrap(cli: Cli, binary: dict[str, Path], tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "c.yaml", f"""
task: binary
predictions: {{a: {binary['a']}, b: {binary['b']}, same: {binary['a']}}}
truth: {binary['truth']}
metrics: [auroc, log_loss, accuracy]
""")
    rep = run_json(cli, cfg)
    assert list(rep["systems"]) == ["a", "b", "same"]
    rows = {(r["system"], r["id"]): r for r in rep["comparison"]["results"]}
    tests = {"auroc": "delong-paired", "log_loss": "bootstrap-paired",
             "accuracy": "mcnemar-chi2"}
    for id_ in ("auroc", "log_loss", "accuracy"):
        s = rows[("same", id_)]
        assert s["delta"] == 0.0 and s["p_value"] == 1.0 and s["change"] == \
            "no significant change"
        if id_ != "accuracy":  # (McNemar's interval adds 1/2 to each cell: not 0 wide)
            assert s["ci"]["low"] == 0.0 and s["ci"]["high"] == 0.0
        d = rows[("b", id_)]
        assert d["test"] == tests[id_]
        assert d["n"] == (1000 if id_ == "log_loss" else 600)
        assert d["ci"]["low"] <= d["delta"] <= d["ci"]["high"]
    assert rows[("b", "auroc")]["change"] == "worse"
    assert rows[("b", "log_loss")]["change"] == "worse"  # lower is better: delta > 0
    assert rows[("b", "log_loss")]["delta"] > 0
    # the systems' own values are their runs alone
    alone = run_json(cli, write_config(tmp_path / "b.yaml", f"""
task: binary
predictions: {binary['b']}
truth: {binary['truth']}
metrics: [auroc, log_loss, accuracy]
"""))
    assert [m["value"] for m in rep["systems"]["b"]["metrics"]] == \
        [m["value"] for m in alone["metrics"]]


def test_compare_vs_names_systems_by_file(cli: Cli, binary: dict[str, Path]) -> None:
    r = cli("compare", str(binary["a"]), str(binary["truth"]), "--vs", str(binary["b"]),
            "--vs", str(binary["a"]), "-m", "auroc", "-f", "json")
    assert r.exit_code == 0, r.stderr
    rep = json.loads(r.stdout)
    assert list(rep["systems"]) == ["a", "b", "a_2"]
    assert rep["comparison"]["baseline"] == "a"
    assert {x["system"] for x in rep["comparison"]["results"]} == {"b", "a_2"}


def test_system_change_gates(cli: Cli, binary: dict[str, Path], tmp_path: Path) -> None:
    base = f"""
task: binary
predictions: {{a: {binary['a']}, b: {binary['b']}}}
truth: {binary['truth']}
"""
    fail = write_config(tmp_path / "f.yaml", base + """
metrics: [{metric: auroc, max_drop: 0.01, confidence: 0.95}]
""")
    r = cli("run", str(fail), "-f", "json")
    assert r.exit_code == 1
    rep = json.loads(r.stdout)
    assert rep["passed"] is False and "significantly short" in rep["failures"][0]
    ok = write_config(tmp_path / "o.yaml", base + """
metrics: [{metric: auroc, max_drop: 0.5, require_confidence: 0.95}]
""")
    assert cli("run", str(ok), "-f", "none").exit_code == 0


def test_a_compared_systems_value_gate_shows_in_its_table(cli: Cli, binary: dict[str, Path],
                                                         tmp_path: Path) -> None:
    """A value gate (min:) holds for every system: the one a compared system fails shows as
    FAIL in that system's table (terminal, Markdown, HTML), not only in the failures."""
    config = write_config(tmp_path / "c.yaml", f"""
task: binary
predictions: {{a: {binary['a']}, b: {binary['b']}}}
truth: {binary['truth']}
metrics: [{{metric: auroc, min: 0.9}}]
""")
    rep = run_json(cli, config)
    values = {name: s["metrics"][0]["value"] for name, s in rep["systems"].items()} \
        if isinstance(rep.get("systems"), dict) else None
    assert rep["passed"] is False and any(f.startswith("b:") for f in rep["failures"])
    if values is not None:
        assert values["a"] >= 0.9 > values["b"]
    r = cli("run", str(config), "-f", "table")
    assert r.exit_code == 1
    b_table = r.stdout[r.stdout.index("systems compared with a"):]
    assert re.search(r"auroc\s.*FAIL", b_table), b_table
    md = cli("run", str(config), "-f", "markdown").stdout
    assert "(gate: **FAIL**)" in md[md.index("Systems compared with"):]
    html = cli("run", str(config), "-f", "html").stdout
    assert 'class="fail"' in html[html.index('id="systems"'):]


@pytest.mark.parametrize(("text", "pattern"), [
    ("predictions: {a: x.csv}\ncomparison: {baseline: a}\n", "name at least two systems"),
    ("predictions: {a: x.csv, b: y.csv}\ncomparison: {baseline: c}\n",
     "baseline 'c' is not one of the systems"),
    ("predictions: x.csv\nmetrics: [{metric: auroc, max_drop: 0.01}]\n", "compare systems"),
    ("predictions: {'a b': x.csv, b: y.csv}\n", "system name"),
    ("predictions: {pth: p.csv}\n", "unknown key 'predictions.pth'"),
])
def test_system_config_errors(cli: Cli, tmp_path: Path, text: str, pattern: str) -> None:
    cfg = write_config(tmp_path / "c.yaml", "task: binary\ntruth: t.csv\n" + text)
    user_error(cli("run", str(cfg)), pattern)


# --------------------------------------------------------------------------- stored replicates

def test_stored_replicates_pair_in_diff(cli: Cli, binary: dict[str, Path],
                                        tmp_path: Path) -> None:
    reports = {}
    for name in ("a", "b"):
        cfg = write_config(tmp_path / f"{name}.yaml", f"""
task: binary
predictions: {binary[name]}
truth: {binary['truth']}
metrics: [auroc, log_loss]
report: {{files: [{name}.json], statistics: true}}
""")
        assert cli("run", str(cfg), "-f", "none").exit_code == 0
        reports[name] = json.loads((tmp_path / f"{name}.json").read_text())
    sa, sb = reports["a"]["statistics"], reports["b"]["statistics"]
    assert sa["present"] == sb["present"] and len(sa["values"]["auroc"]) == 1000
    r = cli("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "-f", "json",
            "--max-drop", "0.01", "--confidence", "0.95")
    assert r.exit_code == 1
    d = {m["id"]: m for m in json.loads(r.stdout)["metrics"]}
    # the paired bootstrap by hand from the stored replicates
    diff = np.array(sb["values"]["auroc"]) - np.array(sa["values"]["auroc"])
    lo, hi = np.quantile(diff, [0.025, 0.975])
    assert d["auroc"]["test"] == "bootstrap-paired"
    assert d["auroc"]["ci"]["low"] == pytest.approx(lo, abs=1e-12)
    assert d["auroc"]["ci"]["high"] == pytest.approx(hi, abs=1e-12)
    extreme = min((diff <= 0).sum(), (diff >= 0).sum())
    assert d["auroc"]["p_value"] == pytest.approx(min(1.0, 2 * (1 + extreme) / 1001))
    # another seed: no pairing, the unpaired interval, said
    cfg = write_config(tmp_path / "c.yaml", f"""
task: binary
predictions: {binary['b']}
truth: {binary['truth']}
metrics: [auroc, log_loss]
uncertainty: {{seed: 7}}
report: {{files: [c.json], statistics: true}}
""")
    assert cli("run", str(cfg), "-f", "none").exit_code == 0
    r = cli("diff", str(tmp_path / "a.json"), str(tmp_path / "c.json"), "-f", "json")
    m = json.loads(r.stdout)["metrics"][0]
    assert m["test"] == "normal-unpaired" and "seed" in m["ci"]["note"]
    se = np.hypot(reports["a"]["metrics"][0]["std_error"],
                  json.loads((tmp_path / "c.json").read_text())["metrics"][0]["std_error"])
    assert m["ci"]["high"] - m["ci"]["low"] == pytest.approx(2 * 1.959963984540054 * se,
                                                             rel=1e-9)


# --------------------------------------------------------------------------- gate decisions

def _delta(b: float, c: float, lo: float, hi: float, direction: str = "higher") -> Any:
    d = compare_values("m", "m", direction, b, c)
    d.spread = lambda level: (lo, hi)
    return d


@pytest.mark.parametrize(("lo", "hi", "sure", "passed"), [
    (-0.05, -0.02, "confidence", False),   # significantly worse than a drop of 0.01
    (-0.05, 0.00, "confidence", True),     # maybe worse, not significantly
    (-0.05, 0.00, "require_confidence", False),  # non-inferiority not shown
    (-0.005, 0.03, "require_confidence", True),  # shown: the drop is at most 0.01
    (-0.01, 0.03, "require_confidence", True),   # the bound itself is allowed
])
def test_confident_change_gate(lo: float, hi: float, sure: str, passed: bool) -> None:
    gate = ChangeGate(max_drop=0.01, **{sure: 0.95})
    ok, why = check_change(_delta(0.80, 0.79, lo, hi), gate)
    assert ok is passed
    assert (why is None) is passed


def test_confident_change_gate_lower_is_better() -> None:
    # log loss 0.30 -> 0.33: gain -0.03; the change's interval [+0.02, +0.04] is a gain of
    # [-0.04, -0.02]: significantly worse than a drop of 0.01
    gate = ChangeGate(max_drop=0.01, confidence=0.95)
    ok, why = check_change(_delta(0.30, 0.33, 0.02, 0.04, "lower"), gate)
    assert not ok and "significantly short" in (why or "")
    ok, _ = check_change(_delta(0.30, 0.33, -0.005, 0.04, "lower"), gate)
    assert ok


def test_confident_change_gate_without_interval_fails() -> None:
    d = compare_values("m", "m", "higher", 0.8, 0.81)
    ok, why = check_change(d, ChangeGate(max_drop=0.01, confidence=0.95))
    assert not ok and "no interval" in (why or "")


def test_latex_table(cli: Cli, ranking: dict[str, Path], tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "c.yaml", f"""
task: ranking
predictions: {{base_run: {ranking['a']}, noisy: {ranking['b']}}}
truth: {ranking['truth']}
metrics: [ndcg@10, precision@5]
""")
    out = tmp_path / "t.tex"
    assert cli("run", str(cfg), "-o", str(out), "-f", "none").exit_code == 0
    text = out.read_text()
    lines = text.splitlines()
    assert lines[0] == r"\begin{tabular}{lrr}" and r"\end{tabular}" in lines
    assert r"system & ndcg@10 & precision@5 \\" in lines
    rep = run_json(cli, cfg)
    best = rep["systems"]["base_run"]["metrics"][0]["value"]
    assert rf"base\_run (baseline) & \textbf{{{best:.4f}}}" in text
    # noisy is significantly worse on ndcg@10: the double dagger
    assert next(ln for ln in lines if ln.startswith("noisy")).split(" & ")[1].endswith(
        r"$^{\ddagger}$")
    one = write_config(tmp_path / "one.yaml", f"""
task: ranking
predictions: {ranking['a']}
truth: {ranking['truth']}
metrics: [ndcg@10]
uncertainty: {{}}
""")
    assert cli("run", str(one), "-o", str(tmp_path / "one.tex"), "-f", "none").exit_code == 0
    row = (tmp_path / "one.tex").read_text().splitlines()[4]
    m = run_json(cli, one)["metrics"][0]
    assert row == (f"ndcg@10 & {m['value']:.4f} & [{m['ci']['low']:.4f}, "
                   f"{m['ci']['high']:.4f}] \\\\")



def test_binary_closed_form_paired_tests(cli: Cli, binary: dict[str, Path],
                                         tmp_path: Path) -> None:
    """McNemar's test (accuracy, recall, specificity) equals statsmodels' on the same rows;
    DeLong's paired test equals the array function checked against pROC."""
    from statsmodels.stats.contingency_tables import mcnemar

    from evalcli.uncertainty.paired import paired_delong_test

    cfg = write_config(tmp_path / "c.yaml", f"""
task: binary
predictions: {{a: {binary['a']}, b: {binary['b']}}}
truth: {binary['truth']}
metrics: [accuracy, recall, specificity, {{metric: accuracy, threshold: 0.6}}, auroc]
""")
    rows = {r["id"]: r for r in run_json(cli, cfg)["comparison"]["results"]}
    t = pl.read_csv(binary["truth"]).sort("id")
    sa = pl.read_csv(binary["a"]).sort("id")["score"].to_numpy()
    sb = pl.read_csv(binary["b"]).sort("id")["score"].to_numpy()
    y = t["label"].to_numpy()
    for id_, rows_of, thr in (("accuracy", None, 0.5), ("recall", 1, 0.5),
                              ("specificity", 0, 0.5), ("accuracy[threshold=0.6]", None, 0.6)):
        keep = np.ones(y.size, bool) if rows_of is None else y == rows_of
        ok_a, ok_b = ((sa >= thr) == y)[keep], ((sb >= thr) == y)[keep]
        table = [[int((ok_a & ok_b).sum()), int((ok_a & ~ok_b).sum())],
                 [int((~ok_a & ok_b).sum()), int((~ok_a & ~ok_b).sum())]]
        discordant = table[0][1] + table[1][0]
        ref = mcnemar(table, exact=discordant < 25, correction=False)
        got = rows[id_]
        assert got["test"] == ("mcnemar-exact" if discordant < 25 else "mcnemar-chi2")
        assert got["p_value"] == pytest.approx(ref.pvalue, rel=1e-9), id_
        assert got["n"] == int(keep.sum())
    ref_d = paired_delong_test(sa[y == 1], sa[y == 0], sb[y == 1], sb[y == 0])
    assert rows["auroc"]["test"] == "delong-paired"
    assert rows["auroc"]["p_value"] == pytest.approx(ref_d.p_value, rel=1e-12)
    assert rows["auroc"]["ci"]["low"] == pytest.approx(ref_d.interval.low, abs=1e-12)


# --------------------------------------------------------------------------- one alignment

def test_systems_share_one_pass(binary: dict[str, Path], tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """On the in-memory engine every system is joined to the truth read once, and the
    systems' statistics and their per-group statistics come from one collect_all (the paired
    tests' rows are read just before it, so that DeLong's sorts run beside it); each system's
    values and intervals are those of its run alone."""
    from evalcli.config import load_config
    from evalcli.engine import align, core
    from evalcli.runner import run_config

    calls: dict[str, list[Any]] = {"together": [], "systems": []}
    together, systems = core.partials_together, align.materialize_systems

    def spy_together(jobs: Any, more: Any = ()) -> Any:
        got = together(jobs, more)
        calls["together"].append((len(jobs), len(more), got is not None))
        return got

    def spy_systems(aligned: Any, how: str = "inner") -> Any:
        got = systems(aligned, how)
        calls["systems"].append([a.joined for a in got])
        return got

    monkeypatch.setattr(core, "partials_together", spy_together)
    monkeypatch.setattr("evalcli.engine.polars_engine.materialize_systems", spy_systems)
    cfg = write_config(tmp_path / "c.yaml", f"""
task: binary
predictions: {{a: {binary['a']}, b: {binary['b']}}}
truth: {binary['truth']}
metrics: [auroc, log_loss, accuracy]
uncertainty: {{method: bootstrap, replicates: 200}}
""")
    result = run_config(load_config(cfg))
    assert calls["systems"] == [[True, True]]
    assert calls["together"] == [(2, 0, True)]  # two systems (their paired rows: before)
    assert result.comparison is not None and result.systems is not None
    alone_cfg = write_config(tmp_path / "b.yaml", f"""
task: binary
predictions: {binary['b']}
truth: {binary['truth']}
metrics: [auroc, log_loss, accuracy]
uncertainty: {{method: bootstrap, replicates: 200}}
""")
    alone = run_config(load_config(alone_cfg))
    got = result.systems["b"].metrics
    assert [(m.value, m.ci) for m in got] == [(m.value, m.ci) for m in alone.metrics]


def test_each_systems_alignment_is_checked_with_its_file(cli: Cli, binary: dict[str, Path],
                                                          tmp_path: Path) -> None:
    """A system's duplicated keys or unmatched rows are its own error, naming its file,
    whichever system it is; with 'unmatched: drop' each system counts its own rows, and the
    paired tests pair the rows both systems have."""
    b = pl.read_csv(binary["b"])
    dup = tmp_path / "dup.csv"
    pl.concat([b, b.head(2)]).write_csv(dup)
    extra = tmp_path / "extra.csv"
    pl.concat([b, pl.DataFrame({"id": [10_000], "score": [0.5]})]).write_csv(extra)
    short = tmp_path / "short.csv"
    b.sample(fraction=1.0, shuffle=True, seed=1).filter(pl.col("id") >= 100).write_csv(short)

    def config(second: Path, more: str = "") -> Path:
        return write_config(tmp_path / "c.yaml", f"""
task: binary
predictions: {{a: {binary['a']}, b: {second}}}
truth: {binary['truth']}
metrics: [auroc, accuracy]
{more}""")

    user_error(cli("run", str(config(dup))), re.escape(str(dup)),
               r"2 duplicated key\(s\) in the predictions")
    user_error(cli("run", str(config(extra))), r"1 row\(s\) only in " + re.escape(str(extra)))
    from evalcli.config import load_config
    from evalcli.runner import run_config

    cfg = config(short, "alignment: {unmatched: drop}\n")
    systems = run_config(load_config(cfg)).systems
    assert systems is not None
    assert (systems["a"].alignment.matched, systems["a"].alignment.only_in_truth) == (600, 0)
    assert (systems["b"].alignment.matched, systems["b"].alignment.only_in_truth) == (500, 100)
    rep = run_json(cli, cfg)
    alone = run_json(cli, write_config(tmp_path / "s.yaml", f"""
task: binary
predictions: {short}
truth: {binary['truth']}
metrics: [auroc, accuracy]
alignment: {{unmatched: drop}}
"""))
    assert [m["value"] for m in rep["systems"]["b"]["metrics"]] == \
        [m["value"] for m in alone["metrics"]]
    rows = {r["id"]: r for r in rep["comparison"]["results"]}
    assert rows["auroc"]["test"] == "delong-paired" and rows["auroc"]["n"] == 500
    from evalcli.uncertainty.paired import paired_delong_test

    t = pl.read_csv(binary["truth"]).filter(pl.col("id") >= 100).sort("id")
    sa = pl.read_csv(binary["a"]).filter(pl.col("id") >= 100).sort("id")["score"].to_numpy()
    sb = pl.read_csv(short).sort("id")["score"].to_numpy()
    y = t["label"].to_numpy()
    ref = paired_delong_test(sa[y == 1], sa[y == 0], sb[y == 1], sb[y == 0])
    assert rows["auroc"]["p_value"] == pytest.approx(ref.p_value, rel=1e-12)
