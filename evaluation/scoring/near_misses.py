"""Near misses of a gold query: the neighbour queries of test-suite accuracy.

Test-suite accuracy (Zhong, Yu and Klein, EMNLP 2020) keeps the neighbour databases on which the gold
query answers otherwise than its near misses: small mutations of the gold that are usually wrong.
`near_misses` makes them. Each is one mutation at one site of the gold's sqlglot tree, and each rule of
`RULES` is applied at every site where it applies:

- `drop_conjunct`: a top-level conjunct of a WHERE or HAVING dropped (the whole clause when it has one),
  but not an equality of two columns, the join condition of a comma join; a join's ON is never touched;
- `drop_distinct`, `add_distinct`: a SELECT's DISTINCT removed or added, where it can change the answer
  (not in the query of IN or EXISTS, an arm of UNION, or a SELECT of aggregates without GROUP BY);
- `aggregate_swap`: COUNT, SUM, AVG, MIN, MAX each made each of the others, and COUNT, SUM, AVG with and
  without DISTINCT; COUNT(*) and COUNT(1) are left alone, having no column to sum or count distinct;
- `comparison_swap`: `<` made `<=` and `>`, `<=` made `<` and `>=` (likewise `>`, `>=`), `=` and `<>`,
  wherever they are (ON included);
- `order_direction`: an ORDER BY key's ASC and DESC swapped;
- `and_or`: an AND of a WHERE or HAVING made OR, and an OR made AND (never in ON);
- `like`: LIKE and NOT LIKE swapped; `LIKE '%x%'` made `= 'x'` (NOT LIKE: `<>`) when the pattern's only
  wildcards are `%` at its ends;
- `in_list`: IN (of a list or a subquery), EXISTS and IS NULL negated, or their negation dropped;
- `literal_shift`: a number 1 more and 1 less (2.50: 3.50 and 1.50), a 'YYYY-MM-DD' date a day later and
  earlier; not the numbers that are positions or counts (LIMIT, OFFSET, ORDER BY 1, COUNT(1), ...);
- `limit_shift`: LIMIT n made n + 1, and n - 1 when that is at least 1;
- `column_swap`: a column reference made another column of its table (resolved through the FROM, its
  aliases and the enclosing queries, with `schema`) of the same type family (numbers, text, dates and
  times), the first 3 in schema order; a subquery's output keeps its name (`id AS anno`), a reference
  without a table name gets no name another table in reach has, and an ORDER BY key that names an
  output column (sqlglot's reading) is left alone;
- `join_kind`: an INNER JOIN with ON or USING made a LEFT JOIN;
- `group_key_dropped`: one key of a GROUP BY of at least two dropped.

Every near miss parses in the gold's dialect, differs from the gold once both are written by sqlglot,
and appears once. They come in rounds: the first of each rule in `RULES` order, then the second of
each, and so on, each rule's sites in the tree's depth-first order, cut at `limit`; so a rule with many
sites does not crowd out the others. Nothing here logs or raises about the query: an unreadable gold
has no near misses, and a mutation sqlglot cannot write is skipped.
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.optimizer.scope import Scope, traverse_scope

from evaluation.scoring.resolver import scope_sources
from evaluation.scoring.sqltypes import type_of_declared
from evaluation.scoring.statements import SQLGLOT_DIALECTS, TranspileError, check_source, parse_one

COLUMN_ALTERNATIVES = 3  # per column reference, so that wide tables do not drown the other rules


@dataclass(frozen=True)
class NearMiss:
    rule: str  # one of RULES
    sql: str  # the mutated query, written in the same dialect as the gold


@dataclass(frozen=True)
class _Gold:
    tree: exp.Expr
    dialect: Dialect
    column_swaps: Mapping[int, list[str]]  # id of a column reference of `tree` -> the columns it may become


# A rule's mutations at one site: each is what takes the site's place in a copy of the tree (None: the
# site is removed). They are built from copies, so the gold's tree is never changed.
Rule = Callable[[exp.Expr, _Gold], Iterator[exp.Expr | None]]


def near_misses(
    gold_sql: str,
    *,
    source: str = "mysql",
    schema: Mapping[str, Mapping[str, str]] | None = None,
    limit: int = 60,
) -> list[NearMiss]:
    """The near misses of one gold query, written in `source` ("mysql" or "sqlite"); [] if it cannot be read.

    `schema` is table -> column -> declared type (as `mysql_dump.BuildReport.schema` gives it), names
    compared case-insensitively; without it, `column_swap` has nothing to swap.
    """
    try:
        tree, _ = parse_one(gold_sql, source=check_source(source))
    except (TranspileError, RecursionError):
        return []
    dialect = SQLGLOT_DIALECTS[source]
    try:
        seen = {_written(tree.copy(), dialect)}
    except Exception:  # sqlglot reads the gold but cannot write it: none of its mutations could be checked
        return []
    gold = _Gold(tree, dialect, _column_swaps(tree, schema or {}))
    streams = {rule: _mutations(gold, rule) for rule in RULES}
    found: list[NearMiss] = []
    while streams:
        for rule, stream in list(streams.items()):
            if len(found) >= limit:
                return found
            sql = next((sql for sql, written in stream if _first_time(written, seen)), None)
            if sql is None:
                del streams[rule]
            else:
                found.append(NearMiss(rule, sql))
    return found


def _mutations(gold: _Gold, rule: str) -> Iterator[tuple[str, str]]:
    """A rule's mutations of the gold that sqlglot writes and reads back: (the SQL, as sqlglot rewrites it)."""
    mutate = _RULES[rule]
    for index, site in enumerate(gold.tree.walk(bfs=False)):
        for replacement in mutate(site, gold):
            try:
                sql = _written(_replaced(gold.tree, index, replacement), gold.dialect)
                written = _written(sqlglot.parse_one(sql, read=gold.dialect), gold.dialect)
            except Exception:  # sqlglot cannot write or read back this mutation: skipped, not the gold
                continue
            yield sql, written


