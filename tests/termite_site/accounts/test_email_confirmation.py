"""Self sign-up confirms its e-mail address through a mailed link; accounts staff create count as confirmed."""

from __future__ import annotations

import re
import time
from urllib.parse import urlparse

import pytest
from django.core import signing
from django.core.mail.backends.base import BaseEmailBackend
from django.core.management import call_command
from django.urls import reverse

from termite_site.accounts.confirmation import make_token
from termite_site.accounts.models import User
from tests.migrations import migrate

pytestmark = pytest.mark.django_db

SIGNUP = reverse("accounts:signup")
PROFILE = reverse("accounts:profile")
RESEND = reverse("accounts:email_confirmation_resend")
LINK = re.compile(r"http://testserver(/accounts/confirm/[^/\s\"]+/)")


def sign_up(client, username: str = "dario", **headers) -> User:
    password = "correct-horse-battery-staple"
    data = {
        "username": username,
        "email": f"{username}@example.org",
        "affiliation": "Politecnico di Milano",
        "password1": password,
        "password2": password,
    }
    assert client.post(SIGNUP, data, **headers).status_code == 302
    return User.objects.get(username=username)


def link_in(message) -> str:
    """The path of the confirmation link in a mail, checking that its text and HTML parts agree."""
    (path,) = LINK.findall(message.body)
    (html, _type) = message.alternatives[0]
    assert set(LINK.findall(html)) == {path}
    return path


def expired_token(user: User, monkeypatch, *, days_ago: int) -> str:
    made_at = int(time.time()) - days_ago * 86400
    monkeypatch.setattr(signing.TimestampSigner, "timestamp", lambda self: signing.b62_encode(made_at))
    token = make_token(user)
    monkeypatch.undo()
    return token


# --- Sign-up --------------------------------------------------------------------------------------------


def test_signing_up_starts_unconfirmed_and_mails_one_link(client, mailoutbox):
    user = sign_up(client)
    assert user.email_confirmed_at is None and user.must_confirm_email
    assert len(mailoutbox) == 1
    message = mailoutbox[0]
    assert message.to == ["dario@example.org"]
    assert message.subject == "Confirm your e-mail address for Termite Portal"
    assert "Hello dario," in message.body and "The link works for 3 days." in message.body
    assert link_in(message).startswith("/accounts/confirm/")


def test_the_sign_up_says_where_the_link_went(client, mailoutbox):
    sign_up(client)
    page = client.get(PROFILE).content.decode()
    assert "We have sent a link to dario@example.org" in page
    assert 'id="email-confirmation"' in page and f'action="{RESEND}"' in page


def test_the_mail_is_written_in_the_language_of_the_sign_up(client, mailoutbox):
    sign_up(client, HTTP_ACCEPT_LANGUAGE="it")
    html, _type = mailoutbox[0].alternatives[0]
    assert '<html lang="it">' in html


def test_a_mail_server_that_fails_does_not_fail_the_sign_up(client, settings, caplog):
    settings.EMAIL_BACKEND = f"{__name__}.RefusingBackend"
    user = sign_up(client)
    assert user.must_confirm_email
    assert "confirmation e-mail to user" in caplog.text
    assert 'id="email-confirmation"' in client.get(PROFILE).content.decode()  # the way to a new link


class RefusingBackend(BaseEmailBackend):
    def send_messages(self, email_messages):
        raise ConnectionRefusedError("no mail server here")


# --- The link ------------------------------------------------------------------------------------------


def test_opening_the_link_confirms_nothing_until_the_button_is_pressed(client, mailoutbox):
    user = sign_up(client)
    client.logout()  # the link works from any browser: the token is what counts
    path = link_in(mailoutbox[0])
    page = client.get(path)
    assert page.status_code == 200
    assert 'data-state="valid"' in page.content.decode() and '<button type="submit">Confirm</button>' in (
        page.content.decode()
    )
    user.refresh_from_db()
    assert user.email_confirmed_at is None  # a mail scanner fetching the link changed nothing

    done = client.post(path)
    assert done.status_code == 200
    assert "<strong>dario@example.org</strong> is confirmed" in done.content.decode()
    user.refresh_from_db()
    assert user.email_confirmed and not user.must_confirm_email


def test_a_used_link_says_the_address_is_already_confirmed_and_does_nothing(client, mailoutbox):
    user = sign_up(client)
    path = link_in(mailoutbox[0])
    client.post(path)
    user.refresh_from_db()
    confirmed_at = user.email_confirmed_at
    for again in (client.get(path), client.post(path)):
        assert again.status_code == 200
        assert "is already confirmed" in again.content.decode()
    user.refresh_from_db()
    assert user.email_confirmed_at == confirmed_at


