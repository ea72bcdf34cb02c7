"""Comparing results: EA (multiset, order only under ORDER BY, ties free, columns may move) and EA-strict."""

from __future__ import annotations

import sqlite3

import pytest

from evaluation.scoring.compare import (
    difference,
    order_key_query,
    results_match,
    results_match_strict,
    split_order_keys,
)
from tests.evaluation.demo_db import make_demo_db

# Where the engine alone decides the order of tied rows, EA-strict has no fixed answer.
ENGINE_DECIDES = None

# (gold, prediction, EA, EA-strict), all on the demo database.
PAIRS = [
    pytest.param("SELECT nome FROM clienti", "SELECT nome FROM clienti", True, True, id="identical"),
    pytest.param(
        "SELECT nome, citta FROM clienti",
        "SELECT citta, nome FROM clienti",
        True,
        False,
        id="columns-swapped",
    ),
    pytest.param(
        "SELECT nome, eta FROM clienti",
        "SELECT eta, nome FROM clienti ORDER BY nome",
        True,
        False,
        id="columns-and-rows-moved-without-gold-order",
    ),
    pytest.param(
        "SELECT nome FROM clienti",
        "SELECT nome FROM clienti ORDER BY nome DESC",
        True,
        False,
        id="rows-moved-without-gold-order",
    ),
    pytest.param(
        "SELECT nome FROM clienti ORDER BY eta",
        "SELECT nome FROM clienti ORDER BY eta DESC",
        False,
        False,
        id="rows-moved-against-gold-order",
    ),
    pytest.param(
        "SELECT nome FROM clienti ORDER BY eta",
        "SELECT nome FROM clienti ORDER BY eta, nome",
        True,
        False,
        id="tied-rows-swapped",
    ),
    pytest.param(
        "SELECT nome FROM clienti ORDER BY eta",
        "SELECT nome FROM clienti ORDER BY eta, id",
        True,
        True,
        id="tied-rows-in-gold-order",
    ),
    pytest.param(
        "SELECT nome, eta AS anni FROM clienti ORDER BY anni",
        "SELECT nome, eta FROM clienti ORDER BY eta, nome DESC",
        True,
        ENGINE_DECIDES,
        id="order-by-alias-ties-free",
    ),
    pytest.param(
        "SELECT citta, COUNT(*) FROM clienti GROUP BY citta ORDER BY 2 DESC",
        "SELECT citta, COUNT(*) AS n FROM clienti GROUP BY citta ORDER BY n DESC, citta DESC",
        True,
        ENGINE_DECIDES,
        id="order-by-position-ties-free",
    ),
    pytest.param(
        "SELECT citta, COUNT(*) FROM clienti GROUP BY citta ORDER BY 2 DESC",
        "SELECT citta, COUNT(*) FROM clienti GROUP BY citta ORDER BY 2",
        False,
        False,
        id="order-by-position-reversed",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE eta IS NOT NULL ORDER BY eta DESC LIMIT 2",
        "SELECT nome FROM clienti WHERE eta IS NOT NULL ORDER BY -eta LIMIT 2",
        True,
        True,
        id="same-order-other-expression",
    ),
    pytest.param(
        "SELECT nome FROM clienti ORDER BY eta DESC LIMIT 1",
        "SELECT nome FROM clienti ORDER BY eta LIMIT 1",
        False,
        False,
        id="limit-after-wrong-direction",
    ),
    pytest.param(
        "SELECT nome FROM clienti ORDER BY substr(data_iscrizione, 1, 4), data_iscrizione",
        "SELECT nome FROM clienti ORDER BY data_iscrizione",
        True,
        True,
        id="order-key-not-in-output",
    ),
    pytest.param(
        "SELECT cliente_id FROM ordini GROUP BY cliente_id ORDER BY SUM(quantita * prezzo) DESC",
        "SELECT cliente_id FROM ordini GROUP BY cliente_id ORDER BY SUM(quantita * prezzo)",
        False,
        False,
        id="order-by-aggregate-reversed",
    ),
    pytest.param(
        "SELECT eta FROM clienti ORDER BY eta",
        "SELECT eta FROM clienti ORDER BY eta IS NULL, eta",
        False,
        False,
        id="nulls-last-against-nulls-first",
    ),
    pytest.param(
        "SELECT DISTINCT citta FROM clienti ORDER BY citta DESC",
        "SELECT citta FROM clienti GROUP BY citta ORDER BY citta DESC",
        True,
        True,
        id="distinct-ordered-as-group-by",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE citta = 'Roma' UNION SELECT nome FROM clienti WHERE citta = 'Milano'"
        " ORDER BY 1 DESC",
        "SELECT nome FROM clienti WHERE citta IN ('Roma', 'Milano') ORDER BY nome DESC",
        True,
        True,
        id="union-ordered-as-in-list",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE citta = 'Roma' UNION SELECT nome FROM clienti WHERE citta = 'Milano'"
        " ORDER BY 1 DESC",
        "SELECT nome FROM clienti WHERE citta IN ('Roma', 'Milano') ORDER BY nome",
        False,
        False,
        id="union-order-reversed",
    ),
    pytest.param(
        "SELECT citta FROM clienti",
        "SELECT DISTINCT citta FROM clienti",
        False,
        False,
        id="distinct-drops-dups",
    ),
    pytest.param(
        "SELECT DISTINCT citta FROM clienti",
        "SELECT citta FROM clienti GROUP BY citta",
        True,
        False,
        id="distinct-as-group-by",
    ),
    pytest.param(
        "SELECT prodotto FROM ordini",
        "SELECT prodotto FROM ordini UNION ALL SELECT 'Pasta'",
        False,
        False,
        id="one-duplicate-too-many",
    ),
    pytest.param(
        "SELECT nome, nome FROM clienti",
        "SELECT nome, nome FROM clienti ORDER BY id DESC",
        True,
        False,
        id="twin-columns",
    ),
    pytest.param(
        "SELECT AVG(prezzo) FROM ordini",
        "SELECT SUM(prezzo) / COUNT(prezzo) FROM ordini",
        True,
        True,
        id="float-same-value-other-arithmetic",
    ),
    pytest.param(
        "SELECT AVG(prezzo) FROM ordini",
        "SELECT ROUND(AVG(prezzo), 2) FROM ordini",
        False,
        False,
        id="float-rounded-beyond-tolerance",
    ),
    pytest.param("SELECT 0.1 + 0.2", "SELECT 0.3", True, True, id="float-noise"),
    pytest.param("SELECT 1000000.0", "SELECT 1000000.5", True, True, id="float-within-relative-tolerance"),
    pytest.param("SELECT 1000000", "SELECT 1000001", False, False, id="integers-exact"),
    pytest.param(
        "SELECT COUNT(*) FROM ordini",
        "SELECT COUNT(*) * 1.0 FROM ordini",
        True,
        True,
        id="integer-equals-float",
    ),
    pytest.param(
        "SELECT COUNT(DISTINCT prodotto) FROM ordini",
        "SELECT COUNT(prodotto) FROM ordini",
        False,
        False,
        id="count-distinct-vs-count",
    ),
    pytest.param("SELECT '28'", "SELECT 28", False, False, id="text-is-not-number"),
    pytest.param(
        "SELECT eta FROM clienti WHERE id = 1",
        "SELECT CAST(eta AS TEXT) FROM clienti WHERE id = 1",
        False,
        False,
        id="number-cast-to-text",
    ),
    pytest.param(
        "SELECT prodotto FROM ordini WHERE id = 1",
        "SELECT CAST(prodotto AS BLOB) FROM ordini WHERE id = 1",
        True,
        True,
        id="utf8-blob-equals-text",
    ),
    pytest.param(
        "SELECT eta FROM clienti WHERE citta = 'Torino'", "SELECT NULL", True, True, id="null-equals-null"
    ),
    pytest.param(
        "SELECT eta FROM clienti WHERE citta = 'Torino'",
        "SELECT COALESCE(eta, 0) FROM clienti WHERE citta = 'Torino'",
        False,
        False,
        id="null-is-not-zero",
    ),
    pytest.param(
        "SELECT stato_civile FROM clienti WHERE id = 4",
        "SELECT ''",
        False,
        False,
        id="null-is-not-empty-text",
    ),
    pytest.param(
        "SELECT c.nome, o.prodotto FROM clienti c LEFT JOIN ordini o ON o.cliente_id = c.id WHERE o.id IS NULL",
        "SELECT nome, NULL FROM clienti WHERE id NOT IN (SELECT cliente_id FROM ordini)",
        True,
        True,
        id="left-join-nulls",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE eta > 100",
        "SELECT nome FROM clienti WHERE 0",
        True,
        True,
        id="both-empty",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE eta > 100",
        "SELECT nome, citta FROM clienti WHERE eta > 100",
        True,
        True,
        id="both-empty-other-width",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE eta > 100", "SELECT NULL", False, False, id="empty-vs-null-row"
    ),
    pytest.param("SELECT nome AS n FROM clienti", "SELECT nome FROM clienti", True, True, id="alias-ignored"),
    pytest.param(
        "SELECT nome FROM clienti WHERE stato_civile = 'Coniugato'",
        "SELECT nome FROM clienti WHERE stato_civile = 'coniugato'",
        True,
        True,
        id="nocase-equality",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE nome LIKE 'm%'",
        "SELECT nome FROM clienti WHERE nome = 'MARIO'",
        True,
        True,
        id="nocase-like-and-equality",
    ),
    pytest.param(
        "SELECT citta FROM clienti WHERE id = 1",
        "SELECT UPPER(citta) FROM clienti WHERE id = 1",
        False,
        False,
        id="returned-text-case-matters",
    ),
    pytest.param(
        "SELECT nome FROM clienti", "SELECT nome, citta FROM clienti", False, False, id="extra-column"
    ),
    pytest.param(
        "SELECT nome FROM clienti", "SELECT nome FROM clienti WHERE id < 6", False, False, id="missing-row"
    ),
    pytest.param(
        "SELECT c.nome, SUM(o.quantita) FROM clienti c JOIN ordini o ON o.cliente_id = c.id GROUP BY c.id",
        "SELECT (SELECT SUM(quantita) FROM ordini WHERE cliente_id = clienti.id) AS totale, nome FROM clienti"
        " WHERE id IN (SELECT cliente_id FROM ordini)",
        True,
        False,
        id="join-vs-correlated-subquery",
    ),
    pytest.param(
        "SELECT citta FROM clienti GROUP BY citta HAVING COUNT(*) > 1",
        "SELECT DISTINCT c1.citta FROM clienti c1 JOIN clienti c2 ON c1.citta = c2.citta AND c1.id <> c2.id"
        " ORDER BY 1",
        True,
        True,
        id="having-vs-self-join",
    ),
    pytest.param(
        "SELECT data FROM ordini WHERE data LIKE '2022%'",
        "SELECT data FROM ordini WHERE substr(data, 1, 4) = '2022'",
        True,
        True,
        id="dates-as-text",
    ),
]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> sqlite3.Connection:
    connection = sqlite3.connect(make_demo_db(tmp_path_factory.mktemp("compare") / "demo.sqlite"))
    yield connection
    connection.close()


