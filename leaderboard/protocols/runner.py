"""The runner: one protocol run, asking a model endpoint every scored question of its version.

- **Claimed atomically**: `queued` becomes `running` in one UPDATE, so a run enqueued twice (the sweep, a
  retry) runs once.
- **Resumable**: every request and its answer is stored as it arrives (`RunExchange`); a resumed run never
  asks again what has an answer, and reuses each database's stored interpretation.
- **Alive**: the main thread stamps the run's heartbeat, with its progress, at least every
  TERMITE_HEARTBEAT_SECONDS; `run_services.requeue_stuck_runs` resumes a run whose heartbeat went
  silent. A beat that finds the run no longer `running` in this attempt (cancelled, deleted, taken over)
  stops it: nothing more is sent.
- **Bounded**: at most `concurrency` requests in flight (threads; TERMITE_PROTOCOL_MAX_CONCURRENCY bounds
  it), none ahead of what the main thread has stored (a cancel stops what follows, however busy the
  machine), and the budget (requests, tokens, seconds of running) checked before each request: when it is
  spent the run ends `budget_exhausted`, keeping what was answered.
- **Retried**: 429 (waiting at least its Retry-After, capped), 5xx, 408, a timeout or any OutboundFailed,
  and a malformed answer (not JSON, no choices) are tried again with exponential backoff and jitter, up to
  TERMITE_PROTOCOL_ATTEMPTS times; then that question gets no prediction (or, for an interpretation, none
  of its database's questions). OutboundRefused and any other 4xx (a bad key, an unknown model) end the
  run as `failed`: every request would get the same.

Only the threads call the endpoint; only the main thread touches the database.
"""

from __future__ import annotations

import json
import logging
import math
import random
import threading
import time
from collections import defaultdict, deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import F
from django.db.models.functions import Coalesce, Now
from django.utils.translation import gettext as _

from evaluation.models import Question
from leaderboard.models import ProtocolRun, ProtocolRunQuerySet, RunExchange
from leaderboard.protocols import catalogue
from leaderboard.protocols.api_keys import ApiKeyUnreadable, decrypt_api_key
from leaderboard.protocols.dumps import first_turn_dump
from leaderboard.protocols.extraction import extract_sql
from leaderboard.protocols.prompts import Message, database_messages, question_messages
from termite_site.outbound import OutboundFailed, OutboundRefused, post_json

logger = logging.getLogger(__name__)

INTERPRETATION, QUESTION = RunExchange.Kind.INTERPRETATION, RunExchange.Kind.QUESTION
# Statuses worth asking again: too many requests, a timeout, the server's own errors.
_RETRYABLE = {408, 429}


def pause(seconds: float, stop: threading.Event) -> None:
    """Wait before a retry, or until the run stops (the tests replace it, so they never wait)."""
    stop.wait(seconds)


def backoff(attempt: int, retry_after: float | None) -> float:
    """Seconds to wait after failed attempt `attempt`: BACKOFF * 2^(attempt - 1), jittered down to half
    so that parallel requests do not retry in step, at least a 429's Retry-After; at most MAX_BACKOFF."""
    ceiling = settings.TERMITE_PROTOCOL_MAX_BACKOFF_SECONDS
    delay = min(ceiling, settings.TERMITE_PROTOCOL_BACKOFF_SECONDS * 2 ** (attempt - 1))
    delay = random.uniform(delay / 2, delay)
    if retry_after is not None:
        delay = max(delay, min(retry_after, ceiling))
    return delay


@dataclass(frozen=True)
class Task:
    kind: str
    database: str
    question_id: str  # "" for a database's interpretation
    messages: list[Message]
    first_attempt: int


@dataclass
class Attempt:
    number: int
    http_status: int | None = None
    answer: str = ""
    error: str = ""
    tokens: int = 0
    duration_ms: int = 0
    ok: bool = False


@dataclass
class Result:
    task: Task
    attempts: list[Attempt] = field(default_factory=list)
    stopped: bool = False  # the run stopped before the task was done
    budget: str = ""  # the budget that ran out before a request
    fatal: str = ""  # why no request can succeed

    @property
    def answered(self) -> Attempt | None:
        return next((attempt for attempt in self.attempts if attempt.ok), None)


@dataclass(frozen=True)
class Ending:
    status: str
    message: str = ""


