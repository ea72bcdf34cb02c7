"""Predictions made from a gold query, for the differential test against MariaDB.

`generate(question_id, gold_sql)` applies every rule of `RULES` to the gold (its sqlglot tree, read as
MySQL, or its text) and returns one `Case` per rule that applies. Each rule is deterministic and changes
the first place it can, in sqlglot's breadth-first order. A rule does not say whether its prediction is
right: the differential test asks MariaDB. Its family only says what the rule is meant to probe:

- `equivalent`: the same query written another way (aliases, conjunct order, IN vs OR, ...);
- `near_miss`: a small change that usually changes the rows (a flipped comparison, a changed literal, ...);
- `dialect`: another engine's spelling (SQLite, PostgreSQL, T-SQL), which MySQL refuses or reads otherwise;
- `mysql_trap`: MySQL's own behaviour a SQLite copy must imitate (case-insensitive text, coercion, ...).

Cases are described by question id and rule name only; nothing here prints a query.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.tokens import TokenType

EQUIVALENT = "equivalent"
NEAR_MISS = "near_miss"
DIALECT = "dialect"
MYSQL_TRAP = "mysql_trap"
FAMILIES = (EQUIVALENT, NEAR_MISS, DIALECT, MYSQL_TRAP)

_MARK = "c12_splice_mark"


@dataclass(frozen=True)
class Case:
    question_id: str
    rule: str
    family: str
    sql: str = field(repr=False)  # never in a test's failure report: it may quote the archive's gold


Rule = Callable[[exp.Expr, str], str | None]  # (a copy of the gold's tree, the gold's text) -> prediction


def generate(question_id: str, gold_sql: str) -> list[Case]:
    """Every rule's prediction for one gold query; a rule that does not apply, or repeats the gold's or
    an earlier rule's text, gives no case."""
    try:
        tree: exp.Expr | None = sqlglot.parse_one(gold_sql, read="mysql")
    except sqlglot.errors.SqlglotError:
        tree = None
    cases: list[Case] = []
    seen = {_normalised(gold_sql)}
    for name, (family, rule) in RULES.items():
        if tree is None and rule not in _TEXT_RULES:
            continue
        try:
            sql = rule(tree.copy() if tree is not None else exp.Null(), gold_sql)
        except (sqlglot.errors.SqlglotError, ValueError, IndexError):
            sql = None
        if sql is None or _normalised(sql) in seen:
            continue
        seen.add(_normalised(sql))
        cases.append(Case(question_id, name, family, sql))
    return cases


def _normalised(sql: str) -> str:
    return " ".join(sql.split()).rstrip(";")


# --- helpers -----------------------------------------------------------------------------------------


def _mysql(node: exp.Expr, **options: object) -> str:
    return node.sql(dialect="mysql", **options)


def _splice(tree: exp.Expr, node: exp.Expr, text: str) -> str:
    """The tree as MySQL with `node` written as `text` (for spellings sqlglot would not write)."""
    node.replace(exp.column(_MARK))
    return _mysql(tree).replace(_MARK, text, 1)


def _top_select(tree: exp.Expr) -> exp.Select | None:
    return tree if isinstance(tree, exp.Select) else None


def _first(tree: exp.Expr, *kinds: type[exp.Expr], outside_limit: bool = False) -> exp.Expr | None:
    for node in tree.find_all(*kinds, bfs=True):
        if outside_limit and node.find_ancestor(exp.Limit, exp.Offset) is not None:
            continue
        return node
    return None


def _comparison_literal(tree: exp.Expr, *, is_string: bool) -> exp.Literal | None:
    """The first literal compared with something (=, <>, <, IN, LIKE, BETWEEN ...), outside LIMIT."""
    for node in tree.find_all(exp.Literal, bfs=True):
        if node.is_string != is_string or node.find_ancestor(exp.Limit, exp.Offset) is not None:
            continue
        if isinstance(node.parent, (exp.Binary, exp.In, exp.Between)) and not isinstance(
            node.parent, (exp.Connector, exp.Div, exp.Mul, exp.Add, exp.Sub)
        ):
            return node
    return None


def _projection(tree: exp.Expr) -> exp.Expr | None:
    select = _top_select(tree)
    if select is None:
        return None
    for projection in select.expressions:
        if not projection.is_star:
            return projection.unalias() if isinstance(projection, exp.Alias) else projection
    return None


_KEYWORD_TOKENS = {TokenType.VAR, TokenType.STRING, TokenType.NUMBER, TokenType.IDENTIFIER}


def _keyword_case(text: str, upper: bool) -> str:
    pieces, last = [], 0
    for token in MySQL().tokenize(text):
        if token.token_type in _KEYWORD_TOKENS or not token.text.isalpha():
            continue
        pieces.append(text[last : token.start])
        pieces.append(token.text.upper() if upper else token.text.lower())
        last = token.end + 1
    return "".join(pieces) + text[last:]


