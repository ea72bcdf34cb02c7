from __future__ import annotations

from django.db import models


class RateLimitCount(models.Model):
    """The attempts one subject made in one scope within one window of the clock (termite_site/ratelimit.py).

    Its own table, which only the rate limits write and only they purge: a cache that makes room by dropping
    entries (the file cache culls, Redis evicts) would let a flood of other entries drop a lock with them.
    """

    scope = models.CharField(max_length=40)
    subject = models.CharField(max_length=200)
    window_seconds = models.PositiveIntegerField()
    # The window's place on the clock: it starts at number * window_seconds, in seconds since the epoch.
    number = models.BigIntegerField()
    ends = models.DateTimeField(db_index=True)
    count = models.PositiveIntegerField(default=1)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "subject", "window_seconds", "number"], name="ratelimit_one_count_per_window"
            )
        ]

    def __str__(self) -> str:
        return f"{self.scope} {self.subject}: {self.count} until {self.ends:%Y-%m-%d %H:%M:%S}"
