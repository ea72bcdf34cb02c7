"""The JSON API of protocol runs, v1 (token authentication, errors as in leaderboard/api.py): start a run,
follow its progress, cancel it, submit what it answered, delete it."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.urls import reverse

from evaluation.models import BenchmarkVersion
from leaderboard import run_services
from leaderboard.api import token_required
from leaderboard.forms import RunForm
from leaderboard.models import ProtocolRun
from leaderboard.run_views import start_run
from termite_site import ratelimit
from termite_site.accounts.http import AuthenticatedHttpRequest
from termite_site.decorators import api_confirmed_email_required
from termite_site.http import api_error as error
from termite_site.http import body_too_large


def run_json(request: HttpRequest, run: ProtocolRun) -> dict[str, Any]:
    """A run as its owner and staff see it: never its key, nor its transcript's content."""
    return {
        "id": run.pk,
        "status": run.status,
        "message": run.message or None,
        "version": run.version.label,
        "protocol": run.protocol,
        "model": run.model,
        "endpoint_host": run_services.endpoint_host(run.endpoint_url),
        "decoding": {
            "temperature": run.temperature,
            "top_p": run.top_p,
            "max_tokens": run.max_tokens,
            "seed": run.seed,
        },
        "budget": {
            "max_requests": run.max_requests,
            "max_total_tokens": run.max_total_tokens,
            "max_seconds": run.max_seconds,
        },
        "concurrency": run.concurrency,
        "progress": {
            "steps_done": run.tasks_done,
            "steps_total": run.tasks_total,
            "percent": run.progress_percent,
            "requests": run.requests_done,
            "errors": run.errors,
            "tokens": run.tokens_used,
            "seconds": round(run.seconds_spent, 1),
        },
        "has_key": run.has_key,
        "created_at": run.created_at.isoformat(),
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "submission_id": run.submission_id,
        "transcript_sha256": run.transcript_sha256 or None,
        "status_url": request.build_absolute_uri(reverse("api:run_detail", args=[run.pk])),
        "transcript_url": request.build_absolute_uri(reverse("leaderboard:run_transcript", args=[run.pk])),
    }


@token_required
def runs(request: AuthenticatedHttpRequest) -> JsonResponse:
    if request.method == "GET":
        own = ProtocolRun.objects.visible_to(request.user).filter(user=request.user).select_related("version")
        return JsonResponse({"runs": [run_json(request, run) for run in own[:500]]})
    if request.method == "POST":
        return _create(request)
    return error(405, "method_not_allowed", "Use GET or POST.")


@api_confirmed_email_required
def _create(request: AuthenticatedHttpRequest) -> JsonResponse:
    limit, window = settings.TERMITE_UPLOAD_RATE_LIMIT
    if ratelimit.hit("run", str(request.user.pk), limit=limit, window=window):
        return error(429, "rate_limited", "Too many runs started in the last hour. Try again later.")
    if body_too_large(request):
        return error(413, "too_large", "The request is too large.")
    try:
        body = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        return error(
            400, "invalid", "Invalid run.", ['body: send a JSON object {"endpoint_url", "model", ...}']
        )
    data = {key: value for key, value in body.items() if value is not None}
    if "public" in data and "is_public" not in data:
        data["is_public"] = data.pop("public")
    if "version" in data:
        version = BenchmarkVersion.objects.filter(label=str(data["version"])).first()
        if version is None:
            return error(400, "invalid", "Invalid run.", [f"version: no version {data['version']!r}"])
        if not version.is_published:
            return error(403, "version_closed", f"{version} is not published; it takes no submissions.")
        data["version"] = str(version.pk)
    data.setdefault("delete_key_when_done", True)
    # What a script leaves out takes the web form's defaults: the paper's protocol, temperature 1...
    for name in ("protocol", "temperature", "max_requests", "max_seconds", "concurrency"):
        data.setdefault(name, RunForm.base_fields[name].initial)
    form = RunForm(data, user=request.user)
    run = start_run(request, form) if form.is_valid() else None
    if run is None:
        details = [f"{field}: {message}" for field, messages in form.errors.items() for message in messages]
        return error(400, "invalid", "Invalid run.", details)
    response = JsonResponse(run_json(request, run), status=201)
    response["Location"] = reverse("api:run_detail", args=[run.pk])
    return response


@token_required
def run_detail(request: AuthenticatedHttpRequest, pk: int) -> JsonResponse:
    if request.method not in ("GET", "DELETE"):
        return error(405, "method_not_allowed", "Use GET or DELETE.")
    run = ProtocolRun.objects.visible_to(request.user).select_related("version").filter(pk=pk).first()
    if run is None:
        return error(404, "not_found", f"No run {pk}.")
    if request.method == "DELETE":
        run_services.run_delete(run=run)
        return JsonResponse({"id": pk, "deleted": True})
    return JsonResponse(run_json(request, run))


@token_required
def run_cancel(request: AuthenticatedHttpRequest, pk: int) -> JsonResponse:
    if request.method != "POST":
        return error(405, "method_not_allowed", "Use POST.")
    run = ProtocolRun.objects.visible_to(request.user).select_related("version").filter(pk=pk).first()
    if run is None:
        return error(404, "not_found", f"No run {pk}.")
    if not run_services.run_cancel(run=run):
        return error(409, "not_active", f"Run {pk} has already ended ({run.status}).")
    return JsonResponse(run_json(request, run))


@token_required
@api_confirmed_email_required
def run_submit(request: AuthenticatedHttpRequest, pk: int) -> JsonResponse:
    if request.method != "POST":
        return error(405, "method_not_allowed", "Use POST.")
    run = (
        ProtocolRun.objects.visible_to(request.user)
        .select_related("version", "user", "team")
        .filter(pk=pk)
        .first()
    )
    if run is None:
        return error(404, "not_found", f"No run {pk}.")
    try:
        run_services.run_submit(run=run)
    except run_services.NotSubmitted as problem:
        return error(409, "not_submitted", str(problem))
    run.refresh_from_db()
    return JsonResponse(run_json(request, run), status=201)
