"""Comparing query results: execution accuracy (EA) and the authors' stricter rule (EA-strict).

Pure functions over rows of plain values (int, float, str, bytes, None), as the sandbox returns them.

EA follows the test-suite evaluation of Zhong et al. (2020): rows are a multiset (duplicates count), their
order matters only where the gold query has a top-level ORDER BY, and the prediction may return the same
columns in another order. EA-strict is the rule of the Termite authors: the same list of rows in the same
order with the columns in the same order. Both compare numbers with a small tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Literal, TypeAlias

import sqlglot
from sqlglot import exp

from evaluation.scoring.collations import uca_weight

REL_TOL = 1e-6
ABS_TOL = 1e-9

Value: TypeAlias = int | float | str | bytes | None
Row: TypeAlias = tuple[Value, ...]  # also an order key: the values of a row's ORDER BY terms
SortKey: TypeAlias = tuple[int] | tuple[int, Value]

# A float sorts by its value rounded to this many significant digits, so that floating-point noise
# (0.30000000000000004 against 0.3) does not change the order in which rows are paired for comparison.
_SORT_DIGITS = 12


def results_match(
    gold_rows: Sequence[Row], pred_rows: Sequence[Row], *, gold_order_keys: Sequence[Row] | None
) -> bool:
    """EA: do the predicted rows equal the gold rows?

    Without `gold_order_keys` both are compared as multisets. With them (one key tuple per gold row, from
    `order_key_query`), the predicted rows must come in the gold order, except that consecutive gold rows
    whose keys are equal form a tie group whose rows may come in any order. One permutation of the columns
    must work for every row.
    """
    if gold_order_keys is not None and len(gold_order_keys) != len(gold_rows):
        raise ValueError("expected one order key per gold row")
    if len(gold_rows) != len(pred_rows):
        return False
    if list(gold_rows) == list(pred_rows):
        return True
    if len(gold_rows[0]) != len(pred_rows[0]):
        return False
    gold = [_canonical_row(row) for row in gold_rows]
    pred = [_canonical_row(row) for row in pred_rows]
    groups = _tie_groups(gold_order_keys) if gold_order_keys is not None else [(0, len(gold))]

    def match_with(permutation: tuple[int, ...]) -> bool:
        permuted = [tuple(row[j] for j in permutation) for row in pred]
        return all(_same_multiset(gold[start:end], permuted[start:end]) for start, end in groups)

    identity = tuple(range(len(gold[0])))
    if match_with(identity):
        return True
    return any(match_with(p) for p in _column_permutations(gold, pred) if p != identity)


# Why a result is not the gold's, from the coarsest reason to the finest: what a practice version shows.
Difference: TypeAlias = Literal["columns", "row_count", "values", "order", "strict_only"]


def difference(
    gold_rows: Sequence[Row], pred_rows: Sequence[Row], *, gold_order_keys: Sequence[Row] | None
) -> Difference | None:
    """Why the predicted rows are not the gold's, None when they are by both rules: another number of
    `columns`, of rows (`row_count`), other `values`, the same rows in another `order` where the gold's
    ORDER BY fixes it, or right by EA but not by EA-strict (`strict_only`: rows or columns in another
    order)."""
    if results_match(gold_rows, pred_rows, gold_order_keys=gold_order_keys):
        return None if results_match_strict(gold_rows, pred_rows) else "strict_only"
    if gold_rows and pred_rows and len(gold_rows[0]) != len(pred_rows[0]):
        return "columns"
    if len(gold_rows) != len(pred_rows):
        return "row_count"
    if gold_order_keys is not None and results_match(gold_rows, pred_rows, gold_order_keys=None):
        return "order"
    return "values"


def results_match_strict(gold_rows: Sequence[Row], pred_rows: Sequence[Row]) -> bool:
    """EA-strict: the same rows in the same order, columns in the same order (numbers within tolerance)."""
    if tuple(gold_rows) == tuple(pred_rows):  # equal values are equal within any tolerance
        return True
    return len(gold_rows) == len(pred_rows) and all(
        _rows_equal(_canonical_row(gold), _canonical_row(pred))
        for gold, pred in zip(gold_rows, pred_rows, strict=True)
    )


def split_order_keys(rows: Sequence[Row], n_keys: int) -> tuple[list[Row], list[Row]]:
    """Split rows of a query made by `order_key_query` into (result rows, order keys).

    `n_keys == 0` means the keys could not be isolated (see `order_key_query`): each whole row is then its
    own key, so the gold order is required exactly and only identical rows may swap places.
    """
    if n_keys == 0:
        return list(rows), [tuple(row) for row in rows]
    return [tuple(row[:-n_keys]) for row in rows], [tuple(row[-n_keys:]) for row in rows]


def order_key_query(sql: str, *, dialect: str = "sqlite") -> tuple[str, int] | None:
    """The query with its top-level ORDER BY expressions appended as extra output columns.

    Returns None when the query has no top-level ORDER BY, else `(query, n)` where the last `n` output
    columns are the sort keys and the ORDER BY itself is left as written. Keys given by position or by
    alias become copies of the output expression they name; for DISTINCT and set operations (UNION ...
    ORDER BY) only keys that name an output column are accepted, because copying an output column cannot
    change which rows are distinct, while any other expression could.

    Where the keys cannot be appended without possibly changing the result (a key outside the output of a
    DISTINCT or set operation, a position pointing into `*`), the conservative choice is `(sql, 0)`: the
    query unchanged and the gold order required exactly (see `split_order_keys`).

    Raises ValueError when the text is not exactly one statement that sqlglot can parse; the message never
    quotes the query.
    """
    try:
        statements = sqlglot.parse(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        raise ValueError("the query cannot be parsed to find its ORDER BY") from None
    if len(statements) != 1 or statements[0] is None:
        raise ValueError("expected exactly one SQL statement")
    query = _unwrap(statements[0])
    order = query.args.get("order")
    if order is None:
        return None
    keys = [ordered.this for ordered in order.expressions]
    if isinstance(query, exp.SetOperation):
        appended = _append_to_set_operation(query, keys)
    elif isinstance(query, exp.Select):
        appended = _append_to_select(query, keys)
    else:
        return None
    if not appended:
        return sql, 0
    return query.sql(dialect=dialect), len(keys)


def _unwrap(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Subquery) and not node.alias:
        node = node.this
    return node


def _append_to_select(select: exp.Select, keys: list[exp.Expr]) -> bool:
    projections = select.expressions
    positions = [_output_position(projections, key) for key in keys]
    if select.args.get("distinct") and None in positions:
        return False
    aliases = {p.alias: p.this for p in projections if isinstance(p, exp.Alias)}
    columns = []
    for key, position in zip(keys, positions, strict=True):
        if position is not None:
            if projections[position].is_star:
                return False
            columns.append(projections[position].unalias().copy())
        elif _is_position(key):
            return False
        else:
            columns.append(_substitute_aliases(key.copy(), aliases))
    select.set("expressions", [*projections, *columns])
    return True


def _append_to_set_operation(query: exp.SetOperation, keys: list[exp.Expr]) -> bool:
    arms = list(_set_operation_arms(query))
    found = [_output_position(arms[0].expressions, key) for key in keys]
    positions = [position for position in found if position is not None]
    if len(positions) < len(found):
        return False
    if any(arm.expressions[position].is_star for arm in arms for position in positions):
        return False
    for arm in arms:
        columns = [arm.expressions[position].unalias().copy() for position in positions]
        arm.set("expressions", [*arm.expressions, *columns])
    return True


def _set_operation_arms(node: exp.Expr) -> Iterator[exp.Expr]:
    node = _unwrap(node)
    if isinstance(node, exp.SetOperation):
        yield from _set_operation_arms(node.left)
        yield from _set_operation_arms(node.right)
    else:
        yield node


def _output_position(projections: list[exp.Expr], key: exp.Expr) -> int | None:
    """Which output column an ORDER BY term names: by position, by alias or name, or by equal expression.

    Positions past a `*` cannot be resolved without the schema: they count as not found.
    """
    if _is_position(key):
        position = int(key.name) - 1
        in_range = 0 <= position < len(projections)
        if in_range and not any(p.is_star for p in projections[:position]):
            return position
        return None
    for position, projection in enumerate(projections):
        if isinstance(key, exp.Column) and not key.table and key.name == projection.alias_or_name:
            return position
        if key == projection.unalias():
            return position
    return None


def _is_position(key: exp.Expr) -> bool:
    return isinstance(key, exp.Literal) and key.is_int


def _substitute_aliases(key: exp.Expr, aliases: dict[str, exp.Expr]) -> exp.Expr:
    # An output alias cannot be referred to from another output column, so it is replaced by what it names.
    def substitute(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in aliases:
            return aliases[node.name].copy()
        return node

    return key.transform(substitute)


def _canonical_value(value: Value) -> Value:
    # A BLOB holding UTF-8 text equals that text: engines differ in which of the two they return.
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value
    return value


def _canonical_row(row: Sequence[Value]) -> Row:
    return tuple(_canonical_value(value) for value in row)


def _values_equal(a: Value, b: Value) -> bool:
    if isinstance(a, int | float):
        if not isinstance(b, int | float):
            return False
        # Integers are identifiers and counts: equal only when equal. A float anywhere gets the tolerance.
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    if isinstance(b, int | float):
        return False
    return type(a) is type(b) and a == b


def _rows_equal(a: Row, b: Row) -> bool:
    return len(a) == len(b) and all(_values_equal(x, y) for x, y in zip(a, b, strict=True))


def _sort_key(value: Value) -> SortKey:
    if value is None:
        return (0,)
    if isinstance(value, float):
        return (1, float(f"{value:.{_SORT_DIGITS}g}"))
    if isinstance(value, int):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    return (3, value)


def _row_sort_key(row: Row) -> tuple[SortKey, ...]:
    return tuple(_sort_key(value) for value in row)


def _same_multiset(gold: list[Row], pred: list[Row]) -> bool:
    """Multiset equality within tolerance: both sides sorted the same way, then paired in order.

    Pairing after sorting is exact except when two rows differ only by values that are within the
    tolerance of each other yet sort apart: never seen in practice, so not worth a quadratic matching.
    """
    if len(gold) == 1:
        return _rows_equal(gold[0], pred[0])
    return all(
        _rows_equal(g, p)
        for g, p in zip(sorted(gold, key=_row_sort_key), sorted(pred, key=_row_sort_key), strict=True)
    )


def _tie_groups(keys: Sequence[Row]) -> list[tuple[int, int]]:
    """Consecutive runs of equal order keys, as (start, end) index ranges."""
    groups: list[tuple[int, int]] = []
    start = 0
    for index in range(1, len(keys) + 1):
        if index == len(keys) or not _keys_tie(keys[start], keys[index]):
            groups.append((start, index))
            start = index
    return groups


def _keys_tie(a: Row, b: Row) -> bool:
    # The database copies compare text ignoring case and accents (utf8mb4_0900_ai_ci, MySQL 8.0's default
    # collation), so rows whose keys differ only so are tied and the engine may return them in either order.
    return _rows_equal(_fold_case(a), _fold_case(b))


def _fold_case(key: Row) -> Row:
    return tuple(uca_weight(value) if isinstance(value, str) else value for value in _canonical_row(key))


def _column_permutations(gold: list[Row], pred: list[Row]) -> Iterator[tuple[int, ...]]:
    """Permutations p (gold column i = pred column p[i]) worth a full comparison.

    Pred column j is a candidate for gold column i only when their value multisets agree. Pred columns with
    identical values in every row are interchangeable, so only one ordering of them is tried.
    """
    width = len(gold[0])
    gold_columns = [_sorted_column(gold, i) for i in range(width)]
    pred_columns = [_sorted_column(pred, j) for j in range(width)]
    candidates = [
        [j for j in range(width) if _columns_equal(gold_columns[i], pred_columns[j])] for i in range(width)
    ]
    twin_of = _first_identical_column(pred)
    yield from _assign(candidates, twin_of, [], set())


def _assign(
    candidates: list[list[int]], twin_of: list[int], chosen: list[int], used: set[int]
) -> Iterator[tuple[int, ...]]:
    if len(chosen) == len(candidates):
        yield tuple(chosen)
        return
    for j in candidates[len(chosen)]:
        # Of identical pred columns, take the first one still free: the others give the same rows.
        if j in used or any(twin_of[k] == twin_of[j] and k not in used for k in range(twin_of[j], j)):
            continue
        used.add(j)
        chosen.append(j)
        yield from _assign(candidates, twin_of, chosen, used)
        chosen.pop()
        used.remove(j)


def _sorted_column(rows: list[Row], index: int) -> list[Value]:
    return sorted((row[index] for row in rows), key=_sort_key)


def _columns_equal(a: list[Value], b: list[Value]) -> bool:
    return all(_values_equal(x, y) for x, y in zip(a, b, strict=True))


def _first_identical_column(rows: list[Row]) -> list[int]:
    """For each column, the index of the first column holding exactly the same values in every row."""
    first: dict[Row, int] = {}
    return [first.setdefault(tuple(row[j] for row in rows), j) for j in range(len(rows[0]))]