def test_an_expired_link_says_so_and_confirms_nothing(client, owner, monkeypatch, settings):
    settings.TERMITE_EMAIL_CONFIRM_DAYS = 3
    owner.email_confirmed_at = None
    owner.save()
    path = reverse("accounts:email_confirm", args=[expired_token(owner, monkeypatch, days_ago=4)])
    for response in (client.get(path), client.post(path)):
        assert response.status_code == 410
        assert "This link has expired: a link works for 3 days." in response.content.decode()
    owner.refresh_from_db()
    assert owner.email_confirmed_at is None


def test_a_link_still_young_enough_works(client, owner, monkeypatch, settings):
    settings.TERMITE_EMAIL_CONFIRM_DAYS = 3
    owner.email_confirmed_at = None
    owner.save()
    client.post(reverse("accounts:email_confirm", args=[expired_token(owner, monkeypatch, days_ago=2)]))
    owner.refresh_from_db()
    assert owner.email_confirmed


def tampered(token: str) -> str:
    value, timestamp, signature = token.split(":")
    return f"{value}:{timestamp}:{'A' if signature[0] != 'A' else 'B'}{signature[1:]}"


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda user: tampered(make_token(user)), id="tampered signature"),
        pytest.param(lambda user: make_token(user).split(":", 1)[1], id="cut short"),
        pytest.param(lambda user: "set-password", id="not a token"),
        pytest.param(lambda user: "x" * 3000, id="very long"),
        pytest.param(lambda user: "é:☃:%00", id="not ascii"),
        pytest.param(
            lambda user: signing.TimestampSigner(salt="another.use").sign_object({"u": user.pk, "e": "x"}),
            id="signed for another use",
        ),
        pytest.param(
            lambda user: signing.TimestampSigner(salt="termite.accounts.email-confirmation").sign_object(
                {"u": "1"}
            ),
            id="a payload of another shape",
        ),
    ],
)
def test_a_link_that_is_not_ours_is_invalid_never_an_error(client, owner, make):
    owner.email_confirmed_at = None
    owner.save()
    path = reverse("accounts:email_confirm", args=[make(owner)])
    for response in (client.get(path), client.post(path)):
        assert response.status_code == 400
        assert "This link is not valid" in response.content.decode()
    owner.refresh_from_db()
    assert owner.email_confirmed_at is None


def test_a_link_of_a_deleted_account_is_invalid(client, owner):
    token = make_token(owner)
    owner.delete()
    assert client.get(reverse("accounts:email_confirm", args=[token])).status_code == 400


def test_the_confirm_page_takes_only_get_and_post(client, owner):
    assert client.put(reverse("accounts:email_confirm", args=[make_token(owner)])).status_code == 405


# --- A new address ------------------------------------------------------------------------------------


def test_changing_the_address_unconfirms_it_and_mails_a_link_to_the_new_one(client, owner, mailoutbox):
    client.force_login(owner)
    response = client.post(PROFILE, {"email": "ada@unito.it", "affiliation": owner.affiliation}, follow=True)
    assert "We have sent a link to ada@unito.it" in response.content.decode()
    owner.refresh_from_db()
    assert owner.email == "ada@unito.it" and owner.must_confirm_email
    assert [message.to for message in mailoutbox] == [["ada@unito.it"]]
    client.post(link_in(mailoutbox[0]))
    owner.refresh_from_db()
    assert owner.email_confirmed


def test_the_link_for_a_previous_address_dies_when_the_address_changes(client, mailoutbox):
    user = sign_up(client)
    old_link = link_in(mailoutbox[0])
    client.post(PROFILE, {"email": "dario@polimi.it", "affiliation": ""})
    response = client.post(old_link)
    assert response.status_code == 400
    user.refresh_from_db()
    assert user.email == "dario@polimi.it" and user.email_confirmed_at is None


def test_the_same_address_in_other_letters_or_a_new_affiliation_keeps_it_confirmed(client, owner, mailoutbox):
    client.force_login(owner)
    client.post(PROFILE, {"email": "Ada@Example.org", "affiliation": "UniTo"})
    owner.refresh_from_db()
    assert (owner.email, owner.affiliation) == ("Ada@Example.org", "UniTo")
    assert owner.email_confirmed and mailoutbox == []


# --- A new link ----------------------------------------------------------------------------------------


def test_the_resend_button_mails_a_new_link_that_works(client, mailoutbox):
    user = sign_up(client)
    response = client.post(RESEND)
    assert response.status_code == 302 and response.url == PROFILE
    assert len(mailoutbox) == 2
    client.post(link_in(mailoutbox[1]))
    user.refresh_from_db()
    assert user.email_confirmed


def test_the_resend_button_goes_back_to_the_page_it_was_on_on_this_site_only(client, mailoutbox):
    sign_up(client)
    upload_page = reverse("leaderboard:submission_new")
    assert client.post(RESEND, {"next": upload_page}).url == upload_page
    assert client.post(RESEND, {"next": "https://elsewhere.example/"}).url == PROFILE