def verdicts(connection: sqlite3.Connection, gold: str, pred: str) -> tuple[bool, bool]:
    augmented = order_key_query(gold)
    if augmented is None:
        gold_rows, keys = connection.execute(gold).fetchall(), None
    else:
        gold_rows, keys = split_order_keys(connection.execute(augmented[0]).fetchall(), augmented[1])
    pred_rows = connection.execute(pred).fetchall()
    return (
        results_match(gold_rows, pred_rows, gold_order_keys=keys),
        results_match_strict(gold_rows, pred_rows),
    )


@pytest.mark.parametrize(("gold", "pred", "ea", "ea_strict"), PAIRS)
def test_the_verdicts_on_the_demo_database(demo, gold, pred, ea, ea_strict):
    got_ea, got_strict = verdicts(demo, gold, pred)
    assert got_ea is ea
    if ea_strict is not ENGINE_DECIDES:
        assert got_strict is ea_strict


def test_the_table_has_at_least_forty_pairs():
    assert len(PAIRS) >= 40


def test_a_permutation_must_fit_every_row():
    assert not results_match([(1, 2), (2, 1)], [(1, 1), (2, 2)], gold_order_keys=None)


def test_it_finds_the_one_permutation_among_many_columns():
    gold = [tuple(range(i, i + 9)) for i in range(50)]
    pred = [tuple(reversed(row)) for row in gold]
    assert results_match(gold, pred, gold_order_keys=None)


