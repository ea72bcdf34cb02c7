"""A scoring job's heartbeat: stamped while it scores, by its own attempt only, and never after."""

from __future__ import annotations

import time
from datetime import timedelta

from django.utils import timezone

from leaderboard.liveness import heartbeat
from leaderboard.models import Submission
from tests.processes import wait_for

LONG_AGO = timedelta(minutes=1)


def heartbeat_of(submission: Submission):
    return Submission.objects.values_list("heartbeat_at", flat=True).get(pk=submission.pk)


def test_while_a_job_scores_its_heartbeat_is_stamped_every_beat_and_stops_with_it(
    transactional_db, make_submission, settings
):
    settings.TERMITE_HEARTBEAT_SECONDS = 0.05
    silent = timezone.now() - LONG_AGO
    submission = make_submission(status="running", attempts=1, started_at=silent, heartbeat_at=silent)
    with heartbeat(submission_id=submission.pk, attempt=1):
        first = wait_for(lambda: heartbeat_of(submission) > silent and heartbeat_of(submission), seconds=5)
        wait_for(lambda: heartbeat_of(submission) > first, seconds=5, what="a second beat")
    last = heartbeat_of(submission)
    time.sleep(0.3)
    assert heartbeat_of(submission) == last


def test_a_heartbeat_keeps_alive_only_the_attempt_that_started_it(
    transactional_db, make_submission, settings
):
    settings.TERMITE_HEARTBEAT_SECONDS = 0.05
    silent = timezone.now() - LONG_AGO
    submission = make_submission(status="running", attempts=2, started_at=silent, heartbeat_at=silent)
    with heartbeat(submission_id=submission.pk, attempt=1):
        time.sleep(0.3)
    assert heartbeat_of(submission) == silent
