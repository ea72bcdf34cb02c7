"""Is a prediction written in the dialect it claims? An allow-list per dialect, checked before transpiling.

    conformance_error(sql, dialect="mysql")   # None, or "not MySQL: ILIKE"

The transpiler's readers are lenient by design: sqlglot's MySQL reader takes `a == 1`, `x::int`, `ILIKE`,
`NULLS FIRST` or `iif(...)` and writes SQLite that runs, so a query MySQL refuses could be scored correct.
This module says what each dialect accepts, and anything else is the prediction's `syntax_error`:

- MySQL (8.0, as documented; where MariaDB 10.11 agrees): the grammar constructs a query may use, as the
  sqlglot node classes of `MYSQL_CONSTRUCTS` with the restrictions MySQL puts on some of them (LIMIT and
  OFFSET take integer literals, IS takes TRUE/FALSE/UNKNOWN/NULL, CAST and CONVERT a cast type, COLLATE a
  MySQL collation, joins are never FULL); the built-in functions of `MYSQL_FUNCTIONS` with their number
  of arguments. sqlglot's tree forgets some of what was written (`iif` becomes IF, `IS NOT DISTINCT FROM`
  becomes `<=>`, `NULLS FIRST` a flag every ORDER BY carries), so the tokens are checked too: function
  names and arities, operators and word orders are read there.
- SQLite: SQLite's own compile already runs in the sandbox (`sandbox_child`), but the sandbox installs
  MySQL helper functions into every connection (`functions.install_functions`); a SQLite prediction may
  call only SQLite's built-in functions (`SQLITE_FUNCTIONS`), and not the REGEXP operator, which calls
  one of those helpers. The text is scanned here without sqlglot, whose tokenizer need not agree with
  SQLite's.

Data-independent and cheap: one tokenization and one walk of the tree for MySQL, one scan for SQLite. The
scorer has the transpiler check the tree it parses anyway (`dialect.to_sqlite(check_conformance=True)`,
through `mysql_conformance_error`), so a prediction is parsed once.
Nothing raises but the caller's mistakes (an unknown dialect): a text this module cannot read is left to
the transpiler, which reports why.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Sequence

from sqlglot import exp
from sqlglot.tokenizer_core import Token, TokenType

from evaluation.scoring.collations import MYSQL_CHARSETS
from evaluation.scoring.query_shape import check_shape
from evaluation.scoring.statements import TranspileError, check_source, read_statement, single_statement

__all__ = [
    "MYSQL_CONSTRUCTS",
    "MYSQL_FUNCTIONS",
    "SQLITE_FUNCTIONS",
    "NotConformant",
    "conformance_error",
    "mysql_conformance_error",
]

# --- MySQL -------------------------------------------------------------------------------------------------

_VARIADIC = None
# MySQL 8.0's built-in functions a query may use (reference manual, "Built-In Function and Operator
# Reference"), with (least, most) arguments; most None is any number. Functions with a grammar of their
# own (CAST(x AS t), TRIM(LEADING x FROM y), EXTRACT(u FROM d), COUNT(DISTINCT ...), GROUP_CONCAT(...
# SEPARATOR s), ...) have no arity here: the parser checks their shape. Functions about the server, the
# session or files (SLEEP, LOAD_FILE, GET_LOCK, ...) are left out: no benchmark query needs them.
_MYSQL_FUNCTION_TABLE = """
ABS 1 1; ACOS 1 1; ADDDATE 2 2; ADDTIME 2 2; ANY_VALUE 1 1; ASCII 1 1; ASIN 1 1; ATAN 1 2; ATAN2 2 2;
AVG - -; BIN 1 1; BIT_AND 1 1; BIT_COUNT 1 1; BIT_LENGTH 1 1; BIT_OR 1 1; BIT_XOR 1 1; CAST - -;
CEIL 1 1; CEILING 1 1; CHAR - -; CHAR_LENGTH 1 1; CHARACTER_LENGTH 1 1; CHARSET 1 1; COALESCE 1 *;
COERCIBILITY 1 1; COLLATION 1 1; CONCAT 1 *; CONCAT_WS 2 *; CONV 3 3; CONVERT - -; CONVERT_TZ 3 3;
COS 1 1; COT 1 1; COUNT - -; CRC32 1 1; CUME_DIST 0 0; CURDATE 0 0; CURRENT_DATE 0 0;
CURRENT_TIME 0 1; CURRENT_TIMESTAMP 0 1; CURTIME 0 1; DATE 1 1; DATE_ADD 2 2; DATE_FORMAT 2 2;
DATE_SUB 2 2; DATEDIFF 2 2; DAY 1 1; DAYNAME 1 1; DAYOFMONTH 1 1; DAYOFWEEK 1 1; DAYOFYEAR 1 1;
DEGREES 1 1; DENSE_RANK 0 0; ELT 2 *; EXP 1 1; EXPORT_SET 3 5; EXTRACT - -; FIELD 2 *;
FIND_IN_SET 2 2; FIRST_VALUE 1 1; FLOOR 1 1; FORMAT 2 3; FROM_BASE64 1 1; FROM_DAYS 1 1;
FROM_UNIXTIME 1 2; GET_FORMAT - -; GREATEST 2 *; GROUP_CONCAT - -; GROUPING 1 *; HEX 1 1; HOUR 1 1;
IF 3 3; IFNULL 2 2; INSERT 4 4; INSTR 2 2; INTERVAL - -; ISNULL 1 1; JSON_ARRAY 0 *;
JSON_ARRAY_APPEND 3 *; JSON_ARRAY_INSERT 3 *; JSON_ARRAYAGG 1 1; JSON_CONTAINS 2 3;
JSON_CONTAINS_PATH 3 *; JSON_DEPTH 1 1; JSON_EXTRACT 2 *; JSON_INSERT 3 *; JSON_KEYS 1 2;
JSON_LENGTH 1 2; JSON_MERGE_PATCH 2 *; JSON_MERGE_PRESERVE 2 *; JSON_OBJECT 0 *; JSON_OBJECTAGG 2 2;
JSON_OVERLAPS 2 2; JSON_PRETTY 1 1; JSON_QUOTE 1 1; JSON_REMOVE 2 *; JSON_REPLACE 3 *;
JSON_SEARCH 3 *; JSON_SET 3 *; JSON_TYPE 1 1; JSON_UNQUOTE 1 1; JSON_VALID 1 1; JSON_VALUE - -;
LAG 1 3; LAST_DAY 1 1; LAST_VALUE 1 1; LCASE 1 1; LEAD 1 3; LEAST 2 *; LEFT 2 2; LENGTH 1 1; LN 1 1;
LOCALTIME 0 1; LOCALTIMESTAMP 0 1; LOCATE 2 3; LOG 1 2; LOG10 1 1; LOG2 1 1; LOWER 1 1; LPAD 3 3;
LTRIM 1 1; MAKE_SET 2 *; MAKEDATE 2 2; MAKETIME 3 3; MATCH - -; MAX - -; MD5 1 1; MICROSECOND 1 1;
MID 2 3; MIN - -; MINUTE 1 1; MOD 2 2; MONTH 1 1; MONTHNAME 1 1; NOW 0 1; NTH_VALUE 2 2; NTILE 1 1;
NULLIF 2 2; OCT 1 1; OCTET_LENGTH 1 1; ORD 1 1; PERCENT_RANK 0 0; PERIOD_ADD 2 2; PERIOD_DIFF 2 2;
PI 0 0; POSITION - -; POW 2 2; POWER 2 2; QUARTER 1 1; QUOTE 1 1; RADIANS 1 1; RAND 0 1; RANK 0 0;
REGEXP_INSTR 2 6; REGEXP_LIKE 2 3; REGEXP_REPLACE 3 6; REGEXP_SUBSTR 2 5; REPEAT 2 2; REPLACE 3 3;
REVERSE 1 1; RIGHT 2 2; ROUND 1 2; ROW_NUMBER 0 0; RPAD 3 3; RTRIM 1 1; SEC_TO_TIME 1 1; SECOND 1 1;
SHA 1 1; SHA1 1 1; SHA2 2 2; SIGN 1 1; SIN 1 1; SOUNDEX 1 1; SPACE 1 1; SQRT 1 1; STD 1 1; STDDEV 1 1;
STDDEV_POP 1 1; STDDEV_SAMP 1 1; STR_TO_DATE 2 2; STRCMP 2 2; SUBDATE 2 2; SUBSTR - -; SUBSTRING - -;
SUBSTRING_INDEX 3 3; SUBTIME 2 2; SUM - -; SYSDATE 0 1; TAN 1 1; TIME 1 1; TIME_FORMAT 2 2;
TIME_TO_SEC 1 1; TIMEDIFF 2 2; TIMESTAMP 1 2; TIMESTAMPADD 3 3; TIMESTAMPDIFF 3 3; TO_BASE64 1 1;
TO_DAYS 1 1; TO_SECONDS 1 1; TRIM - -; TRUNCATE 2 2; UCASE 1 1; UNHEX 1 1; UNIX_TIMESTAMP 0 1;
UPPER 1 1; UTC_DATE 0 0; UTC_TIME 0 1; UTC_TIMESTAMP 0 1; UUID 0 0; VAR_POP 1 1; VAR_SAMP 1 1;
VARIANCE 1 1; WEEK 1 2; WEEKDAY 1 1; WEEKOFYEAR 1 1; WEIGHT_STRING - -; YEAR 1 1; YEARWEEK 1 2
"""


def _function_table(text: str) -> dict[str, tuple[int, int | None] | None]:
    table: dict[str, tuple[int, int | None] | None] = {}
    for entry in text.split(";"):
        name, least, most = entry.split()
        table[name] = None if least == "-" else (int(least), None if most == "*" else int(most))
    return table


# Name -> (least, most) arguments, or None where the parser checks the call's own grammar.
MYSQL_FUNCTIONS = _function_table(_MYSQL_FUNCTION_TABLE)

# The grammar constructs, as the sqlglot node classes MySQL's reader makes of them. Function calls are
# checked by name and arity (the tree forgets what was written): any `exp.Func` node passes here.
MYSQL_CONSTRUCTS: frozenset[type[exp.Expr]] = frozenset(
    {
        # statements, clauses and set operations
        exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery, exp.With, exp.CTE, exp.From,
        exp.Join, exp.Where, exp.Group, exp.Rollup, exp.Having, exp.Order, exp.Ordered, exp.Limit,
        exp.Offset, exp.Distinct, exp.Window, exp.WindowSpec, exp.Lateral, exp.Values, exp.Tuple,
        # names and values
        exp.Alias, exp.TableAlias, exp.Table, exp.Column, exp.Identifier, exp.Star, exp.Dot, exp.Literal,
        exp.Null, exp.Boolean, exp.HexString, exp.BitString, exp.Introducer, exp.Var, exp.DataType,
        exp.DataTypeParam, exp.Interval, exp.Paren, exp.CharacterSet, exp.JSONPath, exp.JSONPathRoot,
        exp.JSONPathKey, exp.JSONPathSubscript, exp.JSONPathWildcard,
        # operators
        exp.And, exp.Or, exp.Xor, exp.Not, exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.GT, exp.GTE, exp.LT,
        exp.LTE, exp.Is, exp.In, exp.Between, exp.Like, exp.RegexpLike, exp.Escape, exp.Exists, exp.Any,
        exp.All, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.Neg, exp.BitwiseAnd,
        exp.BitwiseOr, exp.BitwiseXor, exp.BitwiseNot, exp.BitwiseLeftShift, exp.BitwiseRightShift,
        exp.Case, exp.If, exp.Collate, exp.Cast, exp.JSONExtract, exp.JSONExtractScalar,
    }
)  # fmt: skip

# What CAST(x AS t) and CONVERT(x, t) take, by the first word of t (MySQL 8.0's cast_type).
_MYSQL_CAST_TYPES = frozenset(
    {"BINARY", "CHAR", "NCHAR", "DATE", "DATETIME", "TIME", "YEAR", "DECIMAL", "SIGNED", "UNSIGNED",
     "FLOAT", "DOUBLE", "REAL", "JSON"}
)  # fmt: skip
_MYSQL_COLLATION = re.compile(rf"binary|(?:{'|'.join(MYSQL_CHARSETS)})_\w+", re.IGNORECASE)
# The join sides and kinds MySQL has (no FULL, no SEMI/ANTI, ...).
_MYSQL_JOIN_SIDES = frozenset({"", "LEFT", "RIGHT"})
_MYSQL_JOIN_KINDS = frozenset({"", "INNER", "OUTER", "CROSS", "STRAIGHT_JOIN"})


def conformance_error(sql: str, *, dialect: str) -> str | None:
    """Why `sql` is not written in `dialect` ("mysql" or "sqlite"), naming the construct; None when it is
    (or when it cannot be read at all: the transpiler says why)."""
    if check_source(dialect) == "sqlite":
        return _sqlite_error(sql)
    return _mysql_error(sql)


@functools.lru_cache(maxsize=4096)
def _mysql_error(sql: str) -> str | None:
    try:
        # What the transpiler refuses (several statements, a query too deep for sqlglot) is its to say.
        statement = single_statement(sql, "mysql")
        check_shape(statement.text, source="mysql", translating=True)
        tree, tokens = read_statement(statement, source="mysql")
    except (TranspileError, RecursionError):
        return None
    except Exception:  # sqlglot trips on some malformed text: the transpiler reports it
        return None
    return mysql_conformance_error(tree, tokens)


def mysql_conformance_error(tree: exp.Expr, tokens: Sequence[Token]) -> str | None:
    """`conformance_error` of a MySQL statement already parsed: `tree` and `tokens` as
    `statements.read_statement` gives them, the tree before any rewrite. The transpiler checks its own tree
    so (`to_sqlite(check_conformance=True)`): the text is tokenized and parsed once."""
    if not isinstance(tree, exp.Query):
        return None  # not a query (a write, SHOW, ...): the sandbox refuses what is not a read
    problem = _mysql_token_error(tokens) or _mysql_tree_error(tree)
    return None if problem is None else f"not MySQL: {problem}"


class NotConformant(TranspileError):
    """The query is not written in the dialect it claims; the message is `conformance_error`'s."""


