"""The request a view sees once login_required, staff_required or the API's token_required has let it in."""

from __future__ import annotations

from django.http import HttpRequest

from termite_site.accounts.models import User


class AuthenticatedHttpRequest(HttpRequest):
    """For type checking only: behind those decorators `request.user` is a User, never AnonymousUser."""

    user: User
