from __future__ import annotations

from typing import cast

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from evaluation.models import BenchmarkVersion
from evaluation.predictions import PredictionFileError
from evaluation.scoring import compare, sandbox
from evaluation.scoring.metrics import BOOTSTRAP_RESAMPLES
from evaluation.scoring.significance import PAIRED_RESAMPLES
from evaluation.scoring.vocabulary import OUTCOMES
from evaluation.selectors import changelog_versions, information_bound
from leaderboard import charts, citation, feedback, presenters, selectors, services
from leaderboard.forms import ModelCardForm, SubmissionForm, VerificationForm
from leaderboard.models import Submission
from termite_site import ratelimit
from termite_site.accounts.http import AuthenticatedHttpRequest
from termite_site.accounts.models import Team


@login_required
def submission_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = SubmissionForm(request.POST or None, request.FILES or None, user=request.user)
    version = BenchmarkVersion.objects.latest_published()
    status = 200
    if request.method == "POST":
        limit, window = settings.TERMITE_UPLOAD_RATE_LIMIT
        if ratelimit.hit("upload", str(request.user.pk), limit=limit, window=window):
            form.add_error(None, _("Too many uploads in the last hour. Try again later."))
            status = 429
        elif form.is_valid():
            upload = form.cleaned_data["predictions"]
            try:
                submission = services.submission_create(
                    user=request.user,
                    version=form.cleaned_data["version"],
                    upload=services.Upload(
                        name=upload.name, data=upload.read(settings.TERMITE_MAX_UPLOAD_BYTES + 1)
                    ),
                    model_card=form.model_card(),
                    team=form.cleaned_data["team"],
                )
            except services.EmailUnconfirmed as error:
                form.add_error(None, str(error))
                status = 403
            except PredictionFileError as error:
                for message in error.errors:
                    form.add_error("predictions", message)
            except services.NotTeamMember as error:
                form.add_error("team", str(error))
            except services.QuotaExceeded as error:
                form.add_error(None, str(error))
                status = 429
            else:
                if submission.missing_count:
                    messages.warning(
                        request,
                        _("%(n)s questions have no prediction and count as not submitted.")
                        % {"n": submission.missing_count},
                    )
                messages.success(request, _("Submission #%(id)s received.") % {"id": submission.pk})
                return redirect(submission)
        if form.errors and status == 200:
            status = 400
    quota = selectors.quota_for(user=request.user, version=version) if version else None
    # The uploader's teams: SubmissionForm sets the field's queryset, never None.
    teams = cast("QuerySet[Team]", cast("forms.ModelChoiceField[Team]", form.fields["team"]).queryset)
    team_quotas = (
        [(team, selectors.team_quota_for(team=team, version=version)) for team in teams]
        if version and settings.TERMITE_TEAM_QUOTAS
        else []
    )
    return render(
        request,
        "leaderboard/submission_new.html",
        {"form": form, "quota": quota, "team_quotas": team_quotas, "version": version},
        status=status,
    )


@require_GET
@login_required
def submission_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    submissions = request.user.submissions.filter(withdrawn_at__isnull=True).select_related("version", "team")
    rows = [(submission, feedback.feedback_for(submission, request.user)) for submission in submissions]
    return render(request, "leaderboard/submission_list.html", {"submissions": submissions, "rows": rows})


def _visible_submission(request: HttpRequest, pk: int) -> Submission:
    return get_object_or_404(
        Submission.objects.visible_to(request.user).select_related("version", "user", "team"), pk=pk
    )


@require_GET
def submission_detail(request: HttpRequest, pk: int) -> HttpResponse:
    submission = _visible_submission(request, pk)
    seen = feedback.feedback_for(submission, request.user)
    context = {
        "submission": submission,
        "is_owner": request.user == submission.user,
        "feedback": seen,
        "portal_run": feedback.portal_run_mark(submission),
        "citation": citation.citation_for(
            submission, seen, permalink=request.build_absolute_uri(submission.get_absolute_url())
        ),
        "transcript_run": feedback.transcript_run(submission, request.user)
        if submission.is_portal_run
        else None,
    }
    if request.user.is_staff and submission.is_public and submission.status == Submission.Status.SCORED:
        context["verification_form"] = VerificationForm(
            initial={"verified": submission.is_verified, "note": submission.verified_note}
        )
    if seen.shown is not None:
        context["tables"] = presenters.score_tables(seen.shown)
        if seen.disclosure.breakdowns:
            context["chart"] = charts.results_bars(seen.shown)
    return render(request, "leaderboard/submission_detail.html", context)


@require_GET
def submission_status(request: HttpRequest, pk: int) -> JsonResponse:
    submission = _visible_submission(request, pk)
    seen = feedback.feedback_for(submission, request.user)
    return JsonResponse(
        {
            "id": submission.pk,
            "status": seen.status,
            "status_label": seen.status_label,
            "finished": seen.finished,
            "error": seen.failure or None,
        }
    )


@require_POST
@login_required
def submission_withdraw(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    submission = Submission.objects.filter(user=request.user, withdrawn_at__isnull=True, pk=pk).first()
    if submission is None:
        raise Http404("No such submission of yours.")
    services.submission_withdraw(submission=submission)
    messages.success(request, _("Submission #%(id)s was withdrawn.") % {"id": submission.pk})
    return redirect("leaderboard:submission_list")


@login_required
def submission_card_edit(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The owner corrects the model card: checked as at upload, the card it replaces kept, no quota spent."""
    submission = Submission.objects.filter(user=request.user, withdrawn_at__isnull=True, pk=pk).first()
    if submission is None:
        raise Http404("No such submission of yours.")
    form = ModelCardForm(request.POST or None, instance=submission)
    if request.method == "POST" and form.is_valid():
        if services.submission_card_update(submission=submission, card=form.model_card()):
            messages.success(request, _("The model card of #%(id)s is corrected.") % {"id": submission.pk})
        else:
            messages.info(request, _("Nothing changed in the model card of #%(id)s.") % {"id": submission.pk})
        return redirect(submission)
    status = 400 if form.errors else 200
    return render(
        request,
        "leaderboard/submission_card_edit.html",
        {"form": form, "submission": submission},
        status=status,
    )


@require_GET
def changelog(request: HttpRequest) -> HttpResponse:
    """The published versions, what changed in each, and what each rescoring moved on its leaderboard."""
    versions = changelog_versions()
    rescorings = selectors.finished_rescorings(versions=versions)
    for version in versions:
        version.finished_rescorings = rescorings.get(version.pk, [])  # type: ignore[attr-defined]  # for the template
    return render(request, "evaluation/changelog.html", {"versions": versions})


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    context = {
        "rel_tol": f"{compare.REL_TOL:g}",
        "resamples": BOOTSTRAP_RESAMPLES,
        "paired_resamples": PAIRED_RESAMPLES,
        "limits": sandbox.DEFAULT_LIMITS,
        "query_seconds": settings.TERMITE_QUERY_TIMEOUT,
        "public_per_version": settings.TERMITE_PUBLIC_PER_VERSION,
    }
    version = BenchmarkVersion.objects.latest_published()
    if version is not None:
        context["version"] = version
        context["bound"] = information_bound(version=version, outcome_kinds=len(OUTCOMES))
    return render(request, "leaderboard/metrics.html", context)
