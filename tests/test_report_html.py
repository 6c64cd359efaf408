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


def _binary_run(tmp_path: Path) -> RunResult:
    rng = np.random.default_rng(1)
    n = 2000
    y = rng.integers(0, 2, n)
    df = pl.DataFrame({"id": range(n), "label": y, "region": rng.choice(["a", "b", "c"], n),
                       "score": np.clip(0.4 * y + rng.normal(0.3, 0.2, n), 0, 1)})
    path = tmp_path / "b.parquet"
    df.write_parquet(path)
    cfg = {"task": "binary", "predictions": str(path), "group_by": "region",
           "metrics": [{"metric": "auroc", "min": 0.7, "segments": {"min": 0.7}}, "auprc",
                       "f1"]}
    return run_config(parse_config(cfg, "t", tmp_path), curves=True)


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


@pytest.mark.parametrize("kind", ["binary", "regression", "multiclass", "ranking", "golden"])
def test_html_report_in_chromium(browser, tmp_path, kind):
    result = {"binary": lambda: _binary_run(tmp_path),
              "regression": lambda: _regression_run(tmp_path),
              "multiclass": _multiclass, "ranking": _ranking,
              "golden": sample_result}[kind]()
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
    }[kind]
    labels = {f["label"] for f in seen["figures"]}
    assert all(any(lab.startswith(e) for lab in labels) for e in expected), labels
    for fig in seen["figures"]:  # drawn: a real size on the page and shapes inside
        assert fig["w"] > 200 and fig["h"] > 100 and fig["paths"] > 10, fig
