"""Writes for submissions: accepting an upload, queueing, scoring, sweeping, withdrawing, moderating,
verifying."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections, transaction
from django.db.models import F, Q
from django.db.models.functions import Now
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluation.database_cache import DatabaseUnavailable
from evaluation.grading import outcome_rows, score_version
from evaluation.models import BenchmarkVersion
from evaluation.predictions import parse_predictions
from evaluation.scoring.score import SCORER_VERSION
from evaluation.selectors import question_ids_by_database
from leaderboard import liveness, ranking, selectors
from leaderboard.models import ModelCardRevision, Submission
from leaderboard.queue import enqueue_scoring, scoring_queue
from termite_site.accounts.models import Team, User

logger = logging.getLogger(__name__)


# The job by its dotted path, as RQ stores it: the job module calls this one, so importing it here would
# make a cycle.
SCORE_JOB = "leaderboard.jobs.score_submission"


class QuotaExceeded(Exception):
    """The user, or the team, has used up a submission quota; the message says which and when it frees up."""


class NotTeamMember(Exception):
    """The uploader is not a member of the team the submission would be made on behalf of."""


class EmailUnconfirmed(Exception):
    """The user signed up and has not confirmed the e-mail address yet: no uploads until then."""


@dataclass(frozen=True)
class Upload:
    name: str
    data: bytes


@dataclass(frozen=True)
class PortalRun:
    """The mark of a submission the portal made by running a protocol (leaderboard/run_services.py): its
    file is the run's answers, and these say how they were obtained."""

    protocol: str
    endpoint_host: str
    run_at: datetime
    transcript_sha256: str


def submission_create(
    *,
    user: User,
    version: BenchmarkVersion,
    upload: Upload,
    model_card: dict[str, Any],
    team: Team | None = None,
    portal_run: PortalRun | None = None,
) -> Submission:
    """Validate the file completely, check the team and the quotas, store the submission, enqueue it after
    commit. With `team`, the submission is made on its behalf: the uploader must be a member, and it counts
    towards the team's quotas as well as the uploader's (TERMITE_TEAM_QUOTAS). With `portal_run`, the file
    is a protocol run's answers, and the submission is marked as run by the portal.

    Raises EmailUnconfirmed, PredictionFileError (with every problem and its line), NotTeamMember or
    QuotaExceeded; nothing is stored then.
    """
    # The one check of the rule, for the form and the API alike: self sign-up confirms its address first.
    if user.must_confirm_email:
        raise EmailUnconfirmed(
            _(
                "Confirm your e-mail address before your first upload: open the link we sent to %(email)s,"
                " or ask for a new one on your profile page."
            )
            % {"email": user.email}
        )
    predictions = parse_predictions(
        upload.data,
        filename=upload.name,
        questions_by_database=question_ids_by_database(version=version),
        max_file_bytes=settings.TERMITE_MAX_UPLOAD_BYTES,
        max_sql_chars=settings.TERMITE_MAX_SQL_CHARS,
    )
    with transaction.atomic():
        # Serialise one user's uploads, and one team's, so that two at once cannot both squeeze under a
        # quota: the rows' locks on PostgreSQL (the user's first, then the team's: always in this order, so
        # two uploads never wait for each other); on SQLite, where select_for_update() does nothing, the
        # transaction itself, which begins IMMEDIATE there (see DATABASES in settings) and so holds the
        # only write lock.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        if team is not None:
            Team.objects.select_for_update().filter(pk=team.pk).first()
            # Checked here again, whatever the form said: one may have left the team meanwhile.
            if not team.has_member(user):
                raise NotTeamMember(
                    _("You are not a member of %(team)s: only its members may submit on its behalf.")
                    % {"team": team.name}
                )
        public = bool(model_card.get("is_public"))
        # A practice version has no quota, only the upload rate limit: its answers are public.
        if not version.is_practice:
            _check_quota(user=user, version=version, public=public)
            if team is not None and settings.TERMITE_TEAM_QUOTAS:
                _check_team_quota(team=team, version=version, public=public)
        submission = Submission.objects.create(
            user=user,
            team=team,
            version=version,
            predictions=predictions.sql,
            file_name=upload.name[:255],
            file_sha256=hashlib.sha256(upload.data).hexdigest(),
            file_format=predictions.format,
            missing_count=len(predictions.missing),
            scorer_version=SCORER_VERSION,
            **_portal_marks(portal_run),
            **{name: model_card[name] for name in Submission.MODEL_CARD_FIELDS if name in model_card},
        )
        transaction.on_commit(lambda: submission_enqueue(submission=submission))
    return submission


