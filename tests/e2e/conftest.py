"""A real portal for the browser: gunicorn and an rqworker on PostgreSQL and Redis, Chromium driving it.

The server and the worker are separate processes sharing the test database, so tests here use
`transactional_db`: what they write is committed and visible to both.
"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.processes import ROOT, free_port, portal_env, start_worker, stop, wait_for
from tests.services import REQUIRE_SERVICES

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


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


@pytest.fixture
def live_portal(real_services):
    """The portal's URL, served by gunicorn with a real rqworker, both on the test database."""
    port = free_port()
    log = ROOT / "var" / "e2e-server.log"
    log.parent.mkdir(exist_ok=True)
    with log.open("w") as out:
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "termite_site.wsgi:application",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            "2",
        ]
        server = subprocess.Popen(
            command, cwd=ROOT, env=portal_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        worker = start_worker()
        try:
            wait_for(lambda: _answers(f"http://127.0.0.1:{port}/healthz"), seconds=30, what="gunicorn")
            yield f"http://127.0.0.1:{port}"
        finally:
            stop(worker)
            stop(server)


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        if REQUIRE_SERVICES:
            pytest.fail(f"{CHROMIUM} is missing (apt-get install chromium chromium-driver)")
        pytest.skip(f"{CHROMIUM} is missing")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread while it runs; Django's ORM, which the same
    # tests use to arrange and check data, refuses to run beside one unless told it is safe (one thread:
    # it is). Only for as long as Playwright runs, so that no other test runs with the check off.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


@pytest.fixture
def page(browser):
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
