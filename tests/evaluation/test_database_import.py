"""Adding a database is a job: queued by the request, run once by the queue, each step recorded with its
percentage, ending with the report or with a clear error that leaves the version as it was."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation import imports
from evaluation.imports import QUEUE_NAME, database_import_create, database_import_run
from evaluation.models import Database, DatabaseImport, Question, StoredDatabase, ValidationReport
from evaluation.services import VersionStateError, version_create_draft, version_publish
from evaluation.sources import SourceError, database_source_from_files
from termite_site.queue import rq_queue
from tests.evaluation.test_add_database import DUMP, GOOD_QUESTIONS
from tests.processes import run_worker_burst

pytestmark = pytest.mark.django_db

GOLD = "SELECT COUNT(*) FROM clienti WHERE citta = 'ROMA'"


@pytest.fixture
def draft():
    return version_create_draft(label="draft-job", name="Prova")


def queue_job(version, *, dump=DUMP, requested_by=None, queue=False, slug=None):
    database, questions = database_source_from_files(
        dump=dump.encode(),
        dump_name="negozio.sql",
        questions=GOOD_QUESTIONS,
        questions_name="q.jsonl",
        slug=slug,
    )
    return database_import_create(
        version=version, database=database, questions=questions, requested_by=requested_by, queue=queue
    )


def test_a_job_waits_queued_with_its_inputs_and_the_gold_encrypted(draft, staff):
    job = queue_job(draft, requested_by=staff)
    assert (job.state, job.percent, job.requested_by, job.slug) == ("queued", 0, staff, "negozio")
    assert [step["message"] for step in job.steps] == ["queued"]
    assert job.source["dump"] == DUMP
    assert GOLD not in job.questions_encrypted and "clienti" not in job.questions_encrypted
    assert not draft.databases.exists()


def test_the_queue_runs_the_job_once_its_request_commits(
    draft, imports_in_process, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = queue_job(draft, queue=True)
    job.refresh_from_db()
    assert job.state == "done"
    assert Database.objects.filter(version=draft, slug="negozio").exists()


def test_a_job_done_records_each_step_in_order_then_its_report(draft, monkeypatch):
    monkeypatch.delenv("TERMITE_REFERENCE_MYSQL_URL", raising=False)  # no MariaDB step: the same steps in CI
    job = queue_job(draft)
    printed = []
    assert database_import_run(job_id=job.pk, progress=lambda *step: printed.append(step)) == "done"
    job.refresh_from_db()
    assert (job.state, job.percent, job.error) == ("done", 100, "")
    assert job.report == ValidationReport.objects.get(version=draft)
    assert "negozio: 1 tables, 3 rows (clienti 3)" in job.report.text
    messages = [step["message"] for step in job.steps]
    assert messages == [
        "queued",
        "building negozio from its dump",
        "checking 5 gold queries on SQLite",
        "storing negozio, its questions and its test suite",
    ]
    percents = [step["percent"] for step in job.steps]
    assert percents == sorted(percents) and percents[-1] == 95
    assert printed == [(step["percent"], step["message"]) for step in job.steps[1:]]
    assert job.started_at <= job.finished_at
    assert (job.source, job.questions_encrypted) == ({}, "")  # the version holds what was stored


def test_the_test_suite_build_reports_its_candidates_as_steps(draft, settings):
    settings.TERMITE_SUITE_CANDIDATES = 4
    job = queue_job(draft)
    database_import_run(job_id=job.pk)
    job.refresh_from_db()
    suite_steps = [step for step in job.steps if "test suite of negozio" in step["message"]]
    assert [(step["percent"], step["message"]) for step in suite_steps] == [
        (40, "building the test suite of negozio from 4 candidates"),
        (48, "test suite of negozio: 1 of 4 candidates built"),
        (56, "test suite of negozio: 2 of 4 candidates built"),
        (65, "test suite of negozio: 3 of 4 candidates built"),
        (73, "test suite of negozio: the gold queries and their near misses run on each candidate"),
    ]


def test_a_job_runs_once_however_often_it_is_started(draft):
    job = queue_job(draft)
    assert database_import_run(job_id=job.pk) == "done"
    assert database_import_run(job_id=job.pk) == "not run here"
    assert Database.objects.filter(version=draft).count() == 1


def test_a_dump_that_does_not_build_fails_the_job_with_its_line_and_stores_nothing(empty_store, draft):
    job = queue_job(draft, dump=DUMP + "INSERT INTO clienti VALUES (;\n")
    assert database_import_run(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert job.state == "failed" and job.report is None
    assert job.error.startswith("database negozio: ") and "line 5" in job.error
    assert not Database.objects.exists() and not StoredDatabase.objects.exists()
    assert not Question.objects.exists() and not ValidationReport.objects.exists()
    assert (job.source, job.questions_encrypted) == ({}, "")


def test_an_unexpected_error_while_storing_fails_the_job_by_its_kind_and_leaves_the_version_as_it_was(
    empty_store, draft, monkeypatch
):
    def explode(*args, **kwargs):
        raise RuntimeError(GOLD)  # a message that could quote what it should not

    monkeypatch.setattr(Question.objects, "bulk_create", explode)
    job = queue_job(draft)
    assert database_import_run(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert job.error == "stopped by an unexpected error (RuntimeError); nothing was stored"
    assert not draft.databases.exists() and not StoredDatabase.objects.exists()
    assert not ValidationReport.objects.exists()


def test_a_version_published_while_the_job_waited_fails_it_clearly(draft):
    job = queue_job(draft)
    # Publishing needs a scorable question: the draft gets one from another database first.
    other = queue_job(draft, slug="bottega")
    database_import_run(job_id=other.pk)
    version_publish(version=draft)
    assert database_import_run(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert job.error == "Prova draft-job is published; add databases to a new draft version"


def test_what_can_be_refused_at_once_is_refused_before_a_job_exists(draft):
    queue_job(draft)
    with pytest.raises(SourceError, match=r"'negozio' is being added to Prova draft-job already \(job \d+\)"):
        queue_job(draft)
    database_import_run(job_id=DatabaseImport.objects.get().pk)
    with pytest.raises(SourceError, match="already has a database 'negozio'"):
        queue_job(draft)
    version_publish(version=draft)
    with pytest.raises(VersionStateError, match="is published"):
        queue_job(draft)
    assert DatabaseImport.objects.count() == 1


def test_a_job_running_past_its_time_limit_is_failed_by_the_sweep_and_its_name_freed(draft, settings):
    settings.TERMITE_IMPORT_TIMEOUT = 600
    lost, recent = queue_job(draft), queue_job(draft, slug="bottega")
    for job, minutes in ((lost, 12), (recent, 5)):
        job.claim()
        DatabaseImport.objects.filter(pk=job.pk).update(
            started_at=timezone.now() - timedelta(minutes=minutes)
        )
    assert imports.database_imports_sweep() == 1
    lost.refresh_from_db()
    recent.refresh_from_db()
    assert (lost.state, recent.state) == ("failed", "running")
    assert lost.error == imports.LOST and (lost.source, lost.questions_encrypted) == ({}, "")
    again = queue_job(draft)  # a lost job holds its name no longer
    assert again.state == "queued"


def test_with_redis_unreachable_the_job_fails_saying_so(
    draft, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"

    def unreachable(name):
        raise ConnectionError("Redis is down")

    monkeypatch.setattr(imports, "rq_queue", unreachable)
    with django_capture_on_commit_callbacks(execute=True):
        job = queue_job(draft, queue=True)
    job.refresh_from_db()
    assert job.state == "failed"
    assert job.error.startswith("the job could not be queued (ConnectionError)")


@pytest.mark.processes
def test_with_redis_the_job_waits_on_the_imports_queue_until_a_worker_runs_it(real_services):
    draft = version_create_draft(label="draft-worker", name="Prova")
    rq_queue(QUEUE_NAME).empty()
    job = queue_job(draft, queue=True)  # committed at once: the queue has it when this returns
    assert rq_queue(QUEUE_NAME).job_ids == [f"database-import-{job.pk}"]
    job.refresh_from_db()
    assert job.state == "queued" and not draft.databases.exists()
    worker = run_worker_burst(QUEUE_NAME)
    assert worker.returncode == 0, worker.stderr[-2000:]
    job.refresh_from_db()
    assert (job.state, job.percent) == ("done", 100)
    assert draft.databases.get().slug == "negozio" and job.report.version == draft
