"""Scoring a submission end to end: transpile, run in the sandbox, compare, aggregate, report."""

from __future__ import annotations

import json
import logging
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

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
    pytest.param("SELECT 3.5", "SELECT 7 / 2", "correct", True, id="division-gives-decimals"),
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
        {"q1": "SELECT nome FROM clienti", "q2": "SELECT 0"},
        benchmark_version="demo-1",
    )
    data = json.loads(json.dumps(report.as_dict()))
    assert list(data) == ["version", "scorer_version", "overall", "per_database", "per_hardness", "outcomes"]
    assert data["version"] == "demo-1"
    assert data["scorer_version"] == SCORER_VERSION == "1.4.0"
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
        [question("b", "SELECT 1"), question("a", "SELECT 2")],
        {"a": "SELECT 2", "b": "SELECT 3", "z": "SELECT 4"},
        dialect="sqlite",
    )
    assert report.questions == (
        QuestionScore("b", "wrong_result", False, False, None),
        QuestionScore("a", "correct", True, True, None, ts=True),
    )


def test_invalid_questions_are_excluded_from_every_denominator(demo):
    report = score(
        demo,
        [question("ok", "SELECT 1"), question("bad", "SELECT 1", hardness="hard", valid=False)],
        {"ok": "SELECT 1", "bad": "SELECT 1"},
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
    cache[key] = GoldResult(rows=((8,),), order_keys=None)
    second = score(demo, questions, {"q2": "SELECT 8"}, gold_cache=cache)
    assert first.questions[0].outcome == "correct"
    assert second.questions[1].outcome == "correct"


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
    report = score(demo, [question("q", "SELECT 1")], {"q": "SELECT 1"}, dialect="sqlite")
    assert report.questions[0].ts and report.as_dict()["overall"]["ts_questions"] == 0


def test_a_suite_database_missing_from_the_paths_is_refused(demo):
    with pytest.raises(ValueError, match="no database file for: vicino"):
        score_predictions(
            questions=[GoldQuestion("q", "negozio", "easy", "SELECT 1", suite=("vicino",))],
            predictions={},
            database_paths={"negozio": demo},
        )
