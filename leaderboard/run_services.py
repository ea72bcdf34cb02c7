"""Writes for protocol runs: starting one, queueing it, cancelling, deleting its key or the whole run,
sweeping up runs a dead worker left behind, and making a finished run's answers a submission.

A run becomes a submission through `leaderboard.services.submission_create`, the upload's own path: its
answers are written as a JSONL predictions file and validated, checked against the quotas, scored and
shown by the same rules as any upload, and the submission is marked as run by the portal.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, NoReturn
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connections, transaction
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluation.models import BenchmarkVersion
from evaluation.predictions import PredictionFileError
from leaderboard import liveness, services
from leaderboard.models import ProtocolRun, RunExchange, Submission
from leaderboard.protocols import catalogue
from leaderboard.protocols.api_keys import encrypt_api_key
from leaderboard.protocols.dumps import dump_schema_format
from leaderboard.queue import protocol_queue, run_in_thread
from termite_site.accounts.models import Team, User
from termite_site.outbound import OutboundRefused, check_url

logger = logging.getLogger(__name__)

# The job by its dotted path, as RQ stores it (the job module imports this one).
RUN_JOB = "leaderboard.jobs.run_protocol"


class RunRefused(Exception):
    """The run cannot be started as asked; `field` is the input at fault ("" for none), the message why."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class NotSubmitted(Exception):
    """The run's answers were not made a submission; the message says why (a quota, no answer...)."""


@dataclass(frozen=True)
class Decoding:
    temperature: float = 1.0
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None


@dataclass(frozen=True)
class Budget:
    max_requests: int
    max_seconds: int
    max_total_tokens: int | None = None


def run_create(
    *,
    user: User,
    version: BenchmarkVersion,
    endpoint_url: str,
    api_key: str,
    model: str,
    protocol_id: str,
    decoding: Decoding,
    budget: Budget,
    concurrency: int,
    model_card: dict[str, Any],
    team: Team | None = None,
    delete_key_when_done: bool = True,
    enqueue: bool = True,
) -> ProtocolRun:
    """Store a run and put it on the protocol queue after commit (unless `enqueue` is False: the caller
    runs it, as `manage.py run_protocol --wait` does). The form and the API validate the fields; this
    checks what they cannot: the account, the team, the version, the protocol, the URL and the site's
    limits. Raises services.EmailUnconfirmed, services.NotTeamMember or RunRefused; nothing is stored
    then."""
    if user.must_confirm_email:
        raise services.EmailUnconfirmed(
            _("Confirm your e-mail address before your first run: open the link we sent to %(email)s.")
            % {"email": user.email}
        )
    if team is not None and not team.has_member(user):
        raise services.NotTeamMember(
            _("You are not a member of %(team)s: only its members may submit on its behalf.")
            % {"team": team.name}
        )
    if not version.is_published:
        raise RunRefused(
            _("%(version)s is not published; it takes no submissions.") % {"version": version},
            field="version",
        )
    if catalogue.protocol(protocol_id) is None:
        raise RunRefused(_("There is no protocol %(id)s.") % {"id": protocol_id}, field="protocol")
    try:
        check_url(endpoint_url)
    except OutboundRefused as error:
        raise RunRefused(str(error), field="endpoint_url") from None  # a sentence that says why
    if not 1 <= concurrency <= settings.TERMITE_PROTOCOL_MAX_CONCURRENCY:
        raise RunRefused(
            _("Ask for 1 to %(n)s requests at once.") % {"n": settings.TERMITE_PROTOCOL_MAX_CONCURRENCY},
            field="concurrency",
        )
    if not 1 <= budget.max_requests <= settings.TERMITE_PROTOCOL_MAX_REQUESTS:
        raise RunRefused(
            _("The budget may hold 1 to %(n)s requests.") % {"n": settings.TERMITE_PROTOCOL_MAX_REQUESTS},
            field="max_requests",
        )
    if not 1 <= budget.max_seconds <= settings.TERMITE_PROTOCOL_MAX_SECONDS:
        raise RunRefused(
            _("The budget may hold 1 to %(n)s seconds.") % {"n": settings.TERMITE_PROTOCOL_MAX_SECONDS},
            field="max_seconds",
        )
    with transaction.atomic():
        run = ProtocolRun.objects.create(
            user=user,
            team=team,
            version=version,
            endpoint_url=endpoint_url,
            api_key_encrypted=encrypt_api_key(api_key) if api_key else "",
            delete_key_when_done=delete_key_when_done,
            model=model,
            protocol=protocol_id,
            temperature=decoding.temperature,
            top_p=decoding.top_p,
            max_tokens=decoding.max_tokens,
            seed=decoding.seed,
            model_card=_storable_card(model_card),
            max_requests=budget.max_requests,
            max_total_tokens=budget.max_total_tokens,
            max_seconds=budget.max_seconds,
            concurrency=concurrency,
        )
        if enqueue:
            transaction.on_commit(lambda: run_enqueue(run=run))
    return run


