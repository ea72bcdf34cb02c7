"""Test suites: neighbour databases distilled to tell each gold query from its near misses, stored with the
version, and used by the scorer for TS-EA (evaluation/scoring/suites.py, evaluation/distillation.py)."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from evaluation.grading import database_paths, gold_questions, score_version
from evaluation.models import NeighbourDatabase, Question, ValidationReport
from evaluation.scoring.engine_choice import bare_columns_vary, order_dependence
from evaluation.scoring.mysql_dump import build_sqlite
from evaluation.scoring.sandbox import Limits, Sandbox
from evaluation.scoring.suites import SuiteQuestion, build_suite, check_on_reference, gold_literals
from evaluation.services import version_create_draft
from tests.demo import demo_gold

FAST = Limits(query_seconds=1.0, total_seconds=60.0)

# An invented shop: prices with a boundary the gold asks about, and no row on it in the original.
NEGOZIO = """CREATE TABLE articoli (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  nome VARCHAR(40) NOT NULL,
  reparto VARCHAR(20) NOT NULL,
  prezzo DECIMAL(6,2) NOT NULL
);
INSERT INTO articoli (nome, reparto, prezzo) VALUES
  ('Pane', 'Forno', 2.50), ('Latte', 'Frigo', 1.20), ('Burro', 'Frigo', 3.80),
  ('Torta', 'Forno', 12.00), ('Yogurt', 'Frigo', 0.90), ('Biscotti', 'Forno', 4.30);
"""
GOLD = "SELECT nome FROM articoli WHERE prezzo >= 3 ORDER BY nome"
NEAR_MISSES = (
    "SELECT nome FROM articoli WHERE prezzo > 3 ORDER BY nome",  # right on the original only
    "SELECT nome FROM articoli WHERE prezzo >= 4 ORDER BY nome",  # wrong on the original already
)


@pytest.fixture
def original(tmp_path) -> Path:
    path = tmp_path / "negozio.sqlite3"
    build_sqlite(NEGOZIO, path)
    return path


def suite_of(original: Path, folder: Path, **options):
    folder.mkdir(exist_ok=True)
    question = SuiteQuestion("negozio-001", GOLD, GOLD, NEAR_MISSES)
    return build_suite(
        original=original,
        dump=NEGOZIO,
        questions=[question],
        literals=gold_literals([GOLD]),
        workdir=folder,
        seed="prova",
        limits=FAST,
        **options,
    )


def test_the_suite_tells_apart_a_near_miss_the_original_lets_through(original, tmp_path):
    suite = suite_of(original, tmp_path / "a", candidates=20)
    entry = suite.questions["negozio-001"]
    assert entry.near_misses == 2 and entry.told_apart_by_original == {1}
    assert entry.told_apart_by_suite == 2
    assert 1 <= len(suite.neighbours) <= 8 and entry.neighbours
    assert suite.candidates == 20 and suite.unbuildable == 0


def test_a_suite_is_deterministic_to_the_byte(original, tmp_path):
    first, second = suite_of(original, tmp_path / "a"), suite_of(original, tmp_path / "b")
    assert [n.sha256 for n in first.neighbours] == [n.sha256 for n in second.neighbours]
    assert [n.seed for n in first.neighbours] == [n.seed for n in second.neighbours]
    assert all(hashlib.sha256(n.path.read_bytes()).hexdigest() == n.sha256 for n in first.neighbours)


def test_at_most_keep_neighbours_are_kept(original, tmp_path):
    assert len(suite_of(original, tmp_path / "a", candidates=20, keep=1).neighbours) == 1


def test_the_gold_literals_are_keyed_by_the_column_they_are_compared_with():
    literals = gold_literals([GOLD, "SELECT nome FROM articoli WHERE reparto LIKE 'For%' LIMIT 2"])
    assert literals["prezzo"] == {3} and literals["reparto"] == {"For"}
    assert literals[""] == {2}


def test_a_neighbour_where_the_engine_chooses_the_rows_cannot_judge_a_gold(tmp_path):
    path = tmp_path / "pari.sqlite3"
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.executescript(
            "CREATE TABLE t (g TEXT, v INTEGER, w INTEGER);"
            "INSERT INTO t VALUES ('a', 1, 5), ('a', 2, 5), ('b', 2, 6);"
        )
    with Sandbox(FAST) as sandbox:
        assert order_dependence(sandbox, path, "SELECT g FROM t ORDER BY v LIMIT 1") is None
        assert "tie" in order_dependence(sandbox, path, "SELECT g FROM t ORDER BY v DESC LIMIT 1")
        assert "without ORDER BY" in order_dependence(sandbox, path, "SELECT g FROM t LIMIT 2")
        assert order_dependence(sandbox, path, "SELECT * FROM (SELECT g FROM t ORDER BY v DESC LIMIT 1) x")
        assert order_dependence(sandbox, path, "SELECT * FROM (SELECT g FROM t ORDER BY v LIMIT 1) x") is None
        assert bare_columns_vary(sandbox, path, "SELECT g, v FROM t GROUP BY g")
        assert not bare_columns_vary(sandbox, path, "SELECT g, w FROM t GROUP BY g")
        assert not bare_columns_vary(sandbox, path, "SELECT g, MAX(v) FROM t GROUP BY g")


# --- In the store and in scoring -------------------------------------------------------------------------


def test_importing_the_demo_builds_and_stores_each_databases_suite(demo_with_suites):
    version = demo_with_suites
    for database in version.databases.all():
        neighbours = list(database.neighbours.all())
        assert 1 <= len(neighbours) <= 8
        assert all(n.sqlite_path.is_file() for n in neighbours)
        assert database.suite_report["candidates"] == 12 and database.suite_report["kept"] == len(neighbours)
    questions = list(version.questions.scored())
    assert sum(bool(q.suite) for q in questions) >= len(questions) * 0.8
    entry = questions[0].suite_report
    assert set(entry) == {"near_misses", "told_apart_by_original", "told_apart_by_suite", "suite", "dropped"}
    assert entry["told_apart_by_original"] <= entry["told_apart_by_suite"] <= entry["near_misses"]
    report = ValidationReport.objects.filter(version=version).first()
    assert "test suite:" in report.text and "told apart by the original database" in report.text


def test_the_scorer_runs_each_prediction_on_its_questions_suite(demo_with_suites):
    version = demo_with_suites
    paths = database_paths(version)
    assert {n.key for n in NeighbourDatabase.objects.filter(database__version=version)} <= set(paths)
    assert any(q.suite for q in gold_questions(version))
    report = score_version(version=version, predictions=demo_gold())
    overall = report.as_dict()["overall"]
    assert overall["ea"] == overall["ts_ea"] == 1.0  # the gold is right on every neighbour of its suite
    assert overall["ts_questions"] == sum(bool(q.suite) for q in version.questions.scored())


def test_a_near_miss_that_ea_accepts_ts_ea_rejects_on_the_demo(demo_with_suites):
    """At least one of the demo's near misses passes on the original data and fails on the suite."""
    version = demo_with_suites
    found = [
        q.public_id
        for q in version.questions.scored()
        if q.suite_report["told_apart_by_suite"] > q.suite_report["told_apart_by_original"]
    ]
    assert found


