"""The run pages: who may open what (anonymous, stranger, owner, staff, wrong method), the form, the key
at rest and its deletion, the transcript and its sha256."""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection
from django.urls import reverse

from leaderboard.jobs import run_protocol
from leaderboard.model_card import PUBLIC_REQUIRED, RUN_SAYS
from leaderboard.models import ProtocolRun
from tests.demo import PUBLIC_CARD
from tests.form_page import FormPage
from tests.leaderboard.protocol_runs import good_model, start_run
from tests.openai_stub import OpenAIStub

pytestmark = pytest.mark.usefixtures("in_process", "loopback_allowed", "no_waiting")

KEY = "sk-test-secret-key-123"


@pytest.fixture
def run(demo_version, owner):
    """A queued run of the owner's (never executed: the endpoint is not called)."""
    return start_run(owner, demo_version, OpenAIStub(lambda request: None))


@pytest.fixture
def finished_run(demo_version, owner, django_capture_on_commit_callbacks):
    with OpenAIStub(good_model(demo_version)) as stub:
        made = start_run(owner, demo_version, stub, delete_key_when_done=False)
        with django_capture_on_commit_callbacks(execute=True):
            run_protocol(made.pk)
    made.refresh_from_db()
    return made


def urls(run: ProtocolRun) -> dict[str, str]:
    return {
        name: reverse(f"leaderboard:{name}", args=[run.pk])
        for name in (
            "run_detail",
            "run_transcript",
            "run_cancel",
            "run_delete_key",
            "run_delete",
            "run_submit",
        )
    }


GETS = ("run_detail", "run_transcript")
POSTS = ("run_cancel", "run_delete_key", "run_delete", "run_submit")


def test_anonymous_visitors_are_sent_to_log_in_everywhere(client, run):
    for name, url in {
        **urls(run),
        "run_list": reverse("leaderboard:run_list"),
        "run_new": reverse("leaderboard:run_new"),
    }.items():
        response = client.post(url) if name in POSTS else client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], name


def test_a_stranger_gets_404_for_every_page_and_action_of_someone_elses_run(client, run, other_user):
    client.force_login(other_user)
    for name, url in urls(run).items():
        response = client.post(url) if name in POSTS else client.get(url)
        assert response.status_code == 404, name
    assert ProtocolRun.objects.get(pk=run.pk).status == "queued"
    assert str(run.pk) not in client.get(reverse("leaderboard:run_list")).content.decode().split("<tbody>")[1]


def test_wrong_methods_are_405(client, run, owner):
    client.force_login(owner)
    for name, url in urls(run).items():
        response = client.get(url) if name in POSTS else client.post(url)
        assert response.status_code == 405, name


def test_the_owner_sees_the_progress_refreshing_itself_and_staff_see_every_run(client, run, owner, staff):
    client.force_login(owner)
    page = client.get(run.get_absolute_url())
    html = page.content.decode()
    assert page.status_code == 200 and '<meta name="robots" content="noindex, nofollow">' in html
    assert '<meta http-equiv="refresh" content="3">' in html and '<progress id="progress"' in html
    assert KEY not in html
    client.force_login(staff)
    assert client.get(run.get_absolute_url()).status_code == 200
    assert f'href="/runs/{run.pk}/"' in client.get(reverse("leaderboard:run_list")).content.decode()


def test_the_api_key_is_encrypted_at_rest(run):
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM leaderboard_protocolrun WHERE id = %s", [run.pk])
        row = cursor.fetchone()
    assert run.api_key_encrypted and not any(KEY in str(value) for value in row)


def test_the_owner_deletes_the_key_then_the_run(client, run, owner):
    client.force_login(owner)
    assert client.post(urls(run)["run_delete_key"]).status_code == 302
    run.refresh_from_db()
    assert run.api_key_encrypted == "" and not run.has_key
    assert client.post(urls(run)["run_delete"]).status_code == 302
    assert not ProtocolRun.objects.filter(pk=run.pk).exists()


