"""Spider's hardness levels (easy, medium, hard, extra), counted on the sqlglot syntax tree.

The counts follow the definition of Yu et al. (2018) as spelled out in SPIDER_HARDNESS.md, not the
quirks of Spider's code (there a NOT in WHERE and each AND/OR in HAVING add to the aggregate count).
Only the top-level query counts; for `A UNION B` the clauses of A do. Subqueries count as a whole where
the definition says so and their insides never count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlglot import exp

from evaluation.scoring.statements import TranspileError, parse_one
from evaluation.scoring.vocabulary import HardnessLevel


class HardnessError(ValueError):
    """The query cannot be parsed, or is not a query."""


@dataclass(frozen=True)
class HardnessCounts:
    component1: int  # clauses, extra tables, OR and LIKE conditions
    component2: int  # nested queries in conditions, set operations
    others: int  # several aggregates, output columns, WHERE conditions, GROUP BY columns


def hardness(sql: str, *, source: str = "mysql") -> HardnessLevel:
    """ "easy", "medium", "hard" or "extra"; raises HardnessError when the query cannot be parsed."""
    return level(hardness_counts(sql, source=source))


def level(counts: HardnessCounts) -> HardnessLevel:
    c1, c2, others = counts.component1, counts.component2, counts.others
    if c1 <= 1 and others == 0 and c2 == 0:
        return "easy"
    if c2 == 0 and ((others <= 2 and c1 <= 1) or (c1 <= 2 and others < 2)):
        return "medium"
    if (c2 == 0 and ((others > 2 and c1 <= 2) or (2 < c1 <= 3 and others <= 2))) or (
        c1 <= 1 and others == 0 and c2 <= 1
    ):
        return "hard"
    return "extra"


def hardness_counts(sql: str, *, source: str = "mysql") -> HardnessCounts:
    try:
        tree, _ = parse_one(sql, source=source)
    except TranspileError as error:
        raise HardnessError(str(error)) from None
    top = _unwrap(tree)
    is_set_operation = isinstance(top, exp.SetOperation)
    while isinstance(top, exp.SetOperation):
        top = _unwrap(top.left)
    if not isinstance(top, exp.Select):
        raise HardnessError("hardness is defined for SELECT queries only")
    conditions = _conditions(top)
    return HardnessCounts(
        component1=_component1(top, conditions),
        component2=sum(_count(condition, _is_query) for condition in conditions) + is_set_operation,
        others=_others(top),
    )


def _unwrap(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Subquery) and not node.alias:
        node = node.this
    return node


def _conditions(select: exp.Select) -> list[exp.Expression]:
    """The ON, WHERE and HAVING conditions of the query itself."""
    joins = [join.args["on"] for join in select.args.get("joins") or [] if join.args.get("on")]
    clauses = [select.args.get(key) for key in ("where", "having")]
    return joins + [clause.this for clause in clauses if clause is not None]


def _component1(select: exp.Select, conditions: list[exp.Expression]) -> int:
    clauses = sum(select.args.get(key) is not None for key in ("where", "group", "order", "limit"))
    table_units = (1 if select.args.get("from_") else 0) + len(select.args.get("joins") or [])
    ors = sum(_count(condition, lambda node: isinstance(node, exp.Or)) for condition in conditions)
    likes = sum(_count(condition, lambda node: isinstance(node, exp.Like)) for condition in conditions)
    return clauses + max(table_units - 1, 0) + ors + likes


def _others(select: exp.Select) -> int:
    order = select.args.get("order")
    ordered = [term.this for term in order.expressions] if order else []
    aggregates = sum(_count(item, _is_aggregate) > 0 for item in [*select.expressions, *ordered])
    where = select.args.get("where")
    group = select.args.get("group")
    return (
        (aggregates > 1)
        + (len(select.expressions) > 1)
        + (where is not None and len(list(_leaf_conditions(where.this))) > 1)
        + (group is not None and len(group.expressions) > 1)
    )


def _is_query(node: exp.Expression) -> bool:
    return isinstance(node, exp.Subquery | exp.Query)


def _is_aggregate(node: exp.Expression) -> bool:
    return isinstance(node, exp.AggFunc)


def _count(node: exp.Expression, matches: Callable[[exp.Expression], bool]) -> int:
    """How many nodes under `node` match, not looking inside nested queries (a query itself can match)."""
    count = 0
    stack = [node]
    while stack:
        current = stack.pop()
        if matches(current):
            count += 1
        if not _is_query(current):
            stack.extend(current.iter_expressions())
    return count


def _leaf_conditions(node: exp.Expression) -> Iterator[exp.Expression]:
    """The conditions joined by AND / OR, parentheses removed."""
    if isinstance(node, exp.Paren):
        yield from _leaf_conditions(node.this)
    elif isinstance(node, exp.And | exp.Or):
        yield from _leaf_conditions(node.this)
        yield from _leaf_conditions(node.expression)
    else:
        yield node
