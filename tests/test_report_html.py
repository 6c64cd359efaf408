"""The HTML report: self-contained, opened in a real headless Chromium with no network requests,
and its plots present and drawn.

Chromium comes from the system packages (Debian: ``apt-get install chromium``); the test drives
it over the DevTools protocol (``websocket-client``) and records every request the page makes.
Without a Chromium the browser tests fail, naming the package (``scripts/test``, the README's test
command, installs it first).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from evalcli.config import parse_config
from evalcli.report import ReportFormat, render, write
from evalcli.report.html import CSP
from evalcli.result import AlignmentInfo, InputInfo, MetricResult, RunResult
from evalcli.runner import run_config
from tests.test_report_golden import sample_result

# --------------------------------------------------------------------------- results to render


def _binary_run(tmp_path: Path, metrics: list[Any] | None = None) -> RunResult:
    rng = np.random.default_rng(1)
    n = 2000
    y = rng.integers(0, 2, n)
    df = pl.DataFrame({"id": range(n), "label": y, "region": rng.choice(["a", "b", "c"], n),
                       "score": np.clip(0.4 * y + rng.normal(0.3, 0.2, n), 0, 1)})
    path = tmp_path / "b.parquet"
    df.write_parquet(path)
    cfg = {"task": "binary", "predictions": str(path), "group_by": "region",
           "metrics": metrics or [{"metric": "auroc", "min": 0.7, "segments": {"min": 0.7}},
                                  "auprc", "f1"]}
    return run_config(parse_config(cfg, "t", tmp_path), curves=True)


def _multiclass_segments_run(tmp_path: Path) -> RunResult:
    """A multiclass run with group_by and a confusion matrix (a metric whose value is a
    matrix: in a segment it is one matrix per segment, not a number)."""
    rng = np.random.default_rng(3)
    n = 600
    y = rng.choice(["cat", "dog", "eel"], n)
    pred = np.where(rng.random(n) < 0.8, y, rng.choice(["cat", "dog", "eel"], n))
    path = tmp_path / "m.parquet"
    pl.DataFrame({"label": y, "prediction": pred,
                  "site": rng.choice(["north", "south"], n)}).write_parquet(path)
    cfg = {"task": "multiclass", "predictions": str(path), "group_by": "site",
           "metrics": ["confusion_matrix", {"metric": "accuracy", "min": 0.5,
                                            "segments": {"min": 0.5}}, "f1"]}
    return run_config(parse_config(cfg, "t", tmp_path))


def _regression_run(tmp_path: Path) -> RunResult:
    rng = np.random.default_rng(2)
    y = rng.normal(5, 2, 500)
    path = tmp_path / "r.parquet"
    pl.DataFrame({"label": y, "prediction": y + rng.normal(0, 0.5, 500)}).write_parquet(path)
    cfg = {"task": "regression", "predictions": str(path), "metrics": ["rmse", "r2"]}
    return run_config(parse_config(cfg, "t", tmp_path), curves=True)


def _hand_built(task: str, metrics: list[MetricResult]) -> RunResult:
    return RunResult(task=task, engine="polars", predictions=InputInfo("p.csv", 10),
                     truth=None, alignment=AlignmentInfo(10, 0, 0, "error"), metrics=metrics)


def _multiclass() -> RunResult:
    cm = MetricResult("confusion_matrix", "confusion_matrix", "multiclass", {}, "higher", 10.0,
                      details={"labels": ["cat", "dog", "eel"],
                               "matrix": [[3.0, 1.0, 0.0], [0.0, 4.0, 1.0], [0.0, 0.0, 1.0]],
                               "rows": "true class", "columns": "predicted class"})
    acc = MetricResult("accuracy", "accuracy", "multiclass", {}, "higher", 0.8)
    return _hand_built("multiclass", [cm, acc])


def _ranking() -> RunResult:
    ms = [MetricResult(f"{name}@{k}", name, "ranking", {"k": k}, "higher", v)
          for name, vals in (("ndcg", (0.31, 0.36, 0.41)), ("recall", (0.1, 0.2, 0.35)))
          for k, v in zip((5, 10, 20), vals, strict=True)]
    return _hand_built("ranking", ms)


# --------------------------------------------------------------------------- static checks

def test_html_is_self_contained(tmp_path):
    html = render(_binary_run(tmp_path), ReportFormat.html)
    assert f'content="{CSP}"' in html
    lowered = html.lower()
    for forbidden in ("<script", "<link", "@import", "url(http", 'src="http', "href=\"http"):
        assert forbidden not in lowered
    # XML namespace names are the only URLs, and a namespace name is never fetched
    urls = set(re.findall(r"https?://[^\"'\s)<>]+", html))
    assert urls == {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls


def test_html_is_deterministic(tmp_path):
    r = _regression_run(tmp_path)
    assert render(r, ReportFormat.html) == render(r, ReportFormat.html)


def test_plots_for_each_family(tmp_path):
    binary = render(_binary_run(tmp_path), ReportFormat.html)
    assert 'aria-label="ROC curve, AUROC' in binary
    assert 'aria-label="Precision-recall curve, AUPRC' in binary
    assert 'aria-label="auroc by segment"' in binary
    assert 'aria-label="Histogram of residuals"' in render(_regression_run(tmp_path),
                                                          ReportFormat.html)
    assert 'aria-label="confusion_matrix heat map"' in render(_multiclass(), ReportFormat.html)
    assert 'aria-label="metric@k"' in render(_ranking(), ReportFormat.html)


def test_reliability_gain_and_lift_plots_follow_their_metrics(tmp_path):
    html = render(_binary_run(tmp_path, ["auroc", "ece", {"metric": "mce", "bins": 5,
                                                          "strategy": "quantile"},
                                         "lift_table"]), ReportFormat.html)
    r = _binary_run(tmp_path, ["ece", {"metric": "mce", "bins": 5, "strategy": "quantile"}])
    ece = next(m.value for m in r.metrics if m.id == "ece")
    assert (f'aria-label="Reliability diagram; bins=10, uniform, ECE {ece:.4f}; '
            'bins=5, quantile, MCE ') in html
    assert 'aria-label="Cumulative gain chart"' in html and 'aria-label="Lift chart"' in html
    plain = render(_binary_run(tmp_path), ReportFormat.html)
    for label in ("Reliability diagram", "Cumulative gain chart", "Lift chart"):
        assert f'aria-label="{label}' not in plain


def _section(html: str, name: str) -> str:
    match = re.search(rf'<section id="{name}">(.*?)</section>', html, flags=re.DOTALL)
    assert match, f"no section {name}"
    return match.group(1)


def _header_and_rows(table_html: str) -> tuple[list[str], list[list[str]]]:
    head = re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", table_html.split("</thead>")[0])
    body = table_html.split("<tbody>")[1]
    rows = [re.findall(r"<td(?:\s[^>]*)?>(.*?)</td>", tr)
            for tr in re.findall(r"<tr>(.*?)</tr>", body, flags=re.DOTALL)]
    return head, rows


def test_headers_are_aligned_with_their_numbers(tmp_path):
    """A header sits above its column: right-aligned over right-aligned numbers (a segment
    table's value sat under the next column's header)."""
    html = render(sample_result(), ReportFormat.html)
    tables = re.findall(r"<table>.*?</table>", html, flags=re.DOTALL)
    assert len(tables) >= 3
    for table in tables:
        heads = re.findall(r"<th(\s[^>]*)?>", table)
        first_row = re.search(r"<tbody><tr>(.*?)</tr>", table, flags=re.DOTALL)
        assert first_row
        cells = re.findall(r"<td(\s[^>]*)?>", first_row.group(1))
        assert len(heads) == len(cells)
        for h, c in zip(heads, cells, strict=True):
            assert ('class="num"' in h) == ('class="num"' in c), (h, c, table[:300])


def test_pr_legend_names_what_was_computed():
    """The precision-recall legend names the area that was computed, with its own value: on
    the quickstart data average precision (steps) is 0.9922 and AUPRC (trapezoid) 0.9921, and
    the legend said "AUPRC 0.9922" when only average precision was computed."""
    from evalcli.config import load_config
    from evalcli.runner import override
    from tests.conftest import CONFIGS

    def pr_label(metrics: list[str]) -> tuple[str, dict[str, float]]:
        cfg = override(load_config(CONFIGS / "binary-quickstart.yaml"), metrics=metrics)
        r = run_config(cfg, curves=True)
        html = render(r, ReportFormat.html)
        label = re.search(r'aria-label="Precision-recall curve(?:, )?([^"]*)"', html)
        assert label, "no PR curve"
        return label.group(1), {m.metric: m.value for m in r.metrics if m.value is not None}

    label, v = pr_label(["average_precision"])
    assert f"{v['average_precision']:.4f}" == "0.9922"
    assert label == "average precision 0.9922"
    label, v = pr_label(["auprc"])
    assert f"{v['auprc']:.4f}" == "0.9921"
    assert label == "AUPRC 0.9921"
    label, v = pr_label(["auroc", "auprc", "average_precision"])
    assert label == "AUPRC 0.9921, average precision 0.9922"
    label, _ = pr_label(["auroc"])
    assert label == ""  # no area computed: none is named


def test_every_gate_is_listed(tmp_path):
    """The banner counts gates (overall, per segment, against the baseline); the gates table
    lists each of them, so '8 gates' shows eight."""
    from evalcli.report.markdown import gate_count

    r = sample_result()
    html = render(r, ReportFormat.html)
    banner = re.search(r"<h1>(.*?)</h1>", html)
    assert banner and banner.group(1) == f"✗ 3 of {gate_count(r)} gates failed"
    head, rows = _header_and_rows(_section(html, "gates"))
    assert head == ["metric", "applies to", "gate", "value", "status"]
    assert len(rows) == gate_count(r) == 8
    where = [re.sub(r"<[^>]+>", "", row[1]) for row in rows]
    assert where == ["overall", "overall", "segment region=north", "segment region=west|x",
                     "change from the baseline", "change from the baseline",
                     "change from the baseline", "change from the baseline"]
    status = [re.sub(r"<[^>]+>", "", row[4]) for row in rows]
    assert status.count("FAIL") == len(r.failures) == 3
    seg = rows[3]
    assert seg[0] == "<code>auroc</code>" and seg[2] == "&gt;= 0.85" and "n/a" in seg[3]
    base = rows[4]
    assert base[2] == "drop &lt;= 0.01" and base[3] == "-0.0177"
    # gating off: the same gates, each saying what it would do
    off = sample_result(gating=False)
    html = render(off, ReportFormat.html)
    _, rows = _header_and_rows(_section(html, "gates"))
    status = [re.sub(r"<[^>]+>", "", row[4]) for row in rows]
    assert len(rows) == gate_count(off) == 8
    assert status.count("would fail") == len(off.failures) == 3
    assert status.count("would pass") == 5
    # a real run: 5 gates in binary-segments.yaml's way (one overall, per segment the rest)
    run = _binary_run(tmp_path)
    html = render(run, ReportFormat.html)
    _, rows = _header_and_rows(_section(html, "gates"))
    assert len(rows) == gate_count(run) == 4
    assert sorted(re.sub(r"<[^>]+>", "", row[1]) for row in rows) == [
        "overall", "segment region=a", "segment region=b", "segment region=c"]


def test_a_note_shared_by_metrics_is_written_once():
    """Ranking metrics share their notes (queries left out): written once under the table and
    referred to by number, not repeated on every row."""
    shared = "1 query without a relevant item left out (no_relevant=drop)"
    ms = [MetricResult(name, name, "ranking", {}, "higher", 0.5, notes=[shared])
          for name in ("ndcg@10", "map@10", "mrr")]
    ms.append(MetricResult("auc", "auc", "ranking", {}, "higher", 0.5, notes=["its own"]))
    html = render(_hand_built("ranking", ms), ReportFormat.html)
    metrics = _section(html, "metrics")
    assert metrics.count(shared) == 1 and f"[1] {shared}" in metrics
    _, rows = _header_and_rows(metrics)
    assert [re.sub(r"<[^>]+>", "", row[-1]) for row in rows] == ["[1]", "[1]", "[1]", "its own"]


def test_an_intervals_note_and_reason_are_written_as_the_terminal_writes_them():
    """Why a metric has no interval, or a note on its interval (binned replicates, a bound
    cut to the range), is written in the notes column as the terminal and Markdown write it,
    not only in a tooltip a printed or static report never shows."""
    from evalcli.result import CI

    ms = [MetricResult("auroc", "auroc", "binary", {}, "higher", 0.9,
                       ci=CI(0.85, 0.95, 0.95, "percentile", note="replicates on binned "
                             "scores, shifted by the binning error of the value")),
          MetricResult("ece", "ece", "binary", {}, "lower", 0.1,
                       ci=CI(None, None, 0.95, "percentile", reason="397 of 1000 replicates "
                             "have no value")),
          MetricResult("f1", "f1", "binary", {}, "higher", 0.7,
                       ci=CI(0.6, 0.8, 0.95, "wilson"))]
    metrics = _section(render(_hand_built("binary", ms), ReportFormat.html), "metrics")
    _, rows = _header_and_rows(metrics)
    notes = [re.sub(r"<[^>]+>", "", row[-1]) for row in rows]
    assert notes == ["interval: replicates on binned scores, shifted by the binning error "
                     "of the value", "no interval: 397 of 1000 replicates have no value", ""]


def test_dollar_signs_in_the_data_are_drawn_as_written(tmp_path):
    """Class labels and segment values are data: '$\\foo$' is text, not math for matplotlib
    to parse (an unparsable one made the whole report an internal error)."""
    path = tmp_path / "d.parquet"
    classes = ["$\\frac{$", "$x$", "a_{b"]
    pl.DataFrame({"label": classes * 4, "prediction": classes[1:] + classes * 3 + classes[:1],
                  "shop": ["$\\foo$", "b$"] * 6}).write_parquet(path)
    cfg = {"task": "multiclass", "predictions": str(path), "group_by": "shop",
           "metrics": ["confusion_matrix", "accuracy"]}
    html = render(run_config(parse_config(cfg, "t", tmp_path)), ReportFormat.html)
    assert 'aria-label="confusion_matrix · shop=$\\foo$ heat map"' in html
    assert 'aria-label="accuracy by segment"' in html


def test_no_gates_no_gates_table(tmp_path):
    html = render(_regression_run(tmp_path), ReportFormat.html)
    assert 'id="gates"' not in html


def test_segment_confusion_matrices_are_drawn_not_counted(tmp_path):
    """With group_by, a confusion matrix per segment is a heat map per segment; the segment
    table (numbers) leaves it out instead of showing the segment's row count as its value."""
    r = _multiclass_segments_run(tmp_path)
    html = render(r, ReportFormat.html)
    head, rows = _header_and_rows(_section(html, "segments").split("</table>")[0] + "</table>")
    assert head == ["site", "rows", "accuracy", "f1"]
    assert all(len(row) == 4 for row in rows)
    seg = _section(html, "segments")
    for s in r.segments:
        assert f'aria-label="confusion_matrix · {s.label} heat map"' in seg
    assert 'aria-label="confusion_matrix by segment"' not in seg  # no bars of row counts
    assert 'aria-label="accuracy by segment"' in seg


