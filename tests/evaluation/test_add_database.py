"""Adding a database to a draft version: built, validated, stored whole or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command

from evaluation.models import (
    BenchmarkVersion,
    Database,
    DatabaseImport,
    Question,
    StoredDatabase,
    ValidationReport,
)
from evaluation.services import (
    VersionStateError,
    database_add,
    version_create_draft,
    version_publish,
)
from evaluation.sources import DEMO_DIR, SourceError, database_source_from_files
from tests.evaluation.biblioteca_dump import BIBLIOTECA

pytestmark = pytest.mark.django_db

DUMP = """CREATE DATABASE negozio; USE negozio;
CREATE TABLE clienti (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, nome VARCHAR(40), citta VARCHAR(40))
  ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
INSERT INTO clienti (nome, citta) VALUES ('Ada', 'Roma'), ('Bruno', 'roma'), ('Carla', 'Milano');
"""


def questions_jsonl(*items) -> bytes:
    return "\n".join(json.dumps(item) for item in items).encode()


GOOD_QUESTIONS = questions_jsonl(
    {
        "question": "Quanti clienti abitano a Roma?",
        "gold_sql": "SELECT COUNT(*) FROM clienti WHERE citta = 'ROMA'",
    },
    {"question": "Elenca i nomi dei clienti", "gold_sql": "SELECT nome FROM clienti"},
    {"question": "Domanda rotta", "gold_sql": "SELECT nome FROM clienti_inesistenti"},
    {"question": "Nessuno", "gold_sql": "SELECT nome FROM clienti WHERE citta = 'Napoli'"},
    {"question": "Il primo", "gold_sql": "SELECT nome FROM clienti LIMIT 1"},
)


def cache_dir() -> Path:
    """This host's copies of the built databases."""
    return django_settings.TERMITE_DATABASE_CACHE_DIR


@pytest.fixture
def draft():
    return version_create_draft(label="draft-1", name="Prova")


def add(version, dump=DUMP, questions=GOOD_QUESTIONS, **kwargs):
    database, question_sources = database_source_from_files(
        dump=dump.encode(), dump_name="negozio.sql", questions=questions, questions_name="q.jsonl", **kwargs
    )
    return database_add(version=version, database=database, questions=question_sources)


def test_a_database_is_built_and_its_questions_validated(draft):
    report = add(draft)
    database = Database.objects.get(version=draft, slug="negozio")
    assert (database.table_count, database.row_count) == (1, 3)
    assert database.sqlite_path.is_file()
    statuses = dict(Question.objects.filter(version=draft).values_list("public_id", "status"))
    assert statuses == {
        "negozio-001": "valid",
        "negozio-002": "valid",
        "negozio-003": "invalid",
        "negozio-004": "valid",
        "negozio-005": "valid",
    }
    codes = {q.public_id: [p["code"] for p in q.problems] for q in Question.objects.filter(version=draft)}
    assert codes["negozio-003"] == ["gold_fails"]
    broken = Question.objects.get(version=draft, public_id="negozio-003")
    assert "clienti_inesistenti" not in json.dumps(broken.problems) + broken.status_reason + report.text
    assert codes["negozio-004"] == ["gold_empty"]
    assert codes["negozio-005"] == ["gold_order_dependent"]
    assert "negozio: 1 tables, 3 rows (clienti 3)" in report.text
    assert "questions: 5, valid 4" in report.text


def test_the_built_copy_compares_text_without_case_like_mysql(draft):
    from evaluation.scoring.sandbox import Sandbox

    add(draft)
    database = Database.objects.get(version=draft)
    with Sandbox() as sandbox:
        execution = sandbox.execute(database.sqlite_path, "SELECT COUNT(*) FROM clienti WHERE citta = 'ROMA'")
    assert execution.rows == ((2,),)


def test_a_dump_that_does_not_parse_is_refused_with_its_line_and_nothing_is_stored(draft, empty_store):
    bad = DUMP + "INSERT INTO clienti VALUES (;\n"
    with pytest.raises(SourceError, match=r"database negozio: .*line 5"):
        add(draft, dump=bad)
    assert not Database.objects.exists() and not StoredDatabase.objects.exists()
    assert not Question.objects.exists()


