"""The runner against a real OpenAI-compatible server on 127.0.0.1 (tests/openai_stub.py): the protocol's
conversations, extraction, retries, budgets, resume, concurrency and cancel."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.models import ParticipantsSee
from evaluation.services import version_set_participants_see
from leaderboard import run_services
from leaderboard.jobs import run_protocol
from leaderboard.models import ProtocolRun, RunExchange, Submission
from leaderboard.protocols.runner import backoff
from tests.leaderboard.protocol_runs import (
    INTERPRETATION,
    fenced,
    gold_by_question_text,
    good_model,
    start_run,
)
from tests.openai_stub import MALFORMED, NO_CHOICES, OpenAIStub, answer, failure

pytestmark = pytest.mark.usefixtures("in_process", "loopback_allowed")

QUESTIONS = 23  # the demo's scored questions
DATABASES = 2


def execute(run, django_capture_on_commit_callbacks) -> ProtocolRun:
    with django_capture_on_commit_callbacks(execute=True):
        run_protocol(run.pk)
    run.refresh_from_db()
    return run


def test_a_run_asks_the_papers_conversations_and_becomes_a_scored_marked_submission(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting
):
    with OpenAIStub(good_model(demo_version)) as stub:
        run = execute(start_run(owner, demo_version, stub), django_capture_on_commit_callbacks)
    assert run.status == ProtocolRun.Status.FINISHED, run.message
    # One first turn per database, one conversation per question, each asked once.
    assert len(stub.requests) == DATABASES + QUESTIONS
    assert set(stub.questions_asked().values()) == {1}
    conversation = next(r for r in stub.requests if not r.is_first_turn).messages
    assert [m["role"] for m in conversation] == ["user", "assistant", "user"]
    assert conversation[0]["content"].startswith("Considera il seguente database:\n")
    assert "CREATE TABLE" in conversation[0]["content"]
    assert conversation[1]["content"] == INTERPRETATION
    assert conversation[2]["content"].startswith(
        "Traduci in SQL la seguente query. Rispondi usando esclusivamente linguaggio SQL.\n"
    )
    assert (
        stub.requests[0].payload["model"] == "stub-model" and stub.requests[0].payload["temperature"] == 0.0
    )
    assert stub.requests[0].headers["Authorization"] == "Bearer sk-test-secret-key-123"
    assert (run.tasks_done, run.tasks_total, run.requests_done, run.errors) == (25, 25, 25, 0)
    assert run.tokens_used == 250 and run.api_key_encrypted == ""  # the key is deleted when the run ends

    submission = run.submission
    assert submission.status == Submission.Status.SCORED and submission.ea == 1.0
    assert submission.portal_protocol == "termite-2turn-it/1"
    assert submission.portal_endpoint_host == "127.0.0.1"
    assert submission.transcript_sha256 == run.transcript_sha256 == run_services.transcript_sha256(run=run)
    assert submission.missing_count == 0 and submission.model_name == "Modello via protocollo"
    # The protocol fills in how the predictions were made.
    assert (submission.shots, submission.instruction_language, submission.sampling) == (0, "it", "greedy")
    assert submission.schema_format == "mysql-ddl"


def test_the_sql_is_extracted_and_a_prose_answer_counts_as_not_submitted(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting
):
    by_text = gold_by_question_text(demo_version)
    prose = sorted(by_text)[0]

    def respond(request):
        if request.is_first_turn:
            return answer(INTERPRETATION)
        text = request.last.rsplit("\n", 1)[-1]
        return answer("Non saprei rispondere." if text == prose else fenced(by_text[text]))

    with OpenAIStub(respond) as stub:
        run = execute(start_run(owner, demo_version, stub), django_capture_on_commit_callbacks)
    answered = run.exchanges.get(kind="question", ok=True, sql="")
    assert answered.answer == "Non saprei rispondere."
    assert run.submission.missing_count == 1 and len(run.submission.predictions) == QUESTIONS - 1
    fenced_one = run.exchanges.filter(kind="question").exclude(sql="").first()
    assert not fenced_one.sql.startswith("```") and "Spero" not in fenced_one.sql


def test_429_5xx_and_malformed_answers_are_retried_with_backoff_then_answered(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting, settings
):
    settings.TERMITE_PROTOCOL_ATTEMPTS = 5
    settings.TERMITE_PROTOCOL_BACKOFF_SECONDS = 1.0
    good = good_model(demo_version)
    unlucky = sorted(gold_by_question_text(demo_version))[2]
    failures = [failure(429, **{"Retry-After": "7"}), failure(503), MALFORMED, NO_CHOICES]

    def respond(request):
        if request.last.endswith("\n" + unlucky) and request.asked_before < len(failures):
            return failures[request.asked_before]
        return good(request)

    with OpenAIStub(respond) as stub:
        run = execute(start_run(owner, demo_version, stub), django_capture_on_commit_callbacks)
    assert run.status == ProtocolRun.Status.FINISHED and stub.questions_asked()[unlucky] == 5
    (question,) = set(run.exchanges.filter(ok=False).values_list("question_id", flat=True))
    attempts = run.exchanges.filter(question_id=question).order_by("attempt")
    assert [(a.attempt, a.http_status, a.error, a.ok) for a in attempts] == [
        (1, 429, "HTTP 429", False),
        (2, 503, "HTTP 503", False),
        (3, 200, "malformed answer: not JSON", False),
        (4, 200, "malformed answer: no choices", False),
        (5, 200, "", True),
    ]
    # Waits: the 429's Retry-After, then 2, 4, 8 seconds, each jittered down to half at most.
    assert (
        no_waiting[0] == 7 and 1 <= no_waiting[1] <= 2 and 2 <= no_waiting[2] <= 4 and 4 <= no_waiting[3] <= 8
    )
    assert run.errors == 4 and run.submission.ea == 1.0


def test_a_question_that_keeps_failing_is_given_up_and_gets_no_prediction(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting, settings
):
    settings.TERMITE_PROTOCOL_ATTEMPTS = 3
    by_text = gold_by_question_text(demo_version)
    doomed = sorted(by_text)[1]
    good = good_model(demo_version)

    def respond(request):
        if request.last.endswith("\n" + doomed):
            return failure(500)
        return good(request)

    with OpenAIStub(respond) as stub:
        run = execute(start_run(owner, demo_version, stub), django_capture_on_commit_callbacks)
    assert stub.questions_asked()[doomed] == 3
    assert run.status == ProtocolRun.Status.FINISHED and run.tasks_done == run.tasks_total
    assert run.submission.missing_count == 1
    assert len(no_waiting) == 2  # between the three attempts


def test_an_endpoint_that_refuses_the_key_fails_the_run_at_once(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting
):
    with OpenAIStub(lambda request: failure(401)) as stub:
        run = execute(start_run(owner, demo_version, stub, concurrency=1), django_capture_on_commit_callbacks)
    assert run.status == ProtocolRun.Status.FAILED
    assert "HTTP 401" in run.message and run.submission is None
    assert len(stub.requests) == 1 and no_waiting == []


def test_a_slow_answer_past_the_timeout_is_retried(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting, settings
):
    settings.TERMITE_PROTOCOL_TIMEOUT = 0.3
    good = good_model(demo_version)

    def respond(request):
        if request.is_first_turn and request.asked_before == 0:
            return answer(INTERPRETATION, delay=1.0)
        return good(request)

    with OpenAIStub(respond) as stub:
        run = execute(start_run(owner, demo_version, stub), django_capture_on_commit_callbacks)
    slow = run.exchanges.filter(kind="interpretation", ok=False)
    assert slow.count() == 2 and all("did not answer within 0.3 seconds" in e.error for e in slow)
    assert run.status == ProtocolRun.Status.FINISHED and run.submission.ea == 1.0


@pytest.mark.parametrize(
    ("budget", "spent"),
    [
        (run_services.Budget(max_requests=5, max_seconds=600), "5 requests"),
        (run_services.Budget(max_requests=500, max_seconds=600, max_total_tokens=30), "30 tokens"),
        (run_services.Budget(max_requests=500, max_seconds=1), "1 seconds"),
    ],
)
def test_a_spent_budget_stops_the_run_keeping_what_was_answered(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting, budget, spent
):
    slow = budget.max_seconds == 1
    model = good_model(demo_version, delay=0.3) if slow else good_model(demo_version)
    with OpenAIStub(model) as stub:
        run = execute(
            start_run(owner, demo_version, stub, budget=budget, concurrency=1),
            django_capture_on_commit_callbacks,
        )
    assert run.status == ProtocolRun.Status.BUDGET_EXHAUSTED
    assert spent in run.message and run.submission is None
    assert 0 < run.tasks_done < run.tasks_total
    assert len(stub.requests) <= budget.max_requests
    if budget.max_total_tokens:
        assert len(stub.requests) == 3  # 10 tokens an answer: the fourth request finds 30 spent
    # The owner may submit what was answered, as an incomplete run.
    with django_capture_on_commit_callbacks(execute=True):
        submission = run_services.run_submit(run=run)
    assert submission.portal_protocol and submission.missing_count > 0


def test_a_run_resumed_after_a_crash_never_asks_again_what_was_answered(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting, monkeypatch
):
    class Crash(BaseException):  # as the process dying: nothing of the runner's may catch it
        pass

    stored = RunExchange.objects.create
    count = {"n": 0}

    def crashing_create(**fields):
        count["n"] += 1
        if count["n"] == 10:
            raise Crash
        return stored(**fields)

    with OpenAIStub(good_model(demo_version)) as stub:
        run = start_run(owner, demo_version, stub, concurrency=1)
        monkeypatch.setattr(RunExchange.objects, "create", crashing_create)
        with pytest.raises(Crash):
            run_protocol(run.pk)
        monkeypatch.setattr(RunExchange.objects, "create", stored)
        answered = set(run.exchanges.filter(kind="question", ok=True).values_list("question_id", flat=True))
        assert len(answered) == 9 - DATABASES
        # The sweep finds it running with a silent heartbeat, and enqueues it again.
        enqueued = []
        monkeypatch.setattr(run_services, "run_enqueue", lambda run: enqueued.append(run.pk))
        ProtocolRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
        assert run_services.requeue_stuck_runs() == [run.pk] == enqueued
        before = len(stub.requests)
        run = execute(run, django_capture_on_commit_callbacks)
    assert run.status == ProtocolRun.Status.FINISHED and run.attempts == 2 and run.submission.ea == 1.0
    texts = dict(demo_version.questions.values_list("public_id", "text"))
    asked_again = {r.last.rsplit("\n", 1)[-1] for r in stub.requests[before:]}
    assert not asked_again & {texts[q] for q in answered}
    assert not any(r.is_first_turn for r in stub.requests[before:])  # the interpretations are reused
    assert run.exchanges.filter(kind="question", ok=True).count() == QUESTIONS


def test_no_more_requests_are_in_flight_than_the_run_allows(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting, settings
):
    settings.TERMITE_PROTOCOL_MAX_CONCURRENCY = 3
    with OpenAIStub(good_model(demo_version, delay=0.05)) as stub:
        run = execute(start_run(owner, demo_version, stub, concurrency=3), django_capture_on_commit_callbacks)
    assert run.status == ProtocolRun.Status.FINISHED
    assert stub.max_in_flight == 3
    settings.TERMITE_PROTOCOL_MAX_CONCURRENCY = 1  # the site's cap bounds a run that asked for more
    with OpenAIStub(good_model(demo_version, delay=0.02)) as stub:
        run = start_run(owner, demo_version, stub, concurrency=1)
        ProtocolRun.objects.filter(pk=run.pk).update(concurrency=3)
        execute(run, django_capture_on_commit_callbacks)
    assert stub.max_in_flight == 1


def test_a_cancelled_run_sends_nothing_more(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting, monkeypatch
):
    stored = RunExchange.objects.create
    sent_by_then = []

    def cancel_at_the_fourth(**fields):
        exchange = stored(**fields)
        if RunExchange.objects.count() == 4:
            run_services.run_cancel(run=exchange.run)
            sent_by_then.append(len(stub.requests))
        return exchange

    monkeypatch.setattr(RunExchange.objects, "create", cancel_at_the_fourth)
    with OpenAIStub(good_model(demo_version)) as stub:
        run = execute(start_run(owner, demo_version, stub, concurrency=1), django_capture_on_commit_callbacks)
    assert run.status == ProtocolRun.Status.CANCELLED and run.submission is None
    # The beat after that answer sees it: past what the stub had received, at most the request already on
    # its way and the one a thread started before that beat go out.
    assert len(stub.requests) <= sent_by_then[0] + 2 < run.tasks_total
    assert run.requests_done == len(stub.requests)
    assert run.api_key_encrypted == ""  # deleted with the run's end, as its owner chose


def test_the_backoff_doubles_with_jitter_and_is_capped(settings):
    settings.TERMITE_PROTOCOL_BACKOFF_SECONDS = 1.0
    settings.TERMITE_PROTOCOL_MAX_BACKOFF_SECONDS = 10.0
    assert 0.5 <= backoff(1, None) <= 1 and 2 <= backoff(3, None) <= 4
    assert 5 <= backoff(9, None) <= 10
    assert backoff(1, 7.0) == 7.0 and backoff(1, 3600.0) == 10.0


def test_the_first_turn_shows_the_full_dump_where_the_version_gives_the_data(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting
):
    version_set_participants_see(version=demo_version, participants_see=ParticipantsSee.SCHEMA_AND_DATA)
    with OpenAIStub(good_model(demo_version)) as stub:
        run = execute(start_run(owner, demo_version, stub), django_capture_on_commit_callbacks)
    first_turns = {r.messages[0]["content"] for r in stub.requests if r.is_first_turn}
    dumps = {db.original_dump for db in demo_version.databases.all()}
    assert first_turns == {f"Considera il seguente database:\n{dump}" for dump in dumps}
    assert all("INSERT INTO" in turn for turn in first_turns)
    assert run.submission.schema_format == "full-dump"


def test_the_first_turn_shows_the_schema_alone_by_default(
    demo_version, owner, django_capture_on_commit_callbacks, no_waiting
):
    with OpenAIStub(good_model(demo_version)) as stub:
        execute(start_run(owner, demo_version, stub), django_capture_on_commit_callbacks)
    first_turns = [r.messages[0]["content"] for r in stub.requests if r.is_first_turn]
    assert len(first_turns) == DATABASES and not any("INSERT INTO" in turn for turn in first_turns)
