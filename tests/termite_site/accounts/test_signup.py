import pytest
from django.urls import reverse

from tests.form_page import FormPage

pytestmark = pytest.mark.django_db

URL = reverse("accounts:signup")


def _form(**overrides):
    data = {
        "username": "dario",
        "email": "dario@example.org",
        "affiliation": "Politecnico di Milano",
        "password1": "correct-horse-battery-staple",
        "password2": "correct-horse-battery-staple",
    }
    return {**data, **overrides}


def test_the_form_renders_with_an_affiliation_field_and_noindex(client):
    response = client.get(URL)
    assert response.status_code == 200
    assert b'name="affiliation"' in response.content
    assert b'content="noindex' in response.content


def test_signing_up_creates_the_account_and_logs_in(client, django_user_model):
    response = client.post(URL, _form())
    assert response.status_code == 302
    assert response.url == reverse("accounts:profile")
    user = django_user_model.objects.get(username="dario")
    assert user.affiliation == "Politecnico di Milano"
    assert client.get(reverse("accounts:profile")).context["user"] == user


def test_signing_up_goes_on_to_the_page_of_this_site_it_was_asked_from(client):
    response = client.post(f"{URL}?next=/benchmark/", _form())
    assert response.status_code == 302 and response.url == "/benchmark/"


def test_signing_up_never_goes_on_to_another_site(client):
    response = client.post(URL, _form(next="https://evil.example/"))
    assert response.status_code == 302 and response.url == reverse("accounts:profile")


def test_it_rejects_an_e_mail_already_in_use_whatever_its_case(client, owner):
    response = client.post(URL, _form(email=owner.email.upper()))
    assert response.status_code == 200
    assert "already exists" in str(response.context["form"].errors["email"])


def test_it_rejects_mismatched_passwords(client, django_user_model):
    response = client.post(URL, _form(password2="something-else-entirely"))
    assert response.status_code == 200
    assert "password2" in response.context["form"].errors
    assert not django_user_model.objects.filter(username="dario").exists()


def test_a_refused_sign_up_opens_on_a_summary_linking_the_error_to_its_field(client):
    page = FormPage(client.post(URL, _form(password2="something-else-entirely")).content.decode())
    assert page.summary is not None and page.summary_before_fields
    assert page.summary_links == [
        ("id_password2", "Password confirmation: The two password fields didn\u2019t match.")
    ]
    assert "id_password2" in page.ids


def test_it_rejects_a_too_common_password(client):
    response = client.post(URL, _form(password1="password", password2="password"))
    assert "password2" in response.context["form"].errors


def test_a_logged_in_user_is_sent_to_the_profile(client, owner):
    client.force_login(owner)
    assert client.get(URL).url == reverse("accounts:profile")


def test_sign_ups_are_rate_limited_per_address(client, settings):
    settings.SIGNUP_RATE_LIMIT_PER_IP = (2, 3600)
    for n in range(2):
        client.post(URL, _form(username=f"user{n}", email=f"user{n}@example.org"))
        client.logout()
    response = client.post(URL, _form(username="user9", email="user9@example.org"))
    assert response.status_code == 429
    assert b"Too many sign-ups" in response.content