# --- equivalent rewrites ---------------------------------------------------------------------------


def backticks(tree: exp.Expr, text: str) -> str:
    return _mysql(tree, identify=True)


def keywords_lower(tree: exp.Expr, text: str) -> str:
    return _keyword_case(text, upper=False)


def keywords_upper(tree: exp.Expr, text: str) -> str:
    return _keyword_case(text, upper=True)


def comment_and_semicolon(tree: exp.Expr, text: str) -> str:
    return f"/* prediction */ {text.rstrip().rstrip(';')}\n-- end\n;"


def column_aliases(tree: exp.Expr, text: str) -> str | None:
    select = _top_select(tree)
    if select is None:
        return None
    changed = False
    for index, projection in enumerate(list(select.expressions)):
        if not projection.is_star and not isinstance(projection, exp.Alias):
            projection.replace(exp.alias_(projection.copy(), f"c12_col{index}"))
            changed = True
    return _mysql(tree) if changed else None


def table_aliases(tree: exp.Expr, text: str) -> str | None:
    tables = [t for t in tree.find_all(exp.Table) if isinstance(t.this, exp.Identifier)]
    names = [t.name.lower() for t in tables]
    changed = False
    for index, table in enumerate(tables):
        name = table.name.lower()
        if table.alias or names.count(name) != 1 or table.args.get("db"):
            continue
        alias = f"c12_t{index}"
        table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        for column in tree.find_all(exp.Column):
            if column.table.lower() == name:
                column.set("table", exp.to_identifier(alias))
        changed = True
    return _mysql(tree) if changed else None


def reorder_conjuncts(tree: exp.Expr, text: str) -> str | None:
    for where in tree.find_all(exp.Where, exp.Having, bfs=True):
        if isinstance(where.this, exp.And):
            conjuncts = list(where.this.flatten())
            where.set("this", exp.and_(*reversed(conjuncts), copy=False))
            return _mysql(tree)
    return None


def in_to_or(tree: exp.Expr, text: str) -> str | None:
    for node in tree.find_all(exp.In, bfs=True):
        values = node.expressions
        if values and not node.args.get("query") and len(values) <= 12:
            equalities = [exp.EQ(this=node.this.copy(), expression=v.copy()) for v in values]
            node.replace(exp.paren(exp.or_(*equalities, copy=False), copy=False))
            return _mysql(tree)
    return None


def between_to_range(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.Between)
    if node is None:
        return None
    low = exp.GTE(this=node.this.copy(), expression=node.args["low"].copy())
    high = exp.LTE(this=node.this.copy(), expression=node.args["high"].copy())
    node.replace(exp.paren(exp.and_(low, high, copy=False), copy=False))
    return _mysql(tree)


def count_one(tree: exp.Expr, text: str) -> str | None:
    for node in tree.find_all(exp.Count, bfs=True):
        if isinstance(node.this, exp.Star):
            node.set("this", exp.Literal.number(1))
            return _mysql(tree)
    return None


def join_to_comma(tree: exp.Expr, text: str) -> str | None:
    for select in tree.find_all(exp.Select, bfs=True):
        joins = select.args.get("joins") or []
        if not joins or any(j.side or j.kind not in ("", "INNER") or j.args.get("using") for j in joins):
            continue
        conditions = [j.args["on"] for j in joins if j.args.get("on")]
        if not conditions:
            continue
        for join in joins:
            join.set("on", None)
            join.set("kind", None)
        where = select.args.get("where")
        if where is not None:
            conditions.append(exp.paren(where.this.copy(), copy=False))
        select.set("where", exp.Where(this=exp.and_(*conditions)))
        return _mysql(tree)
    return None


def in_subquery_to_exists(tree: exp.Expr, text: str) -> str | None:
    """`t.x IN (SELECT y FROM u ...)` as `EXISTS (SELECT 1 FROM u ... AND y = t.x)`, only where the
    outer column is qualified, the subquery is a plain SELECT of one column without GROUP BY or LIMIT, and
    the IN is not negated (NOT IN differs on NULL)."""
    for node in tree.find_all(exp.In, bfs=True):
        query = node.args.get("query")
        subquery = query.this if isinstance(query, exp.Subquery) else query
        if (
            not isinstance(subquery, exp.Select)
            or isinstance(node.parent, exp.Not)
            or not isinstance(node.this, exp.Column)
            or not node.this.table
            or len(subquery.expressions) != 1
            or any(subquery.args.get(k) for k in ("group", "limit", "having", "distinct"))
        ):
            continue
        inner = subquery.expressions[0].unalias()
        if inner.find(exp.AggFunc):
            continue
        correlated = subquery.copy()
        correlated.set("expressions", [exp.Literal.number(1)])
        condition = exp.EQ(this=inner.copy(), expression=node.this.copy())
        where = correlated.args.get("where")
        correlated.where(
            condition if where is None else exp.and_(where.this, condition), append=False, copy=False
        )
        node.replace(exp.Exists(this=correlated))
        return _mysql(tree)
    return None


