"""The JSON API of protocol runs, v1 (token, errors and limits: api_common.py): start a run, follow its
progress, cancel it, submit what it answered, delete it."""

from __future__ import annotations

from typing import Annotated, Literal

from django.http import Http404, HttpResponse, JsonResponse
from django.urls import reverse
from ninja import Router
from pydantic import Field
from typing_extensions import TypedDict

from evaluation.scoring.scores_json import Schema
from leaderboard import api_common as common
from leaderboard import run_services
from leaderboard.forms import RunForm
from leaderboard.models import ProtocolRun
from leaderboard.protocols import catalogue
from leaderboard.run_views import start_run
from termite_site.accounts.http import AuthenticatedHttpRequest

router = Router()


# What a script leaves out takes the web form's defaults: the paper's protocol, temperature 1...
@common.from_form(
    RunForm,
    defaults=(
        "protocol",
        "temperature",
        "max_requests",
        "max_seconds",
        "concurrency",
        "delete_key_when_done",
    ),
    optional=RunForm.DEFAULTED,
)
class RunFields(common.FormFields):
    """A protocol run: the portal asks the endpoint every question, then submits what it answered. A public
    run needs the model card's size, weights and training-data cutoff; the run itself says how it prompted
    and decoded."""

    version: str | None = Field(None, description=common.LABEL)


class DecodingJSON(TypedDict):
    temperature: float
    top_p: float | None
    max_tokens: int | None
    seed: int | None


class BudgetJSON(TypedDict):
    max_requests: int
    max_total_tokens: int | None
    max_seconds: int


class ProgressJSON(TypedDict):
    """Steps are each database's first turn and each question."""

    steps_done: int
    steps_total: int
    percent: int
    requests: int
    errors: int
    tokens: int
    seconds: float


class RunJSON(TypedDict):
    """A protocol run, as its owner and staff see it: never its API key nor its transcript's content."""

    id: int
    status: Annotated[str, Schema(enum=ProtocolRun.Status.values)]
    message: Annotated[str | None, Schema(description="Why it stopped, or why it was not submitted")]
    version: str
    protocol: Annotated[str, Schema(enum=list(catalogue.protocols()))]
    model: str
    endpoint_host: str
    decoding: DecodingJSON
    budget: BudgetJSON
    concurrency: int
    progress: ProgressJSON
    has_key: bool
    created_at: Annotated[str, Schema(format="date-time")]
    started_at: Annotated[str | None, Schema(format="date-time")]
    finished_at: Annotated[str | None, Schema(format="date-time")]
    submission_id: Annotated[int | None, Schema(description="The submission it became, once submitted")]
    transcript_sha256: str | None
    status_url: Annotated[str, Schema(format="uri")]
    transcript_url: Annotated[
        str,
        Schema(
            format="uri",
            description="The transcript as canonical JSONL, on the site (a logged-in session, owner or staff)",
        ),
    ]


class RunsJSON(TypedDict):
    runs: Annotated[list[RunJSON], Schema(description="Newest first")]


class DeletedJSON(TypedDict):
    id: int
    deleted: Literal[True]


def run_json(request: AuthenticatedHttpRequest, run: ProtocolRun) -> RunJSON:
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


def _visible_run(request: AuthenticatedHttpRequest, id: int) -> ProtocolRun:
    run = ProtocolRun.objects.visible_to(request.user).select_related("version", "user", "team").filter(pk=id)
    found = run.first()
    if found is None:
        raise Http404(f"No run {id}.")
    return found


_NO_RUN = {**common.NO_TOKEN, 404: "No such run of yours"}


@router.get(
    "/runs",
    url_name="runs",
    auth=common.TOKEN,
    **common.documented("Your protocol runs, newest first", 200, RunsJSON, common.NO_TOKEN),
)
def run_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    own = ProtocolRun.objects.visible_to(request.user).filter(user=request.user).select_related("version")
    return JsonResponse({"runs": [run_json(request, run) for run in own[:500]]})


@router.post(
    "/runs",
    url_name="runs",
    auth=common.CONFIRMED,
    throttle=common.RateLimit("run"),
    description="The run goes on the protocol queue; follow it at its status_url. When every question is"
    " answered it becomes a submission, marked as run by the portal, through the same checks and quotas as"
    " an upload.",
    **common.documented(
        "Start a protocol run: the portal asks your endpoint every question, then submits",
        201,
        RunJSON,
        {
            400: common.INVALID,
            **common.NO_TOKEN,
            403: "The benchmark version takes no submissions (`version_closed`). " + common.UNCONFIRMED,
            413: common.TOO_LARGE,
            429: common.RATE_LIMITED,
        },
    ),
)
def run_create(request: AuthenticatedHttpRequest, run: RunFields) -> HttpResponse:
    data = run.form_data()
    if "version" in data:
        data["version"] = common.published_version(data["version"]).pk
    form = RunForm(data, user=request.user)
    started = start_run(request, form) if form.is_valid() else None
    if started is None:
        raise common.invalid("Invalid run.", form)
    response = JsonResponse(run_json(request, started), status=201)
    response["Location"] = reverse("api:run_detail", args=[started.pk])
    return response


@router.get(
    "/runs/{int:id}",
    url_name="run_detail",
    auth=common.TOKEN,
    **common.documented(
        "One run's progress: status, steps, requests, errors, tokens, seconds", 200, RunJSON, _NO_RUN
    ),
)
def run_detail(request: AuthenticatedHttpRequest, id: int) -> HttpResponse:
    return JsonResponse(run_json(request, _visible_run(request, id)))


@router.delete(
    "/runs/{int:id}",
    url_name="run_detail",
    auth=common.TOKEN,
    **common.documented(
        "Delete the run, its key and its transcript (cancelled first if it runs)", 200, DeletedJSON, _NO_RUN
    ),
)
def run_delete(request: AuthenticatedHttpRequest, id: int) -> HttpResponse:
    run_services.run_delete(run=_visible_run(request, id))
    return JsonResponse({"id": id, "deleted": True})


@router.post(
    "/runs/{int:id}/cancel",
    url_name="run_cancel",
    auth=common.TOKEN,
    **common.documented(
        "Cancel a queued or running run; what was answered stays",
        200,
        RunJSON,
        {**_NO_RUN, 409: "The run has already ended (`not_active`)"},
    ),
)
def run_cancel(request: AuthenticatedHttpRequest, id: int) -> HttpResponse:
    run = _visible_run(request, id)
    if not run_services.run_cancel(run=run):
        raise common.ApiError(409, "not_active", f"Run {id} has already ended ({run.status}).")
    return JsonResponse(run_json(request, run))


@router.post(
    "/runs/{int:id}/submit",
    url_name="run_submit",
    auth=common.CONFIRMED,
    **common.documented(
        "Submit what an ended run answered (stopped by its budget, cancelled, or refused by a quota)",
        201,
        RunJSON,
        {
            **_NO_RUN,
            403: common.UNCONFIRMED,
            409: "Not submitted (`not_submitted`): the message says why (a quota, no SQL, already submitted)",
        },
    ),
)
def run_submit(request: AuthenticatedHttpRequest, id: int) -> HttpResponse:
    run = _visible_run(request, id)
    try:
        run_services.run_submit(run=run)
    except run_services.NotSubmitted as problem:
        raise common.ApiError(409, "not_submitted", str(problem)) from None
    run.refresh_from_db()
    return JsonResponse(run_json(request, run), status=201)