def test_the_owner_cancels_a_queued_run(client, run, owner):
    client.force_login(owner)
    client.post(urls(run)["run_cancel"])
    run.refresh_from_db()
    assert run.status == "cancelled" and run.api_key_encrypted == ""


def test_the_finished_run_links_its_submission_and_its_transcript_matches_the_sha256(
    client, finished_run, owner, staff
):
    submission = finished_run.submission
    client.force_login(owner)
    html = client.get(finished_run.get_absolute_url()).content.decode()
    assert 'http-equiv="refresh"' not in html and f'href="/submissions/{submission.pk}/"' in html
    for viewer in (owner, staff):
        client.force_login(viewer)
        response = client.get(urls(finished_run)["run_transcript"])
        body = b"".join(response.streaming_content)
        assert response.status_code == 200 and body.count(b"\n") == 25
        assert hashlib.sha256(body).hexdigest() == submission.transcript_sha256
        assert KEY.encode() not in body


def test_the_run_form_starts_a_run(client, owner, demo_version):
    client.force_login(owner)
    form = {
        "endpoint_url": "http://127.0.0.1:9/v1/chat/completions",
        "api_key": KEY,
        "delete_key_when_done": "on",
        "model": "stub-model",
        "protocol": "termite-1turn-it/1",
        "temperature": "0",
        "max_requests": "100",
        "max_seconds": "600",
        "concurrency": "2",
        "model_name": "Modello dal modulo",
        **{k: v for k, v in PUBLIC_CARD.items() if k in ("model_size", "weights", "training_cutoff")},
        "is_public": "on",
    }
    response = client.post(reverse("leaderboard:run_new"), form)
    run = ProtocolRun.objects.get()
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    assert (run.protocol, run.temperature, run.model_card["is_public"]) == ("termite-1turn-it/1", 0.0, True)
    assert run.model_card["model_name"] == "Modello dal modulo" and run.delete_key_when_done


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"endpoint_url": "ftp://example.org/v1"}, "endpoint_url", "must start with https://"),
        (
            {"endpoint_url": "https://u:p@example.org/v1"},
            "endpoint_url",
            "must not hold a user name or a password",
        ),
        ({"concurrency": "99"}, "concurrency", "less than or equal to"),
        ({"max_requests": "0"}, "max_requests", "greater than or equal to 1"),
        ({"protocol": "nope/1"}, "protocol", "Select a valid choice"),
        ({"is_public": "on"}, "model_size", "A public submission must give the model size"),
    ],
)
def test_the_run_form_refuses_bad_input_field_by_field(client, owner, demo_version, change, field, message):
    client.force_login(owner)
    form = {
        "endpoint_url": "http://127.0.0.1:9/v1",
        "model": "m",
        "protocol": "termite-2turn-it/1",
        "temperature": "1",
        "max_requests": "10",
        "max_seconds": "60",
        "concurrency": "1",
        "model_name": "M",
        **change,
    }
    response = client.post(reverse("leaderboard:run_new"), form)
    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert not ProtocolRun.objects.exists()


def test_the_run_form_marks_what_a_public_run_must_still_say_and_not_what_the_run_says(
    client, owner, demo_version
):
    client.force_login(owner)
    page = FormPage(client.get(reverse("leaderboard:run_new")).content.decode())
    assert page.public_required == [f"id_{name}" for name in PUBLIC_REQUIRED if name not in RUN_SAYS]


def test_a_refused_run_form_opens_on_a_summary_linking_each_error_to_its_field(client, owner, demo_version):
    client.force_login(owner)
    form = {"endpoint_url": "ftp://example.org/v1", "model": "m", "protocol": "termite-2turn-it/1"}
    page = FormPage(client.post(reverse("leaderboard:run_new"), form).content.decode())
    assert page.summary is not None and page.summary_before_fields
    linked = [target for target, _text in page.summary_links]
    assert linked[0] == "id_endpoint_url" and "id_model_name" in linked
    assert set(linked) <= page.ids
