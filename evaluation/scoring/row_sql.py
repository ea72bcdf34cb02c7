"""MySQL's SQL that acts on one row, as SQLite of the same effect: a generated column's expression, and a
trigger's body, in the shapes dumps use.

Both go through `dialect.to_sqlite`, the transpiler of predictions, so that they keep MySQL's meaning.

A trigger (`stored_programs.Trigger`) becomes one SQLite trigger when its body, one statement or several
between BEGIN and END, is either
- INSERT, UPDATE and DELETE statements, of any table, reading NEW.col and OLD.col: the same statements in
  a SQLite trigger of the same timing and event; or
- assignments `SET NEW.col = expression` in a BEFORE INSERT or BEFORE UPDATE trigger: an AFTER trigger
  that updates the row just written, one assignment after the other, each expression reading the row as
  the assignments before it left it (MySQL's NEW.x is then the row's x). A NOT NULL column that only the
  trigger fills is refused by SQLite before the trigger runs.

Anything else (IF, DECLARE, CALL, SIGNAL, SELECT ... INTO, assignments beside other statements) raises
`UntranslatableTrigger`, which says what and names the tables the body writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import sqlglot
from sqlglot import exp

from evaluation.scoring.dialect import to_sqlite
from evaluation.scoring.sqltypes import type_of_declared
from evaluation.scoring.statements import SQLGLOT_DIALECTS, TranspileError, split_statements
from evaluation.scoring.stored_programs import Trigger

Schema = Mapping[str, Mapping[str, str]]


class UntranslatableTrigger(ValueError):
    """A trigger whose body is not of a shape `sqlite_trigger` translates; the message says why."""


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def row_expression_sql(
    expression: exp.Expr, table: str, schema: Schema, *, stored_in: str | None = None
) -> str:
    """A MySQL expression over one row of `table`, as a SQLite expression over the same row (in an UPDATE
    of it): translated as a query selecting it from the table would be, and, stored in a column of the
    declared type `stored_in` (as `mysql_dump` declares them), rounded to its scale if it is exact, as MySQL
    stores it. Raises TranspileError."""
    query = exp.select(expression.copy()).from_(exp.Table(this=exp.to_identifier(table, quoted=True)))
    translated = sqlglot.parse_one(to_sqlite(query.sql(dialect="mysql"), schema=schema), read="sqlite")
    if (
        not isinstance(translated, exp.Select)
        or len(translated.expressions) != 1
        or translated.args.get("with")
    ):
        raise TranspileError("the expression cannot be computed row by row")
    value: str = translated.expressions[0].unalias().sql(dialect="sqlite")
    sql_type = type_of_declared(stored_in) if stored_in else None
    if sql_type is not None and sql_type.kind == "exact":
        return f"ROUND({value}, {sql_type.scale})" if sql_type.scale else f"CAST(ROUND({value}) AS INTEGER)"
    return value


_BLOCK = re.compile(
    r"(?:[\w$]+\s*:\s*)?BEGIN\b(?P<inner>.*)\bEND(?:\s+[\w$]+)?\s*\Z", re.IGNORECASE | re.DOTALL
)
_WRITTEN = re.compile(
    r"\b(?:INSERT\s+(?:IGNORE\s+)?(?:INTO\s+)?|REPLACE\s+(?:INTO\s+)?|UPDATE\s+(?:IGNORE\s+)?|DELETE\s+FROM\s+)"
    r"`?([\w$]+)`?",
    re.IGNORECASE,
)
_DML = re.compile(r"(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)


def sqlite_trigger(trigger: Trigger, schema: Schema) -> str:
    """The CREATE TRIGGER of SQLite with the effect of `trigger`; raises UntranslatableTrigger."""
    match = _BLOCK.match(trigger.body)
    statements = split_statements(match.group("inner") if match else trigger.body, source="mysql")
    if not statements:
        raise UntranslatableTrigger(f"trigger {trigger.name} does nothing")
    assignments = [_assignments(statement.text) for statement in statements]
    try:
        if any(pairs is not None for pairs in assignments):
            timing, body = "AFTER", _assigning_body(trigger, assignments, schema)
        else:
            timing, body = trigger.timing, [_statement_sql(trigger, s.text, schema) for s in statements]
    except TranspileError as error:
        raise UntranslatableTrigger(f"trigger {trigger.name}: {error}") from None
    return (
        f"CREATE TRIGGER {quote(trigger.name)} {timing} {trigger.event} ON {quote(trigger.table)} "
        f"FOR EACH ROW BEGIN {'; '.join(body)}; END"
    )


def _statement_sql(trigger: Trigger, text: str, schema: Schema) -> str:
    if not _DML.match(text):
        raise UntranslatableTrigger(
            f"trigger {trigger.name}: its body holds {' '.join(text.split()[:2])} ..., which the copy cannot "
            f"apply; it writes {_written(trigger)}"
        )
    return to_sqlite(text, schema=schema)


def _assigning_body(
    trigger: Trigger, assignments: list[list[tuple[str, exp.Expr]] | None], schema: Schema
) -> list[str]:
    if trigger.timing != "BEFORE" or trigger.event == "DELETE" or any(pairs is None for pairs in assignments):
        raise UntranslatableTrigger(
            f"trigger {trigger.name}: SET NEW.column beside other statements, or outside a BEFORE INSERT or "
            f"UPDATE trigger, cannot be applied; it writes {_written(trigger)}"
        )
    updates = []
    for pairs in assignments:
        for column, value in pairs or []:
            reading_the_row = value.transform(
                lambda node: (
                    exp.column(node.name, quoted=True)
                    if isinstance(node, exp.Column) and node.table.upper() == "NEW"
                    else node
                )
            )
            declared = {name.lower(): kind for name, kind in schema.get(trigger.table, {}).items()}
            expression = row_expression_sql(
                reading_the_row, trigger.table, schema, stored_in=declared.get(column.lower())
            )
            updates.append(
                f"UPDATE {quote(trigger.table)} SET {quote(column)} = {expression} WHERE rowid = NEW.rowid"
            )
    return updates


def _assignments(text: str) -> list[tuple[str, exp.Expr]] | None:
    """The (column, expression) pairs of `SET NEW.col = expression, ...`; None for any other statement."""
    if not re.match(r"SET\s+NEW\s*\.", text, re.IGNORECASE):
        return None
    try:
        node = sqlglot.parse_one(text, read=SQLGLOT_DIALECTS["mysql"])
    except sqlglot.errors.SqlglotError:
        return None
    if not isinstance(node, exp.Set):
        return None
    pairs = []
    for item in node.expressions:
        assignment = item.this if isinstance(item, exp.SetItem) else None
        if not isinstance(assignment, exp.EQ) or not isinstance(assignment.this, exp.Column):
            return None
        if assignment.this.table.upper() != "NEW":
            return None
        pairs.append((assignment.this.name, assignment.expression))
    return pairs


def _written(trigger: Trigger) -> str:
    """The tables the body writes: those it inserts into, updates or deletes from, and its own table when
    it assigns NEW columns."""
    tables = {name.lower() for name in _WRITTEN.findall(trigger.body)}
    if re.search(r"\bSET\s+NEW\s*\.", trigger.body, re.IGNORECASE):
        tables.add(trigger.table.lower())
    return ", ".join(sorted(tables)) if tables else "no table"
