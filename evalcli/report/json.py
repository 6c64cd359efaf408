"""The JSON report: the text of :func:`evalcli.result.to_dict` (the machine-readable contract,
DESIGN.md "User-facing contract")."""

from __future__ import annotations

import json

from evalcli.result import RunResult, to_dict


def render(r: RunResult) -> str:
    return json.dumps(to_dict(r), indent=2, ensure_ascii=False, default=str) + "\n"
