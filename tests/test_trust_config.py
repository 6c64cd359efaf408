"""Issue 19 ("Trust"), the config's side: hostile or broken configs give one short message and
exit 2; the Markdown report draws no HTML from data; plugin files say that they run."""

from __future__ import annotations

import html.parser
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from evalcli.config import load_config, parse_config
from evalcli.errors import ConfigError, MetricError, PluginError, clip
from tests.conftest import CliResult

if TYPE_CHECKING:
    from evalcli.result import Diff, RunResult

Cli = Callable[..., CliResult]

MESSAGE_LIMIT = 1_000
"""A message echoing user input stays below this many characters, whatever the input."""


def assert_user_error(r: CliResult, *patterns: str) -> None:
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    assert r.stdout == "", r.stdout
    assert "Traceback" not in r.stderr
    assert r.stderr.count("error:") == 1, r.stderr
    flat = " ".join(r.stderr.split())  # the console may wrap long lines
    for p in patterns:
        assert re.search(p, flat), f"{p!r} not in {flat!r}"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "preds.csv").write_text("id,score\n1,0.9\n2,0.2\n3,0.6\n4,0.4\n")
    (tmp_path / "truth.csv").write_text("id,label\n1,1\n2,0\n3,1\n4,0\n")
    return tmp_path


BASE = "task: binary\npredictions: preds.csv\ntruth: truth.csv\n"


def _write(folder: Path, body: str | bytes, name: str = "c.yaml") -> Path:
    path = folder / name
    if isinstance(body, bytes):
        path.write_bytes(body)
    else:
        path.write_text(body, encoding="utf-8")
    return path


def _config_error(path: Path) -> str:
    """The message of the ConfigError that loading ``path`` raises (asserted short)."""
    with pytest.raises(ConfigError) as info:
        load_config(path)
    text = str(info.value)
    assert len(text) < MESSAGE_LIMIT, f"{len(text):,} characters: {text[:300]}"
    return " ".join(text.split())


# --------------------------------------------------------------------------- clip()

def test_clip_keeps_the_start_and_says_how_much_was_cut() -> None:
    assert clip("short") == "short"
    assert clip("x" * 200) == "x" * 200
    out = clip("a" * 150 + "b" * 1_084)
    assert out.startswith("a" * 150 + "b" * 50) and "b" * 51 not in out
    assert "1,034 more characters" in out
    assert clip("y" * 50, 10) == "y" * 10 + "… (40 more characters)"


# --------------------------------------------------------------------------- encoding (item 10)

def test_a_config_that_is_not_utf8_names_the_byte_the_line_and_the_fix(files: Path) -> None:
    raw = (BASE + "# caf").encode() + b"\xe9\nmetrics: [auroc]\n"
    msg = _config_error(_write(files, raw))
    offset = raw.index(b"\xe9")
    assert "c.yaml" in msg and "not UTF-8" in msg
    assert f"offset {offset}" in msg and "line 4" in msg and "0xe9" in msg
    assert "save" in msg and "UTF-8" in msg.split("fix:")[1]


def test_a_utf16_config_is_recognised(files: Path) -> None:
    msg = _config_error(_write(files, BASE.encode("utf-16")))
    assert "UTF-16" in msg and "save" in msg.split("fix:")[1]


def test_a_utf8_config_with_a_byte_order_mark_loads(files: Path) -> None:
    cfg = load_config(_write(files, b"\xef\xbb\xbf" + BASE.encode()))
    assert cfg.task == "binary"


def test_a_control_character_names_its_line(files: Path) -> None:
    msg = _config_error(_write(files, BASE + "metrics: [au\x00roc]\n"))
    assert "c.yaml" in msg and "line 4" in msg and "#x0000" in msg
    assert "<unicode string>" not in msg


def test_the_cli_says_not_utf8_with_exit_2(cli: Cli, files: Path) -> None:
    path = _write(files, (BASE + "# caf").encode() + b"\xe9\n")
    for command in ("run", "validate"):
        assert_user_error(cli(command, str(path)), r"c\.yaml", "not UTF-8", "line 4",
                          "fix: .*UTF-8")


# --------------------------------------------------------------------------- aliases (item 14)

BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
task: *h
predictions: preds.csv
"""


def test_an_alias_bomb_is_refused_quickly_naming_the_alias_line(files: Path) -> None:
    started = time.perf_counter()
    msg = _config_error(_write(files, BILLION_LAUGHS))
    assert time.perf_counter() - started < 5  # 9^8 strings if expanded
    assert "c.yaml" in msg and "alias" in msg
    # the 1,000-value bound is crossed inside the line of 'd' (9 + 81 + 729 + 9·9·9·...)
    line = int(re.search(r"line (\d+)", msg).group(1))  # type: ignore[union-attr]
    assert line == 4, msg
    assert "*c" in msg


def test_the_cli_refuses_an_alias_bomb_in_one_short_message(cli: Cli, files: Path) -> None:
    r = cli("run", str(_write(files, BILLION_LAUGHS)))
    assert_user_error(r, r"c\.yaml", "alias", "line 4")
    assert len(r.stderr) < MESSAGE_LIMIT


def test_a_recursive_alias_is_refused(files: Path) -> None:
    msg = _config_error(_write(files, BASE + "options:\n  x: &x [1, *x]\n"))
    assert "c.yaml" in msg and "*x" in msg and "line 5" in msg


def test_anchors_reused_a_few_times_and_merge_keys_still_work(files: Path) -> None:
    body = BASE + (
        "spark:\n"
        "  conf: &conf\n"
        "    spark.executor.memory: 4g\n"
        "    spark.sql.shuffle.partitions: 8\n"
        "options: &opts {threshold_file: t.txt}\n"
        "metrics:\n"
        "  - {metric: auroc, min: &low 0.5, segments: &every {min: 0.25}}\n"
        "  - {metric: auprc, min: *low, segments: *every}\n"
        "  - {metric: f1, min: *low, segments: *every}\n"
        "  - {metric: precision, min: *low, segments: *every}\n"
        "  - {metric: recall, min: *low, segments: *every}\n"
        "group_by: [region]\n"
        "baseline:\n"
        "  report: accepted.json\n"
        "  metrics:\n"
        "    auroc: &drop {max_drop: 0.01, max_relative_drop: 0.02}\n"
        "    auprc: *drop\n"
        "    f1: {<<: *drop, min_improvement: 0.0}\n"
    )
    cfg = load_config(_write(files, body))
    assert [m.min for m in cfg.metrics] == [0.5] * 5
    assert all(m.segments is not None and m.segments["*"].min == 0.25 for m in cfg.metrics)
    assert cfg.baseline is not None
    f1 = cfg.baseline.metrics["f1"]
    assert (f1.max_drop, f1.max_relative_drop, f1.min_improvement) == (0.01, 0.02, 0.0)
    assert cfg.spark.conf["spark.sql.shuffle.partitions"] == 8


def test_a_list_anchored_and_reused_up_to_the_bound_loads(files: Path) -> None:
    items = ", ".join(f"v{i}" for i in range(99))
    body = BASE + f"options:\n  a: &a [{items}]\n" + "".join(
        f"  b{i}: *a\n" for i in range(9))
    cfg = load_config(_write(files, body))  # 9 aliases x 100 values = 900 <= 1,000
    assert cfg.options["b8"] == [f"v{i}" for i in range(99)]
    msg = _config_error(_write(files, body + "  b9: *a\n  b10: *a\n"))
    assert "line 16" in msg and "*a" in msg


# --------------------------------------------------------------------------- shapes and tags

@pytest.mark.parametrize(("body", "what"), [
    ("- task: binary\n- predictions: preds.csv\n", "a list"),
    ("just some text\n", "text"),
    ("42\n", "a number"),
])
def test_a_config_that_is_not_a_mapping(cli: Cli, files: Path, body: str, what: str) -> None:
    path = _write(files, body)
    msg = _config_error(path)
    assert "c.yaml" in msg and "mapping" in msg and what in msg
    assert_user_error(cli("validate", str(path)), "mapping")


@pytest.mark.parametrize("tag", ["!!python/object/apply:os.system", "!!python/object:os.Foo",
                                 "!custom"])
def test_a_tag_is_refused_before_it_runs(cli: Cli, files: Path, tag: str) -> None:
    marker = files / "ran"
    path = _write(files, f"task: binary\npredictions: {tag} ['touch {marker}']\n")
    msg = _config_error(path)
    assert "c.yaml" in msg and "line 2" in msg and tag.lstrip("!").split(":")[0] in msg
    assert "indentation" not in msg  # the hint is about tags, not about layout
    assert_user_error(cli("run", str(path)), "tag")
    assert not marker.exists()


def test_deep_nesting_is_one_message(files: Path) -> None:
    msg = _config_error(_write(files, BASE + "options: {x: " + "[" * 5_000 + "]" * 5_000
                               + "}\n"))
    assert "c.yaml" in msg and "nest" in msg


# --------------------------------------------------------------------------- capped echoes

def test_a_very_long_unknown_key_is_clipped(cli: Cli, files: Path) -> None:
    key = "k" * 50_000
    path = _write(files, BASE + f"? {key}\n: 1\n")
    msg = _config_error(path)
    assert "unknown key 'kkk" in msg and "more characters" in msg
    r = cli("validate", str(path))
    assert_user_error(r, "unknown key", "more characters")
    assert len(r.stderr) < MESSAGE_LIMIT


def test_a_long_duplicate_key_is_clipped(files: Path) -> None:
    key = "d" * 5_000
    msg = _config_error(_write(files, BASE + f"? {key}\n: 1\n? {key}\n: 2\n"))
    assert "given twice" in msg and "more characters" in msg


def test_a_huge_value_is_clipped_in_the_validation_message(files: Path) -> None:
    msg = _config_error(_write(files, "task: [" + ", ".join(["x" * 100] * 1_000) + "]\n"
                               "predictions: preds.csv\n"))
    assert "'task'" in msg and "more characters" in msg


def test_ten_thousand_bad_metric_entries_give_one_short_message(cli: Cli, files: Path) -> None:
    body = BASE + "metrics:\n" + "".join(f"  - {{metric: auroc, min: x{i}}}\n"
                                         for i in range(10_000))
    path = _write(files, body)
    msg = _config_error(path)
    assert "metrics[0].min" in msg and "9,997 more" in msg
    assert "metrics[9999]" not in msg
    r = cli("validate", str(path))
    assert_user_error(r, r"metrics\[0\]\.min", "more")
    assert len(r.stderr) < MESSAGE_LIMIT


def test_ten_thousand_metric_names_stop_at_the_first_unknown(cli: Cli, files: Path) -> None:
    body = BASE + "metrics:\n" + "".join(f"  - bogus{i}\n" for i in range(10_000))
    r = cli("validate", str(_write(files, body)))
    assert_user_error(r, "bogus0")
    assert len(r.stderr) < MESSAGE_LIMIT


def test_a_long_metric_id_is_clipped(files: Path) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"task": "binary", "predictions": "p.csv", "metrics": ["?" * 20_000]},
                     "c.yaml", files)
    assert len(str(info.value)) < MESSAGE_LIMIT and "more characters" in str(info.value)
    assert "c.yaml" in str(info.value)


def test_a_long_unknown_metric_or_task_name_is_clipped() -> None:
    from evalcli.metrics.registry import get_registry

    reg = get_registry()
    for call in (lambda: reg.get("binary", "m" * 20_000), lambda: reg.task("t" * 20_000)):
        with pytest.raises(MetricError) as info:
            call()
        assert len(str(info.value)) < MESSAGE_LIMIT and "more characters" in str(info.value)


# --------------------------------------------------------------------------- plugins (item 16)

PLUGIN = """\
import polars as pl
from evalcli.plugin import mean_metric

