"""Shared fixtures: people, the services the suite talks to, and a clean cache for every test.

Services are real. A service that is not configured skips the tests that need it; with
TERMITE_REQUIRE_SERVICES=1 (as in CI) a missing or unreachable service fails them instead.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlparse

import pytest

REQUIRE_SERVICES = os.environ.get("TERMITE_REQUIRE_SERVICES") == "1"


def _reachable(url: str, default_port: int) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection(
            (parsed.hostname or "127.0.0.1", parsed.port or default_port), timeout=2
        ):
            return True
    except OSError:
        return False


def require_service(env_name: str, default_port: int) -> str:
    """The service URL from the environment, or skip (fail under TERMITE_REQUIRE_SERVICES=1)."""
    url = os.environ.get(env_name, "")
    problem = None
    if not url:
        problem = f"{env_name} is not set"
    elif not _reachable(url, default_port):
        problem = f"{env_name} ({urlparse(url).hostname}:{urlparse(url).port or default_port}) is unreachable"
    if problem:
        if REQUIRE_SERVICES:
            pytest.fail(f"{problem}, and TERMITE_REQUIRE_SERVICES=1 requires it")
        pytest.skip(problem)
    return url


def pytest_sessionstart(session: pytest.Session) -> None:
    if not REQUIRE_SERVICES:
        return
    missing = [
        name
        for name, port in (("DATABASE_URL", 5432), ("REDIS_URL", 6379), ("TERMITE_REFERENCE_MYSQL_URL", 3306))
        if not os.environ.get(name) or not _reachable(os.environ[name], port)
    ]
    if missing:
        pytest.exit(
            f"TERMITE_REQUIRE_SERVICES=1 but not set or unreachable: {', '.join(missing)}", returncode=1
        )


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
