"""Scoring a submission end to end: transpile, run in the sandbox, compare, aggregate, report."""

from __future__ import annotations

import json
import logging
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from evaluation.scoring import score as score_module
from evaluation.scoring.dialect import read_schema, to_sqlite
from evaluation.scoring.sandbox import Limits
from evaluation.scoring.score import (
    SCORER_VERSION,
    GoldQuestion,
    GoldResult,
    QuestionScore,
    score_predictions,
)
from evaluation.scoring.vocabulary import OUTCOMES
from tests.evaluation.demo_db import make_demo_db, sha256_of
from tests.evaluation.hostile_sql import INFINITE_CTE

FAST = Limits(query_seconds=0.2, kill_grace_seconds=0.3)

# (gold in MySQL, prediction in MySQL, outcome, EA-strict), all on the demo database.
MYSQL_PAIRS = [
    pytest.param(
        "SELECT nome FROM clienti WHERE eta BETWEEN 30 AND 40",
        "SELECT nome FROM clienti WHERE eta BETWEEN '30 anni' AND '40'",
        "correct",
        True,
        id="number-between-strings-read-as-numbers",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE eta IN (28, 34)",
        "SELECT nome FROM clienti WHERE eta IN ('28', '34 anni')",
        "correct",
        True,
        id="number-in-strings-read-as-numbers",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE citta = 'Roma'",
        "SELECT `nome` FROM `clienti` WHERE `citta` = 'Roma'",
        "correct",
        True,
        id="backticks",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE data_iscrizione LIKE '2020%'",
        "SELECT nome FROM clienti WHERE YEAR(data_iscrizione) = 2020",
        "correct",
        True,
        id="year-function",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE data_iscrizione LIKE '2020%'",
        "SELECT nome FROM clienti WHERE YEAR(data_iscrizione) = '2020'",
        "correct",
        True,
        id="year-compared-with-text",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE data_iscrizione LIKE '2020%'",
        "SELECT nome FROM clienti WHERE YEAR(data_iscrizione) = 2021",
        "wrong_result",
        False,
        id="wrong-year",
    ),
    pytest.param(
        "SELECT COUNT(*) FROM ordini WHERE data LIKE '____-05-%'",
        "SELECT COUNT(*) FROM ordini WHERE MONTH(data) = 5",
        "correct",
        True,
        id="month-function",
    ),
    pytest.param(
        "SELECT id FROM ordini WHERE data >= '2022-01-01'",
        "SELECT id FROM ordini WHERE DATEDIFF(data, '2022-01-01') >= 0",
        "correct",
        True,
        id="datediff",
    ),
    pytest.param(
        "SELECT COUNT(*) FROM ordini",
        "SELECT COUNT(*) AS 'totale' FROM ordini",
        "correct",
        True,
        id="alias-in-single-quotes",
    ),
    pytest.param(
        "SELECT nome FROM clienti WHERE citta = 'Roma'",
        "SELECT nome FROM clienti WHERE citta = 'roma'",
        "correct",
        True,
        id="string-equality-ignores-case",
    ),
    pytest.param(
        "SELECT nome FROM clienti ORDER BY eta DESC LIMIT 1",
        "SELECT `nome` FROM clienti ORDER BY `eta` DESC LIMIT 1",
        "correct",
        True,
        id="order-and-limit",
    ),
    pytest.param(
        "SELECT nome, eta FROM clienti ORDER BY eta",
        "SELECT eta, nome FROM clienti ORDER BY eta, nome",
        "correct",
        False,
        id="ties-and-columns-moved",
    ),
    pytest.param(
        "SELECT quantita * 0.5 FROM ordini WHERE id = 1",
        "SELECT quantita / 2 FROM ordini WHERE id = 1",
        "correct",
        True,
        id="division-gives-decimals",
    ),
    pytest.param(
        "SELECT nome FROM clienti", "SELECT nome FROM clienti WHERE", "syntax_error", False, id="unparseable"
    ),
    pytest.param(
        "SELECT nome FROM clienti", "SELECT 1; SELECT 2", "syntax_error", False, id="two-statements"
    ),
    pytest.param(
        "SELECT nome FROM clienti",
        "SELECT nome FROM 'clienti'",
        "syntax_error",
        False,
        id="quoted-table-name",
    ),
    pytest.param(
        "SELECT nome FROM clienti", "SELECT cognome FROM clienti", "runtime_error", False, id="unknown-column"
    ),
    pytest.param("SELECT nome FROM clienti", "DELETE FROM clienti", "runtime_error", False, id="a-write"),
    pytest.param("SELECT nome FROM clienti", INFINITE_CTE, "timeout", False, id="runaway"),
    # SQLite's function in a MySQL prediction: not MySQL (the huge value is test_conformance's, in SQLite).
    pytest.param(
        "SELECT nome FROM clienti", "SELECT randomblob(1000000000)", "syntax_error", False, id="not-mysql"
    ),
    pytest.param("SELECT nome FROM clienti", None, "not_submitted", False, id="no-prediction"),
    pytest.param("SELECT nome FROM clienti", "  \n", "not_submitted", False, id="blank-prediction"),
]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return make_demo_db(tmp_path_factory.mktemp("score") / "demo.sqlite")


