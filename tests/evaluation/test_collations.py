"""MySQL 8.0's utf8mb4 and utf8mb3 collations as SQLite collations, and `expr COLLATE name` in a query.

MySQL 8.0 accepts every collation of the text's character set (SHOW COLLATION: the manual's "Unicode
Character Sets" lists them) and refuses any other: a name it does not know is ERROR 1273, a collation of
another character set ERROR 1253 ("Character Set and Collation Compatibility": "each collation is
associated with one and only one character set"). A string literal has the connection's character set,
utf8mb4; a column, its own. The suffixes say what a collation compares ("Collation Naming Conventions"):
_ai/_as accents, _ci/_cs case, _bin code points; the _0900_ ones are NO PAD, the others PAD SPACE.
"""

from __future__ import annotations

import sqlite3

import pytest

from evaluation.scoring.collations import canonical_collation, collation_charset, install_collations
from evaluation.scoring.dialect import TranspileError, read_schema, to_sqlite
from tests.evaluation.mysql_copy import connected_copy, rows

# SHOW COLLATION WHERE Charset = 'utf8mb4' on MySQL 8.0 (8.0.30 and later): 89 names.
UTF8MB4 = """
utf8mb4_0900_ai_ci utf8mb4_0900_as_ci utf8mb4_0900_as_cs utf8mb4_0900_bin utf8mb4_bg_0900_ai_ci
utf8mb4_bg_0900_as_cs utf8mb4_bin utf8mb4_bs_0900_ai_ci utf8mb4_bs_0900_as_cs utf8mb4_croatian_ci
utf8mb4_cs_0900_ai_ci utf8mb4_cs_0900_as_cs utf8mb4_czech_ci utf8mb4_danish_ci utf8mb4_da_0900_ai_ci
utf8mb4_da_0900_as_cs utf8mb4_de_pb_0900_ai_ci utf8mb4_de_pb_0900_as_cs utf8mb4_eo_0900_ai_ci
utf8mb4_eo_0900_as_cs utf8mb4_esperanto_ci utf8mb4_estonian_ci utf8mb4_es_0900_ai_ci utf8mb4_es_0900_as_cs
utf8mb4_es_trad_0900_ai_ci utf8mb4_es_trad_0900_as_cs utf8mb4_et_0900_ai_ci utf8mb4_et_0900_as_cs
utf8mb4_general_ci utf8mb4_german2_ci utf8mb4_gl_0900_ai_ci utf8mb4_gl_0900_as_cs utf8mb4_hr_0900_ai_ci
utf8mb4_hr_0900_as_cs utf8mb4_hungarian_ci utf8mb4_hu_0900_ai_ci utf8mb4_hu_0900_as_cs utf8mb4_icelandic_ci
utf8mb4_is_0900_ai_ci utf8mb4_is_0900_as_cs utf8mb4_ja_0900_as_cs utf8mb4_ja_0900_as_cs_ks
utf8mb4_latvian_ci utf8mb4_la_0900_ai_ci utf8mb4_la_0900_as_cs utf8mb4_lithuanian_ci utf8mb4_lt_0900_ai_ci
utf8mb4_lt_0900_as_cs utf8mb4_lv_0900_ai_ci utf8mb4_lv_0900_as_cs utf8mb4_mn_cyrl_0900_ai_ci
utf8mb4_mn_cyrl_0900_as_cs utf8mb4_nb_0900_ai_ci utf8mb4_nb_0900_as_cs utf8mb4_nn_0900_ai_ci
utf8mb4_nn_0900_as_cs utf8mb4_persian_ci utf8mb4_pl_0900_ai_ci utf8mb4_pl_0900_as_cs utf8mb4_polish_ci
utf8mb4_romanian_ci utf8mb4_roman_ci utf8mb4_ro_0900_ai_ci utf8mb4_ro_0900_as_cs utf8mb4_ru_0900_ai_ci
utf8mb4_ru_0900_as_cs utf8mb4_sinhala_ci utf8mb4_sk_0900_ai_ci utf8mb4_sk_0900_as_cs utf8mb4_slovak_ci
utf8mb4_slovenian_ci utf8mb4_sl_0900_ai_ci utf8mb4_sl_0900_as_cs utf8mb4_spanish2_ci utf8mb4_spanish_ci
utf8mb4_sr_latn_0900_ai_ci utf8mb4_sr_latn_0900_as_cs utf8mb4_sv_0900_ai_ci utf8mb4_sv_0900_as_cs
utf8mb4_swedish_ci utf8mb4_tr_0900_ai_ci utf8mb4_tr_0900_as_cs utf8mb4_turkish_ci utf8mb4_unicode_520_ci
utf8mb4_unicode_ci utf8mb4_vietnamese_ci utf8mb4_vi_0900_ai_ci utf8mb4_vi_0900_as_cs utf8mb4_zh_0900_as_cs
""".split()  # noqa: SIM905
# SHOW COLLATION WHERE Charset = 'utf8mb3': 28 names.
UTF8MB3 = """
utf8mb3_bin utf8mb3_croatian_ci utf8mb3_czech_ci utf8mb3_danish_ci utf8mb3_esperanto_ci utf8mb3_estonian_ci
utf8mb3_general_ci utf8mb3_general_mysql500_ci utf8mb3_german2_ci utf8mb3_hungarian_ci utf8mb3_icelandic_ci
utf8mb3_latvian_ci utf8mb3_lithuanian_ci utf8mb3_persian_ci utf8mb3_polish_ci utf8mb3_romanian_ci
utf8mb3_roman_ci utf8mb3_sinhala_ci utf8mb3_slovak_ci utf8mb3_slovenian_ci utf8mb3_spanish2_ci
utf8mb3_spanish_ci utf8mb3_swedish_ci utf8mb3_tolower_ci utf8mb3_turkish_ci utf8mb3_unicode_520_ci
utf8mb3_unicode_ci utf8mb3_vietnamese_ci
""".split()  # noqa: SIM905


