"""Databases imported before a migration get what the new code would have stored."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from evaluation.gold import encrypt_gold
from tests.evaluation.test_schema_shown import AUTHORS_DUMP, DUMP

BEFORE = [("evaluation", "0002_version_private_breakdowns")]
AFTER = [("evaluation", "0003_database_schema_forms")]
CREATE_STATEMENTS = (
    DUMP.split("INSERT")[0].split("USE officina;\n")[1].strip().replace(";\nCREATE", ";\n\nCREATE")
)


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def latest_after():
    """The database goes back to the latest migrations, which the tests after this one need."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


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