METRICS = [mean_metric("mean_score_x", "binary", summary="mean score", formula="mean(s)",
                       direction="higher", needs=["score"], row=lambda p, c: pl.col("score"))]
"""


@pytest.fixture
def outside_plugin(files: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A config and a plugin file in another folder, named by its absolute path."""
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "team_metrics.py"
    elsewhere.write_text(PLUGIN, encoding="utf-8")
    cfg = _write(files, BASE + f"metrics: [mean_score_x]\nplugins: [{elsewhere}]\n")
    return cfg, elsewhere.resolve()


def test_validate_says_which_plugin_code_ran_on_stderr(
        cli: Cli, outside_plugin: tuple[Path, Path]) -> None:
    cfg, plugin = outside_plugin
    r = cli("validate", str(cfg))
    assert r.exit_code == 0, r.stderr
    assert f"running plugin code: {plugin}" in r.stderr.splitlines()
    assert "running plugin code" not in r.stdout and "mean_score_x" in r.stdout


def test_validate_quiet_says_nothing_about_plugins(
        cli: Cli, outside_plugin: tuple[Path, Path]) -> None:
    cfg, _plugin = outside_plugin
    r = cli("validate", "--quiet", str(cfg))
    assert r.exit_code == 0, r.stderr
    assert r.stderr == "" and "mean_score_x" in r.stdout


def test_the_registry_announces_each_plugin_file_before_its_code_runs(tmp_path: Path) -> None:
    from evalcli.metrics.registry import builtin_registry, on_plugin_file

    log = tmp_path / "ran.log"
    log.write_text("")
    first, second = tmp_path / "one.py", tmp_path / "two.py"
    for path, name in ((first, "mean_score_x"), (second, "mean_score_y")):
        path.write_text(PLUGIN.replace("mean_score_x", name)
                        + f"with open({str(log)!r}, 'a') as fh:\n    fh.write('{path.stem} ')\n")
    heard: list[str] = []

    def hook(path: Path) -> None:
        heard.append(f"{path} after [{log.read_text().strip()}]")

    reg = builtin_registry()
    with on_plugin_file(hook):
        loaded = reg.with_plugin_files([first, second, first])
    assert heard == [f"{first.resolve()} after []", f"{second.resolve()} after [one]"]
    assert loaded.files == [first.resolve(), second.resolve()]
    assert reg.files == []
    reg.with_plugin_files([first])  # outside the block: the file runs, nobody is told
    assert log.read_text().split() == ["one", "two", "one"] and len(heard) == 2


def test_a_plugin_path_too_long_for_the_system_is_one_message(files: Path) -> None:
    from evalcli.metrics.registry import builtin_registry

    with pytest.raises(PluginError) as info:
        builtin_registry().with_plugin_files([files / ("p" * 5_000 + ".py")])
    assert len(str(info.value)) < MESSAGE_LIMIT


