"""A real portal for the browser: gunicorn and an rqworker on PostgreSQL and Redis, Chromium driving it.

The server and the worker are separate processes sharing the test database, so tests here use
`transactional_db`: what they write is committed and visible to both.
"""

from __future__ import annotations

import email
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.processes import ROOT, portal_env, serve, start_worker, stop

SCREENSHOTS = ROOT / "var" / "screenshots"


@pytest.fixture
def mailbox(tmp_path) -> Path:
    """The folder where the portal writes the mail it sends, one file per connection (Django's file back end)."""
    return tmp_path / "mail"


@pytest.fixture
def live_portal(real_services, mailbox):
    """The portal's URL, served by gunicorn with a real rqworker, both on the test database."""
    mail = {
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(mailbox),
    }
    worker = start_worker()
    try:
        with serve(portal_env(**mail), log=ROOT / "var" / "e2e-server.log") as url:
            yield url
    finally:
        stop(worker)


@pytest.fixture
def confirmation_links(mailbox) -> Callable[[str], list[str]]:
    """The e-mail confirmation links the portal has mailed to an address, oldest first."""

    def links(address: str) -> list[str]:
        found = []
        for path in sorted(mailbox.glob("*.log")):
            # The file back end writes each message followed by a line of 79 dashes.
            for raw in path.read_bytes().split(b"\n" + b"-" * 79 + b"\n"):
                message = email.message_from_bytes(raw)
                if not raw.strip() or address not in message.get("To", ""):
                    continue
                for part in message.walk():
                    if part.get_content_type() == "text/plain":
                        text = part.get_payload(decode=True).decode(part.get_content_charset() or "utf-8")
                        found += re.findall(r"https?://\S+/accounts/confirm/\S+/", text)
        return found

    return links


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