@pytest.fixture(scope="module")
def schema(demo) -> dict:
    with closing(sqlite3.connect(demo)) as connection:
        return read_schema(connection)


def question(qid: str, gold_sqlite: str, *, hardness: str = "easy", valid: bool = True) -> GoldQuestion:
    return GoldQuestion(
        question_id=qid, db_id="negozio", hardness=hardness, sql_sqlite=gold_sqlite, valid=valid
    )


def score(demo: Path, questions: list[GoldQuestion], predictions: dict, **kwargs):
    return score_predictions(
        questions=questions, predictions=predictions, database_paths={"negozio": demo}, **kwargs
    )


@pytest.fixture(scope="module")
def mysql_scores(demo, schema) -> dict[str, QuestionScore]:
    questions, predictions = [], {}
    for param in MYSQL_PAIRS:
        gold, pred, _outcome, _strict = param.values
        questions.append(question(param.id, to_sqlite(gold, schema=schema)))
        if pred is not None:
            predictions[param.id] = pred
    report = score(demo, questions, predictions, limits=FAST)
    return {s.question_id: s for s in report.questions}


@pytest.mark.parametrize(("gold", "pred", "outcome", "ea_strict"), MYSQL_PAIRS)
def test_mysql_predictions_through_the_full_path(mysql_scores, request, gold, pred, outcome, ea_strict):
    result = mysql_scores[request.node.callspec.id]
    assert result.outcome == outcome, result.error
    assert result.ea is (outcome == "correct")
    assert result.ea_strict is ea_strict
    assert (result.error is None) == (outcome in ("correct", "wrong_result", "not_submitted"))


def test_an_error_is_the_predictions_own(mysql_scores):
    assert "cognome" in mysql_scores["unknown-column"].error
    assert "statement" in mysql_scores["two-statements"].error


def test_the_report_has_exactly_the_agreed_json_shape(demo):
    report = score(
        demo,
        [
            question("q1", "SELECT nome FROM clienti", hardness="easy"),
            question("q2", "SELECT COUNT(*) FROM ordini", hardness="medium"),
        ],
        {"q1": "SELECT nome FROM clienti", "q2": "SELECT COUNT(*) FROM ordini WHERE quantita > 100"},
        benchmark_version="demo-1",
    )
    data = json.loads(json.dumps(report.as_dict()))
    assert list(data) == ["version", "scorer_version", "overall", "per_database", "per_hardness", "outcomes"]
    assert data["version"] == "demo-1"
    assert data["scorer_version"] == SCORER_VERSION == "1.6.0"
    assert data["overall"] == {
        "ea": 0.5,
        "ea_strict": 0.5,
        "ea_ci95": data["overall"]["ea_ci95"],
        "ts_ea": 0.5,
        "ts_ea_ci95": data["overall"]["ts_ea_ci95"],
        "ts_questions": 0,
        "n": 2,
        "excluded": 0,
    }
    lo, hi = data["overall"]["ea_ci95"]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0
    assert data["per_database"] == {"negozio": {"ea": 0.5, "ea_strict": 0.5, "ts_ea": 0.5, "n": 2}}
    assert list(data["per_hardness"]) == ["easy", "medium", "hard", "extra"]
    assert data["per_hardness"]["medium"] == {"ea": 0.0, "ea_strict": 0.0, "ts_ea": 0.0, "n": 1}
    assert list(data["outcomes"]) == list(OUTCOMES)
    assert (data["outcomes"]["correct"], data["outcomes"]["wrong_result"]) == (1, 1)


