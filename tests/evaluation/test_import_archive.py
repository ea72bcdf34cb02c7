"""`import_termite` on archives made here: the error cases, each one line, a non-zero exit, nothing written."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import BenchmarkVersion, Question
from tests.evaluation.test_sources import archive_members, make_archive

pytestmark = pytest.mark.django_db


def run(path, password="segreto", *extra):
    call_command("import_termite", str(path), "--password", password, *extra)


def test_a_small_archive_imports_as_a_published_version(tmp_path, capsys, empty_store):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members())
    run(path, "segreto", "--version", "0.1", "--name", "Prova")
    version = BenchmarkVersion.objects.get(label="0.1")
    assert (version.name, version.is_published) == ("Prova", True)
    assert list(Question.objects.values_list("public_id", flat=True).order_by("public_id")) == [
        "negozio-001",
        "negozio-002",
        "scuola-001",
    ]
    assert "Imported Prova 0.1: 2 databases, 3 questions (3 scored); published." in capsys.readouterr().out


def test_draft_keeps_the_version_unpublished(tmp_path):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members())
    run(path, "segreto", "--draft")
    assert not BenchmarkVersion.objects.get(label="1.0").is_published


def test_the_same_label_with_other_content_is_refused(tmp_path):
    make_archive(tmp_path / "a.zip", archive_members())
    run(tmp_path / "a.zip")
    changed = archive_members(**{"databases/scuola/scuola.sql": "CREATE TABLE studenti (id INT, nome TEXT);"})
    make_archive(tmp_path / "b.zip", changed)
    with pytest.raises(CommandError, match="version '1.0' already exists with other content"):
        run(tmp_path / "b.zip")


@pytest.mark.parametrize(
    ("members", "message"),
    [
        (
            {
                "databases/scuola/scuola.sql": "CREATE TABLE studenti (id INT);\nINSERT INTO studenti VALUES (1,;"
            },
            r"database scuola: line 2: statement 2",
        ),
        (
            {"databases/queries.json": json.dumps([{"db_id": "negozio", "original": "Q?"}])},
            "item 1: field 'query' is missing",
        ),
        ({"databases/scuola/scuola.sql": None}, "missing databases/scuola/scuola.sql"),
    ],
)
def test_a_broken_archive_is_one_clear_error_and_writes_nothing(tmp_path, members, message, empty_store):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members(**members))
    with pytest.raises(CommandError, match=message):
        run(path)
    assert not BenchmarkVersion.objects.exists()


def test_a_wrong_password_or_a_non_zip_is_refused(tmp_path, empty_store):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members())
    with pytest.raises(CommandError, match="wrong password"):
        run(path, "sbagliata")
    (tmp_path / "fake.zip").write_text("hello")
    with pytest.raises(CommandError, match="not a zip archive"):
        run(tmp_path / "fake.zip")
    assert not BenchmarkVersion.objects.exists()
