"""The scoring queue: django-rq on Redis when REDIS_URL is set, in-process otherwise; and its sibling, the
protocol queue, for protocol runs (on Redis only: leaderboard/run_services.py says what the embedded mode
does instead)."""

from __future__ import annotations

from functools import cache

import django_rq
import redis
from django.conf import settings
from rq import Queue

QUEUE_NAME = "scoring"
PROTOCOL_QUEUE_NAME = "protocol"


@cache
def _in_process_connection() -> redis.Redis:
    # RQ's synchronous mode still records each job in a Redis; with no server configured an
    # in-memory one serves, so the embedded default scores without any service running. Imported here:
    # a portal on a real Redis never loads it.
    import fakeredis  # noqa: PLC0415

    return fakeredis.FakeRedis()


@cache
def _connection(url: str) -> redis.Redis:
    # Short timeouts: an upload must not hang when Redis is down; the sweeper enqueues it later.
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)


def scoring_queue() -> Queue:
    """The queue, enqueueing at once: callers enqueue from `transaction.on_commit` themselves, so that an
    unreachable Redis raises where they can catch it rather than in a deferred callback."""
    if settings.REDIS_URL:
        connection, is_async = _connection(settings.REDIS_URL), True
    else:
        connection, is_async = _in_process_connection(), False
    return django_rq.get_queue(QUEUE_NAME, connection=connection, is_async=is_async, commit_mode="auto")


def protocol_queue() -> Queue:
    """The protocol runs' queue, on the scoring queue's Redis; only used when REDIS_URL is set."""
    return django_rq.get_queue(
        PROTOCOL_QUEUE_NAME, connection=_connection(settings.REDIS_URL), is_async=True, commit_mode="auto"
    )