def test_per_question_details_keep_the_question_order(demo):
    report = score(
        demo,
        [question("b", "SELECT COUNT(*) FROM clienti"), question("a", "SELECT COUNT(*) FROM ordini")],
        {"a": "SELECT COUNT(*) FROM ordini", "b": "SELECT COUNT(*) FROM ordini", "z": "SELECT 4"},
        dialect="sqlite",
    )
    assert report.questions == (
        QuestionScore("b", "wrong_result", False, False, None),
        QuestionScore("a", "correct", True, True, None, ts=True),
    )


def test_invalid_questions_are_excluded_from_every_denominator(demo):
    report = score(
        demo,
        [
            question("ok", "SELECT COUNT(*) FROM clienti"),
            question("bad", "SELECT COUNT(*) FROM clienti", hardness="hard", valid=False),
        ],
        {"ok": "SELECT COUNT(*) FROM clienti", "bad": "SELECT COUNT(*) FROM clienti"},
    )
    data = report.as_dict()
    assert (data["overall"]["n"], data["overall"]["excluded"], data["overall"]["ea"]) == (1, 1, 1.0)
    assert data["per_hardness"]["hard"]["n"] == 0
    assert report.questions[1] == QuestionScore(
        "bad", "excluded", False, False, "the question is marked invalid"
    )


def test_a_gold_query_that_fails_excludes_its_question_and_says_only_its_id(demo, caplog):
    broken_gold = "SELECT segreto FROM clienti"
    with caplog.at_level(logging.WARNING):
        report = score(demo, [question("q7", broken_gold), question("q8", "SELECT 1")], {"q7": "SELECT 1"})
    excluded = report.questions[0]
    assert (excluded.outcome, excluded.error) == (
        "excluded",
        "the gold query of question q7 failed at scoring time",
    )
    assert report.as_dict()["overall"]["excluded"] == 1
    assert report.as_dict()["outcomes"]["not_submitted"] == 1
    assert "q7" in caplog.text
    assert "segreto" not in caplog.text + json.dumps(report.as_dict()) + repr(report.questions)


def test_the_gold_cache_is_filled_once_and_then_used(demo):
    cache: dict = {}
    questions = [
        question("q1", "SELECT nome FROM clienti ORDER BY eta"),
        question("q2", "SELECT COUNT(*) FROM ordini"),
    ]
    first = score(demo, questions, {"q1": "SELECT nome FROM clienti ORDER BY eta"}, gold_cache=cache)
    assert len(cache) == 2
    ordered = next(result for key, result in cache.items() if key[1] == "q1")
    assert len(ordered.rows) == len(ordered.order_keys) == 6
    key = next(key for key in cache if key[1] == "q2")
    assert key[0] == sha256_of(demo)
    cache[key] = GoldResult(rows=((9,),), order_keys=None)  # not the database's 8: right only from the cache
    second = score(demo, questions, {"q2": "SELECT COUNT(*) + 1 FROM ordini"}, gold_cache=cache)
    assert first.questions[0].outcome == "correct"
    assert second.questions[1].outcome == "correct"