def _portal_marks(portal_run: PortalRun | None) -> dict[str, Any]:
    if portal_run is None:
        return {}
    return {
        "portal_protocol": portal_run.protocol,
        "portal_endpoint_host": portal_run.endpoint_host,
        "portal_run_at": portal_run.run_at,
        "transcript_sha256": portal_run.transcript_sha256,
    }


def _check_quota(*, user: User, version: BenchmarkVersion, public: bool) -> None:
    _refuse_over(
        selectors.quota_for(user=user, version=version),
        public=public,
        values={"version": version},
        public_full=_(
            "You already have %(n)s public submissions for %(version)s, the most one person may hold: "
            "upload this one as private."
        ),
        day_full=_(
            "You have used your %(n)s submissions of the last 24 hours; the next one frees up at %(when)s UTC."
        ),
        version_full=_("You have used all %(n)s submissions allowed for %(version)s."),
    )


def _check_team_quota(*, team: Team, version: BenchmarkVersion, public: bool) -> None:
    _refuse_over(
        selectors.team_quota_for(team=team, version=version),
        public=public,
        values={"team": team.name, "version": version},
        public_full=_(
            "%(team)s already has %(n)s public submissions for %(version)s, the most one team may hold: "
            "upload this one as private."
        ),
        day_full=_(
            "%(team)s has used its %(n)s submissions of the last 24 hours, counting every member's; the"
            " next one frees up at %(when)s UTC."
        ),
        version_full=_(
            "%(team)s has used all %(n)s submissions allowed for %(version)s, counting every member's."
        ),
    )


def _refuse_over(
    quota: selectors.Quota,
    *,
    public: bool,
    values: dict[str, Any],
    public_full: str,
    day_full: str,
    version_full: str,
) -> None:
    """QuotaExceeded with the message of the first limit `quota` has reached: a person's and a team's
    quotas have the same limits, told in their own words."""
    if public and quota.public_for_version >= quota.public_per_version:
        raise QuotaExceeded(public_full % {**values, "n": quota.public_per_version})
    if quota.used_today >= quota.per_day:
        raise QuotaExceeded(
            day_full % {**values, "n": quota.per_day, "when": f"{quota.next_free_at:%Y-%m-%d %H:%M}"}
        )
    if quota.used_for_version >= quota.per_version:
        raise QuotaExceeded(version_full % {**values, "n": quota.per_version})


def submission_enqueue(*, submission: Submission) -> bool:
    """Put the submission on the scoring queue; False (and it stays queued for the sweeper) if Redis is down.

    With no Redis the queue is a thread of this process (leaderboard/queue.py): this returns at once.
    """
    submission.mark_enqueued()
    try:
        enqueue_scoring(SCORE_JOB, submission.pk, job_id=job_id(submission))
    except Exception as error:  # the queue being unreachable must not lose or fail the upload
        logger.warning(
            "submission %s stays queued: could not enqueue (%s)", submission.pk, type(error).__name__
        )
        Submission.objects.filter(pk=submission.pk).update(enqueued_at=None)
        return False
    return True


def requeue_stuck(*, now: datetime | None = None, dry_run: bool = False) -> list[int]:
    """Re-enqueue what a lost job or a dead worker left behind; safe to run any time, from anywhere.

    - `queued` with no live job: Redis was down at upload time, or the job was lost from the queue;
    - `running` with a heartbeat silent for three beats: its job died mid-way (leaderboard/liveness.py);
    - `running` for longer than TERMITE_STUCK_AFTER_SECONDS, heartbeat or not: a job that never ends;
    - `failed` for a reason that may pass (an error of a service: the database, Redis, a worker's disk).
    Each is tried at most TERMITE_MAX_ATTEMPTS times, then fails for good. Several workers may sweep at
    once: a submission is requeued only if, locked, it is still as this sweep read it, so another sweep's
    requeue is not repeated; and scoring claims its row atomically, so a submission re-enqueued while its
    first job still runs is scored once all the same.
    """
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.TERMITE_STUCK_AFTER_SECONDS)
    requeued = []
    for submission in Submission.objects.filter(_stuck(stale)):
        if submission.status == Submission.Status.QUEUED and _job_alive(submission):
            continue
        if dry_run:
            requeued.append(submission.pk)
            continue
        retried = _reset_for_retry(seen=submission, stale=stale)
        if retried is not None:
            requeued.append(retried.pk)
            submission_enqueue(submission=retried)
    return requeued


def _stuck(stale: datetime) -> Q:
    return Q(withdrawn_at__isnull=True) & (
        Q(status=Submission.Status.QUEUED)
        | liveness.silent()
        | Q(status=Submission.Status.RUNNING, started_at__lt=stale)
        | Q(status=Submission.Status.FAILED, failure_retryable=True)
    )


