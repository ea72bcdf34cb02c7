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
- `expr COLLATE name` takes a collation of MySQL 8.0 (`collations`), of the expression's character set
  when it is known (a string literal's is utf8mb4, a column's its table's): otherwise the query is
  refused as MySQL refuses it, error 1273 or 1253, before it runs; a string literal compared with an
  expression that has an explicit COLLATE takes that collation, not the default.

Every change is planned on the untouched tree (types need it), then applied.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from evaluation.scoring.collations import UTF8MB4_COLLATION, canonical_collation, collation_charset
from evaluation.scoring.functions import normalise_temporal, read_moment
from evaluation.scoring.resolver import ColumnResolver
from evaluation.scoring.sqltypes import CONNECTION_CHARSET, SqlType
from evaluation.scoring.statements import TranspileError

_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)
# Building a type parses its name: this is built once, and copied.
_REAL_TYPE = exp.DataType.build("REAL")
_INTEGER_TYPE = exp.DataType.build("INTEGER")


def rewrite_by_types(tree: exp.Expr, resolver: ColumnResolver) -> None:
    """Apply the rules above to the tree, in place."""
    rewriter = _Rewriter(resolver)
    rewriter.plan(tree)
    rewriter.apply()


def needs_types(cls: type) -> bool:
    """Whether `rewrite_by_types` may change a node of class `cls`."""
    return _KINDS[cls] is not None


def _wrap(node: exp.Expr, make: type[exp.Expr], **args: object) -> None:
    """Put `node` inside a new `make(this=node, **args)` where it stands, keeping the node object itself."""
    placeholder = exp.Placeholder()
    node.replace(placeholder)
    placeholder.replace(make(this=node, **args))


class _Rewriter:
    """Plans every change on the untouched tree first (types need it), then applies them."""

    def __init__(self, resolver: ColumnResolver) -> None:
        self._resolver = resolver
        self._casts: list[exp.Expr] = []
        self._collations: list[exp.Expr] = []
        self._roundings: list[tuple[exp.Expr, int]] = []
        self._literals: list[tuple[exp.Literal, str]] = []
        self._numbers: list[tuple[exp.Expr, str]] = []
        self._named_collations: list[tuple[exp.Expr, str]] = []  # a COLLATE, the collation's MySQL name

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
                elif kind == "collate":
                    self._plan_collate(scope, node)

    def apply(self) -> None:
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
        for collate, name in self._named_collations:
            collate.set("expression", exp.Var(this=name))

    def _plan_comparison(
        self, scope: Scope, left: exp.Expr, others: list[exp.Expr], *, symmetric: bool
    ) -> None:
        left_type = self._resolver.type_of(left, scope)
        other_types = [self._resolver.type_of(other, scope) for other in others]
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

    def _plan_collate(self, scope: Scope, node: exp.Expr) -> None:
        written = node.expression.name
        charset = collation_charset(written)
        if charset is None:
            raise TranspileError(f"Unknown collation: '{written}' (MySQL error 1273)")
        operand = self._resolver.type_of(node.this, scope)
        expected = operand.charset if operand is not None and operand.kind == "text" else None
        name = canonical_collation(written)
        # The copies hold utf8mb4 and utf8mb3 text only: where the operand's is unknown, either is taken.
        if name is None or (expected is not None and expected != charset):
            raise TranspileError(
                f"COLLATION '{written}' is not valid for CHARACTER SET '{expected or CONNECTION_CHARSET}' "
                "(MySQL error 1253)"
            )
        self._named_collations.append((node, name))


def _is_temporal(sql_type: SqlType | None) -> bool:
    return sql_type is not None and sql_type.is_temporal


# A temporal value as the number MySQL compares it as.
_NUMBER_FORMATS = {"date": "%Y%m%d", "datetime": "%Y%m%d%H%M%S", "time": "%H%M%S"}


def _is_text(sql_type: SqlType | None) -> bool:
    return sql_type is not None and sql_type.kind == "text"


class _KindOfClass(dict[type, str | None]):
    """What `_Rewriter.plan` does with a node of a class: "comparison", "in", "between", "rounding" (a
    division or AVG), "collate", or None (nothing). Each class is classified when first met: isinstance
    tests against several of sqlglot's classes, at each node of each query, cost more than the lookup."""

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
        elif issubclass(cls, exp.Collate):
            kind = "collate"
        self[cls] = kind
        return kind


_KINDS = _KindOfClass()


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
