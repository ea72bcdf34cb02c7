"""Staff pages of the leaderboard: rescoring a version's submissions and watching it progress, and
verifying a submission."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from evaluation.models import BenchmarkVersion
from evaluation.scoring.score import SCORER_VERSION
from leaderboard.forms import VerificationForm
from leaderboard.models import Rescoring, Submission
from leaderboard.rescoring import rescoring_start
from leaderboard.services import NotVerifiable, submission_verify
from termite_site.decorators import staff_required


@staff_required
def rescore(request: HttpRequest, label: str) -> HttpResponse:
    """GET: the version's rescorings and their progress; POST: start one with the current scorer, or
    resume the unfinished one."""
    version = get_object_or_404(BenchmarkVersion, label=label)
    if request.method == "POST":
        reason = request.POST.get("reason", Rescoring.Reason.SCORER)
        if reason not in Rescoring.Reason.values:
            messages.error(request, _("Choose why the version is rescored."))
        else:
            rescoring = rescoring_start(version=version, reason=reason, requested_by=request.user)
            if rescoring is None:
                messages.info(
                    request,
                    _("Every submission of %(version)s is scored by the current scorer.")
                    % {"version": version},
                )
            else:
                messages.success(
                    request,
                    _("Rescoring %(version)s: %(done)s of %(total)s submissions done.")
                    % {"version": version, "done": rescoring.done, "total": rescoring.total},
                )
        return redirect("leaderboard_staff:rescore", label=label)
    rescorings = list(version.rescorings.select_related("requested_by"))
    return render(
        request,
        "leaderboard/staff/rescore.html",
        {
            "version": version,
            "rescorings": rescorings,
            # The page reloads itself while a rescoring runs, so that its progress shows.
            "in_progress": any(rescoring.finished_at is None for rescoring in rescorings),
            "scorer_version": SCORER_VERSION,
            "older": version.submissions.exclude(scorer_version=SCORER_VERSION)
            .filter(status=Submission.Status.SCORED)
            .count(),
            "reasons": Rescoring.Reason.choices,
        },
    )


@require_POST
@staff_required
def submission_verify_view(request: HttpRequest, pk: int) -> HttpResponse:
    """The form on the submission's page: mark it verified with a public note, or remove the mark."""
    submission = get_object_or_404(Submission.objects.select_related("version"), pk=pk)
    form = VerificationForm(request.POST)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return redirect(submission)
    try:
        submission_verify(
            submission=submission,
            verified=form.cleaned_data["verified"],
            note=form.cleaned_data["note"],
            by=request.user,
        )
    except NotVerifiable as error:
        messages.error(request, str(error))
    else:
        if submission.is_verified:
            messages.success(request, _("Submission #%(id)s is marked verified.") % {"id": submission.pk})
        else:
            messages.success(
                request, _("Submission #%(id)s is a self-reported run again.") % {"id": submission.pk}
            )
    return redirect(submission)