def test_curves_are_written_as_data(cli, tmp_path):
    from tests.conftest import CONFIGS

    out = cli("run", str(CONFIGS / "binary-quickstart.yaml"), "--curves", str(tmp_path / "c"),
              "--curves-format", "parquet", "-f", "none")
    assert out.exit_code == 0, out.stderr
    roc = pl.read_parquet(tmp_path / "c" / "roc.parquet")
    pr = pl.read_parquet(tmp_path / "c" / "pr.parquet")
    assert roc.columns == ["threshold", "fpr", "tpr"] and pr.columns == [
        "threshold", "recall", "precision"]
    # the exact curve: its trapezoid area is the AUROC, and it agrees with scikit-learn
    from sklearn.metrics import roc_curve

    from tests.conftest import SAMPLES

    p = pl.read_parquet(SAMPLES / "binary_predictions.parquet")
    t = pl.read_csv(SAMPLES / "binary_truth.csv")
    joined = p.join(t, on="id")
    fpr, tpr, _ = roc_curve(joined["label"].to_numpy(), joined["score"].to_numpy(),
                            drop_intermediate=False)
    assert np.allclose(roc["fpr"].to_numpy(), fpr) and np.allclose(roc["tpr"].to_numpy(), tpr)
    report = json.loads(cli("run", str(CONFIGS / "binary-quickstart.yaml"), "-f", "json").stdout)
    auroc = next(m["value"] for m in report["metrics"] if m["id"] == "auroc")
    assert np.trapezoid(roc["tpr"].to_numpy(), roc["fpr"].to_numpy()) == pytest.approx(auroc)
    assert "curves" not in report  # the JSON report stays small


