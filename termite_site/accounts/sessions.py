"""Sessions as Django's cached_db engine keeps them, each with a stamp (`stamps.of_session`) that every
save and delete of the session replaces: what `known_visitors` checks a session it resolved before
against, without reading the session itself. A saved session's stamp lasts as long as the session (as its
cached copy does), so that a session past its expiry is read again, and found gone."""

from __future__ import annotations

from django.contrib.sessions.backends.cached_db import SessionStore as CachedDbSessionStore

from termite_site.accounts import stamps


class SessionStore(CachedDbSessionStore):
    def save(self, must_create: bool = False) -> None:
        super().save(must_create)
        if self.session_key:  # always, once saved
            stamps.forget([stamps.of_session(self.session_key)], lifetime=self.get_expiry_age())

    def delete(self, session_key: str | None = None) -> None:
        key = session_key or self.session_key  # the parent forgets its own key
        super().delete(session_key)
        if key:
            stamps.forget([stamps.of_session(key)], lifetime=UNSAVED_STAMP_SECONDS)


# How long the stamp of a session not saved since its stamp was made lasts (a session saved before this
# store, or deleted): its expiry is not known without reading it, so it is read again this often.
UNSAVED_STAMP_SECONDS = 60
