"""The JSON API: token auth, consistent error bodies, the status codes the README documents."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluation.services import version_create_draft
from leaderboard.models import Submission
from termite_site.accounts.services import api_token_create
from tests.demo import PUBLIC_CARD, predictions_jsonl
from tests.leaderboard.scored import scored_fields
from tests.processes import embedded_env, manage, serve

pytestmark = pytest.mark.django_db

SUBMISSIONS = reverse("api:submissions")


@pytest.fixture
def token(owner, demo_version):
    return api_token_create(user=owner, name="tests")[1]


def auth(token: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def upload(client, token, data: bytes, **fields):
    body = {"model_name": "Modello API", "predictions": SimpleUploadedFile("p.jsonl", data), **fields}
    return client.post(SUBMISSIONS, body, **auth(token))


def assert_error(response, status: int, code: str):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and isinstance(body["error"]["details"], list)
    return body["error"]


def test_posting_predictions_returns_201_with_receipt_and_status_url(
    client, token, gold, in_process, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, token, predictions_jsonl(gold), public="true", **PUBLIC_CARD)
    assert response.status_code == 201
    body = response.json()
    submission = Submission.objects.get(pk=body["id"])
    assert response["Location"] == reverse("api:submission_detail", args=[submission.pk])
    assert body["receipt"]["file_sha256"] == submission.file_sha256
    assert body["receipt"]["benchmark_version"] == "demo-1.0"
    assert body["status_url"].endswith(f"/api/v1/submissions/{submission.pk}")
    assert submission.is_public


def test_the_status_carries_the_same_scores_as_the_score_command(
    client, token, gold, in_process, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        created = upload(client, token, predictions_jsonl(gold)).json()
    body = client.get(reverse("api:submission_detail", args=[created["id"]]), **auth(token)).json()
    assert body["status"] == "scored" and body["error"] is None
    assert set(body["scores"]) == {
        "version",
        "scorer_version",
        "overall",
        "per_database",
        "per_hardness",
        "outcomes",
    }
    assert body["scores"]["overall"]["ea"] == 1.0


def test_the_scores_carry_ts_ea_overall_and_in_every_group_once_scored(
    client, token, gold, in_process, django_capture_on_commit_callbacks
):
    predictions = {**gold, "biblioteca-001": "SELECT 42"}
    with django_capture_on_commit_callbacks(execute=True):
        created = upload(client, token, predictions_jsonl(predictions), public="true", **PUBLIC_CARD).json()
    scores = client.get(reverse("api:submission_detail", args=[created["id"]]), **auth(token)).json()[
        "scores"
    ]
    overall = scores["overall"]
    # The demo benchmark has no test suites, so TS-EA is EA there, and its interval EA's.
    assert overall["ts_questions"] == 0
    assert overall["ts_ea"] == overall["ea"] == pytest.approx(22 / 23)
    assert overall["ts_ea_ci95"] == overall["ea_ci95"]
    assert scores["per_database"]["biblioteca"]["ts_ea"] == pytest.approx(11 / 12)
    assert all("ts_ea" in group for group in scores["per_hardness"].values())


def test_the_leaderboard_api_carries_ts_ea_and_null_where_it_is_unknown(client, make_submission):
    make_submission(model_name="Nuovo", **scored_fields(20, ts=16))
    make_submission(model_name="Vecchio", **scored_fields(15))
    rows = {row["model_name"]: row for row in client.get(reverse("api:leaderboard")).json()["rows"]}
    assert rows["Nuovo"]["ts_ea"] == pytest.approx(16 / 23) and len(rows["Nuovo"]["ts_ea_ci95"]) == 2
    assert rows["Vecchio"]["ts_ea"] is None and rows["Vecchio"]["ts_ea_ci95"] is None


def test_a_queued_submission_has_no_scores_yet(client, token, make_submission):
    submission = make_submission()
    body = client.get(reverse("api:submission_detail", args=[submission.pk]), **auth(token)).json()
    assert (body["status"], body["scores"], body["error"]) == ("queued", None, None)


def test_the_list_holds_only_the_callers_submissions(client, token, make_submission, other_user):
    mine = make_submission()
    make_submission(user=other_user)
    body = client.get(SUBMISSIONS, **auth(token)).json()
    assert [s["id"] for s in body["submissions"]] == [mine.pk]


def test_validation_errors_are_400_with_the_same_line_messages_as_the_form(client, token):
    error = assert_error(
        upload(client, token, b'{"question_id": "biblioteca-001"}\n{bad'), 400, "invalid_predictions"
    )
    assert error["details"] == [
        "p.jsonl: line 1: field 'sql' is missing",
        "p.jsonl: line 2: not a JSON object (Expecting property name enclosed in double quotes at column 2)",
    ]
    assert not Submission.objects.exists()


def test_a_missing_model_name_or_file_is_400(client, token):
    error = assert_error(client.post(SUBMISSIONS, {"model_name": "x"}, **auth(token)), 400, "invalid")
    assert any(detail.startswith("predictions:") for detail in error["details"])
    error = assert_error(
        upload(client, token, b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}', model_name=""),
        400,
        "invalid",
    )
    assert any(detail.startswith("model_name:") for detail in error["details"])


@pytest.mark.parametrize("header", [None, "Bearer", "Basic dXNlcjpwYXNz", "Bearer tmt_unknown"])
def test_without_a_valid_token_it_is_401(client, demo_version, header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.get(SUBMISSIONS, **extra)
    assert_error(
        response,
        401,
        "unauthenticated" if header in (None, "Bearer", "Basic dXNlcjpwYXNz") else "invalid_token",
    )
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_revoked_token_is_refused(client, owner, demo_version):
    token_row, raw = api_token_create(user=owner, name="old")
    token_row.revoke()
    assert_error(
        upload(client, raw, b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}'), 401, "invalid_token"
    )
    assert not Submission.objects.exists()


def test_the_session_does_not_authenticate_the_api(client, owner, demo_version):
    client.force_login(owner)
    assert_error(client.get(SUBMISSIONS), 401, "unauthenticated")


def test_a_draft_version_takes_no_submissions_403(client, token, demo_version):
    version_create_draft(label="bozza", name="Termite", derived_from=demo_version)
    assert_error(
        upload(client, token, b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}', version="bozza"),
        403,
        "version_closed",
    )


def test_an_unknown_version_is_400(client, token):
    error = assert_error(
        upload(client, token, b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}', version="9.9"),
        400,
        "invalid",
    )
    assert error["details"] == ["version: no version '9.9'"]


def test_other_users_private_submissions_are_404(client, token, make_submission, other_user):
    theirs = make_submission(user=other_user, is_public=False, status="scored", scores={"overall": {}})
    assert_error(
        client.get(reverse("api:submission_detail", args=[theirs.pk]), **auth(token)), 404, "not_found"
    )
    assert_error(client.get(reverse("api:submission_detail", args=[999999]), **auth(token)), 404, "not_found")


def test_another_users_public_submission_shows_without_its_receipt(
    client, token, make_submission, other_user
):
    theirs = make_submission(user=other_user, **scored_fields(12))
    body = client.get(reverse("api:submission_detail", args=[theirs.pk]), **auth(token)).json()
    assert body["receipt"] is None and body["scores"] == theirs.scores


def test_a_public_result_is_cited_in_the_api_as_on_its_page(client, token, make_submission, other_user):
    theirs = make_submission(user=other_user, model_name="R&D_bot #2", **scored_fields(12))
    body = client.get(reverse("api:submission_detail", args=[theirs.pk]), **auth(token)).json()
    on_the_page = client.get(theirs.get_absolute_url()).context["citation"]
    assert body["citation"] == json.loads(json.dumps(on_the_page))
    assert body["citation"]["permalink"] == body["results_url"]
    assert body["citation"]["rank"] == 1 and body["citation"]["file_sha256"] == theirs.file_sha256


def test_a_private_result_is_not_cited_in_the_api_even_to_its_owner(client, token, make_submission):
    mine = make_submission(**{**scored_fields(12), "is_public": False})
    body = client.get(reverse("api:submission_detail", args=[mine.pk]), **auth(token)).json()
    assert body["scores"] is not None and body["citation"] is None


def test_an_oversized_upload_is_413(client, token, settings):
    settings.TERMITE_MAX_UPLOAD_BYTES = 1024
    assert_error(upload(client, token, b"x" * 200_000), 413, "too_large")


def test_the_quota_is_429(client, token, make_submission, settings):
    settings.TERMITE_DAILY_QUOTA = 1
    make_submission(status="scored")
    assert_error(
        upload(client, token, b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}'), 429, "quota_exceeded"
    )


def test_the_upload_rate_limit_is_429(client, token, settings):
    settings.TERMITE_UPLOAD_RATE_LIMIT = (1, 3600)
    upload(client, token, b"{bad")
    assert_error(upload(client, token, b"{bad"), 429, "rate_limited")


def test_wrong_methods_are_405(client, token, make_submission):
    assert_error(client.delete(SUBMISSIONS, **auth(token)), 405, "method_not_allowed")
    assert (
        client.post(reverse("api:submission_detail", args=[make_submission().pk]), **auth(token)).status_code
        == 405
    )


def test_the_openapi_description_lists_every_endpoint_and_status(client):
    document = client.get(reverse("api:openapi")).json()
    assert document["openapi"].startswith("3.1")
    post = document["paths"]["/api/v1/submissions"]["post"]
    assert set(post["responses"]) == {"201", "400", "401", "403", "413", "429"}
    assert "/api/v1/submissions/{id}" in document["paths"]


# Run in the embedded portal by `manage.py shell`: the demo benchmark, a participant, and their API token.
# The demo as a sealed version: a practice version has no quota to keep.
EMBEDDED_SETUP = """
from evaluation.services import demo_benchmark_load
from termite_site.accounts.models import User
from termite_site.accounts.services import api_token_create