def test_twin_columns_do_not_multiply_the_search():
    gold = [(1,) * 12 + (i,) for i in range(20)]
    pred = [(i,) + (1,) * 12 for i in range(20)]
    assert results_match(gold, pred, gold_order_keys=None)
    assert not results_match(gold, [(i + 1,) + (1,) * 12 for i in range(20)], gold_order_keys=None)


def test_rows_tied_on_their_key_may_swap_but_groups_may_not():
    gold = [("a", 1), ("b", 1), ("c", 2)]
    keys = [(1,), (1,), (2,)]
    assert results_match(gold, [("b", 1), ("a", 1), ("c", 2)], gold_order_keys=keys)
    assert not results_match(gold, [("c", 2), ("a", 1), ("b", 1)], gold_order_keys=keys)


def test_keys_differing_only_in_case_tie():
    gold = [("Roma",), ("roma",)]
    assert results_match(gold, [("roma",), ("Roma",)], gold_order_keys=[("Roma",), ("roma",)])


def test_whole_row_keys_require_the_gold_order():
    rows, keys = split_order_keys([(1, "a"), (2, "b")], 0)
    assert keys == rows
    assert not results_match(rows, [(2, "b"), (1, "a")], gold_order_keys=keys)


def test_split_order_keys_takes_the_last_columns():
    assert split_order_keys([(1, "a", 9), (2, "b", 8)], 1) == ([(1, "a"), (2, "b")], [(9,), (8,)])


