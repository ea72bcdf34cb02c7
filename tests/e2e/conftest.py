"""A real portal for the browser: gunicorn and an rqworker on PostgreSQL and Redis, Chromium driving it.

The server and the worker are separate processes sharing the test database, so tests here use
`transactional_db`: what they write is committed and visible to both.
"""

from __future__ import annotations

import email
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from leaderboard.services import leaderboard_changed
from tests.factories import baseline_make
from tests.leaderboard.scored import scored_fields
from tests.processes import (
    ROOT,
    portal_cache_clear,
    portal_env,
    require_postgresql,
    require_process_lane,
    serve,
    start_worker,
    stop,
)
from tests.services import require_service

SCREENSHOTS = ROOT / "var" / "screenshots"


@pytest.fixture(scope="module")
def portal_mailbox(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mail")


@pytest.fixture
def mailbox(portal_mailbox) -> Path:
    """The folder where the portal writes the mail it sends, one file per connection (Django's file back
    end); empty when the test starts."""
    for path in portal_mailbox.glob("*"):
        path.unlink()
    return portal_mailbox


@pytest.fixture(scope="module")
def module_portal(request, django_db_setup, portal_mailbox):
    """gunicorn and a real rqworker on the test database, started once for the module's tests (none of
    them kills it), with the module's PORTAL_ENV if it has one: its URL."""
    require_process_lane("gunicorn and an rq worker", request.node)
    require_service("DATABASE_URL", 5432)
    require_service("REDIS_URL", 6379)
    require_postgresql()
    env = {
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(portal_mailbox),
        **getattr(request.module, "PORTAL_ENV", {}),
    }
    worker = start_worker(**env)
    try:
        with serve(portal_env(**env), log=ROOT / "var" / f"e2e-{request.node.name}.log") as url:
            yield url
    finally:
        stop(worker)


@pytest.fixture
def live_portal(real_services, module_portal, mailbox) -> str:
    """The module's portal, its cache and mailbox empty, its database as this test leaves it (committed:
    `transactional_db`, flushed after the test)."""
    portal_cache_clear()
    return module_portal


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


@pytest.fixture
def ranked(live_portal, make_submission, make_team, demo_version):
    """A leaderboard as wide as a real one: teams, long model names, every column group, a baseline."""
    now = timezone.now()
    team = make_team("Università di Torino, gruppo NLP")
    systems = [
        ("Qwen2.5-Coder-32B-Instruct con schema linking", "32B", 21, 19),
        ("Llama-3.1-70B-Instruct few-shot", "70B", 18, 16),
        ("Mistral-7B fine-tuned on Termite-like data", "7B", 12, 10),
    ]
    submissions = [
        make_submission(
            model_name=name,
            team=team,
            model_size=size,
            weights="open",
            approach="prompting",
            spider_dev_ea=80.0,
            training_cutoff="2024-06-30",
            shots=3,
            created_at=now - timedelta(days=10 - i),
            **scored_fields(correct, ts=ts),
        )
        for i, (name, size, correct, ts) in enumerate(systems)
    ]
    baseline_make(
        version=demo_version, model_name="DIN-SQL (GPT-4)", per_database={"biblioteca": 0.5, "ciclismo": 0.4}
    )
    leaderboard_changed(version=demo_version)
    return live_portal, submissions