class Spending:
    """The run's budget, shared by its threads: requests are counted as they are sent."""

    def __init__(self, run: ProtocolRun) -> None:
        self._lock = threading.Lock()
        self._run = run
        self.requests = run.requests_done
        self.tokens = run.tokens_used
        self._before = run.seconds_spent
        self._started = time.monotonic()

    @property
    def seconds(self) -> float:
        return self._before + time.monotonic() - self._started

    def reserve(self) -> str:
        """Count one more request, or say which budget is spent ("" when the request may go)."""
        with self._lock:
            run = self._run
            if self.requests >= run.max_requests:
                return _("%(n)s requests") % {"n": run.max_requests}
            if run.max_total_tokens is not None and self.tokens >= run.max_total_tokens:
                return _("%(n)s tokens") % {"n": run.max_total_tokens}
            if self.seconds >= run.max_seconds:
                return _("%(n)s seconds") % {"n": run.max_seconds}
            self.requests += 1
            return ""

    def spend_tokens(self, n: int) -> None:
        with self._lock:
            self.tokens += n


def run_execute(*, run_id: int) -> Ending | None:
    """Run the protocol for one run; how it ended, or None when it was not this call's to end (not queued,
    or cancelled meanwhile). The job then hands an ended run to `run_services.run_finished`."""
    claimed = ProtocolRun.objects.filter(pk=run_id, status=ProtocolRun.Status.QUEUED).update(
        status=ProtocolRun.Status.RUNNING,
        started_at=Coalesce(F("started_at"), Now()),
        heartbeat_at=Now(),
        attempts=F("attempts") + 1,
    )
    if claimed != 1:
        return None
    run = ProtocolRun.objects.select_related("version", "user", "team").get(pk=run_id)
    runner = _Runner(run)
    try:
        ending = runner.go()
    except ApiKeyUnreadable as error:
        ending = Ending(ProtocolRun.Status.FAILED, str(error))
    except Exception as error:
        # Only the type: a message could quote the endpoint's answer or the key.
        logger.error("run %s: stopped by %s", run_id, type(error).__name__)
        ending = Ending(ProtocolRun.Status.FAILED, _("An internal error stopped the run."))
    return ending if runner.end(ending) else None


