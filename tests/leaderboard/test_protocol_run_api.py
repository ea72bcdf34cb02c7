"""The runs API: token only; the owner's and staff's runs; progress fields; cancel, submit, delete."""

from __future__ import annotations

import pytest
from django.urls import reverse

from leaderboard.models import ProtocolRun
from termite_site.accounts.services import api_token_create
from tests.leaderboard.protocol_runs import start_run
from tests.openai_stub import OpenAIStub

pytestmark = pytest.mark.usefixtures("loopback_allowed")

RUNS = reverse("api:runs")


def auth(user) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {api_token_create(user=user, name='tests')[1]}"}


@pytest.fixture
def run(demo_version, owner):
    return start_run(owner, demo_version, OpenAIStub(lambda request: None))


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    return response.json()["error"]


def test_posting_a_run_returns_201_with_its_progress_and_never_the_key(client, owner, demo_version):
    body = {
        "endpoint_url": "http://127.0.0.1:9/v1/chat/completions",
        "api_key": "sk-api-secret",
        "model": "stub-model",
        "model_name": "Modello API",
        "version": "demo-1.0",
        "temperature": 0,
        "max_requests": 50,
        "max_seconds": 600,
        "concurrency": 1,
    }
    response = client.post(RUNS, body, content_type="application/json", **auth(owner))
    assert response.status_code == 201, response.content
    data = response.json()
    run = ProtocolRun.objects.get()
    assert response["Location"] == reverse("api:run_detail", args=[run.pk])
    assert data["status"] == "queued" and data["protocol"] == "termite-2turn-it/1" and data["has_key"]
    assert data["progress"] == {
        "steps_done": 0,
        "steps_total": 0,
        "percent": 0,
        "requests": 0,
        "errors": 0,
        "tokens": 0,
        "seconds": 0,
    }
    assert data["endpoint_host"] == "127.0.0.1" and "sk-api-secret" not in response.content.decode()
    assert run.delete_key_when_done  # by default


@pytest.mark.parametrize(
    ("body", "status", "code", "detail"),
    [
        ("not json", 400, "invalid", "body: send a JSON object"),
        ({"model": "m", "model_name": "M"}, 400, "invalid", "endpoint_url: This field is required."),
        (
            {"endpoint_url": "https://10.0.0.1@x/v1", "model": "m", "model_name": "M"},
            400,
            "invalid",
            "endpoint_url: ",
        ),
        (
            {"endpoint_url": "http://127.0.0.1:9/v1", "model": "m", "model_name": "M", "version": "9.9"},
            400,
            "invalid",
            "version: no version '9.9'",
        ),
    ],
)
def test_bad_runs_are_refused_with_every_problem(client, owner, demo_version, body, status, code, detail):
    kwargs = {"data": body, "content_type": "application/json"}
    error = assert_error(client.post(RUNS, **kwargs, **auth(owner)), status, code)
    assert any(line.startswith(detail) for line in error["details"]), error
    assert not ProtocolRun.objects.exists()


def test_without_a_token_it_is_401_and_the_session_does_not_count(client, run, owner):
    client.force_login(owner)
    for url in (RUNS, reverse("api:run_detail", args=[run.pk])):
        assert_error(client.get(url), 401, "unauthenticated")
    assert_error(client.post(reverse("api:run_cancel", args=[run.pk])), 401, "unauthenticated")


def test_a_strangers_run_is_404_and_staff_see_it(client, run, other_user, staff):
    for url in ("api:run_detail", "api:run_cancel", "api:run_submit"):
        method = client.get if url == "api:run_detail" else client.post
        assert_error(method(reverse(url, args=[run.pk]), **auth(other_user)), 404, "not_found")
    assert_error(
        client.delete(reverse("api:run_detail", args=[run.pk]), **auth(other_user)), 404, "not_found"
    )
    assert client.get(RUNS, **auth(other_user)).json() == {"runs": []}
    assert client.get(reverse("api:run_detail", args=[run.pk]), **auth(staff)).json()["id"] == run.pk


def test_the_owner_follows_cancels_and_deletes_a_run(client, run, owner):
    headers = auth(owner)
    assert [r["id"] for r in client.get(RUNS, **headers).json()["runs"]] == [run.pk]
    cancelled = client.post(reverse("api:run_cancel", args=[run.pk]), **headers)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert_error(client.post(reverse("api:run_cancel", args=[run.pk]), **headers), 409, "not_active")
    refused = assert_error(
        client.post(reverse("api:run_submit", args=[run.pk]), **headers), 409, "not_submitted"
    )
    assert "nothing to submit" in refused["message"]
    deleted = client.delete(reverse("api:run_detail", args=[run.pk]), **headers)
    assert deleted.json() == {"id": run.pk, "deleted": True} and not ProtocolRun.objects.exists()


def test_wrong_methods_are_405(client, run, owner):
    headers = auth(owner)
    assert_error(client.put(RUNS, **headers), 405, "method_not_allowed")
    assert_error(client.post(reverse("api:run_detail", args=[run.pk]), **headers), 405, "method_not_allowed")
    assert_error(client.get(reverse("api:run_cancel", args=[run.pk]), **headers), 405, "method_not_allowed")
    assert_error(client.get(reverse("api:run_submit", args=[run.pk]), **headers), 405, "method_not_allowed")
