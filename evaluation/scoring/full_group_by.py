"""MySQL 8.0's ONLY_FULL_GROUP_BY, with its detection of functional dependence, as a static check.

    keys = read_keys(path)                        # a database's unique keys, NOT NULL columns and views
    refusal = full_group_by_refusal(tree, keys)   # None, or MySQL's error: refusal.message

ONLY_FULL_GROUP_BY is in MySQL 8.0's default sql_mode (MariaDB's lacks it, and MariaDB's own has no
detection of functional dependence). A query that MySQL 8.0 refuses under it runs on the SQLite copies,
whose GROUP BY is loose, so this check refuses it first, with MySQL's error number and wording:

- ERROR 1055: an expression of the SELECT list, of ORDER BY or of HAVING of a query with GROUP BY holds a
  column that is neither grouped nor functionally dependent on the grouped columns;
- ERROR 1140: the same in a query aggregated without GROUP BY (an aggregate in its SELECT list, HAVING or
  ORDER BY), where nothing is grouped;
- ERROR 3065 and 3066: SELECT DISTINCT ordered by a column that is not selected, or by an aggregate that is
  not (reference manual, "MySQL Handling of GROUP BY"; MySQL's sql/aggregate_check.h).

Each query block is checked on its own (derived tables, CTEs and subqueries too), as MySQL does after
turning outer joins that WHERE makes null-rejecting into inner joins. An expression is accepted when it is
equal to a GROUP BY expression (MySQL compares the whole expression: `id + FLOOR(v)` is refused under
`GROUP BY id, FLOOR(v)`), or when each of its columns is functionally dependent on the GROUP BY columns
(aggregates, ANY_VALUE and columns of enclosing queries aside). The dependencies found are the reference
manual's, "Detection of Functional Dependence":

- keys: a primary key, or a UNIQUE key over NOT NULL columns (or columns that a WHERE condition makes
  non-NULL), all of whose columns are dependent, makes its whole table dependent;
- equalities: `col = dependent column`, `col = constant` or `col = outer reference`, an AND-ed term of
  WHERE or of an inner join's ON (ON of an outer join: only its weak side, and only when the strong side's
  columns of that ON are dependent), as rows `(a, b) = (c, d)` too;
- derived tables, CTEs and views: their columns carry the dependencies of their query (its keys, its
  equalities, a grouped query's columns once its GROUP BY expressions are known); a UNION or WITH ROLLUP
  carries none;
- WITH ROLLUP: only the grouped expressions themselves, no dependence.

Only `=` gives dependence (not `<=>`, not `(a = b) = 1`, not an equality under OR), as in MySQL.

Where this cannot tell (a table it does not know, an ambiguous name, a construct outside these rules), it
accepts: refusing what MySQL accepts would cost a right answer. Accepted so, though MySQL may refuse: a
dependence inside a derived table on the weak side of an outer join (MySQL asks it to be NULL-friendly), an
outer join inside another's weak side made inner by WHERE, an uncorrelated subquery taken for a constant. Column names in messages are `table.column`
as the query names the table; MySQL prefixes a base table's database name, which participants do not see.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import sqlglot
from sqlglot import exp

from evaluation.scoring.conformance import NotConformant
from evaluation.scoring.schema_shape import Shape, Table, read_shape

__all__ = ["Keys", "NotFullGroupBy", "Refusal", "View", "full_group_by_refusal", "read_keys"]

logger = logging.getLogger(__name__)


# --- What the check reads of a database ------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    name: str
    query: str  # its SELECT, as the SQLite copy stores it
    columns: tuple[str, ...]  # its column list, when the view names its columns


@dataclass(frozen=True)
class Keys:
    """A database's tables (columns, NOT NULL, primary and unique keys) and views: what functional
    dependence is derived from. Hashable, so that the transpiler's cache can be keyed by it."""

    tables: Shape
    views: tuple[View, ...] = ()

    @functools.cached_property
    def _hash(self) -> int:
        return hash((self.tables, self.views))

    def __hash__(self) -> int:  # hashed at each cached transpile: worked out once
        return self._hash


def read_keys(path: Path) -> Keys:
    """The keys of a built SQLite copy (`schema_shape.read_shape`) and its views."""
    uri = f"{Path(path).resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        views = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY rowid"
        ).fetchall()
    return Keys(read_shape(path), tuple(view for name, sql in views if (view := _view(name, sql))))


def _view(name: str, sql: str) -> View | None:
    try:
        create = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        return None  # a view this cannot read: a query over it is accepted
    query, target = create.expression, create.this
    if not isinstance(query, exp.Query):
        return None
    columns = tuple(c.name for c in target.expressions) if isinstance(target, exp.Schema) else ()
    return View(name, query.sql(dialect="sqlite"), columns)


# --- MySQL's refusal -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    code: int
    sqlstate: str
    place: str  # the clause MySQL names: "SELECT list", "ORDER BY clause" or "HAVING clause"
    text: str

    @property
    def message(self) -> str:
        return f"ERROR {self.code} ({self.sqlstate}): {self.text}"


