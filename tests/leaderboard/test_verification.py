"""Staff mark a public scored submission verified, with a public note and the date, or take the mark off:
through the service, the form on the submission's page and the Django admin."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from leaderboard.models import Submission
from leaderboard.services import NotVerifiable, submission_verify
from tests.leaderboard.scored import scored_fields

pytestmark = pytest.mark.django_db


@pytest.fixture
def public(make_submission):
    return make_submission(model_name="Alfa", **scored_fields(20))


def verify_url(submission: Submission) -> str:
    return reverse("leaderboard_staff:submission_verify", args=[submission.pk])


# The service.


def test_a_public_scored_submission_is_verified_today_with_its_note_and_who_did_it(public, staff):
    submission_verify(submission=public, verified=True, note="  riprodotto dal codice  ", by=staff)
    public.refresh_from_db()
    assert public.is_verified
    assert public.verified_at == timezone.localdate()
    assert public.verified_note == "riprodotto dal codice"
    assert public.verified_by == staff


def test_removing_the_mark_clears_the_date_the_note_and_who_did_it(public, staff):
    submission_verify(submission=public, verified=True, note="riprodotto", by=staff)
    submission_verify(submission=public, verified=False, note="", by=staff)
    public.refresh_from_db()
    assert (public.verified_at, public.verified_note, public.verified_by) == (None, "", None)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({**scored_fields(20), "is_public": False}, "Only a public submission can be verified"),
        ({"is_public": True}, "Only a scored submission can be verified: this one is queued."),
        (
            {"is_public": True, "status": "failed"},
            "Only a scored submission can be verified: this one is failed.",
        ),
        ({**scored_fields(20), "withdrawn_at": timezone.now()}, "A withdrawn submission cannot be verified."),
    ],
)
def test_only_a_public_scored_live_submission_can_be_verified(make_submission, staff, fields, message):
    submission = make_submission(**fields)
    with pytest.raises(NotVerifiable, match=message):
        submission_verify(submission=submission, verified=True, note="riprodotto", by=staff)
    submission.refresh_from_db()
    assert not submission.is_verified


def test_verifying_needs_a_note(public, staff):
    with pytest.raises(NotVerifiable, match="Say how the run was verified"):
        submission_verify(submission=public, verified=True, note="   ", by=staff)
    public.refresh_from_db()
    assert not public.is_verified


def test_a_verification_can_always_be_removed(make_submission, staff):
    submission = make_submission(**{**scored_fields(20), "is_public": False})
    submission_verify(submission=submission, verified=False, note="", by=staff)  # no error


# The form on the submission's page.


def test_staff_see_the_form_on_a_public_scored_submission_and_nobody_else_does(
    client, public, staff, owner, other_user
):
    for user, shown in ((staff, True), (owner, False), (other_user, False)):
        client.force_login(user)
        body = client.get(public.get_absolute_url()).content.decode()
        assert (f'action="{verify_url(public)}"' in body) is shown, user
    client.logout()
    assert f'action="{verify_url(public)}"' not in client.get(public.get_absolute_url()).content.decode()


def test_staff_see_no_form_on_a_private_submission(client, make_submission, staff):
    private = make_submission(**{**scored_fields(20), "is_public": False})
    client.force_login(staff)
    assert 'id="verify"' not in client.get(private.get_absolute_url()).content.decode()


def test_staff_verify_from_the_page_and_it_shows_there(client, public, staff):
    client.force_login(staff)
    response = client.post(verify_url(public), {"verified": "on", "note": "eseguito dagli organizzatori"})
    assert response.status_code == 302 and response["Location"] == public.get_absolute_url()
    public.refresh_from_db()
    assert public.verified_note == "eseguito dagli organizzatori" and public.verified_by == staff
    client.logout()
    body = client.get(public.get_absolute_url()).content.decode()
    assert "badge verified" in body and "eseguito dagli organizzatori" in body
    assert "self-reported run" not in body and "carla" not in body


def test_staff_take_the_mark_off_from_the_page(client, public, staff):
    submission_verify(submission=public, verified=True, note="riprodotto", by=staff)
    client.force_login(staff)
    assert client.post(verify_url(public), {"note": ""}).status_code == 302
    public.refresh_from_db()
    assert not public.is_verified


def test_an_unverified_submission_says_it_is_a_self_reported_run(client, public):
    body = client.get(public.get_absolute_url()).content.decode()
    assert "self-reported run" in body and "badge verified" not in body
    assert f'href="{reverse("metrics")}#verified"' in body


def test_the_page_form_needs_a_note_to_verify(client, public, staff):
    client.force_login(staff)
    response = client.post(verify_url(public), {"verified": "on", "note": " "}, follow=True)
    assert "Say how the run was verified" in response.content.decode()
    public.refresh_from_db()
    assert not public.is_verified


def test_the_page_form_says_why_a_private_submission_cannot_be_verified(client, make_submission, staff):
    private = make_submission(**{**scored_fields(20), "is_public": False})
    client.force_login(staff)
    response = client.post(verify_url(private), {"verified": "on", "note": "riprodotto"}, follow=True)
    assert "Only a public submission can be verified" in response.content.decode()
    private.refresh_from_db()
    assert not private.is_verified


def test_nobody_but_staff_may_verify(client, public, owner, other_user):
    response = client.post(verify_url(public), {"verified": "on", "note": "io"})
    assert response.status_code == 302 and response["Location"].startswith(reverse("accounts:login"))
    for user in (owner, other_user):
        client.force_login(user)
        assert client.post(verify_url(public), {"verified": "on", "note": "io"}).status_code == 403
    public.refresh_from_db()
    assert not public.is_verified


def test_the_form_answers_only_post(client, public, staff):
    client.force_login(staff)
    assert client.get(verify_url(public)).status_code == 405


def test_an_unknown_submission_is_not_found(client, staff):
    client.force_login(staff)
    url = reverse("leaderboard_staff:submission_verify", args=[999999])
    assert client.post(url, {"verified": "on", "note": "x"}).status_code == 404


# The admin.


@pytest.fixture
def admin_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-123456789")
    client.force_login(admin)
    client.admin = admin
    return client


def change_url(submission: Submission) -> str:
    return reverse("admin:leaderboard_submission_change", args=[submission.pk])


def test_staff_verify_from_the_admin(admin_client, public):
    assert admin_client.get(change_url(public)).status_code == 200
    response = admin_client.post(change_url(public), {"verified": "on", "verified_note": "riprodotto"})
    assert response.status_code == 302
    public.refresh_from_db()
    assert public.verified_at == timezone.localdate() and public.verified_note == "riprodotto"
    assert public.verified_by == admin_client.admin
    assert not public.is_hidden  # the moderation fields were saved as they were


def test_the_admin_refuses_to_verify_a_private_submission_or_without_a_note(
    admin_client, make_submission, public
):
    private = make_submission(**{**scored_fields(20), "is_public": False})
    response = admin_client.post(change_url(private), {"verified": "on", "verified_note": "riprodotto"})
    assert (
        response.status_code == 200
        and "Only a public submission can be verified" in response.content.decode()
    )
    response = admin_client.post(change_url(public), {"verified": "on", "verified_note": ""})
    assert response.status_code == 200 and "Say how the run was verified" in response.content.decode()
    for submission in (private, public):
        submission.refresh_from_db()
        assert not submission.is_verified


def test_the_admin_takes_the_mark_off_one_or_many(admin_client, public, make_submission, staff):
    other = make_submission(model_name="Beta", **scored_fields(10))
    for submission in (public, other):
        submission_verify(submission=submission, verified=True, note="riprodotto", by=staff)
    response = admin_client.post(change_url(public), {"verified_note": "riprodotto"})
    assert response.status_code == 302
    public.refresh_from_db()
    assert not public.is_verified
    submission_verify(submission=public, verified=True, note="riprodotto", by=staff)
    response = admin_client.post(
        reverse("admin:leaderboard_submission_changelist"),
        {"action": "unverify", "_selected_action": [public.pk, other.pk]},
    )
    assert response.status_code == 302
    assert not Submission.objects.filter(verified_at__isnull=False).exists()


def test_the_admin_lists_and_filters_verified_submissions(admin_client, public, make_submission, staff):
    make_submission(model_name="Beta", **scored_fields(10))
    submission_verify(submission=public, verified=True, note="riprodotto", by=staff)
    response = admin_client.get(
        reverse("admin:leaderboard_submission_changelist"), {"verified_at__isempty": "0"}
    )
    assert [s.model_name for s in response.context["cl"].result_list] == ["Alfa"]
