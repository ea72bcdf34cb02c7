"""The JSON API, v1: token-authenticated submissions and errata, and the public leaderboard export.

Every error is `{"error": {"code": ..., "message": ..., "details": [...]}}` with the matching status.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from datetime import date
from functools import wraps
from typing import Any, Concatenate, ParamSpec, cast

from django import forms
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from evaluation import errata as errata_services
from evaluation.forms import ErratumForm
from evaluation.models import BenchmarkVersion
from evaluation.predictions import PredictionFileError
from leaderboard import exports, feedback, ranking, selectors, services
from leaderboard.errata_json import erratum_json
from leaderboard.feedback import ScoreHistoryJSON
from leaderboard.forms import CompareForm, SubmissionForm
from leaderboard.models import Submission
from leaderboard.openapi import openapi_document
from termite_site import ratelimit
from termite_site.accounts.http import AuthenticatedHttpRequest
from termite_site.accounts.services import api_token_authenticate
from termite_site.cached_page import accepts_gzip
from termite_site.decorators import api_confirmed_email_required
from termite_site.http import api_error as error
from termite_site.http import body_too_large

P = ParamSpec("P")


def token_required(
    view: Callable[Concatenate[AuthenticatedHttpRequest, P], JsonResponse],
) -> Callable[Concatenate[HttpRequest, P], JsonResponse]:
    """Authenticate `Authorization: Bearer <token>`; API calls never use the session or CSRF."""

    @wraps(view)
    def wrapper(request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs) -> JsonResponse:
        header = request.headers.get("Authorization", "")
        scheme, _, raw = header.partition(" ")
        if scheme.lower() != "bearer" or not raw.strip():
            response = error(401, "unauthenticated", "Send an API token: Authorization: Bearer <token>.")
        else:
            user = api_token_authenticate(raw=raw.strip())
            if user is None:
                response = error(401, "invalid_token", "The token is unknown or revoked.")
            else:
                request.user = user
                return view(cast(AuthenticatedHttpRequest, request), *args, **kwargs)
        response["WWW-Authenticate"] = 'Bearer realm="termite"'
        return response

    return csrf_exempt(wrapper)


def token_optional(
    view: Callable[Concatenate[HttpRequest, P], JsonResponse],
) -> Callable[Concatenate[HttpRequest, P], JsonResponse]:
    """As `token_required` when the request sends `Authorization`; without it, the anonymous visitor
    (never the session's user), who sees what anyone may see."""

    @wraps(view)
    def wrapper(request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs) -> JsonResponse:
        if "Authorization" in request.headers:
            return token_required(view)(request, *args, **kwargs)
        request.user = AnonymousUser()
        return view(request, *args, **kwargs)

    return csrf_exempt(wrapper)


def model_card_json(submission: Submission) -> dict[str, Any]:
    """The model card as uploaded (every field of the upload form but `public`): dates in ISO 8601, and
    null for a field left empty."""
    card = {}
    for name in Submission.MODEL_CARD_FIELDS:
        value = getattr(submission, name)
        if name != "is_public":
            card[name] = value.isoformat() if isinstance(value, date) else None if value == "" else value
    return card


def submission_json(request: HttpRequest, submission: Submission) -> dict[str, Any]:
    seen = feedback.feedback_for(submission, request.user)
    body = {
        "id": submission.pk,
        "status": seen.status,
        "model_name": submission.model_name,
        "team": {"name": submission.team.name, "slug": submission.team.slug} if submission.team else None,
        "public": submission.is_public,
        "model_card": model_card_json(submission),
        "receipt": submission.receipt if seen.disclosure.own_queries else None,
        "error": seen.failure or None,
        "scores": seen.shown,
        "score_history": [
            {key: value for key, value in entry.items() if key in ScoreHistoryJSON.__annotations__}
            for entry in seen.history
        ],
        "carried_from": submission.carried_from_id,
        "portal_run": feedback.portal_run_mark(submission),
        "breakdowns_hidden": seen.breakdowns_note or None,
        "status_url": request.build_absolute_uri(reverse("api:submission_detail", args=[submission.pk])),
        "results_url": request.build_absolute_uri(submission.get_absolute_url()),
    }
    if seen.disclosure.own_queries:
        # The static checks only; the owner's SQL is theirs already and stays out of the answer.
        body["checks"] = [
            {key: line[key] for key in ("question_id", "check", "message")} for line in seen.questions
        ]
    return body


def _form_errors(form: forms.BaseForm) -> list[str]:
    """Every problem of a bound form, as "field: message"."""
    return [f"{field}: {message}" for field, messages in form.errors.items() for message in messages]


@token_required
def submissions(request: AuthenticatedHttpRequest) -> JsonResponse:
    if request.method == "GET":
        own = request.user.submissions.filter(withdrawn_at__isnull=True).select_related("version", "team")
        return JsonResponse({"submissions": [submission_json(request, s) for s in own]})
    if request.method == "POST":
        return _create(request)
    return error(405, "method_not_allowed", "Use GET or POST.")


def _create(request: AuthenticatedHttpRequest) -> JsonResponse:
    limit, window = settings.TERMITE_UPLOAD_RATE_LIMIT
    if ratelimit.hit("upload", str(request.user.pk), limit=limit, window=window):
        return error(429, "rate_limited", "Too many uploads in the last hour. Try again later.")
    # Refuse an oversized body before Django reads it.
    if body_too_large(request):
        return error(
            413, "too_large", f"The upload is larger than {settings.TERMITE_MAX_UPLOAD_BYTES // 1024} KB."
        )
    data = request.POST.copy()
    if "version" in data:
        version = BenchmarkVersion.objects.filter(label=data["version"]).first()
        if version is None:
            return error(400, "invalid", "Invalid submission.", [f"version: no version {data['version']!r}"])
        if not version.is_published:
            return error(403, "version_closed", f"{version} is not published; it takes no submissions.")
        data["version"] = str(version.pk)
    if "public" in data and "is_public" not in data:
        data["is_public"] = cast(str, data["public"])  # a key parsed from a request holds a value
    upload = request.FILES.get("predictions")
    # Django's upload handlers always set the size.
    if upload is not None and cast(int, upload.size) > settings.TERMITE_MAX_UPLOAD_BYTES:
        return error(
            413,
            "too_large",
            f"predictions: the file is larger than {settings.TERMITE_MAX_UPLOAD_BYTES // 1024} KB",
        )
    form = SubmissionForm(data, request.FILES, user=request.user)
    if not form.is_valid():
        return error(400, "invalid", "Invalid submission.", _form_errors(form))
    sent = cast(UploadedFile, upload)  # the form is valid, so the file it requires was sent
    try:
        submission = services.submission_create(
            user=request.user,
            version=form.cleaned_data["version"],
            upload=services.Upload(name=cast(str, sent.name), data=sent.read()),  # Django names each file
            model_card=form.model_card(),
            team=form.cleaned_data["team"],
        )
    except services.EmailUnconfirmed as problem:
        return error(403, "email_unconfirmed", str(problem))
    except PredictionFileError as problem:
        return error(400, "invalid_predictions", "The predictions file was refused.", problem.errors)
    except services.NotTeamMember as problem:
        return error(403, "not_a_member", str(problem))
    except services.QuotaExceeded as problem:
        return error(429, "quota_exceeded", str(problem))
    # The submission as stored, queued: nothing in the answer may depend on how scoring goes (in the
    # embedded mode it has begun in a thread by now).
    response = JsonResponse(submission_json(request, submission), status=201)
    response["Location"] = reverse("api:submission_detail", args=[submission.pk])
    return response


@require_GET
@token_required
def submission_detail(request: HttpRequest, pk: int) -> JsonResponse:
    submission = (
        Submission.objects.visible_to(request.user).filter(pk=pk).select_related("version", "team").first()
    )
    if submission is None:
        return error(404, "not_found", f"No submission {pk}.")
    return JsonResponse(submission_json(request, submission))


@token_required
def errata(request: AuthenticatedHttpRequest) -> JsonResponse:
    if request.method == "GET":
        own = request.user.errata.select_related("question__version")
        return JsonResponse({"errata": [erratum_json(erratum) for erratum in own]})
    if request.method == "POST":
        return _report(request)
    return error(405, "method_not_allowed", "Use GET or POST.")


_ERRATUM_FIELDS = ("version", "question_id", "description")


@api_confirmed_email_required
def _report(request: AuthenticatedHttpRequest) -> JsonResponse:
    if body_too_large(request):
        return error(413, "too_large", "The request is too large.")
    try:
        body = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        return error(
            400, "invalid", "Invalid report.", ['body: send a JSON object {"question_id", "description"}']
        )
    # null is as good as leaving a field out: the form says which are required.
    given = {key: body[key] for key in _ERRATUM_FIELDS if body.get(key) is not None}
    not_text = [f"{key}: must be a string" for key, value in given.items() if not isinstance(value, str)]
    if not_text:
        return error(400, "invalid", "Invalid report.", not_text)
    form = ErratumForm(given, user=request.user)
    if not form.is_valid():
        return error(400, "invalid", "Invalid report.", _form_errors(form))
    try:
        erratum = errata_services.erratum_report(
            reporter=request.user,
            question=form.cleaned_data["question"],
            description=form.cleaned_data["description"],
        )
    except errata_services.TooManyReports as problem:
        return error(429, "rate_limited", str(problem))
    return JsonResponse(erratum_json(erratum), status=201)


def leaderboard(request: HttpRequest) -> HttpResponse:
    """The ranking of a published version (?version=LABEL, default the latest), public, no token."""
    if request.method != "GET":
        return error(405, "method_not_allowed", "Use GET.")
    label = request.GET.get("version")
    versions = BenchmarkVersion.objects.published()
    version = versions.filter(label=label).first() if label else versions.latest_published()
    if version is None:
        if label:
            return error(404, "not_found", f"No published version {label!r}.")
        return error(404, "not_found", "No benchmark version is published yet.")
    # Kept gzipped (a tenth of the size): compressed once per change of the ranking, not per request.
    zipped = ranking.cached(
        version.label,
        "json-gzip",
        lambda: gzip.compress(
            json.dumps(exports.json_document(ranking.leaderboard_for(version=version))).encode(), mtime=0
        ),
    )
    if accepts_gzip(request):
        response = HttpResponse(zipped, content_type="application/json")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(zipped), content_type="application/json")
    patch_vary_headers(response, ("Accept-Encoding",))
    return response