class NotFullGroupBy(NotConformant):
    """MySQL 8.0 refuses the query under ONLY_FULL_GROUP_BY; the message is MySQL's error."""


_SQL_MODE = "this is incompatible with sql_mode=only_full_group_by"


def _not_grouped(number: int, place: str, column: str) -> Refusal:
    return Refusal(
        1055,
        "42000",
        place,
        f"Expression #{number} of {place} is not in GROUP BY clause and contains nonaggregated column "
        f"'{column}' which is not functionally dependent on columns in GROUP BY clause; {_SQL_MODE}",
    )


def _aggregated_without_group_by(number: int, place: str, column: str) -> Refusal:
    return Refusal(
        1140,
        "42000",
        place,
        f"In aggregated query without GROUP BY, expression #{number} of {place} contains nonaggregated "
        f"column '{column}'; {_SQL_MODE}",
    )


def _ordered_by_unselected(number: int, column: str | None) -> Refusal:
    if column is None:
        return Refusal(
            3066,
            "HY000",
            "ORDER BY clause",
            f"Expression #{number} of ORDER BY clause is not in SELECT list, contains aggregate function; "
            "this is incompatible with DISTINCT",
        )
    return Refusal(
        3065,
        "HY000",
        "ORDER BY clause",
        f"Expression #{number} of ORDER BY clause is not in SELECT list, references column '{column}' which "
        "is not in SELECT list; this is incompatible with DISTINCT",
    )


def full_group_by_refusal(tree: exp.Expr, keys: Keys) -> Refusal | None:
    """MySQL 8.0's error for the MySQL query `tree` (as parsed, before any rewrite) under
    ONLY_FULL_GROUP_BY, or None when it accepts it or when this cannot tell."""
    if not isinstance(tree, exp.Query):
        return None
    analysis = _Analysis(keys)
    try:
        # MySQL resolves the query blocks inside a block before the block itself.
        for select in reversed(list(tree.find_all(exp.Select))):
            if not _may_be_refused(select) or _unreferenced_cte(select, tree):
                continue  # MySQL never resolves a CTE that no table names
            refusal = analysis.block(select).refusal()
            if refusal is not None:
                return refusal
    except Exception as error:  # a bug here must not refuse a query MySQL may accept: it cannot tell
        logger.warning("checking ONLY_FULL_GROUP_BY failed unexpectedly: %s", type(error).__name__)
    return None


def _may_be_refused(select: exp.Select) -> bool:
    """Whether `_Block.refusal` may refuse this block: it is grouped, or DISTINCT and ordered. Most blocks
    are neither, and their names need not be resolved."""
    distinct, order = select.args.get("distinct"), select.args.get("order")
    return _grouped(select) or (distinct is not None and order is not None)


def _grouped(select: exp.Select) -> bool:
    """A GROUP BY, or an aggregate of this block in its SELECT list, HAVING or ORDER BY (then it is
    aggregated into one row without GROUP BY)."""
    if select.args.get("group") is not None:
        return True
    parts = [*select.expressions, select.args.get("having"), select.args.get("order")]
    return any(part is not None and _has_own_aggregate(part) for part in parts)


# --- Names: the sources of a query block and what its columns refer to ------------------------------------


@dataclass(eq=False)
class _Source:
    """A table, view, derived table or CTE in a block's FROM."""

    alias: str  # as the query names it
    columns: dict[str, str] | None  # lower-case name -> name as MySQL prints it; None: unknown
    table: Table | None = None  # a base table: its keys
    body: exp.Query | None = None  # a derived table, CTE or view: its query
    outputs: dict[str, exp.Expr] = field(default_factory=dict)  # lower-case name -> the body's expression


@dataclass(frozen=True)
class _Ref:
    """What a column names: a column of a source of a block."""

    block: _Block
    alias: str  # lower case
    name: str  # lower case
    known: bool = True  # False: a source whose columns are unknown, or a name that is ambiguous

    def label(self) -> str:
        source = self.block.sources.get(self.alias)
        if source is None or source.columns is None:
            return f"{self.alias}.{self.name}"
        return f"{source.alias}.{source.columns.get(self.name, self.name)}"


_DUAL = "dual"


