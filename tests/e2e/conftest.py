"""A real portal for the browser: gunicorn and an rqworker on PostgreSQL and Redis, Chromium driving it.

The server and the worker are separate processes sharing the test database, so tests here use
`transactional_db`: what they write is committed and visible to both.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.services import REQUIRE_SERVICES, require_service

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "var" / "screenshots"
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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def portal_env(**extra: str) -> dict[str, str]:
    database = connection.settings_dict
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "termite_site.settings_test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "TERMITE_DATA_DIR": str(settings.DATA_DIR),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        **extra,
    }


def _wait_until_up(url: str, process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not answer at {url}")


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def live_portal(transactional_db, settings):
    """The portal's URL, served by gunicorn with a real rqworker, both on the test database."""
    require_service("DATABASE_URL", 5432)
    redis_url = require_service("REDIS_URL", 6379)
    if connection.vendor != "postgresql":
        pytest.skip("the portal's processes share the test database only on PostgreSQL")
    settings.REDIS_URL = redis_url
    from evaluation.queue import scoring_queue

    scoring_queue().empty()
    port = _free_port()
    env = portal_env()
    log = (ROOT / "var").joinpath("e2e-server.log")
    log.parent.mkdir(exist_ok=True)
    with log.open("w") as out:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "termite_site.wsgi:application",
                "-b",
                f"127.0.0.1:{port}",
                "-w",
                "2",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "rqworker", "scoring"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_until_up(f"http://127.0.0.1:{port}/healthz", server)
            yield f"http://127.0.0.1:{port}"
        finally:
            _stop(worker)
            _stop(server)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        if REQUIRE_SERVICES:
            pytest.fail(f"{CHROMIUM} is missing (apt-get install chromium chromium-driver)")
        pytest.skip(f"{CHROMIUM} is missing")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; Django's ORM, used by the same tests to
    # arrange and check data, refuses to run beside one unless told it is safe (it is: one thread).
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(accept_downloads=True, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


@pytest.fixture
def screenshot():
    """Keep the final page of a scenario as a CI artefact under var/screenshots/ (ignored by git)."""

    def take(page, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
