"""The README's `python3 dev.py manage` examples name commands that exist and give options those commands
take: an example with a missing command or a wrong option fails here rather than in a reader's shell.
Each is checked in this process, by the command's own parser; nothing runs."""

from __future__ import annotations

import re

import pytest
from django.core.management import CommandError, get_commands, load_command_class

from tests.readme import shell_commands

DEV_PY_MANAGE = ["python3", "dev.py", "manage"]
# What a `$VAR` placeholder stands for: a word every kind of option takes (text, a number, a path).
SAMPLE_VALUE = "1"


def readme_manage_commands() -> list[list[str]]:
    """The arguments after `python3 dev.py manage` of each README command run that way, past the variables
    it sets first (`OPENAI_API_KEY=... python3 dev.py manage run_protocol ...`)."""
    found = []
    for words in shell_commands():
        while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
            words = words[1:]
        if words[:3] == DEV_PY_MANAGE:
            found.append([re.sub(r"\$\{?\w+\}?", SAMPLE_VALUE, word) for word in words[3:]])
    return found


def check_manage_command(arguments: list[str]) -> None:
    """Fail unless `manage.py *arguments` names a command and its options parse."""
    name, *options = arguments
    app = get_commands().get(name)
    if app is None:
        pytest.fail(f"README: `python3 dev.py manage {name}`: there is no such command")
    try:
        load_command_class(app, name).create_parser("manage.py", name).parse_args(options)
    except CommandError as error:
        pytest.fail(f"README: `python3 dev.py manage {' '.join(arguments)}`: {error}")


README_MANAGE_COMMANDS = readme_manage_commands()


def test_the_readme_runs_manage_py_through_dev_py_manage_only():
    """`python manage.py` fails on a fresh checkout (no Django outside the venv; with DEBUG off, no
    secrets), and `.venv/bin/python manage.py` too unless DEBUG=1 is said."""
    assert [words for words in shell_commands() if any("manage.py" in word for word in words)] == []
    assert len(README_MANAGE_COMMANDS) >= 10, README_MANAGE_COMMANDS


@pytest.mark.parametrize("arguments", README_MANAGE_COMMANDS, ids=lambda arguments: arguments[0])
def test_each_readme_manage_command_exists_and_takes_its_options(arguments):
    check_manage_command(arguments)


@pytest.mark.parametrize(
    "arguments",
    [["scoring", "predictions.jsonl"], ["score", "predictions.jsonl", "--versions", "demo-1.0"], ["rescore"]],
    ids=["a missing command", "a wrong option", "a required option left out"],
)
def test_the_check_fails_an_example_with(arguments):
    with pytest.raises(pytest.fail.Exception, match="README: `python3 dev.py manage"):
        check_manage_command(arguments)
