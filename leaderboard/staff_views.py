"""Staff pages of the leaderboard: rescoring a version's submissions and watching it progress, verifying a
submission, and watching a version for probing (hiding rows, lowering a quota, disabling an account)."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from evaluation.models import BenchmarkVersion
from evaluation.rebuilding import databases_to_rebuild
from evaluation.scoring.score import SCORER_VERSION
from leaderboard.forms import AccountForm, HideRowsForm, QuotaLowerForm, VerificationForm
from leaderboard.models import Rescoring, Submission
from leaderboard.moderation import QuotaNotLowered, submission_quota_lower, submissions_hide
from leaderboard.probing import probing_report
from leaderboard.rescoring import REQUESTABLE_REASONS, rescoring_start
from leaderboard.services import NotVerifiable, submission_verify
from termite_site.accounts.http import AuthenticatedHttpRequest
from termite_site.accounts.models import User
from termite_site.accounts.services import AccountNotDisabled, account_disable
from termite_site.decorators import staff_required


@staff_required
def rescore(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    """GET: the version's rescorings and their progress; POST: start one with the current scorer, or
    resume the unfinished one."""
    version = get_object_or_404(BenchmarkVersion, label=label)
    if request.method == "POST":
        reason = request.POST.get("reason", Rescoring.Reason.SCORER)
        if reason not in REQUESTABLE_REASONS:
            messages.error(request, _("Choose why the version is rescored."))
        else:
            rescoring = rescoring_start(version=version, reason=reason, requested_by=request.user)
            if rescoring is None:
                messages.info(
                    request,
                    _("Every submission of %(version)s is scored by the current scorer: nothing to rescore.")
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
            "to_rebuild": [database.slug for database in databases_to_rebuild(version)],
            "reasons": [(value, Rescoring.Reason(value).label) for value in REQUESTABLE_REASONS],
        },
    )


@require_POST
@staff_required
def submission_verify_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The form on the submission's page: mark it verified with a public note, or remove the mark."""
    submission = get_object_or_404(Submission.objects.select_related("version"), pk=pk)
    form = VerificationForm(request.POST)
    if not form.is_valid():
        _errors_as_messages(request, form)
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


@staff_required
def probing(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    """The version's accounts whose uploads look like probing, with the evidence and staff's actions."""
    version = get_object_or_404(BenchmarkVersion, label=label)
    return render(
        request,
        "leaderboard/staff/probing.html",
        {"report": probing_report(version=version), "version": version},
    )


@require_POST
@staff_required
def probing_hide(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    version = get_object_or_404(BenchmarkVersion, label=label)
    form = HideRowsForm(request.POST, version=version)
    if not form.is_valid():
        _errors_as_messages(request, form)
        return _back_to_probing(label)
    hidden = list(form.cleaned_data["submissions"].select_related("user").order_by("pk"))
    submissions_hide(submissions=hidden, reason=form.cleaned_data["reason"], by=request.user)
    messages.success(
        request,
        _("Hidden from the public pages: %(ids)s.") % {"ids": ", ".join(f"#{s.pk}" for s in hidden)},
    )
    return _back_to_probing(label, user=hidden[0].user)


@require_POST
@staff_required
def probing_quota(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    get_object_or_404(BenchmarkVersion, label=label)
    form = QuotaLowerForm(request.POST)
    if not form.is_valid():
        _errors_as_messages(request, form)
        return _back_to_probing(label)
    user = form.cleaned_data["user"]
    try:
        quota = submission_quota_lower(
            user=user,
            per_day=form.cleaned_data["per_day"],
            per_version=form.cleaned_data["per_version"],
            by=request.user,
        )
    except QuotaNotLowered as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _("%(user)s may now submit %(day)s times a day and %(version)s times per version.")
            % {"user": user.get_username(), "day": quota.per_day, "version": quota.per_version},
        )
    return _back_to_probing(label, user=user)


@require_POST
@staff_required
def probing_disable(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    get_object_or_404(BenchmarkVersion, label=label)
    form = AccountForm(request.POST)
    if not form.is_valid():
        _errors_as_messages(request, form)
        return _back_to_probing(label)
    user = form.cleaned_data["user"]
    try:
        revoked = account_disable(user=user, by=request.user)
    except AccountNotDisabled as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            ngettext(
                "%(user)s is disabled: it can no longer log in, and its %(n)s API token is revoked.",
                "%(user)s is disabled: it can no longer log in, and its %(n)s API tokens are revoked.",
                revoked,
            )
            % {"user": user.get_username(), "n": revoked},
        )
    return _back_to_probing(label, user=user)


def _back_to_probing(label: str, *, user: User | None = None) -> HttpResponse:
    """The probing page again, at the account acted on when there is one."""
    url = reverse("leaderboard_staff:probing", kwargs={"label": label})
    return redirect(f"{url}#account-{user.pk}" if user is not None else url)


def _errors_as_messages(request: HttpRequest, form: Form) -> None:
    for errors in form.errors.values():
        for error in errors:
            # An ErrorList yields its messages as text; django-stubs says a ValidationError could come too.
            messages.error(request, cast(str, error))
