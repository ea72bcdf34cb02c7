"""SQLite copies of MySQL dumps hold what MySQL stores (evaluation.scoring.mysql_dump)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluation.scoring.functions import install_functions
from evaluation.scoring.mysql_dump import (
    BuildReport,
    DumpError,
    build_sqlite,
    missing_identifiers,
    schema_text,
    sqlite_schema,
)
from evaluation.scoring.stored_programs import Routine
from tests.evaluation.biblioteca_dump import BIBLIOTECA, HAND_WRITTEN_TRIGGERS

DUMP = r"""-- Bottega di prova; un commento con punto e virgola
/*!40101 SET NAMES utf8mb4 */;
SET FOREIGN_KEY_CHECKS = 0;
CREATE DATABASE IF NOT EXISTS bottega;
USE bottega;
DROP TABLE IF EXISTS `clienti`;
CREATE TABLE `clienti` (
  `id` int(10) UNSIGNED NOT NULL PRIMARY KEY AUTO_INCREMENT COMMENT 'progressivo',
  `nominativo` varchar(40) CHARACTER SET utf8 NOT NULL,
  `tessera` varchar(13) COLLATE utf8mb4_bin DEFAULT NULL,
  `categoria` enum('attivo','sospeso') NOT NULL DEFAULT 'attivo',
  `canali` set('posta','sms') DEFAULT NULL,
  `vip` tinyint(1) DEFAULT 0,
  `nato` date NOT NULL,
  UNIQUE KEY `uk_tessera` (`tessera`), KEY `k_nominativo` (`nominativo`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE articoli (
  numero INT PRIMARY KEY NOT NULL AUTO_INCREMENT,
  nominativo VARCHAR(60) NOT NULL,
  listino DECIMAL(6,2) NOT NULL,
  peso FLOAT,
  scorte SMALLINT UNSIGNED NOT NULL DEFAULT 0
) ENGINE=InnoDB AUTO_INCREMENT=7000 DEFAULT CHARSET=utf8mb4;

CREATE TABLE ordini (
  id_cliente INT UNSIGNED,
  articolo INT,
  giorno DATE,
  ora TIME,
  spedito DATETIME,
  PRIMARY KEY (id_cliente, articolo, giorno),
  CONSTRAINT fk_cliente FOREIGN KEY (id_cliente) REFERENCES clienti (id) ON DELETE CASCADE ON UPDATE CASCADE
) ENGINE=InnoDB;

ALTER TABLE clienti AUTO_INCREMENT=500;

INSERT INTO clienti (nominativo, tessera, categoria, canali, vip, nato) VALUES
  ('D\'Onofrio; Gilda', '0070012345678', 'attivo', 'posta,sms', TRUE, '1982-8-18'),
  ("Sarto \"Bice\"", 'abc', 'SOSPESO', NULL, false, '1994-02-28'),
  ('Riga\\nuova\nvera', NULL, 'attivo', 'sms', 0, '2004-2-29');
INSERT INTO articoli (nominativo, listino, peso) VALUES ('Caffè', 3.456, 0.25), ('Tè', 12, 0.1);
INSERT INTO ordini VALUES (500, 7000, '2027-1-5', '9:5', '2027-01-05 9:05'), (501, 7001, '2027-01-06', '10:00', '2027-1-6');
"""


def opened_build(dump: str, target: Path) -> Iterator[tuple[BuildReport, sqlite3.Connection]]:
    """The copy of `dump` built at `target`, its report and a connection to it with MySQL's functions."""
    report = build_sqlite(dump, target)
    conn = sqlite3.connect(target)
    install_functions(conn)
    yield report, conn
    conn.close()


@pytest.fixture
def built(tmp_path: Path) -> Iterator[tuple[BuildReport, sqlite3.Connection]]:
    yield from opened_build(DUMP, tmp_path / "bottega.sqlite3")


def rows(conn: sqlite3.Connection, sql: str) -> list[tuple]:
    return conn.execute(sql).fetchall()


def build(tmp_path: Path, dump: str) -> sqlite3.Connection:
    target = tmp_path / "prova.sqlite3"
    build_sqlite(dump, target)
    conn = sqlite3.connect(target)
    install_functions(conn)
    return conn


# --- Building ---


def test_it_reports_tables_columns_and_rows_in_creation_order(built) -> None:
    report, _ = built
    assert list(report.tables) == ["clienti", "articoli", "ordini"]
    assert [table.row_count for table in report.tables.values()] == [3, 2, 2]
    assert (report.table_count, report.column_count, report.row_count) == (3, 17, 7)
    assert [column.name for column in report.tables["ordini"].columns] == [
        "id_cliente",
        "articolo",
        "giorno",
        "ora",
        "spedito",
    ]


def test_mysql_types_become_sqlite_types_keeping_unsigned_and_the_collation_of_text(built) -> None:
    report, _ = built
    assert report.schema["clienti"] == {
        "id": "INTEGER UNSIGNED",
        "nominativo": "VARCHAR(40) COLLATE utf8mb3_general_ci",
        "tessera": "VARCHAR(13) COLLATE utf8mb4_bin",
        # SQLite's TEXT, with the MySQL type the transpiler needs kept beside it (column_types)
        "categoria": "ENUM('attivo','sospeso') COLLATE utf8mb4_0900_ai_ci",
        "canali": "SET('posta','sms') COLLATE utf8mb4_0900_ai_ci",
        "vip": "BOOLEAN",
        "nato": "DATE",
    }
    assert report.schema["articoli"] == {
        "numero": "INTEGER",
        "nominativo": "VARCHAR(60) COLLATE utf8mb4_0900_ai_ci",
        "listino": "DECIMAL(6,2)",
        "peso": "FLOAT",
        "scorte": "INTEGER UNSIGNED",
    }
    assert report.schema["ordini"] == {
        "id_cliente": "INTEGER UNSIGNED",
        "articolo": "INTEGER",
        "giorno": "DATE",
        "ora": "TIME",
        "spedito": "DATETIME",
    }


def test_auto_increment_starts_where_mysql_says(built) -> None:
    _, conn = built
    assert rows(conn, "SELECT id FROM clienti ORDER BY id") == [(500,), (501,), (502,)]
    assert rows(conn, "SELECT numero FROM articoli ORDER BY numero") == [(7000,), (7001,)]


def test_the_auto_increment_column_is_an_integer_primary_key(tmp_path: Path) -> None:
    build_sqlite(DUMP, tmp_path / "bottega.sqlite3")
    assert '"numero" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT' in sqlite_schema(
        tmp_path / "bottega.sqlite3"
    )


def test_text_compares_case_insensitively_unless_the_collation_is_binary(built) -> None:
    _, conn = built
    assert rows(conn, "SELECT COUNT(*) FROM clienti WHERE categoria = 'Sospeso'") == [(1,)]
    assert rows(conn, "SELECT COUNT(*) FROM clienti WHERE tessera = 'ABC'") == [(0,)]


def test_dates_times_and_datetimes_are_stored_in_mysql_form(built) -> None:
    _, conn = built
    assert rows(conn, "SELECT nato FROM clienti ORDER BY id") == [
        ("1982-08-18",),
        ("1994-02-28",),
        ("2004-02-29",),
    ]
    assert rows(conn, "SELECT giorno, ora, spedito FROM ordini ORDER BY giorno") == [
        ("2027-01-05", "09:05:00", "2027-01-05 09:05:00"),
        ("2027-01-06", "10:00:00", "2027-01-06 00:00:00"),
    ]


def test_mysql_string_escapes_and_semicolons_in_strings_are_read(built) -> None:
    _, conn = built
    assert rows(conn, "SELECT nominativo FROM clienti ORDER BY id") == [
        ("D'Onofrio; Gilda",),
        ('Sarto "Bice"',),
        ("Riga\\nuova\nvera",),
    ]


def test_numbers_are_stored_as_the_column_type_keeps_them(built) -> None:
    _, conn = built
    assert rows(conn, "SELECT listino, peso, scorte FROM articoli ORDER BY numero") == [
        (3.46, 0.25, 0),
        (12, 0.1, 0),
    ]
    assert rows(conn, "SELECT vip, tessera FROM clienti ORDER BY id") == [
        (1, "0070012345678"),
        (0, "abc"),
        (0, None),
    ]


# Small dumps, each with the rows MariaDB stores for it (checked against MariaDB 10.11).
STORED = {
    "auto_increment_below_the_largest_id_continues_after_it": (
        "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, x INT); INSERT INTO t VALUES (50, 1);"
        "ALTER TABLE t AUTO_INCREMENT=10; INSERT INTO t (x) VALUES (2);",
        "SELECT id FROM t ORDER BY id",
        [(50,), (51,)],
    ),
    "zero_or_null_for_auto_increment_takes_the_next_id": (
        "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT); INSERT INTO t VALUES (0), (NULL), (0);",
        "SELECT id FROM t ORDER BY id",
        [(1,), (2,), (3,)],
    ),
    "an_unsigned_auto_increment_column_is_numbered_as_mysql_numbers_it": (
        "CREATE TABLE t (id INT UNSIGNED PRIMARY KEY AUTO_INCREMENT, x INT) AUTO_INCREMENT=7;"
        "INSERT INTO t (x) VALUES (1), (2); INSERT INTO t VALUES (0, 3), (20, 4), (NULL, 5);"
        "ALTER TABLE t AUTO_INCREMENT=10; INSERT INTO t (x) VALUES (6);",
        "SELECT id, x FROM t ORDER BY id",
        [(7, 1), (8, 2), (9, 3), (20, 4), (21, 5), (22, 6)],
    ),
    "enum_and_set_keep_their_members_as_declared": (
        "CREATE TABLE t (e ENUM('basso','alto'), s SET('a','b','c'));"
        "INSERT INTO t VALUES ('ALTO', 'c,A'), (1, ''), ('basso', 'b,b');",
        "SELECT e, s FROM t",
        [("alto", "a,c"), ("basso", ""), ("basso", "b")],
    ),
    "a_number_in_a_text_column_keeps_its_digits_and_an_integer_column_rounds": (
        "CREATE TABLE t (a VARCHAR(10), b INT); INSERT INTO t VALUES (12.50, 2.5), (-7, '3.5');",
        "SELECT a, b FROM t",
        [("12.50", 3), ("-7", 4)],
    ),
    "create_table_if_not_exists_keeps_the_existing_table": (
        "CREATE TABLE t (a INT); INSERT INTO t VALUES (1);"
        "CREATE TABLE IF NOT EXISTS t (b TEXT); INSERT INTO t VALUES (2);",
        "SELECT a FROM t",
        [(1,), (2,)],
    ),
    "insert_ignore_and_replace_keep_mysql_meaning": (
        "CREATE TABLE t (id INT PRIMARY KEY, x INT); INSERT INTO t VALUES (1, 1);"
        "INSERT IGNORE INTO t VALUES (1, 2), (2, 2); REPLACE INTO t VALUES (1, 3);",
        "SELECT * FROM t ORDER BY id",
        [(1, 3), (2, 2)],
    ),
}


@pytest.mark.parametrize(("dump", "query", "expected"), STORED.values(), ids=STORED.keys())
def test_small_dumps_store_what_mysql_stores(
    tmp_path: Path, dump: str, query: str, expected: list[tuple]
) -> None:
    assert rows(build(tmp_path, dump), query) == expected


def test_alter_table_adds_keys_to_a_table_that_holds_rows(tmp_path: Path) -> None:
    conn = build(
        tmp_path,
        "CREATE TABLE p (id INT, nominativo VARCHAR(9)); CREATE TABLE c (id INT, p INT);"
        "INSERT INTO p VALUES (1, 'uno'), (2, 'due'); INSERT INTO c VALUES (7, 1);"
        "ALTER TABLE p ADD PRIMARY KEY (id), ADD UNIQUE KEY u (nominativo), ADD KEY k (nominativo);"
        "ALTER TABLE p MODIFY id INT NOT NULL AUTO_INCREMENT, AUTO_INCREMENT=30;"
        "ALTER TABLE c ADD CONSTRAINT fk FOREIGN KEY (p) REFERENCES p (id) ON DELETE CASCADE;"
        "ALTER TABLE c ADD COLUMN nota TEXT;"
        "INSERT INTO p (nominativo) VALUES ('tre');",
    )
    assert rows(conn, "SELECT id, nominativo FROM p ORDER BY id") == [(1, "uno"), (2, "due"), (30, "tre")]
    assert rows(conn, "SELECT * FROM c") == [(7, 1, None)]
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO p (nominativo) VALUES ('UNO')")  # unique and case-insensitive
    assert rows(conn, "SELECT \"table\" FROM pragma_foreign_key_list('c')") == [("p",)]


def test_a_sqlite_dump_is_executed_as_written(tmp_path: Path) -> None:
    target = tmp_path / "lite.sqlite3"
    report = build_sqlite(
        "BEGIN TRANSACTION; CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('x;y'), ('z'); COMMIT;",
        target,
        source="sqlite",
    )
    assert report.row_count == 2
    assert sqlite_schema(target) == "CREATE TABLE t (a TEXT);\n"


# --- Errors ---


def test_an_invalid_date_names_its_line_statement_and_column(tmp_path: Path) -> None:
    dump = "CREATE TABLE t (\n  d DATE\n);\n\nINSERT INTO t VALUES\n('2024-01-01'), ('2024-02-30');"
    with pytest.raises(DumpError) as caught:
        build_sqlite(dump, tmp_path / "t.sqlite3")
    assert (caught.value.line, caught.value.statement_number) == (5, 2)
    assert (
        str(caught.value) == "line 5: statement 2 (INSERT INTO t ...): row 2: invalid DATE value for column d"
    )


@pytest.mark.parametrize(
    ("dump", "why"),
    [
        ("INSERT INTO t VALUES (1)", "table t is not created before this statement"),
        ("CREATE TABLE t (a INT); INSERT INTO t VALUES (1, 2)", "row 1 has 2 values for 1 columns"),
        ("CREATE TABLE t (a INT); INSERT INTO t (b) VALUES (1)", "table t has no column b"),
        ("CREATE TABLE t (a INT); INSERT INTO t VALUES ('uno')", "invalid INTEGER value for column a"),
        ("CREATE TABLE t (a INT); INSERT INTO t VALUES (NOW())", "is not a constant"),
        (
            "CREATE TABLE t (e ENUM('basso')); INSERT INTO t VALUES ('medio')",
            "invalid ENUM value for column e",
        ),
        (
            "CREATE TABLE t (a INT); CREATE TRIGGER x BEFORE INSERT ON u FOR EACH ROW SET NEW.a = 1",
            "table u is",
        ),
        ("CREATE TABLE t (a INT PRIMARY KEY, b INT AUTO_INCREMENT)", "must be the whole primary key"),
        ("CREATE TABLE t (a INT); ALTER TABLE t DROP COLUMN a", "ALTER TABLE action"),
        ("CREATE TABLE t (a INT); CREATE VIEW v AS SELECT a FROM t WHERE", "view v cannot be made"),
        ("GRANT SELECT ON t TO bice", "GRANT SELECT statements are not supported"),
        ("CREATE TABLE t (a INT PRIMARY KEY (a))", r"column option PRIMARY KEY \(a\) is not supported"),
        ("CREATE TABLE t (a INT) AUTO_INCREMENT=5b4", "AUTO_INCREMENT=5b4 is not a number"),
        ("CREATE TABLE t (a INT PRIMARY KEY); INSERT INTO t VALUES (1), (1)", "UNIQUE constraint failed"),
        ("CREATE TABLE t (a INT) ENGINE=InnoDB;\nSELEC 1", "cannot parse it"),
    ],
)
def test_what_cannot_be_loaded_is_a_dump_error(tmp_path: Path, dump: str, why: str) -> None:
    with pytest.raises(DumpError, match=why):
        build_sqlite(dump, tmp_path / "t.sqlite3")


def test_a_failed_build_leaves_the_previous_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "t.sqlite3"
    build_sqlite("CREATE TABLE vecchia (a INT);", target)
    with pytest.raises(DumpError):
        build_sqlite("CREATE TABLE nuova (a INT); INSERT INTO nuova VALUES ('x');", target)
    assert [path.name for path in tmp_path.iterdir()] == ["t.sqlite3"]
    assert "vecchia" in sqlite_schema(target)


# --- Schemas ---


def test_schema_text_is_the_dump_as_written_without_its_data() -> None:
    shown = schema_text(DUMP)
    assert shown.startswith("-- Bottega di prova; un commento con punto e virgola\n")
    assert shown.count("CREATE TABLE") == 3 and "ALTER TABLE clienti AUTO_INCREMENT=500;" in shown
    assert "INSERT" not in shown and "Gilda" not in shown
    assert shown.endswith("ALTER TABLE clienti AUTO_INCREMENT=500;\n")


def test_schema_text_cuts_the_comments_and_guards_of_mysqldump_data_sections() -> None:
    dump = (
        "CREATE TABLE t (a INT);\n\n--\n-- Dumping data for table `t`\n--\n\nLOCK TABLES `t` WRITE;\n"
        "/*!40000 ALTER TABLE `t` DISABLE KEYS */;\nINSERT INTO `t` VALUES (1);\n"
        "/*!40000 ALTER TABLE `t` ENABLE KEYS */;\nUNLOCK TABLES;\n\n"
        "-- a key added by hand\nALTER TABLE t ADD UNIQUE KEY (a);\n"
    )
    assert (
        schema_text(dump)
        == "CREATE TABLE t (a INT);\n\n-- a key added by hand\nALTER TABLE t ADD UNIQUE KEY (a);\n"
    )


def test_sqlite_schema_is_what_sqlite_built(tmp_path: Path) -> None:
    build_sqlite(DUMP, tmp_path / "bottega.sqlite3")
    schema = sqlite_schema(tmp_path / "bottega.sqlite3")
    assert schema.count("CREATE TABLE") == 3
    assert '"nominativo" VARCHAR(40) COLLATE utf8mb3_general_ci NOT NULL' in schema
    assert "ENGINE" not in schema and "sqlite_sequence" not in schema


# --- Names a query uses that a schema lacks ---

SHOWN = {"clienti": {"id", "nominativo", "nato"}, "ordini": {"id_cliente", "giorno"}}


@pytest.mark.parametrize(
    ("query", "missing"),
    [
        ("SELECT c.nominativo, o.giorno FROM clienti c JOIN ordini o ON o.id_cliente = c.id", []),
        ("SELECT NOMINATIVO FROM Clienti WHERE `ID` = 1", []),
        ("SELECT nominativo, COUNT(*) AS n FROM clienti GROUP BY nominativo HAVING n > 1 ORDER BY n", []),
        ("SELECT t.x FROM (SELECT nominativo AS x FROM clienti) t", []),
        ("SELECT nominativo FROM clienti c WHERE EXISTS (SELECT 1 FROM ordini WHERE id_cliente = c.id)", []),
        ("SELECT c.tessera FROM clienti c", ["clienti.tessera"]),
        ("SELECT tessera FROM clienti", ["clienti.tessera"]),
        ("SELECT tessera FROM clienti, ordini", ["tessera"]),
        ("SELECT x.nominativo FROM clienti", ["x.nominativo"]),
        ("SELECT t.y FROM (SELECT nominativo AS x FROM clienti) t", ["t.y"]),
        ("SELECT p.nominativo, p.listino FROM articoli p JOIN ordini ON 1 = 1", ["articoli"]),
        ("SELECT zz AS zz FROM clienti", ["clienti.zz"]),
    ],
)
def test_missing_identifiers_resolves_aliases_and_reports_what_is_missing(
    query: str, missing: list[str]
) -> None:
    assert missing_identifiers(query, SHOWN) == missing


# --- Collations: MySQL 8.0's defaults for each character set, and those a dump names ---

CHARSETS = """
CREATE TABLE nuova (nome VARCHAR(20)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE vecchia (nome VARCHAR(20), codice VARCHAR(5) COLLATE utf8_bin) DEFAULT CHARSET=utf8;
CREATE TABLE senza (nome TEXT, altro VARCHAR(5) CHARACTER SET utf8mb3, esatto CHAR(3) COLLATE utf8mb4_bin);
INSERT INTO nuova VALUES ('Ščukin'), ('Scukin '), ('Università');
INSERT INTO vecchia VALUES ('Ščukin', 'Ab'), ('Scukin ', 'ab');
INSERT INTO senza VALUES ('Caffè', 'x ', 'Abc');
"""


def test_each_text_column_declares_the_mysql_8_collation_of_its_character_set(tmp_path: Path) -> None:
    build_sqlite(CHARSETS, tmp_path / "c.sqlite3")
    schema = sqlite_schema(tmp_path / "c.sqlite3")
    assert '"nome" VARCHAR(20) COLLATE utf8mb4_0900_ai_ci' in schema  # utf8mb4
    assert '"nome" VARCHAR(20) COLLATE utf8mb3_general_ci' in schema  # utf8
    assert (
        '"codice" VARCHAR(5) COLLATE utf8mb3_bin' in schema
    )  # a collation by name: itself (utf8 is utf8mb3)
    assert '"nome" TEXT COLLATE utf8mb4_0900_ai_ci' in schema  # no charset: the server's default
    assert '"altro" VARCHAR(5) COLLATE utf8mb3_general_ci' in schema
    assert '"esatto" CHAR(3) COLLATE utf8mb4_bin' in schema


def test_utf8mb4_ignores_case_and_accents_but_not_trailing_spaces(tmp_path: Path) -> None:
    conn = build(tmp_path, CHARSETS)
    assert rows(conn, "SELECT COUNT(*) FROM nuova WHERE nome = 'scukin'") == [(1,)]  # NO PAD
    assert rows(conn, "SELECT COUNT(DISTINCT nome) FROM nuova") == [(3,)]
    assert rows(conn, "SELECT COUNT(*) FROM nuova WHERE nome LIKE 'universita'") == [(1,)]
    assert rows(conn, "SELECT nome FROM nuova WHERE nome = 'UNIVERSITA'") == [("Università",)]


def test_utf8_ignores_case_accents_and_trailing_spaces(tmp_path: Path) -> None:
    conn = build(tmp_path, CHARSETS)
    assert rows(conn, "SELECT COUNT(*) FROM vecchia WHERE nome = 'scukin'") == [(2,)]  # PAD SPACE
    assert rows(conn, "SELECT COUNT(*) FROM (SELECT nome FROM vecchia GROUP BY nome)") == [(1,)]
    assert rows(conn, "SELECT COUNT(*) FROM vecchia WHERE codice = 'ab'") == [(1,)]
    assert rows(conn, "SELECT COUNT(*) FROM senza WHERE altro = 'X' AND esatto = 'Abc'") == [(1,)]
    assert rows(conn, "SELECT COUNT(*) FROM senza WHERE esatto = 'abc'") == [(0,)]
    assert rows(conn, "SELECT COUNT(*) FROM senza WHERE esatto = 'Abc  '") == [(1,)]  # _bin pads with spaces


def test_a_unique_key_compares_with_the_collation(tmp_path: Path) -> None:
    with pytest.raises(DumpError, match="UNIQUE"):
        build_sqlite(
            "CREATE TABLE t (a VARCHAR(9) UNIQUE) CHARSET=utf8mb4; INSERT INTO t VALUES ('è'), ('E');",
            tmp_path / "u.sqlite3",
        )


def test_rebuilding_the_same_dump_gives_the_same_bytes(tmp_path: Path) -> None:
    build_sqlite(CHARSETS, tmp_path / "a.sqlite3")
    build_sqlite(CHARSETS, tmp_path / "b.sqlite3")
    assert (tmp_path / "a.sqlite3").read_bytes() == (tmp_path / "b.sqlite3").read_bytes()


# --- mysqldump's whole output, as MySQL 8.0 reads it (tests/evaluation/biblioteca_dump.py) ---


@pytest.fixture
def biblioteca(tmp_path: Path) -> Iterator[tuple[BuildReport, sqlite3.Connection]]:
    yield from opened_build(BIBLIOTECA, tmp_path / "biblioteca.sqlite3")


def test_a_mysqldump_dump_builds_its_tables_and_names_its_routines_views_and_triggers(biblioteca) -> None:
    report, conn = biblioteca
    assert list(report.tables) == ["autori", "libri", "sedi", "prestiti"]
    assert report.row_count == 5 + 6 + 2 + 3
    assert report.routines == (
        Routine("EVENT", "pulizia_notturna"),
        Routine("FUNCTION", "prestiti_aperti"),
        Routine("PROCEDURE", "restituisci"),
    )
    assert [view.name for view in report.views] == ["catalogo"]
    assert [(t.name, t.timing, t.event, t.table) for t in report.triggers] == [
        ("prestiti_dopo_inserimento", "AFTER", "INSERT", "prestiti")
    ]
    assert report.notes == (
        "column sedi.posizione (POINT) holds the bytes MySQL stores (SRID and WKB); no spatial function reads them",
    )
    assert rows(
        conn, "SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') ORDER BY 1"
    ) == [
        ("trigger", "prestiti_dopo_inserimento"),
        ("view", "catalogo"),
    ]


def test_mysqldump_s_triggers_come_after_the_rows_of_their_table_and_change_none(biblioteca) -> None:
    _, conn = biblioteca
    assert rows(conn, "SELECT id_libro, copie FROM libri WHERE id_libro IN (1, 3)") == [(1, 3), (3, 2)]


def test_the_rows_are_stored_as_mysql_8_0_stores_them(biblioteca) -> None:
    _, conn = biblioteca
    # NO_AUTO_VALUE_ON_ZERO, as mysqldump sets it: the author numbered 0 keeps 0. YEAR 12 is 2012.
    assert rows(conn, "SELECT id_autore, nato FROM autori ORDER BY id_autore") == [
        (0, None), (1, 1923), (2, 2012), (3, 1916), (4, 1919)
    ]  # fmt: skip
    # SET members in declared order, ENUM as declared; BIT as its number, from _binary, 0x and b'' forms.
    assert rows(conn, "SELECT formati, genere, esaurito FROM libri WHERE id_libro IN (1, 2, 3) ORDER BY 1") == [
        ("", "romanzo", 0), ("cartaceo,ebook", "romanzo", 0), ("cartaceo,ebook,audiolibro", "romanzo", 1)
    ]  # fmt: skip
    assert rows(conn, "SELECT posizione FROM sedi WHERE id_sede = 2") == [
        (bytes.fromhex("00000000010100000000000000000029400000000000F04440"),)
    ]


def test_generated_columns_hold_what_mysql_computes(biblioteca) -> None:
    _, conn = biblioteca
    assert rows(conn, "SELECT nominativo FROM autori WHERE id_autore = 1") == [("Italo Calvino",)]
    # DECIMAL(7,2): 12.50 * 1.04 = 13.0000 and 10.99 * 1.04 = 11.4296, stored to two decimals.
    assert rows(conn, "SELECT prezzo_ivato FROM libri WHERE id_libro IN (1, 5) ORDER BY id_libro") == [
        (13,),
        (11.43,),
    ]


def test_binary_and_a_column_s_own_collation_compare_exactly(biblioteca) -> None:
    _, conn = biblioteca
    assert rows(conn, "SELECT COUNT(*) FROM autori WHERE parola = 'palomar'") == [(0,)]
    assert rows(conn, "SELECT COUNT(*) FROM autori WHERE sigla = 'ica'") == [(0,)]
    assert rows(conn, "SELECT COUNT(*) FROM autori WHERE cognome = 'CALVINO'") == [(1,)]


def test_a_view_is_a_sqlite_view_with_mysql_s_meaning(biblioteca) -> None:
    _, conn = biblioteca
    assert rows(conn, "SELECT autore FROM catalogo WHERE genere = 'saggio'") == [("Natalia Ginzburg",)]
    assert rows(conn, "SELECT COUNT(*) FROM catalogo") == [(5,)]  # the book with no copies left is not listed


def test_a_check_not_enforced_checks_nothing_and_zerofill_changes_nothing_stored(tmp_path: Path) -> None:
    conn = build(
        tmp_path,
        "CREATE TABLE t (a INT(4) UNSIGNED ZEROFILL, CONSTRAINT c CHECK ((a < 10)) /*!80016 NOT ENFORCED */);"
        "INSERT INTO t VALUES (42);",
    )
    assert rows(conn, "SELECT a FROM t") == [(42,)]


def test_a_view_may_read_a_view_made_before_it(tmp_path: Path) -> None:
    conn = build(
        tmp_path,
        "CREATE TABLE t (a INT); INSERT INTO t VALUES (1), (2);"
        "CREATE VIEW v AS SELECT a * 10 AS b FROM t; CREATE VIEW w (c) AS SELECT b + 1 FROM v WHERE b > 10;",
    )
    assert rows(conn, "SELECT c FROM w") == [(21,)]


def test_schema_text_keeps_routines_triggers_and_views_and_cuts_the_data_with_its_guards() -> None:
    shown = schema_text(BIBLIOTECA)
    assert "INSERT INTO" not in shown and "LOCK TABLES" not in shown and "DISABLE KEYS" not in shown
    assert "Calvino" not in shown
    assert shown.count("DELIMITER ;;") == 4 and "CREATE DEFINER=`root`@`localhost` PROCEDURE" in shown
    assert "/*!50001 VIEW `catalogo` AS select" in shown


def test_triggers_take_effect_on_the_rows_that_arrive_after_them(tmp_path: Path) -> None:
    target = tmp_path / "t.sqlite3"
    report = build_sqlite(HAND_WRITTEN_TRIGGERS, target)
    conn = sqlite3.connect(target)
    install_functions(conn)
    # BEFORE INSERT ... SET NEW.col, one assignment after the other.
    assert rows(conn, "SELECT id, prezzo, ivato, registrato FROM libri ORDER BY id") == [
        (1, 9.96, 10.36, "2026-12-07"), (2, 12.84, 13.35, "2026-12-07"), (3, 13.54, 14.08, "2026-12-07")
    ]  # fmt: skip
    # AFTER INSERT into other tables, before and after an ALTER TABLE that rebuilds the table.
    assert rows(conn, "SELECT id, titolo FROM schede ORDER BY id") == [
        (1, "MARCOVALDO"), (2, "PALOMAR"), (3, "LESSICO FAMIGLIARE")
    ]  # fmt: skip
    assert rows(conn, "SELECT COUNT(*) FROM registro") == [(3,)]
    assert list(report.unapplied_triggers) == ["libri_cambio"]
    assert "its body holds IF NEW.titolo" in report.unapplied_triggers["libri_cambio"]
    assert "it writes schede" in report.unapplied_triggers["libri_cambio"]


def test_a_dropped_trigger_fires_no_more(tmp_path: Path) -> None:
    conn = build(
        tmp_path,
        "CREATE TABLE t (a INT); CREATE TABLE u (a INT);"
        "CREATE TRIGGER x AFTER INSERT ON t FOR EACH ROW INSERT INTO u VALUES (NEW.a);"
        "INSERT INTO t VALUES (1); DROP TRIGGER IF EXISTS x; INSERT INTO t VALUES (2);",
    )
    assert rows(conn, "SELECT a FROM u") == [(1,)]


@pytest.mark.parametrize(
    ("dump", "why"),
    [
        (
            "CREATE TABLE t (a INT); CREATE TRIGGER x AFTER INSERT ON t FOR EACH ROW SET @n = 1;"
            "INSERT INTO t VALUES (1);",
            r"line 1: statement 3 \(INSERT INTO t \.\.\.\): trigger x \(AFTER INSERT ON t\) would fire for these "
            r"rows, and the copy cannot apply it: trigger x: its body holds SET @n \.\.\., which the copy "
            r"cannot apply; it writes no table",
        ),
        (
            "CREATE TABLE t (a INT PRIMARY KEY); CREATE TABLE u (a INT);"
            "CREATE TRIGGER x AFTER DELETE ON t FOR EACH ROW INSERT INTO u VALUES (OLD.a);"
            "REPLACE INTO t VALUES (1);",
            r"trigger x \(AFTER DELETE ON t\) would fire for the rows REPLACE replaces",
        ),
        (
            "CREATE TABLE t (a INT, b INT AS (a + 1));\nINSERT INTO t VALUES (1, 2);",
            r"line 2: statement 2 .*row 1: a value for generated column b is not allowed",
        ),
        (
            "CREATE TABLE t (a INT);\n/*!50001 CREATE ALGORITHM=UNDEFINED */\n/*!50001 VIEW v AS SELECT a FROM t "
            "WHERE MATCH (a) AGAINST ('x') */;",
            r"line 2: statement 2 \(CREATE ALGORITHM=UNDEFINED VIEW \.\.\.\): view v cannot be made",
        ),
        (
            "CREATE TABLE t (\n  a INT,\n  b INT AS (a) STORED NOT NULL\n);\nINSERT INTO t (a) VALUES (NULL);",
            r"line 1: statement 1 .*generated column b: generated column b is NULL in 1 rows",
        ),
        (
            "DELIMITER ;;\nCREATE TABLE t (a INT) ;;\nDELIMITER ;\nSELEC 1;",
            r"line 4: statement 2 \(SELEC 1\)",
        ),
    ],
)
def test_a_mysqldump_construct_that_cannot_be_loaded_is_named_with_its_line_and_statement(
    tmp_path: Path, dump: str, why: str
) -> None:
    with pytest.raises(DumpError, match=why):
        build_sqlite(dump, tmp_path / "t.sqlite3")


@pytest.mark.parametrize(
    "dump",
    [
        "CREATE TABLE t (a INT, y INT) ENGINE=InnoDB\n/*!50100 PARTITION BY RANGE (y)\n"
        "(PARTITION p0 VALUES LESS THAN (2000) ENGINE = InnoDB,\n PARTITION p1 VALUES LESS THAN MAXVALUE) */;",
        "CREATE TABLE t (a INT, y INT) /*!50100 PARTITION BY HASH (a) PARTITIONS 4 */;",
        "CREATE TABLE t (a INT, y INT) ENGINE=MyISAM CHECKSUM=1 ROW_FORMAT=DYNAMIC STATS_PERSISTENT=0 COMMENT='x';",
        "CREATE TABLE t (a INT, y INT) /*!50100 TABLESPACE `innodb_system` */ ENGINE=InnoDB;",
        "CREATE TABLE t (a TEXT, y INT); CREATE FULLTEXT INDEX f ON t (a); ALTER TABLE t ADD FULLTEXT KEY g (a);",
    ],
    ids=["range_partitions", "hash_partitions", "table_options", "tablespace", "fulltext_index"],
)
def test_partitions_table_options_and_fulltext_indexes_change_nothing_stored(
    tmp_path: Path, dump: str
) -> None:
    conn = build(tmp_path, dump + "\nINSERT INTO t VALUES ('1', 1999), (2, 2001);")
    assert rows(conn, "SELECT CAST(a AS INTEGER), y FROM t ORDER BY y") == [(1, 1999), (2, 2001)]


def test_an_older_mysqldump_s_stand_in_table_for_a_view_is_replaced_by_the_view(tmp_path: Path) -> None:
    conn = build(
        tmp_path,
        "CREATE TABLE t (a INT); INSERT INTO t VALUES (1);\n"
        "DROP TABLE IF EXISTS `v`;\n/*!50001 DROP VIEW IF EXISTS `v`*/;\n"
        "/*!50001 CREATE TABLE `v` (\n  `a` tinyint NOT NULL\n) ENGINE=MyISAM */;\n"
        "/*!50001 DROP TABLE IF EXISTS `v`*/;\n/*!50001 DROP VIEW IF EXISTS `v`*/;\n"
        "/*!50001 CREATE ALGORITHM=UNDEFINED */\n/*!50013 DEFINER=`root`@`%` SQL SECURITY DEFINER */\n"
        "/*!50001 VIEW `v` AS select `t`.`a` + 1 AS `a` from `t` */;",
    )
    assert rows(conn, "SELECT a FROM v") == [(2,)]
    assert rows(conn, "SELECT type FROM sqlite_master WHERE name = 'v'") == [("view",)]


def test_a_table_dropped_and_created_again_holds_the_new_rows(tmp_path: Path) -> None:
    conn = build(
        tmp_path,
        "CREATE TABLE t (a INT); INSERT INTO t VALUES (1); DROP TABLE IF EXISTS `t`, u;"
        "CREATE TABLE t (b TEXT); INSERT INTO t VALUES ('due');",
    )
    assert rows(conn, "SELECT * FROM t") == [("due",)]


def test_a_view_named_as_a_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        DumpError, match=r"statement 2 \(CREATE VIEW t \.\.\.\): view t: a table of that name exists"
    ):
        build_sqlite("CREATE TABLE t (a INT); CREATE VIEW t AS SELECT 1;", tmp_path / "t.sqlite3")