# Why a pair has no paired test, as an HTTP status.
_REFUSAL_STATUS = {"different_versions": 400, "not_public": 403, "not_computable": 422}


@token_optional
def compare(request: HttpRequest) -> JsonResponse:
    """McNemar's test and the paired bootstrap interval of two submissions (?a=ID&b=ID), as on the compare
    page: among those the viewer may open, public ones for anyone, a token's own and, for staff, all."""
    if request.method != "GET":
        return error(405, "method_not_allowed", "Use GET.")
    form = CompareForm(request.GET)
    if not form.is_valid():
        details = [f"{field}: {message}" for field, messages in form.errors.items() for message in messages]
        return error(400, "invalid", "Give two submission ids: ?a=ID&b=ID.", details)
    ids = (form.cleaned_data["a"], form.cleaned_data["b"])
    pair = selectors.scored_pair_visible_to(viewer=request.user, ids=ids)
    if pair is None:
        return error(404, "not_found", f"No scored submissions {ids[0]} and {ids[1]} visible to you.")
    with translation.override("en"):  # the API speaks English, whatever the browser asks for
        paired = feedback.paired_comparison(*pair, request.user)
    if paired.shown is None:
        refusal = cast(feedback.Refusal, paired.refusal)  # never None when there is no test
        return error(_REFUSAL_STATUS[refusal], refusal, paired.note)
    return JsonResponse(paired.shown)


@require_GET
def openapi(request: HttpRequest) -> JsonResponse:
    return JsonResponse(openapi_document(server_url=request.build_absolute_uri("/").rstrip("/")))