_MIRRORED: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.GT: exp.LT,
    exp.LT: exp.GT,
    exp.GTE: exp.LTE,
    exp.LTE: exp.GTE,
    exp.EQ: exp.EQ,
    exp.NEQ: exp.NEQ,
}


def operands_swapped(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, *_MIRRORED)
    if node is None:
        return None
    node.replace(_MIRRORED[type(node)](this=node.expression.copy(), expression=node.this.copy()))
    return _mysql(tree)


def neq_spelling(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.NEQ)
    if node is None:
        return None
    return _splice(tree, node, f"({_mysql(node.this)} != {_mysql(node.expression)})")


def limit_comma(tree: exp.Expr, text: str) -> str | None:
    if not isinstance(tree, (exp.Select, exp.SetOperation)) or tree.args.get("limit") is None:
        return None
    count = _mysql(tree.args["limit"].expression)
    offset = tree.args.get("offset")
    start = _mysql(offset.expression) if offset is not None else "0"
    tree.set("limit", None)
    tree.set("offset", None)
    return f"{_mysql(tree)} LIMIT {start}, {count}"


def case_to_if(tree: exp.Expr, text: str) -> str | None:
    for node in tree.find_all(exp.Case, bfs=True):
        ifs = node.args.get("ifs") or []
        if node.this is None and len(ifs) == 1:
            default = node.args.get("default")
            node.replace(
                exp.If(
                    this=ifs[0].this.copy(), true=ifs[0].args["true"].copy(), false=default and default.copy()
                )
            )
            return _mysql(tree)
    return None


def order_by_position(tree: exp.Expr, text: str) -> str | None:
    select = _top_select(tree)
    if select is None or select.args.get("order") is None:
        return None
    projections = [p.unalias() for p in select.expressions]
    for ordered in select.args["order"].expressions:
        for position, projection in enumerate(projections, 1):
            if ordered.this == projection and not projection.is_star:
                ordered.set("this", exp.Literal.number(position))
                return _mysql(tree)
    return None


def where_true_equals_one(tree: exp.Expr, text: str) -> str | None:
    """`WHERE cond` as `WHERE (cond) = 1`: a MySQL comparison is the integer 1, 0 or NULL."""
    where = _first(tree, exp.Where)
    if where is None:
        return None
    where.set("this", exp.EQ(this=exp.paren(where.this.copy(), copy=False), expression=exp.Literal.number(1)))
    return _mysql(tree)


def datediff_as_to_days(tree: exp.Expr, text: str) -> str | None:
    """DATEDIFF(a, b) written the old way, as a difference of day numbers: TO_DAYS(a) - TO_DAYS(b)."""
    node = _first(tree, exp.DateDiff)
    if node is None:
        return None
    return _splice(tree, node, f"(TO_DAYS({_mysql(node.this)}) - TO_DAYS({_mysql(node.expression)}))")


def derived_table(tree: exp.Expr, text: str) -> str | None:
    """The gold as a derived table; skipped when it orders without LIMIT (a derived table's ORDER BY is
    not kept by MySQL, so the order would be the engine's choice)."""
    if tree.args.get("order") is not None and tree.args.get("limit") is None:
        return None
    return f"SELECT * FROM ({text.strip().rstrip(';')}) AS c12_derived"


# --- near misses -----------------------------------------------------------------------------------

_FLIPPED: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.GT: exp.LTE,
    exp.LTE: exp.GT,
    exp.LT: exp.GTE,
    exp.GTE: exp.LT,
    exp.EQ: exp.NEQ,
    exp.NEQ: exp.EQ,
}


def comparison_flipped(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, *_FLIPPED)
    if node is None:
        return None
    node.replace(_FLIPPED[type(node)](this=node.this.copy(), expression=node.expression.copy()))
    return _mysql(tree)


def literal_changed(tree: exp.Expr, text: str) -> str | None:
    node = _comparison_literal(tree, is_string=False) or _comparison_literal(tree, is_string=True)
    if node is None:
        return None
    if node.is_string:
        node.replace(exp.Literal.string(node.this + "x"))
    else:
        node.replace(exp.Literal.number(_number(node.this) + 1))
    return _mysql(tree)


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() and "." not in text else value


def _is_join_condition(node: exp.Expr) -> bool:
    return (
        isinstance(node, exp.EQ)
        and isinstance(node.this, exp.Column)
        and isinstance(node.expression, exp.Column)
    )


def conjunct_dropped(tree: exp.Expr, text: str) -> str | None:
    for where in tree.find_all(exp.Where, exp.Having, bfs=True):
        if isinstance(where.this, exp.And):
            conjuncts = list(where.this.flatten())
            kept = [c for c in conjuncts if _is_join_condition(c)]
            droppable = [c for c in conjuncts if not _is_join_condition(c)]
            if not droppable:
                continue
            remaining = [c for c in conjuncts if c is not droppable[-1]]
            where.set("this", exp.and_(*remaining, copy=False) if remaining else kept[0])
            return _mysql(tree)
    return None


