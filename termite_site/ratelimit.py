"""Fixed-window rate limits, counted in a table of their own (`RateLimitCount`).

Not in the cache: cached pages share it, and a cache makes room by dropping entries (the file cache culls
a third of its files past its MAX_ENTRIES, Redis evicts under any `maxmemory` policy), so a flood of
distinct pages could drop a locked account's count with them. Only this module writes the table, and it
deletes a row only once its window is over.

A window is a fixed stretch of the clock, `window` seconds long, and each window of each scope and subject
counts in a row of its own. (As with any fixed window, a burst across the boundary of two may make up to
twice the limit.)

An attempt is counted before it is judged, and every attempt takes its own count: one statement inserts
the row or adds one to it and returns the count (`INSERT ... ON CONFLICT DO UPDATE ... RETURNING`, on
SQLite 3.35 or later and PostgreSQL), so that attempts made at the same time cannot all slip under the
limit. The callers count outside any transaction, so that the count is committed at once and stands
whatever the request does next.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection
from django.http import HttpRequest

from termite_site.models import RateLimitCount

# A subject longer than the column is text its sender chose (an address or a name no account can have), so
# cutting it merges only that sender's own counts.
_SUBJECT_LENGTH = RateLimitCount._meta.get_field("subject").max_length or 0


def client_ip(request: HttpRequest) -> str:
    proxies = settings.TERMITE_TRUSTED_PROXIES
    forwarded: str = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if len(hops) >= proxies:
            return hops[-proxies]
    remote: str = request.META.get("REMOTE_ADDR", "unknown")
    return remote


def hit(scope: str, subject: str, *, limit: int, window: int) -> bool:
    """Count one attempt; True when it goes over the limit and must be refused."""
    return _count(scope, subject, window=window) > limit


def reset(scope: str, subject: str, *, window: int) -> None:
    RateLimitCount.objects.filter(**_row(scope, subject, window=window)).delete()


def _row(scope: str, subject: str, *, window: int) -> dict[str, str | int]:
    """The fields naming the row that counts this window's attempts."""
    return {
        "scope": scope,
        "subject": subject[:_SUBJECT_LENGTH],
        "window_seconds": window,
        "number": int(time.time() // window),
    }


def _count(scope: str, subject: str, *, window: int) -> int:
    row = _row(scope, subject, window=window)
    ends = _moment((int(row["number"]) + 1) * window)
    quote = connection.ops.quote_name
    table = quote(RateLimitCount._meta.db_table)
    key = ", ".join(quote(name) for name in row)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({key}, {quote('ends')}, {quote('count')}) "
            f"VALUES ({', '.join(['%s'] * len(row))}, %s, 1) "
            f"ON CONFLICT ({key}) DO UPDATE SET {quote('count')} = {table}.{quote('count')} + 1 "
            f"RETURNING {quote('count')}",
            [*row.values(), connection.ops.adapt_datetimefield_value(ends)],
        )
        (count,) = cursor.fetchone()
    if count == 1:
        # A window's first attempt, the one that made a row, clears the rows of windows that are over: the
        # table holds about as many rows as there are windows still open, with no job to run.
        RateLimitCount.objects.filter(ends__lte=_moment(time.time())).delete()
    return int(count)


def _moment(seconds: float) -> datetime:
    # From time.time(), like the windows themselves: one clock for both.
    return datetime.fromtimestamp(seconds, tz=UTC)