class _Analysis:
    """The query blocks of one query, each made once, and what is derived from them."""

    def __init__(self, keys: Keys) -> None:
        self.tables = {table.name.lower(): table for table in keys.tables}
        self.views = {view.name.lower(): view for view in keys.views}
        self._blocks: dict[int, _Block] = {}
        self._view_queries: dict[str, exp.Query | None] = {}
        self._derived: dict[tuple[int, frozenset[str]], set[str]] = {}

    def block(self, select: exp.Select) -> _Block:
        found = self._blocks.get(id(select))
        if found is None:
            enclosing = _enclosing_select(select)
            parent = self.block(enclosing) if enclosing is not None else None
            if parent is not None and _outside_scope(select, parent.select):
                parent = parent.parent  # a derived table or a CTE does not see the FROM it is in
            # Registered before it reads its FROM: its derived tables' blocks name it as their parent.
            found = self._blocks[id(select)] = _Block(self, select, parent)
            found.read_from()
        return found

    def view_query(self, name: str) -> exp.Query | None:
        if name not in self._view_queries:
            try:
                query: exp.Expr | None = sqlglot.parse_one(self.views[name].query, read="sqlite")
            except sqlglot.errors.SqlglotError:
                query = None
            self._view_queries[name] = query if isinstance(query, exp.Query) else None
        return self._view_queries[name]

    def derived_columns(self, source: _Source, known: frozenset[str]) -> set[str]:
        """The columns of a derived table, CTE or view that `known` of its columns determine through the
        dependence in its query: MySQL's Group_check of a materialized table, or a merged view's tables."""
        key = (id(source), known)
        if key not in self._derived:
            self._derived[key] = set(known)  # a query that reads itself learns nothing from itself
            self._derived[key] = self._derive(source, known)
        return self._derived[key]

    def _derive(self, source: _Source, known: frozenset[str]) -> set[str]:
        body = source.body
        if not isinstance(body, exp.Select) or _rollup(body):
            return set(known)  # a UNION or WITH ROLLUP carries no dependence
        block = self.block(body)
        grouped = block.grouped()
        if not known and (grouped or not _mergeable(body)):
            # MySQL learns nothing of a materialized table until one of its columns is known.
            return set(known)
        columns: set[_Ref] = set()
        expressions: set[_Form] = set()
        for name in known:
            expression = source.outputs[name]
            ref = block.resolve(expression) if isinstance(expression, exp.Column) else None
            if ref is not None and ref.block is block:
                columns.add(ref)
            else:
                expressions.add(block.canonical(expression))
        closure = _Closure(block, columns, expressions, grows=True)
        if grouped and all(closure.determines_expression(item) for item in block.group_items()):
            return set(source.outputs)  # one row per group, and the group is determined
        return set(known) | {
            name for name, expr in source.outputs.items() if closure.determines_expression(expr)
        }


def _enclosing_select(node: exp.Expr) -> exp.Select | None:
    parent = node.parent
    while parent is not None and not isinstance(parent, exp.Select):
        parent = parent.parent
    return parent


def _outside_scope(select: exp.Select, enclosing: exp.Select) -> bool:
    """Whether `select` is a derived table in `enclosing`'s FROM or one of its CTEs."""
    node: exp.Expr = select
    while node.parent is not None and node is not enclosing:
        parent = node.parent
        if isinstance(parent, exp.With) or (
            isinstance(parent, exp.From | exp.Join) and node.arg_key == "this"
        ):
            return True
        node = parent
    return False


def _rollup(select: exp.Select) -> bool:
    group = select.args.get("group")
    return bool(group is not None and (group.args.get("rollup") or group.args.get("cube")))


def _mergeable(select: exp.Select) -> bool:
    """Whether MySQL merges a derived table into the query that reads it (its WHERE then constrains
    that query's rows) rather than materializing it."""
    if any(select.args.get(arg) is not None for arg in ("group", "having", "limit", "offset", "distinct")):
        return False
    return not any(
        isinstance(node, exp.Query | exp.Window) or _is_aggregate(node)
        for projection in select.expressions
        for node in projection.walk()
    )


def _unreferenced_cte(select: exp.Select, tree: exp.Expr) -> bool:
    cte = select.parent
    if not isinstance(cte, exp.CTE):
        return False
    name = cte.alias_or_name.lower()
    return not any(table.name.lower() == name and not table.db for table in tree.find_all(exp.Table))


def _cte_named(node: exp.Expr, name: str) -> exp.CTE | None:
    """The CTE `name` visible from `node`: the nearest enclosing WITH's (its own body sees it only when
    the WITH is RECURSIVE)."""
    current = node.parent
    while current is not None:
        with_ = current.args.get("with_") if isinstance(current, exp.Query) else None
        if with_ is not None:
            for cte in with_.expressions:
                if (
                    isinstance(cte, exp.CTE)
                    and cte.alias_or_name.lower() == name
                    and (with_.args.get("recursive") or not _within(node, cte))
                ):
                    return cte
        current = current.parent
    return None


def _within(node: exp.Expr, root: exp.Expr) -> bool:
    current: exp.Expr | None = node
    while current is not None:
        if current is root:
            return True
        current = current.parent
    return False


# --- A query block -----------------------------------------------------------------------------------------


@dataclass
class _OuterJoin:
    """The ON of an outer join: its AND-ed terms, its weak side, whether it is itself on a weak side."""

    conjuncts: list[exp.Expr]
    weak: frozenset[str]
    nested_in_weak_side: bool


# An expression's form, as `_Block.canonical` gives it: hashable, equal for equal expressions.
_Form = object

# What a FROM item's joins leave: the AND-ed terms of inner joins' ON, and outer joins.
_Conditions = list[list[exp.Expr] | _OuterJoin]


