from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

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
def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
