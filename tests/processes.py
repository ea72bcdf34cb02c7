"""Real portal processes for tests: workers and servers sharing the test database, data folder and Redis,
or an embedded portal (SQLite, in-process scoring) on a data folder of its own."""

from __future__ import annotations

import contextlib
import contextvars
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection

from tests.services import REQUIRE_SERVICES

ROOT = Path(__file__).resolve().parents[1]

# Debian's Chromium, driven by Playwright; it never downloads a browser of its own. Without the
# background-networking flags Chromium keeps calling out of this machine's closed network.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# How long a test waits for a process it started to be ready. The process lane runs browsers, portals and
# workers side by side on two cores: an embedded gunicorn of 4 workers took over 30 s to answer in CI.
PROCESS_START_SECONDS = 120

# The test (or module, for a module's fixtures) running now: set by tests/conftest.py, so that every
# helper here can check that what starts a process is in the process lane (`.ci/run`, README "Tests").
RUNNING: contextvars.ContextVar[pytest.Item | pytest.Module] = contextvars.ContextVar("RUNNING")


def require_process_lane(what: str, node: pytest.Item | pytest.Module | None = None) -> None:
    """Fail a test that starts `what` (a process) without the `processes` marker: it would run in the
    main lane, beside tests that assume nothing else shares their database, Redis and cores."""
    node = node or RUNNING.get(None)
    if node is not None and node.get_closest_marker("processes") is None:
        pytest.fail(f"{node.nodeid} starts {what}: mark it `pytest.mark.processes` (the process lane)")


def require_postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("separate processes share the test database only on PostgreSQL")


def child_env() -> dict[str, str]:
    """This process's environment, less pytest-xdist's worker name: a child is no xdist worker, and
    settings_test.py would move its Redis database once more."""
    return {name: value for name, value in os.environ.items() if name != "PYTEST_XDIST_WORKER"}


def portal_env(**extra: str) -> dict[str, str]:
    database = connection.settings_dict
    return {
        **child_env(),
        "DJANGO_SETTINGS_MODULE": "termite_site.settings_test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "TERMITE_DATA_DIR": str(settings.DATA_DIR),
        "TERMITE_TEST_PORTAL": "1",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        **extra,
    }


def portal_cache_clear() -> None:
    """Empty the cache the portal's processes share in Redis: Django's keys (":1:..."), not the queues
    that a running worker listens on."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        keys = list(client.scan_iter(match=":1:*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def embedded_env(data_dir: Path) -> dict[str, str]:
    """The embedded mode on a data folder of its own: a SQLite file there, and scoring in-process."""
    inherited = {
        name: value for name, value in child_env().items() if name not in ("DATABASE_URL", "REDIS_URL")
    }
    return {
        **inherited,
        "DJANGO_SETTINGS_MODULE": "termite_site.settings_test",
        "TERMITE_DATA_DIR": str(data_dir),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    require_process_lane("manage.py")
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@contextlib.contextmanager
def serve(env: dict[str, str], *, log: Path, workers: int = 2, threads: int = 1) -> Iterator[str]:
    """gunicorn serving the portal on a free port of 127.0.0.1: its URL, until the block ends."""
    require_process_lane("gunicorn")
    port = free_port()
    log.parent.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "gunicorn", "termite_site.wsgi:application"]
    with log.open("w") as out:
        server = subprocess.Popen(
            [*command, "-b", f"127.0.0.1:{port}", "-w", str(workers), "--threads", str(threads)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            _wait_until_serving(server, f"http://127.0.0.1:{port}", log)
            yield f"http://127.0.0.1:{port}"
        finally:
            stop(server)


@contextlib.contextmanager
def evicting_redis(*, maxmemory: str) -> Iterator[str]:
    """A Redis of the test's own that evicts keys once `maxmemory` is full, as a production Redis under a
    `maxmemory` policy does (the suite's shared Redis never evicts, and its policy is the whole server's):
    its URL, until the block ends."""
    require_process_lane("redis-server")
    if shutil.which("redis-server") is None:
        if REQUIRE_SERVICES:
            pytest.fail("redis-server is missing (apt-get install redis-server)")
        pytest.skip("redis-server is missing")
    port = free_port()
    evicting = ["--maxmemory", maxmemory, "--maxmemory-policy", "allkeys-lru"]
    server = subprocess.Popen(
        [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            *evicting,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        wait_for(lambda: _pings(url), seconds=PROCESS_START_SECONDS, what="redis-server")
        yield url
    finally:
        stop(server)


def _pings(url: str) -> bool:
    client = redis.Redis.from_url(url)
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False
    finally:
        client.close()


def _wait_until_serving(server: subprocess.Popen, url: str, log: Path) -> None:
    """Until gunicorn answers at `url`, or has exited; either failure shows gunicorn's log. Its workers
    import the whole portal, several at once (7 s for four here with six busy loops on the two cores)."""
    try:
        wait_for(
            lambda: server.poll() is not None or _answers(f"{url}/healthz"),
            seconds=PROCESS_START_SECONDS,
            what="gunicorn",
        )
    except AssertionError as failure:
        raise AssertionError(f"{failure}; its log:\n{_tail(log)}") from None
    if server.returncode is not None:
        raise AssertionError(f"gunicorn exited with {server.returncode}; its log:\n{_tail(log)}")


def _tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:  # 503: up, saying what fails (no worker yet, say): it answers
        return True
    except OSError:
        return False


def run_worker_burst(*queues: str, **env: str) -> subprocess.CompletedProcess:
    """`rqworker QUEUES --burst` (the scoring queue unless told): works through them, then exits."""
    require_process_lane("an rq worker")
    return subprocess.run(
        [sys.executable, "manage.py", "rqworker", *(queues or ("scoring",)), "--burst"],
        cwd=ROOT,
        env=portal_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def start_worker(**env: str) -> subprocess.Popen:
    """A long-running worker in its own process group, so that a test can kill it with its work-horse. It
    listens on every queue, as the README starts it: scoring, protocol runs, and databases staff add."""
    require_process_lane("an rq worker")
    return subprocess.Popen(
        [sys.executable, "manage.py", "rqworker", "scoring", "protocol", "imports"],
        cwd=ROOT,
        env=portal_env(**env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def start_logged_worker(*, name: str, log: Path, **env: str) -> subprocess.Popen:
    """A long-running worker called `name`, writing its log (and its work-horses') to `log`."""
    require_process_lane("an rq worker")
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "manage.py", "rqworker", "scoring", "--name", name],
            cwd=ROOT,
            env=portal_env(**env),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def kill_group(process: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(process.pid, sig)
    process.wait(timeout=30)


def kill_tree(process: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Kill the process with everything below it, as a machine losing power would. Not only its group: an
    rq work-horse calls setpgrp(), so killing the worker's group leaves the horse running its job."""
    below = _descendants(process.pid)  # before the kill, which hands them over to init
    kill_group(process, sig)
    for pid in below:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def children(pid: int) -> list[int]:
    """The processes `pid` started that still run: a worker's work-horse, while it has a job."""
    return _children_by_parent().get(pid, [])


def _descendants(pid: int) -> list[int]:
    parents = _children_by_parent()
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _children_by_parent() -> dict[int, list[int]]:
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # "pid (command) state ppid ...": the command may hold spaces and parentheses.
            child, rest = stat.read_text().split(" ", 1)
            parents.setdefault(int(rest.rsplit(")", 1)[1].split()[1]), []).append(int(child))
    return parents


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        kill_group(process, signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition, *, seconds: float = 60, step: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")
