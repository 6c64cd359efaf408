"""``evalcli schema``: the JSON Schema of the config file, for editors."""

from __future__ import annotations

import json

import typer


def schema() -> None:
    """Print the JSON Schema of the config file.

    Save it and point your editor's YAML plugin at it for completion and checks.
    """
    from evalcli.config import json_schema

    typer.echo(json.dumps(json_schema(), indent=2))
