"""Cross-site request forgery on every form, and what a logged-in stranger can reach."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.services import version_create_draft
from termite_site.accounts.services import api_token_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def forged(owner):
    """A browser session whose requests come from another site: logged in, but without the CSRF token."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    return client


def every_form(version, question, token_id, submission_id) -> list[str]:
    return [
        reverse("accounts:signup"),
        reverse("accounts:login"),
        reverse("accounts:logout"),
        reverse("accounts:profile"),
        reverse("accounts:email_confirmation_resend"),
        reverse("accounts:email_confirm", args=["any-token"]),
        reverse("accounts:token_create"),
        reverse("accounts:token_revoke", args=[token_id]),
        reverse("accounts:password_change"),
        reverse("accounts:password_reset"),
        reverse("leaderboard:submission_new"),
        reverse("leaderboard:submission_withdraw", args=[submission_id]),
        reverse("staff:home"),
        reverse("staff:import_archive"),
        reverse("staff:database_add", args=[version.label]),
        reverse("staff:publish", args=[version.label]),
        reverse("staff:question_exclusion", args=[question.pk]),
    ]


def test_every_form_refuses_a_post_without_its_csrf_token(forged, owner, make_submission, demo_version):
    owner.is_staff = True  # so that staff forms are reached and refused for CSRF, not for permission
    owner.save()
    draft = version_create_draft(label="bozza-csrf", name="Termite", derived_from=demo_version)
    token, _raw = api_token_create(user=owner, name="t")
    urls = every_form(draft, draft.questions.first(), token.pk, make_submission().pk)
    for url in urls:
        assert forged.post(url, {}).status_code == 403, url
    token.refresh_from_db()
    assert token.is_active


def test_the_language_form_alone_takes_a_post_without_a_token_and_changes_nothing_but_the_language(
    forged, owner, demo_version
):
    answer = forged.post(reverse("set_language"), {"language": "en", "next": "https://evil.example/"})
    assert answer.status_code == 302 and answer["Location"] == "/"  # never away from the site
    assert answer.cookies["django_language"].value == "en"
    assert set(answer.cookies) == {"django_language"}


def test_the_token_api_needs_no_csrf_token_because_it_takes_no_cookies(owner, demo_version):
    _token, raw = api_token_create(user=owner, name="t")
    client = Client(enforce_csrf_checks=True)
    response = client.get(reverse("api:submissions"), HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200


def test_a_participant_reaches_no_staff_or_admin_page(client, owner, demo_version):
    client.force_login(owner)
    for url in [
        reverse("staff:home"),
        reverse("admin:index"),
        reverse("admin:evaluation_question_changelist"),
        "/admin/rq/",
    ]:
        response = client.get(url)
        assert response.status_code in (302, 403), url
        if response.status_code == 302:
            assert "login" in response.url, url


def test_ids_of_other_users_private_submissions_reveal_nothing(client, other_user, make_submission):
    private = make_submission(is_public=False)
    client.force_login(other_user)
    for url in [
        private.get_absolute_url(),
        reverse("leaderboard:submission_status", args=[private.pk]),
    ]:
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("leaderboard:submission_withdraw", args=[private.pk])).status_code == 404
    private.refresh_from_db()
    assert private.withdrawn_at is None
