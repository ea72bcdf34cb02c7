from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

# Everything participants see of the benchmark lives under these prefixes; leaderboard pages stay
# indexable, because rankings are meant to be cited.
PRIVATE_PREFIXES = ("/benchmark/", "/accounts/", "/submissions/", "/api/", "/admin/", "/staff/")


class NoIndexMiddleware:
    """Tell search engines not to index or follow anything under the private prefixes.

    A header rather than only a meta tag, because downloads (the task bundle) and JSON have no <head>.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path.startswith(PRIVATE_PREFIXES):
            response["X-Robots-Tag"] = "noindex, nofollow, noarchive"
        return response
