"""MySQL queries on SQLite keep MySQL's meaning (evaluation.scoring.dialect).

The expected values are what MariaDB 10.11 returns for the same data; tests/evaluation/test_reference.py
checks the same kinds of query against a real MariaDB.
"""

from __future__ import annotations

import sqlite3

import pytest

from evaluation.scoring import dialect
from evaluation.scoring.dialect import NotConformant, TranspileError, read_schema, to_sqlite
from evaluation.scoring.functions import install_functions, normalise_temporal
from evaluation.scoring.statements import Parsed, Statement, split_statements

SCHEMA = """
CREATE TABLE clienti (
  id INTEGER PRIMARY KEY, nominativo VARCHAR(40) COLLATE NOCASE, tessera VARCHAR(13) COLLATE NOCASE,
  categoria TEXT COLLATE NOCASE, nato DATE, registrato DATETIME, apertura TIME, saldo DECIMAL(7,2), peso FLOAT
);
CREATE TABLE ordini (id INTEGER PRIMARY KEY, id_cliente INTEGER, quantita INTEGER, importo DECIMAL(5,2), consegna DATE);
INSERT INTO clienti VALUES
  (1, 'Ottavio Lentini', '0070012345678', 'Oro', '1982-08-18', '2024-05-03 10:15:00', '09:00:00', 120.5, 70.5),
  (2, 'Bice Sarto', '42', 'argento', '1994-02-28', '2024-05-15 00:00:00', '10:00:00', 0.1, 55.25),
  (3, 'Ugo Fabbri', 'ABC', 'bronzo', '2004-02-29', '2025-01-01 23:59:59', '14:30:00', 10, 80);
INSERT INTO ordini VALUES
  (1, 1, 3, 30, '2024-01-31'), (2, 1, 1, 9.99, '2024-02-29'), (3, 2, 2, 20.5, '2025-03-15'), (4, 3, 7, 5.25, '2024-12-31');
"""


@pytest.fixture(scope="module")
def conn() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.executescript(SCHEMA)
    install_functions(connection)
    return connection


def run(conn: sqlite3.Connection, mysql: str) -> list[tuple]:
    return conn.execute(to_sqlite(mysql, schema=read_schema(conn))).fetchall()


def column(conn: sqlite3.Connection, mysql: str) -> list:
    return [row[0] for row in run(conn, mysql)]


# --- Statements ---


def test_a_semicolon_inside_a_string_or_comment_does_not_end_the_statement() -> None:
    text = "SELECT 'a;b', `c;d` FROM t -- e;f\n;\n/* g;h */ SELECT 'it\\'s; fine'; # i;j\n"
    statements = split_statements(text)
    assert [s.text for s in statements] == ["SELECT 'a;b', `c;d` FROM t", "SELECT 'it\\'s; fine'"]
    assert [(s.number, s.line) for s in statements] == [(1, 1), (2, 3)]


def test_a_doubled_quote_stays_inside_the_string() -> None:
    assert [s.text for s in split_statements("SELECT 'l''ora; esatta'; SELECT 2")] == [
        "SELECT 'l''ora; esatta'",
        "SELECT 2",
    ]


def test_a_backslash_escapes_only_in_mysql() -> None:
    text = "SELECT 'a\\'; SELECT 2"
    assert len(split_statements(text, source="sqlite")) == 2
    assert len(split_statements(text, source="mysql")) == 1


def test_two_dashes_start_a_comment_in_mysql_only_before_a_blank() -> None:
    text = "SELECT 3--1; SELECT 4 -- ;\n"
    assert [s.text for s in split_statements(text, source="mysql")] == ["SELECT 3--1", "SELECT 4"]
    assert [s.text for s in split_statements(text, source="sqlite")] == ["SELECT 3"]


def test_a_hash_starts_a_comment_in_mysql_only() -> None:
    assert [s.text for s in split_statements("SELECT 1 # ;\n; SELECT 2#")] == ["SELECT 1", "SELECT 2"]
    assert [s.text for s in split_statements("SELECT 1 # ;\n; SELECT 2#", source="sqlite")] == [
        "SELECT 1 #",
        "SELECT 2#",
    ]