# The tokens `_checked_token_error` reads on their own; any other matters only as the word NULLS or before a
# bracket, so most tokens cost two tests.
_CHECKED_TOKENS = frozenset(
    {TokenType.EQ, TokenType.DCOLON, TokenType.NOTNULL, TokenType.ISNULL, TokenType.IS, TokenType.LIMIT,
     TokenType.OFFSET}
)  # fmt: skip


def _mysql_token_error(tokens: Sequence[Token]) -> str | None:
    count = len(tokens)
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < count else None
        problem = None
        if token.token_type in _CHECKED_TOKENS:
            problem = _checked_token_error(tokens, index, following)
        elif (
            len(token.text) == 5
            and token.text.upper() == "NULLS"
            and following is not None
            and following.text.upper() in ("FIRST", "LAST")
        ):
            problem = f"NULLS {following.text.upper()}"
        if problem is None and following is not None and following.token_type == TokenType.L_PAREN:
            problem = _call_error(tokens, index)
        if problem is not None:
            return problem
    return None


def _checked_token_error(tokens: Sequence[Token], index: int, following: Token | None) -> str | None:
    kind, text = tokens[index].token_type, tokens[index].text.upper()
    after = following.token_type if following is not None else None
    if kind == TokenType.EQ and text == "==":
        return "== (write =)"
    if kind == TokenType.DCOLON:
        return ":: casts (write CAST(x AS type))"
    if kind in (TokenType.NOTNULL, TokenType.ISNULL) and after != TokenType.L_PAREN:
        return f"{text} (write IS NOT NULL or IS NULL)"
    if kind == TokenType.IS and _is_distinct_from(tokens, index):
        return "IS [NOT] DISTINCT FROM (write <=>)"
    if kind == TokenType.LIMIT:
        return _limit_error(tokens, index)
    if (
        kind == TokenType.OFFSET
        and after in (TokenType.NUMBER, TokenType.DASH, TokenType.PLUS)
        and not (index >= 2 and tokens[index - 2].token_type == TokenType.LIMIT)
    ):
        return "OFFSET before LIMIT (write LIMIT n OFFSET m)"
    return None


