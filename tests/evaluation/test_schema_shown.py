"""Participants see the schema of the database they are scored on, in every form; staff may show the
authors' schema-only dump instead, and see every difference and the questions it leaves unanswerable."""

from __future__ import annotations

import html
import io
import json
import zipfile

import pytest
from django.urls import reverse

from evaluation.models import Database, SchemaShown, ValidationReport
from evaluation.scoring.mysql_dump import shape_of_ddl
from evaluation.scoring.schema_shape import differences, from_json
from evaluation.services import (
    VersionStateError,
    database_add,
    database_schema_choose,
    question_set_excluded,
    version_create_draft,
    version_publish,
)
from evaluation.sources import database_source_from_files

pytestmark = pytest.mark.django_db

# An invented workshop whose "authors" published a schema-only dump naming one column differently.
DUMP = """CREATE DATABASE officina; USE officina;
CREATE TABLE meccanici (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, nome VARCHAR(40) NOT NULL);
CREATE TABLE riparazioni (
  targa VARCHAR(8) NOT NULL,
  meccanico INT UNSIGNED,
  costo DECIMAL(7,2),
  PRIMARY KEY (targa),
  FOREIGN KEY (meccanico) REFERENCES meccanici (id)
);
INSERT INTO meccanici (nome) VALUES ('Ottavio'), ('Rina');
INSERT INTO riparazioni VALUES ('AB123CD', 1, 120.5), ('EF456GH', 2, 80), ('IL789MN', 1, 35);
"""
AUTHORS_DUMP = """-- Officina: lo schema pubblicato dagli autori
CREATE DATABASE officina; USE officina;
CREATE TABLE meccanici (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, nome VARCHAR(40) NOT NULL);
CREATE TABLE riparazioni (
  targa VARCHAR(8) NOT NULL,
  id_meccanico INT UNSIGNED,
  costo DECIMAL(7,2),
  PRIMARY KEY (targa),
  FOREIGN KEY (id_meccanico) REFERENCES meccanici (id)
);
"""
QUESTIONS = "\n".join(
    json.dumps(item)
    for item in (
        {"question": "Quanti meccanici ci sono?", "gold_sql": "SELECT COUNT(*) FROM meccanici"},
        {
            "question": "Quanto ha incassato Ottavio?",
            "gold_sql": "SELECT SUM(r.costo) FROM riparazioni r JOIN meccanici m ON m.id = r.meccanico "
            "WHERE m.nome = 'Ottavio'",
        },
        {
            "question": "Quali targhe ha riparato Rina?",
            "gold_sql": "SELECT targa FROM riparazioni WHERE meccanico = 2",
        },
    )
).encode()


def add_workshop(version, *, schema: str | None = AUTHORS_DUMP) -> Database:
    database, questions = database_source_from_files(
        dump=DUMP.encode(),
        dump_name="officina.sql",
        questions=QUESTIONS,
        questions_name="officina.jsonl",
        schema=schema.encode() if schema else None,
    )
    database_add(version=version, database=database, questions=questions)
    return Database.objects.get(version=version, slug="officina")


@pytest.fixture
def draft():
    return version_create_draft(label="officina-1", name="Officina")


@pytest.fixture
def workshop(draft) -> Database:
    return add_workshop(draft)


def text_of(response) -> str:
    return html.unescape(response.content.decode())


def bundle_files(client, version) -> dict[str, str]:
    response = client.get(reverse("evaluation:task_bundle", args=[version.label]))
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def test_by_default_participants_see_the_scored_database_in_every_form(client, owner, staff, workshop):
    assert workshop.schema_shown == SchemaShown.SCORED
    client.force_login(staff)  # the draft is visible to staff; the forms are the same for everyone
    files = bundle_files(client, workshop.version)
    mysql, sqlite = files["schemas/mysql/officina.sql"], files["schemas/sqlite/officina.sql"]
    assert "meccanico INT UNSIGNED" in mysql and "id_meccanico" not in mysql
    scored = shape_of_ddl(DUMP)
    assert shape_of_ddl(mysql) == scored
    assert shape_of_ddl(sqlite, source="sqlite") == scored
    (tables,) = json.loads(files["tables.json"])
    assert [name for _, name in tables["column_names_original"]] == [
        "*",
        "id",
        "nome",
        "targa",
        "meccanico",
        "costo",
    ]
    assert "INSERT" not in mysql and "Ottavio" not in mysql  # the schema, never the data
    assert "For officina these are the names of the database the gold runs on" in files["README.txt"]


def test_no_question_is_marked_when_the_scored_schema_is_shown(workshop):
    assert all(
        "gold_uses_hidden_schema" not in {p["code"] for p in q.problems} for q in workshop.questions.all()
    )


def test_the_import_report_names_every_difference_and_the_questions_the_authors_dump_leaves_unanswerable(
    workshop,
):
    assert workshop.schema_differences == [
        "riparazioni.meccanico: only in the scored database",
        "riparazioni.id_meccanico: only in the authors' dump",
        "riparazioni: foreign keys ((id_meccanico) -> meccanici(id)) in the authors' dump, "
        "((meccanico) -> meccanici(id)) scored",
    ]
    assert workshop.authors_schema_gaps == {
        "officina-002": ["riparazioni.meccanico"],
        "officina-003": ["riparazioni.meccanico"],
    }
    report = ValidationReport.objects.get(version=workshop.version)
    assert "schema shown to participants: the scored database's" in report.text
    assert "the authors' dump would leave 2 questions unanswerable:" in report.text
    assert "officina-002: lacks riparazioni.meccanico" in report.text
    assert report.data["databases"][0]["schema"]["differences"] == workshop.schema_differences