def _storable_card(card: dict[str, Any]) -> dict[str, Any]:
    return {name: value.isoformat() if hasattr(value, "isoformat") else value for name, value in card.items()}


def run_enqueue(*, run: ProtocolRun) -> bool:
    """Put the run on the protocol queue; False (and it stays queued for the sweep) if Redis is down.

    With no Redis (the embedded mode) the run goes to a thread of this process instead (`queue.run_in_thread`),
    as scoring does. A web process that dies takes its threads along; the sweep it runs when it starts
    again resumes them.
    """
    ProtocolRun.objects.filter(pk=run.pk).update(enqueued_at=timezone.now())
    if not settings.REDIS_URL:
        run_in_thread(RUN_JOB, run.pk, name=f"protocol-run-{run.pk}")
        return True
    try:
        protocol_queue().enqueue(RUN_JOB, run.pk, job_id=run_job_id(run))
    except Exception as error:  # the queue being unreachable must not lose the run: the sweep enqueues it
        logger.warning("run %s stays queued: could not enqueue (%s)", run.pk, type(error).__name__)
        ProtocolRun.objects.filter(pk=run.pk).update(enqueued_at=None)
        return False
    return True


def run_job_id(run: ProtocolRun) -> str:
    return f"protocol-run-{run.pk}-{run.attempts}"


def run_cancel(*, run: ProtocolRun) -> bool:
    """Stop a queued or running run: the runner sees it at its next beat and sends nothing more. What was
    answered stays, and may be submitted as an incomplete run. False when the run had already ended."""
    stopped = ProtocolRun.objects.filter(pk=run.pk, status__in=ProtocolRun.ACTIVE).update(
        status=ProtocolRun.Status.CANCELLED, finished_at=Now(), message=_("Cancelled by its owner.")
    )
    run.refresh_from_db()
    if stopped and run.delete_key_when_done:
        run.delete_key()
    return bool(stopped)


def run_delete_key(*, run: ProtocolRun) -> None:
    """Forget the API key now. A run still going keeps the key it read when it started; resumed after a
    crash, it calls the endpoint with no key."""
    run.delete_key()


def run_delete(*, run: ProtocolRun) -> None:
    """Delete the run, its key and its transcript. Its submission, if any, stays, with its mark and the
    transcript's sha256 (which no one can check any more)."""
    run_cancel(run=run)
    run.delete()


def run_finished(*, run_id: int) -> None:
    """After the runner: forget the key if the owner asked, and submit a run that answered everything."""
    run = ProtocolRun.objects.select_related("version", "user", "team").get(pk=run_id)
    if run.delete_key_when_done and run.has_key:
        run.delete_key()
    if run.status == ProtocolRun.Status.FINISHED:
        # Refused (a quota...): the run's message says why, and its page offers to submit later.
        with contextlib.suppress(NotSubmitted):
            run_submit(run=run)


