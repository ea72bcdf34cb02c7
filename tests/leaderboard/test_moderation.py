"""Staff moderate submissions in the admin and from the probing page: hidden ones leave the public pages,
with a public reason; a user's quota is lowered."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from leaderboard.models import SubmissionQuota
from leaderboard.moderation import QuotaNotLowered, submission_quota_lower, submissions_hide
from leaderboard.services import submission_moderate, submission_score
from tests.leaderboard.scored import scored_fields

pytestmark = pytest.mark.django_db


@pytest.fixture
def public(make_submission):
    submission = make_submission(is_public=True)
    submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    return submission


def test_a_hidden_submission_disappears_for_everyone_but_its_owner_and_staff(
    client, owner, other_user, public
):
    submission_moderate(submission=public, hidden=True, flagged=False, reason="risposte scritte a mano")
    assert client.get(public.get_absolute_url()).status_code == 404
    client.force_login(other_user)
    assert client.get(public.get_absolute_url()).status_code == 404
    client.force_login(owner)
    assert "risposte scritte a mano" in client.get(public.get_absolute_url()).content.decode()


def test_a_flagged_submission_stays_visible_with_its_reason(client, public):
    submission_moderate(submission=public, hidden=False, flagged=True, reason="da verificare")
    body = client.get(public.get_absolute_url()).content.decode()
    assert "Flagged by the moderators." in body and "da verificare" in body


def test_staff_hide_a_submission_from_the_admin(client, django_user_model, public):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-123456789")
    client.force_login(admin)
    url = reverse("admin:leaderboard_submission_change", args=[public.pk])
    assert client.get(url).status_code == 200
    response = client.post(url, {"is_hidden": "on", "moderation_reason": "duplicato"})
    assert response.status_code == 302
    public.refresh_from_db()
    assert public.is_hidden and public.moderation_reason == "duplicato"


def test_the_admin_shows_ts_ea_beside_ea_strict_and_a_dash_where_it_is_unknown(
    client, django_user_model, make_submission
):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-123456789")
    client.force_login(admin)
    current = make_submission(**scored_fields(20, ts=16))
    older = make_submission(**scored_fields(20))

    def shown(submission) -> str:
        body = client.get(
            reverse("admin:leaderboard_submission_change", args=[submission.pk])
        ).content.decode()
        field = body.split('<label class="inline">TS-EA:</label>')[1]
        return field.split('<div class="readonly">')[1].split("</div>")[0]

    assert shown(current) == str(16 / 23)
    assert shown(older) == "-"  # the admin's empty value: unknown, neither 0 nor EA


def test_staff_raise_a_quota_from_the_admin(client, django_user_model, owner):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-123456789")
    client.force_login(admin)
    response = client.post(
        reverse("admin:leaderboard_submissionquota_add"),
        {"user": owner.pk, "per_day": 20, "per_version": 200},
    )
    assert response.status_code == 302
    assert owner.submission_quota.per_day == 20


def test_hiding_rows_keeps_their_flags_and_is_recorded_per_row(make_submission, staff):
    flagged = make_submission(is_flagged=True)
    plain = make_submission()
    submissions_hide(submissions=[flagged, plain], reason="Sonde", by=staff)
    for submission in (flagged, plain):
        submission.refresh_from_db()
        assert submission.is_hidden and submission.moderation_reason == "Sonde"
    assert (flagged.is_flagged, plain.is_flagged) == (True, False)
    assert sorted(LogEntry.objects.filter(user=staff).values_list("object_id", flat=True)) == sorted(
        [str(flagged.pk), str(plain.pk)]
    )


def test_a_quota_is_lowered_only_below_the_current_one(owner, staff, settings):
    settings.TERMITE_DAILY_QUOTA, settings.TERMITE_VERSION_QUOTA = 5, 100
    for per_day, per_version in ((5, 100), (6, 50), (4, 101)):
        with pytest.raises(QuotaNotLowered):
            submission_quota_lower(user=owner, per_day=per_day, per_version=per_version, by=staff)
    with pytest.raises(QuotaNotLowered, match="negative"):
        submission_quota_lower(user=owner, per_day=-1, per_version=5, by=staff)
    assert not SubmissionQuota.objects.exists()
    quota = submission_quota_lower(user=owner, per_day=0, per_version=100, by=staff)
    assert (quota.per_day, quota.per_version) == (0, 100)
    # Now the limit is the user's own: lowering again starts from it.
    with pytest.raises(QuotaNotLowered, match="0 a day"):
        submission_quota_lower(user=owner, per_day=1, per_version=50, by=staff)