def test_a_databases_schema_is_read_once_for_many_submissions_and_again_once_it_changes(
    tmp_path, monkeypatch
):
    database = make_demo_db(tmp_path / "negozio.sqlite")
    reads = []
    read_keys = score_module.read_keys
    monkeypatch.setattr(score_module, "read_keys", lambda path: reads.append(path) or read_keys(path))
    questions = [question("q1", "SELECT COUNT(*) FROM ordini")]
    for _ in range(3):
        assert score(database, questions, {"q1": "SELECT COUNT(*) FROM ordini"}).questions[0].ea
    assert len(reads) == 1
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("ALTER TABLE ordini ADD COLUMN sconto TEXT")
        connection.commit()
    # Another content, another sha256: its schema is read anew, and the new column is known.
    report = score(database, questions, {"q1": "SELECT COUNT(*) FROM ordini WHERE sconto IS NULL"})
    assert report.questions[0].ea
    assert len(reads) == 2


def test_the_total_budget_stops_a_runaway_submission_but_not_its_gold(demo):
    questions = [question(f"q{i}", "SELECT 1") for i in range(4)]
    budget = Limits(query_seconds=0.2, total_seconds=0.3, kill_grace_seconds=0.3)
    report = score(demo, questions, {q.question_id: INFINITE_CTE for q in questions}, limits=budget)
    assert [q.outcome for q in report.questions] == ["timeout"] * 4
    assert "total time budget" in report.questions[-1].error
    assert report.as_dict()["overall"]["excluded"] == 0


def test_the_database_file_is_never_modified(demo):
    before = sha256_of(demo)
    score(demo, [question("q1", "SELECT 1")], {"q1": "DROP TABLE clienti"})
    assert sha256_of(demo) == before


def test_a_valid_question_without_a_database_is_a_caller_error(demo):
    with pytest.raises(ValueError, match="altro"):
        score_predictions(
            questions=[GoldQuestion("q1", "altro", "easy", "SELECT 1")],
            predictions={},
            database_paths={"negozio": demo},
        )


def test_ea_strict_compares_with_the_gold_as_written_not_with_its_sort_keys_appended(demo):
    # Rows that tie on the sort key may come back in another order once the keys are appended.
    gold = "SELECT nome FROM clienti ORDER BY eta > 0"
    report = score(demo, [question("q1", gold)], {"q1": gold})
    assert report.questions[0].ea and report.questions[0].ea_strict


# --- Test-suite EA -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def neighbour(tmp_path_factory, demo) -> Path:
    """The demo database with other data: Anna is 27 there, and Paolo lives in Roma."""
    path = tmp_path_factory.mktemp("neighbour") / "neighbour.sqlite3"
    path.write_bytes(demo.read_bytes())
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("UPDATE clienti SET eta = 27 WHERE nome = 'Anna'")
        connection.execute("UPDATE clienti SET citta = 'Roma' WHERE nome = 'Paolo'")
    return path


def test_ts_ea_asks_the_prediction_to_be_right_on_every_database_of_the_suite(demo, neighbour):
    gold = GoldQuestion("q", "negozio", "easy", "SELECT nome FROM clienti WHERE eta <= 28", suite=("vicino",))
    report = score_predictions(
        questions=[
            gold,
            GoldQuestion("r", "negozio", "easy", "SELECT COUNT(*) FROM clienti", suite=("vicino",)),
        ],
        predictions={"q": "SELECT nome FROM clienti WHERE eta = 28", "r": "SELECT COUNT(*) FROM clienti"},
        database_paths={"negozio": demo, "vicino": neighbour},
        dialect="sqlite",
        limits=FAST,
    )
    by_id = {score.question_id: score for score in report.questions}
    assert (by_id["q"].ea, by_id["q"].ts) == (True, False)  # right here only because nobody is 27
    assert (by_id["r"].ea, by_id["r"].ts) == (True, True)
    data = report.as_dict()
    assert (data["overall"]["ea"], data["overall"]["ts_ea"], data["overall"]["ts_questions"]) == (1.0, 0.5, 2)
    assert data["per_database"]["negozio"]["ts_ea"] == 0.5