def order_direction_swapped(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.Ordered)
    if node is None:
        return None
    descending = not node.args.get("desc")
    node.set("desc", descending)
    node.set("nulls_first", not descending)  # MySQL's own NULL order for the new direction
    return _mysql(tree)


_AGGREGATE_SWAP: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.Max: exp.Min,
    exp.Min: exp.Max,
    exp.Sum: exp.Avg,
    exp.Avg: exp.Sum,
}


def aggregate_swapped(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, *_AGGREGATE_SWAP)
    if node is None:
        node = _first(tree, exp.Count)
        if node is None or isinstance(node.this, (exp.Star, exp.Distinct)):
            return None
        node.set("this", exp.Distinct(expressions=[node.this.copy()]))
        return _mysql(tree)
    node.replace(_AGGREGATE_SWAP[type(node)](this=node.this.copy()))
    return _mysql(tree)


def distinct_toggled(tree: exp.Expr, text: str) -> str | None:
    select = _top_select(tree)
    if select is None:
        return None
    select.set("distinct", None if select.args.get("distinct") else exp.Distinct())
    return _mysql(tree)


def limit_changed(tree: exp.Expr, text: str) -> str | None:
    if not isinstance(tree, (exp.Select, exp.SetOperation)):
        return None
    limit = tree.args.get("limit")
    if limit is None or not limit.expression.is_int:
        return f"{_mysql(tree)} LIMIT 1"
    limit.set("expression", exp.Literal.number(int(limit.expression.this) + 1))
    return _mysql(tree)


def inner_to_left_join(tree: exp.Expr, text: str) -> str | None:
    for join in tree.find_all(exp.Join, bfs=True):
        if join.args.get("on") and not join.side and join.kind in ("", "INNER"):
            join.set("kind", None)
            join.set("side", "LEFT")
            return _mysql(tree)
    return None


# --- other dialects' spellings ---------------------------------------------------------------------


def sqlite_double_equals(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.EQ)
    if node is None:
        return None
    return _splice(tree, node, f"({_mysql(node.this)} == {_mysql(node.expression)})")


def postgres_ilike(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.Like)
    if node is None:
        node = _first(tree, exp.EQ)
        if node is None or not isinstance(node.expression, exp.Literal) or not node.expression.is_string:
            return None
    return _splice(tree, node, f"({_mysql(node.this)} ILIKE {_mysql(node.expression)})")


def postgres_cast_colons(tree: exp.Expr, text: str) -> str | None:
    node = _comparison_literal(tree, is_string=False)
    if node is not None:
        return _splice(tree, node, f"{_mysql(node)}::int")
    projection = _projection(tree)
    if projection is None:
        return None
    return _splice(tree, projection, f"({_mysql(projection)})::text")


def nulls_last(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.Ordered)
    if node is not None:
        return _splice(tree, node, f"{_mysql(node)} NULLS LAST")
    if not isinstance(tree, exp.Select) or tree.args.get("limit") is not None:
        return None
    return f"{_mysql(tree)} ORDER BY 1 NULLS LAST"


def sqlite_strftime(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.Year, exp.Month)
    if node is None:
        return None
    pattern = "%Y" if isinstance(node, exp.Year) else "%m"
    return _splice(tree, node, f"CAST(strftime('{pattern}', {_mysql(node.this)}) AS INTEGER)")


def postgres_date_part(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.Year, exp.Month)
    if node is None:
        return None
    part = "year" if isinstance(node, exp.Year) else "month"
    return _splice(tree, node, f"date_part('{part}', {_mysql(node.this)})")


def pipes_concat(tree: exp.Expr, text: str) -> str | None:
    """`a || b` is string concatenation in SQLite and PostgreSQL, a logical OR in MySQL."""
    node = _first(tree, exp.Concat)
    if node is not None and len(node.expressions) >= 2:
        return _splice(tree, node, "(" + " || ".join(_mysql(e) for e in node.expressions) + ")")
    projection = _projection(tree)
    if projection is None or projection.find(exp.AggFunc):
        return None
    return _splice(tree, projection, f"({_mysql(projection)} || '')")


def sqlite_limit_minus_one(tree: exp.Expr, text: str) -> str | None:
    if not isinstance(tree, (exp.Select, exp.SetOperation)):
        return None
    limit = tree.args.get("limit")
    if limit is None:
        return f"{_mysql(tree)} LIMIT -1"
    if tree.args.get("offset") is None:
        return None
    offset = _mysql(tree.args["offset"].expression)
    tree.set("limit", None)
    tree.set("offset", None)
    return f"{_mysql(tree)} LIMIT -1 OFFSET {offset}"


def cast_as_text(tree: exp.Expr, text: str) -> str | None:
    projection = _projection(tree)
    if projection is None:
        return None
    return _splice(tree, projection, f"CAST({_mysql(projection)} AS TEXT)")