def test_every_collation_of_utf8mb4_and_utf8mb3_is_known_with_its_character_set() -> None:
    assert (len(UTF8MB4), len(UTF8MB3)) == (89, 28)
    assert all(canonical_collation(name) == name and collation_charset(name) == "utf8mb4" for name in UTF8MB4)
    assert all(canonical_collation(name) == name and collation_charset(name) == "utf8mb3" for name in UTF8MB3)


def test_utf8_names_are_the_utf8mb3_ones_and_case_does_not_matter() -> None:
    assert canonical_collation("utf8_unicode_ci") == "utf8mb3_unicode_ci"
    assert canonical_collation("UTF8MB4_BIN") == "utf8mb4_bin"
    assert canonical_collation("utf8mb4_foo_ci") is None
    assert canonical_collation("latin1_swedish_ci") is None


@pytest.fixture(scope="module")
def plain() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    install_collations(connection)
    return connection


def equal(conn: sqlite3.Connection, left: str, right: str, collation: str) -> bool:
    return conn.execute(f"SELECT ? = ? COLLATE {collation}", (left, right)).fetchone()[0] == 1


def ordered(conn: sqlite3.Connection, words: list[str], collation: str) -> list[str]:
    values = " UNION ALL ".join("SELECT ?" for _ in words)
    query = f"SELECT w FROM ({values.replace('SELECT ?', 'SELECT ? AS w', 1)}) ORDER BY w COLLATE {collation}"
    return [row[0] for row in conn.execute(query, words)]