def _is_distinct_from(tokens: Sequence[Token], index: int) -> bool:
    following = [t.token_type for t in tokens[index + 1 : index + 3]]
    return following[:1] == [TokenType.DISTINCT] or following == [TokenType.NOT, TokenType.DISTINCT]


def _limit_error(tokens: Sequence[Token], index: int) -> str | None:
    """LIMIT takes one or two non-negative integer literals: `LIMIT n`, `LIMIT m, n`, `LIMIT n OFFSET m`."""
    numbers = [tokens[index + 1 : index + 2]]
    if index + 3 < len(tokens) and tokens[index + 2].token_type in (TokenType.COMMA, TokenType.OFFSET):
        numbers.append(tokens[index + 3 : index + 4])
    for found in numbers:
        if not found or found[0].token_type != TokenType.NUMBER or not found[0].text.isdigit():
            return "LIMIT or OFFSET with anything but an integer (write LIMIT n OFFSET m)"
    return None


def _call_error(tokens: Sequence[Token], index: int) -> str | None:
    """A word followed by `(`: a built-in function of MySQL with its arity, or a keyword, a type, a name
    whose column list follows (`WITH t (a, b) AS (...)`, `AS t (a, b)`); not a function MySQL lacks."""
    token = tokens[index]
    name = token.text.upper()
    if name in ("CAST", "CONVERT"):
        problem = _cast_type_error(tokens, index)
        if problem is not None:
            return problem
    if name in MYSQL_FUNCTIONS:
        arity = MYSQL_FUNCTIONS[name]
        if arity is None or (index > 0 and tokens[index - 1].token_type == TokenType.DOT):
            return None
        given = _argument_count(tokens, index + 1)
        least, most = arity
        if given < least or (most is not None and given > most):
            expected = f"{least}" if least == most else f"{least} to {most}" if most else f"{least} or more"
            return f"{name}() with {given} arguments (MySQL's takes {expected})"
        return None
    if token.token_type not in (TokenType.VAR, TokenType.IDENTIFIER):
        return None  # a keyword or a type name before a parenthesis
    previous = tokens[index - 1].token_type if index > 0 else None
    if previous in (TokenType.ALIAS, TokenType.DOT) or _is_column_list(tokens, index):
        return None
    if name == "AGAINST" and previous == TokenType.R_PAREN:
        return None  # MATCH (columns) AGAINST (...): MySQL's, which the transpiler refuses by name
    return f"{token.text}() is not a MySQL function"


