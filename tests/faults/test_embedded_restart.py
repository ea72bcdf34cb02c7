"""The embedded portal (no Redis: jobs run in the web process) restarted after dying mid-scoring."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboard.models import Submission
from tests.demo import demo_gold
from tests.processes import ROOT, free_port, portal_env, require_postgresql, stop, wait_for
from tests.services import require_service

pytestmark = pytest.mark.processes


@pytest.fixture
def shared_database(transactional_db):
    """The test database, shared with a portal process; PostgreSQL, since SQLite's is in memory."""
    require_service("DATABASE_URL", 5432)
    require_postgresql()


def status_of(submission: Submission) -> str:
    return Submission.objects.values_list("status", flat=True).get(pk=submission.pk)


def test_a_submission_left_running_by_a_dead_web_process_is_requeued_and_scored_when_the_portal_starts(
    shared_database, owner, demo_version
):
    silent = timezone.now() - timedelta(minutes=1)
    submission = Submission.objects.create(
        user=owner,
        version=demo_version,
        model_name="M",
        predictions=demo_gold(),
        file_name="p.jsonl",
        file_sha256="0" * 64,
        file_format="jsonl",
        scorer_version="1.0.0",
        status="running",
        attempts=1,
        started_at=silent,
        heartbeat_at=silent,
    )
    env = portal_env(REDIS_URL="", TERMITE_HEARTBEAT_SECONDS="0.2", TERMITE_STUCK_AFTER_SECONDS="3600")
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "termite_site.wsgi:application",
        "-b",
        f"127.0.0.1:{free_port()}",
    ]
    server = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(
            lambda: status_of(submission) == "scored", seconds=60, what="the restarted portal to score it"
        )
    finally:
        stop(server)
    submission.refresh_from_db()
    assert (submission.status, submission.attempts, submission.ea) == ("scored", 2, 1.0)