def test_a_prediction_that_fails_on_a_neighbour_or_is_wrong_on_the_original_is_not_ts_right(demo, neighbour):
    suite = ("vicino",)
    report = score_predictions(
        questions=[
            GoldQuestion(
                "a", "negozio", "easy", "SELECT nome FROM clienti WHERE citta = 'Milano'", suite=suite
            ),
            GoldQuestion(
                "b", "negozio", "easy", "SELECT nome FROM clienti WHERE citta = 'Torino'", suite=suite
            ),
        ],
        predictions={
            "a": "SELECT nome FROM clienti WHERE citta = 'Milano' AND 1 / (nome <> 'Paolo' OR citta <> 'Roma')",
            "b": "SELECT nome FROM clienti WHERE citta = 'Roma'",
        },
        database_paths={"negozio": demo, "vicino": neighbour},
        dialect="sqlite",
        limits=FAST,
    )
    assert [(s.ea, s.ts) for s in report.questions] == [(True, True), (False, False)]


def test_without_a_suite_ts_ea_is_ea(demo):
    count = "SELECT COUNT(*) FROM clienti"
    report = score(demo, [question("q", count)], {"q": count}, dialect="sqlite")
    assert report.questions[0].ts and report.as_dict()["overall"]["ts_questions"] == 0


def test_a_suite_database_missing_from_the_paths_is_refused(demo):
    with pytest.raises(ValueError, match="no database file for: vicino"):
        score_predictions(
            questions=[GoldQuestion("q", "negozio", "easy", "SELECT 1", suite=("vicino",))],
            predictions={},
            database_paths={"negozio": demo},
        )


# --- A hard-coded answer: a query that reads no table -----------------------------------------------------

# Each returns the rows of its gold on the demo database, but would return them on any database.
COUNT_GOLD = "SELECT COUNT(*) FROM clienti"
CITY_GOLD = "SELECT citta FROM clienti WHERE nome = 'Mario'"
HARD_CODED = [
    pytest.param("mysql", CITY_GOLD, "SELECT 'Roma'", id="mysql-string"),
    pytest.param("mysql", COUNT_GOLD, "SELECT 6", id="mysql-number"),
    pytest.param("mysql", COUNT_GOLD, "SELECT 6 FROM DUAL", id="mysql-dual"),
    pytest.param("mysql", COUNT_GOLD, "VALUES ROW(6)", id="mysql-values-row"),
    pytest.param("mysql", COUNT_GOLD, "VALUES (6)", id="mysql-values"),
    pytest.param("mysql", COUNT_GOLD, "SELECT 6 UNION SELECT 6", id="mysql-union-of-constants"),
    pytest.param(
        "mysql", COUNT_GOLD, "WITH n AS (SELECT 6 AS n) SELECT n FROM n", id="mysql-cte-of-constants"
    ),
    pytest.param(
        "mysql",
        COUNT_GOLD,
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 6) SELECT COUNT(*) FROM r",
        id="mysql-recursive-cte",
    ),
    pytest.param("mysql", COUNT_GOLD, "SELECT n FROM (SELECT 6 AS n) AS t", id="mysql-derived-constants"),
    pytest.param(
        "mysql",
        COUNT_GOLD,
        "WITH clienti AS (SELECT 6 AS n) SELECT n FROM clienti",
        id="mysql-cte-named-as-a-table",
    ),
    pytest.param("sqlite", CITY_GOLD, "SELECT 'Roma'", id="sqlite-string"),
    pytest.param("sqlite", COUNT_GOLD, "SELECT 6", id="sqlite-number"),
    pytest.param("sqlite", COUNT_GOLD, "VALUES (6)", id="sqlite-values"),
    pytest.param(
        "sqlite", COUNT_GOLD, "WITH n AS (SELECT 6 AS n) SELECT n FROM n", id="sqlite-cte-of-constants"
    ),
    pytest.param(
        "sqlite",
        COUNT_GOLD,
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 6) SELECT COUNT(*) FROM r",
        id="sqlite-recursive-cte",
    ),
    pytest.param(
        "sqlite",
        COUNT_GOLD,
        "WITH clienti AS (SELECT 6 AS n) SELECT n FROM clienti",
        id="sqlite-cte-named-as-a-table",
    ),
]

