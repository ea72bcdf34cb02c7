"""Protocol runs in the browser: start one, watch it, cancel it, delete its key or the whole run, read its
transcript, submit what it answered. A run is its owner's and staff's alone (`ProtocolRun.objects.
visible_to`): anyone else gets a 404, as for a submission that is not theirs."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from evaluation.models import BenchmarkVersion
from leaderboard import run_services, services
from leaderboard.forms import RunForm
from leaderboard.models import ProtocolRun
from leaderboard.protocols import catalogue
from termite_site import ratelimit
from termite_site.accounts.http import AuthenticatedHttpRequest
from termite_site.decorators import confirmed_email_required


def _run_of(request: HttpRequest, pk: int) -> ProtocolRun:
    return get_object_or_404(
        ProtocolRun.objects.visible_to(request.user).select_related("version", "user", "team", "submission"),
        pk=pk,
    )


def start_run(request: AuthenticatedHttpRequest, form: RunForm) -> ProtocolRun | None:
    """Start the run a valid form describes, for the web form and the API alike; None, with the reason on
    the form, when the service refuses it."""
    try:
        return run_services.run_create(
            user=request.user, api_key=form.cleaned_data["api_key"], **form.run_arguments()
        )
    except services.NotTeamMember as error:
        form.add_error("team", str(error))
    except run_services.RunRefused as error:
        form.add_error(error.field if error.field in form.fields else None, str(error))
    except services.EmailUnconfirmed as error:
        form.add_error(None, str(error))
    return None


@confirmed_email_required
def run_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = RunForm(request.POST or None, user=request.user)
    status = 200
    if request.method == "POST":
        limit, window = settings.TERMITE_UPLOAD_RATE_LIMIT
        if ratelimit.hit("run", str(request.user.pk), limit=limit, window=window):
            form.add_error(None, _("Too many runs started in the last hour. Try again later."))
            status = 429
        elif form.is_valid():
            run = start_run(request, form)
            if run is not None:
                messages.success(request, _("Run #%(id)s started.") % {"id": run.pk})
                return redirect(run)
        if form.errors and status == 200:
            status = 400
    context = {
        "form": form,
        "version": BenchmarkVersion.objects.latest_published(),
        "protocols": catalogue.protocols().values(),
    }
    return render(request, "leaderboard/runs/new.html", context, status=status)


@require_GET
@login_required
def run_list(request: HttpRequest) -> HttpResponse:
    """The visitor's runs; for staff, everyone's."""
    runs = ProtocolRun.objects.visible_to(request.user).select_related("version", "user", "submission")
    return render(request, "leaderboard/runs/list.html", {"runs": runs[:500]})


@require_GET
@login_required
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run_of(request, pk)
    context = {
        "run": run,
        "protocol": catalogue.protocol(run.protocol),
        "refresh_seconds": 3
        if run.is_active or (run.submission and not run.submission.is_finished)
        else None,
    }
    return render(request, "leaderboard/runs/detail.html", context)


@require_GET
@confirmed_email_required
def run_transcript(request: AuthenticatedHttpRequest, pk: int) -> StreamingHttpResponse:
    """The transcript as canonical JSONL: the bytes whose sha256 the submission shows."""
    run = _run_of(request, pk)
    response = StreamingHttpResponse(
        run_services.transcript_lines(run=run), content_type="application/x-ndjson"
    )
    response["Content-Disposition"] = f'attachment; filename="protocol-run-{run.pk}-transcript.jsonl"'
    return response


@require_POST
@login_required
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run_of(request, pk)
    if run_services.run_cancel(run=run):
        messages.success(request, _("Run #%(id)s was cancelled.") % {"id": run.pk})
    else:
        messages.warning(request, _("Run #%(id)s had already ended.") % {"id": run.pk})
    return redirect(run)


@require_POST
@login_required
def run_delete_key(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run_of(request, pk)
    run_services.run_delete_key(run=run)
    messages.success(request, _("The API key of run #%(id)s was deleted.") % {"id": run.pk})
    return redirect(run)


@require_POST
@login_required
def run_delete(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run_of(request, pk)
    run_services.run_delete(run=run)
    messages.success(request, _("Run #%(id)s, its key and its transcript were deleted.") % {"id": pk})
    return redirect("leaderboard:run_list")


@require_POST
@confirmed_email_required
def run_submit(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    run = _run_of(request, pk)
    try:
        submission = run_services.run_submit(run=run)
    except run_services.NotSubmitted as error:
        messages.error(request, str(error))
        return redirect(run)
    messages.success(
        request, _("Run #%(run)s is now submission #%(id)s.") % {"run": run.pk, "id": submission.pk}
    )
    return redirect(submission)
