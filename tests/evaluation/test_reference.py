"""The MariaDB reference, and SQLite copies checked against it (reference.py, fidelity.py).

Needs MariaDB at TERMITE_REFERENCE_MYSQL_URL (default mysql://root@127.0.0.1:3306/): skipped when the
default is unreachable, failed when an explicitly set URL is, or when TERMITE_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from evaluation.scoring import reference as reference_module
from evaluation.scoring.fidelity import AGREE, DIFFER, FAILS_ON_REFERENCE, FAILS_ON_SQLITE, compare_engines
from evaluation.scoring.mysql_dump import DumpError, build_sqlite
from evaluation.scoring.reference import (
    COLLATION,
    ReferenceDatabase,
    ReferenceQueryError,
    connect,
    load_dump,
    normalise_value,
)
from tests.evaluation.biblioteca_dump import BIBLIOTECA, HAND_WRITTEN_TRIGGERS
from tests.services import REQUIRE_SERVICES, reachable

pytestmark = pytest.mark.mariadb

DEFAULT_URL = "mysql://root@127.0.0.1:3306/"

NEGOZIO = r"""CREATE DATABASE IF NOT EXISTS bottega;
USE bottega;
CREATE TABLE `clienti` (
  `id` int(11) NOT NULL PRIMARY KEY AUTO_INCREMENT,
  `nominativo` varchar(40) NOT NULL,
  `tessera` varchar(13) DEFAULT NULL,
  `categoria` enum('oro','argento','bronzo') NOT NULL,
  `nato` date NOT NULL,
  `registrato` datetime NOT NULL,
  `apertura` time DEFAULT NULL,
  `saldo` decimal(7,2) DEFAULT NULL,
  `peso` float DEFAULT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE ordini (
  id INT UNSIGNED NOT NULL PRIMARY KEY,
  id_cliente INT,
  quantita TINYINT NOT NULL,
  importo DECIMAL(5,2) NOT NULL,
  consegna DATE NOT NULL,
  FOREIGN KEY (id_cliente) REFERENCES clienti (id) ON DELETE CASCADE
) ENGINE=InnoDB;
ALTER TABLE clienti AUTO_INCREMENT=100;
INSERT INTO clienti VALUES
  (1, 'Ottavio Lentini', '0070012345678', 'Oro', '1982-8-18', '2024-5-3 10:15', '9:00', 120.5, 70.5),
  (2, 'Bice D\'Onofrio', '42', 'argento', '1994-02-28', '2024-05-15', '10:00:00', 0.1, 55.25),
  (3, 'Ugo Fabbri', 'ABC', 'bronzo', '2004-2-29', '2025-01-01 23:59:59', '14:30', 10, 80);
INSERT INTO clienti (nominativo, tessera, categoria, nato, registrato) VALUES ('Caffè Nero', NULL, 'bronzo', '1989-12-01', '2026-03-04 05:06:07');
INSERT INTO ordini VALUES
  (1, 1, 3, 30, '2024-1-31'), (2, 1, 1, 9.99, '2024-02-29'), (3, 2, 2, 20.5, '2025-03-15'), (4, 3, 7, 5.25, '2024-12-31'),
  (5, 100, 2, 3.333, '2026-3-4');
"""

# Each names a rule of dialect.to_sqlite or mysql_dump; all must give MariaDB's rows on the SQLite copy.
AGREEING = {
    "year_equals_a_quoted_year": "SELECT id FROM ordini WHERE YEAR(consegna) = '2024'",
    "month_and_day": "SELECT MONTH(nato), DAY(nato), DAYOFWEEK(nato), QUARTER(registrato) FROM clienti",
    "timestampdiff_years": "SELECT nominativo, TIMESTAMPDIFF(year, nato, '2024-12-31') AS eta FROM clienti",
    "timestampdiff_months": "SELECT TIMESTAMPDIFF(MONTH, consegna, '2025-03-15') FROM ordini",
    "datediff_date_parts": "SELECT DATEDIFF(registrato, '2024-05-02 23:00:00') FROM clienti",
    "text_column_against_a_number": "SELECT id FROM clienti WHERE tessera = 0070012345678 OR tessera IN (42)",
    "case_insensitive_column": "SELECT id FROM clienti WHERE categoria = 'ORO' OR nominativo LIKE 'bice%'",
    "case_insensitive_expression": "SELECT id FROM clienti WHERE UPPER(nominativo) = 'ottavio lentini'",
    "group_by_text_ignores_case": "SELECT categoria, COUNT(*) FROM clienti GROUP BY categoria",
    "integer_division": "SELECT id / 3, quantita / 7, importo / 7, 2 / 3 FROM ordini",
    "avg_of_integers": "SELECT AVG(quantita), AVG(id), AVG(DATEDIFF(consegna, '2024-01-01')) FROM ordini",
    "avg_of_decimal_and_float": "SELECT AVG(importo), AVG(saldo), AVG(peso) FROM ordini, clienti",
    "avg_over_a_derived_count": "SELECT AVG(n) FROM (SELECT id_cliente, COUNT(*) AS n FROM ordini GROUP BY id_cliente) t",
    "unpadded_date_against_datetime": "SELECT id FROM clienti WHERE registrato >= '2024-05-4'",
    "date_only_against_datetime": "SELECT id FROM clienti WHERE registrato = '2024-5-15'",
    "time_string_against_time": "SELECT id FROM clienti WHERE apertura BETWEEN '9:30' AND '14:30'",
    "quoted_alias_and_backticks": "SELECT `nominativo` AS 'Nominativo completo', COUNT(*) AS 'n' FROM `clienti` GROUP BY `nominativo`",
    "loose_group_by": "SELECT c.id, c.nominativo, COUNT(o.id) FROM clienti c LEFT JOIN ordini o ON o.id_cliente = c.id GROUP BY c.id",
    "having_an_alias": "SELECT id_cliente, COUNT(*) AS quanti FROM ordini GROUP BY id_cliente HAVING quanti > 1",
    "order_by_with_ties": "SELECT nominativo, registrato FROM clienti ORDER BY YEAR(registrato)",
    "order_by_desc_limit": "SELECT id, importo FROM ordini ORDER BY importo DESC LIMIT 2",
    "auto_increment_start": "SELECT id, nominativo FROM clienti WHERE id >= 100",
    "escaped_quote": "SELECT nominativo FROM clienti WHERE nominativo = 'Bice D\\'Onofrio'",
    "date_arithmetic": "SELECT DATE_ADD(consegna, INTERVAL 1 MONTH), consegna - INTERVAL 1 DAY FROM ordini",
    "string_functions": "SELECT LEFT(nominativo, 3), RIGHT(nominativo, 2), CONCAT_WS(' ', nominativo, tessera), TRUNCATE(importo, 1) FROM clienti, ordini",
    "subquery_in_where": "SELECT nominativo FROM clienti WHERE id IN (SELECT id_cliente FROM ordini WHERE importo > (SELECT AVG(importo) FROM ordini))",
    "union": "SELECT nominativo FROM clienti WHERE id = 1 UNION SELECT nominativo FROM clienti WHERE categoria = 'bronzo'",
    "regexp_ignores_case": "SELECT id FROM clienti WHERE nominativo REGEXP '^ottavio|fabbri$'",
    "accent_insensitive_equality": "SELECT id FROM clienti WHERE nominativo = 'caffe nero'",
    "like_ignores_accents_and_case": "SELECT id FROM clienti WHERE nominativo LIKE 'CAFFE%' OR nominativo LIKE 'caff_ n%'",
    "like_escapes_with_a_backslash": "SELECT id FROM clienti WHERE nominativo LIKE 'Bice D\\_%' OR tessera LIKE '00\\%'",
    "like_with_escape": "SELECT id FROM clienti WHERE nominativo NOT LIKE 'U!_%' ESCAPE '!'",
    "group_by_and_distinct_ignore_accents": "SELECT COUNT(DISTINCT nominativo), MIN(nominativo), MAX(nominativo) FROM clienti",
    # MySQL functions where MariaDB 10.11 answers as MySQL 8.0 does.
    "str_to_date": "SELECT STR_TO_DATE('01/02/2024', '%d/%m/%Y'), STR_TO_DATE('March 5, 2024', '%M %e, %Y'), STR_TO_DATE('10:05 PM', '%h:%i %p')",
    "str_to_date_against_a_column": "SELECT id FROM ordini WHERE consegna >= STR_TO_DATE('15/03/2025', '%d/%m/%Y')",
    "period_diff": "SELECT PERIOD_DIFF(202402, 202312), PERIOD_DIFF(2402, 9912)",
    "strcmp_ignores_case": "SELECT STRCMP(nominativo, 'ugo fabbri'), STRCMP('a', 'B') FROM clienti",
    "substring_index": "SELECT SUBSTRING_INDEX(nominativo, ' ', 1), SUBSTRING_INDEX(nominativo, ' ', -1) FROM clienti",
    "field": "SELECT nominativo FROM clienti ORDER BY FIELD(categoria, 'bronzo', 'oro', 'argento'), id",
    "month_and_day_names": "SELECT MONTHNAME(nato), DAYNAME(registrato), DATE_FORMAT(registrato, '%d %M %Y %H:%i %W %b %a %j %p %r %T') FROM clienti",
    "locate_ignores_case": "SELECT LOCATE('LENTINI', nominativo), INSTR(nominativo, 'o'), POSITION('F' IN nominativo), LOCATE('o', nominativo, 3) FROM clienti",
    "length_in_bytes": "SELECT LENGTH(nominativo), CHAR_LENGTH(nominativo), OCTET_LENGTH(nominativo) FROM clienti",
    "date_of_a_datetime": "SELECT DATE(registrato), DATE('2024-02-30'), DATE('2024-6-1') FROM clienti",
    "group_concat_ordered": "SELECT categoria, GROUP_CONCAT(nominativo ORDER BY nominativo DESC SEPARATOR '; ') FROM clienti GROUP BY categoria",
    "group_concat_distinct": "SELECT GROUP_CONCAT(DISTINCT LEFT(nominativo, 1) ORDER BY LEFT(nominativo, 1) DESC) FROM clienti",
    "from_dual": "SELECT 1 + 1 FROM DUAL",
    "date_against_a_number": "SELECT id FROM clienti WHERE nato >= 19900101 OR registrato < 20240504000000",
    "division_inside_arithmetic": "SELECT id / 3 * 3, ROUND(importo / 7, 6), (quantita / 3) + (quantita / 3) FROM ordini",
    # MySQL sorts an ENUM by the position of its members, which the copy's schema keeps.
    "order_by_an_enum": "SELECT DISTINCT categoria FROM clienti ORDER BY categoria",
}


def require_mariadb() -> str:
    """The reference URL; skips when the default is unreachable, fails when a configured one is."""
    url = os.environ.get("TERMITE_REFERENCE_MYSQL_URL")
    if reachable(url or DEFAULT_URL, 3306):
        return url or DEFAULT_URL
    problem = f"MariaDB at {url or DEFAULT_URL} is unreachable"
    if url or REQUIRE_SERVICES:
        pytest.fail(f"{problem}, and {'TERMITE_REQUIRE_SERVICES=1' if REQUIRE_SERVICES else 'it was set'}")
    pytest.skip(problem)


@pytest.fixture(scope="module")
def mariadb_url() -> str:
    return require_mariadb()


@pytest.fixture(scope="module")
def reference(mariadb_url: str) -> Iterator[ReferenceDatabase]:
    with load_dump(mariadb_url, NEGOZIO) as database:
        yield database


@pytest.fixture(scope="module")
def sqlite_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("bottega") / "bottega.sqlite3"
    build_sqlite(NEGOZIO, target)
    return target


# --- The reference database ---


def test_a_dump_loads_into_a_scratch_database_that_drop_removes(mariadb_url: str) -> None:
    with load_dump(mariadb_url, NEGOZIO) as database:
        assert database.name.startswith("termite_ref_")
        assert database.run("SELECT COUNT(*) FROM clienti") == (["COUNT(*)"], [(4,)])
        assert database.run("SELECT DATABASE()")[1] == [(database.name,)]
    with connect(mariadb_url) as conn, conn.cursor() as cursor:
        cursor.execute("SHOW DATABASES LIKE %s", (database.name,))
        assert cursor.fetchall() == ()
        cursor.execute("SHOW DATABASES LIKE 'bottega'")
        assert cursor.fetchall() == ()


def test_the_session_runs_gold_as_a_default_mariadb(reference: ReferenceDatabase) -> None:
    (mode, collation), *_ = reference.run("SELECT @@SESSION.sql_mode, @@collation_connection")[1]
    assert "ONLY_FULL_GROUP_BY" not in mode and "STRICT_TRANS_TABLES" in mode
    assert collation == COLLATION


def test_every_table_holds_the_same_rows_on_both_engines(
    reference: ReferenceDatabase, sqlite_copy: Path
) -> None:
    for table in ("clienti", "ordini"):
        outcome = compare_engines(sqlite_copy, reference, f"SELECT * FROM {table}")
        assert outcome.status == AGREE, table


def test_values_come_back_in_the_form_sqlite_gives_them(reference: ReferenceDatabase) -> None:
    columns, rows = reference.run("SELECT saldo, nato, registrato, apertura, peso FROM clienti WHERE id = 1")
    assert columns == ["saldo", "nato", "registrato", "apertura", "peso"]
    assert rows == [(120.5, "1982-08-18", "2024-05-03 10:15:00", "09:00:00", 70.5)]


def test_a_refused_query_raises_with_the_mysql_error_code(reference: ReferenceDatabase) -> None:
    with pytest.raises(ReferenceQueryError) as caught:
        reference.run("SELECT * FROM fornitori")
    assert caught.value.code == 1146
    with pytest.raises(ReferenceQueryError, match="MySQL error 1064"):
        reference.run("SELECT COUNT(*) FROM 'ordini'")


def test_a_dump_mariadb_refuses_is_a_dump_error_and_leaves_no_database(mariadb_url: str, monkeypatch) -> None:
    # The scratch database's name, known in advance: other runs may make and drop their own meanwhile.
    scratch = uuid.uuid4()
    monkeypatch.setattr(reference_module.uuid, "uuid4", lambda: scratch)
    with pytest.raises(DumpError, match=r"line 2: statement 2 \(INSERT INTO t \.\.\.\): MySQL error 1292"):
        load_dump(mariadb_url, "CREATE TABLE t (d DATE);\nINSERT INTO t VALUES ('2024-02-30');")
    with connect(mariadb_url) as conn, conn.cursor() as cursor:
        cursor.execute("SHOW DATABASES LIKE %s", (f"termite_ref_{scratch.hex[:16]}",))
        assert cursor.fetchall() == ()


# MariaDB 10.11 knows no utf8mb4_0900 collation: the dump as it names its own.
BIBLIOTECA_FOR_MARIADB = BIBLIOTECA.replace("utf8mb4_0900_ai_ci", "utf8mb4_unicode_ci")


@pytest.fixture(scope="module")
def biblioteca_on_both(
    mariadb_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, ReferenceDatabase]]:
    target = tmp_path_factory.mktemp("biblioteca") / "biblioteca.sqlite3"
    build_sqlite(BIBLIOTECA_FOR_MARIADB, target)
    with load_dump(mariadb_url, BIBLIOTECA_FOR_MARIADB) as database:
        yield target, database


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id_autore, nome, cognome, nominativo, nato, sigla, parola, aggiornato FROM autori",
        # BIT comes back from MySQL as bytes, from the copy as its number: compared as numbers.
        "SELECT id_libro, id_autore, titolo, genere, formati, prezzo, prezzo_ivato, copie, esaurito + 0 FROM libri",
        "SELECT * FROM sedi",
        "SELECT * FROM prestiti",
        "SELECT * FROM catalogo",
        "SELECT genere, COUNT(*) FROM catalogo GROUP BY genere",
    ],
)
def test_a_mysqldump_dump_with_every_construct_holds_the_same_rows_on_both_engines(
    biblioteca_on_both: tuple[Path, ReferenceDatabase], query: str
) -> None:
    copy, reference_db = biblioteca_on_both
    assert compare_engines(copy, reference_db, query).status == AGREE


def test_triggers_before_their_rows_take_effect_as_on_mariadb(mariadb_url: str, tmp_path: Path) -> None:
    target = tmp_path / "trigger.sqlite3"
    build_sqlite(HAND_WRITTEN_TRIGGERS, target)
    with load_dump(mariadb_url, HAND_WRITTEN_TRIGGERS) as reference_db:
        for query in ("SELECT * FROM libri", "SELECT * FROM schede", "SELECT * FROM registro"):
            assert compare_engines(target, reference_db, query).status == AGREE, query


def test_only_mysql_urls_are_accepted() -> None:
    with pytest.raises(ValueError, match="mysql://"):
        connect("postgres://root@127.0.0.1:5432/")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("3.3330"), 3.333),
        (dt.date(2024, 2, 29), "2024-02-29"),
        (dt.datetime(2024, 5, 3, 10, 15), "2024-05-03 10:15:00"),
        (dt.datetime(2024, 5, 3, 10, 15, 0, 500), "2024-05-03 10:15:00.000500"),
        (dt.timedelta(hours=9), "09:00:00"),
        (dt.timedelta(hours=-1, minutes=-30), "-01:30:00"),
        (dt.timedelta(days=4, hours=4), "100:00:00"),
        (7, 7),
        ("testo", "testo"),
        (None, None),
    ],
)
def test_normalise_value_gives_what_sqlite_would(value: object, expected: object) -> None:
    assert normalise_value(value) == expected


# --- SQLite copies against the reference ---


@pytest.mark.parametrize("query", AGREEING.values(), ids=AGREEING.keys())
def test_the_sqlite_copy_agrees_with_mariadb(
    reference: ReferenceDatabase, sqlite_copy: Path, query: str
) -> None:
    assert compare_engines(sqlite_copy, reference, query).status == AGREE


# What the copy cannot match is reported by category only, never with the query's text or values.
MISMATCHING = {
    "mariadb_refuses_a_quoted_table_name": (
        "SELECT AVG(importo) FROM 'ordini'",
        (FAILS_ON_REFERENCE, "MySQL error 1064"),
    ),
    "sqlite_lacks_a_function": (
        "SELECT SEC_TO_TIME(3600)",
        (FAILS_ON_SQLITE, "SQLite OperationalError"),
    ),
    # A known difference: MariaDB divides an ENUM's position as a DECIMAL (0.3333), MySQL 8.0 as the DOUBLE
    # a string column is in arithmetic (0.333...), which the copy follows.
    "an_enum_divided": ("SELECT categoria / 3 FROM clienti WHERE id = 1", (DIFFER, "values")),
}


@pytest.mark.parametrize(("query", "outcome"), MISMATCHING.values(), ids=MISMATCHING.keys())
def test_what_the_copy_cannot_match_is_reported_by_category(
    reference: ReferenceDatabase, sqlite_copy: Path, query: str, outcome: tuple[str, str]
) -> None:
    result = compare_engines(sqlite_copy, reference, query)
    assert (result.status, result.cause) == outcome
