"""Uploading predictions through the web form: validated completely before anything is stored."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluation.scoring.score import SCORER_VERSION
from leaderboard.model_card import PUBLIC_REQUIRED
from leaderboard.models import Submission, SubmissionQuota
from tests.demo import PUBLIC_CARD, predictions_jsonl
from tests.form_page import FormPage

pytestmark = pytest.mark.django_db

URL = reverse("leaderboard:submission_new")


def form(data: bytes, name: str = "preds.jsonl", **fields) -> dict:
    return {
        "model_name": "Llama di prova",
        "weights": "open",
        "approach": "prompting",
        "dialect": "mysql",
        "predictions": SimpleUploadedFile(name, data),
        **fields,
    }


@pytest.fixture
def logged_in(client, owner, demo_version):
    client.force_login(owner)
    return client


def test_anonymous_visitors_are_sent_to_log_in(client, demo_version):
    assert client.get(URL).url.startswith(reverse("accounts:login"))


def test_the_form_shows_the_quota_left(logged_in):
    body = logged_in.get(URL).content.decode()
    assert 'id="quota"' in body and "You can submit 5 more today" in body


def test_it_shows_the_zip_layout_in_the_help_text_as_text_not_as_a_tag(logged_in):
    body = logged_in.get(URL).content.decode()
    assert "a zip of &lt;db&gt;/predict.txt files" in body
    assert "<db>" not in body


def test_it_shows_the_zip_layout_as_text_in_italian_too(logged_in):
    body = logged_in.get(URL, HTTP_ACCEPT_LANGUAGE="it").content.decode()
    assert "zip di file &lt;db&gt;/predict.txt" in body
    assert "<db>" not in body


def test_a_good_upload_is_stored_queued_then_scored_in_process(
    logged_in, owner, gold, in_process, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(
            URL, form(predictions_jsonl(gold), is_public="on", spider_dev_ea="81.5", **PUBLIC_CARD)
        )
    submission = Submission.objects.get(user=owner)
    assert response.status_code == 302 and response.url == submission.get_absolute_url()
    submission.refresh_from_db()
    assert submission.status == "scored"
    assert submission.ea == 1.0 and submission.is_public and submission.spider_dev_ea == 81.5
    assert submission.attempts == 1
    receipt = submission.receipt
    assert receipt["benchmark_version"] == "demo-1.0" and receipt["scorer_version"] == SCORER_VERSION
    assert len(receipt["file_sha256"]) == 64 and receipt["not_submitted"] == 0


def test_missing_questions_are_allowed_and_counted(
    logged_in, owner, gold, in_process, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(URL, form(predictions_jsonl(dict(list(gold.items())[:5]))), follow=True)
    assert "18 questions have no prediction and count as not submitted." in response.content.decode()
    submission = Submission.objects.get(user=owner)
    assert submission.missing_count == 18
    assert submission.scores["outcomes"]["not_submitted"] == 18


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfe{}", "preds.jsonl: line 1: not UTF-8"),
        (b'{"question_id": "biblioteca-001"}', "preds.jsonl: line 1: field &#x27;sql&#x27; is missing"),
        (b'{"question_id": 5, "sql": "SELECT 1"}', "line 1: field &#x27;question_id&#x27; is not a string"),
        (b"[1]", "line 1: expected a JSON object, got list"),
        (b'{"question_id": "biblioteca-999", "sql": "x"}', "unknown question &#x27;biblioteca-999&#x27;"),
        (
            b'{"question_id": "biblioteca-001", "sql": "x"}\n{"question_id": "biblioteca-001", "sql": "y"}',
            "line 2: field &#x27;question_id&#x27;: biblioteca-001 repeats line 1",
        ),
        (
            b'{"question_id": "biblioteca-001", "sql": "' + b"x" * 20_001 + b'"}',
            "the SQL is longer than 20000 characters",
        ),
        (b" \n", "preds.jsonl: the file is empty"),
    ],
)
def test_a_bad_file_is_refused_with_its_line_and_field_and_costs_nothing(logged_in, owner, data, message):
    response = logged_in.post(URL, form(data))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Submission.objects.exists()
    assert "You can submit 5 more today" in response.content.decode()


def test_a_refused_file_opens_the_page_on_a_summary_linking_each_line_to_the_file_field(logged_in):
    good = b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}'
    response = logged_in.post(URL, form(b"\n".join([good, b"[1]", b"[2]"])))
    page = FormPage(response.content.decode())
    assert page.summary is not None and page.summary_before_fields
    assert page.summary["role"] == "alert" and page.summary["tabindex"] == "-1"
    assert page.summary_links == [
        ("id_predictions", "Predictions file: preds.jsonl: line 2: expected a JSON object, got list"),
        ("id_predictions", "Predictions file: preds.jsonl: line 3: expected a JSON object, got list"),
    ]
    assert "id_predictions" in page.ids


def test_a_refused_public_card_lists_every_missing_field_as_a_link_to_it(logged_in):
    response = logged_in.post(URL, form(b"{}", weights="", approach="", is_public="on"))
    page = FormPage(response.content.decode())
    assert page.summary_before_fields
    linked = [target for target, _text in page.summary_links]
    assert linked == [
        f"id_{name}" for name in page.fields if name in PUBLIC_REQUIRED and name != "temperature"
    ]
    assert set(linked) <= page.ids
    assert (
        "id_weights",
        "Weights: A public submission must say whether the weights are open or closed.",
    ) in (page.summary_links)


def test_an_accepted_form_has_no_error_summary(logged_in):
    assert FormPage(logged_in.get(URL).content.decode()).summary is None


def test_the_file_is_the_first_field_of_the_upload_form(logged_in):
    assert FormPage(logged_in.get(URL).content.decode()).fields[0] == "predictions"


def test_every_field_a_public_submission_requires_is_marked_so_in_words(logged_in):
    page = FormPage(logged_in.get(URL).content.decode())
    assert sorted(page.public_required) == sorted(f"id_{name}" for name in PUBLIC_REQUIRED)
    assert "required if public" in logged_in.get(URL).content.decode()


def test_a_file_over_the_size_cap_is_refused(logged_in, settings):
    settings.TERMITE_MAX_UPLOAD_BYTES = 1024
    response = logged_in.post(URL, form(b"x" * 2000))
    assert response.status_code == 400
    assert "the file is larger than 1 KB" in response.content.decode()


def test_the_model_name_is_required(logged_in):
    response = logged_in.post(
        URL, form(b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}', model_name="")
    )
    assert response.status_code == 400
    assert "model_name" in response.context["form"].errors


def test_the_daily_quota_refuses_the_sixth_upload(logged_in, owner, make_submission, settings):
    settings.TERMITE_DAILY_QUOTA = 5
    for _ in range(5):
        make_submission(status="scored")
    response = logged_in.post(URL, form(b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}'))
    assert response.status_code == 429
    assert "You have used your 5 submissions of the last 24 hours" in response.content.decode()
    assert Submission.objects.count() == 5


def test_failed_submissions_do_not_use_up_the_quota_but_withdrawn_ones_do(
    owner, demo_version, make_submission, settings
):
    from django.utils import timezone

    from leaderboard.selectors import quota_for

    make_submission(status="failed")
    make_submission(status="scored", withdrawn_at=timezone.now())
    quota = quota_for(user=owner, version=demo_version)
    assert (quota.used_today, quota.used_for_version, quota.left_today) == (1, 1, 4)


def test_the_version_quota_counts_older_submissions_too(logged_in, owner, make_submission, settings):
    from datetime import timedelta

    from django.utils import timezone

    settings.TERMITE_VERSION_QUOTA = 2
    for days in (3, 4):
        make_submission(status="scored", created_at=timezone.now() - timedelta(days=days))
    response = logged_in.post(URL, form(b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}'))
    assert response.status_code == 429
    assert "all 2 submissions allowed for Termite demo demo-1.0" in response.content.decode()


def test_staff_can_raise_a_users_quota(
    logged_in, owner, make_submission, in_process, settings, django_capture_on_commit_callbacks
):
    settings.TERMITE_DAILY_QUOTA = 1
    make_submission(status="scored")
    SubmissionQuota.objects.create(user=owner, per_day=3, per_version=10)
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(URL, form(b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}'))
    assert response.status_code == 302
    assert Submission.objects.count() == 2


def test_uploads_are_rate_limited(logged_in, settings):
    settings.TERMITE_UPLOAD_RATE_LIMIT = (1, 3600)
    logged_in.post(URL, form(b"{bad"))
    response = logged_in.post(URL, form(b"{bad"))
    assert response.status_code == 429


def test_the_authors_zip_layout_is_accepted(
    logged_in, owner, gold, in_process, django_capture_on_commit_callbacks
):
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        lines = [
            f"{' '.join(sql.split())}\tciclismo"
            for qid, sql in sorted(gold.items())
            if qid.startswith("ciclismo")
        ]
        archive.writestr("ciclismo/predict.txt", "\n".join(lines))
    with django_capture_on_commit_callbacks(execute=True):
        logged_in.post(URL, form(buffer.getvalue(), name="run.zip"))
    submission = Submission.objects.get(user=owner)
    submission.refresh_from_db()
    assert submission.file_format == "authors-zip"
    assert submission.scores["per_database"]["ciclismo"]["ea"] == 1.0