@pytest.mark.parametrize(
    ("collation", "equalities"),
    [
        # accents and case ignored, trailing spaces kept (NO PAD); 'ß' is 'ss'
        ("utf8mb4_0900_ai_ci", {("a", "A"): True, ("é", "e"): True, ("a", "a "): False, ("ß", "ss"): True}),
        ("utf8mb4_sv_0900_ai_ci", {("a", "A"): True, ("é", "e"): True, ("a", "a "): False}),
        # accents count, case does not
        ("utf8mb4_0900_as_ci", {("a", "A"): True, ("é", "e"): False, ("É", "é"): True, ("a", "a "): False}),
        # accents and case count
        ("utf8mb4_0900_as_cs", {("a", "A"): False, ("é", "e"): False, ("é", "é"): True, ("ß", "ss"): False}),
        ("utf8mb4_ja_0900_as_cs_ks", {("a", "A"): False, ("a", "a"): True}),
        # code points, NO PAD
        ("utf8mb4_0900_bin", {("a", "A"): False, ("a", "a "): False, ("a", "a"): True}),
        # code points, PAD SPACE
        ("utf8mb4_bin", {("a", "A"): False, ("a", "a "): True, ("é", "e"): False}),
        ("utf8mb3_bin", {("a", "A"): False, ("a", "a "): True}),
        # the older UCA: accents and case ignored, PAD SPACE, 'ß' is 'ss'
        ("utf8mb4_unicode_ci", {("a", "A "): True, ("é", "E"): True, ("ß", "ss"): True}),
        ("utf8mb4_swedish_ci", {("a", "A "): True, ("ß", "ss"): True}),
        ("utf8mb3_unicode_520_ci", {("a", "A "): True}),
        # general_ci: one letter for one ('ß' is 's'), PAD SPACE
        ("utf8mb4_general_ci", {("a", "A "): True, ("é", "e"): True, ("ß", "s"): True, ("ß", "ss"): False}),
        ("utf8mb3_general_ci", {("ß", "s"): True}),
    ],
)
def test_each_kind_of_collation_compares_what_its_name_says(
    plain: sqlite3.Connection, collation: str, equalities: dict[tuple[str, str], bool]
) -> None:
    assert {pair: equal(plain, *pair, collation) for pair in equalities} == equalities


@pytest.mark.parametrize(
    ("collation", "order"),
    [
        ("utf8mb4_0900_ai_ci", ["a", "B", "é", "f"]),
        ("utf8mb4_0900_as_ci", ["a", "B", "é", "f"]),
        ("utf8mb4_0900_as_cs", ["a", "A", "b", "B"]),  # lower case first, as the UCA puts it
        ("utf8mb4_bin", ["A", "B", "a", "b"]),  # code points
        ("utf8mb4_general_ci", ["a", "B", "é", "f"]),
    ],
)
def test_each_kind_of_collation_orders_as_its_name_says(
    plain: sqlite3.Connection, collation: str, order: list[str]
) -> None:
    assert ordered(plain, list(reversed(order)), collation) == order


# --- COLLATE in a query ---

DUMP = """
CREATE TABLE numeri (n INT, prezzo DECIMAL(5,2));
INSERT INTO numeri VALUES (9, 9.5), (10, 10.25);
CREATE TABLE nuova (nome VARCHAR(20)) DEFAULT CHARSET=utf8mb4;
CREATE TABLE vecchia (nome VARCHAR(20)) DEFAULT CHARSET=utf8;
CREATE TABLE esatta (nome VARCHAR(20) COLLATE utf8mb4_bin) DEFAULT CHARSET=utf8mb4;
INSERT INTO nuova VALUES ('Rossi'), ('rossi'), ('Àlvaro'), ('Zeta');
INSERT INTO vecchia VALUES ('Rossi'), ('rossi');
INSERT INTO esatta VALUES ('Rossi'), ('rossi');
"""


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    return connected_copy(DUMP, tmp_path_factory.mktemp("collations") / "nomi.sqlite3")


@pytest.mark.parametrize("collation", UTF8MB4)
def test_a_utf8mb4_column_takes_every_utf8mb4_collation(conn: sqlite3.Connection, collation: str) -> None:
    assert len(rows(conn, f"SELECT nome FROM nuova ORDER BY nome COLLATE {collation}")) == 4


@pytest.mark.parametrize("collation", [*UTF8MB3, "utf8_general_ci", "utf8_bin"])
def test_a_utf8mb3_column_takes_every_utf8mb3_collation(conn: sqlite3.Connection, collation: str) -> None:
    assert len(rows(conn, f"SELECT nome FROM vecchia ORDER BY nome COLLATE {collation}")) == 2


