"""MySQL's comparison and division rules where SQLite's differ, as rewrites that need the types of
expressions (from `resolver.ColumnResolver`):

- a text expression compared with a number is compared as a number (`CAST(... AS REAL)`);
- a string compared with a DATE/DATETIME/TIME column is read as MySQL reads it ('2024-5-1' is 2024-05-01);
- a string literal compared with an expression that is not a column gets `COLLATE utf8mb4_0900_ai_ci`,
  MySQL 8.0's default collation, which text columns of the SQLite copies of utf8mb4 tables have;
- `/` and AVG of exact numbers are rounded to 4 more decimals (`div_precision_increment`), where their
  value is used; inside further arithmetic or ROUND, MySQL keeps more digits (`1/3*3` is 1.0000,
  `ROUND(1/3, 6)` 0.333333): the outermost arithmetic is rounded to its own scale instead;
- a DATE, DATETIME or TIME compared with a number is compared as a number (`d >= 19900101`, as
  `CAST(STRFTIME('%Y%m%d', d) AS INTEGER)`);
- `+`, `-`, `*` and DIV of two integers are MySQL's BIGINT arithmetic (`functions`' MYSQL_BIGINT): unsigned
  when an operand is (an UNSIGNED column, CAST(... AS UNSIGNED), a literal above 2^63 - 1, a bit operator),
  and error 1690 when the result leaves the range, as the query runs: whether it does depends on the data;
- CAST(... AS SIGNED | UNSIGNED) rounds as MySQL does (MYSQL_CAST_INTEGER: a DECIMAL half away from zero,
  a DOUBLE half to even, a string by its leading integer), and reads a date as its number (20240229);
- `expr COLLATE name` takes a collation of MySQL 8.0 (`collations`), of the expression's character set
  when it is known (a string literal's is utf8mb4, a column's its table's): otherwise the query is
  refused as MySQL refuses it, error 1273 or 1253, before it runs; a number is collated as its text; a
  string literal compared with an expression that has an explicit COLLATE takes that collation, not the
  default;
- an ENUM or SET column is its text where MySQL compares it with a string (`=`, `<`, LIKE, MIN, MAX, a
  function's argument), and its number where MySQL wants one: an ENUM the position of its member among the
  declared ones, a SET the bits of its members (MYSQL_ENUM_INDEX, MYSQL_SET_NUMBER of `functions`), as a key
  of ORDER BY, named or by its position (so an ENUM sorts in its declared order), compared with numbers, in
  a bit operation, a CAST to a number and a condition (`WHERE stato`); in arithmetic, SUM and AVG, a DOUBLE,
  as MySQL 8.0 takes a string column there; FIND_IN_SET of a string literal in a SET column is, as MySQL
  computes it when the string is a member (its case ignored), the member's declared position when the value
  holds it (MYSQL_FIND_SET_MEMBER), not its place in the value. Only when the schema has such columns
  (`members`): it costs the type of every column.

Every change is planned on the untouched tree (types need it), then applied.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from evaluation.scoring.collations import UTF8MB4_COLLATION, canonical_collation, collation_charset
from evaluation.scoring.function_rewrites import call
from evaluation.scoring.functions import normalise_temporal, read_moment
from evaluation.scoring.resolver import BIT_OPERATORS, ColumnResolver
from evaluation.scoring.sqltypes import CONNECTION_CHARSET, SqlType
from evaluation.scoring.statements import SQLGLOT_DIALECTS, TranspileError

_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)
# The integer operators of MYSQL_BIGINT, as its first argument names them.
_BIGINT_OPERATORS: dict[type[exp.Expr], str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.IntDiv: "DIV"}
# The longest expression text an error 1690 quotes: each integer operator carries its own, so a long
# chain of them would otherwise grow the SQL with the square of its length.
_QUOTED_CHARS = 100
# What CAST(... AS SIGNED) and CAST(... AS UNSIGNED) read as (sqlglot's names).
_INTEGER_CASTS = {exp.DType.BIGINT: False, exp.DType.UBIGINT: True}
# Building a type parses its name: this is built once, and copied.
_REAL_TYPE = exp.DataType.build("REAL")
_INTEGER_TYPE = exp.DataType.build("INTEGER")
_TEXT_TYPE = exp.DataType.build("TEXT")


def rewrite_by_types(tree: exp.Expr, resolver: ColumnResolver, *, members: bool = False) -> None:
    """Apply the rules above to the tree, in place; those of ENUM and SET columns only with `members` (the
    schema has some)."""
    rewriter = _Rewriter(resolver, members=members)
    rewriter.plan(tree)
    rewriter.apply()


def needs_types(cls: type) -> bool:
    """Whether `rewrite_by_types` may change a node of class `cls` whatever the schema (a column and a call
    by name only when the schema has ENUM or SET columns: `dialect` asks for types then)."""
    return _KINDS[cls] not in (None, *_MEMBER_KINDS)


def _wrap(node: exp.Expr, make: type[exp.Expr], **args: object) -> None:
    """Put `node` inside a new `make(this=node, **args)` where it stands, keeping the node object itself."""
    placeholder = exp.Placeholder()
    node.replace(placeholder)
    placeholder.replace(make(this=node, **args))


class _Rewriter:
    """Plans every change on the untouched tree first (types need it), then applies them."""

    def __init__(self, resolver: ColumnResolver, *, members: bool) -> None:
        self._resolver = resolver
        self._with_members = members
        self._members: list[tuple[exp.Expr, SqlType, bool]] = []  # an ENUM or SET column, its type, as DOUBLE
        self._set_members: list[tuple[exp.Expr, str, int]] = []  # a FIND_IN_SET, the member, its position
        self._positions: list[tuple[exp.Expr, exp.Expr, SqlType]] = []  # ORDER BY n, the column n, its type
        self._casts: list[exp.Expr] = []
        self._collations: list[exp.Expr] = []
        self._roundings: list[tuple[exp.Expr, int]] = []
        self._literals: list[tuple[exp.Literal, str]] = []
        self._numbers: list[tuple[exp.Expr, str]] = []
        self._bigints: list[tuple[exp.Expr, str, str, str]] = []  # node, operator, signs, its text
        self._integer_casts: list[tuple[exp.Expr, bool, bool]] = []  # a CAST, unsigned, exact
        self._named_collations: list[tuple[exp.Expr, str]] = []  # a COLLATE, the collation's MySQL name
        self._number_texts: list[tuple[exp.Expr, SqlType]] = []  # a number under COLLATE, its type

    def plan(self, tree: exp.Expr) -> None:
        for scope in traverse_scope(tree):
            for node in scope.walk():
                kind = _KINDS[type(node)]
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
                elif kind == "integer":
                    self._plan_integer_arithmetic(scope, node)
                elif kind == "cast":
                    self._plan_integer_cast(scope, node)
                elif kind == "collate":
                    self._plan_collate(scope, node)
                elif kind == "column" and self._with_members:
                    self._plan_member_number(scope, node)
                elif kind == "call" and self._with_members:
                    self._plan_find_in_set(scope, node)
                elif kind == "ordered" and self._with_members:
                    self._plan_position_in_order_by(scope, node)

    def apply(self) -> None:
        # First: the rewrites below read the operands of their nodes as they then stand.
        for node, sql_type, as_double in self._members:
            placeholder = exp.Placeholder()
            node.replace(placeholder)
            placeholder.replace(_member_number(node, sql_type, as_double=as_double))
        for position_key, column, sql_type in self._positions:
            position_key.replace(_member_number(column.copy(), sql_type, as_double=False))
        for find, member, position in self._set_members:
            value, member_number = find.expressions[1], exp.Literal.number(position)
            find.replace(call("MYSQL_FIND_SET_MEMBER", value, exp.Literal.string(member), member_number))
        for literal, text in self._literals:
            literal.replace(exp.Literal.string(text))
        for node in self._casts:
            _wrap(node, exp.Cast, to=_REAL_TYPE.copy())
        for node, format_ in self._numbers:
            placeholder = exp.Placeholder()
            node.replace(placeholder)
            digits = exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(format_), node])
            placeholder.replace(exp.Cast(this=digits, to=_INTEGER_TYPE.copy()))
        for node in self._collations:
            _wrap(node, exp.Collate, expression=exp.Var(this=UTF8MB4_COLLATION))
        for node, scale in self._roundings:
            _wrap(node, exp.Round, decimals=exp.Literal.number(scale))
        for node, number in self._number_texts:
            placeholder = exp.Placeholder()
            node.replace(placeholder)
            placeholder.replace(_as_text(node, number))
        for collate, name in self._named_collations:
            collate.set("expression", exp.Var(this=name))
        for cast, unsigned, exact in self._integer_casts:
            flags = (exp.Literal.number(int(unsigned)), exp.Literal.number(int(exact)))
            cast.replace(call("MYSQL_CAST_INTEGER", cast.this, *flags))
        for node, operator, signs, text in self._bigints:
            left, right = node.this, node.expression
            flags = (exp.Literal.string(signs), exp.Literal.string(text))
            node.replace(call("MYSQL_BIGINT", exp.Literal.string(operator), left, right, *flags))

    def _plan_comparison(
        self, scope: Scope, left: exp.Expr, others: list[exp.Expr], *, symmetric: bool
    ) -> None:
        left_type = self._resolver.type_of(left, scope)
        other_types = [self._resolver.type_of(other, scope) for other in others]
        # MySQL compares an ENUM or SET with numbers as its number (`stato = 2`, `2 = stato`).
        enum_or_set = _enum_or_set(left, left_type)
        if enum_or_set is not None and all(t is not None and t.is_number for t in other_types):
            self._members.append((left, enum_or_set, False))
            return
        enum_or_set = _enum_or_set(others[0], other_types[0]) if symmetric else None
        if enum_or_set is not None and left_type is not None and left_type.is_number:
            self._members.append((others[0], enum_or_set, False))
            return
        # MySQL compares a string with a number as numbers; SQLite would compare them as text.
        if _is_text(left_type) and all(t is not None and t.is_number for t in other_types):
            self._casts.append(left)
            return
        # And a number compared with strings reads each as a number (BETWEEN and IN too: '30 c12' is 30).
        texts = [other for other, t in zip(others, other_types, strict=True) if _is_text(t)]
        if texts and left_type is not None and left_type.is_number:
            self._casts.extend(texts)
            return
        # MySQL compares a date, datetime or time with a number as numbers (19900101, 235959).
        if _is_temporal(left_type) and all(t is not None and t.is_number for t in other_types):
            self._numbers.append((left, _NUMBER_FORMATS[left_type.kind]))  # type: ignore[union-attr]  # _is_temporal holds of a known type only
            return
        if symmetric and _is_temporal(other_types[0]) and left_type is not None and left_type.is_number:
            self._numbers.append((others[0], _NUMBER_FORMATS[other_types[0].kind]))  # type: ignore[union-attr]  # _is_temporal holds of a known type only
            return
        self._plan_temporal_literals(left_type, others)
        if symmetric and other_types[0] is not None and other_types[0].is_temporal:
            self._plan_temporal_literals(other_types[0], [left])
        strings = [node for node in (left, *others) if isinstance(node, exp.Literal) and node.is_string]
        # Text columns carry their collation; other text expressions need it to compare as MySQL does,
        # unless the query names one: an explicit COLLATE wins in MySQL, and would lose to ours in SQLite.
        if (
            strings
            and not isinstance(left, exp.Column)
            and (left_type is None or left_type.kind == "text")
            and not any(isinstance(node.unnest(), exp.Collate) for node in (left, *others))
        ):
            self._collations.append(left)

    def _plan_temporal_literals(self, column_type: SqlType | None, others: list[exp.Expr]) -> None:
        if column_type is None or not column_type.is_temporal:
            return
        for other in others:
            if isinstance(other, exp.Literal) and other.is_string:
                text = _comparable_temporal(other.name, column_type.kind)
                if text is not None and text != other.name:
                    self._literals.append((other, text))

    def _plan_rounding(self, scope: Scope, node: exp.Expr) -> None:
        # Exact only when the operands are: MySQL then rounds to their scale + div_precision_increment,
        # but only where the value leaves arithmetic: inside it, more digits are kept.
        top, parent = node, node.parent
        while isinstance(parent, (exp.Paren, *_ARITHMETIC, exp.Round)):
            if isinstance(parent, exp.Round):
                return  # ROUND(x / y, d) rounds the unrounded quotient
            if not isinstance(parent, exp.Paren):
                top = parent
            parent = parent.parent
        if top is not node:
            if any(planned is top for planned, _ in self._roundings):
                return
            node = top
        result = self._resolver.type_of(node, scope)
        if result is not None and result.kind == "exact":
            self._roundings.append((node, result.scale))

    def _plan_integer_arithmetic(self, scope: Scope, node: exp.Expr) -> None:
        left = self._resolver.type_of(node.this, scope)
        right = self._resolver.type_of(node.expression, scope)
        if left is None or right is None or not (left.integer and right.integer):
            return
        signs = ("u" if left.unsigned else "s") + ("u" if right.unsigned else "s")
        self._bigints.append((node, _BIGINT_OPERATORS[type(node)], signs, _quoted(node)))

    def _plan_integer_cast(self, scope: Scope, node: exp.Expr) -> None:
        unsigned = _INTEGER_CASTS.get(node.args["to"].this)
        if unsigned is None:
            return
        operand = self._resolver.type_of(node.this, scope)
        if _is_temporal(operand):
            self._numbers.append((node.this, _NUMBER_FORMATS[operand.kind]))  # type: ignore[union-attr]  # _is_temporal holds of a known type only
            return
        self._integer_casts.append((node, unsigned, operand is None or operand.kind != "float"))

    def _plan_member_number(self, scope: Scope, column: exp.Expr) -> None:
        """An ENUM or SET column where MySQL takes its number (comparisons are `_plan_comparison`'s)."""
        parent = column.parent
        while isinstance(parent, exp.Paren):
            parent = parent.parent
        as_double = isinstance(parent, _DOUBLE_CONTEXTS)
        numeric = as_double or isinstance(parent, _INTEGER_CONTEXTS) or _is_numeric_cast(parent)
        if not numeric:
            return
        enum_or_set = _enum_or_set(column, self._resolver.type_of(column, scope))
        if enum_or_set is not None:
            self._members.append((column, enum_or_set, as_double))

    def _plan_position_in_order_by(self, scope: Scope, ordered: exp.Expr) -> None:
        """`ORDER BY 2` of a SELECT whose second column is an ENUM or SET: its number, as for its name."""
        key, select = ordered.this, ordered.parent.parent if ordered.parent else None
        if not (isinstance(key, exp.Literal) and key.is_int and isinstance(select, exp.Select)):
            return
        position = int(key.name)
        if not 1 <= position <= len(select.expressions):
            return
        column = select.expressions[position - 1].unalias()
        enum_or_set = _enum_or_set(column, self._resolver.type_of(column, scope))
        if enum_or_set is not None:
            self._positions.append((key, column, enum_or_set))

    def _plan_find_in_set(self, scope: Scope, call_: exp.Expr) -> None:
        arguments = call_.expressions
        if call_.name.upper() != "FIND_IN_SET" or len(arguments) != 2:
            return
        wanted, listed = arguments
        set_type = _enum_or_set(listed, self._resolver.type_of(listed, scope))
        if set_type is None or not set_type.is_set or not isinstance(wanted, exp.Literal):
            return
        text = wanted.name.lower()
        for position, member in enumerate(set_type.members, 1):
            if member.lower() == text:
                self._set_members.append((call_, member, position))
                return

    def _plan_collate(self, scope: Scope, node: exp.Expr) -> None:
        written = node.expression.name
        charset = collation_charset(written)
        if charset is None:
            raise TranspileError(f"Unknown collation: '{written}' (MySQL error 1273)")
        operand = self._resolver.type_of(node.this, scope)
        if operand is not None and operand.is_number:
            # MySQL collates a number as its text, in the connection's character set ('10' < '9').
            self._number_texts.append((node.this, operand))
            expected: str | None = CONNECTION_CHARSET
        else:
            expected = operand.charset if operand is not None and operand.kind == "text" else None
        name = canonical_collation(written)
        # The copies hold utf8mb4 and utf8mb3 text only: where the operand's is unknown, either is taken.
        if name is None or (expected is not None and expected != charset):
            raise TranspileError(
                f"COLLATION '{written}' is not valid for CHARACTER SET '{expected or CONNECTION_CHARSET}' "
                "(MySQL error 1253)"
            )
        self._named_collations.append((node, name))


# Where MySQL takes an ENUM's or SET's number as a DOUBLE (a string column's numeric value), and where as an
# integer (a comparison with numbers is `_plan_comparison`'s).
_DOUBLE_CONTEXTS = (*_ARITHMETIC, exp.IntDiv, exp.Sum, exp.Avg)
_INTEGER_CONTEXTS = (
    exp.Ordered,
    *BIT_OPERATORS,
    exp.Where,
    exp.Having,
    exp.And,
    exp.Or,
    exp.Not,
    exp.Xor,
)


def _is_numeric_cast(node: exp.Expr | None) -> bool:
    return isinstance(node, exp.Cast) and node.to.this in exp.DataType.NUMERIC_TYPES


def _enum_or_set(node: exp.Expr, sql_type: SqlType | None) -> SqlType | None:
    """`sql_type` when `node` is a column of an ENUM or SET (whose values are its members' text), else None."""
    if sql_type is not None and sql_type.members and isinstance(node.unnest(), exp.Column):
        return sql_type
    return None


def _member_number(node: exp.Expr, sql_type: SqlType, *, as_double: bool) -> exp.Expr:
    function = "MYSQL_SET_NUMBER" if sql_type.is_set else "MYSQL_ENUM_INDEX"
    number = call(function, node, *(exp.Literal.string(member) for member in sql_type.members))
    return exp.Cast(this=number, to=_REAL_TYPE.copy()) if as_double else number


def _as_text(node: exp.Expr, number: SqlType) -> exp.Expr:
    """A number as MySQL writes it: a DECIMAL with all the digits of its scale (9.50), which SQLite drops."""
    if number.kind == "exact" and number.scale > 0 and not number.integer:
        return call("PRINTF", exp.Literal.string(f"%.{number.scale}f"), node)
    return exp.Cast(this=node, to=_TEXT_TYPE.copy())


def _quoted(node: exp.Expr) -> str:
    """An expression as MySQL's error message quotes it: its text in parentheses, cut short."""
    text = f"({node.sql(dialect=SQLGLOT_DIALECTS['mysql'])})"
    return text if len(text) <= _QUOTED_CHARS else text[: _QUOTED_CHARS - 3] + "..."


def _is_temporal(sql_type: SqlType | None) -> bool:
    return sql_type is not None and sql_type.is_temporal


# A temporal value as the number MySQL compares it as.
_NUMBER_FORMATS = {"date": "%Y%m%d", "datetime": "%Y%m%d%H%M%S", "time": "%H%M%S"}


def _is_text(sql_type: SqlType | None) -> bool:
    return sql_type is not None and sql_type.kind == "text"


class _KindOfClass(dict[type, str | None]):
    """What `_Rewriter.plan` does with a node of a class: "comparison", "in", "between", "rounding" (a
    division or AVG), "integer" (an integer operator), "cast", "collate", or None (nothing); with ENUM or SET
    columns only (`_MEMBER_KINDS`): "column", "call" (a call by name), "ordered" (a key of ORDER BY). Each
    class is classified when first met: isinstance tests against several of sqlglot's classes, at each node
    of each query, cost more than the lookup."""

    def __missing__(self, cls: type) -> str | None:
        kind: str | None = None
        if issubclass(cls, _COMPARISONS):
            kind = "comparison"
        elif issubclass(cls, exp.In):
            kind = "in"
        elif issubclass(cls, exp.Between):
            kind = "between"
        elif issubclass(cls, exp.Div | exp.Avg):
            kind = "rounding"
        elif cls in _BIGINT_OPERATORS:
            kind = "integer"
        elif issubclass(cls, exp.Cast):
            kind = "cast"
        elif issubclass(cls, exp.Collate):
            kind = "collate"
        elif issubclass(cls, exp.Column):
            kind = "column"
        elif cls is exp.Anonymous:
            kind = "call"
        elif issubclass(cls, exp.Ordered):
            kind = "ordered"
        self[cls] = kind
        return kind


_KINDS = _KindOfClass()
# The kinds that matter only to a schema with ENUM or SET columns.
_MEMBER_KINDS = ("column", "call", "ordered")


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
