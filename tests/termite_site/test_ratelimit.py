"""Fixed-window rate limits: a window lasts as long as it says on every cache back end, idle or not."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from termite_site import ratelimit
from tests.services import require_service

HOUR = 3600
# A moment at which an hourly window starts, so that the test knows where the window ends.
START_OF_AN_HOUR = 500_000 * HOUR


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch) -> Clock:
    """time.time() for the rate limits and for the cache's own expiry alike; nothing sleeps."""
    fake = Clock(START_OF_AN_HOUR)
    monkeypatch.setattr(time, "time", fake)
    return fake


@pytest.fixture(
    params=[
        "filebased.FileBasedCache",
        "locmem.LocMemCache",
        pytest.param("redis.RedisCache", marks=pytest.mark.redis),
    ]
)
def backend(request, settings, tmp_path) -> str:
    """The embedded mode's file cache (its incr() stores the value again with the default timeout), the
    local-memory cache and Redis (whose incr() keeps the expiry). Redis keeps its own clock, so there the
    windows do not move with the fake one; its keys are this test's own, and expire within the hour."""
    location = require_service("REDIS_URL", 6379) if request.param == "redis.RedisCache" else str(tmp_path)
    settings.CACHES = {
        "default": {
            "BACKEND": f"django.core.cache.backends.{request.param}",
            "LOCATION": location,
            "KEY_PREFIX": uuid.uuid4().hex,
        }
    }
    return request.param


def use_up(limit: int) -> None:
    for _ in range(limit):
        assert not ratelimit.hit("upload", "7", limit=limit, window=HOUR)


def test_it_refuses_the_attempt_after_the_limit(backend, clock):
    use_up(3)
    assert ratelimit.hit("upload", "7", limit=3, window=HOUR)


def test_it_keeps_an_hourly_count_through_idle_minutes(backend, clock):
    use_up(3)
    clock.advance(10 * 60)  # longer than the cache's default timeout of five minutes
    assert ratelimit.hit("upload", "7", limit=3, window=HOUR)
    clock.advance(40 * 60)
    assert ratelimit.hit("upload", "7", limit=3, window=HOUR)


def test_it_starts_afresh_when_the_window_is_over(backend, clock):
    use_up(3)
    clock.advance(HOUR)
    use_up(3)


def test_it_counts_each_subject_and_scope_apart(backend, clock):
    use_up(3)
    assert not ratelimit.hit("upload", "8", limit=3, window=HOUR)
    assert not ratelimit.hit("signup-ip", "7", limit=3, window=HOUR)


def test_a_reset_forgets_the_attempts_of_the_window(backend, clock):
    use_up(3)
    ratelimit.reset("upload", "7", window=HOUR)
    use_up(3)


def test_attempts_made_at_the_same_moment_each_count(backend, clock):
    attempts, limit = 11, 5
    together = threading.Barrier(attempts)

    def attempt(_number: int) -> bool:
        together.wait(timeout=30)
        return ratelimit.hit("login-account", "ada", limit=limit, window=300)

    with ThreadPoolExecutor(max_workers=attempts) as pool:
        refused = list(pool.map(attempt, range(attempts)))
    assert refused.count(False) == limit
