"""SQL text as statements, and one statement as a sqlglot syntax tree.

`split_statements` cuts a text (a query, a dump) at the semicolons that end statements; `parse_one` reads
exactly one statement. Both know the two sources the portal accepts, MySQL and SQLite. A query that cannot
be read raises `TranspileError`, the one error of the transpiler (`dialect.to_sqlite` raises it too).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.tokenizer_core import Token

from evaluation.scoring.vocabulary import DIALECTS

# Given a dialect's name, sqlglot makes a new dialect object at each call: these are made once.
SQLGLOT_DIALECTS: dict[str, Dialect] = {source: Dialect.get_or_raise(source) for source in DIALECTS}


class TranspileError(ValueError):
    """The query cannot be turned into SQLite; the message says why, about the query given."""


def check_source(source: str) -> str:
    """`source` itself when it is one of the vocabulary's DIALECTS; raises ValueError otherwise."""
    if source not in DIALECTS:
        raise ValueError(f"unknown SQL dialect {source!r}; expected one of {', '.join(DIALECTS)}")
    return source


@dataclass(frozen=True)
class Statement:
    number: int  # 1-based among the non-empty statements of the text
    line: int  # 1-based line of its first character
    text: str  # without the terminating semicolon and surrounding blanks or comments


def split_statements(sql: str, *, source: str = "mysql") -> list[Statement]:
    """Split at the semicolons that end statements, not those inside strings, identifiers or comments.

    MySQL reads backslash escapes in strings and `#` comments, and `--` starts a comment only before a
    blank; SQLite has none of that. An unterminated string or comment runs to the end of the text, so the
    parser of the last statement reports it. Statements holding only comments are dropped.
    """
    statements = []
    line = 1
    counted = 0  # line is the line of this position
    for number, (begin, finish) in enumerate(statement_spans(sql, source=source), start=1):
        line += sql.count("\n", counted, begin)
        counted = begin
        statements.append(Statement(number, line, sql[begin:finish]))
    return statements


def statement_spans(sql: str, *, source: str = "mysql") -> list[tuple[int, int]]:
    """Where each statement of `split_statements` lies in `sql`: (start, end), blanks and comments around
    it and its semicolon excluded."""
    spans: list[tuple[int, int]] = []
    start = end = -1
    # One regular expression does the scanning: a query without strings or comments is a single token.
    for token in _TOKENS[check_source(source)].finditer(sql):
        kind = token.lastgroup
        if kind == "semicolon":
            if start >= 0:
                spans.append((start, end))
            start = -1
        elif kind == "quoted":
            start = token.start() if start < 0 else start
            end = token.end()
        elif kind == "code":
            code = token.group()
            stripped = code.lstrip()
            if stripped:
                start = token.start() + len(code) - len(stripped) if start < 0 else start
                end = token.start() + len(stripped.rstrip()) + len(code) - len(stripped)
    if start >= 0:
        spans.append((start, end))
    return spans


def _tokens(*, mysql: bool) -> re.Pattern[str]:
    """Comments, quoted strings and names, semicolons, and runs of anything else (`code`).

    An unterminated comment or quote runs to the end of the text.
    """
    if mysql:
        line_comment = r"--(?=\s|\Z)[^\n]*\n? | \#[^\n]*\n?"
        quoted = r"'(?:[^'\\]+|\\.?|'')*(?:'|\Z) | \"(?:[^\"\\]+|\\.?|\"\")*(?:\"|\Z)"
        code = r"(?:[^;'\"`/\#-]+ | /(?!\*) | -(?!-(?:\s|\Z)))+"
    else:
        line_comment = r"--[^\n]*\n?"
        quoted = r"'(?:[^']+|'')*(?:'|\Z) | \"(?:[^\"]+|\"\")*(?:\"|\Z)"
        code = r"(?:[^;'\"`/-]+ | /(?!\*) | -(?!-))+"
    return re.compile(
        rf"""(?P<comment> /\*.*?(?:\*/|\Z) | {line_comment})
        | (?P<quoted> {quoted} | `(?:[^`]+|``)*(?:`|\Z))
        | (?P<semicolon> ;)
        | (?P<code> {code})""",
        re.DOTALL | re.VERBOSE,
    )


_TOKENS = {"mysql": _tokens(mysql=True), "sqlite": _tokens(mysql=False)}


def code_spans(sql: str, *, source: str) -> Iterator[tuple[int, int]]:
    """Where the text is code: (start, end) of each run outside strings, quoted names and comments."""
    for token in _TOKENS[check_source(source)].finditer(sql):
        if token.lastgroup == "code":
            yield token.start(), token.end()


