"""The queues: scoring, and its sibling for protocol runs, on django-rq when REDIS_URL is set; in the
embedded mode (no Redis), threads of the web process.

A job is a dotted path and primary keys, as RQ stores it. In the embedded mode it runs in a thread, never
in the request that enqueued it: an upload is answered at once, so its response time tells nothing of how
long its queries run. A process that dies takes its threads along; the sweep it runs when it starts again
(`services.requeue_stuck_after_start`, `run_services.requeue_runs_after_start`) picks their work up.
"""

from __future__ import annotations

import logging
import threading
from functools import cache

import django_rq
import redis
from django.conf import settings
from django.db import connections
from django.utils.module_loading import import_string
from rq import Queue

logger = logging.getLogger(__name__)

QUEUE_NAME = "scoring"
PROTOCOL_QUEUE_NAME = "protocol"

# Embedded scoring jobs take turns, as on one worker: each runs a sandbox, and a rescoring or a burst of
# uploads running all at once would hold as many.
_SCORING_TURNS = threading.Lock()


@cache
def _connection(url: str) -> redis.Redis:
    # Short timeouts: an upload must not hang when Redis is down; the sweeper enqueues it later.
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)


def scoring_queue() -> Queue:
    """The scoring queue on Redis (REDIS_URL must be set), enqueueing at once: callers enqueue from
    `transaction.on_commit` themselves, so that an unreachable Redis raises where they can catch it rather
    than in a deferred callback."""
    return django_rq.get_queue(
        QUEUE_NAME, connection=_connection(settings.REDIS_URL), is_async=True, commit_mode="auto"
    )


def protocol_queue() -> Queue:
    """The protocol runs' queue, on the scoring queue's Redis; only used when REDIS_URL is set."""
    return django_rq.get_queue(
        PROTOCOL_QUEUE_NAME, connection=_connection(settings.REDIS_URL), is_async=True, commit_mode="auto"
    )


def enqueue_scoring(job: str, *args: int, job_id: str) -> None:
    """Put a scoring job on the scoring queue, or in the embedded mode in a thread (`score_in_thread`).
    Raises when Redis is unreachable; callers keep the work for the sweep then."""
    if settings.REDIS_URL:
        scoring_queue().enqueue(job, *args, job_id=job_id)
    else:
        score_in_thread(job, *args, name=job_id)


def score_in_thread(job: str, *args: int, name: str) -> threading.Thread:
    """Run a scoring job in a thread of this process, after the scoring jobs before it. Not a daemon: a
    command that enqueues (`requeue_stuck`, `rescore`) ends only once its jobs have; a scoring job is bounded
    (TERMITE_SCORING_BOUND_SECONDS)."""

    def take_turn() -> None:
        with _SCORING_TURNS:
            _run_job(job, *args)

    thread = threading.Thread(target=take_turn, name=name, daemon=False)
    thread.start()
    return thread


def run_in_thread(job: str, *args: int, name: str) -> threading.Thread:
    """Run a protocol run's job in a daemon thread of this process: a run waits on an endpoint for hours,
    and a process that ends must not wait for it (the next one's sweep resumes it)."""
    thread = threading.Thread(target=_run_job, args=(job, *args), name=name, daemon=True)
    thread.start()
    return thread


def _run_job(job: str, *args: int) -> None:
    """Run a job here and now, as a worker would: an error is logged by its type only (a message could
    quote a query), and the thread's own database connections are closed, since nothing else closes them."""
    try:
        import_string(job)(*args)
    except Exception as error:
        logger.error("%s%s: stopped by %s", job, args, type(error).__name__)
    finally:
        connections.close_all()