def test_a_column_orders_and_compares_by_the_collation_named(conn: sqlite3.Connection) -> None:
    assert rows(conn, "SELECT nome FROM nuova ORDER BY nome COLLATE utf8mb4_bin, nome") == [
        ("Rossi",),
        ("Zeta",),
        ("rossi",),
        ("Àlvaro",),
    ]
    assert rows(conn, "SELECT COUNT(*) FROM nuova WHERE nome COLLATE utf8mb4_0900_as_cs = 'rossi'") == [(1,)]
    assert rows(conn, "SELECT COUNT(*) FROM esatta WHERE nome COLLATE utf8mb4_general_ci = 'ROSSI'") == [(2,)]


def test_a_string_literal_compared_with_an_explicit_collate_keeps_it(conn: sqlite3.Connection) -> None:
    # The literal's own collation is the default; the explicit one wins, on either side.
    assert rows(conn, "SELECT COUNT(*) FROM nuova WHERE 'rossi' = nome COLLATE utf8mb4_bin") == [(1,)]
    assert rows(conn, "SELECT COUNT(*) FROM nuova WHERE nome = 'rossi' COLLATE utf8mb4_bin") == [(1,)]
    assert rows(conn, "SELECT COUNT(*) FROM nuova WHERE UPPER(nome) COLLATE utf8mb4_bin = 'ROSSI'") == [(2,)]


@pytest.mark.parametrize(
    ("query", "error"),
    [
        (
            "SELECT nome FROM nuova ORDER BY nome COLLATE utf8mb4_italian_ci",
            "Unknown collation: 'utf8mb4_italian_ci' (MySQL error 1273)",
        ),
        (
            "SELECT nome FROM nuova ORDER BY nome COLLATE utf8_general_ci",
            "COLLATION 'utf8_general_ci' is not valid for CHARACTER SET 'utf8mb4' (MySQL error 1253)",
        ),
        (
            "SELECT nome FROM vecchia ORDER BY nome COLLATE utf8mb4_general_ci",
            "COLLATION 'utf8mb4_general_ci' is not valid for CHARACTER SET 'utf8mb3' (MySQL error 1253)",
        ),
        (
            "SELECT nome FROM nuova WHERE nome = 'rossi' COLLATE utf8mb3_bin",
            "COLLATION 'utf8mb3_bin' is not valid for CHARACTER SET 'utf8mb4' (MySQL error 1253)",
        ),
        (
            "SELECT nome FROM nuova ORDER BY nome COLLATE latin1_swedish_ci",
            "COLLATION 'latin1_swedish_ci' is not valid for CHARACTER SET 'utf8mb4' (MySQL error 1253)",
        ),
    ],
)
def test_a_collation_mysql_refuses_refuses_the_query_before_it_runs(
    conn: sqlite3.Connection, query: str, error: str
) -> None:
    with pytest.raises(TranspileError) as refused:
        to_sqlite(query, schema=read_schema(conn))
    assert str(refused.value) == error


def test_a_number_is_collated_as_its_text_in_the_connections_character_set(conn: sqlite3.Connection) -> None:
    assert rows(conn, "SELECT n FROM numeri ORDER BY n COLLATE utf8mb4_bin") == [(10,), (9,)]  # '10' < '9'
    assert rows(conn, "SELECT n FROM numeri WHERE prezzo COLLATE utf8mb4_general_ci = '9.50'") == [(9,)]
    with pytest.raises(TranspileError, match="1253"):
        to_sqlite("SELECT n FROM numeri ORDER BY n COLLATE utf8mb3_bin", schema=read_schema(conn))


def test_where_the_character_set_is_unknown_either_unicode_one_is_taken(conn: sqlite3.Connection) -> None:
    assert rows(conn, "SELECT COUNT(*) FROM nuova WHERE CONCAT(nome, '') COLLATE utf8mb3_bin = 'Rossi'") == [
        (1,)
    ]