def _matching(tokens: Sequence[Token], opening: int) -> int:
    """The index of the `)` closing the `(` at `opening` (or the end)."""
    depth = 0
    for index in range(opening, len(tokens)):
        kind = tokens[index].token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return index
    return len(tokens)


def _argument_count(tokens: Sequence[Token], opening: int) -> int:
    closing = _matching(tokens, opening)
    if closing == opening + 1:
        return 0
    depth, commas = 0, 0
    for token in tokens[opening + 1 : closing]:
        if token.token_type in (TokenType.L_PAREN, TokenType.L_BRACKET):
            depth += 1
        elif token.token_type in (TokenType.R_PAREN, TokenType.R_BRACKET):
            depth -= 1
        elif token.token_type == TokenType.COMMA and depth == 0:
            commas += 1
    return commas + 1


def _is_column_list(tokens: Sequence[Token], index: int) -> bool:
    """`name (a, b) AS (`: a common table expression's column list."""
    closing = _matching(tokens, index + 1)
    kinds = [t.token_type for t in tokens[closing + 1 : closing + 3]]
    return kinds == [TokenType.ALIAS, TokenType.L_PAREN]


def _cast_type_error(tokens: Sequence[Token], index: int) -> str | None:
    """CAST(x AS t) and CONVERT(x, t) take MySQL's cast types only (not TEXT, INTEGER, VARCHAR, ...)."""
    opening, closing = index + 1, _matching(tokens, index + 1)
    depth = 0
    separator = TokenType.ALIAS if tokens[index].text.upper() == "CAST" else TokenType.COMMA
    for position in range(opening, closing):
        kind = tokens[position].token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
        elif kind == separator and depth == 1 and position + 1 < closing:
            words = tokens[position + 1].text.upper().split()
            if not words or words[0] not in _MYSQL_CAST_TYPES:
                return f"{tokens[index].text.upper()} to {tokens[position + 1].text.upper()}"
            return None
    return None


