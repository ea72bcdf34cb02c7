"""Running untrusted SQL against the benchmark databases, one query at a time, under limits.

    with Sandbox(limits) as sandbox:
        execution = sandbox.execute(db_path, "SELECT ...")

Queries run in one long-lived child process that answers over a pipe, so a query that exhausts memory or
crashes SQLite fails that query only: the parent starts a fresh child and goes on. Layers of containment:

- the parent refuses empty text, NUL bytes, text that is not UTF-8 and text longer than `max_sql_bytes`;
- each database is a private read-only copy made by the parent, opened by the child with
  `mode=ro&immutable=1`, so the caller's file is never opened for writing;
- an authorizer allows reading only (SELECT, READ, FUNCTION, RECURSIVE) and denies load_extension;
- sqlite3's own check refuses a second statement before anything runs;
- SQLite limits (`setlimit`) bound value size, query length, expression depth, compound SELECTs, ...;
- SQLite's heap has a hard limit (`heap_bytes`): a query that would pass it (a sort, a DISTINCT, a
  recursive UNION, a huge value) fails with SQLITE_NOMEM, a resource limit, and its memory is freed;
- a progress handler stops SQLite when the per-query time budget is spent;
- the child has an address-space limit (RLIMIT_AS, `memory_bytes` over the fresh interpreter's own),
  which bounds the rest (the rows in Python, the portal's own SQL functions), and a CPU-time backstop
  (RLIMIT_CPU) that also ends a runaway child whose parent died; the parent kills a child that misses its
  budget by `kill_grace_seconds` (one step of SQLite's virtual machine, such as a huge printf, runs on
  past the progress handler);
- a per-submission total time budget over all budgeted queries, and a bound on their wall time
  (`wall_seconds`): from the first one's start, whatever happens in between, no budgeted query starts past
  it, so how long a scoring takes is bounded whatever its queries do.

The child is a fresh interpreter (`sys.executable -I`) running `sandbox_child`, started when the sandbox
is entered (it boots while the caller goes on, and the requests sent meanwhile wait for it in the pipe)
and again only after it dies; its start-up cost is `Sandbox.startup_seconds`. `execute_many` and
`stream` pipeline their queries: the next requests already wait in the pipe while the child runs one, so
the two processes do not take turns; each read takes in every answer already there. `stream` takes a
generator too, which makes each query while the child runs those before (the scorer transpiles there). `open_ahead` has the child open databases while the caller works.
Linux only (the memory limit reads /proc).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import marshal
import math
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, NamedTuple, TypeAlias, cast

from evaluation.scoring.sandbox_child import Inbox, send_message

Outcome: TypeAlias = Literal["ok", "syntax_error", "runtime_error", "timeout", "resource_limit"]

_CHILD_START_SECONDS = 60.0
# Queries in flight at once, and their SQL characters (at most 4 bytes each in UTF-8): far below what the
# pipe holds (about 200 kB), so that sending never blocks while the child is busy sending a large answer.
_PIPELINE_DEPTH = 16
_PIPELINE_CHARS = 16_000
# The child is a fresh interpreter, not a fork (no inherited threads, locks or memory) and not
# multiprocessing's spawn (which would run the parent's __main__ again). It gets the parent's sys.path.
_CHILD_BOOTSTRAP = (
    "import sys; sys.path[:] = sys.argv[2:]; "
    "from evaluation.scoring.sandbox_child import serve; serve(int(sys.argv[1]))"
)


@dataclass(frozen=True)
class Limits:
    """Per query: time, SQL size, rows, size of one value, size of the whole result, memory of the child
    (on top of what the fresh interpreter maps) and of SQLite's heap within it, and how long past its
    budget a query may go before the child is killed. `total_seconds` bounds the wall time of all
    budgeted queries of one sandbox, and `max_total_result_bytes` the size of their results together.
    `wall_seconds` bounds the time from the first budgeted query's start to the last one's end,
    everything included that `total_seconds` does not count (the caller's work between results, a new
    child after one died): each budgeted query's budget is cut to what is left of it, so the bound holds
    but for one child's start and one kill grace."""

    query_seconds: float = 2.0
    total_seconds: float = 300.0
    wall_seconds: float = math.inf
    max_sql_bytes: int = 100_000
    max_rows: int = 20_000
    max_value_bytes: int = 4_000_000
    max_result_bytes: int = 8_000_000
    # What the budgeted queries' results may hold together, as sent by the child: with `stream`, each is
    # compared and dropped as it arrives, so this bounds the work, and `max_result_bytes` the memory.
    max_total_result_bytes: int = 256_000_000
    # The child's share of the 300 MB the whole scoring process tree may take: the scoring process itself
    # (`manage.py score`, a worker's work-horse) peaks near 150 MB, the fresh interpreter maps about 20 MB,
    # and these bound the rest. SQLite's heap is capped below the address space so that a query hungry
    # for it fails cleanly, with room left for the rows in Python (at most `max_result_bytes`).
    memory_bytes: int = 112 * 2**20
    heap_bytes: int = 64 * 2**20
    kill_grace_seconds: float = 0.5


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Execution:
    """What one query did. `error` describes the given query only; `elapsed` is in seconds. `static`: the
    outcome was decided by the query's text and the schema alone (it failed to compile, or was refused
    before it went to the engine), so it tells nothing of the data."""

    outcome: Outcome
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    error: str | None = None
    elapsed: float = 0.0
    static: bool = False