def _first_time(written: str, seen: set[str]) -> bool:
    """Whether a query (as sqlglot writes it) is not in `seen`; it is added."""
    if written in seen:
        return False
    seen.add(written)
    return True


def _written(tree: exp.Expr, dialect: Dialect) -> str:
    # RAISE, not sqlglot's default warning, which writes the query without what the dialect cannot say.
    return dialect.generate(tree, copy=False, unsupported_level=sqlglot.ErrorLevel.RAISE)


def _replaced(tree: exp.Expr, index: int, replacement: exp.Expr | None) -> exp.Expr:
    """A copy of `tree` with its `index`-th node in depth-first order replaced (None: removed)."""
    if index == 0 and replacement is not None:
        return replacement
    mutant = tree.copy()
    site = next(itertools.islice(mutant.walk(bfs=False), index, None))
    if replacement is None:
        site.pop()
    else:
        _put(site, replacement)
    return mutant


def _put(site: exp.Expr, new: exp.Expr) -> None:
    """Replace `site` by `new`, in parentheses where `new` binds more loosely than its place requires:
    sqlglot writes a tree as it stands, so `a AND (b OR c)` needs its Paren node."""
    parent = site.parent
    looser = (isinstance(new, exp.Connector) and isinstance(parent, exp.Binary | exp.Not)) or (
        isinstance(new, exp.Not) and isinstance(parent, exp.Binary) and not isinstance(parent, exp.Connector)
    )
    site.replace(exp.Paren(this=new) if looser else new)


# --- the rules -------------------------------------------------------------------------------------


