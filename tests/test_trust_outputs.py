"""Issue 19 (trust): no silent wrong number, no lost file, no crash that reads as a failed gate.

Items 1-3 (values that were silently wrong), 7-9 (outputs that could overwrite an input, be
half-written, or crash), 13 (an internal error has its own exit code, never 1).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def assert_user_error(r: CliResult, *patterns: str) -> None:
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    assert r.stdout == "", r.stdout
    assert "Traceback" not in r.stderr
    assert r.stderr.count("error:") == 1, r.stderr
    flat = " ".join(r.stderr.split())
    for p in patterns:
        assert re.search(p, flat), f"{p!r} not in {flat!r}"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.6\n4,0.4\n")
    (tmp_path / "truth.csv").write_text("id,label\n1,1\n2,0\n3,0\n4,0\n")
    return tmp_path


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# --------------------------------------------------------------------------- 1. optional roles

def test_a_column_named_weight_is_not_used_unless_named(cli: Cli, files: Path) -> None:
    (files / "truth_w.csv").write_text("id,label,weight\n1,1,5\n2,0,1\n3,0,1\n4,0,2\n")
    args = ["-m", "accuracy", "-m", "log_loss", "--format", "json"]
    plain = json.loads(cli("compare", str(files / "preds.csv"), str(files / "truth.csv"),
                           *args).stdout)
    r = cli("compare", str(files / "preds.csv"), str(files / "truth_w.csv"), *args)
    assert r.exit_code == 0, r.stderr
    unnamed = json.loads(r.stdout)
    assert [m["value"] for m in unnamed["metrics"]] == [m["value"] for m in plain["metrics"]]
    assert "weight" not in unnamed["inputs"]["truth"]["columns"]
    # named, it weights: accuracy (1·5 + 1·1 + 0·1 + 1·2) / 9
    named = json.loads(cli("compare", str(files / "preds.csv"), str(files / "truth_w.csv"),
                           *args, "--weight", "weight").stdout)
    assert named["metrics"][0]["value"] == pytest.approx(8 / 9)


def test_compare_says_how_to_use_an_unused_weight_column(cli: Cli, files: Path) -> None:
    (files / "truth_w.csv").write_text("id,label,weight\n1,1,5\n2,0,1\n3,0,1\n4,0,2\n")
    r = cli("compare", str(files / "preds.csv"), str(files / "truth_w.csv"), "-m", "accuracy")
    assert r.exit_code == 0
    assert r.stderr.count("--weight weight") == 1, r.stderr


def test_the_same_rule_in_a_config_and_for_ranking(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "run.csv").write_text("query,item,score,weight\nq1,a,3,9\nq1,b,2,9\n"
                                      "q2,a,3,1\nq2,b,2,1\n")
    (tmp_path / "qrels.csv").write_text("query,item,relevance\nq1,b,1\nq2,a,1\n")
    base = "task: ranking\npredictions: run.csv\ntruth: qrels.csv\nmetrics: [mrr]\n"
    (tmp_path / "a.yaml").write_text(base)
    (tmp_path / "b.yaml").write_text(base + "columns: {weight: weight}\n")
    a = json.loads(cli("run", str(tmp_path / "a.yaml"), "-f", "json").stdout)
    b = json.loads(cli("run", str(tmp_path / "b.yaml"), "-f", "json").stdout)
    assert a["metrics"][0]["value"] == pytest.approx((0.5 + 1) / 2)
    assert b["metrics"][0]["value"] == pytest.approx((9 * 0.5 + 1) / 10)


# --------------------------------------------------------------------------- 2. positive

@pytest.mark.parametrize("where", ["flag", "config"])
def test_a_positive_class_that_matches_no_label_is_an_error(cli: Cli, tmp_path: Path,
                                                            where: str) -> None:
    (tmp_path / "p.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.6\n")
    (tmp_path / "t.csv").write_text("id,label\n1,yes\n2,no\n3,yes\n")
    if where == "flag":
        r = cli("compare", str(tmp_path / "p.csv"), str(tmp_path / "t.csv"), "--positive", "Yes")
    else:
        (tmp_path / "c.yaml").write_text("task: binary\npredictions: p.csv\ntruth: t.csv\n"
                                         "options: {positive: Yes}\n")
        r = cli("run", str(tmp_path / "c.yaml"))
    assert_user_error(r, r"t\.csv", r"positive 'Yes' matches no value of the label column",
                      r"'no', 'yes'")


def test_a_positive_class_only_the_predictions_have_is_accepted(cli: Cli,
                                                                tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("id,prediction\n1,yes\n2,no\n")
    (tmp_path / "t.csv").write_text("id,label\n1,no\n2,no\n")
    r = cli("compare", str(tmp_path / "p.csv"), str(tmp_path / "t.csv"), "--task", "binary",
            "--positive", "yes", "-m", "accuracy", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["metrics"][0]["value"] == 0.5


# --------------------------------------------------------------------------- 3. label params

@pytest.fixture
def classes(tmp_path: Path) -> Path:
    (tmp_path / "mc.csv").write_text("id,label,prediction,g\n1,cat,cat,a\n2,dog,cat,a\n"
                                     "3,bird,bird,b\n4,dog,dog,b\n")
    return tmp_path


def test_a_label_parameter_naming_no_class_is_an_error(cli: Cli, classes: Path) -> None:
    r = cli("compare", str(classes / "mc.csv"), "--task", "multiclass",
            "-m", "precision[label=cta]")
    assert_user_error(r, r"parameter 'label': 'cta' occurs in neither",
                      r"Did you mean 'cat'\?", r"'bird', 'cat', 'dog'")


def test_an_explicit_label_set_allows_an_absent_class(cli: Cli, classes: Path) -> None:
    (classes / "c.yaml").write_text(
        "task: multiclass\npredictions: mc.csv\n"
        "metrics: [{metric: recall, label: cow, labels: [cat, dog, bird, cow]}]\n")
    r = cli("run", str(classes / "c.yaml"), "-f", "json")
    assert r.exit_code == 0, r.stderr
    m = json.loads(r.stdout)["metrics"][0]
    assert m["value"] == 0.0 and "occurs in neither" in m["notes"][0]


def test_a_segment_lacking_the_class_keeps_the_zero_division_convention(
        cli: Cli, classes: Path) -> None:
    r = cli("compare", str(classes / "mc.csv"), "--task", "multiclass", "--group-by", "g",
            "-m", "recall[label=bird]", "-f", "json")
    assert r.exit_code == 0, r.stderr
    segs = {s["key"]["g"]: s["metrics"][0] for s in json.loads(r.stdout)["segments"]}
    assert segs["b"]["value"] == 1.0
    assert segs["a"]["value"] == 0.0 and "occurs in neither" in segs["a"]["notes"][0]


def test_multilabel_label_parameter_naming_no_label_is_an_error(cli: Cli,
                                                                tmp_path: Path) -> None:
    (tmp_path / "ml.jsonl").write_text(
        '{"id": 1, "label": ["sports", "news"], "prediction": ["sports"]}\n'
        '{"id": 2, "label": ["news"], "prediction": ["news", "tech"]}\n')
    r = cli("compare", str(tmp_path / "ml.jsonl"), "--task", "multilabel",
            "-m", "recall[label=sprots]")
    assert_user_error(r, r"'sprots' occurs in neither", r"Did you mean 'sports'\?")


# ------------------------------------------------------------------- 7. no input overwritten

@pytest.mark.parametrize("how", ["-o", "--per-query", "--curves"])
def test_no_output_may_be_an_input(cli: Cli, tmp_path: Path, how: str) -> None:
    (tmp_path / "run.csv").write_text("query,item,score\nq1,a,3\nq1,b,2\n")
    (tmp_path / "qrels.csv").write_text("query,item,relevance\nq1,b,1\n")
    (tmp_path / "p.csv").write_text("id,score\n1,0.9\n2,0.2\n")
    (tmp_path / "t.csv").write_text("id,label\n1,1\n2,0\n")
    before = snapshot(tmp_path)
    if how == "--per-query":
        r = cli("compare", str(tmp_path / "run.csv"), str(tmp_path / "qrels.csv"),
                "--per-query", str(tmp_path / "run.csv"))
        target = "run.csv"
    elif how == "--curves":
        (tmp_path / "roc.csv").write_text("id,score\n1,0.9\n2,0.2\n")
        before = snapshot(tmp_path)
        r = cli("compare", str(tmp_path / "roc.csv"), str(tmp_path / "t.csv"),
                "--curves", str(tmp_path))
        target = "roc.csv"
    else:
        os.symlink(tmp_path / "p.csv", tmp_path / "link.json")
        before = snapshot(tmp_path)
        r = cli("compare", str(tmp_path / "p.csv"), str(tmp_path / "t.csv"),
                "-o", str(tmp_path / "link.json"))
        target = "p.csv"
    assert_user_error(r, rf"would overwrite the run's input \S*{target}")
    assert snapshot(tmp_path) == before


def test_per_query_in_a_config_may_not_overwrite_the_truth(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "run.csv").write_text("query,item,score\nq1,a,3\nq1,b,2\n")
    (tmp_path / "qrels.csv").write_text("query,item,relevance\nq1,b,1\n")
    (tmp_path / "c.yaml").write_text("task: ranking\npredictions: run.csv\ntruth: qrels.csv\n"
                                     "per_query: ./sub/../qrels.csv\n")
    (tmp_path / "sub").mkdir()
    before = snapshot(tmp_path)
    assert_user_error(cli("run", str(tmp_path / "c.yaml")), r"qrels\.csv")
    assert snapshot(tmp_path) == before


def test_the_python_api_refuses_it_too(tmp_path: Path) -> None:
    from evalcli import evaluate
    from evalcli.errors import ConfigError

    (tmp_path / "run.csv").write_text("query,item,score\nq1,a,3\nq1,b,2\n")
    (tmp_path / "qrels.csv").write_text("query,item,relevance\nq1,b,1\n")
    with pytest.raises(ConfigError, match="would overwrite"):
        evaluate({"task": "ranking", "predictions": str(tmp_path / "run.csv"),
                  "truth": str(tmp_path / "qrels.csv"), "per_query": str(tmp_path / "run.csv")})
    assert (tmp_path / "run.csv").read_text().startswith("query,item,score")


# --------------------------------------------------------------------------- 8. all or none

def test_outputs_are_all_or_none(cli: Cli, files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure while writing the second of two reports leaves both old files as they were
    and no temporary file behind."""
    from evalcli.report import outputs

    (files / "a.json").write_text("old a")
    (files / "b.md").write_text("old b")
    real, calls = os.fsync, [0]

    def full_disk(fd: int) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise OSError(28, "No space left on device")
        real(fd)

    monkeypatch.setattr(outputs.os, "fsync", full_disk)
    r = cli("compare", str(files / "preds.csv"), str(files / "truth.csv"),
            "-o", str(files / "a.json"), "-o", str(files / "b.md"))
    assert_user_error(r, r"cannot write \S*b\.md: No space left on device")
    assert (files / "a.json").read_text() == "old a"
    assert (files / "b.md").read_text() == "old b"
    assert sorted(p.name for p in files.iterdir()) == ["a.json", "b.md", "preds.csv",
                                                      "truth.csv"]


