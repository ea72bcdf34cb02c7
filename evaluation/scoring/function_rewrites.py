"""MySQL's functions and operators that SQLite lacks or reads otherwise, as SQLite expressions of the same
meaning: rewrites of the syntax tree that need no types.

YEAR/MONTH/DAY/HOUR/... and EXTRACT become `STRFTIME`; DATEDIFF compares date parts; TIMESTAMPDIFF,
DATE_ADD/DATE_SUB/`± INTERVAL`, TRUNCATE and CONCAT_WS call functions that `functions.install_functions`
registers; CURDATE/NOW use local time; LEFT/RIGHT/MID become SUBSTR; XOR compares truth values; LIKE
without ESCAPE gets MySQL's escape character, the backslash, written out (the `like` of
`functions.install_functions` follows MySQL's collation); STR_TO_DATE, DATE_FORMAT/MONTHNAME/DAYNAME,
DATE, PERIOD_DIFF, PERIOD_ADD, the day numbers (TO_DAYS, FROM_DAYS, TO_SECONDS, MAKEDATE), the weeks (WEEK,
WEEKOFYEAR, YEARWEEK), STRCMP, SUBSTRING_INDEX, FIELD, FIND_IN_SET, LOCATE/INSTR/POSITION and GROUP_CONCAT
call functions of `functions`; CAST(... AS DATE | DATETIME) reads a date as MySQL does and is NULL for
an invalid or zero one; LENGTH counts bytes, CHAR_LENGTH characters; ANY_VALUE(x) becomes x; `FROM DUAL` is
dropped; a character set introducer (`_utf8mb4'a'`) is dropped; MATCH ... AGAINST (full-text search) is
refused: a TranspileError before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from evaluation.scoring.functions import MICROSECONDS_PER_UNIT, MONTHS_PER_UNIT, read_moment
from evaluation.scoring.statements import SQLGLOT_DIALECTS, TranspileError

# MySQL date parts as SQLite computes them: the STRFTIME format of the number, and what is done with it.
_DATE_PARTS = {
    "YEAR": "%Y",
    "MONTH": "%m",
    "DAY": "%d",
    "HOUR": "%H",
    "MINUTE": "%M",
    "SECOND": "%S",
    "DAYOFYEAR": "%j",
    "DAYOFWEEK": "%w",  # + 1
    "WEEKDAY": "%w",  # (+ 6) % 7
    "QUARTER": "%m",  # (+ 2) / 3
}
# The nodes sqlglot reads MySQL's date-part functions into, and the part each one takes.
DATE_PART_NODES: dict[type[exp.Expr], str] = {
    exp.Year: "YEAR",
    exp.Month: "MONTH",
    exp.Day: "DAY",
    exp.DayOfMonth: "DAY",
    exp.Hour: "HOUR",
    exp.Minute: "MINUTE",
    exp.Second: "SECOND",
    exp.DayOfYear: "DAYOFYEAR",
    exp.DayOfWeek: "DAYOFWEEK",
    exp.Quarter: "QUARTER",
}
# The functions whose string arguments are dates to MySQL ('2024-6-1' means 2024-06-01).
DATE_ARGUMENT_NODES = (
    *DATE_PART_NODES,
    exp.DateDiff,
    exp.TimestampDiff,
    exp.DateAdd,
    exp.DateSub,
    exp.LastDay,
    exp.TsOrDsToDate,
)
_MYSQL_GENERATOR = SQLGLOT_DIALECTS["mysql"].generator()
_NOW_FUNCTIONS = ("NOW", "SYSDATE", "LOCALTIME", "LOCALTIMESTAMP")
# Building a type parses its name: this is built once, and copied.
_INTEGER_TYPE = exp.DataType.build("INTEGER")


def with_sqlite_functions(tree: exp.Expr, nodes: list[exp.Expr] | None = None) -> exp.Expr:
    """The tree with MySQL's date functions and operators replaced by SQLite expressions of the same
    meaning, for SQLite's own generator; changed in place, and the new root returned.

    Arguments are rewritten before the calls around them (children come before their parents). `nodes`,
    when given, are the tree's nodes that have a rewrite, in depth-first order (see `survey`).
    """
    if nodes is None:
        nodes = [node for node in tree.walk(bfs=False) if type(node) in _REWRITES]
    for node in reversed(nodes):
        replacement = _REWRITES[type(node)](node)
        if replacement is not node:
            if node is tree:
                tree = replacement
            else:
                node.replace(replacement)
    return tree


def is_rewritten(cls: type) -> bool:
    """Whether `with_sqlite_functions` rewrites the nodes of class `cls`."""
    return cls in _REWRITES


def normalise_date_arguments(node: exp.Expr) -> None:
    """Spell the string arguments of a date function as SQLite reads them, in place ('2024-6-1' is
    2024-06-01 to MySQL, and no date to SQLite)."""
    for argument in node.iter_expressions():
        if isinstance(argument, exp.Literal) and argument.is_string:
            moment = read_moment(argument.name)
            if moment is not None:
                text = moment.datetime_text if moment.has_time_of_day else moment.date_text
                argument.replace(exp.Literal.string(text))


def _extract(node: exp.Extract) -> exp.Expr:
    part = _unit(node, "this")
    if part not in _DATE_PARTS:
        raise TranspileError(f"EXTRACT({part} FROM ...) is not supported")
    return _date_part(part, node.expression)


def _date_diff(node: exp.DateDiff) -> exp.Expr:
    days = exp.Sub(
        this=call("JULIANDAY", call("DATE", node.this)),
        expression=call("JULIANDAY", call("DATE", node.expression)),
    )
    return _integer(days)


def _add(node: exp.Add) -> exp.Expr:
    interval, value = _interval_operands(node)
    return node if interval is None else _date_add(value, interval.this, _unit(interval))


def _sub(node: exp.Sub) -> exp.Expr:
    interval = node.expression
    if not isinstance(interval, exp.Interval):
        return node
    return _date_add(node.this, exp.Neg(this=interval.this), _unit(interval))


def _like(node: exp.Like) -> exp.Expr:
    if isinstance(node.parent, exp.Escape):
        return node
    return exp.Escape(this=node.copy(), expression=exp.Literal.string("\\"))


def _mysql_format(node: exp.Expr) -> exp.Expr:
    """The format of a date function as MySQL wrote it: sqlglot keeps it in strftime's spelling."""
    format_ = node.args.get("format")
    if isinstance(format_, exp.Literal) and format_.is_string:
        # The MySQL generator's own spelling, as a quoted string ('' for a quote inside).
        quoted = _MYSQL_GENERATOR.format_time(node) or "''"
        return exp.Literal.string(quoted[1:-1].replace("''", "'"))
    raise TranspileError("a date format must be a string literal")


