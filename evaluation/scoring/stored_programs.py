"""The stored programs and views of a MySQL dump, read from their CREATE and DROP statements.

sqlglot reads none of MySQL's CREATE PROCEDURE, FUNCTION, EVENT or TRIGGER (nor their compound bodies),
so `read_program` reads their heads itself, from a statement as MySQL 8.0 reads it (`dump_statements`:
versioned comments applied), in the forms MySQL 8.0's grammar allows and mysqldump writes:

    CREATE [OR REPLACE] [ALGORITHM = ...] [DEFINER = user] [SQL SECURITY ...]
        VIEW name [(columns)] AS select [WITH [CASCADED | LOCAL] CHECK OPTION]
    CREATE [DEFINER = user] TRIGGER [IF NOT EXISTS] name {BEFORE | AFTER} {INSERT | UPDATE | DELETE}
        ON table FOR EACH ROW [{FOLLOWS | PRECEDES} other] body
    CREATE [DEFINER = user] [AGGREGATE] {PROCEDURE | FUNCTION | EVENT} [IF NOT EXISTS] name ...
    DROP {VIEW | TRIGGER | PROCEDURE | FUNCTION | EVENT} [IF EXISTS] name [, name ...]

A view's SELECT and a trigger's body are kept as written, for the loader to translate or refuse by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ROUTINE_KINDS = ("PROCEDURE", "FUNCTION", "EVENT")


@dataclass(frozen=True)
class Routine:
    """A procedure, function or event: it changes nothing until called, so a copy leaves it out."""

    kind: str  # one of ROUTINE_KINDS
    name: str


@dataclass(frozen=True)
class Trigger:
    name: str
    table: str
    timing: str  # BEFORE or AFTER
    event: str  # INSERT, UPDATE or DELETE
    body: str  # a statement, or BEGIN ... END, as written


@dataclass(frozen=True)
class View:
    name: str
    columns: tuple[str, ...]  # the column list written after its name; () when there is none
    select: str  # the SELECT, as written
    check_option: bool  # WITH CHECK OPTION: refuses writes through the view, changes no read


@dataclass(frozen=True)
class Dropped:
    """A DROP of views or stored programs: `kind` is VIEW, TRIGGER or one of ROUTINE_KINDS."""

    kind: str
    names: tuple[str, ...]


Program = Routine | Trigger | View | Dropped

_NAME = r"(?:`(?:[^`]|``)*`|\"(?:[^\"]|\"\")*\"|[\w$]+)"
_QUALIFIED = rf"(?:{_NAME}\s*\.\s*)?(?P<name>{_NAME})"
_USER = rf"(?:CURRENT_USER(?:\s*\(\s*\))?|(?:{_NAME}|'(?:[^'\\]|\\.|'')*')(?:\s*@\s*(?:{_NAME}|'(?:[^'\\]|\\.|'')*'))?)"
_PREFIX = (
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:ALGORITHM\s*=\s*\w+\s+)?"
    rf"(?:DEFINER\s*=\s*{_USER}\s+)?(?:SQL\s+SECURITY\s+\w+\s+)?"
)
_CREATE = re.compile(
    rf"{_PREFIX}(?:AGGREGATE\s+)?(?P<kind>VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT)\s+"
    rf"(?:IF\s+NOT\s+EXISTS\s+)?{_QUALIFIED}",
    re.IGNORECASE | re.DOTALL,
)
_TRIGGER = re.compile(
    rf"\s+(?P<timing>BEFORE|AFTER)\s+(?P<event>INSERT|UPDATE|DELETE)\s+ON\s+(?:{_NAME}\s*\.\s*)?(?P<table>{_NAME})"
    rf"\s+FOR\s+EACH\s+ROW\s+(?:(?:FOLLOWS|PRECEDES)\s+{_NAME}\s+)?(?P<body>.+)",
    re.IGNORECASE | re.DOTALL,
)
_VIEW = re.compile(
    r"\s*(?:\((?P<columns>[^()]*)\))?\s*AS\s+(?P<select>.+?)"
    r"(?P<check>\s+WITH\s+(?:CASCADED\s+|LOCAL\s+)?CHECK\s+OPTION)?\s*\Z",
    re.IGNORECASE | re.DOTALL,
)
_DROP = re.compile(
    r"DROP\s+(?P<kind>VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT)\s+(?:IF\s+EXISTS\s+)?(?P<names>.+)",
    re.IGNORECASE | re.DOTALL,
)


class ProgramError(ValueError):
    """A CREATE of a view or stored program whose head cannot be read: the message says what is wrong."""


def read_program(text: str) -> Program | None:
    """The view, stored program or DROP of them that `text` (one statement) creates or drops; None when it
    is none of those. Raises ProgramError for a view or trigger whose head is not MySQL's."""
    created = _CREATE.match(text)
    if created is not None:
        kind, name = created.group("kind").upper(), unquote(created.group("name"))
        rest = text[created.end() :]
        if kind == "TRIGGER":
            return _trigger(name, rest)
        if kind == "VIEW":
            return _view(name, rest)
        return Routine(kind, name)
    dropped = _DROP.match(text)
    if dropped is not None:
        names = [part.strip() for part in _split_names(dropped.group("names"))]
        return Dropped(dropped.group("kind").upper(), tuple(unquote(_last_part(n)) for n in names if n))
    return None


def _trigger(name: str, rest: str) -> Trigger:
    found = _TRIGGER.match(rest)
    if found is None:
        raise ProgramError(
            f"trigger {name}: expected BEFORE or AFTER, INSERT, UPDATE or DELETE, ON a table, FOR EACH ROW"
        )
    return Trigger(
        name,
        unquote(found.group("table")),
        found.group("timing").upper(),
        found.group("event").upper(),
        found.group("body").strip(),
    )


def _view(name: str, rest: str) -> View:
    found = _VIEW.match(rest)
    if found is None:
        raise ProgramError(f"view {name}: expected AS and a SELECT")
    columns = found.group("columns")
    return View(
        name,
        tuple(unquote(part.strip()) for part in _split_names(columns)) if columns else (),
        found.group("select").strip(),
        found.group("check") is not None,
    )


def _split_names(text: str) -> list[str]:
    return re.findall(rf"(?:{_NAME}\s*\.\s*)*{_NAME}", text)


def _last_part(qualified: str) -> str:
    parts: list[str] = re.findall(_NAME, qualified)
    return parts[-1]


def unquote(name: str) -> str:
    """A name as MySQL reads it: `a``b` -> a`b, "a" -> a (ANSI quotes), bare names as they are."""
    if len(name) >= 2 and name[0] == name[-1] and name[0] in '`"':
        return name[1:-1].replace(name[0] * 2, name[0])
    return name
