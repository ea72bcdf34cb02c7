"""Integer arithmetic keeps MySQL 8.0's types: unsigned when an operand is, and error 1690 out of range.

The rules, from the MySQL 8.0 Reference Manual: "Arithmetic Operators" (`+`, `-`, `*` of two integers are
BIGINT arithmetic, unsigned when an operand is unsigned; NO_UNSIGNED_SUBTRACTION, which would make a
subtraction signed, is not in the default sql_mode, "Server SQL Modes"), "Out-of-Range and Overflow
Handling" (a result out of the BIGINT or BIGINT UNSIGNED range is ERROR 1690; the examples below are its
own) and "Cast Functions and Operators" (CAST(... AS UNSIGNED) is an unsigned integer). Whether a query
fails depends on its data, so the error is raised while it runs: a function the transpiler calls raises it
with MySQL's message, which quotes the expression, never a value.
"""

from __future__ import annotations

import sqlite3

import pytest

from evaluation.scoring.dialect import read_schema, to_sqlite
from evaluation.scoring.functions import raised_error
from tests.evaluation.mysql_copy import connected_copy

DUMP = """
CREATE TABLE libri (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  pagine SMALLINT UNSIGNED NOT NULL,
  copie INT NOT NULL,
  prezzo DECIMAL(6,2) NOT NULL,
  uscita YEAR NOT NULL
);
INSERT INTO libri (pagine, copie, prezzo, uscita) VALUES (120, 3, 9.50, 1999), (480, 10, 22.00, 2021);
"""


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    return connected_copy(DUMP, tmp_path_factory.mktemp("unsigned") / "libri.sqlite3")


def answer(conn: sqlite3.Connection, mysql: str) -> list[tuple] | str:
    """The rows of a MySQL query on the copy, or the message of the MySQL error it raises as it runs."""
    sql = to_sqlite(mysql, schema=read_schema(conn))
    raised_error()
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        message = raised_error()
        assert message is not None, "the query failed, but not with an error of MySQL's"
        return message


def out_of_range(kind: str, expression: str) -> str:
    return f"ERROR 1690 (22003): {kind} value is out of range in '{expression}'"


def test_the_copy_declares_which_integer_columns_are_unsigned(conn: sqlite3.Connection) -> None:
    assert read_schema(conn)["libri"] == {
        "id": "INTEGER UNSIGNED",
        "pagine": "INTEGER UNSIGNED",
        "copie": "INTEGER",
        "prezzo": "DECIMAL(6,2)",
        "uscita": "INTEGER UNSIGNED",  # MySQL's YEAR is unsigned
    }


# --- The manual's examples ("Out-of-Range and Overflow Handling", "Cast Functions and Operators") ---


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("9223372036854775807 + 1", out_of_range("BIGINT", "(9223372036854775807 + 1)")),
        (
            "CAST(9223372036854775807 AS UNSIGNED) + 1",
            [(float(2**63),)],
        ),  # a REAL: SQLite's integers are signed
        ("CAST(0 AS UNSIGNED) - 1", out_of_range("BIGINT UNSIGNED", "(CAST(0 AS UNSIGNED) - 1)")),
        ("CAST(1 AS UNSIGNED) - 2.0", [(-1.0,)]),  # a DECIMAL operand: DECIMAL arithmetic, no range
        ("1 - 2", [(-1,)]),
        ("CAST(1 - 2 AS UNSIGNED)", [(float(2**64 - 1),)]),
    ],
)
def test_the_manuals_examples(conn: sqlite3.Connection, expression: str, expected: object) -> None:
    assert answer(conn, f"SELECT {expression} FROM libri LIMIT 1") == expected


# --- What is unsigned ---


