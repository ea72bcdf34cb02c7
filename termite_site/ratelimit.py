"""Fixed-window rate limits on the shared cache (Redis in production, a file cache embedded)."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    proxies = settings.TERMITE_TRUSTED_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if len(hops) >= proxies:
            return hops[-proxies]
    return request.META.get("REMOTE_ADDR", "unknown")


def _key(scope: str, subject: str) -> str:
    return f"ratelimit:{scope}:{subject}"


def _count(scope: str, subject: str, *, window: int) -> int:
    key = _key(scope, subject)
    # add() only sets a missing key, so the window starts at the first attempt and is not extended.
    if cache.add(key, 1, timeout=window):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add() and incr()
        cache.add(key, 1, timeout=window)
        return 1


def hit(scope: str, subject: str, *, limit: int, window: int) -> bool:
    """Count one attempt; True when it goes over the limit and must be refused."""
    return _count(scope, subject, window=window) > limit


def reset(scope: str, subject: str) -> None:
    cache.delete(_key(scope, subject))