def _mysql_tree_error(tree: exp.Expr) -> str | None:
    for node in tree.walk():
        verdict = _CLASS_VERDICTS[type(node)]
        if verdict is _Verdict.REFUSED:
            return _construct_name(node)
        if verdict is _Verdict.RESTRICTED:
            problem = _restriction(node)
            if problem is not None:
                return problem
    return None


class _Verdict(enum.Enum):
    ALLOWED = enum.auto()  # a construct MySQL has, as any node of its class is
    RESTRICTED = enum.auto()  # a construct MySQL has, with restrictions (`_restriction`)
    REFUSED = enum.auto()  # a construct MySQL lacks


# The classes `_restriction` has something to say about.
_RESTRICTED = (exp.Is, exp.Limit, exp.Offset, exp.Join, exp.Collate, exp.Ordered, exp.SetOperation)


class _VerdictOfClass(dict[type, _Verdict]):
    """The verdict on a node class, worked out when the class is first met: a query's tree has a few
    dozen nodes of a handful of classes."""

    def __missing__(self, cls: type) -> _Verdict:
        if cls is exp.Anonymous:  # a call by a name: the tokens said whether MySQL has it
            verdict = _Verdict.ALLOWED
        elif cls not in MYSQL_CONSTRUCTS and not issubclass(cls, exp.Func):
            verdict = _Verdict.REFUSED
        elif issubclass(cls, _RESTRICTED):
            verdict = _Verdict.RESTRICTED
        else:
            verdict = _Verdict.ALLOWED
        self[cls] = verdict
        return verdict


