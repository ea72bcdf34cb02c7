"""The staff page of a database being added: its progress while the job runs (reloading itself, so it
works without JavaScript), then its report, or the error that stopped it; never a server error, never gold."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluation.imports import database_import_run
from evaluation.models import DatabaseImport
from evaluation.services import version_create_draft
from tests.evaluation.test_add_database import DUMP, GOOD_QUESTIONS
from tests.evaluation.test_database_import import GOLD, queue_job

pytestmark = pytest.mark.django_db

REFRESH = '<meta http-equiv="refresh"'


@pytest.fixture
def draft():
    return version_create_draft(label="draft-page", name="Prova")


def page_of(client, job):
    response = client.get(reverse("staff:database_import", args=[job.pk]))
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    return response.content.decode()


def test_the_upload_answers_at_once_with_the_page_of_its_queued_job(client, staff, draft, settings):
    settings.REDIS_URL = ""
    client.force_login(staff)
    response = client.post(
        reverse("staff:database_add", args=[draft.label]),
        {
            "dump": SimpleUploadedFile("negozio.sql", DUMP.encode()),
            "questions": SimpleUploadedFile("q.jsonl", GOOD_QUESTIONS),
            "dialect": "mysql",
        },
    )  # the test's transaction never commits: the job stays queued
    job = DatabaseImport.objects.get()
    assert response.status_code == 302 and response.url == reverse("staff:database_import", args=[job.pk])
    assert (job.state, job.requested_by, job.slug) == ("queued", staff, "negozio")
    assert not draft.databases.exists()
    html = page_of(client, job)
    assert REFRESH in html and 'id="import-progress"' in html and "queued" in html
    assert "carla" in html


def test_while_it_runs_the_page_shows_each_step_and_reloads_itself(client, staff, draft):
    job = queue_job(draft)
    job.claim()
    job.record_step(40, "building the test suite of negozio from 40 candidates")
    client.force_login(staff)
    html = page_of(client, job)
    assert REFRESH in html
    assert 'value="40"' in html and "building the test suite of negozio from 40 candidates" in html
    assert 'id="report-text"' not in html


def test_once_done_the_page_shows_the_report_and_stops_reloading(client, staff, draft):
    job = queue_job(draft)
    database_import_run(job_id=job.pk)
    client.force_login(staff)
    html = page_of(client, job)
    assert REFRESH not in html
    assert 'id="report-text"' in html and "negozio: 1 tables, 3 rows (clienti 3)" in html
    assert 'value="100"' in html
    assert GOLD not in html
    version_page = client.get(reverse("staff:version", args=[draft.label])).content.decode()
    assert reverse("staff:database_import", args=[job.pk]) in version_page


def test_a_failed_job_shows_its_error_and_that_the_version_is_unchanged(client, staff, draft):
    job = queue_job(draft, dump=DUMP + "INSERT INTO clienti VALUES (;\n")
    database_import_run(job_id=job.pk)
    client.force_login(staff)
    html = page_of(client, job)
    assert REFRESH not in html
    assert 'id="import-error"' in html and "Not added; the version is as it was." in html
    assert "database negozio: " in html and "line 5" in html
    assert not draft.databases.exists()


def test_only_staff_see_it(client, owner, draft):
    job = queue_job(draft)
    url = reverse("staff:database_import", args=[job.pk])
    assert client.get(url).status_code == 302
    client.force_login(owner)
    assert client.get(url).status_code == 403
