"""An account that signed up uploads nothing, by the form or the API, until it confirms its e-mail address."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard import services
from leaderboard.models import Submission
from termite_site.accounts.services import api_token_create
from tests.demo import predictions_jsonl

pytestmark = pytest.mark.django_db

URL = reverse("leaderboard:submission_new")
API = reverse("api:submissions")


@pytest.fixture
def unconfirmed(owner, demo_version):
    """The owner, as if self-registered and not yet confirmed."""
    owner.email_confirmed_at = None
    owner.save()
    return owner


def form(gold) -> dict:
    return {
        "model_name": "Modello in attesa",
        "weights": "open",
        "approach": "prompting",
        "dialect": "mysql",
        "predictions": SimpleUploadedFile("p.jsonl", predictions_jsonl(gold)),
    }


def api_upload(client, user, gold):
    raw = api_token_create(user=user, name="t")[1]
    body = {
        "model_name": "Modello API",
        "predictions": SimpleUploadedFile("p.jsonl", predictions_jsonl(gold)),
    }
    return client.post(API, body, HTTP_AUTHORIZATION=f"Bearer {raw}")


def test_the_upload_page_explains_and_offers_a_new_link_instead_of_the_form(client, unconfirmed):
    client.force_login(unconfirmed)
    page = client.get(URL)
    assert page.status_code == 200
    body = page.content.decode()
    assert 'id="email-confirmation"' in body
    assert "You can upload predictions once it is confirmed." in body
    assert f'action="{reverse("accounts:email_confirmation_resend")}"' in body
    assert f'name="next" value="{URL}"' in body
    assert 'name="predictions"' not in body


def test_an_upload_posted_anyway_is_refused_with_403_and_stores_nothing(client, unconfirmed, gold):
    client.force_login(unconfirmed)
    response = client.post(URL, form(gold))
    assert response.status_code == 403
    body = response.content.decode()
    assert "Confirm your e-mail address before your first upload" in body and 'role="alert"' in body
    assert not Submission.objects.exists()


def test_the_api_refuses_with_403_email_unconfirmed(client, unconfirmed, gold):
    response = api_upload(client, unconfirmed, gold)
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "email_unconfirmed" and error["details"] == []
    assert "open the link we sent to ada@example.org" in error["message"]
    assert not Submission.objects.exists()


def test_the_service_is_where_the_rule_holds(unconfirmed, demo_version, gold):
    with pytest.raises(services.EmailUnconfirmed):
        services.submission_create(
            user=unconfirmed,
            version=demo_version,
            upload=services.Upload(name="p.jsonl", data=predictions_jsonl(gold)),
            model_card={"model_name": "Diretto"},
        )
    assert not Submission.objects.exists()


def test_once_confirmed_the_form_is_back_and_takes_the_upload(client, unconfirmed, gold, in_process):
    unconfirmed.confirm_email(email=unconfirmed.email)
    client.force_login(unconfirmed)
    assert 'name="predictions"' in client.get(URL).content.decode()
    assert client.post(URL, form(gold)).status_code == 302
    assert Submission.objects.filter(user=unconfirmed).count() == 1


def test_staff_upload_without_a_confirmed_address(client, staff, demo_version, gold, in_process):
    staff.email_confirmed_at = None
    staff.save()
    client.force_login(staff)
    assert 'name="predictions"' in client.get(URL).content.decode()
    assert client.post(URL, form(gold)).status_code == 302
    assert api_upload(client, staff, gold).status_code == 201


def test_the_openapi_document_names_the_refusal(client):
    post = client.get(reverse("api:openapi")).json()["paths"]["/api/v1/submissions"]["post"]
    assert "`email_unconfirmed`" in post["responses"]["403"]["description"]
