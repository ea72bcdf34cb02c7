"""Queries written for MySQL, run on the SQLite copies with the meaning MySQL gives them.

Gold queries (and most predictions) are written for MySQL/MariaDB, while scoring runs on SQLite copies of
the databases built by `mysql_dump`. `to_sqlite` rewrites one query so that SQLite returns what MariaDB
would, as far as the measurements on Termite showed it matters:

- MySQL functions SQLite lacks: YEAR/MONTH/DAY/HOUR/... and EXTRACT become `STRFTIME`; DATEDIFF compares
  date parts; TIMESTAMPDIFF, DATE_ADD/DATE_SUB/`± INTERVAL`, TRUNCATE, CONCAT_WS and REGEXP call functions
  that `functions.install_functions` registers; CURDATE/NOW use local time; LEFT/RIGHT/MID become SUBSTR.
- Types, when a schema is given (`read_schema`): a text column compared with a number is compared as a
  number; a string compared with a DATE/DATETIME/TIME column is read as MySQL reads it ('2024-5-1' is
  2024-05-01); `/` and AVG of exact numbers are rounded to 4 more decimals (`div_precision_increment`).
- String comparison ignores case: text columns of the copies are `COLLATE NOCASE`; a string literal
  compared with an expression gets `COLLATE NOCASE` here.
- A quoted string used as a table name (`FROM 'ordini'`) is rejected, as MySQL rejects it.

Not emulated: an ENUM sorts and compares with numbers by the position of its members in MySQL, by its
text here; equality ignores accents in MySQL ('caffe' = 'caffè') and trailing spaces, not here.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError
from sqlglot.optimizer.scope import Scope, traverse_scope

from evaluation.scoring.functions import (
    MICROSECONDS_PER_UNIT,
    MONTHS_PER_UNIT,
    normalise_temporal,
    read_moment,
)

SOURCES = ("mysql", "sqlite")
# Given a dialect's name, sqlglot makes a new dialect object at each call: these are made once.
_DIALECTS = {source: Dialect.get_or_raise(source) for source in SOURCES}

# MySQL's div_precision_increment: `/` and AVG of exact numbers get this many more decimals.
DIV_PRECISION_INCREMENT = 4


class TranspileError(ValueError):
    """The query cannot be turned into SQLite; the message says why, about the query given."""


def _check_source(source: str) -> str:
    if source not in SOURCES:
        raise ValueError(f"unknown SQL dialect {source!r}; expected one of {', '.join(SOURCES)}")
    return source


# --- Splitting a text into statements ------------------------------------------------------------------


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
    spans: list[tuple[int, int]] = []
    start = end = -1
    # One regular expression does the scanning: a query without strings or comments is a single token.
    for token in _TOKENS[_check_source(source)].finditer(sql):
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
    statements = []
    line = 1
    counted = 0  # line is the line of this position
    for number, (begin, finish) in enumerate(spans, start=1):
        line += sql.count("\n", counted, begin)
        counted = begin
        statements.append(Statement(number, line, sql[begin:finish]))
    return statements


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


# --- Types ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SqlType:
    """What a value is for MySQL's comparison and arithmetic rules.

    kind is "text", "date", "datetime", "time", "exact" (integers and DECIMAL, with `scale` decimals)
    or "float" (FLOAT, DOUBLE).
    """

    kind: str
    scale: int = 0

    @property
    def is_number(self) -> bool:
        return self.kind in ("exact", "float")

    @property
    def is_temporal(self) -> bool:
        return self.kind in TEMPORAL_KINDS


TEMPORAL_KINDS = ("date", "datetime", "time")
_TEXT = SqlType("text")
_FLOAT = SqlType("float")
_INTEGER = SqlType("exact")
_DECLARED_KINDS = {
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


def type_of_declared(declared: str) -> SqlType | None:
    """The type of a column declared as `declared` (MySQL or SQLite spelling), None when unknown."""
    match = re.match(r"\s*(\w+)[^(]*(?:\((\s*\d+)?\s*(?:,\s*(\d+))?)?", declared)
    if match is None:
        return None
    base = match.group(1).upper()
    kind = _DECLARED_KINDS.get(base)
    if kind == "exact":
        return SqlType("exact", int(match.group(3) or 0))
    if kind is not None:
        return SqlType(kind)
    if "INT" in base or base in ("BOOL", "BOOLEAN", "BIT", "YEAR", "SERIAL", "SIGNED", "UNSIGNED"):
        return _INTEGER
    if "CHAR" in base or "TEXT" in base or "CLOB" in base:
        return _TEXT
    return None


def _comparable_temporal(value: str, kind: str) -> str | None:
    """The string a column of `kind` must be compared with, in text, to get MySQL's temporal comparison.

    A DATE column compared with a datetime that is not midnight compares as a datetime: keeping the time
    in the literal gives the same order ('2024-05-01' < '2024-05-01 10:00:00').
    """
    if kind == "date":
        moment = read_moment(value)
        if moment is None:
            return None
        return moment.datetime_text if moment.has_time_of_day else moment.date_text
    return normalise_temporal(value, kind)


def read_schema(conn: sqlite3.Connection) -> dict[str, dict[str, str]]:
    """Table -> column -> declared type of a SQLite database, as `to_sqlite(schema=...)` takes it."""
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
        )
    ]
    return {
        table: dict(conn.execute("SELECT name, type FROM pragma_table_info(?)", (table,)).fetchall())
        for table in tables
    }


# --- MySQL's functions and operators as SQLite expressions ----------------------------------------------

# MySQL date parts as SQLite computes them: the STRFTIME format of the number, and what is done with it.
_DATE_PARTS = {
    "YEAR": "%Y",
    "MONTH": "%m",
    "DAY": "%d",
    "HOUR": "%H",
    "MINUTE": "%M",
    "SECOND": "%S",
    "DAYOFYEAR": "%j",
    "DAYOFWEEK": "%w",  # + 1
    "WEEKDAY": "%w",  # (+ 6) % 7
    "QUARTER": "%m",  # (+ 2) / 3
}
_DATE_PART_NODES = {
    exp.Year: "YEAR",
    exp.Month: "MONTH",
    exp.Day: "DAY",
    exp.DayOfMonth: "DAY",
    exp.Hour: "HOUR",
    exp.Minute: "MINUTE",
    exp.Second: "SECOND",
    exp.DayOfYear: "DAYOFYEAR",
    exp.DayOfWeek: "DAYOFWEEK",
    exp.Quarter: "QUARTER",
}
_NOW_FUNCTIONS = ("NOW", "SYSDATE", "LOCALTIME", "LOCALTIMESTAMP")
# Building a type parses its name: these are built once, and copied.
_INTEGER_TYPE = exp.DataType.build("INTEGER")
_REAL_TYPE = exp.DataType.build("REAL")


def with_sqlite_functions(tree: exp.Expression, nodes: list[exp.Expression] | None = None) -> exp.Expression:
    """The tree with MySQL's date functions and operators replaced by SQLite expressions of the same
    meaning, for SQLite's own generator; changed in place, and the new root returned.

    Arguments are rewritten before the calls around them (children come before their parents). `nodes`,
    when given, are the tree's nodes that have a rewrite, in depth-first order (see `_survey`).
    """
    if nodes is None:
        nodes = [node for node in tree.walk(bfs=False) if type(node) in _REWRITES]
    for node in reversed(nodes):
        replacement = _REWRITES[type(node)](node)
        if replacement is not node:
            if node is tree:
                tree = replacement
            else:
                node.replace(replacement)
    return tree


def _extract(node: exp.Extract) -> exp.Expression:
    part = _unit(node, "this")
    if part not in _DATE_PARTS:
        raise TranspileError(f"EXTRACT({part} FROM ...) is not supported")
    return _date_part(part, node.expression)


def _date_diff(node: exp.DateDiff) -> exp.Expression:
    days = exp.Sub(
        this=_call("JULIANDAY", _call("DATE", node.this)),
        expression=_call("JULIANDAY", _call("DATE", node.expression)),
    )
    return _integer(days)


def _add(node: exp.Add) -> exp.Expression:
    interval, value = _interval_operands(node)
    return node if interval is None else _date_add(value, interval.this, _unit(interval))


def _sub(node: exp.Sub) -> exp.Expression:
    interval = node.expression
    if not isinstance(interval, exp.Interval):
        return node
    return _date_add(node.this, exp.Neg(this=interval.this), _unit(interval))


def _right(node: exp.Right) -> exp.Expression:
    length = node.expression
    return _call("SUBSTR", node.this, exp.Neg(this=exp.Paren(this=length.copy())), length)


def _anonymous(node: exp.Anonymous) -> exp.Expression:
    name = node.name.upper()
    arguments = node.expressions
    if name in _NOW_FUNCTIONS and not arguments:
        return _now()
    if name == "WEEKDAY" and len(arguments) == 1:
        return _date_part(name, arguments[0])
    if name == "MID" and len(arguments) in (2, 3):
        return _call("SUBSTR", *arguments)
    return node


def _date_part(part: str, value: exp.Expression) -> exp.Expression:
    number = _integer(_call("STRFTIME", exp.Literal.string(_DATE_PARTS[part]), value))
    if part == "DAYOFWEEK":
        return exp.Paren(this=exp.Add(this=number, expression=exp.Literal.number(1)))
    if part == "WEEKDAY":
        shifted = exp.Paren(this=exp.Add(this=number, expression=exp.Literal.number(6)))
        return exp.Paren(this=exp.Mod(this=shifted, expression=exp.Literal.number(7)))
    if part == "QUARTER":
        shifted = exp.Paren(this=exp.Add(this=number, expression=exp.Literal.number(2)))
        # typed: an integer division, which SQLite's `/` of two integers is
        return exp.Paren(this=exp.Div(this=shifted, expression=exp.Literal.number(3), typed=True))
    return number


def _date_add(value: exp.Expression, amount: exp.Expression, unit: str) -> exp.Expression:
    if unit not in MONTHS_PER_UNIT and unit not in MICROSECONDS_PER_UNIT:
        raise TranspileError(f"the interval unit {unit} is not supported")
    return _call("MYSQL_DATE_ADD", value, amount, exp.Literal.string(unit))


def _is_true(value: exp.Expression) -> exp.Expression:
    return exp.Paren(this=exp.NEQ(this=exp.Paren(this=value), expression=exp.Literal.number(0)))


def _now() -> exp.Expression:
    return _call("DATETIME", exp.Literal.string("now"), exp.Literal.string("localtime"))


def _call(name: str, *arguments: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(arguments))


def _integer(value: exp.Expression) -> exp.Cast:
    return exp.Cast(this=value, to=_INTEGER_TYPE.copy())


# What SQLite must compute for a node of each of these types (the node itself when SQLite's generator
# already says it); nodes of any other type stay as they are.
_REWRITES: dict[type[exp.Expression], Callable[[Any], exp.Expression]] = {
    **dict.fromkeys(_DATE_PART_NODES, lambda node: _date_part(_DATE_PART_NODES[type(node)], node.this)),
    exp.Extract: _extract,
    exp.CurrentDate: lambda _: _call("DATE", exp.Literal.string("now"), exp.Literal.string("localtime")),
    exp.CurrentTimestamp: lambda _: _now(),
    exp.CurrentTime: lambda _: _call("TIME", exp.Literal.string("now"), exp.Literal.string("localtime")),
    exp.DateDiff: _date_diff,
    exp.TimestampDiff: lambda node: _call(
        "MYSQL_TIMESTAMPDIFF", exp.Literal.string(_unit(node)), node.expression, node.this
    ),
    exp.DateAdd: lambda node: _date_add(node.this, node.expression, _unit(node)),
    exp.DateSub: lambda node: _date_add(node.this, exp.Neg(this=node.expression), _unit(node)),
    exp.Add: _add,
    exp.Sub: _sub,
    exp.LastDay: lambda node: _call(
        "DATE", node.this, *map(exp.Literal.string, ("start of month", "+1 month", "-1 day"))
    ),
    exp.Left: lambda node: _call("SUBSTR", node.this, exp.Literal.number(1), node.expression),
    exp.Right: _right,
    exp.Trunc: lambda node: _call(
        "MYSQL_TRUNCATE", node.this, node.args.get("decimals") or exp.Literal.number(0)
    ),
    exp.ConcatWs: lambda node: _call("MYSQL_CONCAT_WS", *node.expressions),
    exp.Xor: lambda node: exp.Paren(
        this=exp.NEQ(this=_is_true(node.this), expression=_is_true(node.expression))
    ),
    exp.Anonymous: _anonymous,
}


def _unit(node: exp.Expression, key: str = "unit") -> str:
    return node.text(key).upper().removeprefix("SQL_TSI_")


def _interval_operands(node: exp.Add) -> tuple[exp.Interval | None, exp.Expression]:
    if isinstance(node.expression, exp.Interval):
        return node.expression, node.this
    if isinstance(node.this, exp.Interval):
        return node.this, node.expression
    return None, node.this


# --- Resolving columns and typing expressions -----------------------------------------------------------

TypeMap = Mapping[str, Mapping[str, SqlType | None]]


@dataclass(frozen=True)
class Resolved:
    """What a column reference names is in reach; its type when known."""

    type: SqlType | None


class ColumnResolver:
    """What column references name, and the MySQL types of expressions.

    `tables` is table -> column -> type (None when unknown), all names in lower case.
    """

    def __init__(self, tables: TypeMap) -> None:
        self._tables = tables
        self._resolving: set[int] = set()
        self._sources: dict[int, dict[str, exp.Expression | Scope]] = {}

    def column(self, column: exp.Column, scope: Scope) -> Resolved | None:
        """What `column` names in `scope` (or an enclosing one, for correlated subqueries); None if nothing."""
        if id(column) in self._resolving:
            return None
        self._resolving.add(id(column))
        try:
            return self._lookup(column, scope)
        finally:
            self._resolving.discard(id(column))

    def _lookup(self, column: exp.Column, scope: Scope) -> Resolved | None:
        name = column.name.lower()
        current: Scope | None = scope
        while current is not None:
            sources = self._sources.get(id(current))
            if sources is None:
                sources = self._sources[id(current)] = scope_sources(current)
            if column.table:
                source = sources.get(column.table.lower())
                if source is not None:
                    return self._in_source(source, name)
            else:
                found = [hit for source in sources.values() if (hit := self._in_source(source, name))]
                if found:
                    return found[0] if len(found) == 1 else Resolved(None)
                alias = _alias_named(current, name, column) if current is scope else None
                if alias is not None:
                    return Resolved(self.type_of(alias, current))
            current = current.parent
        return None

    def _in_source(self, source: exp.Expression | Scope, name: str) -> Resolved | None:
        if isinstance(source, exp.Table):
            columns = self._tables.get(source.name.lower())
            return Resolved(columns[name]) if columns is not None and name in columns else None
        if isinstance(source, Scope):
            arm = source
            while arm.set_operation_scopes:  # a UNION's columns are named by its first SELECT
                arm = arm.set_operation_scopes[0]
            if any(projection.is_star for projection in arm.expression.selects):
                return Resolved(None)
            output = _output_named(arm, name)
            return None if output is None else Resolved(self.type_of(output, arm))
        return None

    def type_of(self, node: exp.Expression, scope: Scope) -> SqlType | None:
        """The MySQL type of an expression, None when it cannot be told."""
        if isinstance(node, exp.Column):
            found = self.column(node, scope)
            return found.type if found else None
        if isinstance(node, exp.Literal):
            return _literal_type(node)
        if isinstance(node, exp.Paren | exp.Neg | exp.Abs | exp.Min | exp.Max):
            return self.type_of(node.this, scope)
        if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.Mod):
            return _arithmetic_type(
                node, self.type_of(node.this, scope), self.type_of(node.expression, scope)
            )
        if isinstance(node, exp.Sum | exp.Avg):
            return _aggregate_type(node, self.type_of(node.this, scope))
        if isinstance(node, exp.Round):
            operand = self.type_of(node.this, scope)
            decimals = node.args.get("decimals")
            scale = int(decimals.name) if isinstance(decimals, exp.Literal) and decimals.is_int else 0
            return SqlType("exact", max(scale, 0)) if operand and operand.kind == "exact" else operand
        if isinstance(node, exp.Cast):
            return type_of_declared(node.to.sql(dialect=_DIALECTS["mysql"]))
        return next((_FIXED_TYPES[cls] for cls in type(node).__mro__ if cls in _FIXED_TYPES), None)


def scope_sources(scope: Scope) -> dict[str, exp.Expression | Scope]:
    """The tables and subqueries a scope selects from, by lower-case alias (or name)."""
    return {name.lower(): source for name, (_, source) in scope.selected_sources.items()}


def _output_named(scope: Scope, name: str) -> exp.Expression | None:
    """The output expression of `scope` whose name (alias or column name) is `name`."""
    for projection in scope.expression.selects:
        if projection.alias_or_name.lower() == name:
            return projection.unalias()
    return None


def _alias_named(scope: Scope, name: str, column: exp.Column) -> exp.Expression | None:
    """The expression an output alias `name` stands for, unless `column` is part of it."""
    for projection in scope.expression.selects:
        if isinstance(projection, exp.Alias) and projection.alias.lower() == name:
            return None if column.find_ancestor(exp.Alias) is projection else projection.this
    return None


def _literal_type(node: exp.Literal) -> SqlType:
    if node.is_string:
        return _TEXT
    text = node.name.lower()
    return _FLOAT if "e" in text else SqlType("exact", len(text.partition(".")[2]))


def _arithmetic_type(node: exp.Expression, left: SqlType | None, right: SqlType | None) -> SqlType | None:
    if left is None or right is None:
        return None
    if left.kind != "exact" or right.kind != "exact":
        # MySQL turns strings and temporal values into floating point for arithmetic.
        return _FLOAT
    if isinstance(node, exp.Div):
        return SqlType("exact", left.scale + DIV_PRECISION_INCREMENT)
    if isinstance(node, exp.Mul):
        return SqlType("exact", left.scale + right.scale)
    return SqlType("exact", max(left.scale, right.scale))


def _aggregate_type(node: exp.Expression, operand: SqlType | None) -> SqlType | None:
    if operand is None:
        return None
    if operand.kind != "exact":
        return _FLOAT
    extra = DIV_PRECISION_INCREMENT if isinstance(node, exp.Avg) else 0
    return SqlType("exact", operand.scale + extra)


_FIXED_TYPES: dict[type, SqlType] = {
    **dict.fromkeys(
        (
            *_DATE_PART_NODES,
            exp.Count,
            exp.DateDiff,
            exp.TimestampDiff,
            exp.Length,
            exp.Ceil,
            exp.Floor,
            exp.IntDiv,
            exp.Boolean,
            exp.Extract,
            exp.Predicate,
        ),
        _INTEGER,
    ),
    **dict.fromkeys(
        (exp.Concat, exp.ConcatWs, exp.Upper, exp.Lower, exp.Substring, exp.Trim, exp.GroupConcat), _TEXT
    ),
    exp.TsOrDsToDate: SqlType("date"),
    exp.CurrentDate: SqlType("date"),
    exp.CurrentTimestamp: SqlType("datetime"),
}


# --- MySQL semantics as rewrites of the syntax tree -----------------------------------------------------

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)


def _wrap(node: exp.Expression, make: type[exp.Expression], **args: object) -> None:
    """Put `node` inside a new `make(this=node, **args)` where it stands, keeping the node object itself."""
    placeholder = exp.Placeholder()
    node.replace(placeholder)
    placeholder.replace(make(this=node, **args))


class _Rewriter:
    """Plans every change on the untouched tree first (types need it), then applies them."""

    def __init__(self, resolver: ColumnResolver) -> None:
        self._resolver = resolver
        self._casts: list[exp.Expression] = []
        self._collations: list[exp.Expression] = []
        self._roundings: list[tuple[exp.Expression, int]] = []
        self._literals: list[tuple[exp.Literal, str]] = []

    def plan(self, tree: exp.Expression) -> None:
        for scope in traverse_scope(tree):
            for node in scope.walk():
                kind = _typed_kind(type(node))
                if kind == "comparison":
                    self._plan_comparison(scope, node.this, [node.expression], symmetric=True)
                elif kind == "in":
                    if node.expressions:
                        self._plan_comparison(scope, node.this, node.expressions, symmetric=False)
                elif kind == "between":
                    self._plan_comparison(
                        scope, node.this, [node.args["low"], node.args["high"]], symmetric=False
                    )
                elif kind == "rounding":
                    self._plan_rounding(scope, node)

    def apply(self) -> None:
        for literal, text in self._literals:
            literal.replace(exp.Literal.string(text))
        for node in self._casts:
            _wrap(node, exp.Cast, to=_REAL_TYPE.copy())
        for node in self._collations:
            _wrap(node, exp.Collate, expression=exp.Var(this="NOCASE"))
        for node, scale in self._roundings:
            _wrap(node, exp.Round, decimals=exp.Literal.number(scale))

    def _plan_comparison(
        self, scope: Scope, left: exp.Expression, others: list[exp.Expression], *, symmetric: bool
    ) -> None:
        left_type = self._resolver.type_of(left, scope)
        other_types = [self._resolver.type_of(other, scope) for other in others]
        # MySQL compares a string with a number as numbers; SQLite would compare them as text.
        if _is_text(left_type) and all(t is not None and t.is_number for t in other_types):
            self._casts.append(left)
            return
        if symmetric and _is_text(other_types[0]) and left_type is not None and left_type.is_number:
            self._casts.append(others[0])
            return
        self._plan_temporal_literals(left_type, others)
        if symmetric and other_types[0] is not None and other_types[0].is_temporal:
            self._plan_temporal_literals(other_types[0], [left])
        strings = [node for node in (left, *others) if isinstance(node, exp.Literal) and node.is_string]
        # Text columns carry COLLATE NOCASE; other text expressions need it to compare as MySQL does.
        if strings and not isinstance(left, exp.Column) and (left_type is None or left_type.kind == "text"):
            self._collations.append(left)

    def _plan_temporal_literals(self, column_type: SqlType | None, others: list[exp.Expression]) -> None:
        if column_type is None or not column_type.is_temporal:
            return
        for other in others:
            if isinstance(other, exp.Literal) and other.is_string:
                text = _comparable_temporal(other.name, column_type.kind)
                if text is not None and text != other.name:
                    self._literals.append((other, text))

    def _plan_rounding(self, scope: Scope, node: exp.Div | exp.Avg) -> None:
        # Exact only when the operands are: MySQL then rounds to their scale + div_precision_increment.
        result = self._resolver.type_of(node, scope)
        if result is not None and result.kind == "exact":
            self._roundings.append((node, result.scale))


def _is_text(sql_type: SqlType | None) -> bool:
    return sql_type is not None and sql_type.kind == "text"


# Node classes are classified once (`functools.cache`): an isinstance test against several of sqlglot's
# classes costs more, at each node of each query, than the lookup.
@functools.cache
def _typed_kind(cls: type) -> str | None:
    """What `_Rewriter.plan` does with a node of class `cls`: "comparison", "in", "between", "rounding"
    (a division or AVG), or None (nothing)."""
    if issubclass(cls, _COMPARISONS):
        return "comparison"
    if issubclass(cls, exp.In):
        return "in"
    if issubclass(cls, exp.Between):
        return "between"
    if issubclass(cls, exp.Div | exp.Avg):
        return "rounding"
    return None


_DATE_ARGUMENT_NODES = (
    *_DATE_PART_NODES,
    exp.DateDiff,
    exp.TimestampDiff,
    exp.DateAdd,
    exp.DateSub,
    exp.LastDay,
    exp.TsOrDsToDate,
)


class _Role(NamedTuple):
    """What `_survey` does with a node of one class."""

    table: bool  # a table: is its name a quoted string?
    date_function: bool  # a date function: spell its string arguments as dates
    typed: bool  # its rewriting needs types
    rewritten: bool  # `with_sqlite_functions` rewrites it


@functools.cache
def _role(cls: type) -> _Role | None:
    """The role of a node class, None when `_survey` has nothing to do with its nodes (most of them)."""
    role = _Role(
        table=issubclass(cls, exp.Table),
        date_function=issubclass(cls, _DATE_ARGUMENT_NODES),
        typed=_typed_kind(cls) is not None,
        rewritten=cls in _REWRITES,
    )
    return role if any(role) else None


def _survey(tree: exp.Expression, text: str) -> tuple[bool, list[exp.Expression]]:
    """Reject a quoted string used as a table name; spell the date arguments of date functions as SQLite
    needs them ('2024-6-1' means 2024-06-01 to MySQL). Also tells whether the tree holds anything whose
    rewriting needs types, and which nodes `with_sqlite_functions` rewrites (in depth-first order).

    One walk of the tree does all four: one walk per job made transpiling a fifth slower.
    """
    typed = False
    quoted_table = False
    rewrites: list[exp.Expression] = []
    for node in tree.walk(bfs=False):
        role = _role(type(node))
        if role is None:
            continue
        if role.table:
            quoted_table = quoted_table or _is_quoted_table_name(node, text)
        if role.date_function:
            _normalise_date_arguments(node)
        typed = typed or role.typed
        if role.rewritten:
            rewrites.append(node)
    if quoted_table:  # the first one in breadth-first order is reported
        for node in tree.walk():
            if isinstance(node, exp.Table):
                _reject_quoted_table_name(node, text)
    return typed, rewrites


def _normalise_date_arguments(node: exp.Expression) -> None:
    for argument in node.iter_expressions():
        if isinstance(argument, exp.Literal) and argument.is_string:
            moment = read_moment(argument.name)
            if moment is not None:
                text = moment.datetime_text if moment.has_time_of_day else moment.date_text
                argument.replace(exp.Literal.string(text))


def _is_quoted_table_name(table: exp.Table, text: str) -> bool:
    start = table.this.meta.get("start") if isinstance(table.this, exp.Identifier) else None
    return start is not None and text[start] in "'\""


def _reject_quoted_table_name(table: exp.Table, text: str) -> None:
    if _is_quoted_table_name(table, text):
        start = table.this.meta["start"]
        line = text.count("\n", 0, start) + 1
        raise TranspileError(
            f"line {line}: a quoted string is used as a table name; MySQL rejects it "
            "(quote names with backticks)"
        )


# --- Public entry points ---------------------------------------------------------------------------------


# sqlglot describes the token it stopped at as `<Token token_type: ..., text: WHERE, ...>`.
_TOKEN_REPR = re.compile(r"<Token token_type: [^,]*, text: (.*?), line: .*?>")


def _single_statement(sql: str, source: str) -> Statement:
    statements = split_statements(sql, source=source)
    if not statements:
        raise TranspileError("the query is empty")
    if len(statements) > 1:
        raise TranspileError(f"more than one statement ({len(statements)} found); send a single query")
    return statements[0]


def parse_one(sql: str, *, source: str = "mysql") -> tuple[exp.Expression, str]:
    """Parse exactly one statement: its syntax tree and its text (without the final semicolon)."""
    statement = _single_statement(sql, source)
    try:
        tree = sqlglot.parse_one(statement.text, read=_DIALECTS[source])
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
        raise TranspileError(f"cannot parse the query as {source}: {_first_line(error)}") from None
    except RecursionError:
        raise  # too deep to read: the scorer calls it a resource limit, not a syntax error
    except Exception:  # sqlglot's parser trips on some malformed text (TypeError, ...): unreadable
        raise TranspileError(f"cannot parse the query as {source}") from None
    return tree, statement.text


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def to_sqlite(
    sql: str, *, source: str = "mysql", schema: Mapping[str, Mapping[str, str]] | None = None
) -> str:
    """One query, written for `source` ("mysql" or "sqlite"), as SQLite that keeps MySQL's meaning.

    `schema` is table -> column -> declared type (see `read_schema`); without it, the rules that depend on
    column types are skipped. A "sqlite" query is only checked to be a single statement. Raises
    TranspileError. MySQL results are cached: transpiling costs more than running a query on these
    databases.
    """
    if _check_source(source) == "sqlite":
        return _single_statement(sql, source).text
    frozen = tuple(
        sorted((table, tuple(sorted(columns.items()))) for table, columns in (schema or {}).items())
    )
    return _to_sqlite(sql, source, frozen)


# A schema as `_to_sqlite`'s cache can hold it: (table, ((column, declared type), ...)), sorted.
_FrozenSchema = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


@functools.lru_cache(maxsize=4096)
def _to_sqlite(sql: str, source: str, schema: _FrozenSchema) -> str:
    tree, text = parse_one(sql, source=source)
    typed, rewrites = _survey(tree, text)
    if typed:
        rewriter = _Rewriter(ColumnResolver(_types(schema)))
        rewriter.plan(tree)
        rewriter.apply()
    tree = with_sqlite_functions(tree, rewrites)
    try:
        return _DIALECTS["sqlite"].generate(tree, copy=False, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as error:
        raise TranspileError(f"cannot express the query in SQLite: {_first_line(error)}") from None


@functools.lru_cache(maxsize=64)
def _types(schema: _FrozenSchema) -> TypeMap:
    """The column types of a schema, worked out once per schema rather than once per query."""
    return {
        table.lower(): {column.lower(): type_of_declared(declared) for column, declared in columns}
        for table, columns in schema
    }