def test_it_refuses_keys_that_do_not_fit_the_rows():
    with pytest.raises(ValueError):
        results_match([(1,), (2,)], [(1,), (2,)], gold_order_keys=[(1,)])


def test_blobs_that_are_not_text_compare_as_bytes():
    assert results_match([(b"\xff\x00",)], [(b"\xff\x00",)], gold_order_keys=None)
    assert not results_match([(b"\xff\x00",)], [("\xff\x00",)], gold_order_keys=None)


def test_mixed_types_in_one_column_sort_without_error():
    gold = [(None,), (1,), ("1",), (b"\xff",), (2.5,)]
    assert results_match(gold, list(reversed(gold)), gold_order_keys=None)


def test_strict_wants_order_and_column_order():
    assert results_match_strict([(1, "a"), (2, "b")], [(1.0, "a"), (2, "b")])
    assert not results_match_strict([(1, "a"), (2, "b")], [(2, "b"), (1, "a")])
    assert not results_match_strict([(1, "a")], [("a", 1)])
    assert results_match_strict([], [])


ORDER_KEY_CASES = [
    pytest.param("SELECT nome FROM clienti", None, id="no-order-by"),
    pytest.param(
        "SELECT * FROM (SELECT nome FROM clienti ORDER BY eta) AS s", None, id="order-by-in-subquery"
    ),
    pytest.param(
        "SELECT nome FROM clienti ORDER BY eta DESC",
        ("SELECT nome, eta FROM clienti ORDER BY eta DESC", 1),
        id="plain-column",
    ),
    pytest.param(
        "SELECT nome, eta AS anni FROM clienti ORDER BY anni",
        ("SELECT nome, eta AS anni, eta FROM clienti ORDER BY anni", 1),
        id="alias",
    ),
    pytest.param(
        "SELECT nome, eta AS anni FROM clienti ORDER BY anni * 2",
        ("SELECT nome, eta AS anni, eta * 2 FROM clienti ORDER BY anni * 2", 1),
        id="alias-inside-expression",
    ),
    pytest.param(
        "SELECT citta, COUNT(*) FROM clienti GROUP BY citta ORDER BY 2 DESC, 1",
        ("SELECT citta, COUNT(*), COUNT(*), citta FROM clienti GROUP BY citta ORDER BY 2 DESC, 1", 2),
        id="positions",
    ),
    pytest.param(
        "SELECT cliente_id FROM ordini GROUP BY cliente_id ORDER BY SUM(prezzo)",
        ("SELECT cliente_id, SUM(prezzo) FROM ordini GROUP BY cliente_id ORDER BY SUM(prezzo)", 1),
        id="aggregate",
    ),
    pytest.param(
        "SELECT DISTINCT citta AS c FROM clienti ORDER BY c DESC",
        ("SELECT DISTINCT citta AS c, citta FROM clienti ORDER BY c DESC", 1),
        id="distinct-output-key",
    ),
    pytest.param(
        "SELECT DISTINCT citta FROM clienti ORDER BY eta",
        ("SELECT DISTINCT citta FROM clienti ORDER BY eta", 0),
        id="distinct-outside-key-falls-back",
    ),
    pytest.param(
        "SELECT * FROM clienti ORDER BY 2", ("SELECT * FROM clienti ORDER BY 2", 0), id="star-position"
    ),
    pytest.param(
        "SELECT * FROM clienti ORDER BY eta",
        ("SELECT *, eta FROM clienti ORDER BY eta", 1),
        id="star-named-key",
    ),
    pytest.param(
        "SELECT nome FROM clienti UNION SELECT prodotto FROM ordini ORDER BY 1 DESC",
        ("SELECT nome, nome FROM clienti UNION SELECT prodotto, prodotto FROM ordini ORDER BY 1 DESC", 1),
        id="union-position",
    ),
    pytest.param(
        "SELECT nome AS x FROM clienti UNION ALL SELECT prodotto FROM ordini ORDER BY x",
        ("SELECT nome AS x, nome FROM clienti UNION ALL SELECT prodotto, prodotto FROM ordini ORDER BY x", 1),
        id="union-alias",
    ),
    pytest.param(
        "SELECT * FROM clienti UNION SELECT * FROM clienti ORDER BY 1",
        ("SELECT * FROM clienti UNION SELECT * FROM clienti ORDER BY 1", 0),
        id="union-star-falls-back",
    ),
]


