import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

URL = reverse("accounts:profile")


def test_anonymous_visitors_are_sent_to_log_in(client):
    response = client.get(URL)
    assert response.status_code == 302
    assert response.url.startswith(reverse("accounts:login"))


def test_the_profile_shows_the_account_and_is_not_indexed(client, owner):
    client.force_login(owner)
    response = client.get(URL)
    assert response.status_code == 200
    assert "Università di Torino" in response.content.decode()
    assert b'content="noindex' in response.content


def test_the_affiliation_and_e_mail_can_be_changed(client, owner):
    client.force_login(owner)
    response = client.post(URL, {"email": "ada@unito.it", "affiliation": "UniTo"})
    assert response.status_code == 302
    owner.refresh_from_db()
    assert (owner.email, owner.affiliation) == ("ada@unito.it", "UniTo")


def test_another_users_e_mail_cannot_be_taken(client, owner, other_user):
    client.force_login(owner)
    response = client.post(URL, {"email": other_user.email, "affiliation": ""})
    assert response.status_code == 200
    assert "email" in response.context["profile_form"].errors