def cast_as_integer(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.Count, exp.Sum)
    if node is None:
        return None
    return _splice(tree, node, f"CAST({_mysql(node)} AS INTEGER)")


def fetch_first(tree: exp.Expr, text: str) -> str | None:
    """`LIMIT n` as the standard's `FETCH FIRST n ROWS ONLY`, which MariaDB reads and MySQL does not."""
    if not isinstance(tree, (exp.Select, exp.SetOperation)) or tree.args.get("offset") is not None:
        return None
    limit = tree.args.get("limit")
    if limit is None:
        return None
    count = _mysql(limit.expression)
    tree.set("limit", None)
    return f"{_mysql(tree)} FETCH FIRST {count} ROWS ONLY"


def oracle_nvl(tree: exp.Expr, text: str) -> str | None:
    """Oracle's NVL(x, y) for IFNULL, which MariaDB reads and MySQL does not: a projection as NVL(p, NULL)."""
    projection = _projection(tree)
    if projection is None:
        return None
    return _splice(tree, projection, f"NVL({_mysql(projection)}, NULL)")


def full_outer_join(tree: exp.Expr, text: str) -> str | None:
    for join in tree.find_all(exp.Join, bfs=True):
        if join.args.get("on"):
            join.set("kind", "OUTER")
            join.set("side", "FULL")
            return _mysql(tree)
    return None


def is_not_distinct_from(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.EQ)
    if node is None:
        return None
    return _splice(tree, node, f"({_mysql(node.this)} IS NOT DISTINCT FROM {_mysql(node.expression)})")


def double_quoted_identifier(tree: exp.Expr, text: str) -> str | None:
    """A PostgreSQL / SQLite quoted name: a string literal in MySQL (without ANSI_QUOTES)."""
    projection = _projection(tree)
    if not isinstance(projection, exp.Column) or projection.table:
        return None
    return _splice(tree, projection, f'"{projection.name}"')


def sqlite_iif(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.If)
    if node is not None:
        false = node.args.get("false")
        arguments = [node.this, node.args["true"], false if false is not None else exp.Null()]
    else:
        node = _first(tree, exp.Case)
        if node is None or node.this is not None or len(node.args.get("ifs") or []) != 1:
            return None
        branch = node.args["ifs"][0]
        default = node.args.get("default")
        arguments = [branch.this, branch.args["true"], default if default is not None else exp.Null()]
    return _splice(tree, node, "IIF(" + ", ".join(_mysql(a) for a in arguments) + ")")


def tsql_top(tree: exp.Expr, text: str) -> str | None:
    limit = tree.args.get("limit") if isinstance(tree, exp.Select) else None
    if limit is None or tree.args.get("offset") is not None:
        return None
    count = _mysql(limit.expression)
    tree.set("limit", None)
    sql = _mysql(tree)
    return "SELECT TOP " + count + sql[len("SELECT") :] if sql.upper().startswith("SELECT ") else None


# --- MySQL's own behaviour -------------------------------------------------------------------------


def case_insensitive_literal(tree: exp.Expr, text: str) -> str | None:
    node = _comparison_literal(tree, is_string=True)
    if node is None or not any(c.isalpha() for c in node.this):
        return None
    changed = node.this.upper() if node.this != node.this.upper() else node.this.lower()
    node.replace(exp.Literal.string(changed))
    return _mysql(tree)


def _strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def accent_insensitive_literal(tree: exp.Expr, text: str) -> str | None:
    node = _comparison_literal(tree, is_string=True)
    if node is None:
        return None
    stripped = _strip_accents(node.this)
    if stripped == node.this:
        index = next((i for i, c in enumerate(node.this) if c in "aeiou"), None)
        if index is None:
            return None
        accented = {"a": "à", "e": "è", "i": "ì", "o": "ò", "u": "ù"}[node.this[index]]
        stripped = node.this[:index] + accented + node.this[index + 1 :]
    node.replace(exp.Literal.string(stripped))
    return _mysql(tree)


def trailing_space_literal(tree: exp.Expr, text: str) -> str | None:
    for node in tree.find_all(exp.Literal, bfs=True):
        if node.is_string and isinstance(node.parent, (exp.EQ, exp.In, exp.NEQ)):
            node.replace(exp.Literal.string(node.this + "  "))
            return _mysql(tree)
    return None


def length_bytes(tree: exp.Expr, text: str) -> str | None:
    """LENGTH counts bytes in MySQL, CHAR_LENGTH characters: a conjunct true only for ASCII text."""
    node = _first(tree, exp.Length)
    if node is not None:  # LENGTH and CHAR_LENGTH swapped
        function = "CHAR_LENGTH" if node.args.get("binary") else "LENGTH"
        return _splice(tree, node, f"{function}({_mysql(node.this)})")
    literal = _comparison_literal(tree, is_string=True)
    if literal is None:
        return None
    column = literal.parent.this if isinstance(literal.parent, (exp.Binary, exp.In)) else None
    where = literal.find_ancestor(exp.Where)
    if not isinstance(column, exp.Column) or where is None:
        return None
    column_sql = _mysql(column)
    condition = sqlglot.parse_one(f"LENGTH({column_sql}) = CHAR_LENGTH({column_sql})", read="mysql")
    where.set("this", exp.and_(exp.paren(where.this.copy(), copy=False), condition))
    return _mysql(tree)


