"""Near misses of a gold query, the neighbour queries of test-suite accuracy (evaluation.scoring.near_misses).

The queries are invented, on a small library: libri, autori, prestiti. The last tests read the real
Termite archive when it is present and report question ids and counts only, never its SQL.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluation.scoring.dialect import TranspileError, to_sqlite
from evaluation.scoring.functions import install_functions
from evaluation.scoring.mysql_dump import build_sqlite
from evaluation.scoring.near_misses import RULES, NearMiss, near_misses
from evaluation.scoring.statements import SQLGLOT_DIALECTS, parse_one
from evaluation.sources import read_termite_archive

BIBLIOTECA = {
    "libri": {
        "id": "INTEGER",
        "titolo": "VARCHAR(150)",
        "genere": "VARCHAR(30)",
        "prezzo": "DECIMAL(8,2)",
        "anno": "INTEGER",
        "pagine": "INTEGER",
        "autore_id": "INTEGER",
        "data_acquisto": "DATE",
    },
    "autori": {"id": "INTEGER", "nome": "VARCHAR(80)", "nazione": "VARCHAR(40)", "nascita": "DATE"},
    "prestiti": {
        "id": "INTEGER",
        "libro_id": "INTEGER",
        "tessera": "VARCHAR(12)",
        "uscita": "DATE",
        "rientro": "DATETIME",
        "multa": "DOUBLE",
    },
}

# Queries of many shapes, for the properties every near miss has.
VARIED = [
    "SELECT titolo FROM libri WHERE (anno > 2000 AND genere = 'giallo') AND prezzo < 20",
    "SELECT l.titolo, a.nome FROM libri AS l JOIN autori AS a ON a.id = l.autore_id WHERE a.nazione = 'Italia'",
    "SELECT genere, COUNT(*), AVG(prezzo) FROM libri GROUP BY genere, anno HAVING COUNT(*) > 2 ORDER BY 2 DESC",
    "SELECT nome FROM autori WHERE nome LIKE 'Ros%' AND id NOT IN (SELECT autore_id FROM libri)",
    "SELECT titolo FROM libri WHERE NOT EXISTS (SELECT 1 FROM prestiti WHERE prestiti.libro_id = libri.id)",
    "SELECT tessera FROM prestiti WHERE rientro IS NULL AND uscita < '2024-03-01' LIMIT 2, 5",
    "WITH cari AS (SELECT * FROM libri WHERE prezzo > 30) SELECT COUNT(DISTINCT genere) FROM cari",
    "SELECT titolo FROM libri UNION SELECT nome FROM autori ORDER BY 1",
    "SELECT titolo, RANK() OVER (PARTITION BY genere ORDER BY prezzo DESC) FROM libri",
    "SELECT CASE WHEN prezzo > 20 AND anno > 2000 THEN 'caro' ELSE 'economico' END FROM libri",
    "SELECT titolo FROM libri WHERE prezzo = (SELECT MAX(prezzo) FROM libri) AND anno BETWEEN 1990 AND 1999",
    "SELECT DATE_FORMAT(data_acquisto, '%Y-%m'), IFNULL(SUM(prezzo), 0) FROM libri GROUP BY 1",
    "SELECT 1",
]


def near(sql: str, rule: str, **options) -> list[str]:
    """The near misses `rule` makes of `sql`, all of them."""
    options.setdefault("schema", BIBLIOTECA)
    return [miss.sql for miss in near_misses(sql, limit=10_000, **options) if miss.rule == rule]


def normalised(sql: str, source: str = "mysql") -> str:
    tree, _ = parse_one(sql, source=source)
    return SQLGLOT_DIALECTS[source].generate(tree)


def test_the_rules_are_named_in_a_fixed_order() -> None:
    assert RULES == (
        "drop_conjunct",
        "drop_distinct",
        "add_distinct",
        "aggregate_swap",
        "comparison_swap",
        "order_direction",
        "and_or",
        "like",
        "in_list",
        "literal_shift",
        "limit_shift",
        "column_swap",
        "join_kind",
        "group_key_dropped",
    )


# --- each rule, at every site where it applies ----------------------------------------------------


def test_drop_conjunct_drops_each_conjunct_of_a_where_in_turn() -> None:
    assert near(
        "SELECT titolo FROM libri WHERE (anno > 2000 AND genere = 'giallo') AND prezzo < 20", "drop_conjunct"
    ) == [
        "SELECT titolo FROM libri WHERE genere = 'giallo' AND prezzo < 20",
        "SELECT titolo FROM libri WHERE anno > 2000 AND prezzo < 20",
        "SELECT titolo FROM libri WHERE anno > 2000 AND genere = 'giallo'",
    ]


def test_drop_conjunct_drops_a_where_or_having_of_one_condition_whole() -> None:
    assert near("SELECT titolo FROM libri WHERE anno > 2000 OR prezzo < 5", "drop_conjunct") == [
        "SELECT titolo FROM libri"
    ]
    assert near("SELECT genere FROM libri GROUP BY genere HAVING COUNT(*) > 2", "drop_conjunct") == [
        "SELECT genere FROM libri GROUP BY genere"
    ]


def test_drop_conjunct_never_touches_a_join_condition() -> None:
    on = "SELECT l.titolo FROM libri AS l JOIN autori AS a ON a.id = l.autore_id AND a.nazione = 'Italia'"
    comma = "SELECT l.titolo FROM libri AS l, autori AS a WHERE a.id = l.autore_id AND a.nazione = 'Italia'"
    assert near(on, "drop_conjunct") == []
    assert near(comma, "drop_conjunct") == [
        "SELECT l.titolo FROM libri AS l, autori AS a WHERE a.id = l.autore_id"
    ]


def test_drop_and_add_distinct_on_each_select_where_it_can_change_the_answer() -> None:
    assert near("SELECT DISTINCT genere FROM libri", "drop_distinct") == ["SELECT genere FROM libri"]
    assert near("SELECT t.anno FROM (SELECT anno FROM libri) AS t", "add_distinct") == [
        "SELECT DISTINCT t.anno FROM (SELECT anno FROM libri) AS t",
        "SELECT t.anno FROM (SELECT DISTINCT anno FROM libri) AS t",
    ]


@pytest.mark.parametrize(
    ("gold", "expected"),
    [
        (
            "SELECT titolo FROM libri WHERE id IN (SELECT libro_id FROM prestiti)",
            ["SELECT DISTINCT titolo FROM libri WHERE id IN (SELECT libro_id FROM prestiti)"],
        ),
        (
            "SELECT titolo FROM libri WHERE EXISTS (SELECT libro_id FROM prestiti)",
            ["SELECT DISTINCT titolo FROM libri WHERE EXISTS(SELECT libro_id FROM prestiti)"],
        ),
        ("SELECT titolo FROM libri UNION SELECT nome FROM autori", []),
        ("SELECT COUNT(*), MAX(prezzo) FROM libri", []),
    ],
)
def test_distinct_is_not_toggled_where_it_cannot_change_the_answer(gold: str, expected: list[str]) -> None:
    assert near(gold, "add_distinct") == expected


def test_aggregate_swap_makes_each_aggregate_each_other_and_toggles_distinct() -> None:
    assert near("SELECT MAX(prezzo) FROM libri", "aggregate_swap") == [
        "SELECT COUNT(prezzo) FROM libri",
        "SELECT SUM(prezzo) FROM libri",
        "SELECT AVG(prezzo) FROM libri",
        "SELECT MIN(prezzo) FROM libri",
    ]
    assert near("SELECT COUNT(DISTINCT genere) FROM libri", "aggregate_swap") == [
        "SELECT SUM(DISTINCT genere) FROM libri",
        "SELECT AVG(DISTINCT genere) FROM libri",
        "SELECT MIN(DISTINCT genere) FROM libri",
        "SELECT MAX(DISTINCT genere) FROM libri",
        "SELECT COUNT(genere) FROM libri",
    ]
    assert (
        near("SELECT SUM(prezzo) FROM libri", "aggregate_swap")[-1]
        == "SELECT SUM(DISTINCT prezzo) FROM libri"
    )


def test_aggregate_swap_leaves_counts_of_rows_alone() -> None:
    assert near("SELECT genere, COUNT(*), COUNT(1) FROM libri GROUP BY genere", "aggregate_swap") == []


def test_comparison_swap_changes_each_comparison() -> None:
    gold = "SELECT titolo FROM libri WHERE anno < 1990 OR pagine >= 300 OR genere = 'giallo'"
    assert near(gold, "comparison_swap", schema=None) == [
        "SELECT titolo FROM libri WHERE anno <= 1990 OR pagine >= 300 OR genere = 'giallo'",
        "SELECT titolo FROM libri WHERE anno > 1990 OR pagine >= 300 OR genere = 'giallo'",
        "SELECT titolo FROM libri WHERE anno < 1990 OR pagine > 300 OR genere = 'giallo'",
        "SELECT titolo FROM libri WHERE anno < 1990 OR pagine <= 300 OR genere = 'giallo'",
        "SELECT titolo FROM libri WHERE anno < 1990 OR pagine >= 300 OR genere <> 'giallo'",
    ]
    assert near("SELECT titolo FROM libri WHERE genere <> 'giallo'", "comparison_swap") == [
        "SELECT titolo FROM libri WHERE genere = 'giallo'"
    ]


def test_order_direction_swaps_each_order_by_key() -> None:
    assert near("SELECT titolo, anno FROM libri ORDER BY anno DESC, titolo", "order_direction") == [
        "SELECT titolo, anno FROM libri ORDER BY anno ASC, titolo",
        "SELECT titolo, anno FROM libri ORDER BY anno DESC, titolo DESC",
    ]


def test_and_or_swaps_each_connector_of_where_and_having_in_parentheses_where_needed() -> None:
    gold = "SELECT titolo FROM libri WHERE anno = 1999 OR anno = 2001 OR genere = 'saggio'"
    assert near(gold, "and_or") == [
        "SELECT titolo FROM libri WHERE (anno = 1999 OR anno = 2001) AND genere = 'saggio'",
        "SELECT titolo FROM libri WHERE (anno = 1999 AND anno = 2001) OR genere = 'saggio'",
    ]
    assert near(
        "SELECT genere FROM libri GROUP BY genere HAVING MIN(anno) > 1990 AND COUNT(*) > 2", "and_or"
    ) == ["SELECT genere FROM libri GROUP BY genere HAVING MIN(anno) > 1990 OR COUNT(*) > 2"]


def test_and_or_leaves_join_conditions_and_projections_alone() -> None:
    on = "SELECT l.titolo FROM libri AS l JOIN autori AS a ON a.id = l.autore_id AND a.nazione = 'Italia'"
    case = "SELECT CASE WHEN prezzo > 20 AND anno > 2000 THEN 'caro' END FROM libri"
    assert near(on, "and_or") == []
    assert near(case, "and_or") == []


def test_like_negates_each_like_and_reads_a_pattern_with_end_wildcards_as_equality() -> None:
    gold = (
        "SELECT nome FROM autori WHERE nome LIKE 'Ros%' AND nazione NOT LIKE '%ia' AND NOT nome LIKE 'R_ssi'"
    )
    assert near(gold, "like") == [
        "SELECT nome FROM autori WHERE nome NOT LIKE 'Ros%' AND nazione NOT LIKE '%ia' AND NOT nome LIKE 'R_ssi'",
        "SELECT nome FROM autori WHERE nome = 'Ros' AND nazione NOT LIKE '%ia' AND NOT nome LIKE 'R_ssi'",
        "SELECT nome FROM autori WHERE nome LIKE 'Ros%' AND nazione LIKE '%ia' AND NOT nome LIKE 'R_ssi'",
        "SELECT nome FROM autori WHERE nome LIKE 'Ros%' AND nazione <> 'ia' AND NOT nome LIKE 'R_ssi'",
        "SELECT nome FROM autori WHERE nome LIKE 'Ros%' AND nazione NOT LIKE '%ia' AND nome LIKE 'R_ssi'",
    ]


def test_in_list_negates_in_exists_and_is_null_or_drops_their_negation() -> None:
    gold = (
        "SELECT titolo FROM libri WHERE id IN (1, 2) AND id NOT IN (SELECT libro_id FROM prestiti)"
        " AND EXISTS (SELECT 1 FROM autori) AND data_acquisto IS NULL AND prezzo IS NOT NULL"
    )
    conditions = [
        "id IN (1, 2)",
        "NOT id IN (SELECT libro_id FROM prestiti)",
        "EXISTS(SELECT 1 FROM autori)",
        "data_acquisto IS NULL",
        "NOT prezzo IS NULL",
    ]
    negated = [
        "NOT id IN (1, 2)",
        "id IN (SELECT libro_id FROM prestiti)",
        "NOT EXISTS(SELECT 1 FROM autori)",
        "NOT data_acquisto IS NULL",
        "prezzo IS NULL",
    ]
    # One near miss per site, each negating that condition only.
    assert near(gold, "in_list") == [
        "SELECT titolo FROM libri WHERE "
        + " AND ".join([*conditions[:site], negated[site], *conditions[site + 1 :]])
        for site in range(len(conditions))
    ]


def test_literal_shift_moves_numbers_by_one_and_dates_by_a_day_but_not_positions_or_limits() -> None:
    gold = (
        "SELECT titolo FROM libri WHERE prezzo > 12.50 AND data_acquisto >= '2024-03-01' ORDER BY 1 LIMIT 5"
    )
    assert near(gold, "literal_shift") == [
        "SELECT titolo FROM libri WHERE prezzo > 13.50 AND data_acquisto >= '2024-03-01' ORDER BY 1 LIMIT 5",
        "SELECT titolo FROM libri WHERE prezzo > 11.50 AND data_acquisto >= '2024-03-01' ORDER BY 1 LIMIT 5",
        "SELECT titolo FROM libri WHERE prezzo > 12.50 AND data_acquisto >= '2024-03-02' ORDER BY 1 LIMIT 5",
        "SELECT titolo FROM libri WHERE prezzo > 12.50 AND data_acquisto >= '2024-02-29' ORDER BY 1 LIMIT 5",
    ]
    assert (
        near("SELECT COUNT(1) FROM libri WHERE EXISTS (SELECT 1 FROM prestiti) GROUP BY 1", "literal_shift")
        == []
    )


def test_literal_shift_keeps_whole_numbers_whole() -> None:
    assert near("SELECT titolo FROM libri WHERE anno = 2001", "literal_shift") == [
        "SELECT titolo FROM libri WHERE anno = 2002",
        "SELECT titolo FROM libri WHERE anno = 2000",
    ]


def test_limit_shift_moves_the_limit_by_one_and_never_below_one() -> None:
    assert near("SELECT titolo FROM libri ORDER BY prezzo LIMIT 3", "limit_shift") == [
        "SELECT titolo FROM libri ORDER BY prezzo LIMIT 4",
        "SELECT titolo FROM libri ORDER BY prezzo LIMIT 2",
    ]
    assert near("SELECT titolo FROM libri ORDER BY prezzo LIMIT 1", "limit_shift") == [
        "SELECT titolo FROM libri ORDER BY prezzo LIMIT 2"
    ]


def test_column_swap_takes_the_first_three_columns_of_the_same_table_and_type_family() -> None:
    assert near("SELECT l.titolo FROM libri AS l WHERE l.prezzo > 10", "column_swap") == [
        "SELECT l.genere FROM libri AS l WHERE l.prezzo > 10",
        "SELECT l.titolo FROM libri AS l WHERE l.id > 10",
        "SELECT l.titolo FROM libri AS l WHERE l.anno > 10",
        "SELECT l.titolo FROM libri AS l WHERE l.pagine > 10",
    ]


def test_column_swap_keeps_dates_with_times_and_floats_with_numbers() -> None:
    assert near("SELECT MAX(uscita), SUM(multa) FROM prestiti", "column_swap") == [
        "SELECT MAX(rientro), SUM(multa) FROM prestiti",
        "SELECT MAX(uscita), SUM(id) FROM prestiti",
        "SELECT MAX(uscita), SUM(libro_id) FROM prestiti",
    ]


def test_column_swap_gives_an_unqualified_column_no_name_another_table_in_reach_has() -> None:
    # `id` is a column of prestiti too: `anno` made `id` would be ambiguous.
    gold = "SELECT titolo FROM libri, prestiti WHERE prestiti.libro_id = libri.id AND anno > 2000"
    assert [sql for sql in near(gold, "column_swap") if "> 2000" in sql and "anno" not in sql] == [
        "SELECT titolo FROM libri, prestiti WHERE prestiti.libro_id = libri.id AND prezzo > 2000",
        "SELECT titolo FROM libri, prestiti WHERE prestiti.libro_id = libri.id AND pagine > 2000",
        "SELECT titolo FROM libri, prestiti WHERE prestiti.libro_id = libri.id AND autore_id > 2000",
    ]


def test_column_swap_resolves_correlated_references_and_keeps_a_subquerys_output_names() -> None:
    correlated = "SELECT nome FROM autori AS a WHERE EXISTS (SELECT 1 FROM libri WHERE autore_id = a.id)"
    assert (
        "SELECT nome FROM autori AS a WHERE EXISTS(SELECT 1 FROM libri WHERE autore_id = a.id)"
        not in near(correlated, "column_swap")
    )
    assert "SELECT nazione FROM autori AS a WHERE EXISTS(SELECT 1 FROM libri WHERE autore_id = a.id)" in near(
        correlated, "column_swap"
    )
    assert near("SELECT t.anno FROM (SELECT anno FROM libri) AS t", "column_swap") == [
        "SELECT t.anno FROM (SELECT id AS anno FROM libri) AS t",
        "SELECT t.anno FROM (SELECT prezzo AS anno FROM libri) AS t",
        "SELECT t.anno FROM (SELECT pagine AS anno FROM libri) AS t",
    ]


def test_column_swap_compares_names_without_case_and_keeps_backticks() -> None:
    assert near("SELECT `Titolo` FROM `LIBRI`", "column_swap") == ["SELECT `genere` FROM `LIBRI`"]


def test_column_swap_needs_the_schema() -> None:
    assert near("SELECT titolo FROM libri WHERE prezzo > 10", "column_swap", schema=None) == []


def test_join_kind_makes_each_inner_join_a_left_join() -> None:
    gold = (
        "SELECT p.tessera FROM prestiti AS p JOIN libri AS l ON l.id = p.libro_id"
        " INNER JOIN autori AS a ON a.id = l.autore_id"
    )
    assert near(gold, "join_kind") == [
        "SELECT p.tessera FROM prestiti AS p LEFT JOIN libri AS l ON l.id = p.libro_id"
        " INNER JOIN autori AS a ON a.id = l.autore_id",
        "SELECT p.tessera FROM prestiti AS p JOIN libri AS l ON l.id = p.libro_id"
        " LEFT JOIN autori AS a ON a.id = l.autore_id",
    ]


def test_join_kind_leaves_comma_cross_and_outer_joins_alone() -> None:
    gold = "SELECT 1 FROM libri, autori CROSS JOIN prestiti LEFT JOIN libri AS l ON l.id = prestiti.libro_id"
    assert near(gold, "join_kind") == []


def test_group_key_dropped_drops_each_key_of_a_group_by_of_two_or_more() -> None:
    assert near("SELECT genere, anno, COUNT(*) FROM libri GROUP BY genere, anno", "group_key_dropped") == [
        "SELECT genere, anno, COUNT(*) FROM libri GROUP BY anno",
        "SELECT genere, anno, COUNT(*) FROM libri GROUP BY genere",
    ]
    assert near("SELECT genere, COUNT(*) FROM libri GROUP BY genere", "group_key_dropped") == []


# --- what every list of near misses is ------------------------------------------------------------


@pytest.mark.parametrize("gold", VARIED)
def test_every_near_miss_parses_differs_from_the_gold_and_appears_once(gold: str) -> None:
    found = near_misses(gold, schema=BIBLIOTECA, limit=10_000)
    written = [normalised(miss.sql) for miss in found]
    assert all(miss.rule in RULES for miss in found)
    assert normalised(gold) not in written
    assert len(set(written)) == len(written)


def test_two_rules_making_the_same_query_give_it_once() -> None:
    found = near_misses("SELECT titolo FROM libri WHERE genere = 'giallo' AND genere = 'giallo'")
    assert [miss.sql for miss in found if miss.rule == "drop_conjunct"] == [
        "SELECT titolo FROM libri WHERE genere = 'giallo'"
    ]


def test_the_same_gold_gives_the_same_near_misses() -> None:
    for gold in VARIED:
        assert near_misses(gold, schema=BIBLIOTECA) == near_misses(gold, schema=BIBLIOTECA)


def test_near_misses_come_in_rounds_of_one_per_rule() -> None:
    gold = "SELECT id, titolo, genere, prezzo, anno, pagine FROM libri WHERE anno > 2000 ORDER BY data_acquisto LIMIT 3"
    found = near_misses(gold, schema=BIBLIOTECA)
    assert [miss.rule for miss in found[:7]] == [
        "drop_conjunct",
        "add_distinct",
        "comparison_swap",
        "order_direction",
        "literal_shift",
        "limit_shift",
        "column_swap",
    ]
    # Every column reference has its swaps: the six projections and the one in WHERE.
    assert sum(miss.rule == "column_swap" for miss in found) == 3 + 1 + 1 + 3 + 3 + 3 + 3
    # Once the other rules have run out, column_swap has the rest.
    assert {miss.rule for miss in found[-10:]} == {"column_swap"}


def test_the_limit_cuts_the_rounds_so_that_the_rule_with_most_sites_loses_most() -> None:
    gold = (
        "SELECT l.id, l.titolo, l.genere, l.prezzo, l.anno, l.pagine, a.nome, a.nazione"
        " FROM libri AS l JOIN autori AS a ON a.id = l.autore_id"
        " WHERE l.anno > 2000 AND l.prezzo < 30 AND l.pagine >= 100 AND a.nazione = 'Italia'"
        " AND l.id IN (1, 2, 3) AND l.data_acquisto BETWEEN '2023-01-01' AND '2023-12-31'"
        " ORDER BY l.data_acquisto DESC LIMIT 3"
    )
    everything = near_misses(gold, schema=BIBLIOTECA, limit=10_000)
    kept = near_misses(gold, schema=BIBLIOTECA)
    assert len(everything) == 73
    assert len(kept) == 60
    assert kept == everything[:60]
    lost = Counter(miss.rule for miss in everything) - Counter(miss.rule for miss in kept)
    assert lost == Counter({"column_swap": 13})
    assert near_misses(gold, schema=BIBLIOTECA, limit=10) == everything[:10]
    assert near_misses(gold, schema=BIBLIOTECA, limit=0) == []


@pytest.mark.parametrize(
    "gold", ["", "SELEC titolo FROM libri", "SELECT 'non chiusa FROM libri", "SELECT 1; SELECT 2", "-- solo"]
)
def test_a_gold_that_cannot_be_read_has_no_near_misses(gold: str) -> None:
    assert near_misses(gold, schema=BIBLIOTECA) == []


def test_mysql_functions_and_backticks_survive_in_every_near_miss() -> None:
    gold = (
        "SELECT DATE_FORMAT(`data_acquisto`, '%Y-%m') AS mese, GROUP_CONCAT(titolo ORDER BY titolo SEPARATOR '; ')"
        " FROM `libri` WHERE DATEDIFF(CURDATE(), `data_acquisto`) > 30 AND `titolo` REGEXP '^Il'"
        " GROUP BY DATE_FORMAT(`data_acquisto`, '%Y-%m')"
    )
    found = near_misses(gold, schema=BIBLIOTECA, limit=10_000)
    assert len(found) >= 8
    for miss in found:
        parse_one(miss.sql, source="mysql")
        assert "DATE_FORMAT(`data_acquisto`, '%Y-%m')" in miss.sql
        assert "SEPARATOR '; '" in miss.sql
        assert "FROM `libri`" in miss.sql


def test_a_sqlite_gold_gets_near_misses_written_for_sqlite() -> None:
    gold = "SELECT \"titolo\" FROM libri WHERE strftime('%Y', data_acquisto) = '2024' ORDER BY prezzo DESC LIMIT 3"
    found = near_misses(gold, source="sqlite", schema=BIBLIOTECA)
    assert {miss.rule for miss in found} == {
        "drop_conjunct",
        "add_distinct",
        "comparison_swap",
        "order_direction",
        "limit_shift",
        "column_swap",
    }
    for miss in found:
        parse_one(miss.sql, source="sqlite")
        assert miss.sql.startswith(('SELECT "', 'SELECT DISTINCT "'))


def test_a_near_miss_is_a_rule_and_a_query() -> None:
    assert near_misses("SELECT titolo FROM libri LIMIT 1")[0] == NearMiss(
        "add_distinct", "SELECT DISTINCT titolo FROM libri LIMIT 1"
    )


# --- the real archive: question ids and counts only -----------------------------------------------

# Measured when this test was written: 3265 near misses with the default limit (3266 without one).
ARCHIVE_NEAR_MISSES_AT_LEAST = 3200


@dataclass(frozen=True)
class TermiteGold:
    questions: list[tuple[str, str, str]]  # (question id, database, gold)
    copies: dict[str, Path]  # database -> its SQLite copy
    schemas: dict[str, dict]  # database -> its schema
    misses: dict[
        str, list[NearMiss] | None
    ]  # question id -> its gold's near misses; None: finding them raised


@pytest.fixture(scope="module")
def termite_gold(termite_archive: Path, tmp_path_factory: pytest.TempPathFactory) -> TermiteGold:
    """The archive's gold, copies and schemas, and each gold's near misses, found once for the tests below."""
    folder = tmp_path_factory.mktemp("termite")
    source = read_termite_archive(termite_archive, "youshallnotpass")
    copies, schemas = {}, {}
    for database in source.databases:
        copies[database.slug] = folder / f"{database.slug}.sqlite3"
        schemas[database.slug] = build_sqlite(database.dump, copies[database.slug]).schema
    questions = [(question.public_id, question.db_slug, question.gold_sql) for question in source.questions]
    misses: dict[str, list[NearMiss] | None] = {}
    for question_id, database, gold in questions:
        try:
            misses[question_id] = near_misses(gold, schema=schemas[database])
        except Exception:  # the test below names the question; the error's message may quote the gold
            misses[question_id] = None
    return TermiteGold(questions, copies, schemas, misses)


@pytest.mark.termite_archive
def test_every_termite_gold_has_near_misses_that_parse(termite_gold: TermiteGold) -> None:
    raising = [question_id for question_id, found in termite_gold.misses.items() if found is None]
    unreadable, counts = [], {}
    for question_id, found in termite_gold.misses.items():
        counts[question_id] = len(found or ())
        for miss in found or ():
            try:
                parse_one(miss.sql, source="mysql")
            except TranspileError:
                unreadable.append(question_id)
    assert not raising, sorted(raising)
    assert not unreadable, sorted(set(unreadable))
    assert sum(counts.values()) >= ARCHIVE_NEAR_MISSES_AT_LEAST
    assert max(counts.values()) == 60


@pytest.mark.termite_archive
def test_the_near_misses_of_termite_gold_run_on_its_copy_wherever_the_gold_does(
    termite_gold: TermiteGold,
) -> None:
    failing: set[str] = set()
    ran = 0
    for question_id, database, gold in termite_gold.questions:
        schema = termite_gold.schemas[database]
        with contextlib.closing(sqlite3.connect(termite_gold.copies[database])) as conn:
            install_functions(conn)
            try:
                conn.execute(to_sqlite(gold, schema=schema)).fetchall()
            except (TranspileError, sqlite3.Error):
                continue  # the gold that names a table by a quoted string, as MySQL refuses
            for miss in termite_gold.misses[question_id] or ():
                try:
                    conn.execute(to_sqlite(miss.sql, schema=schema)).fetchall()
                    ran += 1
                except (TranspileError, sqlite3.Error):
                    failing.add(f"{question_id} {miss.rule}")
    assert not failing, sorted(failing)
    assert ran >= ARCHIVE_NEAR_MISSES_AT_LEAST