class _Block:
    """One SELECT: what its names refer to, its joins and conditions, and MySQL's verdict on it."""

    def __init__(self, analysis: _Analysis, select: exp.Select, parent: _Block | None) -> None:
        self.analysis = analysis
        self.select = select
        self.parent = parent
        self.sources: dict[str, _Source] = {}  # by lower-case alias
        self.joined_names: set[str] = set()  # USING and NATURAL columns: the first table's
        self.where: list[exp.Expr] = []  # WHERE's AND-ed terms, with those of inner joins' ON
        self.outer_joins: list[_OuterJoin] = []
        self._closure: _Closure | None = None

    def read_from(self) -> None:
        from_ = self.select.args.get("from_")
        if from_ is not None:
            _aliases, conditions = self._nest(from_.this, self.select.args.get("joins") or [])
            for condition in conditions:
                if isinstance(condition, _OuterJoin):
                    self.outer_joins.append(condition)
                else:
                    self.where.extend(condition)
        where = self.select.args.get("where")
        if where is not None:
            self.where.extend(_conjuncts(where.this))
        self._turn_null_rejected_outer_joins_inner()

    # FROM and its joins

    def _nest(self, node: exp.Expr, joins: Sequence[exp.Join]) -> tuple[list[str], _Conditions]:
        """The aliases a FROM item and its joins add, and the conditions of those joins."""
        if (
            isinstance(node, exp.Subquery)
            and isinstance(node.this, exp.Table)
            and node.this.args.get("joins")
        ):
            aliases, conditions = self._nest(node.this, node.this.args["joins"])  # ( t1 JOIN t2 ON ... )
        else:
            source = self._source(node)
            aliases, conditions = [source.alias.lower()], []
            self.sources[aliases[0]] = source
        for join in joins:
            aliases, conditions = self._join(aliases, conditions, join)
        return aliases, conditions

    def _join(
        self, aliases: list[str], conditions: _Conditions, join: exp.Join
    ) -> tuple[list[str], _Conditions]:
        right, right_conditions = self._nest(join.this, [])
        on = _conjuncts(join.args["on"]) if join.args.get("on") is not None else []
        on += self._joined_equalities(aliases, right, join)
        side = (join.side or "").upper()
        if side not in ("LEFT", "RIGHT"):
            return [*aliases, *right], [*conditions, *right_conditions, on]
        strong, weak = (aliases, right) if side == "LEFT" else (right, aliases)
        strong_conditions, weak_conditions = (
            (conditions, right_conditions) if side == "LEFT" else (right_conditions, conditions)
        )
        # MySQL moves the ON of an inner join inside a weak side into the outer join's ON.
        moved = [term for c in weak_conditions if not isinstance(c, _OuterJoin) for term in c]
        nested = [_OuterJoin(c.conjuncts, c.weak, True) for c in weak_conditions if isinstance(c, _OuterJoin)]
        return [*strong, *weak], [*strong_conditions, _OuterJoin(on + moved, frozenset(weak), False), *nested]

    def _joined_equalities(self, left: list[str], right: list[str], join: exp.Join) -> list[exp.Expr]:
        """USING (c) and NATURAL joins as the equalities they stand for."""
        names = [identifier.name.lower() for identifier in join.args.get("using") or []]
        if str(join.args.get("method") or "").upper() == "NATURAL":
            on_left = {name for alias in left for name in self.sources[alias].columns or {}}
            names = [name for alias in right for name in self.sources[alias].columns or {} if name in on_left]
        equalities: list[exp.Expr] = []
        for name in names:
            first = next((a for a in left if name in (self.sources[a].columns or {})), None)
            second = next((a for a in right if name in (self.sources[a].columns or {})), None)
            if first is not None and second is not None:
                self.joined_names.add(name)
                equalities.append(exp.EQ(this=exp.column(name, first), expression=exp.column(name, second)))
        return equalities

    def _source(self, node: exp.Expr) -> _Source:
        alias = node.alias_or_name or "?"
        if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Query):
            return self._derived(alias, node.this, node.alias_column_names)
        if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
            return _Source(alias, None)  # a table function, VALUES, ...: nothing is known of it
        name = node.name.lower()
        cte = None if node.db else _cte_named(node, name)
        if cte is not None:
            return self._derived(alias, cte.this, cte.alias_column_names)
        table = self.analysis.tables.get(name)
        if table is not None:
            return _Source(alias, {c.name.lower(): c.name for c in table.columns}, table=table)
        if name in self.analysis.views:
            query = self.analysis.view_query(name)
            if query is not None:
                return self._derived(alias, query, self.analysis.views[name].columns)
        return _Source(alias, {} if name == _DUAL else None)

    def _derived(self, alias: str, body: exp.Query, renamed: Sequence[str]) -> _Source:
        first = body
        while isinstance(first, exp.SetOperation):
            first = first.this  # a UNION's columns are named by its first SELECT
        outputs = self.analysis.block(first).outputs() if isinstance(first, exp.Select) else None
        if outputs is None or (renamed and len(renamed) != len(outputs)):
            return _Source(alias, None, body=body)
        names = list(renamed) if renamed else [name for name, _ in outputs]
        source = _Source(alias, {}, body=body)
        for name, (_, expression) in zip(names, outputs, strict=True):
            assert source.columns is not None
            source.columns.setdefault(name.lower(), name)
            source.outputs.setdefault(name.lower(), expression)
        return source

    def outputs(self) -> list[tuple[str, exp.Expr]] | None:
        """The block's columns: (name, expression), a star's as qualified columns; None when a star
        covers a source whose columns are unknown."""
        found: list[tuple[str, exp.Expr]] = []
        for projection in self.select.expressions:
            stars = self.star_columns(projection)
            if stars is None:
                return None
            if stars:
                found += [(ref.label().split(".", 1)[1], exp.column(ref.name, ref.alias)) for ref in stars]
            else:
                found.append(
                    (projection.alias_or_name or projection.sql(dialect="mysql"), projection.unalias())
                )
        return found

    def star_columns(self, projection: exp.Expr) -> list[_Ref] | None:
        """The columns a `*` or `t.*` stands for; [] when `projection` is no star; None when unknown."""
        if isinstance(projection, exp.Star):
            aliases = list(self.sources)
        elif isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
            aliases = [projection.table.lower()]
        else:
            return []
        refs: list[_Ref] = []
        for alias in aliases:
            source = self.sources.get(alias)
            if source is None or source.columns is None:
                return None
            refs += [_Ref(self, alias, name) for name in source.columns]
        return refs

    def _turn_null_rejected_outer_joins_inner(self) -> None:
        """MySQL makes an outer join inner when a condition outside it is false for the NULL-complemented
        rows of its weak side (WHERE weak.x > 3): its ON then counts as WHERE does."""
        changed = True
        while changed and self.outer_joins:  # most blocks have none: nothing to work out
            changed = False
            rejected = {ref.alias for term in self.where for ref in self.null_rejected(term)}
            for join in [j for j in self.outer_joins if not j.nested_in_weak_side and j.weak & rejected]:
                self.outer_joins.remove(join)
                self.where.extend(join.conjuncts)
                for other in self.outer_joins:
                    if other.weak <= join.weak:
                        other.nested_in_weak_side = False
                changed = True

    # What names refer to

    def resolve(self, column: exp.Column) -> _Ref | None:
        """The source column `column` names, in this block or an enclosing one; None when it names none
        (a SELECT alias, a column MySQL does not know)."""
        name, qualifier = column.name.lower(), column.table.lower()
        block: _Block | None = self
        while block is not None:
            if qualifier:
                source = block.sources.get(qualifier)
                if source is not None:
                    if source.columns is not None and name not in source.columns:
                        return None
                    return _Ref(block, qualifier, name, source.columns is not None)
            else:
                found = block._unqualified(name)
                if found is not None:
                    return found
            block = block.parent
        return None

    def _unqualified(self, name: str) -> _Ref | None:
        having = [alias for alias, source in self.sources.items() if name in (source.columns or {})]
        unknown = any(source.columns is None for source in self.sources.values())
        if having and not unknown and (len(having) == 1 or name in self.joined_names):
            return _Ref(self, having[0], name)
        if having or unknown:
            return _Ref(self, having[0] if having else "?", name, known=False)  # ambiguous, or unknown
        return None

    def own_column(self, node: exp.Expr) -> _Ref | None:
        """What `node` names when it is a column of this block that this check knows."""
        node = _unparen(node)
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return None
        ref = self.resolve(node)
        return ref if ref is not None and ref.block is self and ref.known else None

    def null_rejected(self, term: exp.Expr) -> set[_Ref]:
        """The columns of this block that must not be NULL for `term` to be true."""
        if isinstance(term, exp.Paren):
            return self.null_rejected(term.this)
        if isinstance(term, exp.And):
            return self.null_rejected(term.this) | self.null_rejected(term.expression)
        if isinstance(term, exp.Or):
            return self.null_rejected(term.this) & self.null_rejected(term.expression)
        if isinstance(term, exp.Not):
            inner = _unparen(term.this)
            return self._strict(inner.this) if isinstance(inner, exp.Is) else self.null_rejected(inner)
        return self._strict(term)

    def _strict(self, node: exp.Expr) -> set[_Ref]:
        """The columns of this block whose NULL makes `node` NULL (not through COALESCE, IF, IS, ...)."""
        if isinstance(node, _NULL_TOLERANT):
            return set()
        column = self.own_column(node)
        if column is not None:
            return {column}
        return {ref for child in node.iter_expressions() for ref in self._strict(child)}

    # Grouping

    def grouped(self) -> bool:
        return _grouped(self.select)

    def group_items(self) -> list[exp.Expr]:
        """The GROUP BY expressions, a position or a SELECT alias read as the expression it names."""
        group = self.select.args.get("group")
        return [self._group_item(item) for item in group.expressions] if group is not None else []

    def _group_item(self, item: exp.Expr) -> exp.Expr:
        item = _unparen(item)
        selected = self.select.expressions
        if isinstance(item, exp.Literal) and item.is_int and 1 <= int(item.name) <= len(selected):
            position: exp.Expr = selected[int(item.name) - 1]
            return _unparen(position.unalias())
        if isinstance(item, exp.Column) and not item.table:
            ref = self.resolve(item)
            if ref is None or ref.block is not self:
                # MySQL looks for a GROUP BY name among its FROM's columns, then among the aliases.
                return self.select_alias(item.name) or item
        return item

    def select_alias(self, name: str) -> exp.Expr | None:
        for projection in self.select.expressions:
            if isinstance(projection, exp.Alias) and projection.alias.lower() == name.lower():
                aliased: exp.Expr = projection.this
                return aliased
        return None

    def closure(self) -> _Closure:
        """What the GROUP BY expressions determine."""
        if self._closure is None:
            columns: set[_Ref] = set()
            expressions: set[_Form] = set()
            for item in self.group_items():
                ref = self.resolve(item) if isinstance(item, exp.Column) else None
                if ref is not None and ref.block is self:
                    columns.add(ref)
                else:
                    expressions.add(self.canonical(item))
            # WITH ROLLUP: MySQL finds no dependence in a query that has it, only the grouped columns.
            self._closure = _Closure(self, columns, expressions, grows=not _rollup(self.select))
        return self._closure

    def canonical(self, node: exp.Expr) -> _Form:
        """`node`'s form, each column as the source column it names, parentheses and the case of names
        aside: equal expressions, equal forms (MySQL's Item::eq)."""
        node = _unparen(node)
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            ref = self.resolve(node)
            if ref is not None:
                return (id(ref.block), ref.alias, ref.name)
        if isinstance(node, exp.Identifier):
            return node.name.lower()
        parts: list[object] = [type(node).__name__]
        for key, value in node.args.items():
            if isinstance(value, list):
                parts.append((key, tuple(self.canonical(v) if isinstance(v, exp.Expr) else v for v in value)))
            elif isinstance(value, exp.Expr):
                parts.append((key, self.canonical(value)))
            elif value is not None and value is not False:
                parts.append((key, value))
        return tuple(parts)

    # The verdict

    def refusal(self) -> Refusal | None:
        grouped = self.grouped()
        refusal = self._group_refusal() if grouped else None
        if refusal is None and self.select.args.get("distinct") is not None and not self._distinct_dropped():
            refusal = self._distinct_refusal()
        return refusal

    def _group_refusal(self) -> Refusal | None:
        """MySQL's Group_check: the SELECT list, then ORDER BY, then HAVING."""
        explicit = self.select.args.get("group") is not None
        refuse = _not_grouped if explicit else _aggregated_without_group_by
        closure = self.closure()
        groups = {self.canonical(item) for item in self.group_items()}
        number = 0
        for projection in self.select.expressions:
            stars = self.star_columns(projection)
            if stars is None:
                return None  # a star over a source this does not know: cannot tell
            for ref in stars:
                number += 1
                if not closure.determines(ref):
                    return refuse(number, "SELECT list", ref.label())
            if not stars:
                number += 1
                failing = (
                    None
                    if self.canonical(projection.unalias()) in groups
                    else closure.undetermined(projection.unalias())
                )
                if failing is not None:
                    return refuse(number, "SELECT list", failing.label())
        places: list[tuple[str, list[exp.Expr]]] = []
        order = self.select.args.get("order")
        if order is not None and explicit:  # MySQL drops the ORDER BY of a query aggregated into one row
            places.append(("ORDER BY clause", [ordered.this for ordered in order.expressions]))
        having = self.select.args.get("having")
        if having is not None:
            places.append(("HAVING clause", [having.this]))
        selected = self._selected_texts() if places else set()
        for place, expressions in places:
            for number, node in enumerate(expressions, start=1):
                if self._in_select_list(node, selected, ordering=place.startswith("ORDER")):
                    continue
                failing = None if self.canonical(node) in groups else closure.undetermined(node)
                if failing is not None:
                    return refuse(number, place, failing.label())
        return None

    def _selected_texts(self) -> set[_Form]:
        return {self.canonical(p.unalias()) for p in self.select.expressions if not p.is_star}

    def _in_select_list(self, node: exp.Expr, selected: set[_Form], *, ordering: bool) -> bool:
        """An ORDER BY or HAVING expression that is one of the SELECT list's: by position, alias or text."""
        if ordering and isinstance(node, exp.Literal) and node.is_int:
            return True
        if isinstance(node, exp.Column) and not node.table and self.select_alias(node.name) is not None:
            return True
        return self.canonical(node) in selected

    def _distinct_dropped(self) -> bool:
        """MySQL drops DISTINCT, and its check, when every GROUP BY expression is selected, and the ORDER
        BY of a query aggregated into one row."""
        if not self.grouped():
            return False
        selected = self._selected_texts()
        return all(self.canonical(item) in selected for item in self.group_items())

    def _distinct_refusal(self) -> Refusal | None:
        """MySQL's Distinct_check: SELECT DISTINCT ordered by what is not selected."""
        order = self.select.args.get("order")
        if order is None:
            return None
        selected = self._selected_texts()
        for projection in self.select.expressions:
            stars = self.star_columns(projection)
            if stars is None:
                return None
            selected |= {self.canonical(exp.column(ref.name, ref.alias)) for ref in stars}
        for number, ordered in enumerate(order.expressions, start=1):
            node = ordered.this
            if self._in_select_list(node, selected, ordering=True):
                continue
            for part in _walk(node, skip=exp.AnyValue):
                if _is_aggregate(part) and _enclosing_select(part) is self.select:
                    return _ordered_by_unselected(number, None)
                if not isinstance(part, exp.Column) or isinstance(part.this, exp.Star):
                    continue
                inner = _enclosing_select(part)
                ref = (self.analysis.block(inner) if inner is not None else self).resolve(part)
                if ref is None or ref.block is not self or not ref.known:
                    continue  # a subquery's own column, or an alias
                if self.canonical(exp.column(ref.name, ref.alias)) not in selected:
                    return _ordered_by_unselected(number, ref.label())
        return None


