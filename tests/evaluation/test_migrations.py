"""Databases imported before a migration get what the new code would have stored."""

from __future__ import annotations

import hashlib
from datetime import UTC

import pytest

from evaluation.gold import encrypt_gold
from tests.evaluation.test_schema_shown import AUTHORS_DUMP, DUMP
from tests.migrations import migrate

# Every store these migrations met started empty: the demo the suite shares is not in it.
pytestmark = pytest.mark.usefixtures("empty_store")

BEFORE = [("evaluation", "0002_version_private_breakdowns")]
AFTER = [("evaluation", "0003_database_schema_forms")]
CREATE_STATEMENTS = (
    DUMP.split("INSERT")[0].split("USE officina;\n")[1].strip().replace(";\nCREATE", ";\n\nCREATE")
)


@pytest.mark.django_db(transaction=True)
def test_the_schema_forms_of_databases_imported_before_are_derived_from_their_dumps(latest_after):
    apps = migrate(BEFORE)
    Version = apps.get_model("evaluation", "BenchmarkVersion")
    Database = apps.get_model("evaluation", "Database")
    Question = apps.get_model("evaluation", "Question")
    version = Version.objects.create(name="Officina", label="vecchia")
    fields = {"version": version, "display_name": "Officina", "original_dump": DUMP, "sqlite_schema": ""}
    with_authors = Database.objects.create(slug="con_schema", schema_sql=AUTHORS_DUMP, **fields)
    without = Database.objects.create(slug="senza_schema", schema_sql=CREATE_STATEMENTS + "\n", **fields)
    Question.objects.create(
        version=version,
        database=with_authors,
        public_id="con_schema-001",
        position=1,
        text="Quali targhe ha riparato Rina?",
        hardness="easy",
        gold_encrypted=encrypt_gold("SELECT targa FROM riparazioni WHERE meccanico = 2"),
    )

    apps = migrate(AFTER)
    Database = apps.get_model("evaluation", "Database")
    with_authors = Database.objects.get(slug="con_schema")
    assert "meccanico INT UNSIGNED" in with_authors.schema_sql and "INSERT" not in with_authors.schema_sql
    assert '"meccanico" INTEGER' in with_authors.sqlite_schema
    assert with_authors.authors_schema_sql.startswith("-- Officina: lo schema pubblicato dagli autori")
    assert "riparazioni.meccanico: only in the scored database" in with_authors.schema_differences
    assert with_authors.authors_schema_gaps == {"con_schema-001": ["riparazioni.meccanico"]}
    without = Database.objects.get(slug="senza_schema")
    assert without.authors_schema_sql == "" and without.schema_differences == []
    assert [table["name"] for table in without.schema_shape] == ["meccanici", "riparazioni"]


@pytest.mark.django_db(transaction=True)
def test_databases_stored_before_dates_are_dated_by_their_version_or_the_version_they_were_carried_from(
    latest_after,
):
    from datetime import date, datetime

    apps = migrate([("evaluation", "0005_errata")])
    Version = apps.get_model("evaluation", "BenchmarkVersion")
    Database = apps.get_model("evaluation", "Database")
    first = Version.objects.create(label="1.0", created_at=datetime(2024, 2, 12, 9, tzinfo=UTC))
    derived = Version.objects.create(
        label="1.1", created_at=datetime(2025, 5, 6, 9, tzinfo=UTC), derived_from=first
    )
    fields = {"display_name": "x", "original_dump": "", "schema_sql": "", "sqlite_schema": ""}
    Database.objects.create(version=first, slug="bowling", **fields)
    Database.objects.create(version=derived, slug="bowling", **fields)  # carried over
    Database.objects.create(version=derived, slug="nuovo", **fields)  # added to the derived version

    apps = migrate([("evaluation", "0006_database_added_on")])
    Database = apps.get_model("evaluation", "Database")
    found = {(db.version.label, db.slug): db.added_on for db in Database.objects.select_related("version")}
    assert found == {
        ("1.0", "bowling"): date(2024, 2, 12),
        ("1.1", "bowling"): date(2024, 2, 12),
        ("1.1", "nuovo"): date(2025, 5, 6),
    }


@pytest.mark.django_db(transaction=True)
def test_the_database_copies_of_an_older_store_are_stored_on_the_platform_from_its_files(
    latest_after, settings, tmp_path, caplog
):
    settings.DATA_DIR = tmp_path
    folder = tmp_path / "databases"
    folder.mkdir()
    kept, altered, missing = b"SQLite format 3\x00 kept", b"SQLite format 3\x00 altered", b"missing"
    shas = {
        name: hashlib.sha256(content).hexdigest()
        for name, content in (("kept", kept), ("altered", altered), ("missing", missing))
    }
    (folder / f"{shas['kept']}.sqlite3").write_bytes(kept)
    (folder / f"{shas['altered']}.sqlite3").write_bytes(b"not what its name says")
    apps = migrate([("evaluation", "0006_database_added_on")])
    Version = apps.get_model("evaluation", "BenchmarkVersion")
    Database = apps.get_model("evaluation", "Database")
    version = Version.objects.create(name="Vecchia", label="vecchia")
    for name, sha256 in shas.items():
        Database.objects.create(version=version, slug=name, display_name=name, sqlite_sha256=sha256)

    apps = migrate([("evaluation", "0007_stored_databases")])
    stored = apps.get_model("evaluation", "StoredDatabase").objects.all()
    assert [(row.sha256, bytes(row.content), row.size) for row in stored] == [(shas["kept"], kept, len(kept))]
    assert f"database copy {shas['altered']} not stored" in caplog.text
    assert f"database copy {shas['missing']} not stored" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_versions_stored_before_the_setting_keep_giving_participants_the_schema_only(latest_after):
    apps = migrate([("evaluation", "0007_stored_databases")])
    Version = apps.get_model("evaluation", "BenchmarkVersion")
    Version.objects.create(name="Vecchia", label="vecchia", status="published")
    Version.objects.create(name="Bozza", label="bozza")

    apps = migrate([("evaluation", "0008_version_participants_see")])
    Version = apps.get_model("evaluation", "BenchmarkVersion")
    assert dict(Version.objects.values_list("label", "participants_see")) == {
        "vecchia": "schema",
        "bozza": "schema",
    }
