"""``evalcli schema``: the JSON Schema of the config file, for editors."""

from __future__ import annotations

import json

import typer

from evalcli.cli.common import examples

EPILOG = examples("evalcli schema > evalcli.schema.json")


def schema() -> None:
    """Print the JSON Schema of the config file.

    Save it and point your editor's YAML plugin at it for completion and checks: with the
    YAML language server, a first line '# yaml-language-server: $schema=evalcli.schema.json'
    in the config does it.
    """
    from evalcli.config import json_schema

    typer.echo(json.dumps(json_schema(), indent=2))
