"""What /healthz reports: each part the portal needs, whether it answers, and what it says.

- `database`: `SELECT 1` on the default connection.
- `redis`, only when REDIS_URL is set: a PING, with short timeouts, so that a dead Redis fails the check at
  once instead of hanging the load balancer's probe.
- `queues`: the depth of each queue of settings.RQ_QUEUES (scoring, protocol, imports). A deep queue is
  busy, not broken: it never fails the check.
- `workers`: RQ's registry of workers in Redis (each worker stamps its own heartbeat there) and the newest
  heartbeat among them. No worker, or none heard from for TERMITE_HEALTH_WORKER_SILENCE_SECONDS, fails:
  uploads would wait in the queue for ever.

In the embedded mode (no REDIS_URL) jobs run in the web process: no Redis, no queue, no worker is expected.
The report names a failing part and the kind of error, never an address or a message that could say where
the services live (the page is public). Its figures (a queue's depth, a heartbeat's age and time) go to staff
only (`shown_to`): polled by a participant, a queue's depth falls when the job ahead leaves it, which would
time another file's scoring, a function of the hidden data.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any

import redis
from django.conf import settings
from django.db import DatabaseError, connection
from rq import Queue, Worker
from rq.worker import BaseWorker

OK = "ok"
FAILING = "failing"
UNKNOWN = "unknown"


def health_report() -> dict[str, Any]:
    """Every part's state, and `failing`: the names of the parts that fail (empty when all is well)."""
    parts = {"database": _database()}
    if settings.REDIS_URL:
        parts |= _redis_parts(_client(settings.REDIS_URL))
    else:
        parts["redis"] = {"status": "not configured"}
        parts["workers"] = {"status": "not expected", "note": "embedded mode: jobs run in the web process"}
    failing = [name for name, part in parts.items() if part["status"] == FAILING]
    return {"status": FAILING if failing else OK, "failing": failing, **parts}


# What the public report keeps of each part: its state and why it fails, never a figure.
PUBLIC_FIELDS = ("status", "error", "note")


def shown_to(report: dict[str, Any], *, staff: bool) -> dict[str, Any]:
    """`report` as a visitor may read it: staff see it all, anyone else each part's state only."""
    if staff:
        return report
    return {
        name: {key: value for key, value in part.items() if key in PUBLIC_FIELDS}
        if isinstance(part, dict)
        else part
        for name, part in report.items()
    }


def _database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as error:
        return {"status": FAILING, "error": type(error).__name__}
    return {"status": OK}


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)


def _redis_parts(client: redis.Redis) -> dict[str, dict[str, Any]]:
    try:
        client.ping()
        depths = {name: Queue(name, connection=client).count for name in settings.RQ_QUEUES}
        workers = Worker.all(connection=client)
    except redis.RedisError as error:
        unknown = {"status": UNKNOWN, "note": "Redis does not answer"}
        return {
            "redis": {"status": FAILING, "error": type(error).__name__},
            "queues": unknown,
            "workers": unknown,
        }
    return {"redis": {"status": OK}, "queues": {"status": OK, "depth": depths}, "workers": _workers(workers)}


def _workers(workers: list[BaseWorker]) -> dict[str, Any]:
    heartbeats = [worker.last_heartbeat for worker in workers if worker.last_heartbeat is not None]
    if not heartbeats:
        return {"status": FAILING, "count": 0, "error": "no worker is registered"}
    last = max(heartbeats)
    silent = (datetime.now(UTC) - last).total_seconds()
    state = {"count": len(workers), "last_heartbeat": last.isoformat(), "seconds_since": round(silent)}
    if silent > settings.TERMITE_HEALTH_WORKER_SILENCE_SECONDS:
        return {"status": FAILING, **state, "error": "no worker heard from lately"}
    return {"status": OK, **state}
