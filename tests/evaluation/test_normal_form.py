"""A prediction's normal form: one text for the ways of writing one query, and what its text alone says."""

from __future__ import annotations

import hashlib

import pytest

from evaluation.scoring.dialect import ReadsNoTable, to_sqlite
from evaluation.scoring.normal_form import normal_form
from evaluation.scoring.query_shape import MAX_NESTING


@pytest.mark.parametrize(
    "written",
    [
        "select Titolo from `Libri` where Anno > 1990",
        "SELECT titolo\n  FROM libri\n WHERE anno>1990;",
        "SELECT /* i titoli */ titolo FROM libri WHERE anno > 1990 -- dopo il 1990",
        "SeLeCt `titolo` FROM `LIBRI` WHERE `anno` > 1990",
    ],
)
def test_blanks_case_quotes_and_comments_do_not_change_the_query(written):
    assert normal_form(written, source="mysql") == normal_form(
        "SELECT titolo FROM libri WHERE anno > 1990", source="mysql"
    )


def test_string_literals_keep_their_case():
    assert normal_form("SELECT 1 FROM t WHERE c = 'Roma'", source="mysql") != normal_form(
        "SELECT 1 FROM t WHERE c = 'roma'", source="mysql"
    )


def test_the_digest_is_the_same_in_every_process():
    # Stored forms are compared across requests: `hash()` of a str changes with each process.
    expected = hashlib.blake2b(b"SELECT 1", digest_size=8).digest()
    assert normal_form("select  1", source="mysql").digest == int.from_bytes(expected, "big")


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("SELECT 'Roma'", "mysql"),
        ("SELECT 1", "mysql"),
        ("SELECT 1 FROM DUAL", "mysql"),
        ("WITH c AS (SELECT 1 AS x) SELECT x FROM c", "mysql"),
        ("SELECT 'Roma'", "sqlite"),
    ],
)
def test_it_says_a_query_reads_no_table_exactly_when_the_scorer_does(sql, dialect):
    assert normal_form(sql, source=dialect).reads_no_table
    with pytest.raises(ReadsNoTable):
        to_sqlite(sql, source=dialect, check_conformance=True)


def test_a_query_reading_a_table_does_not_read_no_table():
    found = normal_form("SELECT COUNT(*) FROM libri", source="mysql")
    assert found.parsed and not found.reads_no_table and not found.constant


@pytest.mark.parametrize(
    "sql", ["SELECT 1 FROM libri", "SELECT -1 AS x, NULL, 'a' FROM libri WHERE anno > 2000"]
)
def test_a_query_selecting_only_constants_from_a_table_is_constant(sql):
    found = normal_form(sql, source="mysql")
    assert found.constant and not found.reads_no_table


@pytest.mark.parametrize("sql", ["", "   \n", "-- nulla", "/* nulla */"])
def test_a_prediction_without_a_statement_is_empty(sql):
    assert normal_form(sql, source="mysql").empty


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1; SELECT 2",
        "SELECT FROM WHERE (",
        "SELECT " + "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1),
    ],
)
def test_a_text_sqlglot_cannot_read_falls_back_to_its_words(sql):
    found = normal_form(sql, source="mysql")
    assert not found.parsed and found.text == " ".join(sql.lower().split())
    assert normal_form(sql.upper().replace(" ", "  "), source="mysql").text == found.text