def test_regression_residuals_as_csv(cli, tmp_path):
    from tests.conftest import CONFIGS

    out = cli("run", str(CONFIGS / "regression-quickstart.yaml"), "--curves", str(tmp_path),
              "-f", "none")
    assert out.exit_code == 0, out.stderr
    res = pl.read_csv(tmp_path / "residuals.csv")
    assert res.columns == ["residual", "weight"]
    assert res["weight"].sum() == pytest.approx(out_rows(cli, CONFIGS))


def out_rows(cli: Any, configs: Path) -> int:
    report = json.loads(cli("run", str(configs / "regression-quickstart.yaml"), "-f",
                            "json").stdout)
    return int(report["alignment"]["matched"])


# --------------------------------------------------------------------------- in a browser

def _chromium() -> str | None:
    for name in (os.environ.get("EVALCLI_CHROMIUM"), "chromium", "chromium-browser",
                 "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    """A headless Chromium driven over the DevTools protocol."""

    def __init__(self, exe: str, profile: Path) -> None:
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-extensions",
             "--mute-audio", f"--user-data-dir={profile}", "--remote-debugging-port=0",
             "--window-size=1200,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        for _ in range(300):
            if port_file.exists() and port_file.read_text().strip():
                break
            if self.proc.poll() is not None:
                raise RuntimeError("chromium exited at start")
            time.sleep(0.1)
        self.port = int(port_file.read_text().split()[0])

    def open(self, url: str) -> dict[str, Any]:
        """Load ``url`` in a new tab; return the requests it made and what the page shows."""
        import websocket

        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank",
                                     method="PUT")
        with urllib.request.urlopen(req, timeout=10) as resp:
            target = json.loads(resp.read())
        ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=30,
                                         suppress_origin=True)
        requests: list[str] = []
        logs: list[dict[str, Any]] = []
        seq = [0]

        def call(method: str, **params: Any) -> dict[str, Any]:
            """Send a command; record events while waiting for its answer."""
            seq[0] += 1
            ws.send(json.dumps({"id": seq[0], "method": method, "params": params}))
            while True:
                msg = json.loads(ws.recv())
                if msg.get("method") == "Network.requestWillBeSent":
                    requests.append(msg["params"]["request"]["url"])
                elif msg.get("method") == "Log.entryAdded":
                    logs.append(msg["params"]["entry"])
                elif msg.get("id") == seq[0]:
                    return dict(msg.get("result", {}))

        def evaluate(expression: str) -> Any:
            return call("Runtime.evaluate", expression=expression,
                        returnByValue=True)["result"].get("value")

        for method in ("Network.enable", "Page.enable", "Log.enable", "Runtime.enable"):
            call(method)
        call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while evaluate("location.href + ' ' + document.readyState") != f"{url} complete":
            assert time.monotonic() < deadline, "the page did not load"
            time.sleep(0.05)
        script = """JSON.stringify({
            title: document.title,
            figures: [...document.querySelectorAll('figure svg')].map(s => {
                const r = s.getBoundingClientRect();
                return {label: s.getAttribute('aria-label'), w: r.width, h: r.height,
                        paths: s.querySelectorAll('path').length};
            }),
            tables: document.querySelectorAll('table').length,
            misaligned: [...document.querySelectorAll('table')].flatMap(t => {
                const heads = [...t.querySelectorAll('thead th')];
                return heads.flatMap((th, i) => [...t.querySelectorAll('tbody tr')]
                    .map(tr => tr.children[i])
                    .filter(td => td && getComputedStyle(td).textAlign !==
                                  getComputedStyle(th).textAlign)
                    .map(td => th.textContent + ': ' + td.textContent));
            }),
            banner: (document.querySelector('header h1') || {}).textContent || '',
            gateRows: document.querySelectorAll('#gates tbody tr').length,
        })"""
        page = json.loads(evaluate(script))
        ws.close()
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/close/{target['id']}",
                                    timeout=10):
            pass
        return {"requests": requests, "logs": logs, **page}

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    exe = _chromium()
    if exe is None:  # a missing browser fails the test: it must never pass unchecked
        pytest.fail("no chromium found: the HTML report test drives it headless; install it "
                    "(apt-get install chromium), as scripts/test does")
    b = Browser(exe, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield b
    finally:
        b.close()


def _external(urls: list[str]) -> list[str]:
    return [u for u in urls if not u.startswith(("file:", "data:", "about:"))]


def test_the_request_recorder_sees_requests(browser, tmp_path):
    """A control: a page that loads an image over HTTP is caught by the recorder."""
    page = tmp_path / "control.html"
    page.write_text('<html><body><img src="http://127.0.0.1:59999/x.png"></body></html>')
    seen = browser.open(page.as_uri())
    assert _external(seen["requests"]) == ["http://127.0.0.1:59999/x.png"]


@pytest.mark.parametrize("kind", ["binary", "regression", "multiclass", "ranking", "golden",
                                  "multiclass-segments"])
def test_html_report_in_chromium(browser, tmp_path, kind):
    result = {"binary": lambda: _binary_run(tmp_path),
              "regression": lambda: _regression_run(tmp_path),
              "multiclass": _multiclass, "ranking": _ranking,
              "golden": sample_result,
              "multiclass-segments": lambda: _multiclass_segments_run(tmp_path)}[kind]()
    path = tmp_path / "report.html"
    write(result, path)
    seen = browser.open(path.as_uri())
    assert _external(seen["requests"]) == [], seen["requests"]
    assert [e for e in seen["logs"] if e.get("level") == "error"] == []
    assert seen["title"].startswith(f"evalcli · {result.task}")
    assert seen["tables"] >= 1
    expected = {
        "binary": {"ROC curve", "Precision-recall curve", "auroc by segment"},
        "regression": {"Histogram of residuals"},
        "multiclass": {"confusion_matrix heat map"},
        "ranking": {"metric@k"},
        "golden": {"auroc by segment"},
        "multiclass-segments": {"confusion_matrix heat map", "confusion_matrix · site=north",
                                "confusion_matrix · site=south", "accuracy by segment"},
    }[kind]
    labels = {f["label"] for f in seen["figures"]}
    assert all(any(lab.startswith(e) for lab in labels) for e in expected), labels
    for fig in seen["figures"]:  # drawn: a real size on the page and shapes inside
        assert fig["w"] > 200 and fig["h"] > 100 and fig["paths"] > 10, fig
        assert fig["w"] <= 640, fig  # a lone plot is not blown up to the page's width
    # every header sits over its column: aligned as the column's cells are
    assert seen["misaligned"] == [], seen["misaligned"][:5]
    # the banner's count of gates is the number of gates listed
    gates = re.search(r"(\d+) gates?\b", seen["banner"])
    assert seen["gateRows"] == (int(gates.group(1)) if gates else 0), seen["banner"]


def test_a_wide_segment_table_scrolls_in_its_section_and_unplotted_metrics_are_named(
        tmp_path):
    """Ten metrics by segment make a table wider than the page: it scrolls inside its
    section (the page keeps its width); the plots, of the first eight metrics, say which
    metrics have none."""
    metrics = ["accuracy", "precision", "recall", "f1", "auroc", "average_precision",
               "log_loss", "brier", "mcc", "balanced_accuracy"]
    html = render(_binary_run(tmp_path, metrics), ReportFormat.html)
    assert ".wide{overflow-x:auto}" in html
    seg = _section(html, "segments")
    assert re.search(r'<div class="wide"><table>.*?</table></div>', seg, flags=re.DOTALL)
    assert seg.count("<figure>") == 8
    note = re.search(r"Plots of the first 8 metrics[^<]*\(no plot: ([^)]*)\)", seg)
    assert note and note.group(1).split(", ") == ["mcc", "balanced_accuracy"]