def _date_format(node: exp.TimeToStr) -> exp.Expr:
    value = node.this
    while isinstance(value, exp.TsOrDsToDate | exp.TsOrDsToTimestamp):  # sqlglot's own wrappers
        value = value.this
    return call("MYSQL_DATE_FORMAT", value, _mysql_format(node))


def _str_position(node: exp.StrPosition) -> exp.Expr:
    arguments = [node.args["substr"], node.this]
    if node.args.get("position") is not None:
        arguments.append(node.args["position"])
    return call("MYSQL_LOCATE", *arguments)


def _length(node: exp.Length) -> exp.Expr:
    if not node.args.get("binary"):
        return node
    return call("LENGTH", exp.Cast(this=node.this, to=exp.DataType.build("BLOB")))


def _group_concat(node: exp.GroupConcat) -> exp.Expr:
    value, keys = node.this, []
    if isinstance(value, exp.Order):
        keys = value.expressions
        value = value.this
    distinct = isinstance(value, exp.Distinct)
    if distinct:
        parts = value.expressions
        value = parts[0] if len(parts) == 1 else exp.DPipe(this=parts[0], expression=parts[1])
        for part in parts[2:]:
            value = exp.DPipe(this=value, expression=part)
    directions = "".join("D" if key.args.get("desc") else "A" for key in keys)
    return call(
        "MYSQL_GROUP_CONCAT",
        value,
        node.args.get("separator") or exp.Literal.string(","),
        exp.Literal.number(int(distinct)),
        exp.Literal.string(directions),
        *(key.this for key in keys),
    )


# CAST(x AS DATE) and CAST(x AS DATETIME) read x as MySQL reads a date, and give NULL for what MySQL 8.0's
# default sql_mode refuses: an invalid date, a zero date or one with a zero part.
_TEMPORAL_CASTS = {exp.DType.DATE: "MYSQL_DATE", exp.DType.DATETIME: "MYSQL_DATETIME"}


def _cast(node: exp.Cast) -> exp.Expr:
    function = _TEMPORAL_CASTS.get(node.to.this)
    return node if function is None else call(function, node.this)


