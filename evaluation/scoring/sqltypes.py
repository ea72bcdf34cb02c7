"""The MySQL types the transpiler reasons with: `SqlType`, and the type of a column from its declaration."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from evaluation.scoring.collations import collation_charset

# What a value is for MySQL's comparison and arithmetic rules (see SqlType).
SqlKind = Literal["text", "date", "datetime", "time", "exact", "float"]

# MySQL's div_precision_increment: `/` and AVG of exact numbers get this many more decimals.
DIV_PRECISION_INCREMENT = 4


@dataclass(frozen=True)
class SqlType:
    """What a value is for MySQL's comparison and arithmetic rules.

    kind is "text", "date", "datetime", "time", "exact" (integers and DECIMAL, with `scale` decimals)
    or "float" (FLOAT, DOUBLE). An exact `integer` is computed with BIGINT arithmetic, signed or `unsigned`
    (DECIMAL(10,0) is exact, but no integer); text has its `charset` ("utf8mb4", "utf8mb3") when known. An
    ENUM or SET is text with its `members` in their declared order (`is_set` for a SET): it compares with
    a string as its text, and is a number where MySQL wants one (`typed_rewrites`).
    """

    kind: SqlKind
    scale: int = 0
    integer: bool = False
    unsigned: bool = False
    charset: str | None = None
    members: tuple[str, ...] = ()
    is_set: bool = False

    @property
    def is_number(self) -> bool:
        return self.kind in ("exact", "float")

    @property
    def is_temporal(self) -> bool:
        return self.kind in TEMPORAL_KINDS


TEMPORAL_KINDS: tuple[SqlKind, ...] = ("date", "datetime", "time")
TEXT = SqlType("text")
FLOAT = SqlType("float")
INTEGER = SqlType("exact", integer=True)
UNSIGNED_INTEGER = SqlType("exact", integer=True, unsigned=True)
# MySQL's connection character set, a string literal's: utf8mb4 for a MySQL 8.0 client.
CONNECTION_CHARSET = "utf8mb4"
LITERAL_TEXT = SqlType("text", charset=CONNECTION_CHARSET)
_DECLARED_KINDS: dict[str, SqlKind] = {
    "DATE": "date",
    "DATETIME": "datetime",
    "TIMESTAMP": "datetime",
    "TIME": "time",
    "FLOAT": "float",
    "DOUBLE": "float",
    "REAL": "float",
    "DECIMAL": "exact",
    "NUMERIC": "exact",
    "DEC": "exact",
    "FIXED": "exact",
    "ENUM": "text",
    "SET": "text",
    "JSON": "text",
}


# Integer types that are unsigned whatever is written (MySQL's YEAR is a TINYINT UNSIGNED, SERIAL a BIGINT
# UNSIGNED, BIT reads as an unsigned number); UNSIGNED is CAST's.
_UNSIGNED_BASES = ("BIT", "YEAR", "SERIAL", "UNSIGNED")
_UNSIGNED = re.compile(r"\b(UNSIGNED|ZEROFILL)\b", re.IGNORECASE)
_COLLATE = re.compile(r"\bCOLLATE\s+[\"`']?(\w+)", re.IGNORECASE)


def type_of_declared(declared: str) -> SqlType | None:
    """The type of a column declared as `declared` (MySQL or SQLite spelling, with the column's collation,
    if any, as `dialect.read_schema` gives it), None when unknown."""
    match = re.match(r"\s*(\w+)[^(]*(?:\((\s*\d+)?\s*(?:,\s*(\d+))?)?", declared)
    if match is None:
        return None
    base = match.group(1).upper()
    kind = _DECLARED_KINDS.get(base)
    if kind == "exact":
        return SqlType("exact", int(match.group(3) or 0))
    if kind == "text":
        text = _text(declared)
        if base in ("ENUM", "SET"):
            return replace(text, members=_members(declared), is_set=base == "SET")
        return text
    if kind is not None:
        return SqlType(kind)
    if "INT" in base or base in ("BOOL", "BOOLEAN", "SIGNED", *_UNSIGNED_BASES):
        return UNSIGNED_INTEGER if base in _UNSIGNED_BASES or _UNSIGNED.search(declared) else INTEGER
    if "CHAR" in base or "TEXT" in base or "CLOB" in base:
        return _text(declared)
    return None


def _text(declared: str) -> SqlType:
    # The last COLLATE: an ENUM's or SET's members come before it, and may hold the word.
    collations = _COLLATE.findall(declared)
    return SqlType("text", charset=collation_charset(collations[-1]) if collations else None)


# A member in MySQL's quotes: '' for a quote, a backslash before any character.
_MEMBER = re.compile(r"'((?:[^'\\]|''|\\.)*)'", re.DOTALL)
_MEMBER_ESCAPE = re.compile(r"''|\\(.)", re.DOTALL)
# MySQL's escape sequences; a backslash before any other character stands for that character.
_ESCAPED = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}


def _members(declared: str) -> tuple[str, ...]:
    """The members of `ENUM('a','b') ...` or `SET(...)`, in their declared order."""
    listed = declared.partition("(")[2]
    return tuple(_MEMBER_ESCAPE.sub(_unescaped, quoted) for quoted in _MEMBER.findall(listed))


def _unescaped(escape: re.Match[str]) -> str:
    character = escape.group(1)
    return "'" if character is None else _ESCAPED.get(character, character)
