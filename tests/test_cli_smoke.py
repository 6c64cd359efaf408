"""End-to-end through the CLI on the bundled configs: exit codes, stdout purity."""

from __future__ import annotations

import json

from tests.conftest import CONFIGS


def test_quickstart_prints_a_table(cli):
    r = cli("run", str(CONFIGS / "binary-quickstart.yaml"))
    assert r.exit_code == 0, r.stderr
    assert "auroc" in r.stdout and "0.9947" in r.stdout


def test_json_stdout_is_only_the_report(cli):
    r = cli("run", str(CONFIGS / "binary-gated.yaml"), "--format", "json")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["schema_version"] == 1
    assert [m["id"] for m in report["metrics"]][:4] == [
        "auroc", "average_precision", "log_loss", "recall[threshold=0.3]"]
