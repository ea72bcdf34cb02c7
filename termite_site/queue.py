"""Running a job: on django-rq when REDIS_URL is set; in the embedded mode (no Redis), in a thread of this
process. The apps' own queues are built on it: `leaderboard/queue.py` (scoring, protocol runs) and
`evaluation/imports.py` (adding a database).

A job is a dotted path and primary keys, as RQ stores it. In a thread it runs as a worker would run it,
never in the request that enqueued it: the request is answered at once.
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


@cache
def _connection(url: str) -> redis.Redis:
    # Short timeouts: a request must not hang when Redis is down; the sweeps enqueue its work later.
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)


def rq_queue(name: str) -> Queue:
    """The queue `name` of settings.RQ_QUEUES on Redis (REDIS_URL must be set), enqueueing at once: callers
    enqueue from `transaction.on_commit` themselves, so that an unreachable Redis raises where they can
    catch it rather than in a deferred callback."""
    return django_rq.get_queue(
        name, connection=_connection(settings.REDIS_URL), is_async=True, commit_mode="auto"
    )


def start_thread(
    job: str, *args: int, name: str, daemon: bool, turns: threading.Lock | None = None
) -> threading.Thread:
    """Run a job in a thread of this process, after the jobs holding `turns` (if given) before it. A
    daemon thread does not keep a process that ends waiting for it."""

    def run() -> None:
        if turns is None:
            run_job(job, *args)
        else:
            with turns:
                run_job(job, *args)

    thread = threading.Thread(target=run, name=name, daemon=daemon)
    thread.start()
    return thread


def run_job(job: str, *args: int) -> None:
    """Run a job here and now, as a worker would: an error is logged by its type only (a message could
    quote a query), and the thread's own database connections are closed, since nothing else closes them."""
    try:
        import_string(job)(*args)
    except Exception as error:
        logger.error("%s%s: stopped by %s", job, args, type(error).__name__)
    finally:
        connections.close_all()
