"""ONLY_FULL_GROUP_BY as MySQL 8.0 applies it (evaluation/scoring/full_group_by.py).

The cases follow the reference manual's examples, "MySQL Handling of GROUP BY" and "Detection of Functional
Dependence" (which use the world database: country, city, countrylanguage), and MySQL's own description of
the rules (sql/aggregate_check.h): each rule with a query MySQL 8.0 accepts and one it refuses. MariaDB
differs on all of the accepted ones that need functional dependence: its ONLY_FULL_GROUP_BY has none.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlglot

from evaluation.scoring import full_group_by
from evaluation.scoring.dialect import NotFullGroupBy, to_sqlite
from evaluation.scoring.full_group_by import Keys, full_group_by_refusal, read_keys
from evaluation.scoring.mysql_dump import build_sqlite
from evaluation.sources import BenchmarkSource, DatabaseSource, QuestionSource
from evaluation.validation import prepare_benchmark

DEMO = Path(__file__).resolve().parents[2] / "evaluation" / "demo"

WORLD = """
CREATE TABLE country (
  Code CHAR(3) NOT NULL PRIMARY KEY,
  Name VARCHAR(52) NOT NULL,
  Continent VARCHAR(20) NOT NULL,
  Population INT NOT NULL,
  Capital INT
);
CREATE TABLE city (
  ID INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  Name VARCHAR(35) NOT NULL,
  CountryCode CHAR(3) NOT NULL,
  District VARCHAR(20) NOT NULL,
  Population INT NOT NULL
);
CREATE TABLE countrylanguage (
  CountryCode CHAR(3) NOT NULL,
  Language VARCHAR(30) NOT NULL,
  IsOfficial ENUM('T', 'F') NOT NULL,
  Percentage DECIMAL(4,1) NOT NULL,
  PRIMARY KEY (CountryCode, Language)
);
CREATE TABLE mayor (
  id INT NOT NULL PRIMARY KEY,
  fiscal_code CHAR(16) NOT NULL UNIQUE,
  city_id INT UNIQUE,
  name VARCHAR(40) NOT NULL,
  party VARCHAR(40)
);
INSERT INTO country VALUES ('ITA', 'Italy', 'Europe', 59000000, 1);
"""


def world_keys(folder: Path) -> Keys:
    path = folder / "world.sqlite3"
    build_sqlite(WORLD, path, source="mysql")
    return read_keys(path)


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> Keys:
    return world_keys(tmp_path_factory.mktemp("world"))


def refusal(sql: str, keys: Keys):
    return full_group_by_refusal(sqlglot.parse_one(sql, read="mysql"), keys)


ACCEPTED = [
    # Detection of Functional Dependence, "Functional Dependencies Derived from Keys"
    pytest.param(
        "SELECT co.Name, COUNT(*) FROM countrylanguage cl, country co WHERE cl.CountryCode = co.Code "
        "GROUP BY co.Code",
        id="a-primary-key-determines-its-row",
    ),
    pytest.param("SELECT name, party FROM mayor GROUP BY fiscal_code", id="a-unique-not-null-key-too"),
    pytest.param(
        "SELECT name FROM mayor WHERE city_id > 0 GROUP BY city_id",
        id="a-unique-nullable-key-once-where-rejects-its-null",
    ),
    # "Functional Dependencies Derived from Multiple-Column Keys and from Equalities"
    pytest.param(
        "SELECT co.Name, cl.Language, cl.Percentage * co.Population / 100.0 AS SpokenBy "
        "FROM countrylanguage cl, country co WHERE cl.CountryCode = co.Code GROUP BY cl.CountryCode, cl.Language",
        id="a-two-column-key-and-an-equality-in-where",
    ),
    pytest.param(
        "SELECT co.Name, COUNT(*) FROM countrylanguage cl JOIN country co ON cl.CountryCode = co.Code "
        "GROUP BY cl.CountryCode",
        id="an-equality-in-an-inner-join-on",
    ),
    pytest.param(
        "SELECT co.Name, ci.Name FROM city ci JOIN country co ON ci.CountryCode = co.Code GROUP BY ci.ID",
        id="a-key-then-an-equality-then-a-key",
    ),
    # "MySQL Handling of GROUP BY": a column limited to a single value
    pytest.param(
        "SELECT Continent, SUM(Population) FROM country WHERE Continent = 'Europe'",
        id="a-column-equal-to-a-constant-in-an-aggregated-query",
    ),
    pytest.param(
        "SELECT Name, Population, COUNT(*) FROM country WHERE Code = 'ITA'", id="a-key-equal-to-a-constant"
    ),
    # "Functional Dependency Special Cases": outer joins
    pytest.param(
        "SELECT co.Name, MAX(ci.Population) FROM country co LEFT JOIN city ci ON ci.CountryCode = co.Code "
        "GROUP BY co.Code",
        id="the-strong-sides-key",
    ),
    pytest.param(
        "SELECT co.Code, ci.CountryCode FROM country co LEFT JOIN city ci ON ci.CountryCode = co.Code "
        "GROUP BY co.Code",
        id="a-weak-side-column-equal-in-on-to-a-grouped-strong-one",
    ),
    pytest.param(
        "SELECT ci.Name, COUNT(*) FROM country co LEFT JOIN city ci ON ci.CountryCode = co.Code GROUP BY ci.ID",
        id="the-weak-sides-key",
    ),
    pytest.param(
        "SELECT co.Name, COUNT(*) FROM country co LEFT JOIN city ci ON ci.CountryCode = co.Code "
        "WHERE ci.Population > 1000000 GROUP BY ci.CountryCode",
        id="an-outer-join-where-makes-inner",
    ),
    # "Functional Dependencies and Views": derived tables, CTEs
    pytest.param(
        "SELECT d.Name FROM (SELECT Code, Name FROM country) AS d GROUP BY d.Code",
        id="a-derived-tables-key",
    ),
    pytest.param(
        "SELECT d.ID, d.twice FROM (SELECT ID, Population * 2 AS twice FROM city) AS d GROUP BY d.ID",
        id="a-derived-expression-of-determined-columns",
    ),
    pytest.param(
        "SELECT co.Name, d.cities FROM country co JOIN (SELECT CountryCode, COUNT(*) AS cities FROM city "
        "GROUP BY CountryCode) AS d ON d.CountryCode = co.Code GROUP BY co.Code",
        id="a-grouped-derived-table-whose-group-is-determined",
    ),
    pytest.param(
        "WITH big AS (SELECT ID, Name FROM city WHERE Population > 1000000) "
        "SELECT big.Name, COUNT(*) FROM big GROUP BY big.ID",
        id="a-ctes-key",
    ),
    # "MySQL Handling of GROUP BY": expressions, aliases, positions
    pytest.param(
        "SELECT ID, FLOOR(Population / 100) FROM city GROUP BY ID, FLOOR(Population / 100)",
        id="an-expression-equal-to-a-grouped-one",
    ),
    pytest.param(
        "SELECT ID, F, ID + F FROM (SELECT ID, FLOOR(Population / 100) AS F FROM city "
        "GROUP BY ID, FLOOR(Population / 100)) AS dt",
        id="the-manuals-derived-table-workaround",
    ),
    pytest.param(
        "SELECT LEFT(Name, 1) AS initial, COUNT(*) AS n FROM country GROUP BY initial HAVING n > 1 "
        "ORDER BY n DESC, 1",
        id="an-alias-and-a-position",
    ),
    pytest.param(
        "SELECT Continent, COUNT(*) FROM country GROUP BY (Continent) ORDER BY COUNT(*), Continent",
        id="a-parenthesised-group",
    ),
    pytest.param("SELECT Continent, ANY_VALUE(Name) FROM country GROUP BY Continent", id="any-value"),
    pytest.param(
        "SELECT Continent, (SELECT COUNT(*) FROM country c2 WHERE c2.Continent = country.Continent) "
        "FROM country GROUP BY Continent",
        id="a-subquery-reading-a-grouped-column",
    ),
    pytest.param(
        "SELECT Continent, SUM(SUM(Population)) OVER (ORDER BY Continent) FROM country GROUP BY Continent",
        id="a-window-over-aggregates",
    ),
    pytest.param("SELECT COUNT(*) FROM country ORDER BY Name", id="the-order-of-a-single-row-is-dropped"),
    pytest.param(
        "SELECT Name, Population FROM country HAVING Population > 10", id="having-without-aggregates"
    ),
    pytest.param(
        "SELECT DISTINCT Continent FROM country ORDER BY Continent DESC", id="distinct-ordered-by-it"
    ),
    pytest.param(
        "SELECT DISTINCT Code, Name FROM country GROUP BY Code ORDER BY Population",
        id="distinct-dropped-when-the-group-is-selected",
    ),
    pytest.param(
        "SELECT nome, COUNT(*) FROM unknown_table GROUP BY id", id="what-it-cannot-tell-is-accepted"
    ),
]


@pytest.mark.parametrize("sql", ACCEPTED)
def test_mysql_8_accepts(sql, keys):
    assert refusal(sql, keys) is None


# (query, MySQL's error number, the clause and column its message names)
REFUSED = [
    pytest.param(
        "SELECT Name, MAX(Population) FROM country", 1140, "expression #1 of SELECT list", "'country.Name'",
        id="aggregated-without-group-by",
    ),
    pytest.param(
        "SELECT Name FROM country HAVING COUNT(*) > 1", 1140, "expression #1 of SELECT list", "'country.Name'",
        id="aggregated-by-having",
    ),
    pytest.param(
        "SELECT Continent, Name FROM country GROUP BY Continent", 1055, "Expression #2 of SELECT list",
        "'country.Name'", id="neither-grouped-nor-dependent",
    ),
    pytest.param(
        "SELECT cl.Percentage FROM countrylanguage cl GROUP BY cl.CountryCode", 1055,
        "Expression #1 of SELECT list", "'cl.Percentage'", id="part-of-a-key",
    ),
    pytest.param(
        "SELECT name FROM mayor GROUP BY city_id", 1055, "Expression #1 of SELECT list", "'mayor.name'",
        id="a-unique-key-that-allows-null",
    ),
    pytest.param(
        "SELECT co.Name, COUNT(*) FROM country co LEFT JOIN city ci ON ci.CountryCode = co.Code "
        "GROUP BY ci.CountryCode", 1055, "Expression #1 of SELECT list", "'co.Name'",
        id="the-strong-side-from-the-weak-side",
    ),
    pytest.param(
        "SELECT District, FLOOR(Population / 100), CONCAT(District, FLOOR(Population / 100)) FROM city "
        "GROUP BY District, FLOOR(Population / 100)", 1055, "Expression #3 of SELECT list",
        "'city.Population'", id="an-expression-built-from-a-grouped-expression",
    ),
    pytest.param(
        "SELECT d.Name, d.District FROM (SELECT Name, District FROM city) AS d GROUP BY d.Name", 1055,
        "Expression #2 of SELECT list", "'d.District'", id="a-derived-tables-column",
    ),
    pytest.param(
        "SELECT Continent, COUNT(*) FROM country GROUP BY Continent ORDER BY Name", 1055,
        "Expression #1 of ORDER BY clause", "'country.Name'", id="order-by",
    ),
    pytest.param(
        "SELECT Continent, COUNT(*) FROM country GROUP BY Continent HAVING Population > 100", 1055,
        "Expression #1 of HAVING clause", "'country.Population'", id="having",
    ),
    pytest.param(
        "SELECT Continent, (SELECT COUNT(*) FROM city WHERE city.CountryCode = country.Code) FROM country "
        "GROUP BY Continent", 1055, "Expression #2 of SELECT list", "'country.Code'",
        id="a-subquery-reading-an-ungrouped-column",
    ),
    pytest.param(
        "SELECT * FROM city GROUP BY CountryCode", 1055, "Expression #1 of SELECT list", "'city.ID'",
        id="a-star",
    ),
    pytest.param(
        "SELECT ci.ID, ci.Name, COUNT(*) FROM city ci GROUP BY ci.ID WITH ROLLUP", 1055,
        "Expression #2 of SELECT list", "'ci.Name'", id="with-rollup-no-dependence",
    ),
    pytest.param(
        "SELECT DISTINCT Continent FROM country ORDER BY Population", 3065, "Expression #1 of ORDER BY clause",
        "'country.Population'", id="distinct-ordered-by-an-unselected-column",
    ),
    pytest.param(
        "SELECT DISTINCT MIN(Population) FROM country GROUP BY Continent ORDER BY MAX(Population)", 3066,
        "Expression #1 of ORDER BY clause", "aggregate function", id="distinct-ordered-by-an-unselected-aggregate",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("sql", "code", "where", "names"), REFUSED)
def test_mysql_8_refuses(sql, code, where, names, keys):
    found = refusal(sql, keys)
    assert found is not None
    assert found.code == code
    assert where in found.message and names in found.message


def test_the_messages_are_mysqls(keys):
    assert refusal("SELECT Continent, Name FROM country GROUP BY Continent", keys).message == (
        "ERROR 1055 (42000): Expression #2 of SELECT list is not in GROUP BY clause and contains nonaggregated "
        "column 'country.Name' which is not functionally dependent on columns in GROUP BY clause; this is "
        "incompatible with sql_mode=only_full_group_by"
    )
    assert refusal("SELECT c.Name, MAX(c.Population) FROM country c", keys).message == (
        "ERROR 1140 (42000): In aggregated query without GROUP BY, expression #1 of SELECT list contains "
        "nonaggregated column 'c.Name'; this is incompatible with sql_mode=only_full_group_by"
    )
    assert refusal("SELECT DISTINCT Name FROM country ORDER BY Code", keys).message == (
        "ERROR 3065 (HY000): Expression #1 of ORDER BY clause is not in SELECT list, references column "
        "'country.Code' which is not in SELECT list; this is incompatible with DISTINCT"
    )


def test_a_derived_table_aggregated_without_group_by_is_refused_where_it_is_written(keys):
    """The issue's case: the outer query selects plain columns of a derived table whose own SELECT mixes
    columns with an aggregate and has no GROUP BY. MariaDB (without ONLY_FULL_GROUP_BY) returns a row;
    MySQL 8.0 refuses the derived table itself."""
    found = refusal(
        "SELECT Name, District FROM (SELECT ci.Name, ci.District, MAX(co.Population) FROM city ci "
        "JOIN country co ON ci.CountryCode = co.Code) AS t",
        keys,
    )
    assert found is not None and found.code == 1140
    assert "expression #1 of SELECT list contains nonaggregated column 'ci.Name'" in found.message


def test_a_views_query_carries_its_dependence(tmp_path):
    """Detection of Functional Dependence, "Functional Dependencies and Views": a view is read as the
    derived table of its query (the copies built from SQLite dumps may hold views)."""
    path = tmp_path / "views.sqlite3"
    build_sqlite(
        "CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT NOT NULL, district TEXT NOT NULL);"
        "CREATE VIEW big_city (city_id, city_name, district) AS SELECT id, name, district FROM city;",
        path,
        source="sqlite",
    )
    views = read_keys(path)
    assert refusal("SELECT city_name FROM big_city GROUP BY city_id", views) is None
    found = refusal("SELECT city_name FROM big_city GROUP BY district", views)
    assert found is not None and "'big_city.city_name'" in found.message


def test_a_failure_of_the_check_itself_accepts_the_query(keys, monkeypatch, caplog):
    def broken(*args):
        raise KeyError("a bug")

    monkeypatch.setattr(full_group_by._Analysis, "block", broken)
    assert refusal("SELECT Continent, Name FROM country GROUP BY Continent", keys) is None
    assert "KeyError" in caplog.text and "Name" not in caplog.text


# --- Where the check applies ---------------------------------------------------------------------------------


def test_a_mysql_prediction_is_refused_before_it_is_transpiled(keys):
    with pytest.raises(NotFullGroupBy, match=r"^ERROR 1055 \(42000\): Expression #2 of SELECT list"):
        to_sqlite("SELECT Continent, Name FROM country GROUP BY Continent", keys=keys, check_conformance=True)


def test_without_keys_or_outside_conformance_the_query_is_transpiled(keys):
    loose = "SELECT Continent, Name FROM country GROUP BY Continent"
    assert to_sqlite(loose, check_conformance=True).startswith("SELECT")
    assert to_sqlite(loose, keys=keys).startswith("SELECT")  # gold is checked at import, by validation
    assert to_sqlite(loose, source="sqlite", keys=keys, check_conformance=True) == loose  # SQLite's own rule


def test_keys_read_twice_are_equal_and_hash_alike_for_the_transpilers_cache(keys, tmp_path):
    again = world_keys(tmp_path)
    assert again == keys and hash(again) == hash(keys)


def test_gold_that_mysql_refuses_is_excluded_at_import_naming_the_error_not_the_column(tmp_path):
    source = BenchmarkSource(
        databases=[DatabaseSource("world", "World", WORLD)],
        questions=[
            QuestionSource(
                "world-001", "world", 1, "?", "SELECT Continent, Name FROM country GROUP BY Continent"
            ),
            QuestionSource("world-002", "world", 2, "?", "SELECT Name, COUNT(*) FROM country GROUP BY Code"),
        ],
    )
    prepared = prepare_benchmark(source, workdir=tmp_path)
    refused, accepted = prepared.questions
    [finding] = [f for f in refused.findings if f.code == "gold_loose_group_by"]
    assert "ERROR 1055" in finding.message and "SELECT list" in finding.message
    assert "Name" not in finding.message
    assert not refused.is_valid
    assert accepted.is_valid and not any(f.code == "gold_loose_group_by" for f in accepted.findings)


@pytest.mark.django_db
def test_the_scorer_calls_a_refused_prediction_a_syntax_error_with_mysqls_message(demo_version, gold):
    """On the demo: biblioteca-012's gold groups by the members' key and selects their names (MySQL 8.0
    accepts it); a prediction grouping by surname alone, or the issue's derived table, MySQL refuses."""
    from evaluation.grading import score_version

    loose = (
        "SELECT s.nome, s.cognome, COUNT(*) FROM soci AS s JOIN prestiti AS p ON p.socio_id = s.id "
        "WHERE YEAR(p.data_prestito) = 2023 GROUP BY s.cognome HAVING COUNT(*) >= 3"
    )
    derived = (
        "SELECT nome, cognome FROM (SELECT s.nome, s.cognome, MAX(p.data_prestito) FROM soci s "
        "JOIN prestiti p ON p.socio_id = s.id) AS t"
    )
    predictions = {"biblioteca-012": loose, "biblioteca-009": derived, "ciclismo-007": gold["ciclismo-007"]}
    scores = {
        s.question_id: s for s in score_version(version=demo_version, predictions=predictions).questions
    }
    grouped, aggregated = scores["biblioteca-012"], scores["biblioteca-009"]
    assert (grouped.outcome, grouped.static, grouped.ea) == ("syntax_error", True, False)
    assert grouped.error == (
        "ERROR 1055 (42000): Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated "
        "column 's.nome' which is not functionally dependent on columns in GROUP BY clause; this is "
        "incompatible with sql_mode=only_full_group_by"
    )
    assert (aggregated.outcome, aggregated.static) == ("syntax_error", True)
    assert aggregated.error.startswith("ERROR 1140 (42000): In aggregated query without GROUP BY")
    assert scores["ciclismo-007"].outcome == "correct"


@pytest.mark.parametrize("database", ["biblioteca", "ciclismo"])
def test_every_demo_gold_passes_only_full_group_by(database, tmp_path):
    path = tmp_path / f"{database}.sqlite3"
    build_sqlite((DEMO / f"{database}.sql").read_text(encoding="utf-8"), path, source="mysql")
    keys = read_keys(path)
    lines = (DEMO / f"{database}.jsonl").read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines if line.strip()]
    refused = [item["id"] for item in items if refusal(item["gold_sql"], keys) is not None]
    assert refused == []
