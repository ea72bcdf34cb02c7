"""A MySQL dump as the statements MySQL 8.0 executes: what the `mysql` client sends, as the server reads it.

mysqldump writes a script for the `mysql` client, not plain SQL. `read_dump` reads it as the two read it:

- `DELIMITER x`, a command of the client on a line of its own before a statement, makes `x` the text that
  ends statements: mysqldump writes stored programs between `DELIMITER ;;` and `DELIMITER ;`, so that the
  semicolons of their bodies do not end them. A delimiter inside a string, a quoted name or a comment ends
  nothing.
- Versioned comments are code for the servers they name: `/*!NNNNN text */` is `text` for a server of
  version NNNNN or later (five digits, MySQL's rule), here MySQL 8.0.40 (`MYSQL_VERSION`: 80040), and a
  comment for an older one; `/*! text */`, without a number, is `text` for every MySQL; `/*M!NNNNN text */`
  is MariaDB's and a comment to MySQL. What a statement's `text` holds is what MySQL 8.0 reads: the text of
  the comments that apply, without their markers, and nothing of the others.

Each statement also says where the dump writes it (`start`, `end`, and `stop` past its delimiter), for
what must send or keep it as written (the MariaDB reference runs its own versioned comments).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from evaluation.scoring.statements import Statement

# The server whose reading is followed: MySQL 8.0.40 (a versioned comment applies up to this number).
MYSQL_VERSION = 80040


class DumpError(ValueError):
    """A statement of a dump cannot be loaded: "line 123: statement 7 (CREATE TABLE ...): why"."""

    def __init__(self, statement: Statement, why: str) -> None:
        self.statement_number = statement.number
        self.line = statement.line
        self.why = why
        super().__init__(
            f"line {statement.line}: statement {statement.number} ({_head(statement.text)}): {why}"
        )


def _head(text: str) -> str:
    words = text.split()
    head = " ".join(words[:3]) + (" ..." if len(words) > 3 else "")
    return head if len(head) <= 80 else head[:77] + "..."


@dataclass(frozen=True)
class DumpStatement(Statement):
    """A statement as MySQL 8.0 reads it (`text`), and where the dump writes it."""

    start: int  # its first character in the dump (a versioned comment's marker, if it starts with one)
    end: int  # just past its last character, its delimiter excluded
    stop: int  # just past its delimiter (`end` when the dump ends without one)


_DELIMITER_COMMAND = re.compile(
    r"[ \t]*DELIMITER(?![\w$])(?:[ \t]+(?P<delimiter>[^\s]+))?[^\n]*", re.IGNORECASE
)


def read_dump(sql: str) -> list[DumpStatement]:
    """The statements of a MySQL dump, in order; raises DumpError for a DELIMITER command without one.

    An unterminated string or comment runs to the end of the dump, so that the reading of the last
    statement reports it. Statements that hold nothing MySQL 8.0 reads (only comments) are dropped.
    """
    statements: list[DumpStatement] = []
    delimiter = ";"
    pieces: list[str] = []  # the statement so far, as MySQL 8.0 reads it
    significant = 0  # how many of the pieces to keep: comments and blanks after the last are dropped
    start = end = -1  # where its written text lies (start < 0: nothing significant yet)
    line = first_line = 1
    in_versioned = False
    position = 0
    at_line_start = True

    def finish(stop: int) -> None:
        text = "".join(pieces[:significant]).strip()
        if text:
            statements.append(DumpStatement(len(statements) + 1, first_line, text, start, end, stop))

    while position < len(sql):
        if start < 0 and at_line_start:
            command = _DELIMITER_COMMAND.match(sql, position)
            if command is not None:
                delimiter = command.group("delimiter") or ""
                if not delimiter or "\\" in delimiter:
                    raise DumpError(
                        Statement(len(statements) + 1, line, command.group().strip()),
                        "DELIMITER must be followed by the text that ends statements (no backslash)",
                    )
                position = command.end()
                continue
        token = _tokens(delimiter, start >= 0).match(sql, position)
        assert token is not None  # the last alternative matches any character
        kind, text = token.lastgroup, token.group()
        if kind == "delimiter":
            if start >= 0:
                finish(token.end())
            pieces, significant, start, end, in_versioned = [], 0, -1, -1, False
        elif kind == "versioned" and not _applies(text):
            close = sql.find("*/", token.end())
            skipped_to = len(sql) if close < 0 else close + 2
            newlines = sql.count("\n", position, skipped_to)
            line += newlines
            pieces.append(" " + "\n" * newlines)  # lines keep their numbers in the statement
            position, at_line_start = skipped_to, False
            continue
        elif kind in ("blank", "comment") or (kind == "plain" and text.isspace()):
            if start >= 0:
                pieces.append(text)
        elif kind == "plain":  # within a statement: code, blanks and closed strings, as one piece
            pieces.append(text)
            significant, end = len(pieces), position + len(text.rstrip())
        else:
            if start < 0:
                start, first_line = position, line
            if kind == "versioned":
                in_versioned, text = True, " "
            elif kind == "close" and in_versioned:
                in_versioned, text = False, " "
            pieces.append(text)
            significant, end = len(pieces), token.end()
        line += token.group().count("\n")
        at_line_start = token.group().endswith("\n")
        position = token.end()
    if start >= 0:
        finish(end)  # no delimiter: it stops where it ends
    return statements


_VERSION = re.compile(r"/\*(M?)!(\d{5})?")


def _applies(marker: str) -> bool:
    """Whether MySQL 8.0.40 reads the text of a versioned comment that opens with `marker`."""
    found = _VERSION.match(marker)
    assert found is not None
    mariadb_only, version = found.groups()
    return not mariadb_only and (version is None or int(version) <= MYSQL_VERSION)


@cache
def _tokens(delimiter: str, in_statement: bool) -> re.Pattern[str]:
    """The tokens of MySQL's text while `delimiter` ends statements; the last alternative takes any one
    character, so that every position matches. Within a statement, where no DELIMITER command can come,
    code, blanks and closed strings are read as one `plain` token (what most of a dump's INSERTs are)."""
    first = re.escape(delimiter[0])
    code = rf"""[^\s'"`/\#*\-{first}]+"""
    # Possessive: an unclosed string fails at once, rather than after trying every way to cut it up.
    closed = r"""'(?:[^'\\]++|\\.|'')*+' | "(?:[^"\\]++|\\.|"")*+" | `(?:[^`]++|``)*+`"""
    plain = rf"(?P<plain> (?: {code} | \s+ | {closed})+) |" if in_statement else ""
    return re.compile(
        rf"""{plain} (?P<versioned> /\*M?!\d{{0,5}})
        | (?P<comment> /\*.*?(?:\*/|\Z) | --(?=\s|\Z)[^\n]* | \#[^\n]*)
        | (?P<quoted> '(?:[^'\\]+|\\.?|'')*(?:'|\Z) | "(?:[^"\\]+|\\.?|"")*(?:"|\Z) | `(?:[^`]+|``)*(?:`|\Z))
        | (?P<delimiter> {re.escape(delimiter)})
        | (?P<close> \*/)
        | (?P<blank> \s+)
        | (?P<code> {code})
        | (?P<char> .)""",
        re.DOTALL | re.VERBOSE,
    )
