"""MySQL's day numbers and weeks (TO_DAYS, FROM_DAYS, TO_SECONDS, MAKEDATE, PERIOD_ADD, WEEK, YEARWEEK,
WEEKOFYEAR) on the copies, as the MySQL 8.0 Reference Manual's "Date and Time Functions" gives them.

sqlglot reads TO_DAYS(x) as DATEDIFF(x, '0000-01-01') + 1, which SQLite and Python cannot compute as
MySQL does: MySQL's year 0 has 365 days (TO_DAYS('0001-01-01') is 366), a date of year 0 is none to
Python, and SQLite's calendar makes year 0 a leap year. The expected values are the manual's examples
and what MariaDB 10.11, which shares MySQL's calendar code, returns.
"""

from __future__ import annotations

import sqlite3

import pytest

from tests.evaluation.mysql_copy import connected_copy, rows

DUMP = """
CREATE TABLE prestiti (
  id INT PRIMARY KEY, preso DATETIME NOT NULL, scadenza DATE NOT NULL, reso DATE
);
INSERT INTO prestiti VALUES
  (1, '2024-01-10 09:30:00', '2024-02-09', '2024-02-20'),
  (2, '2024-02-01 17:00:00', '2024-03-02', '2024-02-28'),
  (3, '2023-12-20 10:00:00', '2024-01-19', '2024-03-01'),
  (4, '2024-03-01 11:15:00', '2024-03-31', NULL);
"""


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    return connected_copy(DUMP, tmp_path_factory.mktemp("days") / "prestiti.sqlite3")


def value(conn: sqlite3.Connection, expression: str) -> object:
    return rows(conn, f"SELECT {expression} FROM prestiti LIMIT 1")[0][0]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("TO_DAYS(950501)", 728779),  # the manual's examples
        ("TO_DAYS('2007-10-07')", 733321),
        ("TO_DAYS('08-10-07')", 733687),
        ("TO_DAYS('0000-00-00')", None),  # NO_ZERO_DATE: no date
        ("TO_DAYS('0000-01-01')", 1),
        ("TO_SECONDS(950501)", 62966505600),
        ("TO_SECONDS('2009-11-29')", 63426672000),
        ("TO_SECONDS('2009-11-29 13:43:32')", 63426721412),
        ("TO_SECONDS('0000-01-01')", 86400),
        ("FROM_DAYS(730669)", "2000-07-03"),
        ("MAKEDATE(2011, 31)", "2011-01-31"),
        ("MAKEDATE(2011, 32)", "2011-02-01"),
        ("MAKEDATE(2011, 365)", "2011-12-31"),
        ("MAKEDATE(2014, 365)", "2014-12-31"),
        ("MAKEDATE(2011, 0)", None),
        ("PERIOD_ADD(200801, 2)", 200803),
        ("TO_DAYS('0000-03-01')", 60),  # year 0 is no leap year for MySQL
        ("TO_DAYS('0000-02-29')", None),
        ("TO_DAYS('0001-01-01')", 366),
        ("TO_DAYS('2024-02-29 23:59:59')", 739310),
        ("TO_DAYS('2024-00-10')", None),  # NO_ZERO_IN_DATE
        ("TO_DAYS('2024-02-30')", None),
        ("FROM_DAYS(TO_DAYS('0000-03-01'))", "0000-00-00"),  # before year 1: the zero date
        ("FROM_DAYS(3652424)", "9999-12-31"),
        ("FROM_DAYS(3652425)", "0000-00-00"),
        ("FROM_DAYS(739000.5)", "2023-04-26"),  # the argument rounds half away from zero
        ("MAKEDATE(11, 40)", "2011-02-09"),  # a year of two digits
        ("MAKEDATE(9999, 366)", None),
        ("PERIOD_ADD(0801, 13)", 200902),
    ],
)
def test_day_numbers_as_mysql_computes_them(
    conn: sqlite3.Connection, expression: str, expected: object
) -> None:
    assert value(conn, expression) == expected


# Dates around the turn of the year, and their week under each mode (MariaDB 10.11's answers).
WEEKS = {
    "2024-03-03": (9, 9, 9, 9, 10, 9, 10, 9, 202409, 202409, 9),
    "2024-01-01": (0, 1, 53, 1, 1, 1, 1, 1, 202353, 202401, 1),
    "2023-12-31": (53, 52, 53, 52, 53, 52, 1, 52, 202353, 202352, 52),
    "2021-01-03": (1, 0, 1, 53, 1, 0, 1, 52, 202101, 202053, 53),
    "2027-01-01": (0, 0, 52, 53, 0, 0, 52, 52, 202652, 202653, 53),
}


@pytest.mark.parametrize(("day", "expected"), WEEKS.items())
def test_week_yearweek_and_weekofyear_follow_each_week_mode(
    conn: sqlite3.Connection, day: str, expected: tuple[int, ...]
) -> None:
    weeks = ", ".join(f"WEEK('{day}', {mode})" for mode in range(8))
    query = (
        f"SELECT {weeks}, YEARWEEK('{day}'), YEARWEEK('{day}', 1), WEEKOFYEAR('{day}') FROM prestiti LIMIT 1"
    )
    assert rows(conn, query) == [expected]


# --- Day differences written the old way: TO_DAYS(a) - TO_DAYS(b) ---

LATE = [(1, 11), (3, 42)]


def test_a_difference_of_day_numbers_in_the_select_list(conn: sqlite3.Connection) -> None:
    assert rows(conn, "SELECT id, TO_DAYS(reso) - TO_DAYS(scadenza) FROM prestiti ORDER BY id") == [
        (1, 11),
        (2, -3),
        (3, 42),
        (4, None),
    ]


def test_a_difference_of_day_numbers_in_where(conn: sqlite3.Connection) -> None:
    query = (
        "SELECT id, TO_DAYS(reso) - TO_DAYS(scadenza) FROM prestiti "
        "WHERE TO_DAYS(reso) - TO_DAYS(scadenza) > 0 ORDER BY id"
    )
    assert rows(conn, query) == LATE


def test_a_difference_of_day_numbers_in_having(conn: sqlite3.Connection) -> None:
    query = (
        "SELECT id, MAX(TO_DAYS(reso) - TO_DAYS(scadenza)) AS ritardo FROM prestiti GROUP BY id "
        "HAVING MAX(TO_DAYS(reso) - TO_DAYS(scadenza)) > 0 ORDER BY id"
    )
    assert rows(conn, query) == LATE


def test_a_difference_of_day_numbers_in_order_by(conn: sqlite3.Connection) -> None:
    query = "SELECT id FROM prestiti WHERE reso IS NOT NULL ORDER BY TO_DAYS(reso) - TO_DAYS(preso) DESC"
    assert rows(conn, query) == [(3,), (1,), (2,)]


def test_a_difference_of_day_numbers_is_datediff(conn: sqlite3.Connection) -> None:
    query = "SELECT COUNT(*) FROM prestiti WHERE TO_DAYS(reso) - TO_DAYS(preso) = DATEDIFF(reso, preso)"
    assert rows(conn, query) == [(3,)]  # the row without `reso` compares NULL
    month_later = (
        "SELECT FROM_DAYS(TO_DAYS(preso) + 30) = DATE_ADD(DATE(preso), INTERVAL 30 DAY) FROM prestiti"
    )
    assert rows(conn, month_later) == [(1,)] * 4