def _match_against(_: exp.MatchAgainst) -> exp.Expr:
    # A FULLTEXT index's relevance (stopwords, minimum word length, the ranking) is the server's own: no
    # expression over the copy gives MySQL's answer, so a query asking for it is refused before it runs.
    raise TranspileError(
        "MATCH ... AGAINST (full-text search) is not supported by the portal's scorer: use LIKE or another "
        "condition on the text"
    )


def _from(node: exp.From) -> exp.Expr:
    table = node.this
    if (
        isinstance(table, exp.Table)
        and table.name.upper() == "DUAL"
        and not table.db
        and not table.this.quoted
    ):
        node.pop()  # MySQL's FROM DUAL selects one row, as no FROM does
    return node


def _right(node: exp.Right) -> exp.Expr:
    length = node.expression
    return call("SUBSTR", node.this, exp.Neg(this=exp.Paren(this=length.copy())), length)


def _anonymous(node: exp.Anonymous) -> exp.Expr:
    name = node.name.upper()
    arguments = node.expressions
    if name in _NOW_FUNCTIONS and not arguments:
        return _now()
    if name == "WEEKDAY" and len(arguments) == 1:
        return _date_part(name, arguments[0])
    if name == "MID" and len(arguments) in (2, 3):
        return call("SUBSTR", *arguments)
    if name in _PYTHON_FUNCTIONS and len(arguments) in _PYTHON_FUNCTIONS[name][1]:
        return call(_PYTHON_FUNCTIONS[name][0], *arguments)
    if name == "OCTET_LENGTH" and len(arguments) == 1:
        return _length(exp.Length(this=arguments[0], binary=True))
    return node


# MySQL functions sqlglot reads as anonymous calls, and the function of `functions` each becomes, with
# the numbers of arguments MySQL takes.
_PYTHON_FUNCTIONS = {
    "STRCMP": ("MYSQL_STRCMP", (2,)),
    "PERIOD_DIFF": ("MYSQL_PERIOD_DIFF", (2,)),
    "PERIOD_ADD": ("MYSQL_PERIOD_ADD", (2,)),
    "FIELD": ("MYSQL_FIELD", range(2, 101)),
    "FIND_IN_SET": ("MYSQL_FIND_IN_SET", (2,)),
    "TO_DAYS": ("MYSQL_TO_DAYS", (1,)),
    "TO_SECONDS": ("MYSQL_TO_SECONDS", (1,)),
    "FROM_DAYS": ("MYSQL_FROM_DAYS", (1,)),
    "MAKEDATE": ("MYSQL_MAKEDATE", (2,)),
    "YEARWEEK": ("MYSQL_YEARWEEK", (1, 2)),
}


def _date_part(part: str, value: exp.Expr) -> exp.Expr:
    number = _integer(call("STRFTIME", exp.Literal.string(_DATE_PARTS[part]), value))
    if part == "DAYOFWEEK":
        return exp.Paren(this=exp.Add(this=number, expression=exp.Literal.number(1)))
    if part == "WEEKDAY":
        shifted = exp.Paren(this=exp.Add(this=number, expression=exp.Literal.number(6)))
        return exp.Paren(this=exp.Mod(this=shifted, expression=exp.Literal.number(7)))
    if part == "QUARTER":
        shifted = exp.Paren(this=exp.Add(this=number, expression=exp.Literal.number(2)))
        # typed: an integer division, which SQLite's `/` of two integers is
        return exp.Paren(this=exp.Div(this=shifted, expression=exp.Literal.number(3), typed=True))
    return number


def _date_add(value: exp.Expr, amount: exp.Expr, unit: str) -> exp.Expr:
    if unit not in MONTHS_PER_UNIT and unit not in MICROSECONDS_PER_UNIT:
        raise TranspileError(f"the interval unit {unit} is not supported")
    return call("MYSQL_DATE_ADD", value, amount, exp.Literal.string(unit))


def _is_true(value: exp.Expr) -> exp.Expr:
    return exp.Paren(this=exp.NEQ(this=exp.Paren(this=value), expression=exp.Literal.number(0)))


def _now() -> exp.Expr:
    return call("DATETIME", exp.Literal.string("now"), exp.Literal.string("localtime"))


def call(name: str, *arguments: exp.Expr) -> exp.Anonymous:
    """A call of the SQL function `name` (one of SQLite's, or one `functions.install_functions` registers)."""
    return exp.Anonymous(this=name, expressions=list(arguments))


