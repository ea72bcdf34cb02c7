from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, QueryDict
from django.utils.translation import gettext as _

from termite_site.http import api_error, body_too_large

API_PREFIX = "/api/"

# Everything participants see of the benchmark lives under these prefixes; leaderboard pages stay
# indexable, because rankings are meant to be cited.
PRIVATE_PREFIXES = ("/benchmark/", "/accounts/", "/submissions/", API_PREFIX, "/admin/", "/staff/")


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


# Browser features no page of the site uses, denied to every page and to anything a page might embed: an
# injected script gets no camera, microphone, location or sensor through the site's origin. Only features
# Chromium knows (an unknown one is an error in the console).
DENIED_FEATURES = (
    "accelerometer",
    "autoplay",
    "camera",
    "display-capture",
    "encrypted-media",
    "fullscreen",
    "geolocation",
    "gyroscope",
    "hid",
    "idle-detection",
    "magnetometer",
    "microphone",
    "midi",
    "payment",
    "picture-in-picture",
    "publickey-credentials-get",
    "screen-wake-lock",
    "serial",
    "usb",
    "xr-spatial-tracking",
)
PERMISSIONS_POLICY = ", ".join(f"{feature}=()" for feature in DENIED_FEATURES)


class PermissionsPolicyMiddleware:
    """Send the Permissions-Policy on every response."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response


class RejectNulMiddleware:
    """Answer 400 to a NUL character in the path, the query string or a form field, before any view runs.

    PostgreSQL refuses NULs in text, so one reaching a query as a parameter was a 500; no address, label or
    field of the site can hold one. API requests get the API's JSON error body.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not _carries_nul(request):
            return self.get_response(request)
        message = _(
            "The request contains a NUL character, which no address or form field of this site accepts."
        )
        if request.path.startswith(API_PREFIX):
            return api_error(400, "nul_character", message)
        return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")


def _carries_nul(request: HttpRequest) -> bool:
    if "\x00" in request.path or _has_nul(request.GET):
        return True
    # A body larger than any the site reads is left unread, for the view to refuse without reading it;
    # a view that reads one all the same validates its fields with forms, which refuse NULs.
    if request.method != "POST" or body_too_large(request):
        return False
    return _has_nul(request.POST) or any("\x00" in name for name in request.FILES)


def _has_nul(data: QueryDict) -> bool:
    return any("\x00" in key or any("\x00" in value for value in values) for key, values in data.lists())