READS_A_TABLE = [
    pytest.param("WITH c AS (SELECT id FROM clienti) SELECT COUNT(*) FROM c", id="through-a-cte"),
    pytest.param("SELECT (SELECT COUNT(*) FROM clienti)", id="through-a-subquery"),
    pytest.param("SELECT n FROM (SELECT COUNT(*) AS n FROM clienti) AS t", id="through-a-derived-table"),
    pytest.param(
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < (SELECT COUNT(*) FROM clienti)) "
        "SELECT COUNT(*) FROM r",
        id="through-a-recursive-cte",
    ),
    # Reading decides, not what is selected: TS-EA's neighbours are what tell such a constant from a count.
    pytest.param("SELECT 6 FROM clienti LIMIT 1", id="a-constant-from-a-table"),
]


@pytest.mark.parametrize(("dialect", "gold", "prediction"), HARD_CODED)
def test_a_query_that_reads_no_table_is_wrong_whatever_it_returns_and_says_so_from_its_text(
    demo, schema, dialect, gold, prediction
):
    report = score(demo, [question("q", to_sqlite(gold, schema=schema))], {"q": prediction}, dialect=dialect)
    [result] = report.questions
    assert (result.outcome, result.ea, result.ea_strict, result.ts, result.static) == (
        "reads_no_table",
        False,
        False,
        False,
        True,
    )
    assert "reads no table" in result.error
    assert report.as_dict()["outcomes"]["reads_no_table"] == 1


@pytest.mark.parametrize("prediction", READS_A_TABLE)
@pytest.mark.parametrize("dialect", ["mysql", "sqlite"])
def test_a_query_that_reads_a_table_through_a_cte_a_subquery_or_a_derived_table_is_scored_by_its_rows(
    demo, dialect, prediction
):
    [result] = score(demo, [question("q", COUNT_GOLD)], {"q": prediction}, dialect=dialect).questions
    assert (result.outcome, result.ea, result.static) == ("correct", True, False)


def test_a_statement_that_is_no_query_is_left_to_the_sandbox_not_called_a_hard_coded_answer(demo):
    predictions = {"begin": "BEGIN", "pragma": "PRAGMA query_only = OFF", "vacuum": "VACUUM"}
    report = score(demo, [question(qid, COUNT_GOLD) for qid in predictions], predictions, dialect="sqlite")
    assert {result.question_id: result.outcome for result in report.questions} == dict.fromkeys(
        predictions, "runtime_error"
    )


def test_the_gold_is_never_checked_for_a_table(demo):
    report = score(
        demo,
        [question("hard-coded-gold", "SELECT 6"), question("read-gold", COUNT_GOLD)],
        {"hard-coded-gold": COUNT_GOLD, "read-gold": COUNT_GOLD},
    )
    assert [(result.outcome, result.ea) for result in report.questions] == [("correct", True)] * 2
    assert report.as_dict()["overall"]["excluded"] == 0


def test_hard_coded_answers_are_counted_among_the_outcomes_of_the_scores(demo):
    report = score(
        demo,
        [question("a", COUNT_GOLD), question("b", COUNT_GOLD), question("c", COUNT_GOLD)],
        {"a": "SELECT 6", "b": "SELECT 'Roma'", "c": COUNT_GOLD},
    )
    outcomes = json.loads(json.dumps(report.as_dict()))["outcomes"]
    assert "reads_no_table" in OUTCOMES and list(outcomes) == list(OUTCOMES)
    assert (outcomes["reads_no_table"], outcomes["correct"], outcomes["wrong_result"]) == (2, 1, 0)
