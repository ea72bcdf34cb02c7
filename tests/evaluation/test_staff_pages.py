"""Staff pages: drafts, adding databases by upload, reports, exclusions, publishing; never the gold."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluation.models import BenchmarkVersion, DatabaseImport, Question, ValidationReport
from evaluation.services import version_create_draft
from evaluation.sources import DEMO_DIR
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft():
    return version_create_draft(label="draft-2", name="Termite")


def upload_form(**overrides):
    data = {
        "dump": SimpleUploadedFile("ciclismo.sql", (DEMO_DIR / "ciclismo.sql").read_bytes()),
        "questions": SimpleUploadedFile("ciclismo.jsonl", (DEMO_DIR / "ciclismo.jsonl").read_bytes()),
        "display_name": "Ciclismo",
        "dialect": "mysql",
    }
    data.update(overrides)
    return data


def test_anonymous_visitors_are_sent_to_log_in(client, draft):
    for url in [reverse("staff:home"), reverse("staff:version", args=[draft.label])]:
        response = client.get(url)
        assert response.status_code == 302 and reverse("accounts:login") in response.url


def test_participants_are_refused_every_staff_page(client, owner, draft, demo_version):
    client.force_login(owner)
    report = demo_version.reports.first()
    question = demo_version.questions.first()
    gets = [
        reverse("staff:home"),
        reverse("staff:version", args=[draft.label]),
        reverse("staff:database_add", args=[draft.label]),
        reverse("staff:report", args=[report.pk]),
    ]
    posts = [
        reverse("staff:publish", args=[draft.label]),
        reverse("staff:question_exclusion", args=[question.pk]),
        reverse("staff:import_archive"),
    ]
    for url in gets:
        assert client.get(url).status_code == 403, url
    for url in posts:
        assert client.post(url).status_code == 403, url


def test_staff_create_a_draft_derived_from_a_version(client, staff, demo_version):
    client.force_login(staff)
    response = client.post(
        reverse("staff:home"),
        {
            "draft-label": "demo-1.1",
            "draft-name": "Termite demo",
            "draft-notes": "fix",
            "draft-derived_from": demo_version.pk,
        },
    )
    assert response.status_code == 302
    new = BenchmarkVersion.objects.get(label="demo-1.1")
    assert not new.is_published
    assert new.questions.count() == demo_version.questions.count()
    assert new.databases.count() == 2


def test_a_duplicate_label_is_refused_on_the_form(client, staff, draft):
    client.force_login(staff)
    response = client.post(reverse("staff:home"), {"draft-label": draft.label, "draft-name": "X"})
    assert response.status_code == 200
    assert "already exists" in response.content.decode()


def test_staff_add_a_database_by_upload_then_read_its_report(
    client, staff, draft, imports_in_process, django_capture_on_commit_callbacks
):
    client.force_login(staff)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("staff:database_add", args=[draft.label]), upload_form())
    assert response.status_code == 302
    job = DatabaseImport.objects.get(version=draft)
    assert response.url == reverse("staff:database_import", args=[job.pk])
    report = ValidationReport.objects.get(version=draft)
    page = client.get(reverse("staff:report", args=[report.pk]))
    assert "ciclismo:" in page.content.decode()
    assert_no_gold(page.content, gold_texts(), where="report")
    version_page = client.get(reverse("staff:version", args=[draft.label]))
    assert_no_gold(version_page.content, gold_texts(), where="staff version page")
    assert "ciclismo-001" in version_page.content.decode()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"questions": SimpleUploadedFile("q.jsonl", b'{"question": "x"}\n')},
            "q.jsonl: line 1: field &#x27;gold_sql&#x27;",
        ),
        ({"dump": SimpleUploadedFile("ciclismo.sql", b"")}, "The submitted file is empty."),
        ({"slug": "Not Valid"}, "Use lower-case letters"),
    ],
)
def test_bad_uploads_are_refused_with_a_precise_message_and_store_nothing(
    client, staff, draft, overrides, message
):
    client.force_login(staff)
    response = client.post(reverse("staff:database_add", args=[draft.label]), upload_form(**overrides))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not draft.databases.exists() and not DatabaseImport.objects.exists()


def test_staff_exclude_a_question_with_a_reason_and_publish(
    client, staff, draft, imports_in_process, django_capture_on_commit_callbacks
):
    client.force_login(staff)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("staff:database_add", args=[draft.label]), upload_form())
    question = draft.questions.first()
    client.post(
        reverse("staff:question_exclusion", args=[question.pk]), {"excluded": "on", "reason": "ambigua"}
    )
    question.refresh_from_db()
    assert (question.status, question.status_reason) == (Question.Status.EXCLUDED, "ambigua")
    response = client.post(reverse("staff:publish", args=[draft.label]))
    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.is_published
    client.post(reverse("staff:question_exclusion", args=[question.pk]), {"excluded": ""})
    question.refresh_from_db()
    assert question.status == Question.Status.EXCLUDED, "a published version is frozen"


def test_an_exclusion_needs_a_reason(
    client, staff, draft, imports_in_process, django_capture_on_commit_callbacks
):
    client.force_login(staff)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("staff:database_add", args=[draft.label]), upload_form())
    question = draft.questions.first()
    client.post(reverse("staff:question_exclusion", args=[question.pk]), {"excluded": "on", "reason": " "})
    question.refresh_from_db()
    assert question.status == Question.Status.VALID


def test_publishing_asks_first_saying_it_cannot_be_undone(client, staff, demo_version):
    draft = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    client.force_login(staff)
    version_page = client.get(reverse("staff:version", args=[draft.label])).content.decode()
    confirm_url = reverse("staff:publish", args=[draft.label])
    assert f'href="{confirm_url}" id="publish"' in version_page
    page = client.get(confirm_url)
    body = page.content.decode()
    assert page.status_code == 200 and "Publish Termite demo demo-1.1?" in body
    assert "This cannot be undone" in body and 'name="carry" checked' in body
    draft.refresh_from_db()
    assert not draft.is_published, "asking publishes nothing"
    response = client.post(confirm_url, follow=True)
    assert "Termite demo demo-1.1 is published." in response.content.decode()


def test_the_confirmation_of_a_published_version_offers_no_button(client, staff, demo_version):
    client.force_login(staff)
    body = client.get(reverse("staff:publish", args=[demo_version.label])).content.decode()
    assert "is published already" in body and 'id="publish"' not in body


def test_excluding_a_question_and_bringing_it_back_each_say_so(client, staff, demo_version):
    draft = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    question = draft.questions.order_by("public_id").first()
    url = reverse("staff:question_exclusion", args=[question.pk])
    client.force_login(staff)
    excluded = client.post(url, {"excluded": "on", "reason": "ambigua"}, follow=True).content.decode()
    assert f"{question.public_id} is left out of scoring: ambigua" in excluded
    back = client.post(url, {"excluded": ""}, follow=True).content.decode()
    assert f"{question.public_id} is scored again." in back


def test_an_empty_draft_cannot_be_published(client, staff, draft):
    client.force_login(staff)
    response = client.post(reverse("staff:publish", args=[draft.label]), follow=True)
    assert "has no scorable question" in response.content.decode()
    draft.refresh_from_db()
    assert not draft.is_published


def test_state_changing_staff_pages_take_post_only(client, staff, draft, demo_version):
    client.force_login(staff)
    question = demo_version.questions.first()
    for url in [
        reverse("staff:question_exclusion", args=[question.pk]),
        reverse("staff:import_archive"),
    ]:
        assert client.get(url).status_code == 405, url


def test_a_bad_archive_upload_is_refused_with_a_message(client, staff):
    client.force_login(staff)
    response = client.post(
        reverse("staff:import_archive"),
        {
            "import-archive": SimpleUploadedFile("Termite.zip", b"not a zip at all"),
            "import-password": "x",
            "import-label": "9.9",
        },
    )
    assert response.status_code == 400
    assert "Termite.zip: not a zip archive" in response.content.decode()
    assert not BenchmarkVersion.objects.filter(label="9.9").exists()


def test_the_django_admin_never_shows_gold(client, django_user_model, demo_version):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-123456789")
    client.force_login(admin)
    golds = gold_texts()
    question = demo_version.questions.first()
    for url in [
        reverse("admin:evaluation_question_changelist"),
        reverse("admin:evaluation_question_change", args=[question.pk]),
        reverse("admin:evaluation_database_changelist"),
        reverse("admin:evaluation_validationreport_changelist"),
    ]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert_no_gold(response.content, golds, where=url)
    assert json.dumps(question.problems)  # findings are plain data


def test_staff_import_an_archive_by_upload_and_land_on_its_report(client, staff, tmp_path):
    from tests.evaluation.test_sources import archive_members, make_archive

    path = tmp_path / "bench.zip"
    make_archive(path, archive_members())
    client.force_login(staff)
    form = {
        "import-archive": SimpleUploadedFile("Termite.zip", path.read_bytes()),
        "import-password": "segreto",
        "import-label": "0.9",
        "import-publish": "on",
    }
    response = client.post(reverse("staff:import_archive"), form)
    report = ValidationReport.objects.get(version__label="0.9")
    assert response.status_code == 302 and response.url == reverse("staff:report", args=[report.pk])
    assert BenchmarkVersion.objects.get(label="0.9").is_published
    form["import-archive"] = SimpleUploadedFile("Termite.zip", path.read_bytes())
    again = client.post(reverse("staff:import_archive"), form, follow=True)
    assert "already imported; nothing changed" in again.content.decode()


def test_a_wrong_archive_password_on_the_staff_page_names_the_uploaded_file(client, staff, tmp_path):
    from tests.evaluation.test_sources import archive_members, make_archive

    path = tmp_path / "bench.zip"
    make_archive(path, archive_members())
    client.force_login(staff)
    form = {
        "import-archive": SimpleUploadedFile("Termite.zip", path.read_bytes()),
        "import-password": "no",
        "import-label": "0.9",
    }
    response = client.post(reverse("staff:import_archive"), form)
    assert response.status_code == 400
    assert "Termite.zip: wrong password" in response.content.decode()
