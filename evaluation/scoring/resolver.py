"""What the column references of a query name, and the MySQL type of an expression (`ColumnResolver`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from evaluation.scoring.function_rewrites import DATE_PART_NODES
from evaluation.scoring.functions import BIGINT_MAX, BIGINT_UNSIGNED_MAX
from evaluation.scoring.sqltypes import (
    DIV_PRECISION_INCREMENT,
    FLOAT,
    INTEGER,
    LITERAL_TEXT,
    TEXT,
    UNSIGNED_INTEGER,
    SqlType,
    type_of_declared,
)
from evaluation.scoring.statements import SQLGLOT_DIALECTS

# Table -> column -> type (None when unknown), all names in lower case.
TypeMap: TypeAlias = Mapping[str, Mapping[str, SqlType | None]]
# What a scope selects from: a table, or the scope of a subquery.
Source: TypeAlias = exp.Table | Scope


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
        self._sources: dict[int, dict[str, Source]] = {}

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

    def _in_source(self, source: Source, name: str) -> Resolved | None:
        if isinstance(source, exp.Table):
            columns = self._tables.get(source.name.lower())
            return Resolved(columns[name]) if columns is not None and name in columns else None
        if isinstance(source, Scope):
            arm = source
            while arm.set_operation_scopes:  # a UNION's columns are named by its first SELECT
                arm = arm.set_operation_scopes[0]
            if any(projection.is_star for projection in _selects(arm)):
                return Resolved(None)
            output = _output_named(arm, name)
            return None if output is None else Resolved(self.type_of(output, arm))
        return None

    def type_of(self, node: exp.Expr, scope: Scope) -> SqlType | None:
        """The MySQL type of an expression, None when it cannot be told."""
        if isinstance(node, exp.Column):
            found = self.column(node, scope)
            return found.type if found else None
        if isinstance(node, exp.Literal):
            return _literal_type(node)
        if isinstance(node, exp.Paren | exp.Abs | exp.Min | exp.Max):
            return self.type_of(node.this, scope)
        if isinstance(node, exp.Neg):
            operand = self.type_of(node.this, scope)
            return INTEGER if operand is not None and operand.integer else operand  # -x is signed
        if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.Mod | exp.IntDiv):
            return _arithmetic_type(
                node, self.type_of(node.this, scope), self.type_of(node.expression, scope)
            )
        if isinstance(node, exp.Sum | exp.Avg):
            return _aggregate_type(node, self.type_of(node.this, scope))
        if isinstance(node, exp.Round):
            operand = self.type_of(node.this, scope)
            decimals = node.args.get("decimals")
            scale = int(decimals.name) if isinstance(decimals, exp.Literal) and decimals.is_int else 0
            if operand is None or operand.kind != "exact" or operand.integer:
                return operand  # an integer rounds to an integer of its own sign
            return SqlType("exact", max(scale, 0))
        if isinstance(node, exp.Ceil | exp.Floor):
            operand = self.type_of(node.this, scope)
            if operand is None or operand.integer:
                return operand or INTEGER
            return INTEGER if operand.kind == "exact" else FLOAT
        if isinstance(node, exp.Cast):
            return type_of_declared(node.to.sql(dialect=SQLGLOT_DIALECTS["mysql"]))
        if isinstance(node, exp.Anonymous):
            return _CALL_TYPES.get(node.name.upper())
        return next((_FIXED_TYPES[cls] for cls in type(node).__mro__ if cls in _FIXED_TYPES), None)


def scope_sources(scope: Scope) -> dict[str, Source]:
    """The tables and subqueries a scope selects from, by lower-case alias (or name)."""
    return {name.lower(): source for name, (_, source) in scope.selected_sources.items()}


def _selects(scope: Scope) -> list[exp.Expr]:
    """The output expressions of a scope's query (sqlglot types a scope's expression as any node)."""
    query = scope.expression
    return query.selects if isinstance(query, exp.Selectable) else []


def _output_named(scope: Scope, name: str) -> exp.Expr | None:
    """The output expression of `scope` whose name (alias or column name) is `name`."""
    for projection in _selects(scope):
        if projection.alias_or_name.lower() == name:
            return projection.unalias()
    return None


def _alias_named(scope: Scope, name: str, column: exp.Column) -> exp.Expr | None:
    """The expression an output alias `name` stands for, unless `column` is part of it."""
    for projection in _selects(scope):
        if isinstance(projection, exp.Alias) and projection.alias.lower() == name:
            return None if column.find_ancestor(exp.Alias) is projection else projection.this
    return None


def _literal_type(node: exp.Literal) -> SqlType:
    if node.is_string:
        return LITERAL_TEXT
    text = node.name.lower()
    if "e" in text:
        return FLOAT
    if text.isdigit():  # a signed BIGINT, else a BIGINT UNSIGNED, else a DECIMAL
        value = int(text)
        if value <= BIGINT_MAX:
            return INTEGER
        return UNSIGNED_INTEGER if value <= BIGINT_UNSIGNED_MAX else SqlType("exact")
    return SqlType("exact", len(text.partition(".")[2]))


def _arithmetic_type(node: exp.Expr, left: SqlType | None, right: SqlType | None) -> SqlType | None:
    if (
        left is not None
        and right is not None
        and left.integer
        and right.integer
        and not isinstance(node, exp.Div)
    ):
        # BIGINT arithmetic, unsigned when an operand is (MOD: when the dividend is).
        unsigned = left.unsigned if isinstance(node, exp.Mod) else left.unsigned or right.unsigned
        return UNSIGNED_INTEGER if unsigned else INTEGER
    if isinstance(node, exp.IntDiv):
        return INTEGER  # DIV gives a BIGINT whatever it divides
    if left is None or right is None:
        return None
    if left.kind != "exact" or right.kind != "exact":
        # MySQL turns strings and temporal values into floating point for arithmetic.
        return FLOAT
    if isinstance(node, exp.Div):
        return SqlType("exact", left.scale + DIV_PRECISION_INCREMENT)
    if isinstance(node, exp.Mul):
        return SqlType("exact", left.scale + right.scale)
    return SqlType("exact", max(left.scale, right.scale))


def _aggregate_type(node: exp.Expr, operand: SqlType | None) -> SqlType | None:
    if operand is None:
        return None
    if operand.kind != "exact":
        return FLOAT
    extra = DIV_PRECISION_INCREMENT if isinstance(node, exp.Avg) else 0
    return SqlType("exact", operand.scale + extra)


# The type of what these MySQL functions compute (sqlglot reads them as calls by name).
_CALL_TYPES: dict[str, SqlType] = {
    **dict.fromkeys(
        ("TO_DAYS", "TO_SECONDS", "PERIOD_ADD", "PERIOD_DIFF", "YEARWEEK", "FIND_IN_SET"), INTEGER
    ),
    **dict.fromkeys(("FROM_DAYS", "MAKEDATE"), SqlType("date")),
    "CRC32": UNSIGNED_INTEGER,
}

# MySQL's bit operators: BIGINT UNSIGNED in arithmetic, and their operands taken as integers.
BIT_OPERATORS = (
    exp.BitwiseAnd,
    exp.BitwiseOr,
    exp.BitwiseXor,
    exp.BitwiseNot,
    exp.BitwiseLeftShift,
    exp.BitwiseRightShift,
)

# The type of what these compute, whatever their arguments.
_FIXED_TYPES: dict[type, SqlType] = {
    **dict.fromkeys(
        (
            *DATE_PART_NODES,
            exp.Count,
            exp.DateDiff,
            exp.TimestampDiff,
            exp.Length,
            exp.Week,
            exp.WeekOfYear,
            exp.Boolean,
            exp.Extract,
            exp.Predicate,
        ),
        INTEGER,
    ),
    **dict.fromkeys(
        (exp.Concat, exp.ConcatWs, exp.Upper, exp.Lower, exp.Substring, exp.Trim, exp.GroupConcat), TEXT
    ),
    # The bit operators and hexadecimal and bit literals are BIGINT UNSIGNED in arithmetic.
    **dict.fromkeys(
        (*BIT_OPERATORS, exp.HexString, exp.BitString),
        UNSIGNED_INTEGER,
    ),
    exp.TsOrDsToDate: SqlType("date"),
    exp.CurrentDate: SqlType("date"),
    exp.CurrentTimestamp: SqlType("datetime"),
}
