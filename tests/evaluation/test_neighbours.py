"""Neighbour databases: the schema of a database with other data (evaluation.scoring.neighbours).

The tests on the real archive print nothing of it: failures name database slugs, seeds and counts only.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import sqlite3
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import pytest
import sqlglot
from sqlglot import exp

from evaluation.scoring.functions import install_functions
from evaluation.scoring.mysql_dump import build_sqlite, schema_text
from evaluation.scoring.neighbours import SAMPLE_READ, SAMPLE_UNREAD, NeighbourSource, neighbour_dump
from evaluation.scoring.reference import load_dump
from evaluation.scoring.schema_shape import read_shape
from evaluation.scoring.statements import split_statements
from evaluation.sources import demo_database_sources, read_termite_archive
from tests.evaluation.biblioteca_dump import BIBLIOTECA
from tests.services import TERMITE_PASSWORD

# An invented middle school: a composite primary key, a UNIQUE key, ENUMs, DECIMALs, dates and times, a
# nullable and a NOT NULL foreign key (one of them composite), a self-reference, a CHECK constraint, a
# column narrowed and a key added by ALTER TABLE, and text that needs escaping.
SCUOLA = r"""-- Scuola media Gianni Rodari (dati inventati)
CREATE DATABASE IF NOT EXISTS scuola;
USE scuola;

