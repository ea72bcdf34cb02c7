"""Until an account that signed up confirms its e-mail address it gets none of the task: no task bundle, no
questions or schemas, no errata and no protocol runs, on the web or through the API
(termite_site/decorators.py). The web says why and mails a new link; the API answers 403
`email_unconfirmed`. Staff never need to confirm. Uploads: tests/leaderboard/test_upload_email_confirmation.py.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass

import pytest
from django.urls import reverse

from evaluation.models import Erratum
from leaderboard.models import ProtocolRun, RunExchange
from termite_site.accounts.services import api_token_create
from tests.factories import run_make

pytestmark = pytest.mark.django_db

ERRATUM = {"question_id": "biblioteca-001", "description": "La risposta attesa ignora i prestiti scaduti."}
RUN = {
    "endpoint_url": "https://model.example.org/v1/chat/completions",
    "api_key": "sk-test-secret-key-123",
    "model": "stub-model",
    "model_name": "Modello in attesa",
    "protocol": "termite-2turn-it/1",
    "temperature": 0,
    "max_requests": 50,
    "max_seconds": 600,
    "concurrency": 1,
}


@dataclass(frozen=True)
class Door:
    method: str
    url: str
    data: dict | None = None


@pytest.fixture
def unconfirmed(owner, demo_version):
    """The owner, as if self-registered and not yet confirmed."""
    owner.email_confirmed_at = None
    owner.save()
    return owner


@pytest.fixture
def staff_unconfirmed(staff):
    staff.email_confirmed_at = None
    staff.save()
    return staff


def run_of(user, version) -> ProtocolRun:
    """A finished run whose transcript asks a question of the demo."""
    run = run_make(user=user, version=version)
    question = version.questions.get(public_id="biblioteca-001")
    RunExchange.objects.create(
        run=run, database="biblioteca", question_id=question.public_id, kind="question", attempt=1,
        request=[{"role": "user", "content": question.text}], answer="", ok=False,
    )  # fmt: skip
    return run


def web_door(name: str, version, run: ProtocolRun) -> Door:
    return {
        "the task bundle": Door("get", reverse("evaluation:task_bundle", args=[version.label])),
        "a database's questions and schema": Door(
            "get", reverse("evaluation:database_detail", args=[version.label, "biblioteca"])
        ),
        "the erratum form": Door("get", reverse("errata:new") + f"?version={version.label}"),
        "filing an erratum": Door("post", reverse("errata:new"), {"version": version.label, **ERRATUM}),
        "the run form": Door("get", reverse("leaderboard:run_new")),
        "starting a run": Door("post", reverse("leaderboard:run_new"), RUN),
        "a run's transcript": Door("get", reverse("leaderboard:run_transcript", args=[run.pk])),
        "submitting a run": Door("post", reverse("leaderboard:run_submit", args=[run.pk])),
    }[name]


WEB_DOORS = [
    "the task bundle",
    "a database's questions and schema",
    "the erratum form",
    "filing an erratum",
    "the run form",
    "starting a run",
    "a run's transcript",
    "submitting a run",
]


def knock(client, door: Door):
    return getattr(client, door.method)(door.url, door.data or {})


def question_texts(version) -> list[str]:
    return list(version.questions.values_list("text", flat=True))


@pytest.mark.parametrize("name", WEB_DOORS)
def test_an_unconfirmed_account_gets_the_page_that_says_why_at_every_door(
    client, unconfirmed, demo_version, name
):
    door = web_door(name, demo_version, run_of(unconfirmed, demo_version))
    client.force_login(unconfirmed)
    response = knock(client, door)
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    body = html.unescape(response.content.decode())
    assert 'id="why-confirm"' in body and 'id="email-confirmation"' in body
    assert "ada@example.org" in body  # where the link went
    assert f'action="{reverse("accounts:email_confirmation_resend")}"' in body
    # A page comes back to itself once the new link is mailed; a form's POST comes back to the profile.
    assert (f'name="next" value="{door.url}"' in body) == (door.method == "get")
    assert not any(text in body for text in question_texts(demo_version))


def test_an_unconfirmed_account_files_no_erratum_and_starts_or_submits_no_run(
    client, unconfirmed, demo_version
):
    run = run_of(unconfirmed, demo_version)
    client.force_login(unconfirmed)
    for name in ("filing an erratum", "starting a run", "submitting a run"):
        knock(client, web_door(name, demo_version, run))
    assert not Erratum.objects.exists()
    assert list(ProtocolRun.objects.all()) == [run]
    run.refresh_from_db()
    assert run.submission is None and run.message == ""


def test_the_page_mails_a_new_link_and_comes_back_to_the_door(client, unconfirmed, demo_version, mailoutbox):
    bundle = reverse("evaluation:task_bundle", args=[demo_version.label])
    client.force_login(unconfirmed)
    response = client.post(reverse("accounts:email_confirmation_resend"), {"next": bundle}, follow=True)
    assert response.redirect_chain == [(bundle, 302)]
    assert response.status_code == 403 and "A new link is on its way to ada@example.org." in html.unescape(
        response.content.decode()
    )
    assert [message.to for message in mailoutbox] == [["ada@example.org"]]


def test_the_page_sends_new_links_only_as_often_as_the_profile_does(
    client, unconfirmed, settings, mailoutbox
):
    settings.TERMITE_CONFIRM_MAIL_RATE_LIMIT = (1, 3600)
    client.force_login(unconfirmed)
    resend = reverse("accounts:email_confirmation_resend")
    assert client.post(resend, {"next": reverse("leaderboard:run_new")}).status_code == 302
    assert client.post(resend, {"next": reverse("leaderboard:run_new")}).status_code == 429
    assert len(mailoutbox) == 1


def test_once_confirmed_the_doors_open(client, unconfirmed, demo_version):
    unconfirmed.confirm_email(email=unconfirmed.email)
    client.force_login(unconfirmed)
    bundle = client.get(reverse("evaluation:task_bundle", args=[demo_version.label]))
    assert bundle.status_code == 200 and bundle["Content-Type"] == "application/zip"


@pytest.mark.parametrize("who", ["owner", "staff_unconfirmed"])
@pytest.mark.parametrize("name", WEB_DOORS)
def test_a_confirmed_account_and_staff_pass_every_door(request, client, demo_version, who, name):
    user = request.getfixturevalue(who)
    door = web_door(name, demo_version, run_of(user, demo_version))
    client.force_login(user)
    response = knock(client, door)
    # Through the door: what each answers then is its own business (a run started, a run that holds no SQL
    # to submit), never the confirmation page nor the login.
    assert response.status_code in (200, 302), response.status_code
    assert not response.get("Location", "").startswith(reverse("accounts:login"))
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert b'id="why-confirm"' not in body


def test_the_questions_show_once_the_door_is_passed(client, owner, demo_version):
    client.force_login(owner)
    page = client.get(reverse("evaluation:database_detail", args=[demo_version.label, "biblioteca"]))
    shown = html.unescape(page.content.decode())
    assert [text for text in question_texts(demo_version) if text in shown]


@pytest.mark.parametrize("name", WEB_DOORS)
def test_anonymous_visitors_are_sent_to_log_in(client, owner, demo_version, name):
    door = web_door(name, demo_version, run_of(owner, demo_version))
    response = knock(client, door)
    assert response.status_code == 302 and response["Location"].startswith(reverse("accounts:login"))


def test_what_an_account_made_before_stays_its_own_to_read_cancel_and_delete(
    client, unconfirmed, demo_version
):
    # An account that changes its address becomes unconfirmed: it keeps its lists, and may still delete
    # its stored key or the whole run, only not read the questions in a transcript.
    run = run_of(unconfirmed, demo_version)
    client.force_login(unconfirmed)
    for url in (reverse("errata:mine"), reverse("leaderboard:run_list"), run.get_absolute_url()):
        assert client.get(url).status_code == 200, url
    assert client.post(reverse("leaderboard:run_delete_key", args=[run.pk])).status_code == 302
    assert client.post(reverse("leaderboard:run_delete", args=[run.pk])).status_code == 302
    assert not ProtocolRun.objects.filter(pk=run.pk).exists()


# The API.


def api_door(name: str, version, run: ProtocolRun) -> Door:
    return {
        "reporting an erratum": Door("post", reverse("api:errata"), ERRATUM),
        "starting a run": Door("post", reverse("api:runs"), {"version": version.label, **RUN}),
        "submitting a run": Door("post", reverse("api:run_submit", args=[run.pk])),
    }[name]


API_DOORS = ["reporting an erratum", "starting a run", "submitting a run"]


def call(client, user, door: Door):
    raw = api_token_create(user=user, name="tests")[1]
    return client.post(
        door.url,
        json.dumps(door.data or {}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )


@pytest.mark.parametrize("name", API_DOORS)
def test_the_api_refuses_an_unconfirmed_account_with_403_email_unconfirmed(
    client, unconfirmed, demo_version, name
):
    run = run_of(unconfirmed, demo_version)
    response = call(client, unconfirmed, api_door(name, demo_version, run))
    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert error["code"] == "email_unconfirmed" and error["details"] == []
    assert "open the link we sent to ada@example.org" in error["message"]
    assert not Erratum.objects.exists()
    assert list(ProtocolRun.objects.all()) == [run] and run.submission is None


@pytest.mark.parametrize("who", ["owner", "staff_unconfirmed"])
@pytest.mark.parametrize(("name", "status"), [("reporting an erratum", 201), ("submitting a run", 409)])
def test_the_api_lets_a_confirmed_account_and_staff_through(request, client, demo_version, who, name, status):
    user = request.getfixturevalue(who)
    response = call(client, user, api_door(name, demo_version, run_of(user, demo_version)))
    assert response.status_code == status, response.content  # 409: the run holds no SQL to submit


@pytest.mark.parametrize("who", ["owner", "staff_unconfirmed"])
def test_the_api_takes_the_run_of_a_confirmed_account_or_staff_to_its_checks(
    request, client, demo_version, who
):
    # A URL the portal refuses, so that nothing is started: the refusal is the run's, not the account's.
    body = {**RUN, "version": demo_version.label, "endpoint_url": "ftp://model.example.org/v1"}
    response = call(client, request.getfixturevalue(who), Door("post", reverse("api:runs"), body))
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"


def test_the_api_still_lists_an_unconfirmed_account_s_own_errata_and_runs(client, unconfirmed, demo_version):
    run = run_of(unconfirmed, demo_version)
    raw = api_token_create(user=unconfirmed, name="tests")[1]
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    assert client.get(reverse("api:errata"), **auth).json() == {"errata": []}
    assert [listed["id"] for listed in client.get(reverse("api:runs"), **auth).json()["runs"]] == [run.pk]


def test_the_openapi_document_names_the_refusal(client):
    paths = client.get(reverse("api:openapi")).json()["paths"]
    for path in ("/api/v1/errata", "/api/v1/runs", "/api/v1/runs/{id}/submit"):
        assert "`email_unconfirmed`" in paths[path]["post"]["responses"]["403"]["description"], path
