"""MySQL's functions and collations in plain Python (evaluation/scoring/functions.py), through SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from evaluation.scoring.functions import general_weight, install_functions, uca_weight


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