def test_a_failed_rename_puts_every_old_file_back(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from evalcli.errors import ConfigError
    from evalcli.report import outputs

    for name in ("a.json", "b.md", "c.xml"):
        (tmp_path / name).write_text(f"old {name}")
    real = os.replace
    calls = [0]

    def flaky(src: str | Path, dst: str | Path) -> None:
        if str(dst).endswith("c.xml") and not calls[0]:  # one transient failure
            calls[0] += 1
            raise OSError(5, "Input/output error", str(dst))
        real(src, dst)

    monkeypatch.setattr(outputs.os, "replace", flaky)
    with pytest.raises(ConfigError, match=r"c\.xml"):
        outputs.commit([(tmp_path / n, lambda tmp, n=n: Path(tmp).write_text(f"new {n}"))
                        for n in ("a.json", "b.md", "c.xml")])
    assert calls[0] == 1
    assert snapshot(tmp_path) == {n: f"old {n}".encode() for n in ("a.json", "b.md", "c.xml")}


def test_ctrl_c_while_outputs_are_swapped_is_held_until_all_are_in_place(
        tmp_path: Path) -> None:
    from evalcli.report import outputs

    (tmp_path / "a.json").write_text("old")

    def write_and_interrupt(tmp: str) -> None:
        Path(tmp).write_text("new a")

    def second(tmp: str) -> None:
        Path(tmp).write_text("new b")

    real_swap = outputs._swap

    def swap_with_signal(staged: list[tuple[Path, str]]) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # arrives during the swap: deferred
        real_swap(staged)

    outputs._swap = swap_with_signal  # type: ignore[assignment]
    try:
        with pytest.raises(KeyboardInterrupt):
            outputs.commit([(tmp_path / "a.json", write_and_interrupt),
                            (tmp_path / "b.md", second)])
    finally:
        outputs._swap = real_swap  # type: ignore[assignment]
    assert (tmp_path / "a.json").read_text() == "new a"
    assert (tmp_path / "b.md").read_text() == "new b"


# --------------------------------------------------------------------------- 9. unwritable paths

@pytest.mark.parametrize("target", [
    "preds.csv/report.json",       # under a file
    "missing/report.json",         # a folder that does not exist
    "/proc/version.json",          # not writable, even by root
    "report.yaml",                 # no report format
])
def test_an_output_that_cannot_be_written_fails_before_computing(
        cli: Cli, files: Path, target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import evalcli.runner as runner

    def never(*a: object, **k: object) -> None:
        raise AssertionError("computed before checking the outputs")

    monkeypatch.setattr(runner, "prepare", never)
    monkeypatch.chdir(files)
    before = snapshot(files)
    r = cli("compare", "preds.csv", "truth.csv", "--id", "id", "--label", "label",
            "--score", "score", "--task", "binary", "-o", target)
    assert_user_error(r, re.escape(target))
    assert snapshot(files) == before


def test_a_report_path_that_is_a_folder(cli: Cli, files: Path) -> None:
    (files / "out.json").mkdir()
    (files / "c.yaml").write_text("task: binary\npredictions: preds.csv\ntruth: truth.csv\n"
                                  "report: [out.json]\n")
    assert_user_error(cli("run", str(files / "c.yaml")), r"out\.json: it is a folder")


def test_two_outputs_on_one_path(cli: Cli, files: Path) -> None:
    assert_user_error(cli("compare", str(files / "preds.csv"), str(files / "truth.csv"),
                          "-o", str(files / "r.json"), "-o", str(files / "." / "r.json")),
                      r"named twice")


def test_curves_folder_under_a_file(cli: Cli, files: Path) -> None:
    assert_user_error(cli("compare", str(files / "preds.csv"), str(files / "truth.csv"),
                          "--curves", str(files / "preds.csv" / "curves")),
                      r"preds\.csv is a file")


# --------------------------------------------------------------------------- 13. internal errors

def test_an_internal_error_exits_3_with_one_line_and_the_traceback_in_a_file(
        cli: Cli, files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import evalcli.engine.polars_engine as eng

    def boom(*a: object, **k: object) -> None:
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(eng, "compute", boom)
    r = cli("compare", str(files / "preds.csv"), str(files / "truth.csv"), "--gate", "auroc>=0.5")
    assert r.exit_code == 3, (r.exit_code, r.stderr)
    assert "Traceback" not in r.stderr
    assert "internal error in evalcli" in r.stderr and "a bug" in r.stderr
    m = re.search(r"the traceback is in (\S+)", r.stderr)
    assert m, r.stderr
    text = Path(m.group(1)).read_text()
    assert "Traceback" in text and "ZeroDivisionError: float division by zero" in text
    Path(m.group(1)).unlink()


def test_debug_prints_the_traceback(cli: Cli, files: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import evalcli.engine.polars_engine as eng

    monkeypatch.setattr(eng, "compute", lambda *a, **k: 1 / 0)
    r = cli("--debug", "compare", str(files / "preds.csv"), str(files / "truth.csv"))
    assert r.exit_code == 3
    assert "Traceback" in r.stderr and "ZeroDivisionError" in r.stderr
    m = re.search(r"the traceback is in (\S+)", r.stderr)
    if m:
        Path(m.group(1)).unlink()


def test_an_internal_error_in_a_real_process_never_exits_1(files: Path) -> None:
    """The console script's entry point, in a process of its own, with a bug injected."""
    code = ("import sys, evalcli.engine.polars_engine as e\n"
            "def boom(*a, **k):\n    raise RuntimeError('injected bug')\n"
            "e.compute = boom\n"
            "from evalcli.cli import main\n"
            f"sys.argv = ['evalcli', 'compare', {str(files / 'preds.csv')!r}, "
            f"{str(files / 'truth.csv')!r}, '--gate', 'auroc>=0.5']\n"
            "main()\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "NO_COLOR": "1"}, timeout=120)
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and "RuntimeError: injected bug" in p.stderr
    m = re.search(r"the traceback is in (\S+)", p.stderr)
    assert m and "injected bug" in Path(m.group(1)).read_text()
    Path(m.group(1)).unlink()


def test_ctrl_c_exits_130_and_changes_no_output(files: Path, tmp_path: Path) -> None:
    """SIGINT on a run large enough to be interrupted mid-computation."""
    import numpy as np
    import polars as pl

    n = 6_000_000  # about 1.5 s of work on a quiet 2-core machine: interrupted mid-run
    rng = np.random.default_rng(0)
    pl.DataFrame({"id": np.arange(n), "score": rng.random(n)}).write_csv(tmp_path / "p.csv")
    pl.DataFrame({"id": rng.permutation(n), "label": rng.integers(0, 2, n)}).write_csv(
        tmp_path / "t.csv")
    (tmp_path / "report.json").write_text("old")

    def interrupted(delay: float) -> tuple[int, str]:
        """Run, wait for the first line on stderr (the inferred columns: the run is then
        reading and computing), then ``delay`` seconds, then SIGINT."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "evalcli", "compare", str(tmp_path / "p.csv"),
             str(tmp_path / "t.csv"), "-o", str(tmp_path / "report.json"), "-o",
             str(tmp_path / "report.md")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        first = proc.stderr.readline()
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=120)
        return proc.returncode, first + rest

    # a machine fast enough to finish within the delay gets a shorter one (never a pass
    # without an interrupted run: "done" in the output is a failure after the last try)
    for delay in (0.3, 0.1, 0.0):
        code, err = interrupted(delay)
        if "done:" not in err:
            break
    else:
        pytest.fail(f"the run finished before each interrupt: make the data larger\n{err}")
    assert code == 130, (code, err)
    assert "Traceback" not in err and "interrupted" in err
    assert (tmp_path / "report.json").read_text() == "old"
    assert not (tmp_path / "report.md").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


# --------------------------------------------------------------------------- 16. plugin code

def test_run_says_which_plugin_files_ran(cli: Cli, files: Path) -> None:
    (files / "sub").mkdir()
    (files / "sub" / "mine.py").write_text(
        "import polars as pl\n"
        "from evalcli.plugin import mean_metric\n"
        "METRICS = [mean_metric('mean_score', 'binary', summary='mean score', formula='-',\n"
        "    direction='higher', needs=['score'], row=lambda p, c: pl.col('score'))]\n")
    (files / "c.yaml").write_text("task: binary\npredictions: preds.csv\ntruth: truth.csv\n"
                                  "plugins: [sub/mine.py]\nmetrics: [mean_score]\n")
    r = cli("run", str(files / "c.yaml"), "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["metrics"][0]["value"] == pytest.approx(0.525)
    assert r.stderr.count("running plugin code:") == 1
    assert str((files / "sub" / "mine.py").resolve()) in r.stderr
    assert "running plugin code" not in cli("run", str(files / "c.yaml"), "-q").stderr


# --------------------------------------------------------------------------- 14. capped echoes

@pytest.mark.parametrize("metric", ["fbeta[beta=" + "9" * 5000 + "x]",
                                    "fbeta[" + "b" * 5000 + "=1]",
                                    "f1[zero_division=" + "m" * 5000 + "]"])
def test_a_huge_metric_parameter_gives_a_short_message(cli: Cli, files: Path,
                                                       metric: str) -> None:
    r = cli("compare", str(files / "preds.csv"), str(files / "truth.csv"), "-m", metric)
    assert_user_error(r, r"parameter", r"more characters")
    assert len(r.stderr) < 1000, len(r.stderr)


# --------------------------------------------------------------------------- exit codes

def test_a_closed_stdout_is_141_not_a_failed_gate() -> None:
    """``evalcli ... | head``: Rich alone would exit 1, which reads as a failed gate."""
    for args in (["metrics"], ["run", "configs/ranking-quickstart.yaml", "-f", "json"]):
        p = subprocess.Popen([sys.executable, "-m", "evalcli", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=Path(__file__).parent.parent)
        assert p.stdout is not None and p.stderr is not None
        p.stdout.close()
        err = p.stderr.read().decode()
        assert p.wait(timeout=120) == 141, (args, err)
        assert "Traceback" not in err


def test_a_usage_error_echoes_a_clipped_value(cli: Cli, files: Path) -> None:
    r = cli("compare", str(files / "preds.csv"), "--format", "p" * 100_000)
    assert r.exit_code == 2
    assert len(r.stderr) < 2000 and "more characters" in r.stderr


@pytest.mark.parametrize(("args", "code"), [
    (["compare", "sample_data/binary_predictions.csv", "sample_data/binary_truth.csv",
      "-m", "auroc", "--gate", "auroc>=0.999", "-q"], 1),
    (["compare", "sample_data/binary_predictions.csv", "sample_data/binary_truth.csv",
      "-m", "auroc", "--gate", "auroc>=0.9", "-q"], 0),
    (["compare", "nope.csv"], 2),
    (["--version"], 0),
])
def test_exit_codes_of_a_real_process(args: list[str], code: int) -> None:
    p = subprocess.run([sys.executable, "-m", "evalcli", *args], capture_output=True,
                       text=True, cwd=Path(__file__).parent.parent, timeout=120)
    assert p.returncode == code, (p.returncode, p.stderr)