def test_a_question_file_with_a_bad_line_is_refused_before_building(draft):
    with pytest.raises(SourceError, match="q.jsonl: line 2: field 'gold_sql'"):
        add(draft, questions=questions_jsonl({"question": "A?", "gold_sql": "SELECT 1"}, {"question": "B?"}))


def test_a_published_version_takes_no_new_database(draft):
    add(draft)
    version_publish(version=draft)
    with pytest.raises(VersionStateError, match="is published"):
        add(draft, slug="altro")


def test_the_same_database_name_cannot_be_added_twice(draft):
    add(draft)
    with pytest.raises(SourceError, match="already has a database 'negozio'"):
        add(draft)


def test_a_failure_while_storing_leaves_no_rows_and_no_new_files(draft, monkeypatch, empty_store):
    before = set(cache_dir().glob("*")) if cache_dir().exists() else set()

    def explode(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(Question.objects, "bulk_create", explode)
    with pytest.raises(RuntimeError, match="disk full"):
        add(draft, dump=DUMP.replace("'Milano'", "'Torino'"))
    assert not Database.objects.exists() and not StoredDatabase.objects.exists()
    assert not ValidationReport.objects.exists()
    assert set(cache_dir().glob("*")) == before


def add_by_command(
    tmp_path: Path,
    *,
    version: str = "draft-1",
    slug: str = "negozio",
    dump: str = DUMP,
    questions: bytes = GOOD_QUESTIONS,
) -> None:
    """`manage.py add_database` as an admin runs it, on files holding `dump` (named after the database) and
    `questions`."""
    (tmp_path / f"{slug}.sql").write_text(dump)
    (tmp_path / "q.jsonl").write_bytes(questions)
    call_command(
        "add_database",
        "--version",
        version,
        "--dump",
        str(tmp_path / f"{slug}.sql"),
        "--questions",
        str(tmp_path / "q.jsonl"),
    )


def test_the_command_prints_each_step_as_it_goes_then_the_report(draft, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TERMITE_REFERENCE_MYSQL_URL", raising=False)  # no MariaDB step: the same steps in CI
    add_by_command(tmp_path)
    out = capsys.readouterr().out
    assert out.startswith(
        "[  0%] building negozio from its dump\n"
        "[ 15%] checking 5 gold queries on SQLite\n"
        "[ 95%] storing negozio, its questions and its test suite\n"
    )
    assert "negozio-003: gold_fails" in out
    assert "Added negozio to Prova draft-1 (5 questions)." in out
    job = DatabaseImport.objects.get()
    assert (job.state, job.requested_by, job.report) == ("done", None, draft.reports.get())


def test_the_command_ends_with_the_error_of_a_failed_job_and_stores_nothing(draft, tmp_path, capsys):
    with pytest.raises(CommandError, match=r"^database negozio: .*line 5"):
        add_by_command(tmp_path, dump=DUMP + "INSERT INTO clienti VALUES (;\n")
    assert capsys.readouterr().out == "[  0%] building negozio from its dump\n"
    assert not draft.databases.exists() and DatabaseImport.objects.get().state == "failed"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--version", "nope"], "No benchmark version 'nope'"),
        (["--version", "draft-1", "--questions", "/no/such/file.jsonl"], "/no/such/file.jsonl: No such file"),
    ],
)
def test_the_command_refuses_bad_arguments_with_one_line(draft, tmp_path, arguments, message):
    (tmp_path / "negozio.sql").write_text(DUMP)
    (tmp_path / "q.jsonl").write_bytes(GOOD_QUESTIONS)
    defaults = {"--dump": str(tmp_path / "negozio.sql"), "--questions": str(tmp_path / "q.jsonl")}
    for flag, value in defaults.items():
        if flag not in arguments:
            arguments = [*arguments, flag, value]
    with pytest.raises(CommandError, match=message):
        call_command("add_database", *arguments)


def test_the_demo_benchmark_loads_with_every_hardness_level(demo_version):
    assert demo_version.is_published
    assert sorted(demo_version.databases.values_list("slug", flat=True)) == ["biblioteca", "ciclismo"]
    levels = set(demo_version.questions.values_list("hardness", flat=True))
    assert levels == {"easy", "medium", "hard", "extra"}
    assert demo_version.questions.count() == demo_version.questions.scored().count()
    expected = json.loads((DEMO_DIR / "expected_hardness.json").read_text())
    assert dict(demo_version.questions.values_list("public_id", "hardness")) == expected


