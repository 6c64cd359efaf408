"""``--help`` reads like a person's tool at 80 columns (issue 16, item 6).

Every command: plain flags (no ``<bool>``), metavars instead of Python types (no ``<str>``,
``<list[Path]>``), nothing truncated or wider than the terminal, descriptions wrapped by
paragraph (never broken where the docstring's line ended), and an example block whose commands
each sit whole on one line.
"""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from evalcli.cli import app

COMMANDS = [(), ("run",), ("compare",), ("validate",), ("diff",), ("schema",), ("metrics",),
            ("metrics", "show")]
TYPE_MARK = re.compile(r"<[\w|\[\].,]+>")  # Typer's type column: <str>, <file>, <a|b>


def help_text(command: tuple[str, ...], columns: int) -> str:
    r = CliRunner().invoke(app, [*command, "--help"],
                           env={"NO_COLOR": "1", "COLUMNS": str(columns), "TERM": "dumb"})
    assert r.exit_code == 0, r.output
    return r.stdout


def click_command(command: tuple[str, ...]) -> typer.core.TyperCommand | typer.core.TyperGroup:
    cmd = typer.main.get_command(app)
    for name in command:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    return cmd  # type: ignore[return-value]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "evalcli")
def test_help_at_80_columns_has_no_python_types_and_no_truncation(command):
    text = help_text(command, 80)
    for line in text.splitlines():
        assert len(line) <= 80, line
    for bad in ("<bool>", "list[", "Path]", "…", "<str>"):
        assert bad not in text, (bad, text)
    assert not TYPE_MARK.search(text), TYPE_MARK.search(text)
    assert "Examples:" in text
    cmd = click_command(command)
    for param in cmd.get_params(typer.Context(cmd)):
        for opt in param.opts:
            if opt.startswith("--"):
                assert re.search(rf"{re.escape(opt)}(?![\w-])", text), (opt, text)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "evalcli")
def test_every_option_and_argument_names_its_value(command):
    """Value options and arguments have an explicit metavar; flags show none."""
    cmd = click_command(command)
    for param in cmd.get_params(typer.Context(cmd)):
        flag = isinstance(param, typer.core.TyperOption) and param.is_flag
        if flag:
            assert not param.metavar, param.name
        else:
            assert param.metavar in ("FILE.py", param.metavar.upper()), param.name
            assert param.metavar, param.name


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "evalcli")
def test_descriptions_wrap_by_paragraph(command):
    """At 200 columns each paragraph of a command's description is one line: the source's
    line breaks inside a paragraph do not reach the screen."""
    cmd = click_command(command)
    text = help_text(command, 200)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    for paragraph in (cmd.help or "").split("\n\n"):
        flat = " ".join(paragraph.split())
        assert any(flat in line for line in lines), (flat, text)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "evalcli")
def test_examples_are_whole_lines_at_80_columns(command):
    text = help_text(command, 80)
    examples = text[text.index("Examples:"):].splitlines()[1:]
    shown = [line.strip() for line in examples if line.strip()]
    # each example is one whole command line (a pipe into evalcli counts)
    assert shown and all(line.startswith("$ ") and ("$ evalcli " in line or "| evalcli " in line)
                         for line in shown), shown
    epilog = click_command(command).epilog or ""
    written = [line.strip() for line in epilog.split("Examples:")[1].splitlines() if line.strip()]
    assert shown == [w.replace("\\[", "[") for w in written]


def test_the_command_list_is_the_only_thing_after_commands():
    """Below the Commands panel, no line reads like a command name (the example lines start
    with a prompt), so a tool listing the commands from --help finds exactly the commands."""
    text = help_text((), 80)
    after = text[text.index("Commands"):].splitlines()[1:]
    names = {line.strip("│| ").split()[0] for line in after if re.match(r"^[│| ]+[a-z]", line)}
    assert names == {"run", "compare", "validate", "diff", "schema", "metrics"}


def test_a_flag_takes_no_value():
    r = CliRunner().invoke(app, ["validate", "--quiet", "true"], env={"NO_COLOR": "1"})
    assert r.exit_code == 2  # 'true' is read as the CONFIG argument, then an extra one


def test_usage_names_arguments_by_their_metavar():
    text = help_text(("compare",), 80)
    assert "Usage: evalcli compare [OPTIONS] PREDICTIONS [TRUTH]" in text
    assert "{" not in text.splitlines()[1]