def single_statement(sql: str, source: str) -> Statement:
    """The one statement of `sql`; raises TranspileError when it holds none or several."""
    statements = split_statements(sql, source=source)
    if not statements:
        raise TranspileError("the query is empty")
    if len(statements) > 1:
        raise TranspileError(f"more than one statement ({len(statements)} found); send a single query")
    return statements[0]


# sqlglot describes the token it stopped at as `<Token token_type: ..., text: WHERE, ...>`.
_TOKEN_REPR = re.compile(r"<Token token_type: [^,]*, text: (.*?), line: .*?>")


def parse_one(sql: str, *, source: str = "mysql") -> tuple[exp.Expr, str]:
    """Parse exactly one statement: its syntax tree and its text (without the final semicolon)."""
    statement = single_statement(sql, source)
    return parse_statement(statement, source=source), statement.text


def parse_statement(statement: Statement, *, source: str) -> exp.Expr:
    """The syntax tree of one statement that `single_statement` found; raises TranspileError."""
    return read_statement(statement, source=source).tree


class Parsed(NamedTuple):
    tree: exp.Expr
    tokens: list[Token]  # what the parser read: the conformance check reads them too, so the text is
    # tokenized once


class _Readers(threading.local):
    """A tokenizer and a parser per dialect, and per thread: sqlglot makes new ones at each call, which
    costs a fifth of reading a short query; both start afresh at each text."""

    def __init__(self) -> None:
        self.tokenizers = {source: dialect.tokenizer() for source, dialect in SQLGLOT_DIALECTS.items()}
        self.parsers = {source: dialect.parser() for source, dialect in SQLGLOT_DIALECTS.items()}


_READERS = _Readers()


def read_statement(statement: Statement, *, source: str) -> Parsed:
    """`parse_statement`'s tree, with the tokens it was parsed from; raises TranspileError."""
    readers = _READERS
    try:
        # What sqlglot.parse_one does, keeping the tokens.
        tokens = readers.tokenizers[source].tokenize(statement.text)
        trees = readers.parsers[source].parse(tokens, statement.text)
        if not trees or trees[0] is None:
            raise ParseError(f"No expression was parsed from '{statement.text}'")
        tree = exp.Block(expressions=trees) if len(trees) > 1 else trees[0]
    except ParseError as error:
        detail = error.errors[0] if error.errors else {}
        line = statement.line + (detail.get("line") or 1) - 1
        description = _TOKEN_REPR.sub(r"'\1'", detail.get("description") or "syntax error")
        raise TranspileError(f"cannot parse the query as {source}: {description} (line {line})") from None
    except TokenError:
        raise TranspileError(
            f"cannot parse the query as {source}: a string, name or comment is not closed"
        ) from None
    except SqlglotError as error:
        raise TranspileError(f"cannot parse the query as {source}: {first_line(error)}") from None
    except RecursionError:
        raise  # too deep to read: the scorer calls it a resource limit, not a syntax error
    except Exception:  # sqlglot's parser trips on some malformed text (TypeError, ...): unreadable
        raise TranspileError(f"cannot parse the query as {source}") from None
    if source == "mysql" and "TO_DAYS" in statement.text.upper():
        _read_to_days_as_written(tree)
    return Parsed(tree, tokens)


def _read_to_days_as_written(tree: exp.Expr) -> None:
    """sqlglot reads MySQL's TO_DAYS(x) as (DATEDIFF(x, '0000-01-01') + 1), which needs a date of year 0:
    neither SQLite nor Python reckons that year as MySQL does (365 days), so the call is put back."""
    for node in list(tree.find_all(exp.DateDiff)):
        start, plus, paren = node.expression, node.parent, node.parent and node.parent.parent
        if (
            isinstance(node.this, exp.TsOrDsToDate)
            and isinstance(start, exp.TsOrDsToDate)
            and start.this == exp.Literal.string("0000-01-01")
            and isinstance(plus, exp.Add)
            and plus.this is node
            and plus.expression == exp.Literal.number(1)
            and isinstance(paren, exp.Paren)
        ):
            paren.replace(exp.Anonymous(this="TO_DAYS", expressions=[node.this.this]))


def first_line(error: Exception) -> str:
    """The first line of an error's message (sqlglot's go on with the query), or the error's type."""
    return str(error).splitlines()[0] if str(error) else type(error).__name__
