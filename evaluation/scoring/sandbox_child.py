"""The sandbox's child process: it runs the queries it is sent, one at a time, and answers each.

The child is a fresh interpreter that imports this module and `functions` only, and every submission
waits for it to start: so neither imports much (no sqlglot, dataclasses, typing, multiprocessing or
subprocess). Both sides of the pipe send marshal data behind an 8-byte length (`send_message`,
`Inbox`). Linux only (the memory limit reads /proc).
"""

from __future__ import annotations

import contextlib
import marshal
import math
import os
import resource
import sqlite3
import time

from evaluation.scoring.functions import LIKE_PATTERN_MAX_CHARS, install_functions, raised_error

# For the type checker only: importing typing would slow the child's start, which every submission waits for.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    # The fields of an Execution as marshal sends them.
    _Answer: TypeAlias = tuple[Any, ...]

MAX_ERROR_CHARS = 300
_PROGRESS_STEPS = 1000  # VM instructions between two looks at the clock
_FETCH_ROWS = 1000  # the most rows read at a time, counted against the limits before the next step
_ONE_WRITE_BYTES = 65_536  # a message up to this size goes out in one write, with its length
_READ_BYTES = 65_536  # what one read takes in at most, unless a long message needs more

# Far above what a question about these databases needs, far below what hurts.
_SQLITE_LIMITS = {
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
    sqlite3.SQLITE_LIMIT_COLUMN: 1000,
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 50,
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 300,
    sqlite3.SQLITE_LIMIT_FUNCTION_ARG: 100,
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: LIKE_PATTERN_MAX_CHARS,
    sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 1,
    sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER: 0,
    sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,
}
_ALLOWED_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})
_SYNTAX_MARKERS = ("syntax error", "incomplete input", "unrecognized token", "one statement at a time")
_LIMIT_MARKERS = ("too large", "too many", "too big", "too complex", "stack overflow", "at most")
_FUNCTION_FAILED = "user-defined function raised exception"


def send_message(fd: int, payload: bytes) -> None:
    """Write one message: its length in 8 bytes, then its bytes."""
    header = len(payload).to_bytes(8, "big")
    parts = (header + payload,) if len(payload) <= _ONE_WRITE_BYTES else (header, payload)
    for part in parts:
        view = memoryview(part)
        while view:
            view = view[os.write(fd, view) :]


