"""One prediction costs its own question only: results over a cap, text the reader chokes on, and the
line between what a static check decides and what running decides."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.scoring.sandbox import Limits, Query, Sandbox
from evaluation.scoring.score import GoldQuestion, score_predictions
from tests.evaluation.demo_db import make_demo_db

GOLD = "SELECT nome FROM clienti ORDER BY id"
RIGHT = "SELECT nome FROM clienti ORDER BY id"
# A query that reads no table is refused from its text (reads_no_table): these read one, so that they run.
READS = " WHERE EXISTS (SELECT 1 FROM clienti)"
MANY_ROWS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 50) SELECT n FROM r" + READS
WIDE_ROWS = (
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 20) SELECT printf('%500d', n) FROM r"
    + READS
)

# Nested far past what any question needs; each once took the whole submission down (RecursionError).
TOO_DEEP = {
    "parentheses": "SELECT " + "(" * 900 + "1" + ")" * 900 + " FROM clienti",
    "not": "SELECT " + "NOT " * 3000 + "1 FROM clienti",
    "case": "SELECT " + "CASE WHEN 1 THEN " * 500 + "1" + " END" * 500 + " FROM clienti",
    "abs": "SELECT " + "ABS(" * 3000 + "1" + ")" * 3000 + " FROM clienti",
    "date_add": "SELECT " + "DATE_ADD(" * 400 + "'2020-01-01'" + ", INTERVAL 1 DAY)" * 400 + " FROM clienti",
    # Spaced: in SQLite `--` opens a comment, and the query would be an empty SELECT rather than deep.
    "minus": "SELECT " + "- " * 3000 + "1 FROM clienti",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return make_demo_db(tmp_path_factory.mktemp("containment") / "demo.sqlite")


def questions(*ids: str) -> list[GoldQuestion]:
    return [GoldQuestion(question_id=qid, db_id="negozio", hardness="easy", sql_sqlite=GOLD) for qid in ids]


def scored(demo: Path, predictions: dict[str, str], *, dialect: str = "sqlite", **limits) -> dict:
    report = score_predictions(
        questions=questions(*predictions),
        predictions=predictions,
        database_paths={"negozio": demo},
        dialect=dialect,
        limits=Limits(query_seconds=1.0, **limits),
    )
    return {q.question_id: q for q in report.questions}


def test_a_result_over_the_row_cap_is_a_resource_limit_for_its_question_alone(demo):
    result = scored(demo, {"many": MANY_ROWS, "right": RIGHT}, max_rows=40)
    assert result["many"].outcome == "resource_limit" and "more than 40 rows" in result["many"].error
    assert result["right"].outcome == "correct"


def test_a_result_over_the_byte_cap_is_a_resource_limit_for_its_question_alone(demo):
    result = scored(demo, {"wide": WIDE_ROWS, "right": RIGHT}, max_result_bytes=5_000)
    assert result["wide"].outcome == "resource_limit" and "larger than 5000 bytes" in result["wide"].error
    assert result["right"].outcome == "correct"


def test_the_results_of_a_submission_together_have_a_cap_and_only_the_one_over_it_pays(demo):
    # Each wide result is about 10 kB: the third passes 25 kB, the small ones after it still fit.
    predictions = {"wide1": WIDE_ROWS, "wide2": WIDE_ROWS, "wide3": WIDE_ROWS, "right": RIGHT}
    result = scored(demo, predictions, max_total_result_bytes=25_000)
    assert [result[q].outcome for q in ("wide1", "wide2", "wide3")] == [
        "wrong_result",
        "wrong_result",
        "resource_limit",
    ]
    assert "results passed 25000 bytes in all" in result["wide3"].error
    assert result["right"].outcome == "correct"


def test_the_gold_queries_do_not_count_towards_the_submissions_result_cap(demo):
    with Sandbox(Limits(max_total_result_bytes=10)) as sandbox:
        assert sandbox.execute(demo, GOLD, budgeted=False).outcome == "ok"
        assert sandbox.execute(demo, GOLD).outcome == "resource_limit"


def test_the_sandbox_streams_each_execution_as_it_arrives_in_order(demo):
    with Sandbox(Limits()) as sandbox:
        seen = [index for index, _execution in sandbox.stream([Query(demo, "SELECT 1")] * 5)]
    assert seen == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("construct", sorted(TOO_DEEP))
@pytest.mark.parametrize("dialect", ["mysql", "sqlite"])
def test_a_query_nested_too_deeply_costs_its_question_only(demo, construct, dialect):
    result = scored(demo, {"deep": TOO_DEEP[construct], "right": RIGHT}, dialect=dialect)
    assert result["deep"].outcome in ("resource_limit", "syntax_error")
    assert not result["deep"].ea
    assert result["right"].outcome == "correct"


def test_a_crash_of_the_sql_reader_costs_its_question_only(demo, monkeypatch):
    from evaluation.scoring import dialect

    real = dialect.survey

    def flaky(tree, text):
        if "boom" in text:
            raise KeyError("a bug of the reader")
        return real(tree, text)

    monkeypatch.setattr(dialect, "survey", flaky)
    result = scored(demo, {"bug": "SELECT 'boom'", "right": RIGHT}, dialect="mysql")
    assert result["bug"].outcome == "syntax_error"
    assert result["bug"].error == "the query cannot be translated to SQLite"
    assert result["right"].outcome == "correct"


@pytest.mark.parametrize(
    ("prediction", "outcome"),
    [
        ("SELEC nome FROM clienti", "syntax_error"),
        ("SELECT cognome FROM clienti", "runtime_error"),  # no such column: the schema says so
        ("DELETE FROM clienti", "runtime_error"),  # a write, refused by the authorizer as it compiles
        ("SELECT 1; SELECT 2", "syntax_error"),
    ],
)
def test_what_sqlite_refuses_before_running_is_static(demo, prediction, outcome):
    result = scored(demo, {"q": prediction})
    assert (result["q"].outcome, result["q"].static) == (outcome, True)


@pytest.mark.parametrize(
    "prediction",
    [
        # Each fails, or not, by what the rows hold: never static.
        "SELECT json_extract('{}', 'x' || (SELECT group_concat(nome) FROM clienti))",
        "SELECT CASE WHEN (SELECT COUNT(*) FROM clienti) > 0 THEN json_extract('{}', 'x') ELSE 1 END",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r" + READS,
    ],
)
def test_what_fails_while_running_is_never_static(demo, prediction):
    result = scored(demo, {"q": prediction, "right": RIGHT})
    assert result["q"].outcome in ("runtime_error", "timeout") and result["q"].static is False
    assert result["right"].static is False


def test_blank_and_refused_text_and_reader_errors_are_static(demo):
    result = scored(
        demo, {"blank": " ", "nul": "SELECT 1\x00", "long": "SELECT " + "1+" * 60_000 + "1"}, dialect="mysql"
    )
    assert {qid: (q.outcome, q.static) for qid, q in result.items()} == {
        "blank": ("not_submitted", True),
        "nul": ("syntax_error", True),
        "long": ("resource_limit", True),
    }
