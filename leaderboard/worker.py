"""The scoring worker: RQ's worker that first sweeps up submissions and protocol runs a dead worker or lost
job left behind (and fails the database imports such a job left running), then fetches the copies of the
databases this host lacks (a worker shares no disk with the web site or with other workers:
evaluation/database_cache.py), then runs the gold of every published version once, so that the
work-horses it forks inherit the results and what the cache has checked. It listens on the scoring queue
and on its siblings, the protocol queue and the queue of databases staff add (evaluation/imports.py):
`rqworker scoring protocol imports`.

While it works it sweeps again every TERMITE_SWEEP_SECONDS, in a thread of its own: a work-horse killed
mid-job (out of memory, a stopped container) leaves its submission `running` with a silent heartbeat, and
no cron or restart is needed to find it. RQ's own timers would not do: its scheduler only puts a job on a
queue, where a sweep would wait behind every upload, and its cron is one more process to run (`rq cron`).
Every worker sweeps; a sweep re-checks each row under a lock (leaderboard/services.py `requeue_stuck`), so
several at once requeue a lost job once; a job that beats is taken for lost only past
TERMITE_STUCK_AFTER_SECONDS."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connections
from rq import Worker

from evaluation.database_cache import databases_fetch
from evaluation.grading import warm_gold_cache
from evaluation.imports import sweep_imports
from leaderboard.run_services import sweep_runs
from leaderboard.services import sweep_submissions

logger = logging.getLogger(__name__)


class ScoringWorker(Worker):
    def work(self, *args: Any, **kwargs: Any) -> bool:
        if not os.environ.get("TERMITE_GOLD_KEY"):
            # settings.py generates one in the embedded mode (DEBUG), but a key generated on this host
            # is its own: it cannot read the gold the importing host encrypted, and every job would fail.
            raise ImproperlyConfigured(
                "A scoring worker needs TERMITE_GOLD_KEY from the environment, the same as the web site's."
            )
        sweep_submissions()
        sweep_runs()
        sweep_imports()
        try:
            copies = databases_fetch()
        except Exception as error:  # each job fetches what it lacks all the same
            logger.warning("database copies not fetched: %s", type(error).__name__)
        else:
            fetched = sum(copy.fetched for copy in copies)
            missing = sum(bool(copy.problem) for copy in copies)
            here = len(copies) - fetched - missing
            logger.info("database copies: %d fetched, %d already here, %d missing", fetched, here, missing)
        try:
            warmed = warm_gold_cache()
        except Exception as error:  # a cold cache only slows the first jobs down
            logger.warning("gold cache not warmed: %s", type(error).__name__)
        else:
            logger.info("gold cache warmed for %s", ", ".join(warmed) or "no published version")
        finally:
            # Each job runs in a forked work-horse: a database connection opened here would be shared by
            # every horse, so none may stay open.
            connections.close_all()
        stop = threading.Event()
        sweeper = threading.Thread(target=sweep_periodically, args=(stop.wait,), name="sweeper", daemon=True)
        sweeper.start()
        try:
            return super().work(*args, **kwargs)
        finally:
            stop.set()
            sweeper.join()


def sweep_periodically(wait: Callable[[float], bool]) -> None:
    """Sweep up submissions, protocol runs and lost database imports every TERMITE_SWEEP_SECONDS, until
    `wait` (given the period) returns True."""
    while not wait(settings.TERMITE_SWEEP_SECONDS):
        try:
            sweep_submissions()
            sweep_runs()
            sweep_imports()
        finally:
            # This thread's own connections: none stays open for a work-horse forked meanwhile to inherit.
            connections.close_all()
