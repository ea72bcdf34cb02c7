"""A NUL character anywhere in a request: refused with 400 before it reaches a query (PostgreSQL rejects NULs
in text, so it used to end in a 500 there). Run on both databases: with and without DATABASE_URL."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from termite_site.accounts.services import api_token_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(owner, demo_version) -> str:
    return api_token_create(user=owner, name="tests")[1]


def assert_refused_as_page(response) -> None:
    assert response.status_code == 400, response.content
    assert "NUL character" in response.content.decode()


def assert_refused_as_api_error(response) -> None:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "nul_character" and "NUL character" in error["message"]
    assert isinstance(error["details"], list)


def test_it_refuses_a_nul_in_the_path(client, demo_version):
    assert_refused_as_page(client.get("/leaderboard/%00.csv"))


def test_it_refuses_a_nul_in_the_query_string_of_a_page(client, demo_version):
    assert_refused_as_page(client.get(reverse("leaderboard:leaderboard"), {"q": "\x00"}))


def test_it_refuses_a_nul_in_the_query_string_of_the_api_in_its_error_shape(client, demo_version):
    assert_refused_as_api_error(client.get(reverse("api:leaderboard") + "?version=%00"))


def test_it_refuses_a_nul_in_an_api_form_field_in_its_error_shape(client, token):
    body = {"version": "\x00", "model_name": "M", "predictions": SimpleUploadedFile("p.jsonl", b"{}")}
    response = client.post(reverse("api:submissions"), body, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert_refused_as_api_error(response)


def test_it_refuses_a_nul_in_a_form_field(client, owner, password):
    response = client.post(reverse("accounts:login"), {"username": "ada\x00", "password": password})
    assert_refused_as_page(response)
    assert "_auth_user_id" not in client.session


def test_it_refuses_a_nul_in_a_field_name(client):
    assert_refused_as_page(client.post(reverse("accounts:login"), {"user\x00name": "ada"}))


def test_it_leaves_a_body_larger_than_any_upload_to_the_view_which_refuses_it_unread(client, token, settings):
    settings.TERMITE_MAX_UPLOAD_BYTES = 1024
    body = {
        "version": "\x00",
        "model_name": "M",
        "predictions": SimpleUploadedFile("p.jsonl", b"x" * 200_000),
    }
    response = client.post(reverse("api:submissions"), body, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 413  # had the middleware read the body, it would have found the NUL: 400
