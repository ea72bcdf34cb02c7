"""A portal to load, and a load to put on it: shared by the load benchmarks. Loopback only, bounded.

`Portal` sets up a scratch PostgreSQL database and data folder, runs migrations and the demo content in
this process, then starts gunicorn (and optionally rq workers) as real processes on 127.0.0.1.
`hammer` sends GET requests from threads, each with its own keep-alive connection, for a fixed time;
`wrk` has Debian's C client send them, when it is installed (`wrk_installed`).
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POSTGRES = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/7")
# A request unanswered after this long is an error, not a latency, for both clients.
CLIENT_TIMEOUT_SECONDS = 30


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Portal:
    """A scratch portal: `with Portal("bench") as portal: portal.start_web(); portal.start_workers(2)`."""

    def __init__(self, name: str):
        self.database = f"termite_{name}"
        self.data_dir = Path(tempfile.mkdtemp(prefix=f"termite-{name}-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen] = []
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "termite_site.settings",
            "DEBUG": "0",
            "SECRET_KEY": "benchmark-only-secret-key-" + "x" * 30,
            "TERMITE_GOLD_KEY": "q1v4JQn3bX9b0vJ6wq2m3Zs0xWlC1yH8d7m5P2aTQ0U=",
            "DATABASE_URL": f"{POSTGRES}/{self.database}",
            "REDIS_URL": REDIS,
            "TERMITE_DATA_DIR": str(self.data_dir),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "0",
            # One account uploads every submission, each public: no quota may stop it.
            "TERMITE_DAILY_QUOTA": "1000",
            "TERMITE_VERSION_QUOTA": "1000",
            "TERMITE_PUBLIC_PER_VERSION": "1000",
            "TERMITE_UPLOAD_LIMIT_PER_HOUR": "1000",
            "LOG_LEVEL": "WARNING",
        }

    def __enter__(self) -> Portal:
        self._psql(f'DROP DATABASE IF EXISTS "{self.database}"')
        self._psql(f'CREATE DATABASE "{self.database}"')
        os.environ.update(self.env)
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        call_command("collectstatic", verbosity=0, interactive=False)
        from django.core.cache import cache

        cache.clear()
        return self

    def __exit__(self, *exc) -> None:
        for process in reversed(self.processes):
            self.stop(process)
        from django.db import connections

        connections.close_all()
        self._psql(f'DROP DATABASE IF EXISTS "{self.database}"')
        failed = [log for log in self.data_dir.glob("process-*.log") if "Traceback" in log.read_text()]
        for log in failed:
            print(f"--- errors logged by a portal process ({log.name}):\n{log.read_text()[-3000:]}")

    @staticmethod
    def stop(process: subprocess.Popen) -> None:
        """SIGTERM to the process and its children (an rq worker then stops warmly), and wait for it."""
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)

    def _psql(self, sql: str) -> None:
        subprocess.run(["psql", POSTGRES + "/postgres", "-qc", sql], check=True, capture_output=True)

    def _spawn(self, *command: str) -> subprocess.Popen:
        log = (self.data_dir / f"process-{len(self.processes)}.log").open("w")
        process = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes.append(process)
        return process

    def start_web(self, workers: int = 3) -> subprocess.Popen:
        process = self._spawn(
            sys.executable,
            "-m",
            "gunicorn",
            "termite_site.wsgi:application",
            "-b",
            f"127.0.0.1:{self.port}",
            "-w",
            str(workers),
            "--log-level",
            "warning",
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):
                    return process
            except urllib.error.HTTPError:  # 503 before the workers start: the web site is up all the same
                return process
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("gunicorn did not start")

    def start_workers(self, count: int, queues: tuple[str, ...] = ("scoring",)) -> list[subprocess.Popen]:
        """`count` rq workers, each listening on `queues` (the protocol runs' queue too: `("scoring",
        "protocol")`)."""
        return [self._spawn(sys.executable, "manage.py", "rqworker", *queues) for _ in range(count)]


@dataclass
class Load:
    seconds: float  # from the first request sent to the last answer
    latencies: list[float] = field(default_factory=list)
    body_bytes: int = 0  # of the 200 answers, as sent (compressed when the server compressed them)
    failures: Counter = field(default_factory=Counter)  # (path, status or exception name) -> count

    @property
    def errors(self) -> int:
        return sum(self.failures.values())

    def merged_with(self, other: Load) -> Load:
        """This load and `other`, as one: their times added, their requests together."""
        return Load(
            seconds=self.seconds + other.seconds,
            latencies=self.latencies + other.latencies,
            body_bytes=self.body_bytes + other.body_bytes,
            failures=self.failures + other.failures,
        )

    @property
    def requests_per_second(self) -> float:
        return len(self.latencies) / self.seconds

    @property
    def bytes_per_request(self) -> float:
        return self.body_bytes / len(self.latencies) if self.latencies else float("nan")

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")

    def line(self, label: str) -> str:
        return (
            f"{label:<34} {len(self.latencies):>6} req  {self.requests_per_second:>7.1f} req/s  "
            f"p50 {1000 * self.percentile(50):>6.1f} ms  p99 {1000 * self.percentile(99):>7.1f} ms  "
            f"mean {1000 * statistics.fmean(self.latencies or [0]):>6.1f} ms  errors {self.errors}"
            + (f" {dict(self.failures)}" if self.failures else "")
        )


def hammer(
    base_url: str,
    paths: list[str],
    *,
    users: int,
    seconds: float,
    headers: dict[str, str] | None = None,
    visitors: Sequence[dict[str, str]] = (),
) -> Load:
    """`users` threads, each cycling through `paths` with one keep-alive connection, for `seconds`, sending
    `headers` with each request. With `visitors`, thread n also sends `visitors[n % len(visitors)]`: a
    visitor's own headers, such as the session cookie of a signed-in user."""
    host, port = base_url.removeprefix("http://").split(":")
    load = Load(seconds=seconds)
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def user(offset: int) -> None:
        own_headers = {**(headers or {}), **(visitors[offset % len(visitors)] if visitors else {})}
        connection = http.client.HTTPConnection(host, int(port), timeout=CLIENT_TIMEOUT_SECONDS)
        n = offset
        while time.monotonic() < stop_at:
            path = paths[n % len(paths)]
            n += 1
            started = time.perf_counter()
            size = 0
            try:
                connection.request("GET", path, headers=own_headers)
                response = connection.getresponse()
                size = len(response.read())
                outcome = response.status
            except (OSError, http.client.HTTPException) as error:
                connection.close()
                connection = http.client.HTTPConnection(host, int(port), timeout=CLIENT_TIMEOUT_SECONDS)
                outcome = type(error).__name__
            elapsed = time.perf_counter() - started
            with lock:
                if outcome == 200:
                    load.latencies.append(elapsed)
                    load.body_bytes += size
                else:
                    load.failures[(path, outcome)] += 1
        connection.close()

    threads = [threading.Thread(target=user, args=(n,)) for n in range(users)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # The last answers may come after `seconds` (a server that falls behind keeps clients waiting): the
    # rate is over the time until the last one.
    load.seconds = seconds + time.monotonic() - stop_at
    return load


# wrk's report, as one JSON line: its own counts, and latency percentiles in microseconds (every tenth of
# a percent, so that the loads of several turns can be merged into one line).
_WRK_REPORT = """
done = function(summary, latency, requests)
  local e = summary.errors
  local quantiles = {}
  for p = 1, 1000 do quantiles[p] = string.format('%f', latency:percentile(p / 10)) end
  io.write(string.format(
    '{"requests": %d, "seconds": %f, "bytes": %d, "connect": %d, "read": %d, "write": %d, ' ..
    '"status": %d, "timeout": %d, "mean": %f, "quantiles": [%s]}\\n',
    summary.requests, summary.duration / 1e6, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency.mean, table.concat(quantiles, ', ')))
end
"""

# Each request with the headers of the next visitor in turn (wrk's connections share one `request`).
_WRK_VISITORS = """
local visitors = {%s}
local next_visitor = 0
request = function()
  next_visitor = next_visitor %% #visitors + 1
  return wrk.format(nil, nil, visitors[next_visitor])
end
"""


@dataclass
class WrkLoad:
    """What wrk measured: wrk is C and event-driven, so on a two-core machine the load it generates
    leaves the server nearly all the CPU, where Python threads sending the same load take one core."""

    requests: int
    seconds: float
    bytes: int  # everything read, headers included: the bytes on the wire, from the server
    errors: int  # connection errors, timeouts and answers other than 2xx/3xx
    mean: float
    # The latency at every tenth of a percent, and how many requests each load merged here had.
    quantiles: list[tuple[float, ...]]
    counts: list[int]

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.seconds

    @property
    def bytes_per_request(self) -> float:
        return self.bytes / self.requests if self.requests else float("nan")

    def percentile(self, p: float) -> float:
        """Of one load, wrk's; of loads merged, each load's quantiles weighted by its requests."""
        points = sorted(
            (latency, count / len(quantiles))
            for quantiles, count in zip(self.quantiles, self.counts, strict=True)
            for latency in quantiles
        )
        wanted, seen = p / 100 * sum(self.counts), 0.0
        for latency, weight in points:
            seen += weight
            if seen >= wanted - 1e-9:
                return latency
        return points[-1][0] if points else float("nan")

    def merged_with(self, other: WrkLoad) -> WrkLoad:
        return WrkLoad(
            requests=self.requests + other.requests,
            seconds=self.seconds + other.seconds,
            bytes=self.bytes + other.bytes,
            errors=self.errors + other.errors,
            mean=(self.mean * self.requests + other.mean * other.requests)
            / max(1, self.requests + other.requests),
            quantiles=self.quantiles + other.quantiles,
            counts=self.counts + other.counts,
        )

    def line(self, label: str) -> str:
        return (
            f"{label:<34} {self.requests:>6} req  {self.requests_per_second:>7.1f} req/s  "
            f"p50 {1000 * self.percentile(50):>6.1f} ms  p99 {1000 * self.percentile(99):>7.1f} ms  "
            f"mean {1000 * self.mean:>6.1f} ms  errors {self.errors}"
        )


def wrk_installed() -> bool:
    """Whether Debian's `wrk` is on the PATH: without it the load benchmarks run the Python clients alone."""
    return shutil.which("wrk") is not None


def wrk(
    url: str,
    *,
    users: int,
    seconds: float,
    headers: dict[str, str] | None = None,
    visitors: Sequence[dict[str, str]] = (),
) -> WrkLoad:
    """`users` connections from wrk (Debian's package `wrk`) on two threads, for `seconds`, GET `url`,
    sending `headers`; with `visitors`, each request also sends the next visitor's own headers in turn."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(_WRK_REPORT)
        if visitors:
            tables = ", ".join(_lua_table({**(headers or {}), **visitor}) for visitor in visitors)
            script.write(_WRK_VISITORS % tables)
        script.flush()
        # The Python clients' timeout (`hammer`): wrk's own, 2 s, counted a slow answer as an error.
        timeout = f"{CLIENT_TIMEOUT_SECONDS:.0f}s"
        command = ["wrk", "-t", "2", "-c", str(users), "-d", f"{seconds:.0f}s", "--timeout", timeout]
        command += ["-s", script.name]
        for name, value in (headers or {}).items():
            command += ["-H", f"{name}: {value}"]
        output = subprocess.run([*command, url], check=True, capture_output=True, text=True).stdout
    report = json.loads(output.strip().splitlines()[-1])
    return WrkLoad(
        requests=report["requests"],
        seconds=report["seconds"],
        bytes=report["bytes"],
        errors=sum(report[kind] for kind in ("connect", "read", "write", "status", "timeout")),
        mean=report["mean"] / 1e6,
        quantiles=[tuple(latency / 1e6 for latency in report["quantiles"])],
        counts=[report["requests"]],
    )


def _lua_table(headers: dict[str, str]) -> str:
    return (
        "{"
        + ", ".join(f"[{json.dumps(name)}] = {json.dumps(value)}" for name, value in headers.items())
        + "}"
    )
