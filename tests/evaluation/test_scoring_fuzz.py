"""Thousands of generated nested and malformed predictions: the scorer gives each a legal outcome and no
exception escapes it. Seeded, so a failure is the same on every run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from evaluation.scoring.dialect import TranspileError, to_sqlite
from evaluation.scoring.sandbox import Limits
from evaluation.scoring.score import GoldQuestion, score_predictions
from evaluation.scoring.vocabulary import OUTCOMES
from tests.evaluation.demo_db import make_demo_db

SEED = 20261201
CASES = 3000
BATCH = 250

FRAGMENTS = [
    "SELECT",
    "nome",
    "FROM",
    "clienti",
    "WHERE",
    "eta",
    ">",
    "30",
    "AND",
    "OR",
    "NOT",
    "(",
    ")",
    ",",
    "GROUP BY",
    "ORDER BY",
    "HAVING",
    "COUNT(*)",
    "SUM(",
    "AVG(",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "JOIN",
    "ordini",
    "ON",
    "clienti.id",
    "=",
    "ordini.cliente_id",
    "LIMIT",
    "-1",
    "'testo'",
    "NULL",
    "IS",
    "IN",
    "LIKE",
    "'%a%'",
    "BETWEEN",
    "DATE_ADD(",
    "INTERVAL",
    "1",
    "DAY",
    "UNION",
    "ALL",
    "*",
    "`nome`",
    '"nome"',
    "::int",
    "||",
    "->",
    "->>",
    "@x",
    "?",
    ";",
    "--",
    "/*",
    "*/",
    "DISTINCT",
    "WITH",
    "r",
    "AS",
    "RECURSIVE",
    "OVER",
    "PARTITION",
    "ROW_NUMBER()",
    "EXISTS",
    "SELECT 1",
]
NESTABLE = [
    ("(", ")"),
    ("NOT ", ""),
    ("ABS(", ")"),
    ("-", ""),
    ("CASE WHEN 1 THEN ", " END"),
    ("DATE_ADD(", ", INTERVAL 1 DAY)"),
    ("(SELECT ", ")"),
    ("COALESCE(", ", 1)"),
    ("CONCAT(", ", 'x')"),
]


def generated(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:  # random tokens
        return " ".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(1, 40)))
    if kind == 1:  # one construct nested, shallow to very deep, sometimes unbalanced
        opening, closing = rng.choice(NESTABLE)
        depth = rng.choice([1, 5, 50, 200, 400, 1000, 3000])
        inner = opening * depth + rng.choice(["1", "nome", "'2020-01-01'"]) + closing * depth
        if rng.random() < 0.3:
            inner = inner[: rng.randrange(len(inner))]
        return f"SELECT {inner} FROM clienti"
    if kind == 2:  # random unicode, controls included
        return "SELECT " + "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(1, 60)))
    if kind == 3:  # huge literals
        return rng.choice(["SELECT '", "SELECT ", "SELECT x'"]) + "9" * rng.choice([100, 5000, 30000]) + "'"
    if kind == 4:  # a valid query cut and spliced with another
        a, b = (
            "SELECT nome, eta FROM clienti WHERE eta > 30 ORDER BY eta",
            "SELECT COUNT(*) FROM ordini GROUP BY prodotto",
        )
        return a[: rng.randrange(len(a))] + b[rng.randrange(len(b)) :]
    return rng.choice(FRAGMENTS) * rng.randrange(1, 500)  # one fragment repeated


@pytest.fixture(scope="module")
def cases() -> list[str]:
    rng = random.Random(SEED)
    return [generated(rng) for _ in range(CASES)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return make_demo_db(tmp_path_factory.mktemp("fuzz") / "demo.sqlite")


@pytest.mark.parametrize("dialect", ["mysql", "sqlite"])
def test_the_transpiler_raises_only_its_own_error(cases, dialect):
    escaped = []
    for n, sql in enumerate(cases):
        try:
            to_sqlite(sql, source=dialect, schema={} if dialect == "mysql" else None)
        except TranspileError:
            pass
        except Exception as error:
            escaped.append((n, type(error).__name__))
    assert escaped == []


@pytest.mark.parametrize("dialect", ["mysql", "sqlite"])
def test_the_scorer_gives_every_generated_prediction_a_legal_outcome(cases, demo, dialect):
    outcomes = set()
    for start in range(0, len(cases), BATCH):
        batch = {f"q{n}": sql for n, sql in enumerate(cases[start : start + BATCH], start)}
        questions = [
            GoldQuestion(
                question_id=qid, db_id="negozio", hardness="easy", sql_sqlite="SELECT nome FROM clienti"
            )
            for qid in batch
        ]
        report = score_predictions(
            questions=questions,
            predictions=batch,
            database_paths={"negozio": demo},
            dialect=dialect,
            limits=Limits(query_seconds=0.2, kill_grace_seconds=0.3),
        )
        assert [q.question_id for q in report.questions] == list(batch)
        outcomes.update(q.outcome for q in report.questions)
    assert outcomes <= set(OUTCOMES)
    assert {"syntax_error", "resource_limit"} <= outcomes  # the generator reaches the hard cases
