"""What each dialect accepts: MySQL 8.0's constructs and functions, SQLite's built-in functions.

Every case names the construct; the real Termite gold (skipped when the archive is absent) and the demo's
gold all pass. Failures name question ids only, never gold SQL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pyzipper

from evaluation.scoring.conformance import conformance_error
from evaluation.scoring.score import GoldQuestion, score_predictions
from evaluation.sources import demo_source
from tests.evaluation.demo_db import make_demo_db

MYSQL_REFUSED = [
    ("SELECT a FROM t WHERE a == 1", "=="),
    ("SELECT a::int FROM t", "::"),
    ("SELECT a FROM t WHERE a NOTNULL", "NOTNULL"),
    ("SELECT a FROM t WHERE a ISNULL", "ISNULL"),
    ("SELECT a FROM t WHERE a ILIKE 'x%'", "ILIKE"),
    ("SELECT a FROM t WHERE a GLOB 'x*'", "GLOB"),
    ("SELECT a FROM t WHERE a IS NOT DISTINCT FROM b", "DISTINCT FROM"),
    ("SELECT a FROM t WHERE a IS DISTINCT FROM b", "DISTINCT FROM"),
    ("SELECT a FROM t ORDER BY a NULLS FIRST", "NULLS FIRST"),
    ("SELECT a FROM t ORDER BY a DESC NULLS LAST", "NULLS LAST"),
    ("SELECT a FROM t FULL OUTER JOIN u ON t.a = u.a", "FULL OUTER JOIN"),
    ("SELECT CAST(a AS TEXT) FROM t", "CAST to TEXT"),
    ("SELECT CAST(a AS INTEGER) FROM t", "CAST to INTEGER"),
    ("SELECT CONVERT(a, VARCHAR(5)) FROM t", "CONVERT to VARCHAR"),
    ("SELECT a FROM t OFFSET 0 LIMIT 5", "OFFSET before LIMIT"),
    ("SELECT a FROM t LIMIT -1", "LIMIT"),
    ("SELECT a FROM t LIMIT 5 OFFSET -1", "OFFSET"),
    ("SELECT a FROM t LIMIT 1.5", "LIMIT"),
    ("SELECT a FROM t WHERE a IS 'text'", "IS followed by a value"),
    ("SELECT a FROM t WHERE a = 'x' COLLATE NOCASE", "COLLATE NOCASE"),
    ("SELECT a FROM t FETCH FIRST 5 ROWS ONLY", "FETCH"),
    ("SELECT COUNT(*) FILTER (WHERE a > 1) FROM t", "FILTER"),
    ("SELECT strftime('%Y', d) FROM t", "strftime()"),
    ("SELECT julianday(d) FROM t", "julianday()"),
    ("SELECT printf('%d', a) FROM t", "printf()"),
    ("SELECT iif(a > 1, 1, 0) FROM t", "iif()"),
    ("SELECT typeof(a) FROM t", "typeof()"),
    ("SELECT total(a) FROM t", "total()"),
    ("SELECT string_agg(a, ',') FROM t", "string_agg()"),
    ("SELECT mysql_truncate(a, 1) FROM t", "mysql_truncate()"),
    ("SELECT ROUND(a, 1, 2) FROM t", "ROUND() with 3 arguments"),
    ("SELECT NOW(1, 2) FROM t", "NOW() with 2 arguments"),
]

MYSQL_ACCEPTED = [
    "SELECT a FROM t WHERE a = 1 ORDER BY a DESC LIMIT 5 OFFSET 2",
    "SELECT a FROM t LIMIT 2, 5",
    "SELECT CAST(a AS SIGNED), CAST(a AS UNSIGNED INTEGER), CAST(a AS DECIMAL(10, 2)), CAST(a AS CHAR(5)),"
    " CAST(a AS DATE), CONVERT(a, DATETIME), CONVERT(a USING utf8mb4) FROM t",
    "SELECT a FROM t WHERE a IS NOT NULL AND b IS TRUE AND c IS NOT FALSE AND d IS UNKNOWN AND ISNULL(e)",
    "SELECT a <=> b, a COLLATE utf8mb4_bin = 'x' FROM t",
    "WITH c (x, y) AS (SELECT 1, 2) SELECT x FROM c",
    "WITH RECURSIVE n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT i FROM n",
    "SELECT IF(a, 1, 2), IFNULL(a, 0), COALESCE(a, b, c), GROUP_CONCAT(DISTINCT a ORDER BY a SEPARATOR ', '),"
    " COUNT(DISTINCT a, b), TRIM(LEADING 'x' FROM a), EXTRACT(YEAR FROM d), SUBSTRING(a FROM 2 FOR 3),"
    " POSITION('a' IN b), DATE_ADD(d, INTERVAL 1 DAY), d - INTERVAL 2 MONTH FROM t",
    "SELECT a FROM t LEFT JOIN u ON t.x = u.x RIGHT OUTER JOIN v USING (x) CROSS JOIN w NATURAL JOIN z",
    "SELECT a, RANK() OVER (PARTITION BY b ORDER BY c DESC), LAG(a, 1, 0) OVER w FROM t WINDOW w AS (ORDER BY a)",
    "SELECT s.a FROM (SELECT 1 AS a) AS s (a)",
    "SELECT a FROM t WHERE a IN (SELECT b FROM u) AND EXISTS (SELECT 1) AND a REGEXP '^x' AND a NOT LIKE 'y%'"
    " AND a DIV 2 = 1 AND a MOD 2 = 0 AND a BETWEEN 1 AND 5 AND a > ALL (SELECT 1)",
    "SELECT a, COUNT(*) FROM t GROUP BY a WITH ROLLUP HAVING COUNT(*) > 1",
    "SELECT DATE_FORMAT(d, '%Y'), YEAR(d), TIMESTAMPDIFF(DAY, a, b), DATEDIFF(a, b), STR_TO_DATE(a, '%d/%m/%Y')"
    " FROM t",
    "SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END, CONCAT(a, b), CONCAT_WS('-', a, b), LEFT(a, 2), MID(a, 2)"
    " FROM t",
    "SELECT a FROM t UNION SELECT b FROM u ORDER BY 1",
    "SELECT a->'$.x', a->>'$.y', JSON_EXTRACT(a, '$.z') FROM t",
    "DELETE FROM t",  # not a query: the sandbox refuses it as a write
]

SQLITE_REFUSED = [
    ("SELECT mysql_truncate(a, 1) FROM t", "mysql_truncate()"),
    ("SELECT mysql_concat_ws('-', a, b) FROM t", "mysql_concat_ws()"),
    ("SELECT mysql_date_add(d, 1, 'DAY') FROM t", "mysql_date_add()"),
    ("SELECT MYSQL_TIMESTAMPDIFF('DAY', a, b) FROM t", "MYSQL_TIMESTAMPDIFF()"),
    ('SELECT "mysql_truncate"(a, 1) FROM t', "mysql_truncate()"),
    ("SELECT [mysql_truncate](a, 1) FROM t", "mysql_truncate()"),
    ("SELECT `mysql_truncate`(a, 1) FROM t", "mysql_truncate()"),
    ("SELECT regexp('x', a) FROM t", "REGEXP"),
    ("SELECT a FROM t WHERE a REGEXP 'x'", "REGEXP"),
    ("SELECT NOW() FROM t", "NOW()"),
    ("SELECT DATE_FORMAT(d, '%Y') FROM t", "DATE_FORMAT()"),
]

SQLITE_ACCEPTED = [
    "SELECT strftime('%Y', d), iif(a, 1, 2), printf('%d', a), total(x), julianday(d), typeof(a) FROM t",
    "SELECT CAST(a AS VARCHAR(10)), a FROM t WHERE a GLOB 'x*' AND b LIKE 'y' AND c IN (1) LIMIT -1",
    "WITH c(x) AS (SELECT 1) SELECT x FROM c",
    "SELECT count(*) FILTER (WHERE a) OVER (PARTITION BY b), group_concat(a, ',') FROM t",
    "SELECT 'mysql_truncate(' AS text FROM t -- mysql_truncate(1, 2)",
    "SELECT value FROM json_each('[1]')",
    "SELECT a FROM t WHERE a IS 'x' AND b == 1 AND c NOTNULL ORDER BY a NULLS FIRST",
]


@pytest.mark.parametrize(("sql", "construct"), MYSQL_REFUSED)
def test_mysql_refuses_what_mysql_does_not_accept_naming_it(sql, construct):
    error = conformance_error(sql, dialect="mysql")
    assert error is not None and error.startswith("not MySQL: ") and construct in error


@pytest.mark.parametrize("sql", MYSQL_ACCEPTED)
def test_mysql_accepts_mysql(sql):
    assert conformance_error(sql, dialect="mysql") is None


@pytest.mark.parametrize(("sql", "construct"), SQLITE_REFUSED)
def test_sqlite_refuses_calls_of_anything_but_sqlites_functions(sql, construct):
    error = conformance_error(sql, dialect="sqlite")
    assert error is not None and error.startswith("not SQLite: ") and construct in error


@pytest.mark.parametrize("sql", SQLITE_ACCEPTED)
def test_sqlite_accepts_sqlite(sql):
    assert conformance_error(sql, dialect="sqlite") is None


def test_what_cannot_be_read_is_left_to_the_transpiler():
    assert conformance_error("SELECT FROM WHERE (", dialect="mysql") is None
    assert conformance_error("SELECT 1; SELECT 2", dialect="mysql") is None
    assert conformance_error("SELECT " + "(" * 500 + "1" + ")" * 500, dialect="mysql") is None


def test_an_unknown_dialect_is_the_callers_mistake():
    with pytest.raises(ValueError, match="unknown SQL dialect"):
        conformance_error("SELECT 1", dialect="postgres")


def test_the_demos_gold_conforms():
    for question in demo_source().questions:
        assert conformance_error(question.gold_sql, dialect="mysql") is None, question.public_id


@pytest.mark.termite_archive
def test_every_termite_gold_query_conforms(termite_archive):
    with pyzipper.AESZipFile(termite_archive) as archive:
        archive.setpassword(b"youshallnotpass")
        items = json.loads(archive.read("databases/queries.json"))
    assert len(items) == 202
    refused = [
        f"{item['db_id']}-{position:03d}"
        for position, item in enumerate(items, start=1)
        if conformance_error(item["query"], dialect="mysql") is not None
    ]
    assert not refused, refused


# --- through score_predictions ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return make_demo_db(tmp_path_factory.mktemp("conformance") / "demo.sqlite")


def _score(demo: Path, predictions: dict[str, str], dialect: str):
    questions = [GoldQuestion(qid, "negozio", "easy", "SELECT nome FROM clienti") for qid in predictions]
    report = score_predictions(
        questions=questions, predictions=predictions, database_paths={"negozio": demo}, dialect=dialect
    )
    return {score.question_id: score for score in report.questions}


def test_a_mysql_prediction_mysql_refuses_is_a_static_syntax_error_naming_the_construct(demo):
    scores = _score(
        demo,
        {
            "ilike": "SELECT nome FROM clienti WHERE nome ILIKE '%'",
            "nulls": "SELECT nome FROM clienti ORDER BY nome NULLS FIRST",
            "mysql": "SELECT nome FROM clienti",
        },
        "mysql",
    )
    assert scores["ilike"].outcome == "syntax_error" and scores["ilike"].static
    assert scores["ilike"].error == "not MySQL: ILIKE"
    assert scores["nulls"].error == "not MySQL: NULLS FIRST" and scores["nulls"].static
    assert scores["mysql"].outcome == "correct"


def test_a_sqlite_prediction_cannot_call_the_mysql_helpers(demo):
    scores = _score(
        demo,
        {
            "helper": "SELECT mysql_concat_ws('', nome) FROM clienti",
            "regexp": "SELECT nome FROM clienti WHERE nome REGEXP '.'",
            "sqlite": "SELECT nome FROM clienti WHERE nome GLOB '*'",
            "huge": "SELECT randomblob(1000000000) FROM clienti",
        },
        "sqlite",
    )
    assert scores["helper"].outcome == "syntax_error" and scores["helper"].static
    assert "mysql_concat_ws()" in scores["helper"].error
    assert scores["regexp"].outcome == "syntax_error"
    assert scores["sqlite"].outcome == "correct"
    assert scores["huge"].outcome == "resource_limit"


def test_the_order_by_of_a_union_takes_the_results_column_names_not_a_tables():
    # MySQL's error 1250; SQLite runs it.
    refused = "SELECT c.nome FROM clienti c UNION ALL SELECT o.prodotto FROM ordini o ORDER BY c.nome"
    assert conformance_error(refused, dialect="mysql") == (
        "not MySQL: ORDER BY of a UNION naming a table (it takes the result's column names)"
    )
    assert conformance_error(refused.replace("ORDER BY c.nome", "ORDER BY nome"), dialect="mysql") is None
    nested = (
        "SELECT * FROM (SELECT c.nome FROM clienti c UNION SELECT o.prodotto FROM ordini o) u ORDER BY u.nome"
    )
    assert conformance_error(nested, dialect="mysql") is None
