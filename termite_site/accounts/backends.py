"""Who is signed in, known without a query on every request.

Django's `ModelBackend.get_user` reads the user's row on every request of a signed-in visitor: on the
leaderboard, whose page is otherwise served from the cache, that query was a third of the request.
`RememberingModelBackend` keeps each user's row in the process and uses it again while the user's stamp
(`stamps.of_user`: every change of the user replaces it) is the one it was read under.

The row, not the object, is kept: each request gets a new `User` made of it (`Model.from_db`, as a query
would), so that nothing a request caches on its user (permissions) outlives the request. The session's
check of its password hash runs on that object as on the one a query gives.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import ModelBackend

from termite_site.accounts import stamps
from termite_site.accounts.models import User


class RememberingModelBackend(ModelBackend):
    def get_user(self, user_id: Any) -> User | None:
        try:
            stamp = stamps.current(stamps.of_user(user_id))
        except Exception:  # a cache outage costs a query, as without this backend
            return super().get_user(user_id)
        kept = kept_user(user_id, stamp)
        if kept is not None:
            return kept if self.user_can_authenticate(kept) else None
        user = super().get_user(user_id)
        if user is not None:
            if len(_ROWS) >= _ROWS_KEPT:
                _ROWS.clear()
            _ROWS[user_id] = (stamp, user._state.db, tuple(getattr(user, name) for name in _FIELDS))
            setattr(user, _STAMP_ATTRIBUTE, stamp)
        return user


def kept_user(pk: object, stamp: str) -> User | None:
    """A new `User` of the row kept for `pk`, if it was read under `stamp`."""
    kept = _ROWS.get(pk)
    if kept is None or kept[0] != stamp:
        return None
    user = User.from_db(kept[1], _FIELDS, kept[2])
    setattr(user, _STAMP_ATTRIBUTE, stamp)
    return user


def stamp_of(user: object) -> str | None:
    """The stamp `user` was read under, if this backend gave it."""
    return getattr(user, _STAMP_ATTRIBUTE, None)


def forget_changed_user(sender: type[User], instance: User, **kwargs: Any) -> None:
    """The receiver of a user's post_save and post_delete, connected in every process (`AccountsConfig`),
    so that a user changed by a command or a worker is known as changed by the web processes."""
    stamps.forget([stamps.of_user(instance.pk)])


# Per process: each user's stamp, database alias and row, in `_FIELDS`' order (attribute names, as
# `from_db` takes them).
_ROWS: dict[object, tuple[str, str | None, tuple[object, ...]]] = {}
_ROWS_KEPT = 10_000
_STAMP_ATTRIBUTE = "_read_under_stamp"
_FIELDS = [field.attname for field in User._meta.concrete_fields]
