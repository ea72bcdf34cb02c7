"""Staff disable an account: it cannot log in or use its API tokens, which stay revoked; never staff's own
or another staff account."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry

from termite_site.accounts.models import ApiToken
from termite_site.accounts.services import AccountNotDisabled, account_disable, api_token_create

pytestmark = pytest.mark.django_db


def test_a_disabled_account_is_inactive_and_its_tokens_are_revoked_for_good(owner, staff):
    api_token_create(user=owner, name="uno")
    revoked_before, _raw = api_token_create(user=owner, name="due")
    revoked_before.revoke()
    assert account_disable(user=owner, by=staff) == 1
    owner.refresh_from_db()
    assert not owner.is_active
    assert not ApiToken.objects.active().filter(user=owner).exists()
    owner.is_active = True  # enabled again in the admin: the tokens stay revoked
    owner.save()
    assert not ApiToken.objects.active().filter(user=owner).exists()


def test_it_is_recorded_as_who_did_what(owner, staff):
    account_disable(user=owner, by=staff)
    entry = LogEntry.objects.get()
    assert (entry.user, entry.object_id, entry.get_edited_object()) == (staff, str(owner.pk), owner)


@pytest.mark.parametrize(
    ("who", "message"),
    [
        ("self", "You cannot disable your own account."),
        ("staff", "is a staff account"),
        ("superuser", "is a staff account"),
        ("disabled", "is already disabled."),
    ],
)
def test_it_refuses_and_changes_nothing(django_user_model, staff, who, message):
    target = {
        "self": staff,
        "staff": django_user_model.objects.create_user("dario", "dario@example.org", "x", is_staff=True),
        "superuser": django_user_model.objects.create_user(
            "ezio", "ezio@example.org", "x", is_superuser=True
        ),
        "disabled": django_user_model.objects.create_user("fede", "fede@example.org", "x", is_active=False),
    }[who]
    api_token_create(user=target, name="uno")
    with pytest.raises(AccountNotDisabled, match=message):
        account_disable(user=target, by=staff)
    target.refresh_from_db()
    assert target.is_active is (who != "disabled")
    assert ApiToken.objects.active().filter(user=target).count() == 1
    assert not LogEntry.objects.exists()
