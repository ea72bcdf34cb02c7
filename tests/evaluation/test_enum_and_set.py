"""ENUM and SET columns, FIND_IN_SET, and MATCH ... AGAINST, as MySQL 8.0 evaluates them (dialect.to_sqlite).

A copy stores an ENUM's or SET's value as its text and keeps the column's MySQL type in a comment of its
schema (`column_types.member_comment`), which `read_schema` gives back: the transpiler takes an ENUM as the
position of its member and a SET as the bits of its members wherever MySQL takes a number (ORDER BY,
arithmetic, a comparison with a number, a bit operation, a condition), and as its text anywhere else.

The MariaDB tests run each construct on the reference server too (TERMITE_REFERENCE_MYSQL_URL) and want its
rows; where MariaDB 10.11 answers otherwise than MySQL 8.0, the test says which and why.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluation.scoring.column_types import read_schema
from evaluation.scoring.dialect import TranspileError, to_sqlite
from evaluation.scoring.fidelity import AGREE, compare_engines
from evaluation.scoring.functions import install_functions
from evaluation.scoring.mysql_dump import build_sqlite
from evaluation.scoring.reference import ReferenceDatabase, load_dump
from tests.evaluation.mysql_copy import rows
from tests.services import require_service

# An invented farm stay: the members of `stato` are not in alphabetical order, and one ('Chiusa') has a
# capital letter, given in lower case by an INSERT.
AGRITURISMO = """
CREATE TABLE camere (
  id INT PRIMARY KEY,
  nome VARCHAR(30) NOT NULL,
  stato ENUM('libera','occupata','pulizia','Chiusa') NOT NULL,
  servizi SET('wifi','colazione','parcheggio','Piscina'),
  piano ENUM('terra','primo','secondo')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
INSERT INTO camere VALUES
  (1, 'Girasole', 'occupata', 'parcheggio,wifi', 'primo'),
  (2, 'Lavanda', 'libera', '', 'terra'),
  (3, 'Ulivo', 'pulizia', 'colazione', NULL),
  (4, 'Vigna', 'libera', NULL, 'secondo'),
  (5, 'Fienile', 'chiusa', 'wifi,colazione,parcheggio,piscina', 'terra'),
  (6, 'Rosmarino', 'occupata', 'piscina', 'primo');
"""


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("agriturismo") / "agriturismo.sqlite3"
    build_sqlite(AGRITURISMO, path)
    return path


@pytest.fixture(scope="module")
def conn(copy: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(copy)
    install_functions(connection)
    yield connection
    connection.close()


# --- The type reaches the transpiler ---------------------------------------------------------------------


def test_a_copy_gives_the_transpiler_the_members_of_its_enum_and_set_columns(conn) -> None:
    assert read_schema(conn)["camere"] == {
        "id": "INTEGER",
        "nome": "VARCHAR(30) COLLATE utf8mb4_0900_ai_ci",
        "stato": "ENUM('libera','occupata','pulizia','Chiusa') COLLATE utf8mb4_0900_ai_ci",
        "servizi": "SET('wifi','colazione','parcheggio','Piscina') COLLATE utf8mb4_0900_ai_ci",
        "piano": "ENUM('terra','primo','secondo') COLLATE utf8mb4_0900_ai_ci",
    }
    assert [row[1:3] for row in conn.execute("SELECT * FROM pragma_table_info('camere')")][2:4] == [
        ("stato", "TEXT"),
        ("servizi", "TEXT"),
    ]


def test_members_with_quotes_backslashes_and_comment_ends_reach_the_transpiler_unchanged(tmp_path) -> None:
    dump = (
        "CREATE TABLE voci (id INT PRIMARY KEY, tipo ENUM('l''ala','a\\\\b','fine */ qui','(x)') COLLATE utf8mb4_bin);"
        "INSERT INTO voci VALUES (1, '(x)'), (2, 'l''ala'), (3, 'fine */ qui'), (4, 'a\\\\b');"
    )
    path = tmp_path / "voci.sqlite3"
    build_sqlite(dump, path)
    with sqlite3.connect(path) as connection:
        schema = read_schema(connection)
    assert schema["voci"]["tipo"] == "ENUM('l''ala','a\\\\b','fine *\\/ qui','(x)') COLLATE utf8mb4_bin"
    sql = to_sqlite("SELECT id FROM voci ORDER BY tipo", schema=schema)
    assert "'l''ala', 'a\\b', 'fine */ qui', '(x)'" in sql


def test_a_schema_without_enum_or_set_columns_is_left_as_before() -> None:
    schema = {"camere": {"id": "INTEGER", "nome": "TEXT"}}
    assert to_sqlite("SELECT nome FROM camere ORDER BY nome", schema=schema) == (
        "SELECT nome FROM camere ORDER BY nome"
    )


# --- ENUM ----------------------------------------------------------------------------------------------------


def test_order_by_an_enum_follows_its_declared_order_not_the_alphabet(conn) -> None:
    assert rows(conn, "SELECT nome FROM camere ORDER BY stato, id") == [
        ("Lavanda",),
        ("Vigna",),
        ("Girasole",),
        ("Rosmarino",),
        ("Ulivo",),
        ("Fienile",),
    ]
    assert rows(conn, "SELECT id FROM camere ORDER BY piano DESC, id") == [(4,), (1,), (6,), (2,), (5,), (3,)]


def test_every_order_by_of_an_enum_follows_its_declared_order(conn) -> None:
    assert rows(conn, "SELECT id, ROW_NUMBER() OVER (ORDER BY stato DESC, id) FROM camere ORDER BY id") == [
        (1, 3),
        (2, 5),
        (3, 2),
        (4, 6),
        (5, 1),
        (6, 4),
    ]
    assert rows(conn, "SELECT GROUP_CONCAT(DISTINCT stato ORDER BY stato) FROM camere") == [
        ("libera,occupata,pulizia,Chiusa",)
    ]
    assert rows(conn, "SELECT DISTINCT stato AS s FROM camere ORDER BY s") == [
        ("libera",),
        ("occupata",),
        ("pulizia",),
        ("Chiusa",),
    ]
    assert rows(
        conn, "SELECT s FROM (SELECT stato AS s, id FROM camere) AS x ORDER BY s DESC, id LIMIT 2"
    ) == [
        ("Chiusa",),
        ("pulizia",),
    ]


def test_order_by_the_position_of_an_enum_column_follows_its_declared_order(conn) -> None:
    assert rows(conn, "SELECT stato AS s, COUNT(*) FROM camere GROUP BY stato ORDER BY 1 DESC") == [
        ("Chiusa", 1),
        ("pulizia", 1),
        ("occupata", 2),
        ("libera", 2),
    ]


def test_a_union_orders_its_enum_column_as_text(conn) -> None:
    # The result of a UNION has no ENUM column: MySQL sorts its values as strings.
    assert rows(conn, "SELECT stato FROM camere UNION SELECT stato FROM camere ORDER BY stato") == [
        ("Chiusa",),
        ("libera",),
        ("occupata",),
        ("pulizia",),
    ]


def test_an_enum_in_numeric_context_is_the_position_of_its_member(conn) -> None:
    assert rows(conn, "SELECT id, stato + 0, CAST(stato AS SIGNED), piano & 1 FROM camere ORDER BY id") == [
        (1, 2, 2, 0),
        (2, 1, 1, 1),
        (3, 3, 3, None),
        (4, 1, 1, 1),
        (5, 4, 4, 1),
        (6, 2, 2, 0),
    ]


def test_an_enum_compared_with_a_number_compares_its_position(conn) -> None:
    assert rows(conn, "SELECT id FROM camere WHERE stato = 2 ORDER BY id") == [(1,), (6,)]
    assert rows(conn, "SELECT id FROM camere WHERE 3 < stato") == [(5,)]
    assert rows(conn, "SELECT id FROM camere WHERE stato IN (1, 4) ORDER BY id") == [(2,), (4,), (5,)]
    assert rows(conn, "SELECT id FROM camere WHERE stato BETWEEN 2 AND 3 ORDER BY id") == [(1,), (3,), (6,)]


def test_an_enum_compared_with_a_string_compares_text_under_its_collation(conn) -> None:
    assert rows(conn, "SELECT id FROM camere WHERE stato = 'LIBERA' ORDER BY id") == [(2,), (4,)]
    assert rows(conn, "SELECT id FROM camere WHERE stato < 'm' ORDER BY id") == [(2,), (4,), (5,)]
    assert rows(conn, "SELECT id FROM camere WHERE stato IN ('pulizia', 'chiusa') ORDER BY id") == [
        (3,),
        (5,),
    ]
    assert rows(conn, "SELECT id FROM camere WHERE stato LIKE '%a' ORDER BY id") == [
        (1,),
        (2,),
        (3,),
        (4,),
        (5,),
        (6,),
    ]


def test_min_and_max_of_an_enum_compare_its_text(conn) -> None:
    # MySQL 8.0 Reference Manual, "Aggregate Function Descriptions": MAX() and MIN() compare an ENUM or
    # SET column by its string value, not by the relative position of the string in the set.
    assert rows(conn, "SELECT MIN(stato), MAX(stato) FROM camere") == [("Chiusa", "pulizia")]


def test_arithmetic_sum_and_avg_take_an_enum_as_a_double(conn) -> None:
    # MySQL 8.0 takes a string column in arithmetic as a DOUBLE (Item::numeric_context_result_type), the
    # member's position for an ENUM: no DECIMAL rounding of a division.
    assert rows(conn, "SELECT stato / 3, stato - 3, stato * 1.5 FROM camere WHERE id = 1") == [
        (2 / 3, -1.0, 3.0)
    ]
    assert rows(conn, "SELECT SUM(stato), AVG(piano) FROM camere") == [(13.0, 1.8)]


def test_an_enum_as_a_condition_is_true_for_every_member(conn) -> None:
    assert rows(conn, "SELECT COUNT(*) FROM camere WHERE piano") == [(5,)]
    assert rows(conn, "SELECT COUNT(*) FROM camere WHERE NOT stato") == [(0,)]


# --- SET -----------------------------------------------------------------------------------------------------


def test_a_set_is_stored_with_its_members_in_declared_order_and_compares_as_that_text(conn) -> None:
    assert rows(conn, "SELECT servizi FROM camere WHERE id IN (1, 5) ORDER BY id") == [
        ("wifi,parcheggio",),
        ("wifi,colazione,parcheggio,Piscina",),
    ]
    assert rows(conn, "SELECT id FROM camere WHERE servizi = 'WIFI,parcheggio'") == [(1,)]
    assert rows(conn, "SELECT id FROM camere WHERE servizi = 'parcheggio,wifi'") == []
    assert rows(conn, "SELECT id FROM camere WHERE servizi LIKE '%wifi%' ORDER BY id") == [(1,), (5,)]


def test_a_set_in_numeric_context_is_the_bits_of_its_members(conn) -> None:
    assert rows(conn, "SELECT id, servizi + 0, servizi & 1, servizi | 16 FROM camere ORDER BY id") == [
        (1, 5, 1, 21),
        (2, 0, 0, 16),
        (3, 2, 0, 18),
        (4, None, None, None),
        (5, 15, 1, 31),
        (6, 8, 0, 24),
    ]
    assert rows(conn, "SELECT id FROM camere WHERE servizi = 2") == [(3,)]
    assert rows(conn, "SELECT id FROM camere WHERE servizi & 4 ORDER BY id") == [(1,), (5,)]
    assert rows(conn, "SELECT AVG(servizi) FROM camere") == [(6.0,)]


def test_order_by_a_set_follows_its_number(conn) -> None:
    assert rows(conn, "SELECT id FROM camere ORDER BY servizi, id") == [(4,), (2,), (3,), (1,), (6,), (5,)]


# --- FIND_IN_SET ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("FIND_IN_SET('b', 'a,b,c')", 2),
        ("FIND_IN_SET('B', 'a,b,c')", 2),
        ("FIND_IN_SET('d', 'a,b,c')", 0),
        ("FIND_IN_SET('b,c', 'a,b,c')", 0),
        ("FIND_IN_SET('', 'a,,c')", 2),
        ("FIND_IN_SET('', '')", 0),
        ("FIND_IN_SET('b ', 'a,b')", 0),
        ("FIND_IN_SET(2, '1,2,3')", 2),
        ("FIND_IN_SET(NULL, 'a,b')", None),
        ("FIND_IN_SET('a', NULL)", None),
    ],
)
def test_find_in_set_is_the_position_in_a_comma_separated_list(conn, call: str, expected: int | None) -> None:
    assert rows(conn, f"SELECT {call}") == [(expected,)]


def test_find_in_set_over_a_set_column_counts_the_rows_holding_a_member(conn) -> None:
    assert rows(conn, "SELECT COUNT(*) FROM camere WHERE FIND_IN_SET('wifi', servizi) > 0") == [(2,)]
    assert rows(conn, "SELECT COUNT(*) FROM camere WHERE FIND_IN_SET('PISCINA', servizi)") == [(2,)]


def test_find_in_set_of_a_member_in_a_set_column_is_its_declared_position(conn) -> None:
    # MySQL tests the member's bit and answers its position among the declared members, not its place
    # in the value: 'parcheggio' is the third member, and the second of 'wifi,parcheggio'.
    assert rows(conn, "SELECT id, FIND_IN_SET('parcheggio', servizi) FROM camere ORDER BY id") == [
        (1, 3),
        (2, 0),
        (3, 0),
        (4, None),
        (5, 3),
        (6, 0),
    ]


# --- MATCH ... AGAINST ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("check_conformance", [False, True], ids=["gold", "prediction"])
def test_match_against_is_refused_before_anything_runs(conn, check_conformance: bool) -> None:
    query = "SELECT nome FROM camere WHERE MATCH (nome) AGAINST ('ulivo' IN NATURAL LANGUAGE MODE)"
    with pytest.raises(TranspileError, match=r"full-text search\) is not supported by the portal's scorer"):
        to_sqlite(query, schema=read_schema(conn), check_conformance=check_conformance)


# --- Against MariaDB -----------------------------------------------------------------------------------------

# Each construct, with MariaDB's rows wanted on the copy.
AGREEING = {
    "order_by_an_enum": "SELECT nome FROM camere ORDER BY stato, id",
    "order_by_an_enum_desc": "SELECT id FROM camere ORDER BY piano DESC, id",
    "order_by_a_set": "SELECT id FROM camere ORDER BY servizi, id",
    "order_by_an_alias_of_an_enum": "SELECT DISTINCT stato AS s FROM camere ORDER BY s",
    "order_by_an_enum_of_a_derived_table": "SELECT s FROM (SELECT stato AS s, id FROM camere) AS x ORDER BY s, id",
    "order_by_the_position_of_an_enum": "SELECT stato AS s, COUNT(*) FROM camere GROUP BY stato ORDER BY 1 DESC",
    "window_order_by_an_enum": "SELECT id, ROW_NUMBER() OVER (ORDER BY stato DESC, id) FROM camere",
    "group_concat_order_by_an_enum": "SELECT GROUP_CONCAT(nome ORDER BY stato, id) FROM camere",
    "union_orders_as_text": "SELECT stato FROM camere UNION SELECT stato FROM camere ORDER BY stato",
    "enum_plus_zero": "SELECT id, stato + 0, piano + 0 FROM camere",
    "enum_cast_as_signed": "SELECT id, CAST(stato AS SIGNED), CAST(piano AS UNSIGNED) FROM camere",
    "enum_bit_operation": "SELECT id, stato & 1, stato | 8 FROM camere",
    "enum_equals_a_number": "SELECT id FROM camere WHERE stato = 2",
    "number_equals_an_enum": "SELECT id FROM camere WHERE 3 < stato",
    "enum_in_numbers": "SELECT id FROM camere WHERE stato IN (1, 4)",
    "enum_between_numbers": "SELECT id FROM camere WHERE stato BETWEEN 2 AND 3",
    "enum_equals_a_string": "SELECT id FROM camere WHERE stato = 'LIBERA'",
    "enum_less_than_a_string": "SELECT id FROM camere WHERE stato < 'm'",
    "enum_in_strings": "SELECT id FROM camere WHERE stato IN ('pulizia', 'chiusa')",
    "enum_like": "SELECT id FROM camere WHERE stato LIKE 'p%'",
    "enum_min_max": "SELECT MIN(stato), MAX(stato) FROM camere",
    "enum_group_by": "SELECT stato, COUNT(*) FROM camere GROUP BY stato",
    "enum_as_a_condition": "SELECT id FROM camere WHERE piano",
    "enum_sum": "SELECT SUM(stato) FROM camere",
    "enum_subtraction": "SELECT id, stato - 3, -piano FROM camere",
    "set_as_stored": "SELECT id, servizi FROM camere",
    "set_equals_a_string": "SELECT id FROM camere WHERE servizi = 'WIFI,parcheggio'",
    "set_like": "SELECT id FROM camere WHERE servizi LIKE '%wifi%'",
    "set_plus_zero": "SELECT id, servizi + 0 FROM camere",
    "set_bit_operations": "SELECT id, servizi & 6, servizi | 16, servizi << 1 FROM camere",
    "set_equals_a_number": "SELECT id FROM camere WHERE servizi = 2",
    "set_bit_as_a_condition": "SELECT id FROM camere WHERE servizi & 4",
    "set_as_a_condition": "SELECT id FROM camere WHERE servizi",
    "find_in_set_over_a_set": "SELECT COUNT(*) FROM camere WHERE FIND_IN_SET('wifi', servizi) > 0",
    "find_in_set_of_a_member": "SELECT id, FIND_IN_SET('parcheggio', servizi), FIND_IN_SET('PISCINA', servizi) FROM camere",
    "find_in_set_of_no_member": "SELECT id, FIND_IN_SET('sauna', servizi), FIND_IN_SET('', servizi) FROM camere",
    "find_in_set_of_a_column": "SELECT id, FIND_IN_SET(piano, 'terra,primo') FROM camere",
    "find_in_set_of_strings": "SELECT FIND_IN_SET('b', 'a,b,c'), FIND_IN_SET('B', 'a,b,c'), FIND_IN_SET('b,c', 'a,b,c'), FIND_IN_SET('', 'a,,c'), FIND_IN_SET('', ''), FIND_IN_SET(2, '1,2,3'), FIND_IN_SET(NULL, 'a')",
}


@pytest.fixture(scope="module")
def reference() -> Iterator[ReferenceDatabase]:
    with load_dump(require_service("TERMITE_REFERENCE_MYSQL_URL", 3306), AGRITURISMO) as database:
        yield database


@pytest.mark.mariadb
@pytest.mark.parametrize("query", AGREEING.values(), ids=AGREEING.keys())
def test_the_copy_answers_as_mariadb(reference: ReferenceDatabase, copy: Path, query: str) -> None:
    assert compare_engines(copy, reference, query).status == AGREE


@pytest.mark.mariadb
def test_a_division_of_an_enum_is_mysql_8_0s_double_where_mariadb_gives_a_decimal(
    reference: ReferenceDatabase, conn
) -> None:
    # MariaDB takes an ENUM in arithmetic as an integer (2 / 3 = 0.6667, a DECIMAL); MySQL 8.0 as a
    # DOUBLE, the numeric value of a string column (0.6666666666666666). MySQL 8.0 is followed.
    query = "SELECT stato / 3 FROM camere WHERE id = 1"
    assert reference.run(query)[1] == [(0.6667,)]
    assert rows(conn, query) == [(2 / 3,)]
