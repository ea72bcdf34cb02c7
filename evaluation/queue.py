"""The scoring queue: django-rq on Redis when REDIS_URL is set, in-process otherwise."""

from __future__ import annotations

from functools import cache

import django_rq
from django.conf import settings
from rq import Queue

QUEUE_NAME = "scoring"


@cache
def _in_process_connection():
    # RQ's synchronous mode still records each job in a Redis; with no server configured an
    # in-memory one serves, so the embedded default scores without any service running.
    import fakeredis

    return fakeredis.FakeRedis()


def scoring_queue() -> Queue:
    if settings.REDIS_URL:
        return django_rq.get_queue(QUEUE_NAME)
    return django_rq.get_queue(QUEUE_NAME, is_async=False, connection=_in_process_connection())