def integer_division(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.Div)
    if node is not None:
        return _splice(tree, node, f"({_mysql(node.this)} DIV {_mysql(node.expression)})")
    literal = _comparison_literal(tree, is_string=False)
    if literal is None or not literal.is_int:
        return None
    return _splice(tree, literal, f"({literal.this} * 2 DIV 2)")


def date_as_number(tree: exp.Expr, text: str) -> str | None:
    for node in tree.find_all(exp.Literal, bfs=True):
        value = node.this
        if (
            node.is_string
            and len(value) == 10
            and value[4] == value[7] == "-"
            and value.replace("-", "").isdigit()
            and isinstance(node.parent, (exp.Binary, exp.Between, exp.In))
        ):
            node.replace(exp.Literal.number(value.replace("-", "")))
            return _mysql(tree)
    return None


def number_as_string(tree: exp.Expr, text: str) -> str | None:
    node = _comparison_literal(tree, is_string=False)
    if node is None:
        return None
    node.replace(exp.Literal.string(node.this))
    return _mysql(tree)


def number_with_text_suffix(tree: exp.Expr, text: str) -> str | None:
    """MySQL reads the leading number of a string compared with a number: '7 items' = 7."""
    node = _comparison_literal(tree, is_string=False)
    if node is None:
        return None
    node.replace(exp.Literal.string(node.this + " c12"))
    return _mysql(tree)


def double_quoted_string(tree: exp.Expr, text: str) -> str | None:
    """A MySQL string in double quotes (an identifier in SQLite when a column has that name)."""
    node = _comparison_literal(tree, is_string=True)
    if node is None or '"' in node.this or "\\" in node.this:
        return None
    return _splice(tree, node, '"' + node.this.replace("'", "''") + '"')


def null_safe_equal(tree: exp.Expr, text: str) -> str | None:
    node = _first(tree, exp.EQ)
    if node is None:
        return None
    return _splice(tree, node, f"({_mysql(node.this)} <=> {_mysql(node.expression)})")


def unsigned_count_difference(tree: exp.Expr, text: str) -> str | None:
    """COUNT(*) as CAST(COUNT(*) AS UNSIGNED) - CAST(20 AS UNSIGNED) + 20: the same number, unless the count
    is below 20, where MySQL's unsigned subtraction fails (ERROR 1690) as the query runs."""
    node = _first(tree, exp.Count)
    if node is None:
        return None
    count = _mysql(node)
    return _splice(tree, node, f"(CAST({count} AS UNSIGNED) - CAST(20 AS UNSIGNED) + 20)")


def difference_compared_with_zero(tree: exp.Expr, text: str) -> str | None:
    """`x > 5` as `x - 5 > 0` (any order comparison with a number): the same rows, unless x is UNSIGNED and
    below 5 on a row MySQL computes it for, where the unsigned subtraction fails (ERROR 1690)."""
    for node in tree.find_all(*_ORDER_OPERATORS, bfs=True):
        number = node.expression
        if isinstance(number, exp.Literal) and not number.is_string:
            operator = _ORDER_OPERATORS[type(node)]
            return _splice(tree, node, f"({_mysql(node.this)} - {_mysql(number)}) {operator} 0")
    return None


_ORDER_OPERATORS: dict[type[exp.Expr], str] = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}


def _string_comparison(tree: exp.Expr) -> exp.Literal | None:
    """The first string literal compared with `=` or `<>` (the comparisons a COLLATE may change)."""
    for node in tree.find_all(exp.Literal, bfs=True):
        if node.is_string and isinstance(node.parent, (exp.EQ, exp.NEQ)):
            return node
    return None


def _collate_literal(tree: exp.Expr, collation: str) -> str | None:
    node = _string_comparison(tree)
    if node is None:
        return None
    return _splice(tree, node, f"{_mysql(node)} COLLATE {collation}")


def literal_collate_general_ci(tree: exp.Expr, text: str) -> str | None:
    """A compared string literal under utf8mb4_general_ci: PAD SPACE, 'ß' = 's', one letter for one."""
    return _collate_literal(tree, "utf8mb4_general_ci")


def literal_collate_bin(tree: exp.Expr, text: str) -> str | None:
    """A compared string literal under utf8mb4_bin: case and accents count."""
    return _collate_literal(tree, "utf8mb4_bin")


def literal_collate_0900_as_cs(tree: exp.Expr, text: str) -> str | None:
    """A compared string literal under utf8mb4_0900_as_cs, a collation of MySQL 8.0 that MariaDB lacks."""
    return _collate_literal(tree, "utf8mb4_0900_as_cs")


