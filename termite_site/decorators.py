from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Concatenate, ParamSpec, cast

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from termite_site.accounts.http import AuthenticatedHttpRequest

_P = ParamSpec("_P")


def staff_required(
    view: Callable[Concatenate[AuthenticatedHttpRequest, _P], HttpResponse],
) -> Callable[Concatenate[HttpRequest, _P], HttpResponse]:
    """Anonymous visitors go to the login page; logged-in non-staff get 403, not a login loop."""

    # The request is positional-only, as Concatenate has it; Django always passes it so.
    @wraps(view)
    def wrapper(request: HttpRequest, /, *args: _P.args, **kwargs: _P.kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (request.user.is_active and request.user.is_staff):
            raise PermissionDenied
        # Checked just above: the user is logged in, so a User.
        return view(cast(AuthenticatedHttpRequest, request), *args, **kwargs)

    return wrapper
