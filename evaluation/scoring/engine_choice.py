"""Whether a gold query's rows on a database are the engine's choice rather than the query's.

A LIMIT over unordered rows, or one that cuts through rows tied on the ORDER BY key, keeps rows the engine
chooses; so does a column outside GROUP BY and outside any aggregate whose value varies within a group.
MySQL 8.0's ONLY_FULL_GROUP_BY refuses such a column unless it is functionally dependent on the grouped
columns, when it cannot vary (import excludes MySQL gold it refuses: full_group_by.py), or wrapped in
ANY_VALUE, which the transpiler writes as the bare column; SQLite gold may select any bare column. SQLite
and MySQL may choose differently, so no prediction can be judged against such rows. Import reports
order-dependent gold (evaluation/validation.py), and a test suite leaves out the neighbour databases where
a gold query's rows are the engine's choice (suites.py).
"""

from __future__ import annotations

from pathlib import Path

import sqlglot
from sqlglot import exp

from evaluation.scoring.compare import order_key_query, results_match, split_order_keys
from evaluation.scoring.sandbox import Query, Sandbox


def order_dependence(sandbox: Sandbox, database: Path, gold_sqlite: str) -> str | None:
    """Why the gold's rows on `database` depend on the engine's order, or None when they do not: a LIMIT
    of the query, or of a subquery that runs on its own (a derived table), over unordered or tied rows."""
    tree = sqlglot.parse_one(gold_sqlite, read="sqlite")
    for select in [tree, *(node for node in tree.find_all(exp.Select) if node is not tree)]:
        why = _limit_dependence(sandbox, database, select)
        if why:
            return why
    return None


def _limit_dependence(sandbox: Sandbox, database: Path, query: exp.Expr) -> str | None:
    limit = query.args.get("limit")
    if limit is None:
        return None
    if query.args.get("order") is None:
        return "LIMIT without ORDER BY: which rows are kept is up to the engine"
    try:
        count = int(limit.expression.name)
    except (AttributeError, ValueError):
        return None
    widened = query.copy()
    widened.set("limit", exp.Limit(expression=exp.Literal.number(count + 1)))
    keyed = order_key_query(widened.sql(dialect="sqlite"), dialect="sqlite")
    if keyed is None or keyed[1] == 0:
        return None
    execution = sandbox.execute(database, keyed[0], budgeted=False)
    if execution.outcome != "ok" or len(execution.rows) <= count:
        return None  # a correlated subquery does not run on its own: its ties are not looked for
    _rows, keys = split_order_keys(execution.rows, keyed[1])
    if results_match([keys[count - 1]], [keys[count]], gold_order_keys=None):
        return "ORDER BY ... LIMIT cuts through rows that tie on the sort key: the kept rows are up to the engine"
    return None


def bare_columns_vary(sandbox: Sandbox, database: Path, gold_sqlite: str) -> bool:
    """Whether a column the gold selects outside GROUP BY and outside any aggregate takes more than one
    value within a group on `database`: the gold run with each such column as MIN(column), and as
    MAX(column), gives different rows."""
    tree = sqlglot.parse_one(gold_sqlite, read="sqlite")
    lowest, highest = _with_bare_columns(tree, exp.Min), _with_bare_columns(tree, exp.Max)
    if lowest is None or highest is None:
        return False
    low, high = sandbox.execute_many(
        [Query(database, lowest, budgeted=False), Query(database, highest, budgeted=False)]
    )
    if low.outcome != "ok" or high.outcome != "ok":
        return True  # cannot tell, so the database cannot judge the gold either
    return not results_match(low.rows, high.rows, gold_order_keys=None)


def _with_bare_columns(tree: exp.Expr, aggregate: type[exp.Min] | type[exp.Max]) -> str | None:
    """The query with every bare column of a grouped SELECT's projections wrapped in `aggregate`; None
    when it has none."""
    changed = tree.copy()
    wrapped = False
    for select in changed.find_all(exp.Select):
        group = select.args.get("group")
        if group is None:
            continue
        keys = {
            (c.table.lower(), c.name.lower()) for key in group.expressions for c in key.find_all(exp.Column)
        }
        for projection in select.expressions:
            for column in list(projection.find_all(exp.Column)):
                if column.find_ancestor(exp.AggFunc, exp.Select) is not select:
                    continue  # inside an aggregate, or a subquery's own
                if _grouped(column, keys):
                    continue
                column.replace(aggregate(this=column.copy()))
                wrapped = True
    return changed.sql(dialect="sqlite") if wrapped else None


def _grouped(column: exp.Column, keys: set[tuple[str, str]]) -> bool:
    name, table = column.name.lower(), column.table.lower()
    return any(
        name == key_name and (not table or not key_table or table == key_table)
        for key_table, key_name in keys
    )
