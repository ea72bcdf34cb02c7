"""The scoring queue runs jobs in a thread of this process without Redis, and on a real worker with it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import django_rq
import pytest
import redis
from django.conf import settings

from leaderboard.queue import QUEUE_NAME, score_in_thread, scoring_queue
from tests.processes import child_env

ROOT = Path(__file__).resolve().parents[2]

JOBS_RAN: list[tuple[str, tuple[int, ...]]] = []


def record_thread(*args: int) -> None:
    JOBS_RAN.append((threading.current_thread().name, args))


def test_without_redis_a_job_runs_in_a_thread_of_this_process_that_commands_wait_for():
    JOBS_RAN.clear()
    thread = score_in_thread(f"{__name__}.record_thread", 7, 8, name="scoring-test")
    assert not thread.daemon  # a command that enqueued ends only once its jobs have
    thread.join(timeout=120)
    assert JOBS_RAN == [("scoring-test", (7, 8))]


@pytest.mark.processes
def test_with_redis_a_job_waits_for_a_worker_and_the_worker_runs_it(redis_url):
    queue = django_rq.get_queue(QUEUE_NAME, connection=redis.Redis.from_url(redis_url), is_async=True)
    queue.empty()
    job = queue.enqueue(os.getpid)
    assert job.get_status() == "queued"
    worker = subprocess.run(
        [sys.executable, "manage.py", "rqworker", QUEUE_NAME, "--burst"],
        cwd=ROOT,
        env={**child_env(), "REDIS_URL": redis_url, "DJANGO_SETTINGS_MODULE": "termite_site.settings_test"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert worker.returncode == 0, worker.stderr[-2000:]
    job.refresh()
    assert job.get_status() == "finished"
    assert job.return_value() != os.getpid()


def test_the_configured_queue_is_the_real_redis_when_redis_url_is_set(redis_url):
    if not settings.REDIS_URL:
        pytest.skip("the suite was started without REDIS_URL")
    queue = scoring_queue()
    assert queue.is_async
    assert queue.connection.ping()