def test_an_unterminated_string_or_comment_runs_to_the_end() -> None:
    assert [s.text for s in split_statements("SELECT 'a; b\\")] == ["SELECT 'a; b\\"]
    assert [s.text for s in split_statements("SELECT 1 /* a; b")] == ["SELECT 1"]
    assert [s.text for s in split_statements("SELECT `a;``b")] == ["SELECT `a;``b"]


def test_a_statement_of_comments_only_is_dropped() -> None:
    assert split_statements("/*!40101 SET NAMES utf8 */;\n-- fine\n;") == []


@pytest.mark.parametrize("source", ["mysql", "sqlite"])
def test_more_than_one_statement_is_rejected(source: str) -> None:
    with pytest.raises(TranspileError, match="more than one statement"):
        to_sqlite("SELECT 1; DELETE FROM clienti", source=source)


@pytest.mark.parametrize("source", ["mysql", "sqlite"])
def test_trailing_semicolons_and_blanks_are_dropped(source: str) -> None:
    assert to_sqlite("SELECT 1 ;; \n", source=source) == "SELECT 1"


def test_an_empty_query_is_rejected() -> None:
    with pytest.raises(TranspileError, match="empty"):
        to_sqlite(" ; -- nulla\n")


def test_an_unparseable_query_names_the_line() -> None:
    with pytest.raises(TranspileError, match=r"^cannot parse the query as mysql: .* got 'WHERE' \(line 2\)$"):
        to_sqlite("SELECT nominativo\nFROM WHERE")


def test_an_unclosed_string_is_a_transpile_error() -> None:
    with pytest.raises(TranspileError, match="not closed"):
        to_sqlite("SELECT 'nominativo FROM clienti")


def test_a_sqlite_query_passes_through_unchanged() -> None:
    assert to_sqlite("SELECT nominativo FROM clienti WHERE nominativo = 'x' ;", source="sqlite") == (
        "SELECT nominativo FROM clienti WHERE nominativo = 'x'"
    )


def test_an_unknown_source_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown SQL dialect"):
        to_sqlite("SELECT 1", source="postgres")


def counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the transpiler parses from now on, one entry per parse."""
    parsed: list[str] = []
    read = dialect.read_statement

    def counted(statement: Statement, *, source: str) -> Parsed:
        parsed.append(statement.text)
        return read(statement, source=source)

    monkeypatch.setattr(dialect, "read_statement", counted)
    return parsed


def test_a_repeated_query_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = counting_parses(monkeypatch)
    query = "SELECT COUNT(*) AS met_before FROM ordini WHERE quantita > 41"
    assert to_sqlite(query) == to_sqlite(query)
    assert len(parsed) == 1


def test_the_same_text_is_transpiled_once_for_a_schema_and_again_for_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rescoring and test suites reuse the transpiled text of each (text, dialect, schema); a schema of
    other column types may translate the same text otherwise, so it is not served from the first."""
    parsed = counting_parses(monkeypatch)
    query = "SELECT id AS by_schema FROM ordini WHERE quantita = '41'"
    as_text = {"ordini": {"id": "INTEGER", "quantita": "TEXT"}}
    as_number = {"ordini": {"id": "INTEGER", "quantita": "INTEGER"}}
    first = to_sqlite(query, schema=as_text)
    assert to_sqlite(query, schema={"ordini": dict(as_text["ordini"])}) == first  # an equal schema
    assert len(parsed) == 1
    assert to_sqlite(query, schema=as_number) != first
    assert len(parsed) == 2


def test_a_text_checked_for_conformance_is_not_served_the_unchecked_translation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed = counting_parses(monkeypatch)
    query = "SELECT id AS checked FROM ordini WHERE quantita == 41"
    assert to_sqlite(query)  # sqlglot's reader takes `==`
    with pytest.raises(NotConformant, match="=="):
        to_sqlite(query, check_conformance=True)
    assert len(parsed) == 2


def test_a_query_written_for_sqlite_is_not_served_a_mysql_translation() -> None:
    query = "SELECT 'a' || 'b' AS by_dialect FROM ordini"
    assert to_sqlite(query) != to_sqlite(query, source="sqlite")  # MySQL's || is OR


# --- MySQL's meaning ---