def run_submit(*, run: ProtocolRun) -> Submission:
    """Make the run's answers a submission, through the upload's path, marked as run by the portal.

    A finished run is submitted by the runner; a run stopped by its budget or cancelled by its owner is
    submitted only when the owner asks (its questions not answered count as not submitted, as in any
    file). Raises NotSubmitted with the reason (nothing stored then; the reason is kept on the run).
    """
    if run.submission_id is not None:
        raise NotSubmitted(_("This run is already submission #%(id)s.") % {"id": run.submission_id})
    if run.status not in ProtocolRun.SUBMITTABLE:
        raise NotSubmitted(_("Only a run that has ended can be submitted."))
    predictions = run_predictions(run=run)
    if not predictions:
        return _not_submitted(run, _("No answer held SQL: there is nothing to submit."))
    lines = "".join(
        json.dumps({"question_id": qid, "sql": sql}, ensure_ascii=False) + "\n"
        for qid, sql in predictions.items()
    )
    sha256 = transcript_sha256(run=run)
    card = {**run.model_card, **_run_card(run)}
    try:
        submission = services.submission_create(
            user=run.user,
            version=run.version,
            upload=services.Upload(name=f"protocol-run-{run.pk}.jsonl", data=lines.encode()),
            model_card=card,
            team=run.team,
            portal_run=services.PortalRun(
                protocol=run.protocol,
                endpoint_host=endpoint_host(run.endpoint_url),
                run_at=run.finished_at or timezone.now(),
                transcript_sha256=sha256,
            ),
        )
    except (services.QuotaExceeded, services.EmailUnconfirmed, services.NotTeamMember) as error:
        return _not_submitted(run, str(error))
    except PredictionFileError as error:
        return _not_submitted(run, str(error))
    run.submission = submission
    run.transcript_sha256 = sha256
    run.message = ""
    run.save(update_fields=["submission", "transcript_sha256", "message"])
    return submission


def _not_submitted(run: ProtocolRun, reason: str) -> NoReturn:
    run.message = _("Not submitted: %(reason)s You can submit it later from this page.") % {"reason": reason}
    run.save(update_fields=["message"])
    raise NotSubmitted(reason)


def protocol_card(
    *,
    protocol_id: str,
    version: BenchmarkVersion,
    temperature: float,
    top_p: float | None,
    seed: int | None,
    max_tokens: int | None,
    run_date: date,
) -> dict[str, Any]:
    """What a run itself says of how its predictions were made, over what its owner wrote: the protocol's
    prompt, the dump its version shows, the decoding sent and the day it ran. The run form checks a
    public run's card with these filled in."""
    protocol = catalogue.protocol(protocol_id)
    sent = (("top-p", top_p), ("seed", seed), ("max tokens", max_tokens))
    notes = [f"protocol {protocol_id}", *(f"{name} {value}" for name, value in sent if value is not None)]
    sampling = "greedy" if temperature == 0 else "top-p" if top_p is not None else "other"
    card = {
        "approach": "prompting",
        "schema_format": dump_schema_format(version),
        "sampling": sampling,
        "temperature": temperature,
        "decoding_note": "; ".join(notes)[:200],
        "run_date": run_date,
    }
    if protocol is not None:
        card.update(shots=protocol.shots, instruction_language=protocol.instruction_language)
    return card


def _run_card(run: ProtocolRun) -> dict[str, Any]:
    return protocol_card(
        protocol_id=run.protocol,
        version=run.version,
        temperature=run.temperature,
        top_p=run.top_p,
        seed=run.seed,
        max_tokens=run.max_tokens,
        run_date=(run.started_at or run.created_at).date(),
    )


def run_predictions(*, run: ProtocolRun) -> dict[str, str]:
    """Question id -> the SQL taken from its answer, for the questions answered with SQL that can be
    stored (an answer with none, or with SQL over TERMITE_MAX_SQL_CHARS, counts as not submitted)."""
    found = {}
    answered = run.exchanges.filter(kind=RunExchange.Kind.QUESTION, ok=True).exclude(sql="")
    for question_id, sql in answered.values_list("question_id", "sql"):
        if len(sql) <= settings.TERMITE_MAX_SQL_CHARS and "\x00" not in sql:
            found[question_id] = sql
    return found


def endpoint_host(url: str) -> str:
    """The host of an endpoint, which a submission shows: never its path, port, query or key."""
    return (urlsplit(url).hostname or "")[:255]


# The transcript: every exchange, one JSON object per line, keys sorted, in a fixed order; its sha256 is on
# the submission, so anyone holding the file can check that it is the one the run produced.

TRANSCRIPT_FIELDS = (
    "database",
    "question_id",
    "kind",
    "attempt",
    "request",
    "answer",
    "http_status",
    "error",
    "tokens",
    "duration_ms",
    "sql",
    "ok",
)