def literal_collate_utf8mb3(tree: exp.Expr, text: str) -> str | None:
    """A compared string literal (utf8mb4, the connection's) under a utf8mb3 collation: ERROR 1253."""
    return _collate_literal(tree, "utf8_general_ci")


def order_collate_unicode_ci(tree: exp.Expr, text: str) -> str | None:
    """The first ORDER BY key under utf8mb4_unicode_ci: a utf8mb3 column refuses it (ERROR 1253), a
    number is ordered as its text. Only a column's name: not a position (ORDER BY 2), which COLLATE would
    make a constant, nor an output alias, which an expression may not name when it stands for an
    aggregate (MariaDB's error 1247), a rule this one does not probe."""
    node = _first(tree, exp.Ordered)
    aliases = {alias.alias.lower() for alias in tree.find_all(exp.Alias)}
    if node is None or not isinstance(node.this, exp.Column) or node.this.name.lower() in aliases:
        return None
    return _splice(tree, node.this, f"{_mysql(node.this)} COLLATE utf8mb4_unicode_ci")


def _where_also(tree: exp.Expr, condition: str) -> str | None:
    """The top query with `condition` as one more conjunct of its WHERE."""
    select = _top_select(tree)
    if select is None:
        return None
    select.where(sqlglot.parse_one(condition, read="mysql"), copy=False)
    return _mysql(tree)


def division_by_zero_is_null(tree: exp.Expr, text: str) -> str | None:
    """ERROR_FOR_DIVISION_BY_ZERO only warns in a SELECT: 1 / 0 is NULL, so the conjunct holds."""
    return _where_also(tree, "1 / 0 IS NULL")


def zero_date_is_null(tree: exp.Expr, text: str) -> str | None:
    """NO_ZERO_DATE (MySQL 8.0's default): STR_TO_DATE of the zero date is NULL, so the conjunct holds."""
    return _where_also(tree, "STR_TO_DATE('00/00/0000', '%d/%m/%Y') IS NULL")


def group_concat_order(tree: exp.Expr, text: str) -> str | None:
    """GROUP_CONCAT's ORDER BY dropped (the engine's order) or, without one, a descending order added."""
    node = _first(tree, exp.GroupConcat)
    if node is None:
        return None
    inner = node.this
    if isinstance(inner, exp.Order):
        node.set("this", inner.this.copy())
    else:
        node.set(
            "this", exp.Order(this=inner.copy(), expressions=[exp.Ordered(this=inner.copy(), desc=True)])
        )
    return _mysql(tree)


def loose_group_by(tree: exp.Expr, text: str) -> str | None:
    """The last GROUP BY term dropped: MySQL without ONLY_FULL_GROUP_BY picks any value of a group."""
    group = _first(tree, exp.Group)
    if group is None or len(group.expressions) < 2:
        return None
    group.set("expressions", group.expressions[:-1])
    return _mysql(tree)


def _plain_column(select: exp.Select, *, outside_group: bool) -> exp.Column | None:
    """The first column the SELECT list holds as such (outside every GROUP BY expression, if asked)."""
    group = select.args.get("group")
    grouped = (
        {key.sql(dialect="mysql").lower() for key in group.expressions} if group and outside_group else set()
    )
    for projection in select.expressions:
        column = projection.unalias()
        if (
            isinstance(column, exp.Column)
            and not column.is_star
            and column.sql(dialect="mysql").lower() not in grouped
        ):
            return column
    return None


def group_by_dropped(tree: exp.Expr, text: str) -> str | None:
    """GROUP BY dropped from a query that selects a column outside it: aggregated without GROUP BY, which
    MySQL 8.0 refuses (ONLY_FULL_GROUP_BY, error 1140) and MariaDB answers with one row."""
    select = _top_select(tree)
    if (
        select is None
        or select.args.get("group") is None
        or _plain_column(select, outside_group=False) is None
    ):
        return None
    select.set("group", None)
    select.set("having", None)
    return _mysql(tree)


def any_value(tree: exp.Expr, text: str) -> str | None:
    """A grouped query's first column outside GROUP BY as ANY_VALUE(column): the same rows wherever the
    column depends on the grouped ones, which MySQL 8.0 requires of the gold (MariaDB 10.11 has no
    ANY_VALUE)."""
    select = _top_select(tree)
    grouped = select is not None and select.args.get("group") is not None
    column = _plain_column(select, outside_group=True) if select is not None and grouped else None
    if column is None:
        return None
    column.replace(exp.AnyValue(this=column.copy()))
    return _mysql(tree)


