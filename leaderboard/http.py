"""The request of a view that only a signed-in user reaches, for the type checker."""

from __future__ import annotations

from django.http import HttpRequest

from termite_site.accounts.models import User


class AuthenticatedHttpRequest(HttpRequest):
    """A request let through by `login_required` or `api.token_required`: its user is signed in, never the
    anonymous visitor (django-stubs' recipe; only annotations and casts name it, no request is one)."""

    user: User