class Query(NamedTuple):
    """One query for `Sandbox.execute_many`; budgeted=False (the gold queries) keeps it off the total budget."""

    db_path: str | os.PathLike[str]
    sql: str
    budgeted: bool = True


@dataclass(slots=True)
class _InFlight:
    position: int  # in the caller's list of queries
    query: Query
    seconds: float
    # time.monotonic() just before its request was written to the child (`_flush`): it cannot have
    # started earlier. A request waits in the outbox while the caller makes the next queries.
    sent_at: float = math.inf


@dataclass(frozen=True)
class _Copy:
    uri: str  # how the child opens it: read-only and immutable
    sha256: str


class Sandbox:
    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.startup_seconds = 0.0
        self.child_starts = 0
        self._spent = 0.0
        self._wall_started: float | None = None  # time.monotonic() when the first budgeted query went
        self._result_bytes = 0  # the budgeted queries' answers so far, as sent
        self._copies: dict[Path, _Copy] = {}
        self._directory: tempfile.TemporaryDirectory[str] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        self._answers = select.poll()
        self._inbox = Inbox(-1)
        # Requests of queries in flight not yet written: they go in one write before the parent waits.
        self._outbox: list[bytes] = []
        self._unwritten: list[_InFlight] = []  # the queries whose requests are in the outbox
        self._chars_in_flight = 0
        self._opening = 0  # databases the child was asked to open ahead, whose answers are not read yet
        self._spawned_at = 0.0
        # When the child finished its last answer, on its own clock: CLOCK_MONOTONIC is one clock for the
        # whole machine on Linux. A query starts at that time or at its request, whichever is later.
        self._free_at = -math.inf
        self._ready = False
        self._failed_starts = 0  # fresh children in a row that died before they were up

    def __enter__(self) -> Sandbox:
        self._directory = tempfile.TemporaryDirectory(prefix="sql-sandbox-")
        try:
            self._spawn_child()
        except BaseException:
            self._directory.cleanup()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop_child()
        if self._directory is not None:
            self._directory.cleanup()
            self._directory = None
        self._copies.clear()

    @property
    def child_pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def spent_seconds(self) -> float:
        """Wall time charged to the total budget so far."""
        return self._spent

    def database_sha256(self, db_path: str | os.PathLike[str]) -> str:
        return self._copy(db_path).sha256

    def open_ahead(self, db_paths: Iterable[str | os.PathLike[str]]) -> None:
        """Copy these databases now and have the child open them (and read their schemas) while the caller
        does other work, so that their first queries find them open. Their queries wait for it."""
        uris = [self._copy(db_path).uri for db_path in db_paths]
        if self._channel is None or not uris:
            return
        for uri in uris:
            payload = marshal.dumps((uri,))
            self._outbox += (len(payload).to_bytes(8, "big"), payload)
        self._opening += len(uris)
        self._flush()

    def execute(self, db_path: str | os.PathLike[str], sql: str, *, budgeted: bool = True) -> Execution:
        """Run one query. `budgeted=False` (for the gold queries) keeps it off the total budget."""
        return self.execute_many([Query(db_path, sql, budgeted)])[0]

    def execute_many(self, queries: Sequence[Query]) -> list[Execution]:
        """Run the queries in order, each as `execute` would run it; their executions in the same order."""
        executions: list[Execution | None] = [None] * len(queries)
        for index, execution in self.stream(queries):
            executions[index] = execution
        return cast(list[Execution], executions)  # every entry is set by now

    def stream(self, queries: Iterable[Query]) -> Iterator[tuple[int, Execution]]:
        """Run the queries in order; yield (index, execution) for each as soon as it is known, so that the
        caller can use a result and drop it before the next one arrives.

        `queries` may be a generator that makes each query when it is asked for (the scorer transpiles
        there): it is asked for the next one while the child runs those already sent, so the two
        processes work at once, and the time it takes counts on no budget, as if it had been made before.
        Each query's budget runs from when the child can start it: its request, or the answer before it.
        A budgeted query is sent ahead only while the total budget can cover it and every one in flight
        to its end, so each gets the same budget as one at a time would. A query that kills the child
        fails alone: the ones sent after it go again, to a fresh child.
        """
        pending = enumerate(queries)
        todo: deque[tuple[int, Query]] = deque()  # taken from `pending`, not sent yet (or to send again)
        in_flight: deque[_InFlight] = deque()
        uris: dict[str | os.PathLike[str], str] = {}
        self._chars_in_flight = 0
        exhausted = False
        while True:
            # While the child boots, the caller makes queries ahead: nothing would be answered meanwhile.
            if not exhausted and (not todo or self._booting()):
                taken = self._next_query(pending)
                exhausted = taken is None
                if taken is not None:
                    refused = refusal(taken[1].sql, self.limits)
                    if refused is not None:
                        yield taken[0], refused
                        continue
                    todo.append(taken)
            if not (todo or in_flight):
                return
            seconds = self._seconds_for(todo[0][1], in_flight) if todo else None
            if seconds is None:
                if not exhausted and self._booting():
                    continue
                if self._settled():
                    yield self._receive_oldest(in_flight, todo)
                else:
                    self._send_again(in_flight, todo)
            elif seconds <= 0:
                yield (
                    todo.popleft()[0],
                    Execution("timeout", error="the submission's total time budget is spent"),
                )
            else:
                index, query = todo.popleft()
                if query.db_path not in uris:
                    uris[query.db_path] = self._copy(query.db_path).uri
                if query.budgeted and self._wall_started is None:
                    self._wall_started = time.monotonic()
                flight = _InFlight(index, query, seconds)
                self._send(uris[query.db_path], flight, first=not in_flight)
                in_flight.append(flight)
                self._chars_in_flight += len(query.sql)

    def _next_query(self, pending: Iterator[tuple[int, Query]]) -> tuple[int, Query] | None:
        """The caller's next query, None when there is none; the time it takes to make it is kept off the
        wall-time bound. The requests waiting in the outbox stay there: they are written when the parent
        is about to wait for an answer, and so gives up the processor (each write wakes the child, which on
        a busy machine would otherwise take the parent's turn)."""
        asked_at = time.monotonic()
        taken = next(pending, None)
        if self._wall_started is not None:
            self._wall_started += time.monotonic() - asked_at
        return taken

    def _seconds_for(self, query: Query, in_flight: deque[_InFlight]) -> float | None:
        """The budget of the next query, or None while it must wait for the queries in flight."""
        limits = self.limits
        left = self._budget_left() if query.budgeted else math.inf
        if not in_flight:
            return min(limits.query_seconds, left)
        if len(in_flight) >= _PIPELINE_DEPTH or self._chars_in_flight + len(query.sql) > _PIPELINE_CHARS:
            return None
        # Far from the end of the total budget, the sum below cannot come near the bound: skip it.
        if query.budgeted and not left > 2 * (_PIPELINE_DEPTH + 1) * (
            limits.query_seconds + limits.kill_grace_seconds
        ):
            # What the queries in flight may still spend, each up to its budget and the kill grace.
            left -= sum(q.seconds + limits.kill_grace_seconds for q in in_flight if q.query.budgeted)
            if left < limits.query_seconds + limits.kill_grace_seconds:
                return None
        return limits.query_seconds

    def _budget_left(self) -> float:
        """What is left of the total budget, and of the wall-time bound once the first budgeted query went."""
        left = self.limits.total_seconds - self._spent
        if self._wall_started is None:
            return min(left, self.limits.wall_seconds)
        return min(left, self.limits.wall_seconds - (time.monotonic() - self._wall_started))

    def _send(self, uri: str, flight: _InFlight, *, first: bool) -> None:
        """Send one request, the first in flight or not.

        While the child is busy with the queries in flight, the request waits in the outbox, which
        `_flush` writes before the parent waits for an answer."""
        if first and (self._process is None or self._process.poll() is not None):
            self._spawn_child()  # the child died since its last answer
        # A child still booting reads the request once it is up (`_settled`).
        assert self._channel is not None
        payload = marshal.dumps((uri, flight.query.sql, flight.seconds))
        self._outbox.append(len(payload).to_bytes(8, "big"))
        self._outbox.append(payload)
        self._unwritten.append(flight)
        if first:  # the child is idle: it goes now
            self._flush()

    def _flush(self) -> None:
        if self._outbox:
            assert self._channel is not None
            fd, data = self._channel.fileno(), b"".join(self._outbox)
            self._outbox.clear()
            written_at = time.monotonic()
            for flight in self._unwritten:
                flight.sent_at = written_at
            self._unwritten.clear()
            # If the child is gone, waiting for the oldest query in flight (this one, if alone) tells it.
            with contextlib.suppress(OSError):
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]

    def _receive_oldest(
        self, in_flight: deque[_InFlight], todo: deque[tuple[int, Query]]
    ) -> tuple[int, Execution]:
        oldest = in_flight.popleft()
        self._chars_in_flight -= len(oldest.query.sql)
        if oldest.sent_at == math.inf:
            self._flush()  # its request still waits in the outbox
        # Never later than the query's real start, so that neither its budget nor the total is undercounted.
        started = max(oldest.sent_at, self._free_at)
        deadline = started + oldest.seconds + self.limits.kill_grace_seconds
        assert self._channel is not None
        inbox = self._inbox
        try:
            # Answers read before, with an earlier one, cost no system call.
            answer = inbox.take()
            if answer is None:
                self._flush()  # the child has the requests waiting while the parent waits
                # Once an answer has begun to arrive, the rest follows without a deadline, as before.
                wait = deadline - time.monotonic()
                if inbox.buffer or self._answers.poll(max(math.ceil(wait * 1000), 0)):
                    answer = inbox.receive()
            if answer is not None:
                *fields, self._free_at = marshal.loads(answer)
                ended = self._free_at
                execution = Execution(*fields)
                if oldest.query.budgeted:
                    execution = self._count_result(execution, len(answer))
            else:
                self._stop_child()
                ended = min(time.monotonic(), deadline)
                execution = Execution(
                    "timeout",
                    error=f"the query ran past its {oldest.seconds:g} s budget and was killed",
                    elapsed=ended - started,
                )
        except (EOFError, OSError):
            ended = min(time.monotonic(), deadline)
            execution = self._child_lost(ended - started)
        if oldest.query.budgeted:
            # The query's own time, on the child's clock where it answered: not the caller's work before
            # it came to read the answer (making the next queries, comparing results).
            self._spent += max(ended - started, 0.0)
        if self._channel is None:  # the child is gone: the queries sent after this one go again
            self._send_again(in_flight, todo)
        return oldest.position, execution

    def _send_again(self, in_flight: deque[_InFlight], todo: deque[tuple[int, Query]]) -> None:
        """The queries sent to a child that is gone go first to the next one."""
        todo.extendleft(reversed([(query.position, query.query) for query in in_flight]))
        in_flight.clear()
        self._chars_in_flight = 0

    def _count_result(self, execution: Execution, size: int) -> Execution:
        """The execution, or resource_limit if its result would take the results past their total."""
        if self._result_bytes + size > self.limits.max_total_result_bytes:
            message = f"the submission's results passed {self.limits.max_total_result_bytes} bytes in all"
            return Execution("resource_limit", error=message, elapsed=execution.elapsed)
        self._result_bytes += size
        return execution

    def _booting(self) -> bool:
        """Whether the child has not said yet that it is up, without waiting for it."""
        return not self._ready and not self._inbox.buffer and not self._answers.poll(0)

    def _settled(self) -> bool:
        """Wait until the child is up and has opened the databases asked for ahead (`open_ahead`): the
        queries sent meanwhile cannot start before. False when it died first: it is stopped, and the
        queries in flight go again, to a fresh child."""
        inbox = self._inbox
        try:
            if not self._ready:
                self._await_child()
            while self._opening:
                answer = inbox.take()
                if answer is None:
                    if not (inbox.buffer or self._answers.poll(_CHILD_START_SECONDS * 1000)):
                        raise EOFError
                    answer = inbox.receive()
                self._free_at = marshal.loads(answer)
                self._opening -= 1
        except (EOFError, OSError):
            self._stop_child()
            return False
        return True

    def _copy(self, db_path: str | os.PathLike[str]) -> _Copy:
        if self._directory is None:
            raise RuntimeError("use the Sandbox as a context manager")
        source = Path(db_path).resolve()
        copy = self._copies.get(source)
        if copy is None:
            target = Path(self._directory.name, f"{len(self._copies)}.sqlite")
            shutil.copyfile(source, target)
            target.chmod(0o400)
            with target.open("rb") as file:
                digest = hashlib.file_digest(file, "sha256").hexdigest()
            uri = f"file:{urllib.parse.quote(str(target))}?mode=ro&immutable=1"
            copy = self._copies[source] = _Copy(uri, digest)
        return copy

    def _child_lost(self, elapsed: float) -> Execution:
        assert self._process is not None
        exitcode = self._process.wait()
        self._stop_child()
        if exitcode == -signal.SIGXCPU:
            return Execution("timeout", error="the query used up the CPU-time backstop", elapsed=elapsed)
        return Execution(
            "resource_limit",
            error=f"the query brought down the SQL engine (exit status {exitcode})",
            elapsed=elapsed,
        )

    def _spawn_child(self) -> None:
        """Start a child without waiting for it: it boots while the caller does other work."""
        self._stop_child()
        self._spawned_at = time.monotonic()
        parent_socket, child_socket = socket.socketpair()
        with child_socket:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-c", _CHILD_BOOTSTRAP, str(child_socket.fileno()), *sys.path],
                pass_fds=[child_socket.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,  # the terminal's Ctrl-C is for the parent, which stops the child
            )
        self._channel = parent_socket
        send_message(parent_socket.fileno(), marshal.dumps(dataclasses.asdict(self.limits)))
        # One poll object for the child's life: waiting for an answer is one system call.
        self._answers = select.poll()
        self._answers.register(self._channel.fileno(), select.POLLIN)
        self._inbox = Inbox(self._channel.fileno())
        self._ready = False

    def _await_child(self) -> None:
        """Read the child's word that it is up; raises EOFError when it died first, and RuntimeError when
        a fresh child died so twice in a row."""
        assert self._channel is not None
        try:
            if not self._answers.poll(_CHILD_START_SECONDS * 1000):
                raise EOFError
            ready_at = marshal.loads(self._inbox.receive())
        except (EOFError, OSError):
            self._stop_child()
            self._failed_starts += 1
            if self._failed_starts > 1:
                raise RuntimeError("the SQL sandbox process did not start") from None
            raise EOFError from None
        self._ready = True
        self._failed_starts = 0
        # The queries sent while it booted start once it is up: their budgets run from then.
        self._free_at = max(self._free_at, ready_at)
        self.child_starts += 1
        # CLOCK_MONOTONIC is one clock for the whole machine on Linux: this is the child's own boot time.
        self.startup_seconds += ready_at - self._spawned_at

    def _stop_child(self) -> None:
        self._opening = 0
        self._outbox.clear()
        self._unwritten.clear()
        self._inbox.buffer.clear()
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None


def refusal(sql: str, limits: Limits) -> Execution | None:
    """Reject, without a round trip, text that cannot be a query or is too long to be a sensible one: a
    check of the text alone, which nothing of the databases can change."""
    if not sql.strip():
        return Execution("syntax_error", error="the query is empty", static=True)
    if "\x00" in sql:
        return Execution("syntax_error", error="the query contains a NUL character", static=True)
    try:
        size = len(sql.encode("utf-8"))
    except UnicodeEncodeError:
        return Execution("syntax_error", error="the query is not valid UTF-8 text", static=True)
    if size > limits.max_sql_bytes:
        message = f"the query is longer than {limits.max_sql_bytes} bytes"
        return Execution("resource_limit", error=message, static=True)
    return None