def test_a_plugin_path_too_long_through_the_cli(cli: Cli, files: Path) -> None:
    path = _write(files, BASE + "plugins: [" + "p" * 5_000 + ".py]\n")
    r = cli("validate", str(path))
    assert_user_error(r, "plugin file")
    assert len(r.stderr) < MESSAGE_LIMIT


# --------------------------------------------------------------------------- Markdown (item 15)

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
LINK = "![t](https://evil.example/p.png) [click](javascript:alert(3))"
BREAK = "a|b\n\n<div onclick=alert(4)>x</div>\r\n# heading"
TICKS = "x`` <img src=y onerror=alert(5)> ``y"


def _hostile_result() -> tuple[RunResult, Diff]:
    from evalcli.decide.diff import Gates, diff_reports
    from evalcli.decide.gates import evaluate_gates
    from evalcli.result import (
        AlignmentInfo,
        ChangeGate,
        Gate,
        InputInfo,
        MetricResult,
        RunResult,
        SegmentResult,
        to_dict,
    )

    def m(id_: str, value: float | None, gate: Gate | None = None,
          notes: list[str] | None = None) -> MetricResult:
        return MetricResult(id=id_, metric="auroc", family="binary", params={},
                            direction="higher", value=value, notes=notes or [], gate=gate)

    ids = [f"auroc[label={IMG}]", f"f1[x={TICKS}]", f"recall[y={BREAK}]"]
    metrics = [m(ids[0], 0.9, Gate(min=0.95), notes=[SCRIPT, BREAK]),
               m(ids[1], 0.5, notes=[LINK]), m(ids[2], None, Gate(min=0.1), notes=[TICKS])]
    segments = [SegmentResult({SCRIPT: IMG, "r|\n": BREAK}, 10,
                              [m(ids[0], None, notes=[IMG]), m(ids[1], 0.4),
                               m(ids[2], 0.3)]),
                SegmentResult({SCRIPT: LINK, "r|\n": TICKS}, 5,
                              [m(ids[0], 0.7), m(ids[1], 0.4), m(ids[2], 0.3)])]
    r = RunResult(
        task="binary", engine="polars",
        predictions=InputInfo(f"{IMG}.csv", 10, {"score": SCRIPT}),
        truth=InputInfo(f"{TICKS}|{BREAK}.csv", 10, {"label": IMG}),
        alignment=AlignmentInfo(matched=10, only_in_predictions=0, only_in_truth=0,
                                unmatched_policy="drop"),
        metrics=metrics, group_by=[SCRIPT, "r|\n"], segments=segments, gating=True,
        options={"positive": IMG, SCRIPT: BREAK},
    )
    evaluate_gates(r, {ids[0]: {"*": Gate(min=0.8, segment="*")}})
    base = to_dict(r)
    for x in base["metrics"]:
        if x["value"] is not None:
            x["value"] += 0.2
    d = diff_reports(base, to_dict(r), Gates(ChangeGate(max_drop=0.01)),
                     base_name=f"{IMG}{TICKS}.json", cand_name=SCRIPT)
    r.baseline = d
    r.failures += d.failures
    r.passed = not r.failures
    return r, d


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.cells: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


SAFE_TAGS = {"h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "code", "ul", "li",
             "em", "strong", "details", "summary", "sub"}


def _rendered(md: str) -> _Tags:
    """The Markdown as a CommonMark renderer with raw HTML on (as GitHub) turns it into HTML."""
    from markdown_it import MarkdownIt

    out = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    parser = _Tags()
    parser.feed(out)
    return parser


def _attributes(parsed: _Tags) -> set[str]:
    return {f"{a}={v}" for _t, attrs in parsed.tags for a, v in attrs}


