from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from evaluation import selectors
from evaluation.bundle import build_bundle, bundle_filename


@require_GET
@login_required
def version_list(request: HttpRequest) -> HttpResponse:
    return render(
        request, "evaluation/version_list.html", {"versions": selectors.visible_versions(user=request.user)}
    )


@require_GET
@login_required
def version_detail(request: HttpRequest, label: str) -> HttpResponse:
    version = selectors.version_for(user=request.user, label=label)
    context = {
        "version": version,
        "databases": selectors.database_summaries(version=version),
        "hardness": selectors.hardness_totals(version=version),
    }
    return render(request, "evaluation/version_detail.html", context)


@require_GET
@login_required
def database_detail(request: HttpRequest, label: str, slug: str) -> HttpResponse:
    version = selectors.version_for(user=request.user, label=label)
    database = get_object_or_404(version.databases, slug=slug)
    questions = database.questions.order_by("position")
    return render(
        request,
        "evaluation/database_detail.html",
        {"version": version, "database": database, "questions": questions},
    )


@require_GET
@login_required
def task_bundle(request: HttpRequest, label: str) -> HttpResponse:
    version = selectors.version_for(user=request.user, label=label)
    response = HttpResponse(build_bundle(version), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{bundle_filename(version)}"'
    return response
