"""MySQL 8.0's default sql_mode, member by member, as far as a SELECT meets it.

The default (MySQL 8.0 Reference Manual, "Server SQL Modes") is ONLY_FULL_GROUP_BY, STRICT_TRANS_TABLES,
NO_ZERO_IN_DATE, NO_ZERO_DATE, ERROR_FOR_DIVISION_BY_ZERO and NO_ENGINE_SUBSTITUTION. What each does to a
query that only reads, and so what the scorer imitates on the copies (ONLY_FULL_GROUP_BY has its own
tests):

- STRICT_TRANS_TABLES ("Strict SQL Mode"): it "controls how MySQL handles invalid or missing values in
  data-change statements"; "for statements such as SELECT that do not change data, invalid values
  generate a warning in strict mode, not an error". A SELECT reads '12abc' as 12, as without it.
- ERROR_FOR_DIVISION_BY_ZERO: "for SELECT, division by zero returns NULL" (with a warning); errors only
  in INSERT and UPDATE. `/`, DIV, `%` and MOD by zero are NULL.
- NO_ZERO_DATE and NO_ZERO_IN_DATE: with them MySQL does not take '0000-00-00', nor a date with a zero
  month or day, as a date. A SELECT meets them where it reads a string as a date: the manual's examples
  give NULL for TO_DAYS('0000-00-00') ("Date and Time Functions") and for STR_TO_DATE of a zero date or
  a date with a zero part; CAST(... AS DATE), DATE() and the date functions read their argument the same
  way, so they give NULL too. MariaDB's default sql_mode has neither: it returns '0000-00-00'.
- NO_ENGINE_SUBSTITUTION: it decides which storage engine CREATE TABLE and ALTER TABLE use; a query never
  meets it, and the sandbox refuses every statement that is not one.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from evaluation.scoring.dialect import TranspileError, to_sqlite
from evaluation.scoring.functions import install_functions
from evaluation.scoring.mysql_dump import build_sqlite
from evaluation.scoring.sandbox import Limits, Sandbox
from tests.evaluation.mysql_copy import rows

DUMP = """
CREATE TABLE soci (id INT PRIMARY KEY, tessera VARCHAR(8), nato DATE, quota INT UNSIGNED);
INSERT INTO soci VALUES (1, '12abc', '1990-04-12', 20), (2, '7', '2002-11-03', 0);
"""


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sql_mode") / "soci.sqlite3"
    build_sqlite(DUMP, path)
    return path


@pytest.fixture(scope="module")
def conn(copy: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(copy)
    install_functions(connection)
    return connection


def test_strict_trans_tables_leaves_a_select_reading_an_invalid_value_with_a_warning(conn) -> None:
    assert rows(conn, "SELECT tessera + 1, CAST(tessera AS SIGNED) FROM soci ORDER BY id") == [
        (13, 12),
        (8, 7),
    ]
    assert rows(conn, "SELECT id FROM soci WHERE tessera = 12") == [(1,)]


@pytest.mark.parametrize(
    "expression",
    ["1 / 0", "quota / 0", "1 DIV 0", "quota DIV 0", "1 % 0", "MOD(quota, 0)", "1.5 / 0", "1e0 / 0"],
)
def test_error_for_division_by_zero_gives_null_in_a_select(conn, expression: str) -> None:
    assert rows(conn, f"SELECT {expression} FROM soci") == [(None,), (None,)]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("TO_DAYS('0000-00-00')", None),  # the manual's example
        ("STR_TO_DATE('00/00/0000', '%d/%m/%Y')", None),
        ("CAST('0000-00-00' AS DATE)", None),
        ("CAST('0000-00-00 00:00:00' AS DATETIME)", None),
        ("DATE('0000-00-00')", None),
        ("CAST('2024-01-01' AS DATE)", "2024-01-01"),
    ],
)
def test_no_zero_date_makes_the_zero_date_no_date(conn, expression: str, expected: object) -> None:
    assert rows(conn, f"SELECT {expression} FROM soci LIMIT 1") == [(expected,)]


@pytest.mark.parametrize(
    "expression",
    [
        "STR_TO_DATE('00/01/2024', '%d/%m/%Y')",  # the manual's rule for STR_TO_DATE
        "STR_TO_DATE('2024', '%Y')",
        "CAST('2024-00-10' AS DATE)",
        "DATE('2024-01-00')",
        "TO_DAYS('2024-00-10')",
        "YEAR('2024-00-10')",
        "DATEDIFF('2024-00-10', '2024-01-01')",
    ],
)
def test_no_zero_in_date_makes_a_date_with_a_zero_part_no_date(conn, expression: str) -> None:
    assert rows(conn, f"SELECT {expression} FROM soci LIMIT 1") == [(None,)]


def test_an_invalid_date_is_no_date_whatever_the_mode(conn) -> None:
    assert rows(
        conn, "SELECT CAST('2024-02-30' AS DATE), CAST('2024-02-30 10:00' AS DATETIME) FROM soci"
    ) == [
        (None, None),
        (None, None),
    ]


def test_a_date_column_compared_with_the_zero_date_still_compares(conn) -> None:
    # The literal is read with a warning, as strict mode does in a SELECT: every real date is after it.
    assert rows(conn, "SELECT COUNT(*) FROM soci WHERE nato > '0000-00-00' AND nato <> '0000-00-00'") == [
        (2,)
    ]


def test_no_engine_substitution_is_never_met_a_statement_that_could_is_refused(copy: Path) -> None:
    with pytest.raises(TranspileError):
        to_sqlite("CREATE TABLE copia (id INT) ENGINE=MyISAM")
    statement = to_sqlite("CREATE TABLE copia (id INT)")
    with Sandbox(Limits(query_seconds=1, kill_grace_seconds=0.5)) as sandbox:
        execution = sandbox.execute(copy, statement)
    assert (execution.outcome, execution.error) == (
        "runtime_error",
        "not allowed: only queries that read may run",
    )
