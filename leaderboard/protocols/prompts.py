"""The messages a protocol sends: its turns filled with a database's dump and a question's text.

Placeholders are replaced in one pass, so a dump or a question holding `{question}` or braces of its own
is sent as it is.
"""

from __future__ import annotations

import re

from leaderboard.protocols.catalogue import Protocol

Message = dict[str, str]

_PLACEHOLDER = re.compile(r"\{(dump|question)\}")


def fill(template: str, **values: str) -> str:
    return _PLACEHOLDER.sub(lambda match: values[match[1]], template)


def database_messages(protocol: Protocol, *, dump: str) -> list[Message]:
    """The conversation that asks for a database's interpretation (only for a protocol with a first turn)."""
    if protocol.database_turn is None:
        raise ValueError(f"{protocol.id} has no database turn")
    return [{"role": "user", "content": fill(protocol.database_turn, dump=dump)}]


def question_messages(
    protocol: Protocol, *, dump: str, question: str, interpretation: str | None
) -> list[Message]:
    """One question's conversation: the database's first turn and the interpretation the model gave, if the
    protocol has them, then the question's turn."""
    asked = {"role": "user", "content": fill(protocol.question_turn, dump=dump, question=question)}
    if protocol.database_turn is None:
        return [asked]
    if interpretation is None:
        raise ValueError(f"{protocol.id} needs the database's interpretation")
    return [
        *database_messages(protocol, dump=dump),
        {"role": "assistant", "content": interpretation},
        asked,
    ]
