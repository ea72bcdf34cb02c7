"""The errata API: report a question by token (POST /api/v1/errata) and list your own reports (GET), with
the API's error body for every refusal, and answers that match the OpenAPI description."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from evaluation.errata import erratum_accept, erratum_decline, erratum_report
from evaluation.models import Erratum
from evaluation.services import version_create_draft
from leaderboard.errata_json import ErratumJSON
from termite_site.accounts.services import api_token_create
from tests.leaderboard.test_api import assert_error, auth
from tests.leaderboard.test_openapi import json_schema, violations

pytestmark = pytest.mark.django_db

ERRATA = reverse("api:errata")
DESCRIPTION = "La risposta attesa ignora i prestiti scaduti."


@pytest.fixture
def token(owner, demo_version):
    return api_token_create(user=owner, name="tests")[1]


def report(client, token, body) -> object:
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.post(ERRATA, data, content_type="application/json", **auth(token))


def test_reporting_without_a_token_is_401(client, demo_version):
    response = client.post(
        ERRATA, {"question_id": "biblioteca-001", "description": "x"}, content_type="application/json"
    )
    assert_error(response, 401, "unauthenticated")
    assert_error(client.get(ERRATA, HTTP_AUTHORIZATION="Bearer nope"), 401, "invalid_token")
    assert not Erratum.objects.exists()


def test_a_report_is_201_with_the_erratum_on_the_latest_published_version(client, token, owner):
    response = report(client, token, {"question_id": "biblioteca-001", "description": DESCRIPTION})
    assert response.status_code == 201, response.content
    body = response.json()
    erratum = Erratum.objects.get()
    assert erratum.reporter == owner
    assert body == {
        "id": erratum.pk,
        "version": "demo-1.0",
        "question_id": "biblioteca-001",
        "description": DESCRIPTION,
        "status": "open",
        "reason": None,
        "created_at": erratum.created_at.isoformat(),
        "resolved_at": None,
    }


def test_a_report_may_name_its_version(client, token, demo_version):
    body = {"version": "demo-1.0", "question_id": "ciclismo-001", "description": DESCRIPTION}
    assert report(client, token, body).status_code == 201
    assert report(client, token, {**body, "version": None}).status_code == 201  # null: the default


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"description": DESCRIPTION}, "question_id: This field is required."),
        (
            {"question_id": "biblioteca-999", "description": DESCRIPTION},
            "question_id: Termite demo demo-1.0 has no question biblioteca-999.",
        ),
        ({"question_id": "biblioteca-001"}, "description: This field is required."),
        ({"question_id": "biblioteca-001", "description": "  "}, "description: This field is required."),
        (
            {"question_id": "biblioteca-001", "description": "x" * 2001},
            "description: Ensure this value has at most 2000 characters (it has 2001).",
        ),
        (
            {"question_id": "biblioteca-001", "description": "nul\x00"},
            "description: Null characters are not allowed.",
        ),
        (
            {"version": "demo-1.1", "question_id": "biblioteca-001", "description": DESCRIPTION},
            "version: There is no published version demo-1.1.",
        ),
        ({"question_id": 1, "description": DESCRIPTION}, "question_id: must be a string"),
        ({"question_id": "biblioteca-001", "description": ["x"]}, "description: must be a string"),
        ('{"question_id": ', 'body: send a JSON object {"question_id", "description"}'),
        ('["biblioteca-001"]', 'body: send a JSON object {"question_id", "description"}'),
        (b"\xff\xfe", 'body: send a JSON object {"question_id", "description"}'),
    ],
)
def test_each_invalid_report_is_400_naming_its_field(client, token, demo_version, body, detail):
    version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    error = assert_error(report(client, token, body), 400, "invalid")
    assert error["details"] == [detail]
    assert not Erratum.objects.exists()


def test_reports_are_rate_limited_across_the_api_and_the_form(client, token, owner, settings):
    settings.TERMITE_ERRATA_RATE_LIMIT = (2, 86400)
    body = {"question_id": "biblioteca-001", "description": DESCRIPTION}
    assert report(client, token, body).status_code == 201
    client.force_login(owner)
    assert client.post(reverse("errata:new"), body).status_code == 302
    error = assert_error(report(client, token, body), 429, "rate_limited")
    assert error["message"] == "You may report 2 errata a day; try again tomorrow."


def test_the_list_holds_only_your_reports_with_the_reason_you_may_read(
    client, token, owner, other_user, staff, demo_version
):
    question = demo_version.questions.get(public_id="biblioteca-001")
    declined = erratum_report(reporter=owner, question=question, description="mia")
    erratum_decline(erratum=declined, by=staff, staff_reason="La query attesa è corretta.")
    accepted = erratum_report(reporter=owner, question=question, description="mia anche")
    erratum_accept(erratum=accepted, by=staff, public_reason="Ambigua.")
    erratum_report(reporter=other_user, question=question, description="NonTuaZ4")
    response = client.get(ERRATA, **auth(token))
    assert response.status_code == 200
    errata = response.json()["errata"]
    assert [(e["id"], e["status"], e["reason"]) for e in errata] == [
        (accepted.pk, "accepted", "Ambigua."),
        (declined.pk, "declined", "La query attesa è corretta."),
    ]
    assert "NonTuaZ4" not in response.content.decode()


def test_wrong_methods_are_405(client, token):
    assert_error(client.delete(ERRATA, **auth(token)), 405, "method_not_allowed")


def test_the_openapi_description_types_an_erratum_as_the_api_returns_it(client, token):
    document = client.get(reverse("api:openapi")).json()
    assert document["components"]["schemas"]["Erratum"] == json_schema(ErratumJSON)
    post = document["paths"]["/api/v1/errata"]["post"]
    assert set(post["responses"]) == {"201", "400", "401", "403", "413", "429"}
    created = report(client, token, {"question_id": "biblioteca-001", "description": DESCRIPTION}).json()
    listed = client.get(ERRATA, **auth(token)).json()
    schema = {"$ref": "#/components/schemas/Erratum"}
    assert violations(created, schema, document) == []
    assert (
        violations(
            listed,
            document["paths"]["/api/v1/errata"]["get"]["responses"]["200"]["content"]["application/json"][
                "schema"
            ],
            document,
        )
        == []
    )
    assert set(created) == set(ErratumJSON.__annotations__)