@pytest.mark.parametrize(("sql", "expected"), ORDER_KEY_CASES)
def test_order_key_query(sql, expected):
    assert order_key_query(sql) == expected


def test_order_key_query_keeps_the_mysql_dialect():
    sql = "SELECT `nome` FROM clienti ORDER BY `eta`"
    assert order_key_query(sql, dialect="mysql") == ("SELECT `nome`, `eta` FROM clienti ORDER BY `eta`", 1)


def test_order_key_query_looks_inside_a_parenthesised_query():
    sql = "(SELECT nome FROM clienti ORDER BY eta)"
    assert order_key_query(sql, dialect="mysql") == ("SELECT nome, eta FROM clienti ORDER BY eta", 1)


@pytest.mark.parametrize(
    "sql", ["SELECT nome FROM clienti WHERE (", "SELECT 1; SELECT 2"], ids=["broken", "two"]
)
def test_order_key_query_refuses_text_it_cannot_read_without_quoting_it(sql):
    with pytest.raises(ValueError) as raised:
        order_key_query(sql)
    assert "clienti" not in str(raised.value) and "SELECT" not in str(raised.value)


def test_augmented_queries_run_and_keep_the_rows(demo):
    for param in ORDER_KEY_CASES:
        sql, expected = param.values
        if expected is None or expected[1] == 0:
            continue
        rows, _ = split_order_keys(demo.execute(expected[0]).fetchall(), expected[1])
        assert rows == demo.execute(sql).fetchall(), param.id


# What a practice version says of a wrong result: the coarsest reason first.
DIFFERENCES = [
    pytest.param([(1, "a"), (2, "b")], [(1, "a"), (2, "b")], None, None, id="the same"),
    pytest.param([(1, "a"), (2, "b")], [(1,), (2,)], None, "columns", id="a column fewer"),
    pytest.param([(1, "a"), (2, "b")], [(1, "a")], None, "row_count", id="a row fewer"),
    pytest.param([(1, "a"), (2, "b")], [(1, "a"), (3, "b")], None, "values", id="another value"),
    pytest.param([(1, "a"), (2, "b")], [(2, "b"), (1, "a")], [(1,), (2,)], "order", id="against ORDER BY"),
    pytest.param(
        [(1, "a"), (2, "b")], [(2, "b"), (1, "a")], None, "strict_only", id="order without ORDER BY"
    ),
    pytest.param([(1, "a")], [("a", 1)], None, "strict_only", id="columns swapped"),
    pytest.param([], [(1,)], None, "row_count", id="rows where the gold has none"),
]


@pytest.mark.parametrize(("gold", "pred", "order_keys", "expected"), DIFFERENCES)
def test_difference_names_why_a_result_is_not_the_golds(gold, pred, order_keys, expected):
    assert difference(gold, pred, gold_order_keys=order_keys) == expected