def test_loading_the_demo_twice_changes_nothing(demo_version):
    from evaluation.services import demo_benchmark_load

    assert demo_benchmark_load() is None
    assert BenchmarkVersion.objects.filter(label=demo_version.label).count() == 1


def test_a_mysqldump_dump_is_added_with_its_routines_views_and_triggers_named_in_the_report(draft):
    questions = questions_jsonl(
        {"question": "Quanti libri sono in catalogo?", "gold_sql": "SELECT COUNT(*) FROM catalogo"},
        {
            "question": "Quali libri esistono in ebook?",
            "gold_sql": "SELECT titolo FROM libri WHERE formati LIKE '%ebook%' ORDER BY titolo",
        },
    )
    report = add(draft, dump=BIBLIOTECA, questions=questions)
    database = Database.objects.get(version=draft, slug="negozio")
    assert (database.table_count, database.row_count) == (4, 16)
    assert set(Question.objects.filter(version=draft).values_list("status", flat=True)) == {"valid"}
    for line in (
        "routine_left_out: procedure restituisci",
        "routine_left_out: function prestiti_aperti",
        "routine_left_out: event pulizia_notturna",
        "view_translated: view catalogo",
        "trigger_applied: trigger prestiti_dopo_inserimento (AFTER INSERT ON prestiti)",
        "copy_note: column sedi.posizione (POINT)",
    ):
        assert line in report.text


def test_an_authors_schema_dump_that_cannot_be_read_is_not_offered_and_the_database_is_added(draft):
    report = add(draft, schema=b"DELIMITER\nCREATE TABLE clienti (id INT);\n")
    assert Database.objects.filter(version=draft, slug="negozio").exists()
    assert "authors_schema_unbuildable" in report.text


@pytest.mark.mariadb
def test_a_mysqldump_dump_imports_in_one_command_and_every_gold_over_it_agrees_with_mariadb(
    draft, reference_url, tmp_path, capsys, monkeypatch
):
    """Issue 32's bar: a dump with DELIMITER blocks, a view, a trigger, SET, ENUM, YEAR, BINARY, spatial,
    FULLTEXT and generated columns, added by one command; its gold, over the view too, checked on MariaDB."""
    monkeypatch.setenv("TERMITE_REFERENCE_MYSQL_URL", reference_url)
    add_by_command(
        tmp_path,
        version=draft.label,
        slug="biblioteca",
        dump=BIBLIOTECA,
        questions=questions_jsonl(
            {"question": "Quanti libri sono in catalogo?", "gold_sql": "SELECT COUNT(*) FROM catalogo"},
            {
                "question": "Quali autori del catalogo hanno scritto romanzi?",
                "gold_sql": "SELECT DISTINCT autore FROM catalogo WHERE genere = 'romanzo' ORDER BY autore",
            },
            {
                "question": "Quanti libri esistono in ebook?",
                "gold_sql": "SELECT COUNT(*) FROM libri WHERE FIND_IN_SET('ebook', formati) > 0",
            },
            {
                "question": "Elenca i titoli per genere, nell'ordine dei generi.",
                "gold_sql": "SELECT titolo FROM libri ORDER BY genere, titolo",
            },
            {
                "question": "Quanto costa ogni libro con l'IVA?",
                "gold_sql": "SELECT titolo, prezzo_ivato FROM libri ORDER BY prezzo_ivato DESC, titolo",
            },
            {
                "question": "Chi è nato prima del 1920?",
                "gold_sql": "SELECT nominativo FROM autori WHERE nato < 1920 ORDER BY nato",
            },
            {
                "question": "Quante copie restano del barone rampante?",
                "gold_sql": "SELECT copie FROM libri WHERE titolo = 'Il barone rampante'",
            },
        ),
    )
    out = capsys.readouterr().out
    assert "checking the tables and the gold queries against MariaDB" in out
    assert "reference engine: not checked" not in out and "mismatch" not in out
    assert set(Question.objects.filter(version=draft).values_list("status", flat=True)) == {"valid"}
    assert Question.objects.filter(version=draft).count() == 7
