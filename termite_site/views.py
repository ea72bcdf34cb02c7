from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from evaluation.models import BenchmarkVersion
from evaluation.selectors import changelog_versions, information_bound
from termite_site.middleware import PRIVATE_PREFIXES


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "site/home.html")


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    from evaluation.scoring import compare, metrics, sandbox

    context = {
        "rel_tol": f"{compare.REL_TOL:g}",
        "resamples": metrics.BOOTSTRAP_RESAMPLES,
        "limits": sandbox.DEFAULT_LIMITS,
        "query_seconds": settings.TERMITE_QUERY_TIMEOUT,
        "public_per_version": settings.TERMITE_PUBLIC_PER_VERSION,
    }
    version = BenchmarkVersion.objects.latest_published()
    if version is not None:
        context["version"] = version
        context["bound"] = information_bound(version=version, outcome_kinds=len(metrics.OUTCOMES))
    return render(request, "site/metrics.html", context)


@require_GET
def about(request: HttpRequest) -> HttpResponse:
    return render(request, "site/about.html")


@require_GET
def changelog(request: HttpRequest) -> HttpResponse:
    return render(request, "site/changelog.html", {"versions": changelog_versions()})


@require_GET
@cache_control(max_age=86400, public=True)
def robots_txt(request: HttpRequest) -> HttpResponse:
    lines = ["User-agent: *", *(f"Disallow: {prefix}" for prefix in PRIVATE_PREFIXES)]
    return HttpResponse("\n".join(lines) + "\n", content_type="text/plain")


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
