"""Queries written for MySQL, run on the SQLite copies with the meaning MySQL gives them.

Gold queries (and most predictions) are written for MySQL/MariaDB, while scoring runs on SQLite copies of
the databases built by `mysql_dump`. `to_sqlite` rewrites one query so that SQLite returns what MariaDB
would, as far as the measurements on Termite showed it matters:

- MySQL functions SQLite lacks: YEAR/MONTH/DAY/HOUR/... and EXTRACT become `STRFTIME`; DATEDIFF compares
  date parts; TIMESTAMPDIFF, DATE_ADD/DATE_SUB/`± INTERVAL`, TRUNCATE, CONCAT_WS, REGEXP, the day numbers
  (TO_DAYS, FROM_DAYS, TO_SECONDS, MAKEDATE: MySQL's calendar, whose year 0 has 365 days) and the weeks
  (WEEK in its eight modes, YEARWEEK) call functions that `functions.install_functions` registers;
  CURDATE/NOW use local time; LEFT/RIGHT/MID become SUBSTR (`function_rewrites`).
- Types, when a schema is given (`read_schema`): a text column compared with a number is compared as a
  number; a string compared with a DATE/DATETIME/TIME column is read as MySQL reads it ('2024-5-1' is
  2024-05-01); `/` and AVG of exact numbers are rounded to 4 more decimals (`div_precision_increment`);
  `+`, `-`, `*` and DIV of two integers are BIGINT arithmetic, unsigned when an operand is (an UNSIGNED
  column, which the copies declare `INTEGER UNSIGNED`, CAST(... AS UNSIGNED), ...), and a result out of
  range fails with MySQL's ERROR 1690 while the query runs, since the data decides; CAST(... AS SIGNED |
  UNSIGNED) rounds as MySQL does (`typed_rewrites`, with the types of `resolver`).
- ENUM and SET columns, whose MySQL type a copy keeps in its schema (`column_types`): their text where
  MySQL compares them with strings, their number where MySQL takes one (an ENUM's member's position, a
  SET's bits): ORDER BY (an ENUM sorts in its declared order), a comparison with a number, a bit operation,
  a CAST to a number, a condition, and arithmetic, SUM and AVG as a DOUBLE; FIND_IN_SET of a member in a
  SET column is the member's declared position (`typed_rewrites`), FIND_IN_SET of anything else a position
  in the list (`functions`). MATCH ... AGAINST is refused: full-text search has no SQLite equivalent.
- MySQL 8.0's default sql_mode, in a query: division by zero is NULL (ERROR_FOR_DIVISION_BY_ZERO and
  STRICT_TRANS_TABLES only warn in a SELECT); a zero date, or one with a zero month or day, read from a
  string is no date (NO_ZERO_DATE, NO_ZERO_IN_DATE): CAST(... AS DATE), DATE(), STR_TO_DATE and the date
  functions give NULL; NO_ENGINE_SUBSTITUTION concerns CREATE and ALTER TABLE only.
- Text compares as MySQL 8.0's collations do (`collations`): text columns of the copies carry their
  column's collation, else their character set's default, `utf8mb4_0900_ai_ci` (case and accents
  ignored, trailing spaces kept) or `utf8mb3_general_ci` (trailing spaces ignored too) (`mysql_dump`); a
  string literal compared with an expression gets `COLLATE utf8mb4_0900_ai_ci` here, unless the query
  names a collation; `expr COLLATE name` takes every utf8mb4 and utf8mb3 collation of MySQL 8.0, and
  refuses, as MySQL does, an unknown one (error 1273) or one of another character set than the text's
  (error 1253) (`typed_rewrites`); LIKE, replaced by `functions`' `like`, ignores case and accents, and
  gets MySQL's escape character, the backslash (`function_rewrites`).
- A quoted string used as a table name (`FROM 'ordini'`) is rejected, as MySQL rejects it (`survey`).

The target is MySQL 8.0, the engine the benchmark was written for. Where MariaDB 10.11 (the reference
engine of `reference.py`, which can run here) answers otherwise, MySQL 8.0 is followed; the differences
found:

- utf8mb4's default collation: MySQL 8.0's utf8mb4_0900_ai_ci is NO PAD ('a' <> 'a '), MariaDB's
  utf8mb4_general_ci PAD SPACE; the UCA equates 'ss' with 'ß' and 'ae' with 'æ', general_ci does not
  ('s' = 'ß'); they order punctuation differently ('a_' < 'ab' under the UCA, not under general_ci).
  MariaDB's utf8mb4_unicode_520_nopad_ci comes closest. MariaDB 10.11 knows no utf8mb4_0900_* collation.
- Zero dates: MySQL 8.0's default sql_mode (NO_ZERO_IN_DATE, NO_ZERO_DATE) makes a date with a zero part
  ('2024-00-10'), the zero date, or an invalid one ('31/02/2024') NULL in STR_TO_DATE, CAST and DATE();
  MariaDB, without those modes, returns '2024-00-00', '0000-00-00' and, from STR_TO_DATE, '2024-02-31'.
- GROUP_CONCAT: group_concat_max_len is 1024 bytes by default in MySQL 8.0, 1 MB in MariaDB.
- An ENUM or SET in arithmetic: MySQL 8.0 takes it as a DOUBLE, as any string column (`stato / 3` is
  0.666...), MariaDB as an integer (0.6667, a DECIMAL).
- sql_mode: MySQL 8.0 enables ONLY_FULL_GROUP_BY, with its detection of functional dependence; MariaDB's
  default sql_mode lacks it, and MariaDB's own has no such detection (it refuses 29 of Termite's gold
  queries, which MySQL 8.0 accepts). A prediction is held to MySQL 8.0's rule (`full_group_by`, given the
  database's `keys`): what it refuses is a syntax error with MySQL's message, before anything runs.

The query is read by `statements.parse_one`, and the tree that results is written by sqlglot's own
SQLite generator.

Not emulated: an ENUM or SET is its text, not its number, as the argument of a function (ABS, IF, ...) and
when read through a view (a view's schema keeps no members); FIND_IN_SET of a constant expression other than
a literal in a SET column is its place in the value, MySQL's the member's declared position, and compares
under utf8mb4_0900_ai_ci whatever the list's collation; LIKE follows utf8mb4_0900_ai_ci whatever the
column's collation (a _bin column's LIKE ignores case here); an expression built from a utf8mb3 column
compares under utf8mb4_0900_ai_ci (NO PAD); the collations approximate the UCA's order of punctuation and
apply no language's tailoring (`collations`); two sides of a comparison under different explicit collations
are no error (MySQL's 1267) here, the left one wins; arithmetic on an expression whose type is not worked
out (IFNULL, CASE, GREATEST, a column of no schema) is SQLite's, no range checked; an unsigned value of 2^63
or more is a REAL here (SQLite's integers are signed), exact to 2^53; where MySQL stops evaluating (AND, OR)
or evaluates rows in another order, ERROR 1690 may come where MySQL's does not, or the reverse.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping

import sqlglot

from evaluation.scoring.column_types import read_schema
from evaluation.scoring.conformance import NotConformant, conformance_error, mysql_conformance_error
from evaluation.scoring.full_group_by import Keys, NotFullGroupBy, full_group_by_refusal
from evaluation.scoring.function_rewrites import with_sqlite_functions
from evaluation.scoring.query_shape import QueryTooComplex, check_shape
from evaluation.scoring.resolver import ColumnResolver, TypeMap
from evaluation.scoring.sqltypes import type_of_declared
from evaluation.scoring.statements import (
    SQLGLOT_DIALECTS,
    Statement,
    TranspileError,
    check_source,
    first_line,
    parse_statement,
    read_statement,
    single_statement,
)
from evaluation.scoring.survey import ReadsNoTable, survey, tree_is_hard_coded
from evaluation.scoring.typed_rewrites import rewrite_by_types

__all__ = [
    "FrozenSchema",
    "NotConformant",
    "NotFullGroupBy",
    "QueryTooComplex",
    "ReadsNoTable",
    "TranspileError",
    "freeze_schema",
    "read_schema",
    "to_sqlite",
]

logger = logging.getLogger(__name__)

# A schema as `_to_sqlite`'s cache can hold it: (table, ((column, declared type), ...)), sorted.
FrozenSchema = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


def freeze_schema(schema: Mapping[str, Mapping[str, str]]) -> FrozenSchema:
    """`schema` as `to_sqlite` keys its cache by: a caller that transpiles many queries of one database
    passes this, worked out once, rather than the mapping, sorted again at each call."""
    return tuple(sorted((table, tuple(sorted(columns.items()))) for table, columns in schema.items()))


def to_sqlite(
    sql: str,
    *,
    source: str = "mysql",
    schema: Mapping[str, Mapping[str, str]] | FrozenSchema | None = None,
    keys: Keys | None = None,
    check_conformance: bool = False,
) -> str:
    """One query, written for `source` ("mysql" or "sqlite"), as SQLite that keeps MySQL's meaning.

    `schema` is table -> column -> declared type (see `read_schema`), or its `freeze_schema`; without it, the rules that depend on
    column types are skipped. A "sqlite" query is only checked to be a single statement that does not
    nest too deeply. Whatever the text, raises nothing but TranspileError (QueryTooComplex when the query
    is too deep or too costly to translate). MySQL results are cached: transpiling costs more than
    running a query on these databases.

    With `check_conformance` (a prediction's case), a query that reads no table raises ReadsNoTable (its
    result is the same on every database: a hard-coded answer; a statement that is no query is left to the
    sandbox), and a query not written in `source` raises NotConformant, a TranspileError whose message is
    `conformance.conformance_error`'s, with the same precedence as calling that first: a SQLite text is
    scanned before anything else; a MySQL text's empty, multiple, too deep or unreadable statement is the
    transpiler's error, any other non-conformance comes before the rewrites. The MySQL check reads the
    tree parsed here, before it is rewritten: one parse. With `keys` too (`full_group_by.read_keys`), a
    MySQL query that ONLY_FULL_GROUP_BY refuses raises NotFullGroupBy, a NotConformant with MySQL's error;
    without them that check is skipped.
    """
    if check_conformance and check_source(source) == "sqlite":
        problem = conformance_error(sql, dialect="sqlite")
        if problem is not None:
            raise NotConformant(problem)
    statement = single_statement(sql, source)
    check_shape(statement.text, source=source, translating=source == "mysql")
    if source == "sqlite":
        if check_conformance and _sqlite_hard_coded(statement):
            raise ReadsNoTable()
        return statement.text
    frozen = schema if isinstance(schema, tuple) else freeze_schema(schema or {})
    try:
        return _to_sqlite(statement, source, frozen, keys if check_conformance else None, check_conformance)
    except TranspileError:
        raise
    except RecursionError:
        raise QueryTooComplex("the query nests too deeply to be translated") from None
    except MemoryError:
        raise QueryTooComplex("translating the query needs too much memory") from None
    except Exception as error:  # a bug of sqlglot or of this package must cost this one query only
        # Only the type: the message of an error may quote the query, and logs never hold gold.
        logger.warning("translating a query failed unexpectedly: %s", type(error).__name__)
        raise TranspileError("the query cannot be translated to SQLite") from None


@functools.lru_cache(maxsize=4096)
def _to_sqlite(
    statement: Statement, source: str, schema: FrozenSchema, keys: Keys | None, check_conformance: bool
) -> str:
    (tree, tokens), text = read_statement(statement, source=source), statement.text
    if check_conformance:  # the tree as written: the rewrites below change it in place
        problem = mysql_conformance_error(tree, tokens)
        if problem is not None:
            raise NotConformant(problem)
    found = survey(tree, text)
    if check_conformance and found.hard_coded:
        raise ReadsNoTable()
    if keys is not None:
        refusal = full_group_by_refusal(tree, keys)
        if refusal is not None:
            raise NotFullGroupBy(refusal.message)
    members = _has_enum_or_set(schema)
    if found.needs_types or members:
        rewrite_by_types(tree, ColumnResolver(_types(schema)), members=members)
    tree = with_sqlite_functions(tree, found.rewrites)
    try:
        return SQLGLOT_DIALECTS["sqlite"].generate(
            tree, copy=False, unsupported_level=sqlglot.ErrorLevel.RAISE
        )
    except sqlglot.errors.SqlglotError as error:
        raise TranspileError(f"cannot express the query in SQLite: {first_line(error)}") from None


@functools.lru_cache(maxsize=4096)
def _sqlite_hard_coded(statement: Statement) -> bool:
    try:
        return tree_is_hard_coded(parse_statement(statement, source="sqlite"))
    except TranspileError:
        return False  # SQLite itself reports what is wrong with it when it runs


@functools.lru_cache(maxsize=64)
def _has_enum_or_set(schema: FrozenSchema) -> bool:
    """Whether a schema has an ENUM or SET column, whose number some queries need (`typed_rewrites`)."""
    return any(
        sql_type is not None and bool(sql_type.members)
        for columns in _types(schema).values()
        for sql_type in columns.values()
    )


@functools.lru_cache(maxsize=64)
def _types(schema: FrozenSchema) -> TypeMap:
    """The column types of a schema, worked out once per schema rather than once per query."""
    return {
        table.lower(): {column.lower(): type_of_declared(declared) for column, declared in columns}
        for table, columns in schema
    }
