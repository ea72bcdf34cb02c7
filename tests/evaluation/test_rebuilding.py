"""A version's copies and SQLite gold, built by an older scorer, are rebuilt as an import now builds them,
only when every gold returns the same rows as before, and never half-way."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import pytest

from evaluation import database_cache
from evaluation.gold import encrypt_gold
from evaluation.models import StoredDatabase, ValidationReport
from evaluation.rebuilding import RebuildRefused, databases_to_rebuild, version_rebuild
from evaluation.scoring import mysql_dump
from evaluation.scoring.score import SCORER_VERSION
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts

pytestmark = pytest.mark.django_db

OLDER = "1.4.0"


def built_by_an_older_scorer(version) -> None:
    """As scorer 1.4.0 left the demo: copies built with every UNSIGNED column a plain one (it did not
    declare them), and a gold query transpiled into other text with the same meaning."""
    version.databases.update(built_by_scorer=OLDER)
    biblioteca = version.databases.get(slug="biblioteca")
    with tempfile.TemporaryDirectory() as folder:
        old = Path(folder) / "old.sqlite3"
        mysql_dump.build_sqlite(biblioteca.original_dump.replace(" UNSIGNED", ""), old)
        content = old.read_bytes()
    sha256 = hashlib.sha256(content).hexdigest()
    StoredDatabase.objects.get_or_create(sha256=sha256, defaults={"content": content, "size": len(content)})
    database_cache.write_copy(content, sha256)
    biblioteca.sqlite_sha256 = sha256
    biblioteca.save(update_fields=["sqlite_sha256"])
    question = biblioteca.questions.get(public_id="biblioteca-001")
    question.gold_sqlite_encrypted = encrypt_gold(question.decrypt_gold_sqlite() + "\n")
    question.save(update_fields=["gold_sqlite_encrypted"])


def test_an_import_records_the_scorer_that_built_its_copies(demo_version):
    assert set(demo_version.databases.values_list("built_by_scorer", flat=True)) == {SCORER_VERSION}
    assert databases_to_rebuild(demo_version) == []
    assert version_rebuild(version=demo_version) is None


def test_what_an_older_scorer_built_is_rebuilt_as_an_import_now_builds_it(demo_version):
    built_now = dict(demo_version.databases.values_list("slug", "sqlite_sha256"))
    golds_now = {
        q.public_id: q.decrypt_gold_sqlite() for q in demo_version.questions.exclude(gold_sqlite_encrypted="")
    }
    built_by_an_older_scorer(demo_version)

    report = version_rebuild(version=demo_version)

    assert dict(demo_version.databases.values_list("slug", "sqlite_sha256")) == built_now
    assert set(demo_version.databases.values_list("built_by_scorer", flat=True)) == {SCORER_VERSION}
    golds = {
        q.public_id: q.decrypt_gold_sqlite() for q in demo_version.questions.exclude(gold_sqlite_encrypted="")
    }
    assert golds == golds_now
    biblioteca = report.data["databases"]["biblioteca"]
    assert biblioteca["built_by_scorer"] == {"before": OLDER, "after": SCORER_VERSION}
    assert (
        biblioteca["sqlite_sha256"]["after"]
        == built_now["biblioteca"]
        != biblioteca["sqlite_sha256"]["before"]
    )
    assert biblioteca["golds_retranspiled"] == 1
    scored = demo_version.questions.scored().filter(database__slug="biblioteca").count()
    assert biblioteca["rows_checked"] == scored
    assert report.title == f"Derived data rebuilt by scorer {SCORER_VERSION}"
    assert report.text.splitlines()[0] == (
        f"biblioteca: built by scorer {OLDER}; copy rebuilt, 0 neighbours rebuilt, 1 gold queries transpiled "
        f"anew, {scored} gold results checked unchanged"
    )
    assert "ciclismo: built by scorer 1.4.0; copy unchanged" in report.text
    assert_no_gold(report.text, gold_texts(), where="the rebuild's report")
    assert version_rebuild(version=demo_version) is None


def test_a_rebuild_that_would_change_what_a_gold_returns_writes_nothing(demo_version):
    built_by_an_older_scorer(demo_version)
    before = dict(demo_version.databases.values_list("slug", "sqlite_sha256"))
    question = demo_version.questions.get(public_id="biblioteca-002")
    question.gold_sqlite_encrypted = encrypt_gold("SELECT 1")  # what the old copy was scored against
    question.save(update_fields=["gold_sqlite_encrypted"])
    reports = ValidationReport.objects.count()

    with pytest.raises(RebuildRefused) as refused:
        version_rebuild(version=demo_version)

    message = str(refused.value)
    assert "biblioteca-002 on biblioteca: its gold returns other rows on the rebuilt copy" in message
    assert "nothing was rebuilt and its submissions keep their scores" in message
    assert_no_gold(message, gold_texts(), where="the refusal")
    assert dict(demo_version.databases.values_list("slug", "sqlite_sha256")) == before
    assert set(demo_version.databases.values_list("built_by_scorer", flat=True)) == {OLDER}
    question.refresh_from_db()
    assert question.decrypt_gold_sqlite() == "SELECT 1"
    assert ValidationReport.objects.count() == reports


def test_a_gold_the_current_scorer_would_refuse_stops_the_rebuild(demo_version):
    built_by_an_older_scorer(demo_version)
    question = demo_version.questions.get(public_id="biblioteca-001")
    # A column neither grouped nor dependent on a grouped one: MySQL 8.0's ONLY_FULL_GROUP_BY refuses it.
    question.gold_encrypted = encrypt_gold("SELECT citta, COUNT(*) FROM soci GROUP BY cognome")
    question.save(update_fields=["gold_encrypted"])

    with pytest.raises(
        RebuildRefused,
        match=r"biblioteca-001: the current scorer would not score it \(MySQL 8.0 refuses it \(ERROR 1055",
    ):
        version_rebuild(version=demo_version)
    assert set(demo_version.databases.values_list("built_by_scorer", flat=True)) == {OLDER}


def test_each_neighbour_of_a_test_suite_is_rebuilt_and_each_gold_checked_on_its_suite(demo_with_suites):
    version = demo_with_suites
    version.databases.update(built_by_scorer=OLDER)
    neighbours = {db.slug: db.neighbours.count() for db in version.databases.all()}
    suite_runs = sum(len(q.suite) for q in version.questions.scored())
    assert suite_runs > 0

    report = version_rebuild(version=version)

    done = report.data["databases"]
    assert {slug: done[slug]["neighbours"] for slug in done} == neighbours
    assert sum(done[slug]["rows_checked"] for slug in done) == version.questions.scored().count() + suite_runs
    for database in version.databases.all():
        for neighbour in database.neighbours.all():
            assert database_cache.local_copy(neighbour.sqlite_sha256).is_file()