_CLASS_VERDICTS = _VerdictOfClass()


def _restriction(node: exp.Expr) -> str | None:
    """What MySQL forbids in a construct it has."""
    if isinstance(node, exp.Is) and not isinstance(node.expression, exp.Null | exp.Boolean):
        return "IS followed by a value (IS takes TRUE, FALSE, UNKNOWN or NULL)"
    if isinstance(node, exp.Limit | exp.Offset):
        value = node.expression
        if not (isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit()):
            return f"{node.key.upper()} with anything but an integer"
    if isinstance(node, exp.Join):
        side, kind = node.side.upper(), node.kind.upper()
        if side not in _MYSQL_JOIN_SIDES or kind not in _MYSQL_JOIN_KINDS:
            return f"{' '.join(filter(None, (side, kind)))} JOIN"
    if isinstance(node, exp.Collate):
        name = node.expression.name
        if not _MYSQL_COLLATION.fullmatch(name):
            return f"COLLATE {name.upper()}"
    if isinstance(node, exp.Ordered) and node.args.get("with_fill"):
        return "WITH FILL"
    if isinstance(node, exp.SetOperation) and node.args.get("order"):
        # MySQL's error 1250: the ORDER BY of a UNION sorts its result, which has no tables.
        columns = node.args["order"].find_all(exp.Column)
        own = (c for c in columns if c.find_ancestor(exp.Subquery, exp.Select, exp.SetOperation) is node)
        if any(column.table for column in own):
            return f"ORDER BY of a {node.key.upper()} naming a table (it takes the result's column names)"
    return None


def _construct_name(node: exp.Expr) -> str:
    names = {exp.ILike: "ILIKE", exp.Glob: "GLOB", exp.SimilarTo: "SIMILAR TO", exp.Fetch: "FETCH"}
    return names.get(type(node), node.key.upper())


# --- SQLite ------------------------------------------------------------------------------------------------

