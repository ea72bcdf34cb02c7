"""Queued → running → scored | failed, and nothing lost: Redis down, lost jobs, dead workers, retries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from leaderboard import services
from leaderboard.jobs import score_submission
from leaderboard.liveness import heartbeat
from leaderboard.models import Submission
from leaderboard.services import Upload, requeue_stuck, requeue_stuck_after_start, submission_create
from tests.demo import database_lost, predictions_jsonl
from tests.processes import require_postgresql, run_worker_burst


def test_scoring_twice_stores_the_result_once(db, make_submission, gold, in_process):
    submission = make_submission(predictions=gold)
    assert score_submission(submission.pk) == "scored"
    first = Submission.objects.get(pk=submission.pk)
    assert score_submission(submission.pk) == "skipped: not queued"
    again = Submission.objects.get(pk=submission.pk)
    assert (again.attempts, again.scored_at, again.scores) == (1, first.scored_at, first.scores)


def test_a_withdrawn_submission_is_not_scored(db, make_submission):
    submission = make_submission(withdrawn_at=timezone.now())
    assert score_submission(submission.pk) == "skipped: not queued"


def test_a_dead_worker_leaves_a_running_submission_that_the_sweeper_scores_once(
    db, make_submission, gold, in_process, settings
):
    settings.TERMITE_STUCK_AFTER_SECONDS = 60
    # As a worker killed mid-job leaves it: claimed, never finished.
    submission = make_submission(
        predictions=gold, status="running", attempts=1, started_at=timezone.now() - timedelta(minutes=5)
    )
    assert requeue_stuck() == [submission.pk]
    submission.refresh_from_db()
    assert (submission.status, submission.attempts, submission.ea) == ("scored", 2, 1.0)
    assert requeue_stuck() == []


def test_a_recent_running_submission_is_left_alone(db, make_submission, in_process):
    make_submission(status="running", attempts=1, started_at=timezone.now())
    assert requeue_stuck() == []


def test_a_running_submission_whose_heartbeat_missed_three_beats_is_requeued_long_before_the_stuck_timer(
    db, make_submission, gold, in_process, settings
):
    settings.TERMITE_STUCK_AFTER_SECONDS = 3600
    settings.TERMITE_HEARTBEAT_SECONDS = 5
    # As a scorer killed mid-job leaves it: claimed 20 s ago, silent for more than three beats.
    submission = make_submission(
        predictions=gold,
        status="running",
        attempts=1,
        started_at=timezone.now() - timedelta(seconds=20),
        heartbeat_at=timezone.now() - timedelta(seconds=16),
    )
    assert requeue_stuck() == [submission.pk]
    submission.refresh_from_db()
    assert (submission.status, submission.attempts, submission.ea) == ("scored", 2, 1.0)


def test_a_running_submission_whose_heartbeat_is_fresh_is_left_alone_however_long_it_has_run(
    db, make_submission, settings
):
    settings.TERMITE_STUCK_AFTER_SECONDS = 3600
    settings.TERMITE_HEARTBEAT_SECONDS = 5
    make_submission(
        status="running",
        attempts=1,
        started_at=timezone.now() - timedelta(minutes=10),
        heartbeat_at=timezone.now() - timedelta(seconds=4),
    )
    assert requeue_stuck() == []


def test_claiming_a_submission_stamps_its_first_heartbeat(db, make_submission, gold, in_process):
    submission = make_submission(predictions=gold)
    score_submission(submission.pk)
    submission.refresh_from_db()
    # The stamp is on the database's clock (SQLite's to the millisecond), the start on this process's.
    assert abs(submission.heartbeat_at - submission.started_at) < timedelta(seconds=1)


def test_when_the_embedded_portal_starts_it_requeues_and_scores_what_a_dead_process_left(
    transactional_db, make_submission, gold, in_process, settings
):
    settings.TERMITE_HEARTBEAT_SECONDS = 0.05
    settings.TERMITE_STUCK_AFTER_SECONDS = 3600
    silent = timezone.now() - timedelta(minutes=1)
    running = make_submission(
        predictions=gold, status="running", attempts=1, started_at=silent, heartbeat_at=silent
    )
    queued = make_submission(predictions=gold)
    sweep = requeue_stuck_after_start()
    sweep.join(timeout=60)
    assert not sweep.is_alive()
    running.refresh_from_db()
    queued.refresh_from_db()
    assert (running.status, running.attempts, running.ea) == ("scored", 2, 1.0)
    assert (queued.status, queued.attempts, queued.ea) == ("scored", 1, 1.0)


def test_when_the_embedded_portal_starts_it_leaves_alone_what_a_live_process_is_scoring(
    transactional_db, make_submission, in_process, settings
):
    settings.TERMITE_HEARTBEAT_SECONDS = 0.05
    settings.TERMITE_STUCK_AFTER_SECONDS = 3600
    # Claimed a moment ago by another web process (gunicorn runs several), which is still scoring it.
    submission = make_submission(
        status="running", attempts=1, started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    with heartbeat(submission_id=submission.pk, attempt=1):
        sweep = requeue_stuck_after_start()
        sweep.join(timeout=60)
    submission.refresh_from_db()
    assert (submission.status, submission.attempts) == ("running", 1)


def test_with_redis_the_portal_leaves_the_sweeping_to_the_workers(settings):
    settings.REDIS_URL = "redis://127.0.0.1:6379/13"
    assert requeue_stuck_after_start() is None


def test_the_sweeper_gives_up_after_the_retry_cap_with_a_readable_reason(db, make_submission, settings):
    settings.TERMITE_MAX_ATTEMPTS = 3
    submission = make_submission(status="running", attempts=3, started_at=timezone.now() - timedelta(days=1))
    assert requeue_stuck() == []
    submission.refresh_from_db()
    assert submission.status == "failed"
    assert "attempted 3 times" in submission.failure_reason and not submission.failure_retryable


def test_an_altered_copy_on_this_host_is_replaced_and_the_submission_scored(
    db, make_submission, demo_version, gold, in_process
):
    path = demo_version.databases.get(slug="biblioteca").sqlite_path
    path.chmod(0o644)
    path.write_bytes(b"corrupted")
    submission = make_submission(predictions=gold)
    score_submission(submission.pk)
    submission.refresh_from_db()
    assert (submission.status, submission.ea) == ("scored", 1.0)
    assert path.read_bytes().startswith(b"SQLite format 3")


def test_a_database_the_platform_lacks_fails_the_submission_for_good_with_a_reason(
    db, make_submission, demo_version, in_process
):
    with database_lost(demo_version.databases.get(slug="biblioteca")):
        submission = make_submission()
        score_submission(submission.pk)
        submission.refresh_from_db()
        assert submission.status == "failed" and not submission.failure_retryable
        assert submission.failure_reason.startswith("Database biblioteca is not stored on the platform")
        # Only a new import repairs it: the sweeper leaves it alone, rather than burning its attempts.
        assert requeue_stuck() == []


def test_upload_with_redis_unreachable_is_accepted_then_scored_by_the_sweeper(
    db, owner, demo_version, gold, in_process, settings, django_capture_on_commit_callbacks
):
    settings.REDIS_URL = "redis://127.0.0.1:9/0"  # nothing listens on the discard port
    with django_capture_on_commit_callbacks(execute=True):
        submission = submission_create(
            user=owner,
            version=demo_version,
            upload=Upload("p.jsonl", predictions_jsonl(gold)),
            model_card={"model_name": "M"},
        )
    submission.refresh_from_db()
    assert (submission.status, submission.enqueued_at) == ("queued", None)
    settings.REDIS_URL = ""
    call_command("requeue_stuck")
    submission.refresh_from_db()
    assert (submission.status, submission.ea) == ("scored", 1.0)


def test_the_sweeper_command_has_a_dry_run(db, make_submission, capsys):
    submission = make_submission()
    call_command("requeue_stuck", "--dry-run")
    assert f"Would re-enqueue 1 submission(s): {submission.pk}" in capsys.readouterr().out
    submission.refresh_from_db()
    assert submission.status == "queued"


@pytest.fixture
def real_queue(transactional_db, redis_url, settings):
    require_postgresql()
    settings.REDIS_URL = redis_url
    from leaderboard.queue import scoring_queue

    scoring_queue().empty()
    return scoring_queue()


@pytest.mark.processes
def test_upload_then_real_redis_then_rqworker_burst_scores_it(real_queue, owner, gold, demo_version):

    version = demo_version
    submission = submission_create(
        user=owner,
        version=version,
        upload=Upload("p.jsonl", predictions_jsonl(gold)),
        model_card={"model_name": "M"},
    )
    submission.refresh_from_db()
    assert submission.status == "queued" and submission.enqueued_at is not None
    assert real_queue.count == 1
    worker = run_worker_burst()
    assert worker.returncode == 0, worker.stderr[-2000:]
    submission.refresh_from_db()
    assert (submission.status, submission.ea, submission.attempts) == ("scored", 1.0, 1)


@pytest.mark.processes
def test_a_worker_starting_up_sweeps_what_a_dead_worker_left(real_queue, owner, gold, settings, demo_version):

    version = demo_version
    submission = Submission.objects.create(
        user=owner,
        version=version,
        model_name="M",
        predictions=gold,
        file_name="p.jsonl",
        file_sha256="0" * 64,
        file_format="jsonl",
        scorer_version="1.0.0",
        status="running",
        attempts=1,
        started_at=timezone.now() - timedelta(hours=2),
    )
    worker = run_worker_burst()
    assert worker.returncode == 0, worker.stderr[-2000:]
    submission.refresh_from_db()
    assert (submission.status, submission.attempts) == ("scored", 2)


def test_two_workers_sweeping_at_once_enqueue_each_lost_submission_once(
    real_queue, make_submission, settings, monkeypatch
):
    settings.TERMITE_HEARTBEAT_SECONDS = 5
    settings.TERMITE_STUCK_AFTER_SECONDS = 3600
    silent = timezone.now() - timedelta(minutes=1)
    lost = [
        make_submission(status="running", attempts=1, started_at=silent, heartbeat_at=silent)
        for _ in range(2)
    ]
    # This worker's sweep has read both when it enqueues the first; another worker's sweep then runs
    # whole before this one locks the second.
    enqueue, other_sweep = services.submission_enqueue, []

    def enqueue_then_another_worker_sweeps(*, submission: Submission) -> bool:
        monkeypatch.setattr(services, "submission_enqueue", enqueue)
        enqueued = enqueue(submission=submission)
        other_sweep.extend(requeue_stuck())
        return enqueued

    monkeypatch.setattr(services, "submission_enqueue", enqueue_then_another_worker_sweeps)
    this_sweep = requeue_stuck()
    assert len(this_sweep) == len(other_sweep) == 1
    assert sorted(this_sweep + other_sweep) == sorted(submission.pk for submission in lost)
    assert sorted(real_queue.job_ids) == sorted(f"submission-{submission.pk}-1" for submission in lost)