def transcript_lines(*, run: ProtocolRun) -> Iterator[bytes]:
    exchanges = run.exchanges.order_by("database", "kind", "question_id", "attempt").values(
        *TRANSCRIPT_FIELDS
    )
    for exchange in exchanges.iterator():
        yield (
            json.dumps(exchange, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
        ).encode()


def transcript_sha256(*, run: ProtocolRun) -> str:
    digest = hashlib.sha256()
    for line in transcript_lines(run=run):
        digest.update(line)
    return digest.hexdigest()


# Runs a dead worker or a restarted web process left behind.


def requeue_stuck_runs(*, dry_run: bool = False) -> list[int]:
    """Re-enqueue runs whose job is gone: `queued` with no live job (Redis was down, or the process that
    held its thread died), or `running` with a heartbeat silent for three beats (its worker died). A
    resumed run never asks again what was answered. Each run is tried at most TERMITE_MAX_ATTEMPTS times,
    then fails. As in `services.requeue_stuck`, a run is requeued only if, locked, it is still as this sweep
    read it (another worker's sweep may have requeued it meanwhile), and the runner claims its row
    atomically, so a run enqueued twice runs once."""
    window = timedelta(seconds=liveness.HEARTBEATS_MISSED * settings.TERMITE_HEARTBEAT_SECONDS)
    silent = Q(status=ProtocolRun.Status.RUNNING, heartbeat_at__lt=Now() - window)
    requeued = []
    for run in ProtocolRun.objects.filter(Q(status=ProtocolRun.Status.QUEUED) | silent):
        if run.status == ProtocolRun.Status.QUEUED and _run_job_alive(run):
            continue
        if dry_run:
            requeued.append(run.pk)
            continue
        with transaction.atomic():
            locked = (
                ProtocolRun.objects.select_for_update()
                .filter(
                    Q(pk=run.pk, status=run.status, enqueued_at=run.enqueued_at)
                    & (Q(status=ProtocolRun.Status.QUEUED) | silent)
                )
                .first()
            )
            if locked is None:
                continue
            if locked.attempts >= settings.TERMITE_MAX_ATTEMPTS:
                locked.status = ProtocolRun.Status.FAILED
                locked.finished_at = timezone.now()
                locked.message = _("The run was started %(n)s times without finishing.") % {
                    "n": locked.attempts
                }
                locked.save(update_fields=["status", "finished_at", "message"])
                continue
            locked.status = ProtocolRun.Status.QUEUED
            locked.heartbeat_at = None
            locked.save(update_fields=["status", "heartbeat_at"])
        requeued.append(run.pk)
        run_enqueue(run=locked)
    return requeued


def _run_job_alive(run: ProtocolRun) -> bool:
    if run.enqueued_at is None or not settings.REDIS_URL:
        return False
    try:
        job = protocol_queue().fetch_job(run_job_id(run))
        return job is not None and job.get_status(refresh=True) in (
            "queued",
            "started",
            "deferred",
            "scheduled",
        )
    except Exception:  # Redis down: "not alive", and enqueueing fails softly, keeping it queued
        return False


def sweep_runs() -> None:
    """`requeue_stuck_runs` as a process runs it on its own (`services.sweep_submissions`): logged, never
    raising."""
    try:
        requeued = requeue_stuck_runs()
    except Exception as error:
        logger.warning("sweep of protocol runs skipped: %s", type(error).__name__)
    else:
        if requeued:
            logger.info("sweep re-enqueued protocol runs %s", requeued)


def requeue_runs_after_start() -> threading.Thread | None:
    """In the embedded mode, resume the runs a previous web process was running, once their heartbeats
    are stale (a run a live sibling process holds keeps beating and is left alone); see
    `services.requeue_stuck_after_start`, which does the same for scoring."""
    if settings.REDIS_URL:
        return None

    def sweep() -> None:
        time.sleep((liveness.HEARTBEATS_MISSED + 1) * settings.TERMITE_HEARTBEAT_SECONDS)
        try:
            sweep_runs()
        finally:
            connections.close_all()

    thread = threading.Thread(target=sweep, name="requeue-runs-after-start", daemon=True)
    thread.start()
    return thread