def sweep_submissions() -> None:
    """`requeue_stuck` as a process runs it on its own (a worker when it starts and then periodically, a
    starting embedded web process): logged, and never raising, since a sweep that cannot run must not keep
    a worker or a web process from starting, nor stop a worker's later sweeps."""
    try:
        requeued = requeue_stuck()
    except Exception as error:
        logger.warning("sweep of submissions skipped: %s", type(error).__name__)
    else:
        if requeued:
            logger.info("sweep re-enqueued submissions %s", requeued)


def requeue_stuck_after_start() -> threading.Thread | None:
    """In the embedded mode (no REDIS_URL), sweep once in the background when a web process starts.

    There no worker sweeps when it starts and no cron is expected, so a submission the previous process
    was scoring when it died would stay `running` for good. The sweep waits until that process's
    heartbeats are stale (one beat more than the sweeper's window): a submission still beating then is
    being scored by a live sibling process (gunicorn runs several), and is left alone. Requeued
    submissions are scored in the embedded queue's threads. With Redis, the workers sweep when they start
    and then every TERMITE_SWEEP_SECONDS (leaderboard/worker.py).
    """
    if settings.REDIS_URL:
        return None

    def sweep() -> None:
        time.sleep((liveness.HEARTBEATS_MISSED + 1) * settings.TERMITE_HEARTBEAT_SECONDS)
        try:
            sweep_submissions()
        finally:
            connections.close_all()  # this thread's own connections; nothing else closes them

    thread = threading.Thread(target=sweep, name="requeue-stuck-after-start", daemon=True)
    thread.start()
    return thread


def job_id(submission: Submission) -> str:
    # A new id for every attempt: a retried submission must not collide with its dead job's record.
    return f"submission-{submission.pk}-{submission.attempts}"


def _job_alive(submission: Submission) -> bool:
    if submission.enqueued_at is None or not settings.REDIS_URL:
        return False
    try:
        job = scoring_queue().fetch_job(job_id(submission))
        return job is not None and job.get_status(refresh=True) in (
            "queued",
            "started",
            "deferred",
            "scheduled",
        )
    except Exception:  # Redis down: say "not alive" and let enqueueing fail softly, keeping it queued
        return False


def _reset_for_retry(*, seen: Submission, stale: datetime) -> Submission | None:
    unchanged = Q(pk=seen.pk, status=seen.status, enqueued_at=seen.enqueued_at)
    with transaction.atomic():
        submission = Submission.objects.select_for_update().filter(unchanged & _stuck(stale)).first()
        if submission is None:
            return None
        if submission.attempts >= settings.TERMITE_MAX_ATTEMPTS:
            submission.mark_failed(
                f"Scoring was attempted {submission.attempts} times without finishing; an admin has been told.",
                retryable=False,
            )
            return None
        submission.status = Submission.Status.QUEUED
        submission.started_at = submission.heartbeat_at = None
        submission.save(update_fields=["status", "started_at", "heartbeat_at"])
        return submission


def submission_withdraw(*, submission: Submission) -> None:
    """The owner takes a submission off the portal. It still counts towards the quota (see the QuerySet)."""
    submission.withdraw()
    leaderboard_changed(version=submission.version)


def submission_card_update(*, submission: Submission, card: dict[str, Any]) -> bool:
    """Correct a submission's model card (as `ModelCardForm` cleaned it), keeping the card it replaces.
    False when nothing changed. The predictions, their scores and the quota are untouched."""
    with transaction.atomic():
        # The row as stored: a bound form has already set its values on the instance it was given.
        stored = Submission.objects.select_for_update().get(pk=submission.pk)
        changed = [name for name in Submission.EDITABLE_CARD_FIELDS if getattr(stored, name) != card[name]]
        if not changed:
            return False
        ModelCardRevision.objects.create(
            submission=stored,
            card={name: getattr(stored, name) for name in Submission.EDITABLE_CARD_FIELDS},
        )
        for name in changed:
            setattr(stored, name, card[name])
        stored.save(update_fields=changed)
    leaderboard_changed(version=stored.version)
    return True


def submission_moderate(*, submission: Submission, hidden: bool, flagged: bool, reason: str) -> None:
    submission.is_hidden = hidden
    submission.is_flagged = flagged
    submission.moderation_reason = reason.strip()
    submission.save(update_fields=["is_hidden", "is_flagged", "moderation_reason"])
    leaderboard_changed(version=submission.version)


class NotVerifiable(Exception):
    """The submission cannot be marked verified; the message says why."""


