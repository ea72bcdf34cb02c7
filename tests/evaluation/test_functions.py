"""MySQL's functions and collations in plain Python (evaluation/scoring/functions.py), through SQLite."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

import pytest

from evaluation.scoring.collations import general_weight, uca_weight
from evaluation.scoring.dialect import to_sqlite
from evaluation.scoring.functions import install_functions


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    install_functions(connection)
    connection.execute(
        "CREATE TABLE t (u TEXT COLLATE utf8mb4_0900_ai_ci, g TEXT COLLATE utf8mb3_general_ci)"
    )
    connection.executemany(
        "INSERT INTO t VALUES (?, ?)",
        [("Ščukin", "Ščukin"), ("scukin", "scukin "), ("Zeta", "Zeta"), ("àbaco", "àbaco"), ("Abaco", "b")],
    )
    yield connection
    connection.close()


def one(conn: sqlite3.Connection, sql: str) -> object:
    return conn.execute(sql).fetchone()[0]


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [("Scukin", "Ščukin", True), ("ss", "ß", True), ("ae", "æ", True), ("a", "a ", False), ("a", "b", False)],
)
def test_utf8mb4_0900_ai_ci_ignores_case_and_accents_not_trailing_spaces(left, right, equal) -> None:
    assert (uca_weight(left) == uca_weight(right)) is equal


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ("Scukin", "Ščukin", True),
        ("s", "ß", True),
        ("a", "a  ", True),
        ("caffe", "CAFFÈ", True),
        ("a", "b", False),
    ],
)
def test_utf8mb3_general_ci_ignores_case_accents_and_trailing_spaces(left, right, equal) -> None:
    assert (general_weight(left) == general_weight(right)) is equal


def test_grouping_distinct_order_and_min_max_follow_the_collation(conn: sqlite3.Connection) -> None:
    assert one(conn, "SELECT COUNT(DISTINCT u) FROM t") == 3
    assert [r[0] for r in conn.execute("SELECT u FROM t ORDER BY u, rowid")] == [
        "àbaco",
        "Abaco",
        "Ščukin",
        "scukin",
        "Zeta",
    ]
    assert one(conn, "SELECT MAX(u) FROM t") == "Zeta"
    assert one(conn, "SELECT COUNT(*) FROM (SELECT g FROM t GROUP BY g)") == 4
    assert one(conn, "SELECT COUNT(*) FROM t WHERE g = 'SCUKIN'") == 2


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT 'Universita' LIKE 'Università'", 1),
        ("SELECT 'Università' LIKE 'UNIV_RSIT_'", 1),
        ("SELECT 'ß' LIKE '_'", 1),
        ("SELECT 'a ' LIKE 'a'", 0),
        ("SELECT 'a%b' LIKE 'a!%b' ESCAPE '!'", 1),
        ("SELECT 'axb' LIKE 'a!%b' ESCAPE '!'", 0),
        ("SELECT 'a_b' LIKE 'a\\_b' ESCAPE '\\'", 1),
        ("SELECT 'a\\b' LIKE 'a\\b'", 1),  # without ESCAPE, SQLite's meaning: no escape character
        ("SELECT 12 LIKE '1%'", 1),
        ("SELECT NULL LIKE 'a'", None),
        ("SELECT 'a' NOT LIKE 'A'", 0),
        ("SELECT 'line\nbreak' LIKE 'line%'", 1),
    ],
)
def test_like_follows_utf8mb4_0900_ai_ci(conn: sqlite3.Connection, sql: str, expected: object) -> None:
    assert one(conn, sql) == expected


@pytest.mark.parametrize(
    ("value", "pattern", "expected"),
    [
        ("abcabc", "%b%c", 1),
        ("abcabc", "a%c%b", 0),
        ("abc", "%%%", 1),
        ("", "%", 1),
        ("ab", "a%b%", 1),
        ("aXbYc", "a_b%c", 1),
        ("ab", "a__", 0),
        ("abcd", "%bc%d", 1),
        ("aaa", "a%aa", 1),
        ("aa", "a%aa", 0),
    ],
)
def test_like_wildcards(conn: sqlite3.Connection, value: str, pattern: str, expected: int) -> None:
    assert conn.execute("SELECT ? LIKE ?", (value, pattern)).fetchone()[0] == expected


def test_a_pathological_like_pattern_takes_no_backtracking(conn: sqlite3.Connection) -> None:
    pattern = "%a" * 400 + "%b"
    assert conn.execute("SELECT ? LIKE ?", ("a" * 100_000, pattern)).fetchone()[0] == 0


def test_a_like_pattern_over_the_limit_is_too_big(conn: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.DataError, match="too big"):
        conn.execute("SELECT 'a' LIKE ?", ("%a" * 600,)).fetchone()


# --- MySQL functions, through the transpiler ---

SCHEMA = {"t": {"x": "TEXT", "y": "INTEGER", "d": "DATE", "k": "DECIMAL(5,2)"}}


@pytest.fixture
def table(conn: sqlite3.Connection) -> sqlite3.Connection:
    conn.execute("CREATE TABLE tt (x TEXT COLLATE utf8mb4_0900_ai_ci, y INTEGER, d DATE, k DECIMAL(5,2))")
    conn.executemany(
        "INSERT INTO tt VALUES (?, ?, ?, ?)",
        [
            ("b", 2, "2024-06-01", 1.5),
            ("A", 1, "1985-03-04", 2),
            ("a", 3, None, 0.25),
            (None, 4, "2024-01-31", None),
        ],
    )
    return conn


def mysql(conn: sqlite3.Connection, sql: str) -> list[tuple]:
    sql = re.sub(r"\bFROM t\b", "FROM tt", sql)
    return conn.execute(to_sqlite(sql, schema={"tt": SCHEMA["t"]})).fetchall()


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT STR_TO_DATE('01/02/2024', '%d/%m/%Y')", "2024-02-01"),
        ("SELECT STR_TO_DATE('March 5, 2024', '%M %e, %Y')", "2024-03-05"),
        ("SELECT STR_TO_DATE('10:05 PM', '%h:%i %p')", "22:05:00"),
        ("SELECT STR_TO_DATE('2024-3-5 7:08:09', '%Y-%m-%d %H:%i:%s')", "2024-03-05 07:08:09"),
        ("SELECT STR_TO_DATE('01/02/2024abc', '%d/%m/%Y')", "2024-02-01"),
        ("SELECT STR_TO_DATE('31/02/2024', '%d/%m/%Y')", None),  # MySQL 8.0: invalid date
        ("SELECT STR_TO_DATE('2024', '%Y')", None),  # MySQL 8.0: NO_ZERO_IN_DATE
        ("SELECT STR_TO_DATE('x', '%d')", None),
        ("SELECT PERIOD_DIFF(202402, 202312)", 2),
        ("SELECT PERIOD_DIFF(2402, 9912)", 290),
        ("SELECT STRCMP('a', 'A')", 0),
        ("SELECT STRCMP('è', 'f')", -1),
        ("SELECT STRCMP('b', NULL)", None),
        ("SELECT SUBSTRING_INDEX('a.B.c', '.', -2)", "B.c"),
        ("SELECT SUBSTRING_INDEX('aXbxc', 'x', 1)", "aXb"),
        ("SELECT SUBSTRING_INDEX('a.b', '.', 0)", ""),
        ("SELECT FIELD('B', 'a', 'b')", 2),
        ("SELECT FIELD(NULL, 'a')", 0),
        ("SELECT FIELD(2, '1', '2')", 2),
        ("SELECT MONTHNAME('2024-06-01'), DAYNAME('2024-06-01')", ("June", "Saturday")),
        (
            "SELECT DATE_FORMAT('2024-06-01 13:05:09', '%D %b %a %j %l %r %w %y %k')",
            "1st Jun Sat 153 1 01:05:09 PM 6 24 13",
        ),
        (
            "SELECT LOCATE('B', 'abcb'), LOCATE('b', 'abcb', 3), LOCATE('', 'abc', 2), LOCATE('', 'abc', 5)",
            (2, 4, 2, 0),
        ),
        ("SELECT INSTR('Università', 'A'), POSITION('T' IN 'Città')", (10, 3)),
        ("SELECT LENGTH('è'), CHAR_LENGTH('è'), OCTET_LENGTH('ab'), LENGTH(NULL)", (2, 1, 2, None)),
        (
            "SELECT DATE('2024-02-30'), DATE('2024-6-1'), DATE('2024-06-01 10:00:00')",
            (None, "2024-06-01", "2024-06-01"),
        ),
        ("SELECT 1 FROM DUAL", 1),
        ("SELECT 1/3*3, ROUND(1/3, 6), 1/3, (1/3)+(1/3)", (1.0, 0.333333, 0.3333, 0.6667)),
    ],
)
def test_mysql_functions(conn: sqlite3.Connection, sql: str, expected: object) -> None:
    row = mysql(conn, sql)[0]
    assert (row if isinstance(expected, tuple) else row[0]) == expected


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT GROUP_CONCAT(x ORDER BY x DESC SEPARATOR '; ') FROM t", "b; A; a"),
        ("SELECT GROUP_CONCAT(DISTINCT x) FROM t", "b,A"),
        ("SELECT GROUP_CONCAT(DISTINCT x ORDER BY y SEPARATOR '|') FROM t", "A|b"),
        ("SELECT GROUP_CONCAT(y ORDER BY x, y DESC) FROM t", "4,3,1,2"),
        ("SELECT GROUP_CONCAT(x, '-', y ORDER BY y) FROM t", "A-1,b-2,a-3"),
        ("SELECT GROUP_CONCAT(x) FROM t WHERE y > 9", None),
        ("SELECT MONTHNAME(d) FROM t WHERE y = 2", "June"),
        ("SELECT COUNT(*) FROM t WHERE d >= 19900101", 2),
        ("SELECT COUNT(*) FROM t WHERE 19900101 > d", 1),
        ("SELECT COUNT(*) FROM t WHERE DATE(d) = '2024-6-1'", 1),
        ("SELECT COUNT(*) FROM t WHERE x LIKE 'À'", 2),
    ],
)
def test_mysql_functions_over_a_table(table: sqlite3.Connection, sql: str, expected: object) -> None:
    assert mysql(table, sql)[0][0] == expected


def test_group_concat_is_cut_at_mysql_8_group_concat_max_len(table: sqlite3.Connection) -> None:
    table.executemany("INSERT INTO tt (x, y) VALUES (?, 9)", [("è" * 100,)] * 20)
    (result,) = mysql(table, "SELECT GROUP_CONCAT(x) FROM t WHERE y = 9")[0]
    assert 1020 < len(result.encode()) <= 1024  # cut between characters
