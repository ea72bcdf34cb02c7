"""Stamps kept in the shared cache, one per user and one per session, that every change of the user or of
the session replaces: what a process checks what it kept of them against before using it again
(`backends.RememberingModelBackend`, `known_visitors`).

A change replaces the stamp at once and again once its transaction commits: what was read before the
commit, under the stamp of that moment, is not used after it. Readers take the stamp before what it
stamps, so that what they keep under a stamp is never older than the change the stamp follows.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from django.core.cache import cache
from django.db import transaction


def of_user(pk: object) -> str:
    return f"accounts:user:{pk}:stamp"


def of_session(session_key: str) -> str:
    return f"accounts:session:{session_key}:stamp"


def current(key: str, *, lifetime: int | None = None) -> str:
    """The stamp under `key`, made if there is none (a new one: nothing was read under it), to last
    `lifetime` seconds (None: until replaced)."""
    stamp = cache.get(key)
    if stamp is None:  # no change since the cache started, or evicted
        cache.add(key, uuid.uuid4().hex, timeout=lifetime)
        stamp = cache.get(key)
    if not isinstance(stamp, str):  # gone again at once: a cache that keeps nothing
        raise LookupError(f"the cache keeps no stamp under {key}")
    return stamp


def read(keys: list[str]) -> dict[str, Any]:
    """The stamps under `keys`, by key; a key with no stamp is left out (and matches nothing kept)."""
    return cache.get_many(keys) if keys else {}


def forget(keys: Iterable[str], *, lifetime: int | None = None) -> None:
    """Say that what these stamps stamp changed: new stamps, to last `lifetime` seconds. A user's save and
    delete and a session's say it themselves; an UPDATE of users, which sends no signal, calls this in
    its transaction."""
    keys = list(keys)
    if not keys:
        return

    def replace() -> None:
        cache.set_many({key: uuid.uuid4().hex for key in keys}, timeout=lifetime)

    replace()
    transaction.on_commit(replace)
