"""Who may reach a view: staff only, or an account whose e-mail address is confirmed (the web pages here;
the JSON API refuses in its own form, from the same rule `User.must_confirm_email`, in its token:
`leaderboard.api_common.BearerToken`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Concatenate, ParamSpec, cast

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render

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


# What waits for a confirmed address, beside uploads (which `leaderboard.services.submission_create`
# refuses itself): the task (its questions, schemas and bundle), errata and protocol runs. A throwaway
# address would otherwise get all of them, and the site could not reach the person behind them.


def confirmed_email_required(
    view: Callable[Concatenate[AuthenticatedHttpRequest, _P], HttpResponseBase],
) -> Callable[Concatenate[HttpRequest, _P], HttpResponseBase]:
    """Anonymous visitors go to the login page; an account that must still confirm its address gets, with
    403, the page that says why and mails a new link (staff never must: `User.must_confirm_email`)."""

    @wraps(view)
    def wrapper(request: HttpRequest, /, *args: _P.args, **kwargs: _P.kwargs) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if request.user.must_confirm_email:
            # After a new link is mailed, back here: only a page, since the way back is a GET.
            back = request.get_full_path() if request.method == "GET" else ""
            return render(request, "accounts/email_unconfirmed.html", {"next": back}, status=403)
        return view(cast(AuthenticatedHttpRequest, request), *args, **kwargs)

    return wrapper
