"""Fixed-window rate limits on the shared cache (Redis in production, a file cache embedded).

A window is a fixed stretch of the clock, `window` seconds long, and each window counts in a key of its own
that expires when the window ends, whatever the cache back end does to expiry times on incr(). (As with
any fixed window, a burst across the boundary of two may make up to twice the limit.)

An attempt is counted before it is judged, and every attempt takes its own count, so that attempts made at
the same time cannot all slip under the limit: add() and incr() are atomic on Redis and the local-memory
cache; the file cache reads and writes in two steps, so there a lock file makes each count one step.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.filebased import FileBasedCache
from django.core.files import locks
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    proxies = settings.TERMITE_TRUSTED_PROXIES
    forwarded: str = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if len(hops) >= proxies:
            return hops[-proxies]
    remote: str = request.META.get("REMOTE_ADDR", "unknown")
    return remote


def _current(scope: str, subject: str, *, window: int) -> tuple[str, int]:
    """The key counting this window's attempts, and the seconds left until the window ends."""
    number, elapsed = divmod(time.time(), window)
    return f"ratelimit:{scope}:{subject}:{window}:{int(number)}", math.ceil(window - elapsed)


def hit(scope: str, subject: str, *, limit: int, window: int) -> bool:
    """Count one attempt; True when it goes over the limit and must be refused."""
    with _counting_alone():
        return _count(scope, subject, window=window) > limit


def _count(scope: str, subject: str, *, window: int) -> int:
    while True:
        key, left = _current(scope, subject, window=window)
        if cache.add(key, 1, timeout=left):
            return 1
        try:
            count = cache.incr(key)
        except ValueError:  # the window ended, and its key expired, between add() and incr()
            continue
        # The file cache's incr() stores the count again with the default timeout (five minutes), which
        # would end an hourly window after five idle minutes; give the key back its window's end.
        cache.touch(key, left)
        return count


@contextmanager
def _counting_alone() -> Iterator[None]:
    """One count at a time, across the processes of the host, where the cache is the file cache."""
    if not isinstance(caches["default"], FileBasedCache):
        yield
        return
    folder = Path(settings.CACHES["default"]["LOCATION"])
    folder.mkdir(parents=True, exist_ok=True)
    # Beside the cache's own files, which end in .djcache, so that clearing the cache leaves it alone.
    with (folder / "ratelimit.lock").open("a") as lock:
        locks.lock(lock, locks.LOCK_EX)
        try:
            yield
        finally:
            locks.unlock(lock)


def reset(scope: str, subject: str, *, window: int) -> None:
    cache.delete(_current(scope, subject, window=window)[0])
