"""When a result appears must not tell how long its queries ran: participants see it at
max(received + TERMITE_RESULT_DELAY_SECONDS, started + TERMITE_SCORING_BOUND_SECONDS), a function of the
upload's time and of the queue; every time they can read is the received or the released one. Staff see
the result at once, and the real times."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from leaderboard import ranking, services
from leaderboard.models import Rescoring, Submission
from leaderboard.services import submission_score
from termite_site.accounts.services import api_token_create

pytestmark = pytest.mark.django_db

DELAY, BOUND = 120, 90


@pytest.fixture(autouse=True)
def release_rule(settings):
    settings.TERMITE_RESULT_DELAY_SECONDS = DELAY
    settings.TERMITE_SCORING_BOUND_SECONDS = BOUND


class Clock:
    """`timezone.now` as the code under test reads it, moved by the test; a scoring takes `took` seconds
    of it (its queries run for real, in no time of this clock)."""

    def __init__(self, start: datetime) -> None:
        self.now = start
        self.took = 0.0


@pytest.fixture
def clock(monkeypatch):
    clock = Clock(timezone.now() - timedelta(days=1))
    real_score_version = services.score_version

    def timed_score_version(**kwargs):
        report = real_score_version(**kwargs)
        clock.now += timedelta(seconds=clock.took)
        return report

    monkeypatch.setattr(timezone, "now", lambda: clock.now)
    monkeypatch.setattr(services, "score_version", timed_score_version)
    return clock


def scored_taking(make_submission, clock, gold, *, took: float, waited: float = 1, **fields) -> Submission:
    """A submission received now on the clock, whose job starts `waited` seconds later and whose scoring
    takes `took` seconds."""
    received = clock.now
    submission = make_submission(predictions=dict(gold), created_at=received, **fields)
    clock.now, clock.took = received + timedelta(seconds=waited), took
    assert submission_score(submission_id=submission.pk) == "scored"
    submission.refresh_from_db()
    return submission


def test_a_quick_and_a_slow_scoring_are_released_the_same_delay_after_their_upload(
    make_submission, clock, gold
):
    quick = scored_taking(make_submission, clock, gold, took=0.2)
    slow = scored_taking(make_submission, clock, gold, took=85)
    assert slow.scored_at - slow.started_at == timedelta(seconds=85)  # staff keep the real duration
    offsets = {s.released_at - s.created_at for s in (quick, slow)}
    assert offsets == {timedelta(seconds=DELAY)}


def test_a_job_that_starts_late_in_a_long_queue_is_released_the_bound_after_it_started(
    make_submission, clock, gold
):
    late = scored_taking(make_submission, clock, gold, took=3, waited=600)
    assert late.released_at == late.started_at + timedelta(seconds=BOUND)


def test_a_failed_scoring_is_released_by_the_same_rule(make_submission, clock, gold, monkeypatch):
    def broken(**kwargs):
        clock.now += timedelta(seconds=40)
        raise RuntimeError("the sandbox broke")

    monkeypatch.setattr(services, "score_version", broken)
    received = clock.now
    submission = make_submission(created_at=received)
    assert submission_score(submission_id=submission.pk) == "failed"
    submission.refresh_from_db()
    assert submission.released_at == received + timedelta(seconds=DELAY)


def test_score_history_shows_participants_the_release_time_and_staff_the_real_time(
    client, owner, staff, make_submission, clock, gold
):
    submission = scored_taking(make_submission, clock, gold, took=7)
    clock.now = submission.released_at + timedelta(seconds=1)
    history = {}
    for viewer in (owner, staff):
        _token, raw = api_token_create(user=viewer, name="history")
        url = reverse("api:submission_detail", args=[submission.pk])
        history[viewer] = client.get(url, HTTP_AUTHORIZATION=f"Bearer {raw}").json()["score_history"]
    released = submission.created_at + timedelta(seconds=DELAY)
    assert [entry["scored_at"] for entry in history[owner]] == [released.isoformat()]
    assert [entry["scored_at"] for entry in history[staff]] == [submission.scored_at.isoformat()]
    assert submission.scored_at != released


# A date, a date and a time to the minute, or an ISO 8601 timestamp.
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?)?)?")


def renderings(*moments: datetime) -> set[str]:
    """Every way a page, the API or an export writes these times."""
    return {
        text
        for moment in moments
        for text in (moment.isoformat(), f"{moment:%Y-%m-%d}", f"{moment:%Y-%m-%d %H:%M}")
    }


def test_every_time_a_participant_reads_is_the_received_or_the_released_one(
    client, owner, other_user, make_submission, clock, gold
):
    submission = scored_taking(make_submission, clock, gold, took=80, is_public=True, model_name="Modello")
    # A rescoring, later, whose job takes 30 s: a second entry of the history, at its own release time.
    clock.now = submission.released_at + timedelta(seconds=1)
    rescoring = Rescoring.objects.create(
        version=submission.version, scorer_version="9.9.9", reason="scorer", created_at=clock.now
    )
    started, clock.now = clock.now, clock.now + timedelta(seconds=30)
    submission.mark_scored(
        scores=submission.scores, outcomes=submission.outcomes, rescoring=rescoring, started=started
    )
    clock.now = submission.released_at + timedelta(seconds=1)
    received = submission.created_at
    releases = (received + timedelta(seconds=DELAY), rescoring.created_at + timedelta(seconds=DELAY))
    allowed = renderings(received, *releases)
    _token, raw = api_token_create(user=owner, name="times")
    client.force_login(owner)
    label = submission.version.label
    seen = {
        "page": client.get(submission.get_absolute_url()).content.decode(),
        "list": client.get(reverse("leaderboard:submission_list")).content.decode(),
        "status": client.get(reverse("leaderboard:submission_status", args=[submission.pk])).content.decode(),
        "api": client.get(
            reverse("api:submission_detail", args=[submission.pk]), HTTP_AUTHORIZATION=f"Bearer {raw}"
        ).content.decode(),
        "csv": client.get(reverse("leaderboard:leaderboard_csv", args=[label])).content.decode(),
        "json": client.get(reverse("api:leaderboard"), {"version": label}).content.decode(),
    }
    client.force_login(other_user)
    seen["public page"] = client.get(submission.get_absolute_url()).content.decode()
    for where, text in seen.items():
        assert "Modello" in text or where == "status", where
        shown = set(TIMESTAMP.findall(text))
        assert shown <= allowed, (where, shown - allowed)


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
    assert (answer["status"], answer["scores"], answer["score_history"]) == ("running", None, [])


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
