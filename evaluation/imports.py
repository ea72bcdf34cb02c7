"""Adding a database in the background: the request stores a `DatabaseImport` and answers at once; a job
builds, checks and stores the database (`services.database_add`), recording each step on the row for the
staff page to show, and ends with the validation report or the error.

The queue is `imports`: django-rq when REDIS_URL is set (a worker listens on it beside scoring: `rqworker
scoring protocol imports`), else a thread of the web process, the imports taking turns as on one worker.
A failure stores nothing of the database (`database_add` builds outside the transaction and stores in one)
and leaves the version as it was; the row says why, in one line that names no gold query.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evaluation.gold import decrypt_gold, encrypt_gold
from evaluation.models import BenchmarkVersion, DatabaseImport
from evaluation.services import VersionStateError, database_add, database_check_addable
from evaluation.sources import DatabaseSource, QuestionSource, SourceError
from evaluation.validation import Progress, no_progress
from termite_site.accounts.models import User
from termite_site.queue import rq_queue, start_thread

logger = logging.getLogger(__name__)

QUEUE_NAME = "imports"
IMPORT_JOB = "evaluation.jobs.add_database"

# Embedded imports take turns: each builds a database and its test suite, which is what a core is for.
_IMPORT_TURNS = threading.Lock()


def database_import_create(
    *,
    version: BenchmarkVersion,
    database: DatabaseSource,
    questions: list[QuestionSource],
    requested_by: User | None,
    queue: bool = True,
) -> DatabaseImport:
    """Store the job of adding `database` and its questions to draft `version` and, once committed, put it
    on the queue; with `queue` False the caller runs it (`database_import_run`), as `manage.py
    add_database` does. What can be refused at once is: a published version, a name the version has, a
    name another job is adding to it."""
    database_check_addable(version=version, slug=database.slug)
    database_imports_sweep()  # a lost job must not hold its name for ever
    running = DatabaseImport.objects.in_progress().filter(version=version, slug=database.slug).first()
    if running is not None:
        raise SourceError(f"{database.slug!r} is being added to {version} already (job {running.pk})")
    job = DatabaseImport.objects.create(
        version=version,
        slug=database.slug,
        requested_by=requested_by,
        source=dataclasses.asdict(database),
        questions_encrypted=encrypt_gold(json.dumps([dataclasses.asdict(q) for q in questions])),
    )
    job.record_step(0, "queued")
    if queue:
        transaction.on_commit(lambda: _enqueue(job))
    return job


def _enqueue(job: DatabaseImport) -> None:
    name = f"database-import-{job.pk}"
    if not settings.REDIS_URL:
        start_thread(IMPORT_JOB, job.pk, name=name, daemon=False, turns=_IMPORT_TURNS)
        return
    try:
        rq_queue(QUEUE_NAME).enqueue(IMPORT_JOB, job.pk, job_id=name)
    except Exception as error:  # Redis unreachable: say so on the row rather than leave it queued for ever
        DatabaseImport.objects.get(pk=job.pk).mark_failed(
            f"the job could not be queued ({type(error).__name__}); nothing was stored: add the database again"
        )


def database_import_run(*, job_id: int, progress: Progress = no_progress) -> str:
    """Run the job `job_id` here, once: its state as it ends ("done", "failed"), or "not run here" when it
    was taken already. `progress` is told each step too (the command prints them)."""
    job = DatabaseImport.objects.select_related("version").get(pk=job_id)
    if not job.claim():
        return "not run here"

    def step(percent: int, message: str) -> None:
        job.record_step(percent, message)
        progress(percent, message)

    try:
        report = database_add(
            version=job.version,
            database=DatabaseSource(**job.source),
            questions=[QuestionSource(**q) for q in json.loads(decrypt_gold(job.questions_encrypted))],
            reference_url=os.environ.get("TERMITE_REFERENCE_MYSQL_URL") or None,
            progress=step,
        )
    except (SourceError, VersionStateError) as error:
        job.mark_failed(str(error))
    except Exception as error:
        # Its message could quote the dump or a gold query: the row and the log name the kind only.
        logger.error("database import %s: stopped by %s", job.pk, type(error).__name__)
        job.mark_failed(f"stopped by an unexpected error ({type(error).__name__}); nothing was stored")
    else:
        job.mark_done(report)
    return job.state


LOST = "its job stopped without a word (a time limit, or its process ended); nothing was stored: add it again"


def database_imports_sweep() -> int:
    """Fail the jobs still running past the time a worker gives one (`DatabaseImport.objects.lost`): a job a
    worker stopped, or whose process ended, never ends by itself. Returns how many. Each row changes only if
    it is still running, so a job that ends meanwhile keeps its own ending."""
    now = timezone.now()
    return DatabaseImport.objects.lost(now=now).update(
        state=DatabaseImport.State.FAILED, error=LOST, finished_at=now, source={}, questions_encrypted=""
    )


def sweep_imports() -> None:
    """`database_imports_sweep` as a worker runs it, when it starts and then periodically: logged, and never
    raising, since a sweep that cannot run must not stop a worker."""
    try:
        failed = database_imports_sweep()
    except Exception as error:
        logger.warning("sweep of database imports skipped: %s", type(error).__name__)
    else:
        if failed:
            logger.info("sweep failed %d lost database import(s)", failed)