CREATE TABLE classi (
  anno TINYINT UNSIGNED,
  sezione CHAR(1),
  aula VARCHAR(12) NOT NULL,
  PRIMARY KEY (anno, sezione)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE docenti (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  codice_fiscale VARCHAR(16) NOT NULL,
  cognome VARCHAR(30) NOT NULL,
  ruolo ENUM('titolare','supplente','sostegno') NOT NULL,
  stipendio DECIMAL(7,2) UNSIGNED,
  assunto_il DATE,
  tutor_id INT,
  UNIQUE KEY uk_codice_fiscale (codice_fiscale),
  FOREIGN KEY (tutor_id) REFERENCES docenti (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE studenti (
  matricola INT UNSIGNED NOT NULL PRIMARY KEY,
  nome VARCHAR(20) NOT NULL,
  nato_il DATE NOT NULL,
  anno TINYINT UNSIGNED NOT NULL,
  sezione CHAR(1) NOT NULL,
  media DECIMAL(4,2),
  pendolare TINYINT(1) NOT NULL DEFAULT 0,
  CONSTRAINT fk_classe FOREIGN KEY (anno, sezione) REFERENCES classi (anno, sezione)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE lezioni (
  docente_id INT NOT NULL,
  giorno ENUM('lunedì','martedì','mercoledì','giovedì','venerdì') NOT NULL,
  ora TIME NOT NULL,
  anno TINYINT UNSIGNED,
  sezione CHAR(1),
  registrata DATETIME NOT NULL,
  PRIMARY KEY (docente_id, giorno, ora),
  FOREIGN KEY (docente_id) REFERENCES docenti (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE voti (
  matricola INT UNSIGNED NOT NULL,
  materia VARCHAR(20) NOT NULL,
  voto TINYINT NOT NULL CHECK (voto BETWEEN 4 AND 10),
  PRIMARY KEY (matricola, materia),
  FOREIGN KEY (matricola) REFERENCES studenti (matricola)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

ALTER TABLE docenti MODIFY cognome VARCHAR(12) NOT NULL;
ALTER TABLE lezioni ADD CONSTRAINT fk_lezioni_classe FOREIGN KEY (anno, sezione) REFERENCES classi (anno, sezione);

INSERT INTO classi VALUES (1, 'A', 'Aula 1'), (1, 'B', 'Aula 2'), (2, 'A', 'L''Aquila'), (3, 'C', 'Lab\\Chimica');
INSERT INTO docenti VALUES
  (1, 'RSSMRA70A01H501U', 'Rossi', 'titolare', 1850.00, '2001-09-01', NULL),
  (2, 'BNCLCU85B42F205X', 'Bianchi', 'supplente', 1420.50, '2019-9-12', 1),
  (3, 'VRDGPP79C03L219K', 'Verdi', 'sostegno', NULL, '2010-10-01', 1),
  (4, 'DMRFNC90D44A662Z', 'D''Amore', 'titolare', 1850.00, NULL, 3),
  (5, 'CNTSLV88E45G273Q', 'Conti', 'supplente', 1399.99, '2023-01-09', NULL);
INSERT INTO studenti VALUES
  (1001, 'Giulia', '2012-03-14', 1, 'A', 8.25, 0),
  (1002, 'Matteo', '2012-11-02', 1, 'A', 7.50, 1),
  (1003, 'Sofia', '2011-05-30', 2, 'A', NULL, 0),
  (1004, 'Luca', '2011-01-19', 2, 'A', 6.75, 1),
  (1005, 'Aurora', '2010-07-07', 3, 'C', 9.10, 0),
  (1006, 'Francesco', '2012-12-31', 1, 'B', 7.00, 0);
INSERT INTO lezioni VALUES
  (1, 'lunedì', '8:30', 1, 'A', '2024-09-16 08:25'),
  (1, 'martedì', '10:30:00', 2, 'A', '2024-09-17 10:31:00'),
  (2, 'lunedì', '08:30:00', 1, 'B', '2024-09-16 08:29:59'),
  (3, 'mercoledì', '11:30:00', NULL, NULL, '2024-09-18 11:40:00'),
  (4, 'giovedì', '09:30:00', 3, 'C', '2024-09-19 09:30:00');
INSERT INTO voti VALUES
  (1001, 'Italiano', 8), (1001, 'Matematica', 9), (1002, 'Italiano', 6), (1003, 'Storia', 7),
  (1004, 'Matematica', 5), (1005, 'Italiano', 10), (1005, 'Scienze', 9), (1006, 'Inglese', 4);
"""

T = TypeVar("T")
TABLES = ("classi", "docenti", "studenti", "lezioni", "voti")
MARIADB_SEEDS = 5


@pytest.fixture(scope="module")
def scuola(tmp_path_factory: pytest.TempPathFactory) -> Path:
    original = tmp_path_factory.mktemp("scuola") / "scuola.sqlite3"
    build_sqlite(SCUOLA, original)
    return original


@pytest.fixture(scope="module")
def scuola_neighbours(scuola: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Neighbours of the school with the default options, seeds 0 to 79: built once, for the tests that
    only read them."""
    return neighbours(scuola, tmp_path_factory.mktemp("neighbours"), range(80))


def neighbour_of(original: Path, dump: str, seed: str, **options: Any) -> str:
    return neighbour_dump(original=original, schema_text=schema_text(dump), seed=seed, **options)


def built(text: str, target: Path, *, source: str = "mysql") -> Path:
    build_sqlite(text, target, source=source)
    return target


def query(path: Path, sql: str) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        install_functions(conn)  # the copies' text columns declare MySQL's collations
        return conn.execute(sql).fetchall()


def column(path: Path, table: str, name: str) -> list[object]:
    return [value for (value,) in query(path, f"SELECT {name} FROM {table}")]


def neighbours(original: Path, tmp_path: Path, seeds: range, **options: Any) -> list[Path]:
    return [
        built(neighbour_of(original, SCUOLA, f"seme-{seed}", **options), tmp_path / f"n{seed}.sqlite3")
        for seed in seeds
    ]


def foreign_key_violations(path: Path) -> int:
    return len(query(path, "PRAGMA foreign_key_check"))


# --- The dump --------------------------------------------------------------------------------------------


def test_the_neighbour_is_the_schema_text_then_one_insert_per_table_naming_its_columns(scuola: Path) -> None:
    text = neighbour_of(scuola, SCUOLA, "uno")
    schema = schema_text(SCUOLA).rstrip("\n")
    assert text.startswith(schema)
    inserts = [sqlglot.parse_one(s.text, read="mysql") for s in split_statements(text[len(schema) :])]
    assert inserts
    assert all(isinstance(insert, exp.Insert) for insert in inserts)
    tables = [insert.this.this.name for insert in inserts]
    assert len(tables) == len(set(tables))
    columns = {table.name: [c.name for c in table.columns] for table in read_shape(scuola)}
    assert all(
        [c.name for c in insert.this.expressions] == columns[insert.this.this.name] for insert in inserts
    )


def test_values_are_written_as_mysql_literals(scuola: Path) -> None:
    written: dict[str, list[str]] = {}  # table.column -> the SQL of each value given to it
    schema = schema_text(SCUOLA).rstrip("\n")
    for seed in range(5):
        for statement in split_statements(neighbour_of(scuola, SCUOLA, f"seme-{seed}")[len(schema) :]):
            insert = sqlglot.parse_one(statement.text, read="mysql")
            names = [f"{insert.this.this.name}.{c.name}" for c in insert.this.expressions]
            for row in insert.expression.expressions:
                for name, value in zip(names, row.expressions, strict=True):
                    written.setdefault(name, []).append(value.sql(dialect="mysql"))

    def all_match(name: str, pattern: str) -> bool:
        return bool(written[name]) and all(re.fullmatch(pattern, value) for value in written[name])

    assert all_match("docenti.stipendio", r"NULL|\d+\.\d\d")  # plain decimals, never an exponent
    assert all_match("docenti.assunto_il", r"NULL|'\d{4}-\d\d-\d\d'")
    assert all_match("lezioni.registrata", r"'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d'")
    assert all_match("lezioni.ora", r"'\d\d:\d\d:\d\d'")
    assert all_match("studenti.matricola", r"\d+")
    assert all_match("docenti.ruolo", r"'(titolare|supplente|sostegno)'")


def test_it_builds_into_a_copy_with_the_shape_of_the_original(
    scuola: Path, scuola_neighbours: list[Path]
) -> None:
    for path in scuola_neighbours[:30]:
        assert read_shape(path) == read_shape(scuola)


def test_every_foreign_key_points_at_a_row_of_the_neighbour(scuola_neighbours: list[Path]) -> None:
    copies = scuola_neighbours[:40]
    assert [foreign_key_violations(path) for path in copies] == [0] * 40
    # The self-reference and the composite keys are used, not only left NULL.
    assert any(query(path, "SELECT 1 FROM docenti WHERE tutor_id IS NOT NULL") for path in copies)
    assert any(query(path, "SELECT 1 FROM lezioni WHERE anno IS NOT NULL") for path in copies)


def test_a_not_null_foreign_key_to_an_empty_table_leaves_its_table_empty(
    scuola_neighbours: list[Path],
) -> None:
    copies = scuola_neighbours[:80]
    without_classes = [path for path in copies if not query(path, "SELECT 1 FROM classi")]
    assert without_classes
    assert all(not query(path, "SELECT 1 FROM studenti") for path in without_classes)


def test_primary_and_unique_keys_stay_unique_as_mysql_compares_text(scuola_neighbours: list[Path]) -> None:
    for path in scuola_neighbours[:40]:
        codes = [code.lower() for code in column(path, "docenti", "codice_fiscale")]
        assert len(codes) == len(set(codes))  # 'RSSMRA...' and 'rssmra...' are the same key to MySQL
        classes = query(path, "SELECT anno, LOWER(sezione) FROM classi")
        assert len(classes) == len(set(classes))
        marks = query(path, "SELECT matricola, LOWER(materia) FROM voti")
        assert len(marks) == len(set(marks))


def test_primary_key_columns_are_never_null(scuola_neighbours: list[Path]) -> None:
    # MySQL makes every primary key column NOT NULL; SQLite would store NULL in a composite one.
    for path in scuola_neighbours[:30]:
        assert not query(path, "SELECT 1 FROM classi WHERE anno IS NULL OR sezione IS NULL")
        assert not query(path, "SELECT 1 FROM lezioni WHERE ora IS NULL OR giorno IS NULL")


def test_values_fit_their_mysql_types(scuola: Path, tmp_path: Path) -> None:
    literals = {
        "cognome": ["Abbondanzieri"],
        "stipendio": [-5, 123456.78],
        "giorno": ["sabato"],
        "": ["x" * 40],
    }
    for path in neighbours(scuola, tmp_path, range(30), literals=literals):
        assert set(column(path, "docenti", "ruolo")) <= {"titolare", "supplente", "sostegno"}
        assert set(column(path, "lezioni", "giorno")) <= {
            "lunedì",
            "martedì",
            "mercoledì",
            "giovedì",
            "venerdì",
        }
        assert all(len(name) <= 12 for name in column(path, "docenti", "cognome"))  # narrowed by ALTER TABLE
        assert all(len(room) <= 12 for room in column(path, "classi", "aula"))
        assert all(len(letter) == 1 for letter in column(path, "studenti", "sezione"))
        salaries = [s for s in column(path, "docenti", "stipendio") if s is not None]
        assert all(0 <= salary <= 99999.99 for salary in salaries)  # DECIMAL(7,2) UNSIGNED
        averages = [m for m in column(path, "studenti", "media") if m is not None]
        assert all(-99.99 <= average <= 99.99 for average in averages)  # DECIMAL(4,2)
        assert all(0 <= year <= 255 for year in column(path, "classi", "anno"))  # TINYINT UNSIGNED
        assert set(column(path, "studenti", "pendolare")) <= {0, 1}  # TINYINT(1): a boolean
        assert all(value >= 1 for value in column(path, "docenti", "id"))  # 0 would be renumbered


def test_a_column_named_by_a_check_constraint_keeps_values_of_original_rows(
    scuola: Path, tmp_path: Path
) -> None:
    marks = set()
    for path in neighbours(scuola, tmp_path, range(30), literals={"voto": [3, 11]}):
        marks |= set(column(path, "voti", "voto"))
    assert marks <= {4, 5, 6, 7, 8, 9, 10}
    assert len(marks) > 1


def test_text_with_quotes_and_backslashes_survives_the_dump(scuola_neighbours: list[Path]) -> None:
    rooms = set()
    for path in scuola_neighbours[:30]:
        rooms |= set(column(path, "classi", "aula"))
    assert {"L'Aquila", "Lab\\Chimica"} <= rooms
    assert rooms <= {
        variant
        for room in ("Aula 1", "Aula 2", "L'Aquila", "Lab\\Chimica")
        for variant in (room, room.upper(), room.lower())
    }


# --- Values and rows ---------------------------------------------------------------------------------------


def test_the_gold_literals_appear_in_their_columns(scuola: Path, tmp_path: Path) -> None:
    literals = {
        "cognome": {"Esposito"},
        "stipendio": [Decimal("1500.50")],
        "nato_il": ["2012-2-29"],
        "": ["Zanetti"],
    }
    copies = neighbours(scuola, tmp_path, range(8), literals=literals)
    assert any("Esposito" in column(path, "docenti", "cognome") for path in copies)
    assert any(1500.5 in column(path, "docenti", "stipendio") for path in copies)
    assert any("2012-02-29" in column(path, "studenti", "nato_il") for path in copies)  # as MySQL stores it
    # A literal tied to no column goes to the text columns.
    assert any(
        "Zanetti" in column(path, "studenti", "nome") + column(path, "voti", "materia") for path in copies
    )


def test_values_are_drawn_near_the_original_ones(scuola_neighbours: list[Path]) -> None:
    copies = scuola_neighbours[:30]
    salaries = {s for path in copies for s in column(path, "docenti", "stipendio")}
    births = {d for path in copies for d in column(path, "studenti", "nato_il")}
    surnames = {s for path in copies for s in column(path, "docenti", "cognome")}
    hours = {h for path in copies for h in column(path, "lezioni", "ora")}
    assert {1851.0, 1849.0, 1420.51} & salaries  # ±1, ± one cent
    assert {"2012-03-13", "2012-03-15", "2013-01-01"} & births  # ±1 day, over the new year too
    assert {"ROSSI", "rossi", "BIANCHI", "bianchi"} & surnames  # the case of a string changed
    assert {"08:29:00", "08:31:00", "10:29:00", "10:31:00"} & hours
    assert None in salaries  # the column is nullable


def test_tables_are_sometimes_empty_sometimes_a_single_row_and_sometimes_repeat_values(
    scuola_neighbours: list[Path],
) -> None:
    copies = scuola_neighbours[:40]
    counts = [
        dict(zip(TABLES, (len(query(p, f"SELECT 1 FROM {t}")) for t in TABLES), strict=True)) for p in copies
    ]
    assert any(0 in c.values() for c in counts)
    assert any(1 in c.values() for c in counts)
    assert any(c["studenti"] >= 3 for c in counts)
    # Several rows share a value (GROUP BY, DISTINCT, ties under ORDER BY ... LIMIT).
    assert any(query(p, "SELECT nome FROM studenti GROUP BY nome HAVING COUNT(*) > 2") for p in copies)
    assert any(query(p, "SELECT media FROM studenti GROUP BY media HAVING COUNT(*) > 2") for p in copies)


def test_row_counts_stay_within_max_rows(scuola: Path, scuola_neighbours: list[Path], tmp_path: Path) -> None:
    for path in neighbours(scuola, tmp_path, range(20), max_rows=3):
        assert all(len(query(path, f"SELECT 1 FROM {table}")) <= 3 for table in TABLES)
    for path in scuola_neighbours[20:40]:
        assert all(len(query(path, f"SELECT 1 FROM {table}")) <= 30 for table in TABLES)
    empty = neighbour_of(scuola, SCUOLA, "vuoto", max_rows=0)
    assert "INSERT" not in empty
    assert all(not query(built(empty, tmp_path / "vuoto.sqlite3"), f"SELECT 1 FROM {t}") for t in TABLES)


def test_the_same_seed_gives_the_same_text_and_the_same_file(scuola: Path, tmp_path: Path) -> None:
    literals = {"cognome": {"Esposito", "Russo", "Ferrari"}, "": {"Zanetti", 7, 2.5}}
    first = neighbour_of(scuola, SCUOLA, "stesso", literals=literals)
    second = neighbour_of(scuola, SCUOLA, "stesso", literals=literals)
    assert first == second
    files = [built(text, tmp_path / f"{n}.sqlite3") for n, text in enumerate((first, second))]
    assert hashlib.sha256(files[0].read_bytes()).digest() == hashlib.sha256(files[1].read_bytes()).digest()


def test_different_seeds_give_different_data(scuola: Path) -> None:
    texts = {neighbour_of(scuola, SCUOLA, f"seme-{seed}") for seed in range(10)}
    assert len(texts) == 10


# --- Other schemas -----------------------------------------------------------------------------------------


def test_a_schema_whose_last_statement_has_no_semicolon_gets_its_data(tmp_path: Path) -> None:
    original = built(
        "CREATE TABLE citta (id INT PRIMARY KEY, nome VARCHAR(20));\n"
        "INSERT INTO citta VALUES (1, 'Roma'), (2, 'Milano');",
        tmp_path / "citta.sqlite3",
    )
    schema = "CREATE TABLE citta (id INT PRIMARY KEY, nome VARCHAR(20))\n-- fine"
    sizes = []
    for seed in range(10):
        text = neighbour_dump(original=original, schema_text=schema, seed=str(seed))
        sizes.append(len(query(built(text, tmp_path / "n.sqlite3"), "SELECT 1 FROM citta")))
    assert max(sizes) > 0


def test_a_sqlite_database_gets_a_sqlite_neighbour(tmp_path: Path) -> None:
    dump = (
        "CREATE TABLE negozi (id INTEGER PRIMARY KEY, nome TEXT NOT NULL UNIQUE, citta TEXT);\n"
        "CREATE TABLE vendite (id INTEGER PRIMARY KEY, negozio INTEGER NOT NULL REFERENCES negozi (id), importo REAL);\n"
        "INSERT INTO negozi VALUES (1, 'Bottega \\ Rossi', 'Roma'), (2, 'Emporio ''Lupo''', NULL);\n"
        "INSERT INTO vendite VALUES (1, 1, 12.5), (2, 2, 7), (3, 1, 0.25);\n"
    )
    original = built(dump, tmp_path / "negozi.sqlite3", source="sqlite")
    names = set()
    for seed in range(20):
        text = neighbour_dump(
            original=original, schema_text=schema_text(dump, source="sqlite"), seed=str(seed), source="sqlite"
        )
        path = built(text, tmp_path / "n.sqlite3", source="sqlite")
        assert foreign_key_violations(path) == 0
        names |= set(column(path, "negozi", "nome"))
    assert {"Bottega \\ Rossi", "Emporio 'Lupo'"} <= names


def test_it_refuses_a_schema_text_that_lacks_a_column_of_the_original(scuola: Path) -> None:
    with pytest.raises(ValueError, match="classi.aula"):
        neighbour_dump(
            original=scuola, schema_text="CREATE TABLE classi (anno INT, sezione CHAR(1));", seed="x"
        )


# --- The demo benchmark ------------------------------------------------------------------------------------


@pytest.fixture
def demo_copies(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    copies = {}
    for database, _ in demo_database_sources():
        copies[database.slug] = (built(database.dump, tmp_path / f"{database.slug}.sqlite3"), database.dump)
    return copies


def test_neighbours_of_the_demo_databases_build_and_keep_their_foreign_keys(
    demo_copies: dict, tmp_path: Path
) -> None:
    for slug, (original, dump) in demo_copies.items():
        for seed in range(20):
            path = built(neighbour_of(original, dump, f"{slug}-{seed}"), tmp_path / "n.sqlite3")
            assert foreign_key_violations(path) == 0, (slug, seed)
            assert read_shape(path) == read_shape(original)


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement SQLite runs on a connection opened from here on, in order."""
    ran: list[str] = []
    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection = connect(*args, **kwargs)
        connection.set_trace_callback(ran.append)
        return connection

    monkeypatch.setattr(sqlite3, "connect", traced)
    return ran


def test_a_neighbour_of_a_demo_database_reads_each_table_of_the_original_once(
    demo_copies: dict, statements: list[str]
) -> None:
    """One pass over the original, whatever the seed: what keeps a neighbour well under 50 ms
    (`python -m benchmarks.kernel_speed` times it)."""
    original, dump = demo_copies["biblioteca"]  # 5 tables, 100 rows
    for seed in range(5):
        statements.clear()
        neighbour_dump(original=original, schema_text=schema_text(dump), seed=str(seed))
        reads = sorted(re.findall(r'FROM "(\w+)" ORDER BY rowid', " ".join(statements)))
        assert reads == sorted(table.name for table in read_shape(original))


def test_a_source_read_once_gives_each_seed_the_neighbour_it_gives_alone(
    scuola: Path, statements: list[str]
) -> None:
    """A suite draws its 40 candidates from one source: the original is read once for all of them."""
    literals = {"cognome": {"Rossi"}, "media": {Decimal("8.5")}}
    source = NeighbourSource(original=scuola, schema_text=schema_text(SCUOLA), literals=literals)
    reads = len(statements)
    drawn = [source.neighbour(str(seed)) for seed in range(5)]
    assert len(statements) == reads  # nothing more read for the neighbours themselves
    assert drawn == [neighbour_of(scuola, SCUOLA, str(seed), literals=literals) for seed in range(5)]


# A city table larger than a sample, a few of whose rows hold the gold's literal, and a table of people
# living in them that no gold reads.
CITTA_ROWS, ABITANTI_ROWS, LISBOA = 3_000, 4_000, (7, 1_500, 2_999)
CITTA = (
    "CREATE TABLE citta (id INT NOT NULL PRIMARY KEY, nome VARCHAR(20) NOT NULL, abitanti INT NOT NULL);\n"
    "CREATE TABLE abitanti (id INT NOT NULL PRIMARY KEY, citta_id INT NOT NULL,\n"
    "  FOREIGN KEY (citta_id) REFERENCES citta (id));\n"
    "INSERT INTO citta VALUES "
    + ",".join(
        f"({n}, '{'Lisboa' if n in LISBOA else f'Citta {n}'}', {n * 10})" for n in range(1, CITTA_ROWS + 1)
    )
    + ";\nINSERT INTO abitanti VALUES "
    + ",".join(f"({n}, {n % CITTA_ROWS + 1})" for n in range(1, ABITANTI_ROWS + 1))
    + ";\n"
)


@pytest.fixture(scope="module")
def citta(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built(CITTA, tmp_path_factory.mktemp("citta") / "citta.sqlite3")


def citta_source(original: Path, sample_seed: str = "s") -> NeighbourSource:
    return NeighbourSource(
        original=original,
        schema_text=schema_text(CITTA),
        literals={"nome": {"LISBOA"}},
        read_tables={"CITTA"},
        sample_seed=sample_seed,
    )


def test_a_table_a_gold_reads_is_drawn_from_a_sample_holding_the_rows_with_its_literals(citta: Path) -> None:
    sample = citta_source(citta).sample("citta")
    assert len(sample) == SAMPLE_READ < CITTA_ROWS
    assert {row[0] for row in sample if row[1] == "Lisboa"} == set(LISBOA)
    assert [row[0] for row in sample] == sorted(row[0] for row in sample)  # in the table's order


def test_a_table_no_gold_reads_gets_a_smaller_sample_joined_to_its_parents_sample(citta: Path) -> None:
    source = citta_source(citta)
    cities = {row[0] for row in source.sample("citta")}
    people = source.sample("abitanti")
    assert len(people) == SAMPLE_UNREAD
    assert all(city in cities for _, city in people)


def test_the_same_sample_seed_gives_the_same_sample_and_another_seed_another(citta: Path) -> None:
    assert citta_source(citta).sample("citta") == citta_source(citta).sample("citta")
    assert citta_source(citta).neighbour("1") == citta_source(citta).neighbour("1")
    assert citta_source(citta).sample("citta") != citta_source(citta, sample_seed="t").sample("citta")


def test_a_neighbour_of_a_mysqldump_dump_leaves_out_its_triggers_and_generated_columns(
    tmp_path: Path,
) -> None:
    original = built(BIBLIOTECA, tmp_path / "biblioteca.sqlite3")
    for seed in range(10):
        text = neighbour_of(original, BIBLIOTECA, f"biblioteca-{seed}")
        assert "CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER" not in text
        assert "CREATE DEFINER=`root`@`localhost` PROCEDURE `restituisci`" in text  # the rest as written
        assert "`nominativo`" not in text.split("INSERT INTO `autori`")[-1].split(";")[0]
        neighbour = built(text, tmp_path / "n.sqlite3")
        assert read_shape(neighbour) == read_shape(original)
        assert query(neighbour, "SELECT COUNT(*) FROM autori WHERE nominativo <> nome || ' ' || cognome") == [
            (0,)
        ]


# --- MariaDB -------------------------------------------------------------------------------------------------


def mariadb_agrees(url: str, text: str, path: Path) -> bool:
    """MariaDB loads the neighbour (strictly: STRICT_TRANS_TABLES) and holds as many rows as SQLite."""
    with load_dump(url, text) as reference:
        for table in read_shape(path):
            counted = reference.run(f"SELECT COUNT(*) FROM `{table.name}`")[1][0][0]
            if counted != len(query(path, f'SELECT 1 FROM "{table.name}"')):
                return False
    return True


@pytest.mark.mariadb
def test_mariadb_loads_neighbours_of_the_invented_database(
    reference_url: str, scuola: Path, tmp_path: Path
) -> None:
    # Too long, negative for an UNSIGNED column, or 12 characters in 24 bytes: MariaDB counts characters.
    literals = {
        "cognome": ["Esposito", "Abbondanzieri"],
        "stipendio": [-1, 1500.5],
        "": ["Zanetti", "ü" * 12, "ü" * 13],
    }
    for seed in range(10):
        text = neighbour_of(scuola, SCUOLA, f"seme-{seed}", literals=literals)
        assert mariadb_agrees(reference_url, text, built(text, tmp_path / "n.sqlite3")), seed


@pytest.mark.mariadb
def test_mariadb_loads_neighbours_of_a_mysqldump_dump(reference_url: str, tmp_path: Path) -> None:
    dump = BIBLIOTECA.replace("utf8mb4_0900_ai_ci", "utf8mb4_unicode_ci")  # MariaDB 10.11 lacks it
    original = built(dump, tmp_path / "biblioteca.sqlite3")
    for seed in range(MARIADB_SEEDS):
        text = neighbour_of(original, dump, f"biblioteca-{seed}")
        assert mariadb_agrees(reference_url, text, built(text, tmp_path / "n.sqlite3")), seed


@pytest.mark.mariadb
def test_mariadb_loads_neighbours_of_the_demo_databases(
    reference_url: str, demo_copies: dict, tmp_path: Path
) -> None:
    for slug, (original, dump) in demo_copies.items():
        for seed in range(MARIADB_SEEDS):
            text = neighbour_of(original, dump, f"{slug}-{seed}")
            assert mariadb_agrees(reference_url, text, built(text, tmp_path / "n.sqlite3")), (slug, seed)


# --- The real archive (nothing of it is printed) -----------------------------------------------------------

ARCHIVE_SEEDS = 20


def quietly(what: str, action: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run `action`; if it fails, fail naming `what` and the kind of error only: its message may quote the archive."""
    try:
        return action(*args, **kwargs)
    except Exception as error:  # whatever it is, its message may quote the archive's SQL
        problem = f"{what}: {type(error).__name__}"
    pytest.fail(problem, pytrace=False)


@pytest.fixture(scope="module")
def termite_neighbours(
    termite_archive: Path, tmp_path_factory: pytest.TempPathFactory
) -> list[tuple[str, str, Path]]:
    """Each database's neighbours, built once for the tests below: (what, for a failure message: slug and
    seed; its text; its built copy)."""
    folder = tmp_path_factory.mktemp("termite")
    source = quietly("reading the archive", read_termite_archive, termite_archive, TERMITE_PASSWORD)
    neighbours = []
    for database in source.databases:
        original = folder / f"{database.slug}.sqlite3"
        quietly(f"building {database.slug}", build_sqlite, database.dump, original)
        schema = schema_text(database.dump)
        for seed in range(ARCHIVE_SEEDS):
            what = f"{database.slug} seed {seed}"
            text = quietly(what, neighbour_dump, original=original, schema_text=schema, seed=what)
            neighbours.append(
                (what, text, quietly(what, built, text, folder / f"{database.slug}-{seed}.sqlite3"))
            )
    return neighbours


@pytest.mark.termite_archive
def test_neighbours_of_every_termite_database_build_and_keep_their_foreign_keys(
    termite_neighbours: list[tuple[str, str, Path]],
) -> None:
    assert len(termite_neighbours) == 10 * ARCHIVE_SEEDS  # ten databases
    failing = sorted(
        what for what, _, path in termite_neighbours if quietly(what, foreign_key_violations, path)
    )
    assert failing == []


@pytest.mark.termite_archive
@pytest.mark.mariadb
def test_mariadb_loads_neighbours_of_every_termite_database(
    reference_url: str, termite_neighbours: list[tuple[str, str, Path]]
) -> None:
    failing = [
        what
        for what, text, path in termite_neighbours
        if not quietly(what, mariadb_agrees, reference_url, text, path)
    ]
    assert failing == []