RULES: dict[str, tuple[str, Rule]] = {
    "backticks": (EQUIVALENT, backticks),
    "keywords_lower": (EQUIVALENT, keywords_lower),
    "keywords_upper": (EQUIVALENT, keywords_upper),
    "comment_and_semicolon": (EQUIVALENT, comment_and_semicolon),
    "column_aliases": (EQUIVALENT, column_aliases),
    "table_aliases": (EQUIVALENT, table_aliases),
    "reorder_conjuncts": (EQUIVALENT, reorder_conjuncts),
    "in_to_or": (EQUIVALENT, in_to_or),
    "between_to_range": (EQUIVALENT, between_to_range),
    "count_one": (EQUIVALENT, count_one),
    "join_to_comma": (EQUIVALENT, join_to_comma),
    "in_subquery_to_exists": (EQUIVALENT, in_subquery_to_exists),
    "operands_swapped": (EQUIVALENT, operands_swapped),
    "neq_spelling": (EQUIVALENT, neq_spelling),
    "limit_comma": (EQUIVALENT, limit_comma),
    "case_to_if": (EQUIVALENT, case_to_if),
    "order_by_position": (EQUIVALENT, order_by_position),
    "where_true_equals_one": (EQUIVALENT, where_true_equals_one),
    "derived_table": (EQUIVALENT, derived_table),
    "datediff_as_to_days": (EQUIVALENT, datediff_as_to_days),
    "comparison_flipped": (NEAR_MISS, comparison_flipped),
    "literal_changed": (NEAR_MISS, literal_changed),
    "conjunct_dropped": (NEAR_MISS, conjunct_dropped),
    "order_direction_swapped": (NEAR_MISS, order_direction_swapped),
    "aggregate_swapped": (NEAR_MISS, aggregate_swapped),
    "distinct_toggled": (NEAR_MISS, distinct_toggled),
    "limit_changed": (NEAR_MISS, limit_changed),
    "inner_to_left_join": (NEAR_MISS, inner_to_left_join),
    "sqlite_double_equals": (DIALECT, sqlite_double_equals),
    "postgres_ilike": (DIALECT, postgres_ilike),
    "postgres_cast_colons": (DIALECT, postgres_cast_colons),
    "nulls_last": (DIALECT, nulls_last),
    "sqlite_strftime": (DIALECT, sqlite_strftime),
    "postgres_date_part": (DIALECT, postgres_date_part),
    "pipes_concat": (DIALECT, pipes_concat),
    "sqlite_limit_minus_one": (DIALECT, sqlite_limit_minus_one),
    "cast_as_text": (DIALECT, cast_as_text),
    "cast_as_integer": (DIALECT, cast_as_integer),
    "full_outer_join": (DIALECT, full_outer_join),
    "fetch_first": (DIALECT, fetch_first),
    "oracle_nvl": (DIALECT, oracle_nvl),
    "is_not_distinct_from": (DIALECT, is_not_distinct_from),
    "double_quoted_identifier": (DIALECT, double_quoted_identifier),
    "sqlite_iif": (DIALECT, sqlite_iif),
    "tsql_top": (DIALECT, tsql_top),
    "case_insensitive_literal": (MYSQL_TRAP, case_insensitive_literal),
    "accent_insensitive_literal": (MYSQL_TRAP, accent_insensitive_literal),
    "trailing_space_literal": (MYSQL_TRAP, trailing_space_literal),
    "length_bytes": (MYSQL_TRAP, length_bytes),
    "unsigned_count_difference": (MYSQL_TRAP, unsigned_count_difference),
    "difference_compared_with_zero": (MYSQL_TRAP, difference_compared_with_zero),
    "literal_collate_general_ci": (MYSQL_TRAP, literal_collate_general_ci),
    "literal_collate_bin": (MYSQL_TRAP, literal_collate_bin),
    "literal_collate_0900_as_cs": (MYSQL_TRAP, literal_collate_0900_as_cs),
    "literal_collate_utf8mb3": (MYSQL_TRAP, literal_collate_utf8mb3),
    "order_collate_unicode_ci": (MYSQL_TRAP, order_collate_unicode_ci),
    "division_by_zero_is_null": (MYSQL_TRAP, division_by_zero_is_null),
    "zero_date_is_null": (MYSQL_TRAP, zero_date_is_null),
    "integer_division": (MYSQL_TRAP, integer_division),
    "date_as_number": (MYSQL_TRAP, date_as_number),
    "number_as_string": (MYSQL_TRAP, number_as_string),
    "number_with_text_suffix": (MYSQL_TRAP, number_with_text_suffix),
    "double_quoted_string": (MYSQL_TRAP, double_quoted_string),
    "null_safe_equal": (MYSQL_TRAP, null_safe_equal),
    "group_concat_order": (MYSQL_TRAP, group_concat_order),
    "loose_group_by": (MYSQL_TRAP, loose_group_by),
    "group_by_dropped": (MYSQL_TRAP, group_by_dropped),
    "any_value": (MYSQL_TRAP, any_value),
}

# Rules that read the text only, so they apply even when sqlglot cannot read the gold.
_TEXT_RULES: set[Rule] = {keywords_lower, keywords_upper, comment_and_semicolon}
