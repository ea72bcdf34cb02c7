"""Spider's hardness levels as SPIDER_HARDNESS.md spells them out (evaluation.scoring.hardness)."""

from __future__ import annotations

import pytest

from evaluation.scoring.hardness import HardnessCounts, HardnessError, hardness, hardness_counts, level


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("SELECT count(*) FROM t GROUP BY a HAVING count(*) > 5", "easy"),
        ("SELECT count(*) FROM t WHERE x IN (SELECT y FROM u)", "hard"),
        ("SELECT a FROM t WHERE a LIKE 'x%' OR b LIKE 'y%'", "extra"),
    ],
)
def test_the_three_examples_checked_against_spiders_code(query: str, expected: str) -> None:
    assert hardness(query) == expected


@pytest.mark.parametrize(
    ("query", "counts"),
    [
        # component 1: clauses
        ("SELECT nome FROM clienti", (0, 0, 0)),
        ("SELECT nome FROM clienti WHERE id = 1", (1, 0, 0)),
        ("SELECT nome FROM clienti WHERE id > 1 ORDER BY nome LIMIT 3", (3, 0, 0)),
        ("SELECT citta FROM clienti GROUP BY citta", (1, 0, 0)),
        ("SELECT citta FROM clienti GROUP BY citta HAVING COUNT(*) > 2", (1, 0, 0)),
        # component 1: table units
        ("SELECT c.nome FROM clienti c JOIN ordini o ON o.cliente = c.id", (1, 0, 0)),
        (
            "SELECT c.nome FROM clienti c JOIN ordini o ON o.cliente = c.id LEFT JOIN prodotti p ON p.id = o.prodotto",
            (2, 0, 0),
        ),
        ("SELECT clienti.nome FROM clienti, ordini WHERE ordini.cliente = clienti.id", (2, 0, 0)),
        (
            "SELECT t.n FROM (SELECT cliente, COUNT(*) AS n FROM ordini WHERE totale > 9 GROUP BY cliente) AS t",
            (0, 0, 0),
        ),
        ("SELECT c.nome FROM clienti c JOIN (SELECT cliente FROM ordini) o ON o.cliente = c.id", (1, 0, 0)),
        # component 1: OR and LIKE in ON / WHERE / HAVING
        ("SELECT nome FROM clienti WHERE citta = 'Roma' OR citta = 'Milano'", (2, 0, 1)),
        (
            "SELECT nome FROM clienti WHERE (citta = 'Roma' OR citta = 'Bari') AND (eta < 18 OR eta > 65)",
            (3, 0, 1),
        ),
        ("SELECT nome FROM clienti WHERE nome LIKE 'M%'", (2, 0, 0)),
        ("SELECT nome FROM clienti WHERE nome NOT LIKE 'M%'", (2, 0, 0)),
        (
            "SELECT c.nome FROM clienti c JOIN ordini o ON o.cliente = c.id OR o.nota LIKE '%urgente%'",
            (3, 0, 0),
        ),
        ("SELECT citta FROM clienti GROUP BY citta HAVING COUNT(*) > 2 OR MAX(nome) LIKE 'Z%'", (3, 0, 0)),
        ("SELECT nome, (SELECT COUNT(*) FROM ordini WHERE nota LIKE 'x%' OR 1) FROM clienti", (0, 0, 1)),
        # component 2: nested queries in conditions, set operations
        ("SELECT nome FROM clienti WHERE id IN (SELECT cliente FROM ordini)", (1, 1, 0)),
        (
            "SELECT nome FROM clienti WHERE id NOT IN (SELECT cliente FROM ordini WHERE prodotto IN (SELECT id FROM prodotti))",
            (1, 1, 0),
        ),
        (
            "SELECT nome FROM prodotti WHERE prezzo > (SELECT AVG(prezzo) FROM prodotti) AND EXISTS (SELECT 1 FROM ordini)",
            (1, 2, 1),
        ),
        (
            "SELECT cliente FROM ordini GROUP BY cliente HAVING SUM(totale) > (SELECT AVG(totale) FROM ordini)",
            (1, 1, 0),
        ),
        (
            "SELECT c.nome FROM clienti c JOIN ordini o ON o.cliente = c.id AND o.totale > (SELECT AVG(totale) FROM ordini)",
            (1, 1, 0),
        ),
        ("SELECT nome FROM clienti UNION SELECT nome FROM fornitori", (0, 1, 0)),
        (
            "SELECT nome FROM clienti INTERSECT SELECT nome FROM fornitori EXCEPT SELECT nome FROM dipendenti",
            (0, 1, 0),
        ),
        (
            "SELECT nome FROM clienti WHERE id = 1 UNION SELECT nome FROM fornitori WHERE id > 1 AND id < 9 ORDER BY nome LIMIT 1",
            (1, 1, 0),
        ),
        # others
        ("SELECT MAX(prezzo), MIN(prezzo) FROM prodotti", (0, 0, 2)),
        ("SELECT AVG(prezzo) - MIN(prezzo) FROM prodotti", (0, 0, 0)),
        ("SELECT cliente FROM ordini GROUP BY cliente ORDER BY SUM(totale) DESC", (2, 0, 0)),
        ("SELECT COUNT(*) FROM ordini GROUP BY cliente ORDER BY SUM(totale) DESC", (2, 0, 1)),
        ("SELECT nome, citta FROM clienti", (0, 0, 1)),
        ("SELECT nome FROM clienti WHERE citta = 'Roma' AND eta > 30", (1, 0, 1)),
        ("SELECT COUNT(*) FROM ordini GROUP BY cliente, prodotto", (1, 0, 1)),
        ("SELECT COUNT(*) FROM clienti WHERE NOT attivo", (1, 0, 0)),
        ("SELECT citta FROM clienti GROUP BY citta HAVING COUNT(*) > 1 AND SUM(eta) > 2", (1, 0, 0)),
        (
            "SELECT citta, COUNT(*), AVG(eta) FROM clienti WHERE eta > 18 AND attivo GROUP BY citta, cap",
            (2, 0, 4),
        ),
    ],
)
def test_the_counts_follow_the_definition(query: str, counts: tuple[int, int, int]) -> None:
    assert hardness_counts(query) == HardnessCounts(*counts)


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((0, 0, 0), "easy"),
        ((1, 0, 0), "easy"),
        ((0, 0, 1), "medium"),
        ((1, 0, 2), "medium"),
        ((2, 0, 1), "medium"),
        ((2, 0, 0), "medium"),
        ((2, 0, 3), "hard"),
        ((3, 0, 2), "hard"),
        ((1, 1, 0), "hard"),
        ((2, 0, 2), "extra"),
        ((4, 0, 0), "extra"),
        ((3, 0, 3), "extra"),
        ((1, 1, 1), "extra"),
        ((2, 1, 0), "extra"),
        ((0, 2, 0), "extra"),
    ],
)
def test_each_level_has_its_bounds(counts: tuple[int, int, int], expected: str) -> None:
    assert level(HardnessCounts(*counts)) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("select nome from clienti where id = 3;", "easy"),
        ("SELECT `nome`, `citta` FROM `clienti` ORDER BY `nome`", "medium"),
        (
            "SELECT c.nome FROM clienti c JOIN ordini o ON o.cliente = c.id WHERE o.totale > 10 ORDER BY c.nome",
            "hard",
        ),
        ("(SELECT nome FROM clienti WHERE id IN (SELECT cliente FROM ordini))", "hard"),
        ("SELECT nome FROM clienti WHERE id IN (SELECT cliente FROM ordini) AND citta = 'Roma'", "extra"),
    ],
)
def test_levels_of_whole_queries(query: str, expected: str) -> None:
    assert hardness(query) == expected


def test_a_sqlite_query_is_read_as_sqlite() -> None:
    assert hardness('SELECT "nome" FROM "clienti" WHERE "id" = 3', source="sqlite") == "easy"


@pytest.mark.parametrize(
    "query",
    ["SELECT FROM WHERE", "SELECT 1; SELECT 2", "", "INSERT INTO clienti VALUES (1)"],
)
def test_what_is_not_one_select_query_raises_a_value_error(query: str) -> None:
    with pytest.raises(HardnessError):
        hardness(query)
    assert issubclass(HardnessError, ValueError)
