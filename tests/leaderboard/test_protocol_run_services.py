"""The run's services beyond the runner: the key at rest, the SSRF refusal as the runner meets it, a quota
refusal at submission time, the sweep's limit, two sweeps at once, and the embedded mode's thread."""

from __future__ import annotations

import socket
import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboard import run_services
from leaderboard.jobs import run_protocol
from leaderboard.models import ProtocolRun
from leaderboard.protocols.api_keys import ApiKeyUnreadable, decrypt_api_key, encrypt_api_key
from leaderboard.queue import protocol_queue
from tests.factories import run_make
from tests.leaderboard.protocol_runs import good_model, start_run
from tests.openai_stub import OpenAIStub

pytestmark = pytest.mark.usefixtures("in_process", "no_waiting")

GOLD_KEY = "q1v4JQn3bX9b0vJ6wq2m3Zs0xWlC1yH8d7m5P2aTQ0U="  # settings_test's
NEW_KEY = "0FAlV7iGBoK1gH7r8G8tsEcPJ9f3CChXLO1WyK3a6UU="


def test_the_key_is_encrypted_with_a_key_of_its_own_and_survives_a_gold_key_rotation(settings):
    from cryptography.fernet import Fernet, InvalidToken

    token = encrypt_api_key("sk-secret")
    assert "sk-secret" not in token and decrypt_api_key(token) == "sk-secret"
    with pytest.raises(InvalidToken):
        Fernet(GOLD_KEY.encode()).decrypt(token.encode())  # the gold's own key does not read it
    settings.TERMITE_GOLD_KEY = f"{NEW_KEY},{GOLD_KEY}"
    assert decrypt_api_key(token) == "sk-secret"
    settings.TERMITE_GOLD_KEY = NEW_KEY
    with pytest.raises(ApiKeyUnreadable):
        decrypt_api_key(token)


@pytest.fixture
def resolves_to(monkeypatch):
    """The resolver, stubbed: `model.example.org` resolves to the address given; nothing leaves the host."""

    def stub(address: str) -> None:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET

        def getaddrinfo(host, port, *args, **kwargs):
            if host != "model.example.org":
                raise socket.gaierror(f"unexpected lookup of {host}")
            return [(family, socket.SOCK_STREAM, 6, "", (address, port or 443))]

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    return stub


@pytest.mark.parametrize("address", ["10.0.0.1", "169.254.169.254", "::1"])
def test_an_endpoint_resolving_to_a_private_address_fails_the_run_without_a_request(
    demo_version, owner, resolves_to, address, settings, monkeypatch
):
    settings.TERMITE_PROTOCOL_ALLOW_LOOPBACK = False
    stub = OpenAIStub(lambda request: None)  # never started: its URL is not the one called
    # One request at a time: with two, both may be asked (and refused) before either refusal is stored.
    run = start_run(
        owner, demo_version, stub, endpoint_url="https://model.example.org/v1/chat/completions", concurrency=1
    )
    resolves_to(address)
    connections = []
    monkeypatch.setattr(socket.socket, "connect", lambda sock, target: connections.append(target))
    run_protocol(run.pk)
    run.refresh_from_db()
    assert run.status == ProtocolRun.Status.FAILED
    # The participant learns that the name is refused, never what it resolved to.
    refusal = "An address of model.example.org is not public: the portal only calls public addresses."
    assert run.message.endswith(refusal) and address not in run.message
    assert run.requests_done == 1 and run.exchanges.get().error == refusal
    assert connections == []


def test_a_loopback_endpoint_is_refused_unless_the_setting_allows_it(demo_version, owner, settings):
    settings.TERMITE_PROTOCOL_ALLOW_LOOPBACK = False
    with (
        OpenAIStub(good_model(demo_version)) as stub,
        pytest.raises(run_services.RunRefused, match="must start with https://"),
    ):
        start_run(owner, demo_version, stub)
    assert stub.requests == []


def test_a_run_whose_endpoint_became_refused_fails_without_calling_it(demo_version, owner, settings):
    settings.TERMITE_PROTOCOL_ALLOW_LOOPBACK = True
    with OpenAIStub(good_model(demo_version)) as stub:
        run = start_run(owner, demo_version, stub)
        settings.TERMITE_PROTOCOL_ALLOW_LOOPBACK = False  # turned off while the run waited in the queue
        run_protocol(run.pk)
    run.refresh_from_db()
    assert run.status == ProtocolRun.Status.FAILED and stub.requests == []
    assert run.message.startswith("The run stopped: the portal may not call this endpoint.")
    assert "must start with https://" in run.message