class Inbox:
    """The messages arriving on `fd`: each read takes in all that is there (up to `_READ_BYTES`, or the
    rest of a long message at once), so several short messages cost one system call."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()

    def take(self) -> bytearray | None:
        """The next message if it has fully arrived, else None (without reading)."""
        buffer = self.buffer
        if len(buffer) < 8:
            return None
        end = 8 + int.from_bytes(buffer[:8], "big")
        if len(buffer) < end:
            return None
        message = buffer[8:end]
        del buffer[:end]
        return message

    def read(self) -> None:
        """One read, which waits until something arrives; EOFError when the other side has closed."""
        buffer = self.buffer
        size = _READ_BYTES
        if len(buffer) >= 8:
            size = max(size, 8 + int.from_bytes(buffer[:8], "big") - len(buffer))
        chunk = os.read(self.fd, size)
        if not chunk:
            raise EOFError
        buffer += chunk

    def receive(self) -> bytearray:
        """The next message, waiting for it; EOFError when the other side has closed the pipe."""
        while (message := self.take()) is None:
            self.read()
        return message


def serve(fd: int) -> None:
    """Read the limits, confine this process, say when it is ready, then answer until the pipe closes.

    A request is (database URI, SQL, seconds); an answer is the fields of an `Execution`, then when the
    query ended (time.monotonic()). A request (database URI,) opens that database ahead of its queries;
    its answer is when that ended.
    """
    inbox = Inbox(fd)
    limits = marshal.loads(inbox.receive())
    _confine(limits["memory_bytes"])
    worker = _Worker(limits)
    send_message(fd, marshal.dumps(time.monotonic()))
    while True:
        try:
            request = inbox.receive()
        except EOFError:
            return
        request = marshal.loads(request)
        if len(request) == 1:
            worker.open_ahead(*request)
            send_message(fd, marshal.dumps(time.monotonic()))
        else:
            send_message(fd, worker.reply(*request))


def _confine(memory_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    address_space = mapped + memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))


class _Worker:
    """One connection per database, one query at a time. `limits` is `Limits` as a dict."""

    def __init__(self, limits: dict[str, float]) -> None:
        self.max_rows = int(limits["max_rows"])
        self.max_value_bytes = int(limits["max_value_bytes"])
        self.max_sql_bytes = int(limits["max_sql_bytes"])
        self.max_result_bytes = int(limits["max_result_bytes"])
        self.heap_bytes = int(limits["heap_bytes"])
        self.kill_grace_seconds = limits["kill_grace_seconds"]
        self.query_seconds = limits["query_seconds"]
        self.deadline = math.inf
        self.connections: dict[str, sqlite3.Connection] = {}
        # RLIMIT_CPU as last set: nothing else here changes it, so a query whose limit is the same as the
        # one before costs no system call for it.
        self.cpu_limits = resource.getrlimit(resource.RLIMIT_CPU)

    def reply(self, uri: str, sql: str, seconds: float) -> bytes:
        result = self.run(uri, sql, seconds)
        payload = marshal.dumps((*result, time.monotonic()))
        if len(payload) > self.max_result_bytes:
            message = f"the result is larger than {self.max_result_bytes} bytes"
            payload = marshal.dumps(("resource_limit", (), (), message, result[4], False, time.monotonic()))
        return payload

    def open_ahead(self, uri: str) -> None:
        """Open the database and read its schema, under a query's limits; a failure is left to its queries."""
        try:
            connection = self.connection(uri)
            self.arm_cpu_backstop(self.query_seconds + self.kill_grace_seconds)
            self.deadline = time.monotonic() + self.query_seconds
            connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
        except (sqlite3.Error, MemoryError):
            pass
        finally:
            self.deadline = math.inf

    def run(self, uri: str, sql: str, seconds: float) -> _Answer:
        started = time.perf_counter()
        raised_error()  # an error a function raised in an earlier query is not this one's
        try:
            connection = self.connection(uri)
            self.arm_cpu_backstop(seconds + self.kill_grace_seconds)
            self.deadline = time.monotonic() + seconds
            cursor = connection.execute(sql)
            if cursor.description is None:
                return _failure("syntax_error", "the text holds no query", started, static=True)
            columns = tuple(column[0] for column in cursor.description)
            with contextlib.closing(cursor):
                rows, too_much = self.fetch(cursor)
            if too_much:
                return _failure("resource_limit", too_much, started)
            return ("ok", columns, tuple(rows), None, time.perf_counter() - started, False)
        except sqlite3.Error as exc:
            outcome, message = _classify(exc, raised_error())
            static = outcome != "timeout" and self.compile_error(uri, sql) == str(exc)
            return _failure(outcome, message, started, static=static)
        except MemoryError:
            return _failure("resource_limit", "the query ran out of memory", started)
        finally:
            self.deadline = math.inf

    def compile_error(self, uri: str, sql: str) -> str | None:
        """The error SQLite gives the query before running it, if any: compiling reads the schema, never
        the rows, so such an error (a typo, an unknown column, a write) says nothing of the data. EXPLAIN
        compiles the statement and lists its program without running it. The caller calls an error
        static only if it is this very message: whatever EXPLAIN did to the text, that one is data-free."""
        self.deadline = math.inf  # an interrupted EXPLAIN is no compile error
        try:
            self.connection(uri).execute("EXPLAIN " + sql).close()
        except sqlite3.Error as exc:
            return None if getattr(exc, "sqlite_errorname", None) == "SQLITE_INTERRUPT" else str(exc)
        except MemoryError:
            return None
        return None

    def fetch(self, cursor: sqlite3.Cursor) -> tuple[list[tuple[object, ...]], str | None]:
        """The rows, read in steps and counted as they come, so that a result over a limit stops being
        read at once instead of being built whole first; with the limit passed, if any. A step reads as
        many rows as, at the size of those so far, still fit (one at first, at most `_FETCH_ROWS`): a few
        huge rows are never read in bulk past the byte cap."""
        rows: list[tuple[object, ...]] = []
        size = 0
        step = 1
        while chunk := cursor.fetchmany(step):
            rows += chunk
            if len(rows) > self.max_rows:
                return [], f"the query returns more than {self.max_rows} rows"
            size += sum(map(_row_bytes, chunk))
            if size > self.max_result_bytes:
                return [], f"the result is larger than {self.max_result_bytes} bytes"
            step = max(1, min(_FETCH_ROWS, (self.max_result_bytes - size) * len(rows) // max(size, 1)))
        return rows, None

    def arm_cpu_backstop(self, seconds: float) -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        soft = math.ceil(usage.ru_utime + usage.ru_stime + seconds) + 1
        hard = self.cpu_limits[1]
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        if (soft, hard) != self.cpu_limits:
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
            self.cpu_limits = (soft, hard)

    def expired(self) -> bool:
        return time.monotonic() > self.deadline

    def connection(self, uri: str) -> sqlite3.Connection:
        if uri not in self.connections:
            self.connections[uri] = self._open(uri)
        return self.connections[uri]

    def _open(self, uri: str) -> sqlite3.Connection:
        connection = sqlite3.connect(uri, uri=True, isolation_level=None)
        # Sorting and grouping stay in memory, under the heap limit, instead of in temp files.
        connection.execute("PRAGMA temp_store = MEMORY")
        # One limit for the whole process, whichever connection sets it: SQLite fails an allocation past it.
        connection.execute(f"PRAGMA hard_heap_limit = {self.heap_bytes}")
        if hasattr(connection, "enable_load_extension"):  # absent when Python's SQLite cannot load any
            connection.enable_load_extension(False)
        install_functions(connection)
        for category, value in _SQLITE_LIMITS.items():
            connection.setlimit(category, value)
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.max_value_bytes)
        connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, self.max_sql_bytes)
        connection.set_authorizer(_authorize)
        connection.set_progress_handler(self.expired, _PROGRESS_STEPS)
        return connection