def test_year_of_a_date_compares_equal_to_a_quoted_year(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT id FROM ordini WHERE YEAR(consegna) = '2024' ORDER BY id") == [1, 2, 4]


def test_month_day_and_year_are_integers(conn: sqlite3.Connection) -> None:
    assert run(conn, "SELECT YEAR(nato), MONTH(nato), DAY(nato) FROM clienti WHERE id = 1") == [(1982, 8, 18)]


def test_date_parts_of_a_datetime_and_a_time(conn: sqlite3.Connection) -> None:
    query = "SELECT HOUR(registrato), MINUTE(registrato), QUARTER(registrato), DAYOFWEEK(nato), WEEKDAY(nato), HOUR(apertura)"
    assert run(conn, f"{query} FROM clienti WHERE id = 1") == [(10, 15, 2, 4, 2, 9)]


def test_extract_reads_the_same_parts(conn: sqlite3.Connection) -> None:
    assert run(conn, "SELECT EXTRACT(YEAR FROM nato), EXTRACT(DAY FROM nato) FROM clienti WHERE id = 3") == [
        (2004, 29)
    ]


def test_a_date_function_reads_an_unpadded_date_string(conn: sqlite3.Connection) -> None:
    assert run(conn, "SELECT MONTH('2024-6-1'), DATEDIFF('2024-6-11', '2024-6-1')") == [(6, 10)]


def test_timestampdiff_counts_whole_years_with_start_first(conn: sqlite3.Connection) -> None:
    query = "SELECT id, TIMESTAMPDIFF(year, nato, '2024-12-31') FROM clienti ORDER BY id"
    assert run(conn, query) == [(1, 42), (2, 30), (3, 20)]


def test_timestampdiff_counts_a_month_only_when_the_day_is_reached(conn: sqlite3.Connection) -> None:
    query = "SELECT TIMESTAMPDIFF(MONTH, consegna, '2024-02-29') FROM ordini WHERE id = 1"
    assert column(conn, query) == [0]


def test_datediff_ignores_the_time_of_day(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT DATEDIFF(registrato, '2024-05-02 23:00:00') FROM clienti WHERE id = 1") == [1]


def test_a_text_column_compared_with_a_number_compares_as_numbers(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT id FROM clienti WHERE tessera = 0070012345678") == [1]
    assert column(conn, "SELECT id FROM clienti WHERE tessera IN (42, 43)") == [2]
    assert column(conn, "SELECT id FROM clienti WHERE tessera BETWEEN 40 AND 50") == [2]


def test_a_text_column_of_a_derived_table_compared_with_a_number(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT x.c FROM (SELECT tessera AS c FROM clienti) x WHERE x.c = 42.0") == ["42"]


def test_a_correlated_column_takes_the_type_of_the_outer_table(conn: sqlite3.Connection) -> None:
    query = "SELECT o.id FROM ordini o WHERE EXISTS (SELECT 1 FROM clienti WHERE o.id_cliente = 2 AND tessera = 42)"
    assert column(conn, query) == [3]


def test_string_equality_ignores_case_of_expressions_and_literals(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT id FROM clienti WHERE UPPER(categoria) = 'oro'") == [1]
    assert column(conn, "SELECT id FROM clienti WHERE LOWER(nominativo) IN ('BICE SARTO')") == [2]
    assert column(conn, "SELECT 'Aosta' = 'AOSTA'") == [1]


def test_division_of_integers_is_decimal_rounded_to_four_places(conn: sqlite3.Connection) -> None:
    assert run(conn, "SELECT 2 / 3, 7 / 2, 1 DIV 3, quantita / 3 FROM ordini WHERE id = 1") == [
        (0.6667, 3.5, 0, 1.0)
    ]


def test_division_of_a_decimal_keeps_its_scale_plus_four(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT importo / 7 FROM ordini WHERE id = 2") == [1.427143]


def test_division_of_a_float_is_not_rounded(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT peso / 3 FROM clienti WHERE id = 1") == [pytest.approx(23.5)]
    assert column(conn, "SELECT 1e0 / 3") == [pytest.approx(1 / 3, rel=1e-12)]


def test_avg_of_integers_is_rounded_to_four_decimals(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT AVG(quantita) FROM ordini WHERE id < 4") == [2.0]
    assert column(conn, "SELECT AVG(DATEDIFF(consegna, '2024-01-01')) FROM ordini WHERE id <> 3") == [
        151.3333
    ]
    assert column(conn, "SELECT AVG(id) FROM ordini WHERE id IN (1, 2, 4)") == [2.3333]


def test_avg_of_a_decimal_rounds_to_its_scale_plus_four_and_avg_of_a_float_does_not(
    conn: sqlite3.Connection,
) -> None:
    assert column(conn, "SELECT AVG(importo) FROM ordini WHERE id IN (1, 2, 4)") == [15.08]
    assert column(conn, "SELECT AVG(saldo) FROM clienti") == [pytest.approx(43.533333)]
    assert column(conn, "SELECT AVG(peso) FROM clienti") == [pytest.approx(205.75 / 3, rel=1e-12)]


def test_avg_of_an_output_alias_in_a_derived_table_is_rounded(conn: sqlite3.Connection) -> None:
    query = "SELECT AVG(n) FROM (SELECT id_cliente, COUNT(*) AS n FROM ordini GROUP BY id_cliente) t"
    assert column(conn, query) == [1.3333]


def test_a_date_string_is_read_as_mysql_reads_it_against_a_datetime(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT id FROM clienti WHERE registrato >= '2024-05-4' ORDER BY id") == [2, 3]
    assert column(conn, "SELECT id FROM clienti WHERE registrato = '2024-5-15'") == [2]
    assert column(conn, "SELECT id FROM clienti WHERE '2024-5-15' = registrato") == [2]


def test_a_datetime_string_against_a_date_compares_as_datetimes(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT id FROM ordini WHERE consegna < '2024-1-31 12:00' ORDER BY id") == [1]
    assert column(conn, "SELECT id FROM ordini WHERE consegna = '2024-01-31 00:00:00'") == [1]


def test_a_time_string_is_padded_against_a_time_column(conn: sqlite3.Connection) -> None:
    assert column(conn, "SELECT id FROM clienti WHERE apertura = '9:00'") == [1]
    assert column(conn, "SELECT id FROM clienti WHERE apertura BETWEEN '9:30' AND '14:30' ORDER BY id") == [
        2,
        3,
    ]


def test_single_quoted_aliases_and_backticks_are_mysql_identifiers(conn: sqlite3.Connection) -> None:
    query = "SELECT `nominativo` AS 'Nominativo completo' FROM `clienti` WHERE `id` = 3"
    cursor = conn.execute(to_sqlite(query))
    assert cursor.fetchall() == [("Ugo Fabbri",)]
    assert cursor.description[0][0] == "Nominativo completo"


@pytest.mark.parametrize("quote", ["'", '"'])
def test_a_quoted_string_as_a_table_name_is_rejected_like_mysql(quote: str) -> None:
    with pytest.raises(TranspileError, match="quoted string is used as a table name"):
        to_sqlite(f"SELECT COUNT(*)\nFROM {quote}ordini{quote}")


def test_curdate_and_now_use_local_time(conn: sqlite3.Connection) -> None:
    today, now = run(conn, "SELECT CURDATE(), NOW()")[0]
    local = conn.execute("SELECT DATE('now', 'localtime')").fetchone()[0]
    assert today == local and now.startswith(local)


def test_date_add_keeps_the_last_day_of_a_shorter_month(conn: sqlite3.Connection) -> None:
    query = "SELECT DATE_ADD(consegna, INTERVAL 1 MONTH), consegna - INTERVAL 1 YEAR FROM ordini WHERE id = 1"
    assert run(conn, query) == [("2024-02-29", "2023-01-31")]
    assert column(conn, "SELECT DATE_SUB(registrato, INTERVAL 2 HOUR) FROM clienti WHERE id = 1") == [
        "2024-05-03 08:15:00"
    ]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("LEFT(nominativo, 7)", "Ottavio"),
        ("RIGHT(nominativo, 7)", "Lentini"),
        ("RIGHT(nominativo, 0)", ""),
        ("MID(nominativo, 9, 3)", "Len"),
        ("CONCAT_WS('-', nominativo, NULL, categoria)", "Ottavio Lentini-Oro"),
        ("TRUNCATE(saldo, 0)", 120),
        ("TRUNCATE(-2.789, 1)", -2.7),
        ("LAST_DAY(nato)", "1982-08-31"),
        ("(1 = 1) XOR (2 = 2)", 0),
        ("nominativo REGEXP '^ottavio'", 1),
        ("nominativo NOT REGEXP 'nt'", 0),
    ],
)
def test_mysql_functions_sqlite_lacks(conn: sqlite3.Connection, expression: str, expected: object) -> None:
    assert column(conn, f"SELECT {expression} FROM clienti WHERE id = 1") == [expected]


def test_an_unsupported_interval_unit_is_a_transpile_error() -> None:
    with pytest.raises(TranspileError, match="YEAR_MONTH"):
        to_sqlite("SELECT DATE_ADD(nato, INTERVAL '1-2' YEAR_MONTH) FROM clienti")


def test_without_a_schema_the_type_rules_are_left_out() -> None:
    assert (
        to_sqlite("SELECT id FROM clienti WHERE tessera = 42") == "SELECT id FROM clienti WHERE tessera = 42"
    )


def test_read_schema_gives_declared_types(conn: sqlite3.Connection) -> None:
    schema = read_schema(conn)
    assert set(schema) == {"clienti", "ordini"}
    assert schema["ordini"] == {
        "id": "INTEGER",
        "id_cliente": "INTEGER",
        "quantita": "INTEGER",
        "importo": "DECIMAL(5,2)",
        "consegna": "DATE",
    }


# --- Values as MySQL reads them ---


@pytest.mark.parametrize(
    ("value", "kind", "stored"),
    [
        ("1982-8-18", "date", "1982-08-18"),
        ("2024-06-13 10:00:00", "date", "2024-06-13"),
        ("20240613", "date", "2024-06-13"),
        ("82/8/18", "date", "1982-08-18"),
        ("0000-00-00", "date", "0000-00-00"),
        ("2024-6-13 1:5:00", "datetime", "2024-06-13 01:05:00"),
        ("2024-06-13", "datetime", "2024-06-13 00:00:00"),
        ("10:00", "time", "10:00:00"),
        ("9:5:3", "time", "09:05:03"),
        ("130", "time", "00:01:30"),
        ("2024-06-13 10:11:12", "time", "10:11:12"),
        ("2024-02-30", "date", None),
        ("2025-02-29", "datetime", None),
        ("domani", "date", None),
        ("10:61", "time", None),
    ],
)
def test_normalise_temporal_stores_what_mysql_stores(value: str, kind: str, stored: str | None) -> None:
    assert normalise_temporal(value, kind) == stored


@pytest.mark.parametrize(
    ("unit", "start", "end", "expected"),
    [
        ("YEAR", "1982-08-18", "2024-08-17", 41),
        ("YEAR", "1982-08-18", "2024-08-18", 42),
        ("YEAR", "2024-08-18", "1982-08-18", -42),
        ("QUARTER", "2024-01-15", "2024-07-14", 1),
        ("MONTH", "2024-01-31 10:00:00", "2024-02-29 10:00:00", 0),
        ("MONTH", "2024-01-15 10:00:00", "2024-02-15 09:59:59", 0),
        ("WEEK", "2024-01-01", "2024-01-15", 2),
        ("DAY", "2024-01-01 12:00:00", "2024-01-03 11:59:59", 1),
        ("HOUR", "2024-01-01", "2024-01-01 05:30:00", 5),
        ("MINUTE", "2024-01-01 00:00:00", "2023-12-31 23:58:30", -1),
        ("SECOND", "2024-01-01", "2024-01-01 00:00:01", 1),
        ("YEAR", "0000-00-00", "2024-01-01", None),
        ("YEAR", "2024-01-01", None, None),
        ("FORTNIGHT", "2024-01-01", "2024-02-01", None),
    ],
)
def test_the_timestampdiff_function_follows_mysql(
    conn: sqlite3.Connection, unit: str, start: str, end: str | None, expected: int | None
) -> None:
    assert conn.execute("SELECT mysql_timestampdiff(?, ?, ?)", (unit, start, end)).fetchone()[0] == expected


def test_the_functions_give_null_for_what_they_cannot_read(conn: sqlite3.Connection) -> None:
    row = conn.execute(
        "SELECT mysql_date_add('domani', 1, 'DAY'), mysql_date_add('2024-01-01', 'x', 'DAY'),"
        " mysql_truncate('x', 1), mysql_concat_ws(NULL, 'a'), 'a' REGEXP '('"
    ).fetchone()
    assert row == (None, None, None, None, None)
