"""Fixed-window rate limits, counted in the database (SQLite embedded, PostgreSQL with DATABASE_URL): a
window lasts as long as it says, idle or not, and nothing but the limits themselves removes a count."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections

from termite_site import ratelimit
from termite_site.models import RateLimitCount

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
    """time.time() for the rate limits, their windows and the ends of their rows alike; nothing sleeps."""
    fake = Clock(START_OF_AN_HOUR)
    monkeypatch.setattr(time, "time", fake)
    return fake


def use_up(limit: int) -> None:
    for _ in range(limit):
        assert not ratelimit.hit("upload", "7", limit=limit, window=HOUR)


def test_it_refuses_the_attempt_after_the_limit(db, clock):
    use_up(3)
    assert ratelimit.hit("upload", "7", limit=3, window=HOUR)


def test_it_keeps_an_hourly_count_through_idle_minutes(db, clock):
    use_up(3)
    clock.advance(10 * 60)  # longer than a cache's default timeout of five minutes
    assert ratelimit.hit("upload", "7", limit=3, window=HOUR)
    clock.advance(40 * 60)
    assert ratelimit.hit("upload", "7", limit=3, window=HOUR)


def test_it_starts_afresh_when_the_window_is_over(db, clock):
    use_up(3)
    clock.advance(HOUR)
    use_up(3)


def test_it_counts_each_subject_and_scope_apart(db, clock):
    use_up(3)
    assert not ratelimit.hit("upload", "7", limit=3, window=60)
    assert not ratelimit.hit("upload", "8", limit=3, window=HOUR)
    assert not ratelimit.hit("signup-ip", "7", limit=3, window=HOUR)


def test_a_reset_forgets_the_attempts_of_the_window(db, clock):
    use_up(3)
    ratelimit.reset("upload", "7", window=HOUR)
    use_up(3)


def test_a_reset_leaves_other_subjects_counted(db, clock):
    use_up(3)
    ratelimit.reset("upload", "8", window=HOUR)
    assert ratelimit.hit("upload", "7", limit=3, window=HOUR)


def test_a_subject_longer_than_its_column_is_counted_by_its_beginning(db, clock):
    forwarded = "203.0.113.7" + "x" * 1000
    assert not ratelimit.hit("login-ip", forwarded, limit=1, window=HOUR)
    assert ratelimit.hit("login-ip", forwarded + "y", limit=1, window=HOUR)


def test_the_rows_of_windows_that_are_over_are_deleted_when_a_window_begins(db, clock):
    use_up(3)
    ratelimit.hit("signup-ip", "10.0.0.1", limit=10, window=60)
    clock.advance(HOUR)
    assert RateLimitCount.objects.count() == 2  # nothing ran since, and nothing else deletes them
    ratelimit.hit("login-ip", "10.0.0.2", limit=10, window=300)
    assert list(RateLimitCount.objects.values_list("scope", "count")) == [("login-ip", 1)]


def test_a_row_is_not_deleted_while_its_window_lasts(db, clock):
    use_up(3)
    clock.advance(HOUR - 1)
    ratelimit.hit("login-ip", "10.0.0.2", limit=10, window=300)
    assert ratelimit.hit("upload", "7", limit=3, window=HOUR)


@pytest.mark.django_db(transaction=True)  # the attempts run on threads, each on a connection of its own
def test_attempts_made_at_the_same_moment_each_count(clock):
    attempts, limit = 11, 5
    together = threading.Barrier(attempts)

    def attempt(_number: int) -> bool:
        together.wait(timeout=30)
        try:
            return ratelimit.hit("login-account", "ada", limit=limit, window=300)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=attempts) as pool:
        refused = list(pool.map(attempt, range(attempts)))
    assert refused.count(False) == limit
    assert RateLimitCount.objects.get(scope="login-account", subject="ada").count == attempts
