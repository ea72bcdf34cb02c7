"""Knowing that a scoring job is alive: the heartbeat it stamps on its submission while it scores.

A job can die without a word: its worker SIGKILLed, its container stopped, the embedded web process
restarted mid-request. Its submission then stays `running`. RQ's own signs of that are slow: a killed
worker's job keeps the status `started`, and RQ 3.0 expires its StartedJobRegistry entry and the worker's
key only `job_monitoring_interval + 60` seconds after the last beat (the 60 is fixed), and the embedded
mode has no worker at all. So the job says it is alive itself, on the row the sweeper reads:
`heartbeat_at`, stamped every TERMITE_HEARTBEAT_SECONDS by a thread beside the scoring. Stamps and the
check both use the database's clock, so workers on other machines need not agree on the time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import connections
from django.db.models import Q
from django.db.models.functions import Now

from leaderboard.models import Submission

logger = logging.getLogger(__name__)

# One late beat is a busy machine; three missed in a row is a dead job.
HEARTBEATS_MISSED = 3


def silent() -> Q:
    """Running submissions whose job has missed HEARTBEATS_MISSED beats."""
    window = timedelta(seconds=HEARTBEATS_MISSED * settings.TERMITE_HEARTBEAT_SECONDS)
    return Q(status=Submission.Status.RUNNING, heartbeat_at__lt=Now() - window)


@contextmanager
def heartbeat(*, submission_id: int, attempt: int) -> Iterator[None]:
    """Stamp the submission's heartbeat every TERMITE_HEARTBEAT_SECONDS while the block runs.

    Only while it is `running` in this `attempt`: a beat must not keep a later attempt alive. The claim
    stamps the first beat, so a block shorter than one beat never touches the database.
    """
    stop = threading.Event()
    alive = Submission.objects.filter(pk=submission_id, status=Submission.Status.RUNNING, attempts=attempt)

    def beat() -> None:
        try:
            while not stop.wait(settings.TERMITE_HEARTBEAT_SECONDS):
                try:
                    alive.update(heartbeat_at=Now())
                except Exception as error:  # a missed beat must never stop the scoring
                    logger.warning(
                        "submission %s: heartbeat missed (%s)", submission_id, type(error).__name__
                    )
                    connections.close_all()  # a dropped connection is opened afresh at the next beat
        finally:
            connections.close_all()  # this thread's own connections; nothing else closes them

    thread = threading.Thread(target=beat, name=f"heartbeat-{submission_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
