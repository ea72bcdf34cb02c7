"""The first pass of `dialect.to_sqlite` over a parsed MySQL query: one walk of the tree that

- rejects a quoted string used as a table name (`FROM 'ordini'`), as MySQL does (sqlglot reads a name);
- spells the string arguments of date functions as SQLite reads them ('2024-6-1' means 2024-06-01);
- tells whether the tree holds anything `typed_rewrites` may change (if not, no types are worked out);
- lists the nodes `function_rewrites.with_sqlite_functions` rewrites, in depth-first order;
- tells whether the statement is a query that reads no table at all (`hard_coded`): a hard-coded answer.

One walk, with the role of each node class looked up once per class: a walk per job, each testing
isinstance against sqlglot's classes, made transpiling a fifth slower on the Termite queries.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlglot import exp

from evaluation.scoring.function_rewrites import DATE_ARGUMENT_NODES, is_rewritten, normalise_date_arguments
from evaluation.scoring.statements import TranspileError
from evaluation.scoring.typed_rewrites import needs_types


class Survey(NamedTuple):
    needs_types: bool  # some node's rewriting needs the types of expressions
    rewrites: list[exp.Expr]  # the nodes `with_sqlite_functions` rewrites, in depth-first order
    hard_coded: bool  # a query that reads only constants, CTEs of constants or DUAL: no table of the database


class ReadsNoTable(TranspileError):
    """A prediction that reads no table: its result is the same on every database, a hard-coded answer."""

    def __init__(self) -> None:
        super().__init__(
            "the query reads no table, so its result does not depend on the database: a hard-coded answer "
            "is scored wrong"
        )


# MySQL's dummy table: `SELECT 1 FROM DUAL` reads nothing.
_NO_TABLE = "dual"


def hard_coded(tree: exp.Expr, tables: list[exp.Expr], ctes: list[exp.Expr]) -> bool:
    """Whether `tree` is a query none of whose `tables` (every table node in it) names a table of the
    database rather than one of its `ctes` or DUAL.

    Only a query asks for rows: a statement that is none (a write, PRAGMA, BEGIN, ATTACH, what sqlglot
    reads only as a command) is not an answer at all, and the sandbox refuses it as it runs.
    """
    if not _is_a_query(tree):
        return False
    named = {cte.alias_or_name.lower() for cte in ctes} | {_NO_TABLE}
    return not any(table.name and table.name.lower() not in named for table in tables)


def tree_is_hard_coded(tree: exp.Expr) -> bool:
    return hard_coded(tree, list(tree.find_all(exp.Table)), list(tree.find_all(exp.CTE)))


def _is_a_query(tree: exp.Expr) -> bool:
    # sqlglot's MySQL reader takes `VALUES (1)` for a call of MySQL's VALUES() function; SQLite runs what it
    # becomes as a VALUES statement, so it is a query too.
    return isinstance(tree, (exp.Query, exp.Values)) or (
        isinstance(tree, exp.Anonymous) and tree.name.upper() == "VALUES"
    )


def survey(tree: exp.Expr, text: str) -> Survey:
    """Check and survey `tree`, parsed from `text` (see above); raises TranspileError."""
    typed = False
    quoted_table = False
    rewrites: list[exp.Expr] = []
    tables: list[exp.Expr] = []
    ctes: list[exp.Expr] = []
    for node in tree.walk(bfs=False):
        role = _ROLES[type(node)]
        if role is None:
            continue
        if role.cte:
            ctes.append(node)
        if role.table:
            tables.append(node)
            quoted_table = quoted_table or _is_quoted_table_name(node, text)
        if role.date_function:
            normalise_date_arguments(node)
        typed = typed or role.typed
        if role.rewritten:
            rewrites.append(node)
    if quoted_table:  # the first one in breadth-first order is reported
        for node in tree.walk():
            if isinstance(node, exp.Table):
                _reject_quoted_table_name(node, text)
    return Survey(typed, rewrites, hard_coded(tree, tables, ctes))


class _Role(NamedTuple):
    """What `survey` does with a node of one class."""

    table: bool  # a table: is its name a quoted string? Is it the database's?
    cte: bool  # a common table expression: a name the query defines
    date_function: bool  # a date function: spell its string arguments as dates
    typed: bool  # its rewriting needs types
    rewritten: bool  # `with_sqlite_functions` rewrites it


class _RoleOfClass(dict[type, _Role | None]):
    """The role of a node class, None when `survey` has nothing to do with its nodes (most of them); each
    class is classified when first met."""

    def __missing__(self, cls: type) -> _Role | None:
        found = _Role(
            table=issubclass(cls, exp.Table),
            cte=issubclass(cls, exp.CTE),
            date_function=issubclass(cls, DATE_ARGUMENT_NODES),
            typed=needs_types(cls),
            rewritten=is_rewritten(cls),
        )
        role = found if any(found) else None
        self[cls] = role
        return role


_ROLES = _RoleOfClass()


def _is_quoted_table_name(table: exp.Expr, text: str) -> bool:
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
