"""Shared fixtures: people, the services the suite talks to, and a clean cache for every test.

Services are real. A service that is not configured skips the tests that need it; with
TERMITE_REQUIRE_SERVICES=1 (as in CI) a missing or unreachable service fails them instead.
"""

from __future__ import annotations

import os

import pytest

from tests.migrations import migrate_to_latest
from tests.services import REQUIRE_SERVICES, reachable, require_service, termite_archive_path


def pytest_sessionstart(session: pytest.Session) -> None:
    if not REQUIRE_SERVICES:
        return
    missing = [
        name
        for name, port in (("DATABASE_URL", 5432), ("REDIS_URL", 6379), ("TERMITE_REFERENCE_MYSQL_URL", 3306))
        if not os.environ.get(name) or not reachable(os.environ[name], port)
    ]
    if missing:
        pytest.exit(
            f"TERMITE_REQUIRE_SERVICES=1 but not set or unreachable: {', '.join(missing)}", returncode=1
        )


@pytest.fixture
def latest_after():
    """The database goes back to the latest migrations, which the tests after a migration's test need."""
    yield
    migrate_to_latest()


@pytest.fixture(autouse=True)
def _clean_cache():
    from django.conf import settings

    if not settings.configured:  # plain-Python tests run without Django too (-p no:django)
        yield
        return
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def redis_url() -> str:
    return require_service("REDIS_URL", 6379)


@pytest.fixture
def password() -> str:
    return "a-long-test-passphrase-42"


@pytest.fixture
def owner(django_user_model, password):
    return django_user_model.objects.create_user(
        username="ada", email="ada@example.org", password=password, affiliation="Università di Torino"
    )


@pytest.fixture
def other_user(django_user_model, password):
    return django_user_model.objects.create_user(
        username="bruno", email="bruno@example.org", password=password
    )


@pytest.fixture
def staff(django_user_model, password):
    return django_user_model.objects.create_user(
        username="carla", email="carla@example.org", password=password, is_staff=True
    )


@pytest.fixture
def termite_archive():
    """The real Termite archive beside the checkout; its tests skip cleanly where it is absent."""
    path = termite_archive_path()
    if not path.is_file():
        pytest.skip(f"the Termite archive is not at {path}")
    return path


@pytest.fixture
def reference_url() -> str:
    return require_service("TERMITE_REFERENCE_MYSQL_URL", 3306)


@pytest.fixture
def demo_version(db):
    """The project's own demo benchmark, loaded through the same path as an admin's upload."""
    from evaluation.services import demo_benchmark_load

    return demo_benchmark_load()


@pytest.fixture
def demo_with_suites(db, settings):
    """The demo benchmark with its test suites, as `dev.py start` loads it (other tests skip suites)."""
    from evaluation.services import demo_benchmark_load

    settings.TERMITE_SUITE_CANDIDATES = 12
    return demo_benchmark_load()


@pytest.fixture
def in_process(settings):
    """Score in this process (django-rq's synchronous mode), as the embedded default does."""
    settings.REDIS_URL = ""


@pytest.fixture
def gold():
    from tests.demo import demo_gold

    return demo_gold()


@pytest.fixture
def make_submission(demo_version, owner):
    """A stored submission, straight in the table: for tests about what happens after an upload."""

    from leaderboard.models import Submission

    def make(**fields) -> Submission:
        values = {
            "user": owner,
            "version": demo_version,
            "model_name": "Modello di prova",
            "predictions": {"biblioteca-001": "SELECT 1"},
            "file_name": "p.jsonl",
            "file_sha256": "0" * 64,
            "file_format": "jsonl",
            "scorer_version": "1.0.0",
        }
        values.update(fields)
        return Submission.objects.create(**values)

    return make


@pytest.fixture
def make_team(db, owner):
    """A team made as on the site: owned by `by` (the owner unless told), with `members` in it too."""
    from termite_site.accounts.models import TeamMembership
    from termite_site.accounts.services import team_create

    def make(name: str = "Gruppo Torino", *, by=None, members=()):
        team = team_create(user=by or owner, name=name)
        for member in members:
            TeamMembership.objects.create(team=team, user=member)
        return team

    return make


@pytest.fixture
def real_services(transactional_db, settings):
    """PostgreSQL and Redis shared with real worker and server processes; an empty scoring queue."""
    from tests.processes import require_postgresql

    require_service("DATABASE_URL", 5432)
    settings.REDIS_URL = require_service("REDIS_URL", 6379)
    require_postgresql()
    from leaderboard.queue import scoring_queue

    scoring_queue().empty()
    return settings