class _Runner:
    def __init__(self, run: ProtocolRun) -> None:
        self.run = run
        self.stop = threading.Event()
        self.spending = Spending(run)
        self.errors = run.errors
        self.done = 0
        self.total = 0
        self.futures: set[Future[Result]] = set()
        self.planned: deque[Task] = deque()
        self.workers = 1
        self.pool: ThreadPoolExecutor | None = None
        self.fatal = ""
        self.budget = ""
        self.cancelled = False

    # The plan.

    def go(self) -> Ending:
        run = self.run
        protocol = catalogue.protocol(run.protocol)
        if protocol is None:
            return Ending(ProtocolRun.Status.FAILED, _("There is no protocol %(id)s.") % {"id": run.protocol})
        self.protocol = protocol
        self.key = decrypt_api_key(run.api_key_encrypted) if run.api_key_encrypted else ""
        questions = (
            Question.objects.filter(version=run.version)
            .scored()
            .select_related("database")
            .order_by("database__slug", "position")
        )
        self.by_database: dict[str, list[Question]] = defaultdict(list)
        self.dumps: dict[str, str] = {}
        for question in questions:
            self.by_database[question.database.slug].append(question)
            if question.database.slug not in self.dumps:
                self.dumps[question.database.slug] = first_turn_dump(question.database)
        self.answers: dict[tuple[str, str, str], str] = {}
        self.tried: dict[tuple[str, str, str], int] = defaultdict(int)
        for kind, database, question_id, attempt, ok, answer in run.exchanges.values_list(
            "kind", "database", "question_id", "attempt", "ok", "answer"
        ):
            self.tried[(kind, database, question_id)] = max(
                self.tried[(kind, database, question_id)], attempt
            )
            if ok:
                self.answers[(kind, database, question_id)] = answer
        self.total = sum(protocol.turns_per_database + len(qs) for qs in self.by_database.values())
        self.workers = max(1, min(run.concurrency, settings.TERMITE_PROTOCOL_MAX_CONCURRENCY))
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=f"run-{run.pk}") as pool:
            self.pool = pool
            try:
                self._work()
            except BaseException:
                # Nothing more is sent; what is in flight is lost, and asked again when the run resumes.
                self.stop.set()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
        return self._ending()

    def _work(self) -> None:
        for database in self.by_database:
            self._plan_database(database)
        self._beat()
        self._hand_out()
        while self.futures:
            finished, self.futures = wait(
                self.futures, timeout=settings.TERMITE_HEARTBEAT_SECONDS, return_when=FIRST_COMPLETED
            )
            # A beat after each answer stored: a cancel is seen before the next one is.
            for future in finished or [None]:
                if future is not None:
                    self._store(future.result())
                if not self.cancelled and not self._beat():
                    self.cancelled = True
                    self.stop.set()
            self._hand_out()

    def _hand_out(self) -> None:
        """Give the threads planned tasks, so that at most `workers` are asked or answered but not stored.
        A thread then asks nothing new until this thread has stored an answer and beaten: a cancel or a
        spent budget stops what follows however slowly this thread runs (a busy machine, a slow database)."""
        assert self.pool is not None
        while self.planned and len(self.futures) < self.workers and not self.stop.is_set():
            self.futures.add(self.pool.submit(self._ask, self.planned.popleft()))

    def _plan_database(self, database: str) -> None:
        if self.protocol.database_turn is None:
            self._plan_questions(database, None)
            return
        key = (INTERPRETATION, database, "")
        if key in self.answers:
            self.done += 1
            self._plan_questions(database, self.answers[key])
        elif self.tried[key] >= settings.TERMITE_PROTOCOL_ATTEMPTS:
            self.done += 1 + len(self.by_database[database])  # given up before: its questions get nothing
        else:
            messages = database_messages(self.protocol, dump=self.dumps[database])
            self._submit(Task(INTERPRETATION, database, "", messages, self.tried[key] + 1))

    def _plan_questions(self, database: str, interpretation: str | None) -> None:
        for question in self.by_database[database]:
            key = (QUESTION, database, question.public_id)
            if key in self.answers or self.tried[key] >= settings.TERMITE_PROTOCOL_ATTEMPTS:
                self.done += 1
                continue
            messages = question_messages(
                self.protocol,
                dump=self.dumps[database],
                question=question.text,
                interpretation=interpretation,
            )
            self._submit(Task(QUESTION, database, question.public_id, messages, self.tried[key] + 1))

    def _submit(self, task: Task) -> None:
        self.planned.append(task)

    # The main thread: storing what came back, and the heartbeat.

    def _store(self, result: Result) -> None:
        task = result.task
        for attempt in result.attempts:
            RunExchange.objects.create(
                run=self.run,
                database=task.database,
                question_id=task.question_id,
                kind=task.kind,
                attempt=attempt.number,
                request=task.messages,
                answer=attempt.answer,
                http_status=attempt.http_status,
                error=attempt.error[:300],
                tokens=attempt.tokens,
                duration_ms=attempt.duration_ms,
                sql=extract_sql(attempt.answer) if attempt.ok and task.kind == QUESTION else "",
                ok=attempt.ok,
            )
            self.errors += not attempt.ok
        answered = result.answered
        if result.fatal:
            self.fatal = self.fatal or result.fatal
            self.stop.set()
        elif result.budget:
            self.budget = self.budget or result.budget
            self.stop.set()
        elif answered is not None:
            self.done += 1
            if task.kind == INTERPRETATION:
                self._plan_questions(task.database, answered.answer)
        elif not result.stopped:  # given up
            self.done += 1 + (len(self.by_database[task.database]) if task.kind == INTERPRETATION else 0)

    def _beat(self) -> bool:
        """Stamp the heartbeat and the progress; False when the run is no longer this attempt's to run."""
        return bool(self._alive().update(heartbeat_at=Now(), **self._progress()))

    def _alive(self) -> ProtocolRunQuerySet:
        return ProtocolRun.objects.filter(
            pk=self.run.pk, status=ProtocolRun.Status.RUNNING, attempts=self.run.attempts
        )

    def _progress(self) -> dict[str, Any]:
        return {
            "requests_done": self.spending.requests,
            "tokens_used": self.spending.tokens,
            "errors": self.errors,
            "tasks_done": self.done,
            "tasks_total": self.total,
            "seconds_spent": self.spending.seconds,
        }

    def _ending(self) -> Ending:
        if self.fatal:
            return Ending(
                ProtocolRun.Status.FAILED,
                _("The run stopped: the portal may not call this endpoint. %(why)s") % {"why": self.fatal},
            )
        if self.budget:
            return Ending(
                ProtocolRun.Status.BUDGET_EXHAUSTED,
                _(
                    "The budget of %(budget)s is spent: %(done)s of %(total)s steps done. You can submit what"
                    " was answered as an incomplete run; the questions not answered count as not submitted."
                )
                % {"budget": self.budget, "done": self.done, "total": self.total},
            )
        return Ending(ProtocolRun.Status.FINISHED)

    def end(self, ending: Ending) -> bool:
        """Store the last progress and how the run ended; False when it had ended already (cancelled)."""
        ProtocolRun.objects.filter(pk=self.run.pk, attempts=self.run.attempts).update(**self._progress())
        if self.cancelled:
            return False
        return bool(
            self._alive().update(
                status=ending.status, message=ending.message, finished_at=Now(), heartbeat_at=None
            )
        )

    # The threads: one task, with its retries.

    def _ask(self, task: Task) -> Result:
        result = Result(task)
        for number in range(task.first_attempt, settings.TERMITE_PROTOCOL_ATTEMPTS + 1):
            if self.stop.is_set():
                result.stopped = True
                return result
            spent = self.spending.reserve()
            if spent:
                result.budget = spent
                self.stop.set()  # at once: no other thread may start a request meanwhile
                return result
            attempt, retry_after = self._once(task, number, result)
            result.attempts.append(attempt)
            if result.fatal:
                self.stop.set()
            if attempt.ok or result.fatal:
                return result
            if number < settings.TERMITE_PROTOCOL_ATTEMPTS:
                pause(backoff(number, retry_after), self.stop)
        return result

    def _once(self, task: Task, number: int, result: Result) -> tuple[Attempt, float | None]:
        """One request: the attempt as stored, and a 429's Retry-After in seconds if it gave one."""
        run = self.run
        payload: dict[str, Any] = {
            "model": run.model,
            "messages": task.messages,
            "temperature": run.temperature,
        }
        for name in ("top_p", "max_tokens", "seed"):
            if getattr(run, name) is not None:
                payload[name] = getattr(run, name)
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        attempt = Attempt(number)
        started = time.monotonic()
        try:
            response = post_json(
                run.endpoint_url,
                payload,
                headers=headers,
                timeout=settings.TERMITE_PROTOCOL_TIMEOUT,
                max_bytes=settings.TERMITE_PROTOCOL_MAX_RESPONSE_BYTES,
            )
        except OutboundRefused as error:
            attempt.error = result.fatal = str(error)  # a sentence that says why
            return attempt, None
        except OutboundFailed as error:
            attempt.error = str(error)
            return attempt, None
        finally:
            attempt.duration_ms = round(1000 * (time.monotonic() - started))
        attempt.http_status = response.status
        if response.status in _RETRYABLE or response.status >= 500:
            attempt.error = f"HTTP {response.status}"
            return attempt, _retry_after(response.headers) if response.status == 429 else None
        if response.status >= 400:
            attempt.error = result.fatal = _("the endpoint answered HTTP %(status)s") % {
                "status": response.status
            }
            return attempt, None
        try:
            attempt.answer, usage = _read_answer(response.body)
        except ValueError as error:
            attempt.error = f"malformed answer: {error}"
            return attempt, None
        attempt.tokens = usage if usage is not None else _counted_tokens(task.messages, attempt.answer)
        self.spending.spend_tokens(attempt.tokens)
        attempt.ok = True
        return attempt, None


def _retry_after(headers: dict[str, str]) -> float | None:
    try:
        return max(0.0, float(headers.get("retry-after", "")))
    except ValueError:  # absent, or an HTTP date: the backoff alone decides
        return None


def _read_answer(body: bytes) -> tuple[str, int | None]:
    """The answer's text and `usage.total_tokens` (None if not given); ValueError says what is malformed."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ValueError("not JSON") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise ValueError("no message content")
    usage = data.get("usage")
    total = usage.get("total_tokens") if isinstance(usage, dict) else None
    return content, total if isinstance(total, int) and not isinstance(total, bool) and total >= 0 else None


def _counted_tokens(messages: list[Message], answer: str) -> int:
    """Tokens by count when the endpoint does not say: about four characters each, as for English and
    Italian text with OpenAI's tokenisers."""
    return math.ceil((sum(len(m["content"]) for m in messages) + len(answer)) / 4)
