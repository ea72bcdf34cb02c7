"""A signed-in visitor known from their session cookie, with neither their session nor their row read.

Django's `AuthenticationMiddleware` resolves a signed-in visitor by reading their session, then their
user (with `backends.RememberingModelBackend`, their user's stamp): two reads of the cache per request.
`KnownVisitorMiddleware`, in its place, keeps per process what it resolved for each session (the user's
id, whether the session held messages, until when it holds) under the stamps of the session and of the
user, read before them. While both stamps are unchanged, one read of the two gives the request its user:
the row the backend kept under that user's stamp. Django's check of the session's password hash was
passed when the session was resolved; a new password changes the user's stamp, any change of the session
its own. The session itself is read only if a view asks for it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.storage.cookie import CookieStorage
from django.contrib.messages.storage.session import SessionStorage
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from termite_site.accounts import backends, sessions, stamps


@dataclass(frozen=True)
class Known:
    user_pk: Any
    session_stamp: str
    user_stamp: str
    expires: float  # the session's expiry, as a timestamp
    messages: bool  # whether the session held messages


class KnownVisitorMiddleware(AuthenticationMiddleware):
    def process_request(self, request: HttpRequest) -> None:
        super().process_request(request)
        request.user = SimpleLazyObject(lambda: _user_of(request))  # type: ignore[assignment]


def stamp_keys(request: HttpRequest) -> list[str]:
    """The keys of the stamps to read to recognise this request's visitor (`recognise`), if this process
    knows the session of its cookie: a view that reads the cache anyway reads them in the same trip."""
    known = _known(request)
    if known is None:
        return []
    return [stamps.of_session(request.COOKIES[settings.SESSION_COOKIE_NAME]), stamps.of_user(known.user_pk)]


def recognise(request: HttpRequest, stored: Mapping[str, Any]) -> bool:
    """Give the request its user from what this process kept, if `stored` (the cache's values under
    `stamp_keys`) holds the stamps it was kept under. False when it does not: the user is then resolved
    as Django does, when the request first asks for it."""
    known = _known(request)
    if known is None or hasattr(request, "_cached_user"):
        return False
    session_key = request.COOKIES[settings.SESSION_COOKIE_NAME]
    if (stored.get(stamps.of_session(session_key)), stored.get(stamps.of_user(known.user_pk))) != (
        known.session_stamp,
        known.user_stamp,
    ):
        return False
    user = backends.kept_user(known.user_pk, known.user_stamp)
    if user is None:
        return False
    # Where Django's `get_user` keeps the user, which `login` and `logout` replace.
    request._cached_user = user  # type: ignore[attr-defined]
    setattr(request, _KNOWN_ATTRIBUTE, known)
    return True


def may_have_messages(request: HttpRequest) -> bool:
    """False when the visitor surely has no message waiting: none in a cookie, none in their session when
    it was kept (any change of the session replaces its stamp). True when unsure: read them then."""
    known: Known | None = getattr(request, _KNOWN_ATTRIBUTE, None) if request.user.is_authenticated else None
    return CookieStorage.cookie_name in request.COOKIES or known is None or known.messages


def _known(request: HttpRequest) -> Known | None:
    session_key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    known = _KNOWN.get(session_key) if session_key else None
    return known if known is not None and known.expires > time.time() else None


def _user_of(request: HttpRequest) -> Any:
    if not hasattr(request, "_cached_user"):
        try:
            recognised = recognise(request, stamps.read(stamp_keys(request)))
        except Exception:  # a cache outage: the session is read as without this middleware
            recognised = False
        if not recognised:
            request._cached_user = _user_read(request)  # type: ignore[attr-defined]
    return request._cached_user  # type: ignore[attr-defined]


def _user_read(request: HttpRequest) -> Any:
    """The user as Django resolves them; kept, with the stamps read before, when signed in."""
    session_key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    try:
        session_stamp = (
            stamps.current(stamps.of_session(session_key), lifetime=sessions.UNSAVED_STAMP_SECONDS)
            if session_key
            else None
        )
    except Exception:
        session_stamp = None
    user = auth.get_user(request)
    user_stamp = backends.stamp_of(user)
    if session_key and session_stamp and user_stamp and request.session.session_key == session_key:
        if len(_KNOWN) >= _KNOWN_KEPT:
            _KNOWN.clear()
        _KNOWN[session_key] = Known(
            user_pk=user.pk,
            session_stamp=session_stamp,
            user_stamp=user_stamp,
            expires=request.session.get_expiry_date().timestamp(),
            messages=SessionStorage.session_key in request.session,
        )
        setattr(request, _KNOWN_ATTRIBUTE, _KNOWN[session_key])
    return user


_KNOWN: dict[str, Known] = {}
_KNOWN_KEPT = 10_000
_KNOWN_ATTRIBUTE = "_known_visitor"
