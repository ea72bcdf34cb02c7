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
        ("SELECT nominativo FROM clienti", (0, 0, 0)),
        ("SELECT nominativo FROM clienti WHERE id = 1", (1, 0, 0)),
        ("SELECT nominativo FROM clienti WHERE id > 1 ORDER BY nominativo LIMIT 3", (3, 0, 0)),
        ("SELECT localita FROM clienti GROUP BY localita", (1, 0, 0)),
        ("SELECT localita FROM clienti GROUP BY localita HAVING COUNT(*) > 2", (1, 0, 0)),
        # component 1: table units
        ("SELECT c.nominativo FROM clienti c JOIN ordini o ON o.id_cliente = c.id", (1, 0, 0)),
        (
            "SELECT c.nominativo FROM clienti c JOIN ordini o ON o.id_cliente = c.id LEFT JOIN articoli p ON p.id = o.articolo",
            (2, 0, 0),
        ),
        ("SELECT clienti.nominativo FROM clienti, ordini WHERE ordini.id_cliente = clienti.id", (2, 0, 0)),
        (
            "SELECT t.n FROM (SELECT id_cliente, COUNT(*) AS n FROM ordini WHERE importo > 9 GROUP BY id_cliente) AS t",
            (0, 0, 0),
        ),
        (
            "SELECT c.nominativo FROM clienti c JOIN (SELECT id_cliente FROM ordini) o ON o.id_cliente = c.id",
            (1, 0, 0),
        ),
        # component 1: OR and LIKE in ON / WHERE / HAVING
        ("SELECT nominativo FROM clienti WHERE localita = 'Aosta' OR localita = 'Trento'", (2, 0, 1)),
        (
            "SELECT nominativo FROM clienti WHERE (localita = 'Aosta' OR localita = 'Lecce') AND (eta < 18 OR eta > 65)",
            (3, 0, 1),
        ),
        ("SELECT nominativo FROM clienti WHERE nominativo LIKE 'M%'", (2, 0, 0)),
        ("SELECT nominativo FROM clienti WHERE nominativo NOT LIKE 'M%'", (2, 0, 0)),
        (
            "SELECT c.nominativo FROM clienti c JOIN ordini o ON o.id_cliente = c.id OR o.nota LIKE '%urgente%'",
            (3, 0, 0),
        ),
        (
            "SELECT localita FROM clienti GROUP BY localita HAVING COUNT(*) > 2 OR MAX(nominativo) LIKE 'Z%'",
            (3, 0, 0),
        ),
        (
            "SELECT nominativo, (SELECT COUNT(*) FROM ordini WHERE nota LIKE 'x%' OR 1) FROM clienti",
            (0, 0, 1),
        ),
        # component 2: nested queries in conditions, set operations
        ("SELECT nominativo FROM clienti WHERE id IN (SELECT id_cliente FROM ordini)", (1, 1, 0)),
        (
            "SELECT nominativo FROM clienti WHERE id NOT IN (SELECT id_cliente FROM ordini WHERE articolo IN (SELECT id FROM articoli))",
            (1, 1, 0),
        ),
        (
            "SELECT nominativo FROM articoli WHERE listino > (SELECT AVG(listino) FROM articoli) AND EXISTS (SELECT 1 FROM ordini)",
            (1, 2, 1),
        ),
        (
            "SELECT id_cliente FROM ordini GROUP BY id_cliente HAVING SUM(importo) > (SELECT AVG(importo) FROM ordini)",
            (1, 1, 0),
        ),
        (
            "SELECT c.nominativo FROM clienti c JOIN ordini o ON o.id_cliente = c.id AND o.importo > (SELECT AVG(importo) FROM ordini)",
            (1, 1, 0),
        ),
        ("SELECT nominativo FROM clienti UNION SELECT nominativo FROM fornitori", (0, 1, 0)),
        (
            "SELECT nominativo FROM clienti INTERSECT SELECT nominativo FROM fornitori EXCEPT SELECT nominativo FROM dipendenti",
            (0, 1, 0),
        ),
        (
            "SELECT nominativo FROM clienti WHERE id = 1 UNION SELECT nominativo FROM fornitori WHERE id > 1 AND id < 9 ORDER BY nominativo LIMIT 1",
            (1, 1, 0),
        ),
        # others
        ("SELECT MAX(listino), MIN(listino) FROM articoli", (0, 0, 2)),
        ("SELECT AVG(listino) - MIN(listino) FROM articoli", (0, 0, 0)),
        ("SELECT id_cliente FROM ordini GROUP BY id_cliente ORDER BY SUM(importo) DESC", (2, 0, 0)),
        ("SELECT COUNT(*) FROM ordini GROUP BY id_cliente ORDER BY SUM(importo) DESC", (2, 0, 1)),
        ("SELECT nominativo, localita FROM clienti", (0, 0, 1)),
        ("SELECT nominativo FROM clienti WHERE localita = 'Aosta' AND eta > 30", (1, 0, 1)),
        ("SELECT COUNT(*) FROM ordini GROUP BY id_cliente, articolo", (1, 0, 1)),
        ("SELECT COUNT(*) FROM clienti WHERE NOT attivo", (1, 0, 0)),
        ("SELECT localita FROM clienti GROUP BY localita HAVING COUNT(*) > 1 AND SUM(eta) > 2", (1, 0, 0)),
        (
            "SELECT localita, COUNT(*), AVG(eta) FROM clienti WHERE eta > 18 AND attivo GROUP BY localita, zona",
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
        ("select nominativo from clienti where id = 3;", "easy"),
        ("SELECT `nominativo`, `localita` FROM `clienti` ORDER BY `nominativo`", "medium"),
        (
            "SELECT c.nominativo FROM clienti c JOIN ordini o ON o.id_cliente = c.id WHERE o.importo > 10 ORDER BY c.nominativo",
            "hard",
        ),
        ("(SELECT nominativo FROM clienti WHERE id IN (SELECT id_cliente FROM ordini))", "hard"),
        (
            "SELECT nominativo FROM clienti WHERE id IN (SELECT id_cliente FROM ordini) AND localita = 'Aosta'",
            "extra",
        ),
    ],
)
def test_levels_of_whole_queries(query: str, expected: str) -> None:
    assert hardness(query) == expected


def test_a_sqlite_query_is_read_as_sqlite() -> None:
    assert hardness('SELECT "nominativo" FROM "clienti" WHERE "id" = 3', source="sqlite") == "easy"


@pytest.mark.parametrize(
    "query",
    ["SELECT FROM WHERE", "SELECT 1; SELECT 2", "", "INSERT INTO clienti VALUES (1)"],
)
def test_what_is_not_one_select_query_raises_a_value_error(query: str) -> None:
    with pytest.raises(HardnessError):
        hardness(query)
    assert issubclass(HardnessError, ValueError)