# --- Functional dependence ---------------------------------------------------------------------------------


class _Closure:
    """The columns of a block that a starting set of its columns and expressions determines: MySQL's
    E(n), grown by keys, equalities and derived tables until nothing is added."""

    def __init__(self, block: _Block, columns: set[_Ref], expressions: set[_Form], *, grows: bool) -> None:
        self.block = block
        self.columns = {(ref.alias, ref.name) for ref in columns}
        self.expressions = expressions  # non-column GROUP BY expressions, as `_Block.canonical` gives them
        self.whole: set[str] = set()  # aliases all of whose columns are determined
        # Grown when first asked: most grouped queries select only what they group, and aggregates.
        self._to_grow = grows

    def determines(self, ref: _Ref) -> bool:
        if self._to_grow:
            self._to_grow = False
            self._grow()
        return not ref.known or ref.alias in self.whole or (ref.alias, ref.name) in self.columns

    def determines_expression(self, node: exp.Expr) -> bool:
        """Whether `node` is determined: a determined expression, or one of determined columns with no
        aggregate of this block."""
        if self.block.canonical(node) in self.expressions:
            return True
        return not _has_own_aggregate(node) and self.undetermined(node) is None

    def undetermined(self, node: exp.Expr) -> _Ref | None:
        """The first column of this block in `node`, outside its aggregates and ANY_VALUE, that is not
        determined; columns of this block in its subqueries too (MySQL walks into them)."""
        return self._undetermined(node, self.block)

    def _undetermined(self, node: exp.Expr, here: _Block) -> _Ref | None:
        if isinstance(node, exp.AnyValue):
            return None
        if isinstance(node, exp.Window):
            parts = _window_parts(node)
        elif _is_aggregate(node) and (here is self.block or self._aggregated_here(node, here)):
            return None
        elif isinstance(node, exp.Column):
            if here is self.block and not node.table and self.block.resolve(node) is None:
                return None  # a SELECT alias in HAVING or ORDER BY: its expression is checked there
            ref = here.resolve(node) if not isinstance(node.this, exp.Star) else None
            if ref is not None and ref.block is self.block and not self.determines(ref):
                return ref
            return None
        else:
            if isinstance(node, exp.Select):
                here = self.block.analysis.block(node)
            parts = list(node.iter_expressions())
        for part in parts:
            found = self._undetermined(part, here)
            if found is not None:
                return found
        return None

    def _aggregated_here(self, aggregate: exp.Expr, here: _Block) -> bool:
        """Whether an aggregate in a subquery aggregates in this block: all of its columns are this
        block's (MySQL aggregates in the innermost block its columns belong to)."""
        refs = [here.resolve(c) for c in aggregate.find_all(exp.Column)]
        return bool(refs) and all(ref is not None and ref.block is self.block for ref in refs)

    def _grow(self) -> None:
        not_null = {(r.alias, r.name) for term in self.block.where for r in self.block.null_rejected(term)}
        changed = True
        while changed:
            changed = False
            for alias, source in self.block.sources.items():
                if alias not in self.whole:
                    changed |= self._from_source(alias, source, not_null)
            for term in self.block.where:
                changed |= self._from_equality(term, None)
            for join in self.block.outer_joins:
                for term in join.conjuncts:
                    changed |= self._from_equality(term, join)

    def _from_source(self, alias: str, source: _Source, not_null: set[tuple[str, str]]) -> bool:
        known = frozenset(name for a, name in self.columns if a == alias)
        if source.table is not None:
            if any(
                key <= known for key in _unique_keys(source.table, {n for a, n in not_null if a == alias})
            ):
                self.whole.add(alias)
                return True
            return False
        if source.body is None or source.columns is None:
            return False
        determined = self.block.analysis.derived_columns(source, known)
        if determined >= set(source.columns):
            self.whole.add(alias)
            return True
        self.columns |= {(alias, name) for name in determined - known}
        return bool(determined - known)

    def _from_equality(self, term: exp.Expr, join: _OuterJoin | None) -> bool:
        if not isinstance(term, exp.EQ):
            return False
        left, right = _unparen(term.this), _unparen(term.expression)
        if isinstance(left, exp.Tuple) and isinstance(right, exp.Tuple):
            pairs = list(zip(left.expressions, right.expressions, strict=False))  # (a, b) = (c, d)
        else:
            pairs = [(left, right)]
        added = [self._from_pair(a, b, join) for a, b in pairs]
        return any(added)

    def _from_pair(self, left: exp.Expr, right: exp.Expr, join: _OuterJoin | None) -> bool:
        """`determinant = column` determines the column (MySQL's Group_check::analyze_scalar_eq)."""
        for determinant, dependant in ((left, right), (right, left)):
            column = self.block.own_column(dependant)
            if column is None or self.determines(column):
                continue
            if join is not None and column.alias not in join.weak:
                continue  # in an outer join's ON, only a column of its weak side is determined
            if self._determines_in(determinant, join):
                self.columns.add((column.alias, column.name))
                return True
        return False

    def _determines_in(self, determinant: exp.Expr, join: _OuterJoin | None) -> bool:
        """Whether `determinant` fixes the other side of an equality in WHERE (join None) or in an outer
        join's ON: a determined column, a constant or a column of an enclosing query."""
        column = self.block.own_column(determinant)
        if column is not None:
            if not self.determines(column):
                return False
            return join is None or column.alias in join.weak or self._strong_side_determined(join)
        refs = [self.block.resolve(c) for c in _own_columns(determinant)]
        outer = any(ref is not None and ref.block is not self.block for ref in refs)
        if not outer and any(ref is not None for ref in refs):
            return False  # an expression of this block's columns is no constant
        if join is None:
            return True
        if join.nested_in_weak_side and not refs:
            return False  # weak.a = constant does not hold once its join is itself NULL-complemented
        return self._strong_side_determined(join)

    def _strong_side_determined(self, join: _OuterJoin) -> bool:
        """Every column of the strong side that the outer join's ON reads is determined."""
        for term in join.conjuncts:
            for column in _own_columns(term):
                ref = self.block.own_column(column)
                if ref is not None and ref.alias not in join.weak and not self.determines(ref):
                    return False
        return True