def verification_refusal(*, submission: Submission, verified: bool, note: str) -> str | None:
    """Why `submission_verify` would refuse this change, or None. Only a public, scored, live submission
    can be verified, with a public note; removing a verification is always allowed."""
    if not verified:
        return None
    if not submission.is_public:
        return _("Only a public submission can be verified: this one is private.")
    if submission.status != Submission.Status.SCORED:
        return _("Only a scored submission can be verified: this one is %(status)s.") % {
            "status": submission.get_status_display()
        }
    if submission.withdrawn_at is not None:
        return _("A withdrawn submission cannot be verified.")
    if not note.strip():
        return _("Say how the run was verified: the note is shown on the leaderboard.")
    return None


def submission_verify(*, submission: Submission, verified: bool, note: str, by: User) -> None:
    """Mark a submission verified by staff `by` today, with a public note, or remove the mark.

    Raises NotVerifiable (see `verification_refusal`); nothing is saved then.
    """
    refusal = verification_refusal(submission=submission, verified=verified, note=note)
    if refusal is not None:
        raise NotVerifiable(refusal)
    if verified:
        submission.verified_at = timezone.localdate()
        submission.verified_note = note.strip()
        submission.verified_by = by
    else:
        submission.verified_at = None
        submission.verified_note = ""
        submission.verified_by = None
    submission.save(update_fields=["verified_at", "verified_note", "verified_by"])
    leaderboard_changed(version=submission.version)


def leaderboard_changed(*, version: BenchmarkVersion) -> None:
    """Drop the cached ranking of a version (rows, charts, CSV and JSON); the next request rebuilds it.

    Call it after anything that changes what the ranking shows: scoring, hiding, withdrawing, a baseline.
    It drops the cache now and again once the transaction commits, since a page built in between read
    the old rows. It never fails: the worst a cache outage does is leave a ranking stale for an hour.
    """
    label = version.label

    def forget() -> None:
        try:
            ranking.forget(label)
        except Exception as error:
            logger.warning("could not drop the cached leaderboard of %s (%s)", label, type(error).__name__)

    forget()
    transaction.on_commit(forget)


def version_published_receiver(sender: object, *, version: BenchmarkVersion, **kwargs: Any) -> None:
    """`evaluation.signals.version_published`: the leaderboard's address without ?version= shows it now."""
    leaderboard_changed(version=version)


def team_renamed_receiver(sender: object, *, team: Team, **kwargs: Any) -> None:
    """`termite_site.accounts.signals.team_renamed`: the rankings that show the team forget its old name."""
    for version in BenchmarkVersion.objects.filter(submissions__team=team).distinct():
        leaderboard_changed(version=version)


def submission_score(*, submission_id: int) -> str:
    """Score one submission; claims its row first, so a retry or a second worker never scores it twice."""

    claimed = Submission.objects.filter(
        pk=submission_id, status=Submission.Status.QUEUED, withdrawn_at__isnull=True
    ).update(
        status=Submission.Status.RUNNING,
        started_at=timezone.now(),
        heartbeat_at=Now(),
        attempts=F("attempts") + 1,
    )
    if claimed != 1:
        return "skipped: not queued"
    submission = Submission.objects.select_related("version").get(pk=submission_id)
    try:
        with liveness.heartbeat(submission_id=submission.pk, attempt=submission.attempts):
            report = score_version(
                version=submission.version, predictions=submission.predictions, dialect=submission.dialect
            )
    except DatabaseUnavailable as error:
        # The platform lacks a database, or holds it altered (a missing or altered copy on this host is
        # fetched again, evaluation/database_cache.py): only an admin's new import repairs that, so the
        # sweeper does not retry it; a rescoring scores it once repaired.
        logger.error("submission %s: %s", submission_id, error)
        submission.mark_failed(str(error), retryable=False)
        return "failed"
    except Exception as error:
        # Only the type: a message could quote a query, and logs must never hold gold.
        logger.error("submission %s: scoring stopped by %s", submission_id, type(error).__name__)
        submission.mark_failed("An internal error stopped scoring; it will be retried.", retryable=True)
        return "failed"
    submission.mark_scored(scores=report.as_dict(), outcomes=outcome_rows(report))
    _warn_if_late(submission)
    leaderboard_changed(version=submission.version)
    return "scored"


def _warn_if_late(submission: Submission) -> None:
    """The release time counts on no scoring outlasting TERMITE_SCORING_BOUND_SECONDS; one that did showed
    late, and so told how long it ran: the operator should raise the bound (or find the slow host)."""
    if submission.released_at is not None and submission.scored_at is not None:
        late = (submission.scored_at - submission.released_at).total_seconds()
        if late > 0 and settings.TERMITE_RESULT_DELAY_SECONDS:
            logger.warning(
                "submission %s was scored %.1f s after its release time: raise TERMITE_SCORING_BOUND_SECONDS",
                submission.pk,
                late,
            )
