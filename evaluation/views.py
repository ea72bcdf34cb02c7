from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from evaluation import errata, selectors
from evaluation.bundle import build_bundle, bundle_filename
from evaluation.forms import ErratumForm
from termite_site.accounts.http import AuthenticatedHttpRequest
from termite_site.decorators import confirmed_email_required


@require_GET
@login_required
def version_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(
        request, "evaluation/version_list.html", {"versions": selectors.visible_versions(user=request.user)}
    )


@require_GET
@login_required
def version_detail(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    version = selectors.version_for(user=request.user, label=label)
    context = {
        "version": version,
        "databases": selectors.database_summaries(version=version),
        "hardness": selectors.hardness_totals(version=version),
    }
    return render(request, "evaluation/version_detail.html", context)


@require_GET
@confirmed_email_required
def database_detail(request: AuthenticatedHttpRequest, label: str, slug: str) -> HttpResponse:
    version = selectors.version_for(user=request.user, label=label)
    database = get_object_or_404(version.databases, slug=slug)
    gold = selectors.practice_gold(version=version)
    questions = [
        (question, gold.get(question.public_id)) for question in database.questions.order_by("position")
    ]
    return render(
        request,
        "evaluation/database_detail.html",
        {"version": version, "database": database, "questions": questions},
    )


@require_GET
@confirmed_email_required
def task_bundle(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    version = selectors.version_for(user=request.user, label=label)
    response = HttpResponse(build_bundle(version), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{bundle_filename(version)}"'
    return response


@require_GET
def errata_list(request: HttpRequest) -> HttpResponse:
    """Public, like the changelog: question ids, status and public reasons, never a description."""
    return render(request, "evaluation/errata.html", {"errata": selectors.errata_public()})


@confirmed_email_required
def erratum_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    # A link from a question (?version=LABEL&question_id=ID) fills the form in.
    form = ErratumForm(request.POST or None, user=request.user, initial=request.GET.dict())
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            erratum = errata.erratum_report(
                reporter=request.user,
                question=form.cleaned_data["question"],
                description=form.cleaned_data["description"],
            )
        except errata.TooManyReports as error:
            form.add_error(None, str(error))
            status = 429
        else:
            messages.success(
                request, _("Thank you: your report on %(id)s is filed.") % {"id": erratum.question.public_id}
            )
            return redirect("errata:mine")
    if form.errors and status == 200:
        status = 400
    return render(request, "evaluation/erratum_new.html", {"form": form}, status=status)


@require_GET
@login_required
def errata_mine(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(
        request, "evaluation/errata_mine.html", {"errata": selectors.errata_of(reporter=request.user)}
    )