@pytest.mark.parametrize(
    ("expression", "quoted"),
    [
        ("pagine - 300", "(pagine - 300)"),  # an UNSIGNED column
        ("pagine * -1", "(pagine * -1)"),
        ("pagine + (-500)", "(pagine + (-500))"),
        ("id - copie", "(id - copie)"),  # either operand
        ("pagine DIV -1", "(pagine DIV -1)"),
        ("uscita - 3000", "(uscita - 3000)"),  # YEAR
        ("MAX(pagine) - 1000", "(MAX(pagine) - 1000)"),  # MIN, MAX, ABS, ROUND, FLOOR keep the type
        ("ABS(pagine) - 1000", "(ABS(pagine) - 1000)"),
        ("FLOOR(pagine) - 1000", "(FLOOR(pagine) - 1000)"),
        ("(pagine & 1) - 5", "((pagine & 1) - 5)"),  # the bit operators give BIGINT UNSIGNED
        ("0x01 - 2", "(x'01' - 2)"),  # so does a hexadecimal literal, as a number
        ("COUNT(*) - pagine - 500", "(COUNT(*) - pagine)"),  # a signed left operand: unsigned all the same
    ],
)
def test_an_unsigned_operand_makes_a_negative_result_error_1690(
    conn: sqlite3.Connection, expression: str, quoted: str
) -> None:
    assert answer(conn, f"SELECT {expression} FROM libri") == out_of_range("BIGINT UNSIGNED", quoted)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("pagine - 100", [(20,), (380,)]),  # in range: no error, whatever the type
        ("pagine - 300.0", [(-180.0,), (180.0,)]),  # DECIMAL arithmetic
        ("pagine - 3e2", [(-180.0,), (180.0,)]),  # DOUBLE arithmetic
        ("pagine - prezzo", [(110.5,), (458.0,)]),
        ("-pagine", [(-120,), (-480,)]),  # a negation is signed
        ("copie - 100", [(-97,), (-90,)]),  # signed operands
        ("pagine % -7", [(1,), (4,)]),  # MOD cannot leave the range
        ("CAST(pagine AS SIGNED) - 300", [(-180,), (180,)]),
        ("SUM(pagine) - 1000", [(-400,)]),  # SUM of integers is a DECIMAL
        ("pagine - NULL", [(None,), (None,)]),
    ],
)
def test_what_is_not_unsigned_or_stays_in_range_computes(
    conn: sqlite3.Connection, expression: str, expected: list[tuple]
) -> None:
    assert answer(conn, f"SELECT {expression} FROM libri ORDER BY id") == expected


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id FROM libri WHERE pagine - 300 > 0",
        "SELECT id FROM libri ORDER BY pagine - 300",
        "SELECT pagine FROM libri GROUP BY pagine HAVING pagine - 300 > 0",
        "SELECT x FROM (SELECT pagine - 300 AS x FROM libri) AS t",
        "SELECT x - 300 FROM (SELECT pagine AS x FROM libri) AS t",  # a derived table's column keeps its type
        "SELECT CAST(COUNT(*) AS UNSIGNED) - CAST(20 AS UNSIGNED) + 20 FROM libri",
    ],
)
def test_the_error_comes_wherever_the_expression_is_computed(conn: sqlite3.Connection, query: str) -> None:
    assert str(answer(conn, query)).startswith("ERROR 1690 (22003): BIGINT UNSIGNED value is out of range")


def test_whether_it_fails_depends_on_the_data(conn: sqlite3.Connection) -> None:
    query = "SELECT CAST(COUNT(*) AS UNSIGNED) - CAST({} AS UNSIGNED) + {} FROM libri"
    assert answer(conn, query.format(2, 2)) == [(2,)]
    assert answer(conn, query.format(3, 3)).startswith("ERROR 1690")  # type: ignore[union-attr]


def test_rows_filtered_out_first_are_not_computed(conn: sqlite3.Connection) -> None:
    assert answer(conn, "SELECT pagine - 300 FROM libri WHERE pagine > 300") == [(180,)]


def test_the_error_is_one_of_the_query_as_it_runs_not_of_its_text(conn: sqlite3.Connection) -> None:
    sql = to_sqlite("SELECT pagine - 300 FROM libri", schema=read_schema(conn))
    conn.execute(f"EXPLAIN {sql}").fetchall()  # compiling it, as the sandbox does, raises nothing


# --- CAST(... AS SIGNED | UNSIGNED): "Cast Functions and Operators" ---


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("CAST(12.5 AS SIGNED)", 13),  # a DECIMAL rounds half away from zero
        ("CAST(-12.5 AS SIGNED)", -13),
        ("CAST(2.5e0 AS SIGNED)", 2),  # a DOUBLE rounds half to even
        ("CAST(3.5e0 AS SIGNED)", 4),
        ("CAST('12.7' AS UNSIGNED)", 12),  # a string: its leading integer
        ("CAST('  -3abc' AS SIGNED)", -3),
        ("CAST('abc' AS SIGNED)", 0),
        ("CAST(prezzo AS UNSIGNED)", 10),  # 9.50, a DECIMAL column
        ("CAST(NULL AS UNSIGNED)", None),
        ("CAST(DATE('2024-02-29') AS SIGNED)", 20240229),  # a date: its number
    ],
)
def test_cast_to_an_integer_rounds_and_reads_as_mysql_does(
    conn: sqlite3.Connection, expression: str, expected: object
) -> None:
    assert answer(conn, f"SELECT {expression} FROM libri ORDER BY id LIMIT 1") == [(expected,)]