def _unique_keys(table: Table, not_null: set[str]) -> Iterator[frozenset[str]]:
    """The keys MySQL derives dependence from: the primary key, and each UNIQUE key whose columns are
    NOT NULL, or cannot be NULL in the rows WHERE keeps."""
    if table.primary_key:
        yield frozenset(name.lower() for name in table.primary_key)
    for key in table.unique:
        columns = [table.column(name) for name in key]
        if all(c is not None and (c.not_null or c.name.lower() in not_null) for c in columns):
            yield frozenset(name.lower() for name in key)


# --- Expressions ---------------------------------------------------------------------------------------------

# What may be non-NULL when an argument is NULL: a column inside it is not made non-NULL by a condition.
_NULL_TOLERANT = (
    exp.Coalesce,
    exp.If,
    exp.Case,
    exp.Nullif,
    exp.ConcatWs,
    exp.NullSafeEQ,
    exp.Is,
    exp.Query,
    exp.AggFunc,
    exp.Window,
    exp.Exists,
)


def _is_aggregate(node: exp.Expr) -> bool:
    """An aggregate (set) function; ANY_VALUE is none, and a window function's call (`exp.Window`'s
    `this`) aggregates over its window, not over the group."""
    if not isinstance(node, exp.AggFunc) or isinstance(node, exp.AnyValue):
        return False
    return not (isinstance(node.parent, exp.Window) and node.parent.this is node)