def _authorize(
    action: int, arg1: str | None, arg2: str | None, db_name: str | None, source: str | None
) -> int:
    if action not in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _row_bytes(row: tuple[object, ...]) -> int:
    """About what a row takes in an answer: its text and blobs, and a few bytes for every other value."""
    return sum(len(value) if isinstance(value, str | bytes) else 9 for value in row)


def _failure(outcome: str, message: str, started: float, *, static: bool = False) -> _Answer:
    return (outcome, (), (), message[:MAX_ERROR_CHARS], time.perf_counter() - started, static)


def _classify(exc: sqlite3.Error, raised: str | None) -> tuple[str, str]:
    """syntax_error: SQLite cannot read the text as one statement; timeout: the progress handler stopped
    it; resource_limit: a size or depth limit was hit; runtime_error: the rest (unknown tables or columns,
    statements that are not reads, errors while running, among them MySQL's own that a function of
    `functions` `raised`, with MySQL's message in place of SQLite's "user-defined function raised
    exception")."""
    name = getattr(exc, "sqlite_errorname", None)
    message = str(exc)
    if raised is not None and message == _FUNCTION_FAILED:
        return "runtime_error", raised
    if name == "SQLITE_INTERRUPT":
        return "timeout", "the query ran past its time budget"
    if name == "SQLITE_AUTH" or "not authorized" in message:
        return "runtime_error", "not allowed: only queries that read may run"
    if name in ("SQLITE_TOOBIG", "SQLITE_NOMEM") or any(marker in message for marker in _LIMIT_MARKERS):
        return "resource_limit", message
    if any(marker in message for marker in _SYNTAX_MARKERS):
        return "syntax_error", message
    if "decode to UTF-8" in message:
        return "runtime_error", "the query produced text that is not valid UTF-8"
    return "runtime_error", message