def _integer(value: exp.Expr) -> exp.Cast:
    return exp.Cast(this=value, to=_INTEGER_TYPE.copy())


# What SQLite must compute for a node of each of these types (the node itself when SQLite's generator
# already says it); nodes of any other type stay as they are. Each function takes a node of its key's
# type, which the type of a dict cannot say: hence Any.
_REWRITES: dict[type[exp.Expr], Callable[[Any], exp.Expr]] = {
    **dict.fromkeys(DATE_PART_NODES, lambda node: _date_part(DATE_PART_NODES[type(node)], node.this)),
    exp.Extract: _extract,
    exp.CurrentDate: lambda _: call("DATE", exp.Literal.string("now"), exp.Literal.string("localtime")),
    exp.CurrentTimestamp: lambda _: _now(),
    exp.CurrentTime: lambda _: call("TIME", exp.Literal.string("now"), exp.Literal.string("localtime")),
    exp.DateDiff: _date_diff,
    exp.TimestampDiff: lambda node: call(
        "MYSQL_TIMESTAMPDIFF", exp.Literal.string(_unit(node)), node.expression, node.this
    ),
    exp.DateAdd: lambda node: _date_add(node.this, node.expression, _unit(node)),
    exp.DateSub: lambda node: _date_add(node.this, exp.Neg(this=node.expression), _unit(node)),
    exp.Add: _add,
    exp.Sub: _sub,
    exp.Week: lambda node: call("MYSQL_WEEK", node.this, node.args.get("mode") or exp.Literal.number(0)),
    exp.WeekOfYear: lambda node: call("MYSQL_WEEK", node.this, exp.Literal.number(3)),
    exp.LastDay: lambda node: call(
        "DATE", node.this, *map(exp.Literal.string, ("start of month", "+1 month", "-1 day"))
    ),
    exp.Left: lambda node: call("SUBSTR", node.this, exp.Literal.number(1), node.expression),
    exp.Right: _right,
    exp.Like: _like,
    exp.StrToDate: lambda node: call("MYSQL_STR_TO_DATE", node.this, _mysql_format(node)),
    exp.StrToTime: lambda node: call("MYSQL_STR_TO_DATE", node.this, _mysql_format(node)),
    exp.TimeToStr: _date_format,
    exp.Dayname: lambda node: call("MYSQL_DATE_FORMAT", node.this, exp.Literal.string("%W")),
    exp.TsOrDsToDate: lambda node: call("MYSQL_DATE", node.this),
    exp.StrPosition: _str_position,
    exp.Length: _length,
    exp.SubstringIndex: lambda node: call(
        "MYSQL_SUBSTRING_INDEX", node.this, node.args["delimiter"], node.args["count"]
    ),
    exp.GroupConcat: _group_concat,
    # ANY_VALUE is no aggregate (sqlglot writes MAX): its argument as a bare column, any row's value.
    exp.AnyValue: lambda node: node.this,
    exp.From: _from,
    exp.MatchAgainst: _match_against,
    exp.Cast: _cast,
    exp.Trunc: lambda node: call(
        "MYSQL_TRUNCATE", node.this, node.args.get("decimals") or exp.Literal.number(0)
    ),
    exp.ConcatWs: lambda node: call("MYSQL_CONCAT_WS", *node.expressions),
    exp.Xor: lambda node: exp.Paren(
        this=exp.NEQ(this=_is_true(node.this), expression=_is_true(node.expression))
    ),
    exp.Anonymous: _anonymous,
    exp.Introducer: lambda node: _introduced(node),
}


def _introduced(node: exp.Introducer) -> exp.Expr:
    """A string given a character set (`_utf8mb4' '`, as MySQL writes views; `_latin1 0x41`): the string
    itself, its hexadecimal form read as text; `_binary` keeps it as written, bytes or text."""
    value: exp.Expr = node.expression
    if node.name.lower() != "_binary" and isinstance(value, exp.HexString):
        return exp.Literal.string(
            bytes.fromhex(value.name.zfill(len(value.name) + len(value.name) % 2)).decode("utf-8", "replace")
        )
    return value


def _unit(node: exp.Expr, key: str = "unit") -> str:
    return node.text(key).upper().removeprefix("SQL_TSI_")


def _interval_operands(node: exp.Add) -> tuple[exp.Interval | None, exp.Expr]:
    if isinstance(node.expression, exp.Interval):
        return node.expression, node.this
    if isinstance(node.this, exp.Interval):
        return node.this, node.expression
    return None, node.this