demo_benchmark_load(kind="sealed")
print(api_token_create(user=User.objects.create_user("ada", "ada@example.org", "x"), name="t")[1])
"""


@pytest.fixture
def embedded_portal(tmp_path):
    """gunicorn in the embedded mode: one SQLite file written by every worker, and scoring in its threads.
    Four workers of five threads, so that twenty uploads are all handled at once. Its URL and the
    participant's token."""
    env = embedded_env(tmp_path)
    manage(env, "migrate", "--noinput")
    token = manage(env, "shell", "-c", EMBEDDED_SETUP).stdout.split()[-1]
    with serve(env, log=tmp_path / "gunicorn.log", workers=4, threads=5) as url:
        yield url, token


def api_call(url: str, token: str, *, body: bytes | None = None, content_type: str = "") -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}", **({"Content-Type": content_type} if body else {})}
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as refused:
        is_json = refused.headers.get_content_type() == "application/json"
        return refused.code, json.load(refused) if is_json else {"error": {"code": refused.read()[:200]}}


def multipart(fields: dict[str, str], *, file_field: str, file_name: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{file_name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode()
        + data
        + b"\r\n"
    )
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


@pytest.mark.processes
def test_concurrent_uploads_on_the_embedded_sqlite_wait_their_turn_and_keep_the_quota(embedded_portal, gold):
    url, token = embedded_portal
    body, content_type = multipart(
        {"model_name": "Modello concorrente"},
        file_field="predictions",
        file_name="p.jsonl",
        data=predictions_jsonl(gold),
    )

    def upload_once(_number: int) -> tuple[int, str]:
        status, answer = api_call(f"{url}/api/v1/submissions", token, body=body, content_type=content_type)
        return status, answer["error"]["code"] if status >= 400 else ""

    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(upload_once, range(20)))
    quota = 5  # TERMITE_DAILY_QUOTA's default
    assert sorted(answers) == [(201, "")] * quota + [(429, "quota_exceeded")] * (20 - quota)
    status, listed = api_call(f"{url}/api/v1/submissions", token)
    assert status == 200 and len(listed["submissions"]) == quota
