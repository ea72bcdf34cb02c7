"""The queues: scoring, and its sibling for protocol runs, on django-rq when REDIS_URL is set; in the
embedded mode (no Redis), threads of the web process.

A job is a dotted path and primary keys, as RQ stores it. In the embedded mode it runs in a thread, never
in the request that enqueued it: an upload is answered at once, so its response time tells nothing of how
long its queries run. A process that dies takes its threads along; the sweep it runs when it starts again
(`services.requeue_stuck_after_start`, `run_services.requeue_runs_after_start`) picks their work up.
"""

from __future__ import annotations

import threading

from django.conf import settings
from rq import Queue

from termite_site.queue import rq_queue, start_thread

QUEUE_NAME = "scoring"
PROTOCOL_QUEUE_NAME = "protocol"

# Embedded scoring jobs take turns, as on one worker: each runs a sandbox, and a rescoring or a burst of
# uploads running all at once would hold as many.
_SCORING_TURNS = threading.Lock()


def scoring_queue() -> Queue:
    """The scoring queue on Redis (REDIS_URL must be set), enqueueing at once (`termite_site.queue.rq_queue`)."""
    return rq_queue(QUEUE_NAME)


def protocol_queue() -> Queue:
    """The protocol runs' queue, on the scoring queue's Redis; only used when REDIS_URL is set."""
    return rq_queue(PROTOCOL_QUEUE_NAME)


def enqueue_scoring(job: str, *args: int, job_id: str) -> None:
    """Put a scoring job on the scoring queue, or in the embedded mode in a thread (`score_in_thread`).
    Raises when Redis is unreachable; callers keep the work for the sweep then."""
    if settings.REDIS_URL:
        scoring_queue().enqueue(job, *args, job_id=job_id)
    else:
        score_in_thread(job, *args, name=job_id)


def score_in_thread(job: str, *args: int, name: str) -> threading.Thread:
    """Run a scoring job in a thread of this process, after the scoring jobs before it. Not a daemon: a
    command that enqueues (`requeue_stuck`, `rescore`) ends only once its jobs have; a scoring job is bounded
    (TERMITE_SCORING_BOUND_SECONDS)."""
    return start_thread(job, *args, name=name, daemon=False, turns=_SCORING_TURNS)


def run_in_thread(job: str, *args: int, name: str) -> threading.Thread:
    """Run a protocol run's job in a daemon thread of this process: a run waits on an endpoint for hours,
    and a process that ends must not wait for it (the next one's sweep resumes it)."""
    return start_thread(job, *args, name=name, daemon=True)