# SQLite's built-in functions (core, date and time, aggregate, window, math, JSON and its table-valued
# functions), as https://sqlite.org/lang_corefunc.html and its sibling pages list them. Arities are SQLite's
# own compile's business.
SQLITE_FUNCTIONS = frozenset(
    """
    abs changes char coalesce concat concat_ws format glob hex ifnull iif instr last_insert_rowid length
    like likelihood likely lower ltrim max min nullif octet_length printf quote random randomblob replace
    round rtrim sign soundex sqlite_compileoption_get sqlite_compileoption_used sqlite_offset
    sqlite_source_id sqlite_version substr substring total_changes trim typeof unhex unicode unlikely upper
    zeroblob
    date time datetime julianday unixepoch strftime timediff
    avg count group_concat string_agg sum total
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
    acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2 mod pi
    pow power radians sin sinh sqrt tan tanh trunc
    json jsonb json_array jsonb_array json_array_length json_error_position json_extract jsonb_extract
    json_insert jsonb_insert json_object jsonb_object json_patch jsonb_patch json_pretty json_remove
    jsonb_remove json_replace jsonb_replace json_set jsonb_set json_type json_valid json_quote
    json_group_array jsonb_group_array json_group_object jsonb_group_object json_each json_tree
    """.split()  # noqa: SIM905
)
# SQLite's keywords (https://sqlite.org/lang_keywords.html): before a parenthesis they are grammar, not
# calls (`IN (`, `AS (`, `OVER (`, `FILTER (`, `VALUES (`, ...).
_SQLITE_KEYWORDS = frozenset(
    """
    abort action add after all alter always analyze and as asc attach autoincrement before begin between by
    cascade case cast check collate column commit conflict constraint create cross current current_date
    current_time current_timestamp database default deferrable deferred delete desc detach distinct do drop
    each else end escape except exclude exclusive exists explain fail filter first following for foreign
    from full generated glob group groups having if ignore immediate in index indexed initially inner insert
    instead intersect into is isnull join key last left like limit match materialized natural no not
    nothing notnull null nulls of offset on or order others outer over partition plan pragma preceding
    primary query raise range recursive references regexp reindex release rename replace restrict returning
    right rollback row rows savepoint select set table temp temporary then ties to transaction trigger
    unbounded union unique update using vacuum values view virtual when where window with without
    """.split()  # noqa: SIM905
)
# Lexemes of SQLite text: comments, strings, quoted names ("x", `x`, [x]), words, and single characters.
_SQLITE_LEXEMES = re.compile(
    r"""(?P<space>\s+|--[^\n]*|/\*.*?(?:\*/|\Z))
    | (?P<string>'(?:[^']|'')*(?:'|\Z))
    | (?P<name>"(?:[^"]|"")*(?:"|\Z) | `(?:[^`]|``)*(?:`|\Z) | \[[^\]]*(?:\]|\Z))
    | (?P<word>[A-Za-z_\x80-\U0010ffff][\w$\x80-\U0010ffff]*)
    | (?P<other>.)""",
    re.DOTALL | re.VERBOSE,
)


@functools.lru_cache(maxsize=4096)
def _sqlite_error(sql: str) -> str | None:
    lexemes = [
        (match.lastgroup, match.group())
        for match in _SQLITE_LEXEMES.finditer(sql)
        if match.lastgroup not in ("space", "string")
    ]
    if not lexemes or lexemes[0][1].lower() not in ("select", "with", "values", "("):
        return None  # not a query (a write, a PRAGMA, ...): the sandbox refuses what is not a read
    for index, (kind, text) in enumerate(lexemes):
        if kind == "word" and text.lower() == "regexp":
            return "not SQLite: REGEXP (SQLite has no regexp function)"
        is_call = index + 1 < len(lexemes) and lexemes[index + 1][1] == "("
        if not is_call or kind not in ("word", "name"):
            continue
        name = text[1:-1] if kind == "name" else text
        lowered = name.lower()
        if lowered in SQLITE_FUNCTIONS or (kind == "word" and lowered in _SQLITE_KEYWORDS):
            continue
        previous = lexemes[index - 1][1].lower() if index > 0 else ""
        if previous in ("as", ".") or _sqlite_column_list(lexemes, index):
            continue  # a type name in CAST, a table's column list, a qualified name: not a call of SQLite's
        return f"not SQLite: {name}() is not a SQLite function"
    return None


def _sqlite_column_list(lexemes: Sequence[tuple[str | None, str]], index: int) -> bool:
    """`name (a, b) AS (`: a common table expression's column list."""
    depth = 0
    for position in range(index + 1, len(lexemes)):
        text = lexemes[position][1]
        if text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
            if depth == 0:
                following = [t.lower() for _, t in lexemes[position + 1 : position + 3]]
                return following == ["as", "("]
    return False