def _drop_conjunct(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    if not isinstance(site, exp.Where | exp.Having):
        return
    conjuncts = _conjuncts(site.this)
    for dropped in conjuncts:
        if _is_column_equality(dropped):
            continue
        kept = [conjunct.copy() for conjunct in conjuncts if conjunct is not dropped]
        yield type(site)(this=exp.and_(*kept, copy=False)) if kept else None


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    condition = condition.unnest()
    if isinstance(condition, exp.And):
        return [*_conjuncts(condition.this), *_conjuncts(condition.expression)]
    return [condition]


def _is_column_equality(condition: exp.Expr) -> bool:
    return (
        isinstance(condition, exp.EQ)
        and isinstance(condition.this, exp.Column)
        and isinstance(condition.expression, exp.Column)
    )


def _drop_distinct(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    if isinstance(site, exp.Select) and site.args.get("distinct") and not _distinct_is_moot(site):
        changed = site.copy()
        changed.set("distinct", None)
        yield changed


def _add_distinct(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    if isinstance(site, exp.Select) and not site.args.get("distinct") and not _distinct_is_moot(site):
        changed = site.copy()
        changed.set("distinct", exp.Distinct())
        yield changed


def _distinct_is_moot(select: exp.Select) -> bool:
    """Whether DISTINCT cannot change what `select` means: the query of IN or EXISTS, an arm of a UNION
    that removes duplicates anyway, or a single row of aggregates."""
    holder = select.parent.parent if isinstance(select.parent, exp.Subquery) else select.parent
    if isinstance(holder, exp.In | exp.Exists):
        return True
    if isinstance(holder, exp.Union) and holder.args.get("distinct"):
        return True
    return not select.args.get("group") and all(
        projection.find(exp.AggFunc) and not projection.find(exp.Window) for projection in select.expressions
    )


_AGGREGATES: tuple[type[exp.Expr], ...] = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)


def _aggregate_swap(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    if type(site) not in _AGGREGATES or site.expressions:  # several arguments: no other aggregate takes them
        return
    argument = site.this
    distinct = isinstance(argument, exp.Distinct)
    operands = argument.expressions if distinct else [argument]
    if len(operands) != 1 or isinstance(operands[0], exp.Star | exp.Literal):
        return
    for other in _AGGREGATES:
        if other is not type(site):
            yield other(this=argument.copy())
    if isinstance(site, exp.Count | exp.Sum | exp.Avg):
        toggled = operands[0].copy() if distinct else exp.Distinct(expressions=[argument.copy()])
        yield type(site)(this=toggled)


_COMPARISON_SWAPS: dict[type[exp.Expr], tuple[type[exp.Expr], ...]] = {
    exp.LT: (exp.LTE, exp.GT),
    exp.LTE: (exp.LT, exp.GTE),
    exp.GT: (exp.GTE, exp.LT),
    exp.GTE: (exp.GT, exp.LTE),
    exp.EQ: (exp.NEQ,),
    exp.NEQ: (exp.EQ,),
}


def _comparison_swap(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    for other in _COMPARISON_SWAPS.get(type(site), ()):
        yield other(this=site.this.copy(), expression=site.expression.copy())


def _order_direction(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    if isinstance(site, exp.Ordered):
        descending = not site.args.get("desc")
        changed = site.copy()
        changed.set("desc", descending)
        # MySQL and SQLite sort NULLs first ascending, last descending: the default of the new direction,
        # which they write without NULLS FIRST/LAST (MySQL has no such clause).
        changed.set("nulls_first", not descending)
        yield changed


def _and_or(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    clause = site.find_ancestor(exp.Where, exp.Having, exp.Join, exp.Select)
    if isinstance(site, exp.And | exp.Or) and isinstance(clause, exp.Where | exp.Having):
        # and_ and or_ put connectors among their operands in parentheses, which precedence may need.
        swap = exp.or_ if isinstance(site, exp.And) else exp.and_
        yield swap(site.this.copy(), site.expression.copy(), copy=False)


def _like(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    # A NOT LIKE is either a negated Like or a Like under Not; the site is then the Not.
    like = site.this if isinstance(site, exp.Not) else site
    if not isinstance(like, exp.Like) or (like is site and isinstance(site.parent, exp.Not)):
        return
    negated = (like is not site) != bool(like.args.get("negate"))
    toggled = like.copy()
    toggled.set("negate", None if negated else True)
    yield toggled
    pattern = like.expression
    text = _plain_text(pattern.this) if isinstance(pattern, exp.Literal) and pattern.is_string else None
    if text is not None and not isinstance(site.parent, exp.Escape):
        equality = exp.NEQ if negated else exp.EQ
        yield equality(this=like.this.copy(), expression=exp.Literal.string(text))


def _plain_text(pattern: str) -> str | None:
    """What a LIKE pattern looks for when its only wildcards are `%` at its ends ('%rossi%': 'rossi')."""
    text = pattern.strip("%")
    if text == pattern or not text or any(character in text for character in "%_\\"):
        return None
    return text


def _in_list(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    if isinstance(site, exp.Not) and _negatable(site.this):
        yield site.this.copy()
    elif _negatable(site) and not isinstance(site.parent, exp.Not):
        yield exp.Not(this=site.copy())


def _negatable(node: exp.Expr) -> bool:
    return isinstance(node, exp.In | exp.Exists) or (
        isinstance(node, exp.Is) and isinstance(node.expression, exp.Null)
    )


def _literal_shift(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    if not isinstance(site, exp.Literal) or _is_position_or_count(site):
        return
    if site.is_string:
        yield from _days_around(site.this)
        return
    try:
        value = Decimal(site.this)
    except InvalidOperation:
        return
    if value.is_finite():
        # Decimal keeps the digits after the point: 2.50 gives 3.50 and 1.50, 7 gives 8 and 6.
        yield exp.Literal.number(str(value + 1))
        yield exp.Literal.number(str(value - 1))


def _days_around(text: str) -> Iterator[exp.Expr]:
    """A 'YYYY-MM-DD' date a day later and a day earlier."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        return
    for days in (1, -1):
        try:
            yield exp.Literal.string((day + datetime.timedelta(days=days)).isoformat())
        except OverflowError:  # 0001-01-01 has no day before, 9999-12-31 none after
            continue


def _is_position_or_count(literal: exp.Literal) -> bool:
    """LIMIT and OFFSET (limit_shift's), ORDER BY 2 and GROUP BY 2, COUNT(1), and EXISTS (SELECT 1)."""
    parent = literal.parent
    return (
        literal.find_ancestor(exp.Limit, exp.Offset) is not None
        or isinstance(parent, exp.Ordered | exp.Group | exp.Count)
        or (
            isinstance(parent, exp.Select)
            and literal.arg_key == "expressions"
            and isinstance(parent.parent, exp.Exists)
        )
    )


def _limit_shift(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    count = site.expression if isinstance(site, exp.Limit) else None
    if isinstance(count, exp.Literal) and count.is_int:
        for shifted in (int(count.this) + 1, int(count.this) - 1):
            if shifted >= 1:
                changed = site.copy()
                changed.set("expression", exp.Literal.number(shifted))
                yield changed


def _column_swap(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    select = site.parent
    # A subquery's output keeps its name, which the query around it may use.
    keep_name = isinstance(select, exp.Select) and site.arg_key == "expressions" and select is not gold.tree
    for name in gold.column_swaps.get(id(site), ()):
        changed = site.copy()
        # Quoted like the original; otherwise sqlglot quotes the name where the dialect needs it.
        changed.set("this", exp.to_identifier(name, quoted=site.this.args.get("quoted") or None))
        yield exp.Alias(this=changed, alias=site.this.copy()) if keep_name else changed


def _join_kind(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    if (
        isinstance(site, exp.Join)
        and not site.side
        and site.kind in ("", "INNER")
        and (site.args.get("on") or site.args.get("using"))
    ):
        changed = site.copy()
        changed.set("kind", None)
        changed.set("side", "LEFT")
        yield changed


def _group_key_dropped(site: exp.Expr, gold: _Gold) -> Iterator[exp.Expr | None]:
    if isinstance(site, exp.Group) and len(site.expressions) >= 2:
        for dropped in site.expressions:
            changed = site.copy()
            changed.set("expressions", [key.copy() for key in site.expressions if key is not dropped])
            yield changed


_RULES: dict[str, Rule] = {
    "drop_conjunct": _drop_conjunct,
    "drop_distinct": _drop_distinct,
    "add_distinct": _add_distinct,
    "aggregate_swap": _aggregate_swap,
    "comparison_swap": _comparison_swap,
    "order_direction": _order_direction,
    "and_or": _and_or,
    "like": _like,
    "in_list": _in_list,
    "literal_shift": _literal_shift,
    "limit_shift": _limit_shift,
    "column_swap": _column_swap,
    "join_kind": _join_kind,
    "group_key_dropped": _group_key_dropped,
}
RULES: tuple[str, ...] = tuple(_RULES)


# --- which columns a column reference may become -----------------------------------------------------

# Table -> column -> (the column as the schema spells it, its type family or None), names in lower case
# and columns in schema order.
_Families = dict[str, dict[str, tuple[str, str | None]]]


def _column_swaps(tree: exp.Expr, schema: Mapping[str, Mapping[str, str]]) -> dict[int, list[str]]:
    """For each column reference of `tree` whose table is known, the columns of that table of the same
    type family, the first COLUMN_ALTERNATIVES in schema order."""
    families: _Families = {
        table.lower(): {column.lower(): (column, _family(declared)) for column, declared in columns.items()}
        for table, columns in schema.items()
    }
    swaps: dict[int, list[str]] = {}
    try:
        scopes = traverse_scope(tree) if families else []
    except sqlglot.errors.SqlglotError:  # a query sqlglot cannot scope keeps its columns
        return swaps
    for scope in scopes:
        for column in scope.columns:
            # A correlated reference is listed by its own scope first (innermost scopes come first).
            if id(column) in swaps or not isinstance(column.this, exp.Identifier):
                continue
            owner = _owner(column, scope, families)
            if owner is None:
                continue
            table, taken = owner
            name = column.name.lower()
            family = families[table][name][1]
            if family is not None:
                alternatives = [
                    spelled
                    for known, (spelled, other) in families[table].items()
                    if other == family and known != name and known not in taken
                ]
                swaps[id(column)] = alternatives[:COLUMN_ALTERNATIVES]
    return swaps


def _family(declared: str) -> str | None:
    sql_type = type_of_declared(declared)
    if sql_type is None:
        return None
    return "number" if sql_type.is_number else "temporal" if sql_type.is_temporal else "text"


def _owner(column: exp.Column, scope: Scope, families: _Families) -> tuple[str, set[str]] | None:
    """The table (lower case) a column reference reads, looked up in its scope, then the enclosing ones;
    None when it reads a subquery, an output alias, or cannot be told.

    With it, for a reference without a table name, the names of the other tables' columns in reach: the
    reference renamed to one of them would be ambiguous, or read another table.
    """
    name, qualifier = column.name.lower(), column.table.lower()
    in_reach: list[str] = []
    current: Scope | None = scope
    while current is not None:
        sources = scope_sources(current)
        if qualifier:
            source = sources.get(qualifier)
            if source is not None:
                table = source.name.lower() if isinstance(source, exp.Table) else ""
                return (table, set()) if name in families.get(table, {}) else None
        else:
            tables = [source.name.lower() for source in sources.values() if isinstance(source, exp.Table)]
            if len(tables) < len(sources):  # what a subquery outputs is not looked into
                return None
            in_reach += tables
            owners = [table for table in tables if name in families.get(table, {})]
            if owners:
                others = [families.get(table, {}) for table in in_reach if table != owners[0]]
                return (owners[0], set().union(*others)) if len(owners) == 1 else None
        current = current.parent
    return None