def test_a_schema_only_dump_that_agrees_keeps_the_authors_text_and_comments(draft):
    agreeing = AUTHORS_DUMP.replace("id_meccanico", "meccanico")
    database = add_workshop(draft, schema=agreeing)
    assert database.schema_sql.startswith("-- Officina: lo schema pubblicato dagli autori\n")
    assert database.schema_differences == [] and database.authors_schema_gaps == {}
    assert not database.renames_authors_schema


def test_without_a_schema_only_dump_the_dump_without_its_data_is_shown(draft):
    database = add_workshop(draft, schema=None)
    assert database.schema_sql.startswith("CREATE DATABASE officina; USE officina;\nCREATE TABLE meccanici")
    assert "INSERT" not in database.schema_sql
    assert database.authors_schema_sql == "" and database.authors_schema_gaps == {}


def test_staff_choose_the_authors_dump_and_its_unanswerable_questions_are_marked(client, staff, workshop):
    client.force_login(staff)
    page = reverse("staff:database_schema", args=[workshop.version.label, "officina"])
    response = client.get(page)
    assert response.status_code == 200
    for line in workshop.schema_differences:
        assert line in text_of(response)
    response = client.post(page, {"shown": "authors"})
    assert response.status_code == 302
    workshop.refresh_from_db()
    assert workshop.shows_authors_schema
    marked = {
        q.public_id
        for q in workshop.questions.all()
        if "gold_uses_hidden_schema" in {p["code"] for p in q.problems}
    }
    assert marked == {"officina-002", "officina-003"}
    report = ValidationReport.objects.filter(version=workshop.version).first()
    assert report.title.startswith("Schema shown for officina: the authors' schema-only dump")
    assert "the authors' dump leaves 2 questions unanswerable:" in report.text

    files = bundle_files(client, workshop.version)
    assert files["schemas/mysql/officina.sql"].startswith("-- Officina: lo schema pubblicato dagli autori")
    authors = shape_of_ddl(AUTHORS_DUMP)
    assert shape_of_ddl(files["schemas/sqlite/officina.sql"], source="sqlite") == authors
    assert differences(from_json(workshop.shown_schema_shape), authors) == []
    assert "For officina" not in files["README.txt"]

    client.post(page, {"shown": "scored"})
    workshop.refresh_from_db()
    assert not workshop.shows_authors_schema
    assert all(
        "gold_uses_hidden_schema" not in {p["code"] for p in q.problems} for q in workshop.questions.all()
    )


def test_staff_exclude_a_marked_question_from_the_schema_page_and_the_reason_is_public(
    client, staff, workshop
):
    database_schema_choose(database=workshop, shown=SchemaShown.AUTHORS)
    client.force_login(staff)
    page = reverse("staff:database_schema", args=[workshop.version.label, "officina"])
    question = workshop.questions.get(public_id="officina-002")
    reason = "Lo schema mostrato non ha la colonna usata dalla risposta."
    response = client.post(
        reverse("staff:question_exclusion", args=[question.pk]),
        {"excluded": "on", "reason": reason, "next": page},
    )
    assert response.status_code == 302 and response["Location"] == page
    question_set_excluded(
        question=workshop.questions.get(public_id="officina-003"), excluded=True, reason=reason
    )
    version_publish(version=workshop.version)
    client.logout()
    changelog = text_of(client.get(reverse("changelog")))
    assert f"<code>officina-002</code>: {reason}" in changelog


def test_an_unsafe_return_address_after_an_exclusion_is_ignored(client, staff, workshop):
    client.force_login(staff)
    question = workshop.questions.get(public_id="officina-001")
    response = client.post(
        reverse("staff:question_exclusion", args=[question.pk]),
        {"excluded": "on", "reason": "prova", "next": "https://elsewhere.example/"},
    )
    assert response["Location"] == reverse("staff:version", args=[workshop.version.label])


def test_the_changelog_says_which_databases_show_names_other_than_the_authors_dump(client, workshop):
    version_publish(version=workshop.version)
    changelog = text_of(client.get(reverse("changelog")))
    assert "For officina the portal shows the scored database's column names" in changelog


def test_the_choice_is_frozen_once_published_and_needs_an_authors_dump(staff, client, draft, workshop):
    with_none = add_workshop(version_create_draft(label="officina-2", name="Officina"), schema=None)
    with pytest.raises(VersionStateError, match="no schema-only dump"):
        database_schema_choose(database=with_none, shown=SchemaShown.AUTHORS)
    version_publish(version=workshop.version)
    with pytest.raises(VersionStateError, match="frozen"):
        database_schema_choose(database=workshop, shown=SchemaShown.AUTHORS)
    client.force_login(staff)
    page = reverse("staff:database_schema", args=[workshop.version.label, "officina"])
    client.post(page, {"shown": "authors"})
    workshop.refresh_from_db()
    assert workshop.schema_shown == SchemaShown.SCORED


def test_a_bad_choice_is_refused_with_a_message(client, staff, workshop):
    client.force_login(staff)
    page = reverse("staff:database_schema", args=[workshop.version.label, "officina"])
    response = client.post(page, {"shown": "altro"})
    assert response.status_code == 400
    assert "Select a valid choice" in text_of(response)


def test_the_database_page_shows_the_scored_schema_and_says_why(client, owner, workshop):
    version_publish(version=workshop.version)
    client.force_login(owner)
    page = client.get(reverse("evaluation:database_detail", args=[workshop.version.label, "officina"]))
    text = text_of(page)
    assert "names some columns differently" in text
    assert "id_meccanico" not in text and "meccanico INT UNSIGNED" in text
