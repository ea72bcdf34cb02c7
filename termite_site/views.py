from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import i18n
from django.views.decorators.cache import cache_control, never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from termite_site.health import health_report, shown_to
from termite_site.middleware import PRIVATE_PREFIXES


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "site/home.html")


@require_GET
def about(request: HttpRequest) -> HttpResponse:
    return render(request, "site/about.html")


@require_GET
@cache_control(max_age=86400, public=True)
def robots_txt(request: HttpRequest) -> HttpResponse:
    lines = ["User-agent: *", *(f"Disallow: {prefix}" for prefix in PRIVATE_PREFIXES)]
    return HttpResponse("\n".join(lines) + "\n", content_type="text/plain")


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    report = health_report()
    return JsonResponse(
        shown_to(report, staff=request.user.is_staff), status=503 if report["failing"] else 200
    )


# The language form needs no CSRF token: the most a forged post can do is switch a visitor's language, the
# one thing Django's view changes. Without a token, an anonymous visitor's nav is the same for everyone,
# so a page can be served whole from the cache (termite_site/cached_page.py).
set_language = csrf_exempt(i18n.set_language)
