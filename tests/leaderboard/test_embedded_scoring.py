"""The embedded mode (no Redis) answers an upload at once and scores it in a thread of the web process, so
that how long the request takes tells nothing of how long its queries run; the result is released by the
same rule as with workers."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard import services
from leaderboard.models import Submission
from termite_site.accounts.services import api_token_create
from tests.demo import predictions_jsonl


@dataclass
class HeldScorer:
    release: threading.Event = field(default_factory=threading.Event)
    ran_in: list[str] = field(default_factory=list)


@pytest.fixture
def held_scorer(settings, monkeypatch) -> HeldScorer:
    """The embedded mode, with a scorer that waits until the test lets it go, and says in which thread it
    ran. Run in the test's own thread (inside the request), it cannot wait: nothing would ever let it go."""
    settings.REDIS_URL = ""
    held = HeldScorer()
    real_score_version = services.score_version

    def score_version(**kwargs):
        held.ran_in.append(threading.current_thread().name)
        if threading.current_thread() is not threading.main_thread():
            assert held.release.wait(timeout=120)
        return real_score_version(**kwargs)

    monkeypatch.setattr(services, "score_version", score_version)
    return held


def join_threads(prefix: str) -> None:
    """Wait for the embedded queue's threads whose names start with `prefix` to end: joined, never polled."""
    for thread in threading.enumerate():
        if thread.name.startswith(prefix):
            thread.join(timeout=120)
            assert not thread.is_alive()


def test_an_upload_is_answered_queued_while_its_scoring_waits_in_a_thread(
    transactional_db, client, owner, demo_version, gold, held_scorer
):
    # transactional_db: the scoring thread has a database connection of its own, which sees only what
    # the test commits.
    _token, raw = api_token_create(user=owner, name="embedded")
    upload = SimpleUploadedFile("p.jsonl", predictions_jsonl(gold))
    response = client.post(
        reverse("api:submissions"),
        {"model_name": "Modello", "predictions": upload},
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 201, response.content
    answer = response.json()
    assert (answer["status"], answer["scores"], answer["score_history"], answer["error"]) == (
        "queued",
        None,
        [],
        None,
    )
    submission = Submission.objects.get(pk=answer["id"])
    assert submission.status in ("queued", "running")
    held_scorer.release.set()
    join_threads(f"submission-{submission.pk}-")  # named by its job id (services.job_id)
    submission.refresh_from_db()
    assert (submission.status, submission.ea) == ("scored", 1.0)
    assert held_scorer.ran_in == [f"submission-{submission.pk}-0"]  # its job's thread, not the request's