def test_a_draft_derived_from_a_version_keeps_its_suites(demo_with_suites):
    draft = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_with_suites)
    assert (
        NeighbourDatabase.objects.filter(database__version=draft).count()
        == NeighbourDatabase.objects.filter(database__version=demo_with_suites).count()
    )
    assert [q.suite for q in Question.objects.filter(version=draft).order_by("public_id")] == [
        q.suite for q in Question.objects.filter(version=demo_with_suites).order_by("public_id")
    ]
    assert database_paths(draft).keys() == database_paths(demo_with_suites).keys()


def test_mariadb_checks_the_gold_on_each_neighbour_and_a_copy_that_differs_is_dropped(
    original, tmp_path, reference_url
):
    suite = suite_of(original, tmp_path / "a", candidates=20)
    question = SuiteQuestion("negozio-001", GOLD, GOLD, NEAR_MISSES)
    check_on_reference(suite, [question], reference_url=reference_url)
    entry = suite.questions["negozio-001"]
    assert entry.neighbours and not any("MariaDB" in why for _, why in entry.dropped)
    kept = entry.neighbours[0]
    with closing(sqlite3.connect(suite.neighbours[kept].path)) as conn, conn:
        conn.execute("INSERT INTO articoli (nome, reparto, prezzo) VALUES ('Intruso', 'Forno', 9)")
    check_on_reference(suite, [question], reference_url=reference_url)
    assert kept not in entry.neighbours
    assert (kept, "SQLite and MariaDB differ there (differ: row count)") in entry.dropped


def test_build_suites_gives_a_version_imported_without_suites_the_suites_an_import_would(
    demo_version, settings, tmp_path
):

    settings.TERMITE_SUITE_CANDIDATES = 12
    out = StringIO()
    call_command("build_suites", "--version", demo_version.label, stdout=out)
    assert "test suite:" in out.getvalue()
    neighbours = NeighbourDatabase.objects.filter(database__version=demo_version)
    assert neighbours.exists() and all(n.sqlite_path.is_file() for n in neighbours)
    assert any(q.suite for q in Question.objects.filter(version=demo_version))
    again = StringIO()
    call_command("build_suites", "--version", demo_version.label, stdout=again)
    assert again.getvalue().strip() == "every database has its test suite already"
    assert NeighbourDatabase.objects.filter(database__version=demo_version).count() == neighbours.count()


def test_a_database_written_for_sqlite_gets_its_suite_too(tmp_path):
    dump = (
        "CREATE TABLE articoli (id INTEGER PRIMARY KEY, nome TEXT NOT NULL, prezzo REAL NOT NULL);\n"
        "INSERT INTO articoli VALUES (1, 'Pane', 2.5), (2, 'Latte', 1.2), (3, 'Burro', 3.8), (4, 'Torta', 12);\n"
    )
    original = tmp_path / "negozio.sqlite3"
    build_sqlite(dump, original, source="sqlite")
    gold = "SELECT nome FROM articoli WHERE prezzo >= 3 ORDER BY nome"
    question = SuiteQuestion(
        "negozio-001", gold, gold, ("SELECT nome FROM articoli WHERE prezzo > 3 ORDER BY nome",)
    )
    (tmp_path / "suite").mkdir()
    suite = build_suite(
        original=original,
        dump=dump,
        questions=[question],
        literals=gold_literals([gold], source="sqlite"),
        workdir=tmp_path / "suite",
        seed="prova",
        source="sqlite",
        candidates=12,
        limits=FAST,
    )
    assert suite.unbuildable == 0 and suite.neighbours
    assert suite.questions["negozio-001"].told_apart_by_suite == 1