def _one_line(text: str) -> str:
    return " ".join(text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ").split())


def test_markdown_report_draws_no_html_from_data() -> None:
    from evalcli.report.markdown import render

    r, _d = _hostile_result()
    md = render(r)
    parsed = _rendered(md)
    tags = {t for t, _ in parsed.tags}
    assert tags <= SAFE_TAGS, tags - SAFE_TAGS
    assert _attributes(parsed) <= {"style=text-align:right"}  # the table's alignment only
    # every line of the Markdown from data stays one line: no heading, block or row injected
    assert [line for line in md.splitlines() if line.startswith("#")] == [
        md.splitlines()[0], "### By segment (2)",
        next(x for x in md.splitlines() if x.startswith("### Compared")), "### Failures"]


def test_markdown_report_shows_the_data_as_text_in_its_cells() -> None:
    from evalcli.report.markdown import render

    r, _d = _hostile_result()
    cells = [" ".join(c.split()) for c in _rendered(render(r)).cells]
    for value in (SCRIPT, "r| ", IMG, LINK, _one_line(BREAK), _one_line(TICKS),
                  f"auroc[label={IMG}]", f"f1[x={_one_line(TICKS)}]"):
        assert _one_line(value) in cells, (value, cells)
    assert _one_line(SCRIPT + "; " + BREAK) in cells  # the notes of the first metric


def test_markdown_diff_draws_no_html_from_data() -> None:
    from evalcli.report.markdown import render_diff

    _r, d = _hostile_result()
    parsed = _rendered(render_diff(d))
    tags = {t for t, _ in parsed.tags}
    assert tags <= SAFE_TAGS, tags - SAFE_TAGS
    assert _attributes(parsed) <= {"style=text-align:right"}


@pytest.mark.parametrize("text", [SCRIPT, IMG, LINK, BREAK, TICKS, "a\\|b", "x\\", "&lt;b&gt;",
                                  "<http://evil.example>", "<x@evil.example>", "<!-- c -->",
                                  "<?php ?>", "</td>", "plain <= 0.4 and a < b"])
def test_the_markdown_escape_round_trips_through_a_renderer(text: str) -> None:
    from evalcli.report.markdown import code, escape, table

    for md in (escape(text), code(text)):
        parsed = _rendered("\n".join(table(["h"], [[md]])))
        assert {t for t, _ in parsed.tags} <= SAFE_TAGS
        assert " ".join(parsed.cells[1].split()) == _one_line(text), (md, parsed.cells)
        line = _rendered(f"- data: {md}\n")
        assert {t for t, _ in line.tags} <= SAFE_TAGS


def test_markdown_keeps_comparisons_readable() -> None:
    from evalcli.report.markdown import escape

    assert escape("gate <= 0.4 and >= 0.1") == "gate <= 0.4 and >= 0.1"
    assert escape("a<b") == "a&lt;b" and escape("a&b") == "a&amp;b"



# ------------------------------------------------------------------ battery of 2026-11-26

@pytest.mark.parametrize("metric", [
    "{metric: auroc, min: .nan}", "{metric: auroc, max: .inf}",
    "{metric: auroc, segments: {min: .nan}}", "{metric: auroc, min: true}",
])
def test_a_gate_bound_is_a_finite_number(cli: Cli, files: Path, metric: str) -> None:
    """`min: .nan` passed every value ('>= nan  pass', exit 0): a gate that cannot fail."""
    cfg = _write(files, BASE + "group_by: [id]\n" * ("segments" in metric)
                 + f"metrics: [{metric}]\n")
    assert_user_error(cli("run", str(cfg)), r"metrics\[0\]", r"finite number|not true or false")


@pytest.mark.parametrize("gates", ["{report: r.json, min_improvement: .nan}",
                                   "{report: r.json, metrics: {auroc: {max_drop: .inf}}}"])
def test_a_baseline_change_gate_is_a_finite_number(cli: Cli, files: Path, gates: str) -> None:
    cfg = _write(files, BASE + f"metrics: [auroc]\nbaseline: {gates}\n")
    assert_user_error(cli("run", str(cfg)), r"baseline\.", r"finite number")


def test_nan_or_infinity_in_a_baseline_report(cli: Cli, files: Path) -> None:
    """A report holding NaN or Infinity (not JSON; evalcli writes null) made the change 0
    ('= 0.0000 pass') or NaN, and every change gate passed."""
    cfg = _write(files, BASE + "metrics: [auroc]\n")
    good = files / "good.json"
    r = cli("run", str(cfg), "-o", str(good), "-q")
    assert r.exit_code == 0, r.stderr
    for token in ("NaN", "Infinity", "-Infinity"):
        text = re.sub(r'("value": )[0-9.eE+-]+', rf"\g<1>{token}", good.read_text(), count=1)
        bad = files / "bad.json"
        bad.write_text(text)
        assert_user_error(cli("diff", str(bad), str(good), "--max-drop", "0.01"),
                          rf"bad\.json holds {token}, which is not JSON")
        assert_user_error(cli("run", str(cfg), "-b", str(bad)), rf"holds {token}")


def test_diff_options_out_of_range(cli: Cli, files: Path) -> None:
    """--max-drop nan and --confidence 0 or 1 were internal errors (exit 3)."""
    cfg = _write(files, BASE + "metrics: [auroc]\n")
    rep = files / "r.json"
    assert cli("run", str(cfg), "-o", str(rep), "-q").exit_code == 0
    for args, said in ((["--max-drop", "nan"], r"--max-drop 'nan': expected a finite number"),
                       (["--min-improvement", "inf"], r"expected a finite number"),
                       (["--max-drop", "0.01", "--confidence", "1"], r"strictly between 0 and 1"),
                       (["--max-drop", "0.01", "--confidence", "0"], r"strictly between 0 and 1")):
        assert_user_error(cli("diff", str(rep), str(rep), *args), said)


@pytest.mark.parametrize("metric", ["ndcg@99999999999999999999", "{metric: ndcg, k: 2e30}",
                                    "{metric: ndcg, k: 99999999999999999999}"])
def test_a_huge_cutoff_is_refused(cli: Cli, tmp_path: Path, metric: str) -> None:
    """A cut-off beyond 64 bits stopped Polars' query (exit 3)."""
    (tmp_path / "p.csv").write_text("query,item,score\nq,a,0.9\nq,b,0.1\n")
    (tmp_path / "t.csv").write_text("query,item,relevance\nq,a,1\n")
    cfg = _write(tmp_path, "task: ranking\npredictions: p.csv\ntruth: t.csv\n"
                 f"metrics: ['{metric}']\n" if "{" not in metric else
                 f"task: ranking\npredictions: p.csv\ntruth: t.csv\nmetrics: [{metric}]\n")
    r = cli("run", str(cfg))
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert "internal error" not in r.stderr


def test_a_file_name_too_long(cli: Cli, files: Path) -> None:
    cfg = _write(files, BASE + "metrics: [auroc]\n")
    assert_user_error(cli("run", str(cfg), "-o", str(files / ("x" * 300 + ".json"))),
                      r"cannot write the report", r"File name too long")


def test_a_parameter_given_twice(cli: Cli, files: Path) -> None:
    """`recall[threshold=0.3]` with `threshold: 0.5` computed at 0.5 without a word."""
    cfg = _write(files, BASE + 'metrics: [{metric: "recall[threshold=0.3]", threshold: 0.5}]\n')
    assert_user_error(cli("run", str(cfg)), r"'recall\[threshold=0\.3\]' and threshold=0\.5 "
                      r"disagree")
    same = _write(files, BASE + 'metrics: [{metric: "recall[threshold=0.3]", threshold: 0.30}]\n',
                  "same.yaml")
    assert cli("run", str(same)).exit_code == 0
    assert_user_error(cli("compare", str(files / "preds.csv"), str(files / "truth.csv"), "-m",
                          "recall[threshold=0.3,threshold=0.9]"),
                      r"the parameter 'threshold' is given twice")


def test_a_gate_on_a_missing_segment_is_counted(cli: Cli, files: Path) -> None:
    """The run failed (exit 1) on a gate for a segment the data lacks, but its last line
    said 'no gates'; min above max on a segment gate was not refused."""
    (files / "truth.csv").write_text("id,label,size\n1,1,s\n2,0,s\n3,1,l\n4,0,l\n")
    cfg = _write(files, BASE + 'group_by: [size]\nmetrics: [{metric: auroc, segments: '
                 '{"size=huge": {min: 0.5}}}]\n')
    r = cli("run", str(cfg))
    assert r.exit_code == 1
    assert "FAILED: 1 of 1 gate failed" in r.stderr
    r = cli("run", str(cfg), "--no-gate")
    assert r.exit_code == 0
    assert "1 gate, 1 would fail" in r.stderr
    cfg = _write(files, BASE + "group_by: [size]\nmetrics: [{metric: auroc, segments: "
                 "{min: 0.9, max: 0.1}}]\n", "mm.yaml")
    assert_user_error(cli("run", str(cfg)), r"gate min 0\.9 is above max 0\.1")


def test_a_weight_in_neither_file_lists_both(cli: Cli, files: Path) -> None:
    flat_cols = r"id, score \(predictions\); id, label \(truth\)"
    assert_user_error(cli("compare", str(files / "preds.csv"), str(files / "truth.csv"),
                          "--weight", "nosuch"), r"in \S*preds\.csv or \S*truth\.csv", flat_cols)


def test_a_rule_across_keys_says_it_whole(cli: Cli, files: Path) -> None:
    """A model validator's message was cut ('un… (13 more characters)') and followed by an
    echo of the whole config, evalcli's own base_dir included."""
    cfg = _write(files, BASE + "metrics: [{metric: auroc, max_drop: 0.01}]\n")
    r = cli("run", str(cfg))
    assert_user_error(r, r"compare systems: give predictions: \{name: file, \.\.\.\}, or gate "
                      r"the change from an accepted report under baseline:")
    for leak in ("base_dir", "PosixPath", "more char"):
        assert leak not in r.stderr, r.stderr


def test_validate_refuses_what_run_refuses_before_computing(cli: Cli, files: Path) -> None:
    """validate said ✓ (exit 0) on configs that run refuses at once: a report over the
    config, into a missing folder. A baseline report that does not exist stays run's to
    refuse: 'run --baseline' may name another (docs/ci.md validates such a config)."""
    for body, said in (
        ("report: [c.yaml]\n", r"would overwrite the run's input"),
        ("report: [nofolder/r.json]\n", r"the folder \S*nofolder does not exist"),
    ):
        cfg = _write(files, BASE + "metrics: [auroc]\n" + body)
        assert_user_error(cli("validate", str(cfg)), said)
        assert_user_error(cli("run", str(cfg)), said)
    cfg = _write(files, BASE + "metrics: [auroc]\nbaseline: {report: nosuch.json}\n")
    assert cli("validate", str(cfg)).exit_code == 0


ODD_PLUGIN = """
import polars as pl
from evalcli.plugin import sum_metric, MetricValue
METRICS = [sum_metric("odd", "binary", summary="x", formula="x", direction="higher",
                      needs=["label", "score"], sums=lambda p, c: {"s": pl.col("score")},
                      value=lambda s, p: {value})]
"""


@pytest.mark.parametrize("value,said", [
    ('MetricValue("hello")', r"a MetricValue of 'hello', not of a number"),
    ("MetricValue([1, 2])", r"a MetricValue of \[1, 2\], not of a number"),
    ("MetricValue(True)", r"a MetricValue of True, not of a number"),
    ('MetricValue(0.3, notes="x")', r"notes='x', not a list of texts"),
])
def test_a_plugin_value_that_is_not_a_number(cli: Cli, files: Path, value: str, said: str
                                             ) -> None:
    """A plugin's MetricValue of text or a list went into the JSON report (exit 0) and every
    other format crashed (exit 3); True was gated as 1."""
    _write(files, ODD_PLUGIN.replace("{value}", value), "odd.py")
    cfg = _write(files, BASE + "plugins: [odd.py]\nmetrics: [{metric: odd, min: 0.5}]\n")
    assert_user_error(cli("run", str(cfg)), r"metric 'odd' from plugin file \S*odd\.py failed "
                      r"in its value function", said)


def test_an_infinite_value_fails_its_gate(cli: Cli, files: Path) -> None:
    """A value of inf passed `min: 0.5` while the JSON report said null."""
    _write(files, ODD_PLUGIN.replace("{value}", 'MetricValue(float("inf"))'), "odd.py")
    cfg = _write(files, BASE + "plugins: [odd.py]\nmetrics: [{metric: odd, min: 0.5}]\n")
    r = cli("run", str(cfg), "-f", "json")
    assert r.exit_code == 1, r.stderr
    m = json.loads(r.stdout)["metrics"][0]
    assert m["value"] is None and "the value is infinite" in m["notes"]


def test_data_cannot_reach_the_terminal_or_break_junit(cli: Cli, files: Path) -> None:
    """A segment value holding an escape sequence was printed raw on the terminal (it could
    recolour it or move the cursor), and one holding \\x0b made the JUnit report invalid XML."""
    import xml.etree.ElementTree as ET

    (files / "truth.csv").write_text('id,label,seg\n1,1,"a\x1b[31mb"\n2,0,"a\x1b[31mb"\n'
                                     '3,1,"c\x0bd"\n4,0,"c\x0bd"\n')
    cfg = _write(files, BASE + "group_by: [seg]\nmetrics: [{metric: accuracy, threshold: 0.5, "
                 "segments: {min: 0.9}}]\n")
    r = cli("run", str(cfg), "-o", str(files / "r.xml"))
    assert r.exit_code == 0, r.stderr
    assert "\x1b" not in r.stdout and "\x1b" not in r.stderr
    assert "\\x1b[31m" in r.stdout
    root = ET.parse(files / "r.xml").getroot()
    assert any("c\\x0bd" in (t.get("name") or "") for t in root.iter("testcase"))


def test_absent_segments_count_among_the_gates(cli: Cli, files: Path) -> None:
    (files / "truth.csv").write_text("id,label,size\n1,1,s\n2,0,s\n3,1,l\n4,0,l\n")
    cfg = _write(files, BASE + 'group_by: [size]\nmetrics: [{metric: auroc, min: 0.5, segments: '
                 '{"size=huge": {min: 0.5}, "size=tiny": {min: 0.5}, "*": {min: 0.0}}}]\n')
    r = cli("run", str(cfg))
    assert r.exit_code == 1
    assert "FAILED: 2 of 5 gates failed" in r.stderr, r.stderr


def test_the_schema_keeps_the_minimum_of_a_drop(cli: Cli) -> None:
    """max_drop's '>= 0' reached the JSON schema as pydantic's 'ge', not 'minimum'."""
    schema = json.loads(cli("schema").stdout)
    text = json.dumps(schema)
    assert '"ge"' not in text
    drops = re.findall(r'"max_drop": \{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}', text)
    assert drops and all('"minimum": 0' in d for d in drops), drops


def test_a_plugin_integer_parameter_may_use_64_bits(cli: Cli, files: Path) -> None:
    _write(files, ODD_PLUGIN.replace("{value}", "0.5").replace(
        'needs=["label", "score"],', 'needs=["label", "score"], params=[Param("seed", int, 0, '
        '"a seed")],').replace("import sum_metric, MetricValue",
                               "import sum_metric, MetricValue, Param"), "odd.py")
    cfg = _write(files, BASE + "plugins: [odd.py]\nmetrics: [{metric: odd, seed: "
                 f"{2**63 - 1}}}]\n")
    r = cli("run", str(cfg))
    assert r.exit_code == 0, r.stderr
    cfg = _write(files, BASE + f"plugins: [odd.py]\nmetrics: [{{metric: odd, seed: {2**64}}}]\n")
    assert_user_error(cli("run", str(cfg)), r"must fit in 64 bits")


def test_integer_ids_beyond_2_53_against_float_ids(cli: Cli, tmp_path: Path) -> None:
    """Cast to floats to match the other file, 2^53 and 2^53 + 1 became one id, reported as
    a 'duplicated key' the file does not have."""
    import polars as pl

    pl.DataFrame({"id": [2**53, 2**53 + 1], "score": [0.9, 0.2]}).write_parquet(tmp_path / "p.pq")
    pl.DataFrame({"id": [float(2**53), float(2**53) + 2], "label": [1, 0]}
                 ).write_parquet(tmp_path / "t.pq")
    cfg = _write(tmp_path, "task: binary\npredictions: {path: p.pq, format: parquet}\n"
                 "truth: {path: t.pq, format: parquet}\nmetrics: [auroc]\n")
    assert_user_error(cli("run", str(cfg)), r"the join key 'id' holds integers in the "
                      r"predictions \(up to 9007199254740993\) and floats in the other file")


def test_compare_says_what_it_inferred_whatever_the_format(cli: Cli, files: Path) -> None:
    for fmt in ("json", "markdown", "none"):
        r = cli("compare", str(files / "preds.csv"), str(files / "truth.csv"), "-f", fmt)
        assert r.exit_code == 0, r.stderr
        assert "inferred: task=binary, id=id" in r.stderr, (fmt, r.stderr)


def test_a_diff_of_a_relative_change_from_almost_zero_is_json(cli: Cli, tmp_path: Path) -> None:
    """The relative change from a baseline of 1e-320 is infinite: 'evalcli diff -f json'
    wrote the token Infinity (not JSON), which a later diff of that file refused."""
    (tmp_path / "a.csv").write_text("label,prediction\n0,1e-160\n0,-1e-160\n")
    (tmp_path / "b.csv").write_text("label,prediction\n0,1\n0,-1\n")
    for name in ("a", "b"):
        r = cli("compare", str(tmp_path / f"{name}.csv"), "--task", "regression", "-m", "mse",
                "-o", str(tmp_path / f"{name}.json"), "-q")
        assert r.exit_code == 0, r.stderr
    r = cli("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert "Infinity" not in r.stdout
    json.loads(r.stdout)


def test_the_default_set_leaves_out_what_the_scores_do_not_allow(cli: Cli, tmp_path: Path
                                                                  ) -> None:
    """With no metrics named, scores outside [0, 1] (logits) refused the whole run because
    log_loss and brier need probabilities; they are now left out of the default set, and the
    report says so. Named, they are still refused."""
    f = tmp_path / "logits.csv"
    f.write_text("label,score\n1,2.5\n0,-1.3\n1,0.7\n0,-0.2\n")
    r = cli("compare", str(f), "-f", "json")
    assert r.exit_code == 0, r.stderr
    rep = json.loads(r.stdout)
    ids = {m["id"] for m in rep["metrics"]}
    assert "auroc" in ids and not ids & {"log_loss", "brier"}
    said = rep["alignment"]["default_metrics_left_out"]
    assert said == ["log_loss, brier (log_loss and brier need probabilities, but the score "
                    "column holds values outside [0, 1])"]
    r = cli("compare", str(f))
    assert "left out of the default metrics: log_loss, brier" in " ".join(r.stderr.split()) \
        + " ".join(r.stdout.split())
    assert_user_error(cli("compare", str(f), "-m", "log_loss", "-m", "auroc"),
                      r"log_loss and brier need probabilities")


def test_the_default_set_leaves_them_out_for_every_system(cli: Cli, tmp_path: Path) -> None:
    """With several systems, each system's check ran against the same plan: the second one
    found log_loss already left out, and must not refuse the run for it."""
    (tmp_path / "t.csv").write_text("id,label\n1,1\n2,0\n3,1\n4,0\n")
    (tmp_path / "a.csv").write_text("id,score\n1,2.5\n2,-1.3\n3,0.7\n4,-0.2\n")
    (tmp_path / "b.csv").write_text("id,score\n1,1.5\n2,-0.3\n3,0.2\n4,0.4\n")
    cfg = _write(tmp_path, "task: binary\npredictions: {a: a.csv, b: b.csv}\ntruth: t.csv\n")
    r = cli("run", str(cfg), "-f", "json")
    assert r.exit_code == 0, r.stderr
    rep = json.loads(r.stdout)
    assert set(rep["systems"]) == {"a", "b"}
    assert not {m["id"] for m in rep["metrics"]} & {"log_loss", "brier"}
