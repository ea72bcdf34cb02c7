"""/healthz: the database, Redis, the queues' depth and the workers' last heartbeat; 503 naming what fails.

Workers are arranged in RQ's own registry in the real Redis, through RQ's calls (a worker registering its
birth, as `rqworker` does when it starts); no process is started."""

from __future__ import annotations

from datetime import timedelta

import pytest
import redis
from django.db import OperationalError, connection
from django.urls import reverse
from rq import Queue, Worker
from rq.utils import now, utcformat

from tests.processes import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_client(redis_url, settings):
    """The real Redis, as the portal's; its registry of workers and its queues emptied before and after
    (no worker runs in this lane, and other tests leave jobs on the queues)."""
    settings.REDIS_URL = redis_url
    client = redis.Redis.from_url(redis_url)

    def empty() -> None:
        for worker in Worker.all(connection=client):
            worker.register_death()
        for name in settings.RQ_QUEUES:
            Queue(name, connection=client).empty()

    empty()
    yield client
    empty()
    client.close()


@pytest.fixture
def staff_client(client, staff):
    """Staff read the whole report, figures included."""
    client.force_login(staff)
    return client


def worker_born(client: redis.Redis, *, silent_for: timedelta = timedelta(0)) -> Worker:
    worker = Worker(["scoring", "protocol", "imports"], connection=client)
    worker.register_birth()
    client.hset(worker.key, "last_heartbeat", utcformat(now() - silent_for))
    return worker


def test_in_the_embedded_mode_it_checks_the_database_and_expects_no_redis_and_no_worker(client, in_process):
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "failing": [],
        "database": {"status": "ok"},
        "redis": {"status": "not configured"},
        "workers": {"status": "not expected", "note": "embedded mode: jobs run in the web process"},
    }
    assert "no-cache" in response["Cache-Control"]


def test_it_answers_503_naming_the_database_when_the_database_fails(client, in_process, monkeypatch):
    def refuse():
        raise OperationalError("connection to server failed")

    monkeypatch.setattr(connection, "cursor", refuse)
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "failing" and body["failing"] == ["database"]
    # The kind of error only: its message could say where the database lives.
    assert body["database"] == {"status": "failing", "error": "OperationalError"}


def test_it_answers_503_naming_redis_when_redis_does_not_answer(client, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["redis"]
    assert body["redis"] == {"status": "failing", "error": "ConnectionError"}
    assert body["queues"]["status"] == body["workers"]["status"] == "unknown"
    assert body["database"] == {"status": "ok"}
    assert "127.0.0.1" not in response.content.decode()


def test_with_a_worker_heard_from_it_answers_200_with_each_queues_depth(staff_client, redis_client):
    worker_born(redis_client, silent_for=timedelta(seconds=30))
    Queue("scoring", connection=redis_client).enqueue("builtins.len", "abc")
    response = staff_client.get(reverse("healthz"))
    assert response.status_code == 200
    body = response.json()
    assert body["failing"] == [] and body["redis"] == {"status": "ok"}
    assert body["queues"] == {"status": "ok", "depth": {"scoring": 1, "protocol": 0, "imports": 0}}
    workers = body["workers"]
    assert workers["status"] == "ok" and workers["count"] == 1
    assert 30 <= workers["seconds_since"] < 60


def test_with_no_worker_registered_it_answers_503_naming_the_workers(staff_client, redis_client):
    response = staff_client.get(reverse("healthz"))
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["workers"]
    assert body["workers"] == {"status": "failing", "count": 0, "error": "no worker is registered"}


def test_a_worker_silent_for_longer_than_the_threshold_fails_the_check(staff_client, redis_client, settings):
    silence = settings.TERMITE_HEALTH_WORKER_SILENCE_SECONDS
    worker_born(redis_client, silent_for=timedelta(seconds=silence + 60))
    response = staff_client.get(reverse("healthz"))
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["workers"]
    assert body["workers"]["error"] == "no worker heard from lately"
    assert body["workers"]["seconds_since"] >= silence + 60
    # One heard from lately is enough.
    worker_born(redis_client)
    assert staff_client.get(reverse("healthz")).status_code == 200


def test_anyone_but_staff_reads_each_parts_state_and_no_figure(client, redis_client):
    """A queue's depth or a heartbeat's age, polled, would time other files' scoring (the hidden data)."""
    worker_born(redis_client, silent_for=timedelta(seconds=30))
    Queue("scoring", connection=redis_client).enqueue("builtins.len", "abc")
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    body = response.json()
    assert (
        body["failing"] == [] and body["queues"] == {"status": "ok"} and body["workers"] == {"status": "ok"}
    )
    assert body["database"] == body["redis"] == {"status": "ok"}