def test_new_links_are_limited_per_account_with_a_clear_429(client, settings, mailoutbox, other_user):
    settings.TERMITE_CONFIRM_MAIL_RATE_LIMIT = (3, 3600)
    sign_up(client)
    for _ in range(3):
        assert client.post(RESEND).status_code == 302
    refused = client.post(RESEND)
    assert refused.status_code == 429
    assert "You have asked for 3 confirmation e-mails in the last hour" in refused.content.decode()
    assert len(mailoutbox) == 1 + 3  # the sign-up's link does not count
    # Another account has its own count.
    other_user.email_confirmed_at = None
    other_user.save()
    client.force_login(other_user)
    assert client.post(RESEND).status_code == 302


def test_a_change_of_address_counts_towards_the_limit_and_past_it_changes_nothing(
    client, owner, settings, mailoutbox
):
    settings.TERMITE_CONFIRM_MAIL_RATE_LIMIT = (1, 3600)
    client.force_login(owner)
    client.post(PROFILE, {"email": "ada@unito.it", "affiliation": ""})
    refused = client.post(PROFILE, {"email": "ada@polito.it", "affiliation": ""})
    assert refused.status_code == 429
    assert "confirmation e-mails in the last hour" in str(refused.context["profile_form"].errors["email"])
    owner.refresh_from_db()
    assert owner.email == "ada@unito.it" and len(mailoutbox) == 1


def test_a_confirmed_address_gets_no_new_link(client, owner, mailoutbox):
    client.force_login(owner)
    response = client.post(RESEND, follow=True)
    assert "already confirmed" in response.content.decode() and mailoutbox == []


def test_the_resend_button_needs_a_logged_in_post(client, owner):
    assert client.post(RESEND).url.startswith(reverse("accounts:login"))
    client.force_login(owner)
    assert client.get(RESEND).status_code == 405


# --- Accounts staff create ----------------------------------------------------------------------------


def test_create_user_as_commands_and_fixtures_call_it_makes_a_confirmed_account(owner):
    assert owner.email_confirmed and not owner.must_confirm_email


def test_createsuperuser_makes_a_confirmed_account(monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-admin-passphrase-9")
    call_command("createsuperuser", interactive=False, username="root", email="root@example.org", verbosity=0)
    assert User.objects.get(username="root").email_confirmed


def test_a_user_staff_add_in_the_admin_is_confirmed(admin_client):
    password = "a-long-test-passphrase-42"
    response = admin_client.post(
        reverse("admin:accounts_user_add"),
        {"username": "elena", "password1": password, "password2": password, "usable_password": "true"},
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert User.objects.get(username="elena").email_confirmed


def test_staff_never_need_to_confirm(staff):
    staff.email_confirmed_at = None
    assert not staff.must_confirm_email


# --- The admin -----------------------------------------------------------------------------------------


def test_the_admin_shows_filters_and_marks_confirmation(admin_client, owner, other_user):
    other_user.email_confirmed_at = None
    other_user.save()
    changelist = reverse("admin:accounts_user_changelist")
    unconfirmed = admin_client.get(changelist, {"email_confirmed": "no"}).context["cl"].result_list
    assert list(unconfirmed) == [other_user]
    assert "e-mail confirmed" in admin_client.get(changelist).content.decode().lower()

    response = admin_client.post(
        changelist,
        {"action": "mark_email_confirmed", "_selected_action": [owner.pk, other_user.pk]},
        follow=True,
    )
    assert "1 address marked confirmed." in response.content.decode()
    other_user.refresh_from_db()
    assert other_user.email_confirmed


def test_the_admin_change_page_shows_when_but_does_not_edit_it(admin_client, owner):
    page = admin_client.get(reverse("admin:accounts_user_change", args=[owner.pk])).content.decode()
    assert "E-mail confirmed at" in page and 'name="email_confirmed_at"' not in page


# --- The migration -------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_accounts_that_exist_before_the_migration_count_as_confirmed(latest_after):
    before = migrate([("accounts", "0001_initial")])
    before.get_model("accounts", "User").objects.create(username="vecchio", email="vecchio@example.org")

    after = migrate([("accounts", "0002_user_email_confirmed_at")])
    assert after.get_model("accounts", "User").objects.get(username="vecchio").email_confirmed_at is not None


def test_the_link_in_a_mail_points_at_the_site_it_was_asked_from(client, mailoutbox, settings):
    settings.ALLOWED_HOSTS = ["termite.example.org"]
    sign_up(client, HTTP_HOST="termite.example.org")
    link = re.search(r"https?://\S+/accounts/confirm/\S+/", mailoutbox[0].body)[0]
    assert urlparse(link).netloc == "termite.example.org"