def test_a_quota_refusal_leaves_the_run_finished_with_the_reason_and_it_is_submitted_later(
    demo_version, owner, settings, django_capture_on_commit_callbacks, loopback_allowed, make_submission
):
    settings.TERMITE_DAILY_QUOTA = 1
    make_submission()  # the day's one submission
    with OpenAIStub(good_model(demo_version)) as stub:
        run = start_run(owner, demo_version, stub)
        run_protocol(run.pk)
    run.refresh_from_db()
    assert run.status == ProtocolRun.Status.FINISHED and run.submission is None and run.may_submit
    assert run.message.startswith("Not submitted: You have used your 1 submissions of the last 24 hours")
    settings.TERMITE_DAILY_QUOTA = 5
    with django_capture_on_commit_callbacks(execute=True):
        submission = run_services.run_submit(run=run)
    run.refresh_from_db()
    assert run.submission == submission and run.message == "" and submission.transcript_sha256
    with pytest.raises(run_services.NotSubmitted, match="already submission"):
        run_services.run_submit(run=run)


def test_a_run_that_keeps_dying_fails_after_the_last_attempt(demo_version, owner, settings, loopback_allowed):
    settings.TERMITE_MAX_ATTEMPTS = 2
    run = start_run(owner, demo_version, OpenAIStub(lambda request: None))
    long_ago = timezone.now() - timedelta(minutes=10)
    ProtocolRun.objects.filter(pk=run.pk).update(status="running", attempts=2, heartbeat_at=long_ago)
    assert run_services.requeue_stuck_runs() == []
    run.refresh_from_db()
    assert run.status == ProtocolRun.Status.FAILED and "2 times" in run.message


def test_in_the_embedded_mode_a_run_goes_to_a_thread_of_the_web_process(
    transactional_db, demo_version, owner, loopback_allowed
):
    with OpenAIStub(good_model(demo_version)) as stub:
        run = start_run(owner, demo_version, stub)  # committed at once: the thread starts
        # Joined, not polled: the in-memory test database takes one writer or reader at a time.
        threads = [t for t in threading.enumerate() if t.name == f"protocol-run-{run.pk}"]
        for thread in threads:
            thread.join(timeout=60)
    run.refresh_from_db()
    assert not any(thread.is_alive() for thread in threads) and len(stub.requests) == 25
    assert run.status == ProtocolRun.Status.FINISHED and run.submission.status == "scored"


def test_with_redis_a_run_waits_on_the_protocol_queue_and_the_sweep_leaves_a_live_job_alone(
    demo_version, owner, redis_url, settings, loopback_allowed
):
    settings.REDIS_URL = redis_url
    queue = protocol_queue()
    queue.empty()
    run = start_run(owner, demo_version, OpenAIStub(lambda request: None))
    assert run_services.run_enqueue(run=run)
    job = queue.fetch_job(run_services.run_job_id(run))
    assert queue.name == "protocol" and job.func_name == run_services.RUN_JOB and job.args == (run.pk,)
    run.refresh_from_db()
    assert run_services.requeue_stuck_runs() == []  # queued, with a live job
    queue.empty()
    assert run_services.requeue_stuck_runs() == [run.pk]  # the job was lost: enqueued again
    assert queue.count == 1
    queue.empty()


def test_two_workers_sweeping_at_once_enqueue_each_lost_run_once(
    demo_version, owner, redis_url, settings, monkeypatch
):
    settings.REDIS_URL = redis_url
    queue = protocol_queue()
    queue.empty()
    silent = timezone.now() - timedelta(minutes=10)
    lost = [
        run_make(user=owner, version=demo_version, status="running", attempts=1, heartbeat_at=silent)
        for _ in range(2)
    ]
    # This worker's sweep has read both when it enqueues the first; another worker's sweep then runs
    # whole before this one locks the second.
    enqueue, other_sweep = run_services.run_enqueue, []

    def enqueue_then_another_worker_sweeps(*, run: ProtocolRun) -> bool:
        monkeypatch.setattr(run_services, "run_enqueue", enqueue)
        enqueued = enqueue(run=run)
        other_sweep.extend(run_services.requeue_stuck_runs())
        return enqueued

    monkeypatch.setattr(run_services, "run_enqueue", enqueue_then_another_worker_sweeps)
    this_sweep = run_services.requeue_stuck_runs()
    assert len(this_sweep) == len(other_sweep) == 1
    assert sorted(this_sweep + other_sweep) == sorted(run.pk for run in lost)
    assert sorted(queue.job_ids) == sorted(f"protocol-run-{run.pk}-1" for run in lost)
    queue.empty()
