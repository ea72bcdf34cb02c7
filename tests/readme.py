"""The README's shell examples as the tests read them: the commands of its ```sh blocks."""

from __future__ import annotations

import re
import shlex

from tests.processes import ROOT

# A ```sh block at any indentation (inside a list item too), closed at the same indentation.
SH_BLOCK = re.compile(r"^( *)```sh\n(.*?)^\1```", re.S | re.M)


def shell_command_texts(*, section: str | None = None) -> list[str]:
    """Every command of the README's ```sh blocks, or of one `## section`'s, as written: its continuation
    lines and its comment included, for a shell to run. A command goes on over lines after a `\\` or inside
    a quotation."""
    text = (ROOT / "README.md").read_text()
    if section is not None:
        text = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    commands = []
    for _, block in SH_BLOCK.findall(text):
        pending = ""
        for line in block.splitlines(keepends=True):
            pending += line
            if pending.endswith("\\\n"):  # continued on the next line
                continue
            try:
                words = shlex.split(pending.replace("\\\n", " "), comments=True)
            except ValueError:  # "No closing quotation": the quoted text goes on
                continue
            if words:
                commands.append(pending)
            pending = ""
    return commands


def shell_commands(*, section: str | None = None) -> list[list[str]]:
    """Every command of the README's ```sh blocks, or of one `## section`'s, split into words as the shell
    splits them, comments dropped."""
    return [
        shlex.split(text.replace("\\\n", " "), comments=True) for text in shell_command_texts(section=section)
    ]
