import pytest
from django.core.management import call_command
from django.urls import reverse

from termite_site.accounts.models import ApiToken, hash_token
from termite_site.accounts.services import api_token_authenticate, api_token_create

pytestmark = pytest.mark.django_db


def test_creating_a_token_shows_it_once_and_stores_only_its_hash(client, owner):
    client.force_login(owner)
    response = client.post(reverse("accounts:token_create"), {"name": "cluster"})
    raw = response.context["new_token"]
    assert raw.startswith("tmt_") and raw in response.content.decode()
    token = ApiToken.objects.get(user=owner)
    assert token.name == "cluster"
    assert token.token_hash == hash_token(raw) and raw not in token.token_hash
    again = client.get(reverse("accounts:profile"))
    assert raw not in again.content.decode()
    assert "cluster" in again.content.decode()


def test_a_token_needs_a_name(client, owner):
    client.force_login(owner)
    response = client.post(reverse("accounts:token_create"), {"name": ""})
    assert "name" in response.context["token_form"].errors
    assert not ApiToken.objects.exists()


def test_creating_a_token_takes_a_post_and_a_login(client, owner):
    assert client.post(reverse("accounts:token_create"), {"name": "x"}).status_code == 302
    client.force_login(owner)
    assert client.get(reverse("accounts:token_create")).status_code == 405


def test_a_token_authenticates_its_owner_until_revoked(client, owner):
    token, raw = api_token_create(user=owner, name="ci")
    assert api_token_authenticate(raw=raw) == owner
    client.force_login(owner)
    response = client.post(reverse("accounts:token_revoke", args=[token.pk]))
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert api_token_authenticate(raw=raw) is None


def test_unknown_and_empty_tokens_authenticate_nobody(owner):
    api_token_create(user=owner, name="ci")
    assert api_token_authenticate(raw="tmt_not-a-real-token") is None
    assert api_token_authenticate(raw="") is None


def test_a_token_of_a_deactivated_user_is_refused(owner):
    _token, raw = api_token_create(user=owner, name="ci")
    owner.is_active = False
    owner.save()
    assert api_token_authenticate(raw=raw) is None


def test_a_user_cannot_revoke_another_users_token(client, owner, other_user):
    token, raw = api_token_create(user=owner, name="ci")
    client.force_login(other_user)
    assert client.post(reverse("accounts:token_revoke", args=[token.pk])).status_code == 404
    assert api_token_authenticate(raw=raw) == owner


def test_the_profile_lists_tokens_with_their_hint_and_state(client, owner):
    token, _raw = api_token_create(user=owner, name="laptop")
    api_token_create(user=owner, name="server")[0].revoke()
    client.force_login(owner)
    body = client.get(reverse("accounts:profile")).content.decode()
    assert "laptop" in body and "server" in body and token.hint in body and "revoked" in body


def test_the_command_prints_a_working_token(owner, capsys):
    call_command("create_api_token", "ada", "--name", "script")
    raw = capsys.readouterr().out.strip()
    assert api_token_authenticate(raw=raw) == owner
    assert ApiToken.objects.get(user=owner).name == "script"


def test_the_command_refuses_an_unknown_user():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No user named 'ghost'"):
        call_command("create_api_token", "ghost")