def _has_own_aggregate(node: exp.Expr) -> bool:
    """Whether `node` holds an aggregate of its own query block (not of a subquery)."""
    if node.find(exp.AggFunc) is None:  # sqlglot's own walk, much faster: most expressions hold none
        return False
    return any(_is_aggregate(part) for part in _walk(node, skip=exp.Query))


def _own_columns(node: exp.Expr) -> Iterator[exp.Column]:
    """The columns in `node` outside its subqueries (a subquery is a constant, or reads outer columns)."""
    return (part for part in _walk(node, skip=exp.Query) if isinstance(part, exp.Column))


def _window_parts(window: exp.Window) -> list[exp.Expr]:
    """What a window function reads: its call's arguments, PARTITION BY and ORDER BY."""
    call = window.this
    parts = list(call.iter_expressions())
    parts += window.args.get("partition_by") or []
    order = window.args.get("order")
    return [*parts, order] if order is not None else parts


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    node = _unparen(node)
    if isinstance(node, exp.And):
        return [*_conjuncts(node.this), *_conjuncts(node.expression)]
    return [node]


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _walk(node: exp.Expr, *, skip: type[exp.Expr]) -> Iterator[exp.Expr]:
    """`node` and its descendants, depth first, without the subtrees (below `node`) of class `skip`."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current is not node and isinstance(current, skip):
            continue
        yield current
        stack.extend(reversed(list(current.iter_expressions())))
