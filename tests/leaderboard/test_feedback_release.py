"""When a result appears must not tell how long its queries ran: participants see it at the next step of
TERMITE_RESULT_RELEASE_SECONDS after scoring started; staff see it at once."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from leaderboard import ranking
from leaderboard.models import Submission
from leaderboard.services import submission_score
from termite_site.accounts.services import api_token_create

pytestmark = pytest.mark.django_db

STEP = 10


@pytest.fixture(autouse=True)
def release_step(settings):
    settings.TERMITE_RESULT_RELEASE_SECONDS = STEP


@pytest.mark.parametrize(("took", "released_after"), [(0.1, 10), (9.9, 10), (10.1, 20), (25, 30)])
def test_the_release_time_is_the_next_step_after_scoring_started(make_submission, took, released_after):
    started = timezone.now() - timedelta(hours=1)
    submission = make_submission(started_at=started)
    assert submission._release_time(started + timedelta(seconds=took)) == started + timedelta(
        seconds=released_after
    )


def test_a_quick_and_a_slow_scoring_are_released_at_the_same_moment(make_submission):
    started = timezone.now()
    quick, slow = make_submission(started_at=started), make_submission(started_at=started)
    assert quick._release_time(started + timedelta(seconds=0.05)) == slow._release_time(
        started + timedelta(seconds=8)
    )


@pytest.fixture
def just_scored(make_submission, gold):
    submission = make_submission(predictions=dict(gold), is_public=True)
    submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.SCORED
    assert submission.released_at > timezone.now()
    return submission


def test_the_owner_sees_it_running_until_its_release(client, owner, just_scored):
    client.force_login(owner)
    status = client.get(reverse("leaderboard:submission_status", args=[just_scored.pk])).json()
    assert (status["status"], status["finished"]) == ("running", False)
    page = client.get(just_scored.get_absolute_url())
    assert page.context["feedback"].shown is None and 'id="ea"' not in page.content.decode()
    listed = client.get(reverse("leaderboard:submission_list")).context["rows"]
    assert [seen.status for _s, seen in listed] == ["running"]
    _token, raw = api_token_create(user=owner, name="release")
    answer = client.get(
        reverse("api:submission_detail", args=[just_scored.pk]), HTTP_AUTHORIZATION=f"Bearer {raw}"
    ).json()
    assert (answer["status"], answer["scores"]) == ("running", None)


def test_the_owner_sees_it_scored_once_released(client, owner, just_scored):
    Submission.objects.filter(pk=just_scored.pk).update(released_at=timezone.now() - timedelta(seconds=1))
    client.force_login(owner)
    status = client.get(reverse("leaderboard:submission_status", args=[just_scored.pk])).json()
    assert (status["status"], status["finished"]) == ("scored", True)
    assert 'id="ea"' in client.get(just_scored.get_absolute_url()).content.decode()


def test_staff_see_the_result_at_once(client, staff, just_scored):
    client.force_login(staff)
    status = client.get(reverse("leaderboard:submission_status", args=[just_scored.pk])).json()
    assert status["status"] == "scored"


def test_the_leaderboard_shows_a_row_from_its_release_on(just_scored):
    version = just_scored.version
    assert ranking.leaderboard_rows(version=version) == []
    later = just_scored.released_at + timedelta(seconds=1)
    with (
        mock.patch("leaderboard.ranking.time.time", return_value=later.timestamp()),
        mock.patch("leaderboard.ranking.timezone.now", return_value=later),
    ):
        rows = ranking.leaderboard_rows(version=version)
    assert [row.submission_id for row in rows] == [just_scored.pk]


def test_a_result_not_yet_released_cannot_be_compared_or_picked(client, owner, just_scored, make_submission):
    Submission.objects.filter(pk=just_scored.pk).update(is_public=False)
    other = make_submission(is_public=False)
    submission_score(submission_id=other.pk)
    Submission.objects.filter(pk=other.pk).update(released_at=timezone.now() - timedelta(seconds=1))
    client.force_login(owner)
    url = reverse("leaderboard:compare")
    assert client.get(url, {"a": other.pk, "b": just_scored.pk}).status_code == 404
    picker = client.get(url).content.decode()
    assert f'value="{other.pk}"' in picker and f'value="{just_scored.pk}"' not in picker


def test_others_find_a_public_submission_only_once_released(client, other_user, just_scored):
    url = just_scored.get_absolute_url()
    assert client.get(url).status_code == 404
    client.force_login(other_user)
    assert client.get(url).status_code == 404
    Submission.objects.filter(pk=just_scored.pk).update(released_at=timezone.now() - timedelta(seconds=1))
    assert client.get(url).status_code == 200
