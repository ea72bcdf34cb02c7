"""A stamp per user, kept in the shared cache, that every change of the user replaces: what a process
checks a user's row it kept against (`backends.RememberingModelBackend`) before using it again.

A change replaces the stamp at once and again once its transaction commits: a row read before the
commit, under the stamp of that moment, is not used after it. Readers take the stamp before the row, so
a row kept under a stamp is never older than the change that stamp follows.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.core.cache import cache
from django.db import transaction


def _key(pk: object) -> str:
    return f"accounts:user:{pk}:stamp"


def current(pk: object) -> str:
    key = _key(pk)
    stamp = cache.get(key)
    if stamp is None:  # no change since the cache started, or evicted: a stamp no row was read under
        cache.add(key, uuid.uuid4().hex, timeout=None)
        stamp = cache.get(key)
    if not isinstance(stamp, str):  # gone again at once: a cache that keeps nothing
        raise LookupError(f"the cache keeps no stamp for user {pk}")
    return stamp


def forget(pks: Iterable[object]) -> None:
    """Say these users changed. Saves and deletes say it themselves (a receiver of the accounts app); an
    UPDATE, which sends no signal, calls this in its transaction."""
    keys = [_key(pk) for pk in pks]
    if not keys:
        return

    def replace() -> None:
        cache.delete_many(keys)

    replace()
    transaction.on_commit(replace)
