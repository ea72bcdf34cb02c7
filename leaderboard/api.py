"""The JSON API, v1: uploads and their scores, errata, the public leaderboard, the paired test of two
submissions, and what a client needs to start (the versions, a version's questions). What every endpoint
shares (the token, the error shape, the limits) is in api_common.py; protocol runs in run_api.py.

Every answer about a submission goes through `feedback.feedback_for`, as every page does."""

from __future__ import annotations

import gzip
import json
from datetime import date
from typing import Annotated, Any, NotRequired, cast

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from ninja import File, Form, P, Query, QueryEx, Router, UploadedFile
from pydantic import Field, WithJsonSchema
from typing_extensions import TypedDict

from evaluation import errata as errata_services
from evaluation import selectors as benchmark
from evaluation.bundle import BundleQuestionJSON, bundle_questions
from evaluation.forms import ErratumForm
from evaluation.models import BenchmarkVersion
from evaluation.predictions import PredictionFileError
from evaluation.scoring.scores_json import QuestionDetailJSON, Schema, VisibleScoresJSON
from evaluation.scoring.vocabulary import STATIC_OUTCOMES
from leaderboard import api_common as common
from leaderboard import citation, exports, feedback, ranking, selectors, services
from leaderboard.citation import CitationJSON
from leaderboard.errata_json import ErratumJSON, erratum_json
from leaderboard.exports import LeaderboardJSON
from leaderboard.feedback import ComparisonJSON, PortalRunJSON, ScoreHistoryJSON
from leaderboard.forms import CompareForm, SubmissionForm
from leaderboard.model_card import PUBLIC_REQUIRED
from leaderboard.models import Submission
from termite_site.accounts.http import AuthenticatedHttpRequest
from termite_site.cached_page import accepts_gzip

router = Router()


# Submissions.


@common.from_form(SubmissionForm, optional=SubmissionForm.DEFAULTED)
class UploadFields(common.FormFields):
    """The model card, and what the upload is for: the version, whether it is public, the team."""

    version: str | None = Field(None, description=common.LABEL)


@common.from_form(SubmissionForm, optional=SubmissionForm.DEFAULTED, exclude=("version", "team", "is_public"))
class ModelCardFields(common.FormFields):
    """The model card as uploaded; null where a field was left empty."""


class TeamJSON(TypedDict):
    name: str
    slug: str


class CheckJSON(TypedDict):
    """What a static check of the owner's query found; never what running it did."""

    question_id: str
    check: Annotated[str, Schema(enum=["submitted", *STATIC_OUTCOMES])]
    message: str | None


class AnswerJSON(TypedDict):
    """A practice version's question as scored, for its owner: everything, since its data is public."""

    question_id: str
    outcome: Annotated[str, Schema(description="What scoring found: correct, wrong_result, an error...")]
    ea: bool
    ea_strict: bool
    error: str | None
    gold_sql: Annotated[str | None, Schema(description="The question's gold query (MySQL)")]
    detail: Annotated[
        QuestionDetailJSON | None, Schema(description="null for scores made before practice details existed")
    ]


class SubmissionJSON(TypedDict):
    """A submission as the viewer may see it (`feedback.feedback_for`): its own, or a public one."""

    id: int
    status: Annotated[str, Schema(enum=Submission.Status.values)]
    model_name: str
    team: Annotated[TeamJSON | None, Schema(description="The team it was made on behalf of; null for none.")]
    public: bool
    model_card: Annotated[dict[str, Any], WithJsonSchema(ModelCardFields.model_json_schema())]
    receipt: Annotated[dict[str, Any] | None, Schema(description="The upload's receipt: its owner's only")]
    error: Annotated[str | None, Schema(description="Why scoring failed")]
    scores: VisibleScoresJSON | None
    score_history: Annotated[
        list[ScoreHistoryJSON], Schema(description="Every scoring, oldest first; the latest is `scores`.")
    ]
    carried_from: Annotated[
        int | None,
        Schema(description="The submission this one was carried over from, on the version it derives from"),
    ]
    portal_run: Annotated[
        PortalRunJSON | None,
        Schema(description="How the portal made it by running a protocol; null for an upload"),
    ]
    breakdowns_hidden: Annotated[str | None, Schema(description="Why the breakdowns are null.")]
    citation: Annotated[
        CitationJSON | None,
        Schema(description="How to cite it: null unless it is a public, released row of the leaderboard"),
    ]
    status_url: Annotated[str, Schema(format="uri")]
    results_url: Annotated[str, Schema(format="uri")]
    checks: NotRequired[Annotated[list[CheckJSON], Schema(description="The owner's only, once scored.")]]
    answers: NotRequired[
        Annotated[
            list[AnswerJSON],
            Schema(description="On a practice version only: the owner's questions in full, once scored."),
        ]
    ]


class SubmissionsJSON(TypedDict):
    submissions: Annotated[list[SubmissionJSON], Schema(description="Newest first")]


def model_card_json(submission: Submission) -> dict[str, Any]:
    """The model card as uploaded (every field of the upload form but `public`): dates in ISO 8601, and
    null for a field left empty."""
    card = {name: getattr(submission, name) for name in Submission.MODEL_CARD_FIELDS if name != "is_public"}
    return {
        name: v.isoformat() if isinstance(v, date) else None if v == "" else v for name, v in card.items()
    }


def submission_json(request: HttpRequest, submission: Submission) -> SubmissionJSON:
    seen = feedback.feedback_for(submission, request.user)
    results_url = request.build_absolute_uri(submission.get_absolute_url())
    body: SubmissionJSON = {
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
            cast(ScoreHistoryJSON, {key: value for key, value in entry.items() if key != "reason_label"})
            for entry in seen.history
        ],
        "carried_from": submission.carried_from_id,
        "portal_run": feedback.portal_run_mark(submission),
        "breakdowns_hidden": seen.breakdowns_note or None,
        "citation": citation.citation_for(submission, seen, permalink=results_url),
        "status_url": request.build_absolute_uri(reverse("api:submission_detail", args=[submission.pk])),
        "results_url": results_url,
    }
    if seen.disclosure.own_queries:
        # The static checks only; the owner's SQL is theirs already and stays out of the answer.
        body["checks"] = [
            {"question_id": line["question_id"], "check": line["check"], "message": line["message"]}
            for line in seen.questions
        ]
    if seen.disclosure.answers and seen.questions:
        body["answers"] = [
            {
                "question_id": line["question_id"],
                "outcome": line["outcome"],
                "ea": line["ea"],
                "ea_strict": line["ea_strict"],
                "error": line["error"],
                "gold_sql": line["gold_sql"],
                "detail": line["detail"],
            }
            for line in seen.questions
        ]
    return body


@router.get(
    "/submissions",
    url_name="submissions",
    auth=common.TOKEN,
    **common.documented("Your own submissions", 200, SubmissionsJSON, common.NO_TOKEN),
)
def submission_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    own = request.user.submissions.filter(withdrawn_at__isnull=True).select_related("version", "team")
    return JsonResponse({"submissions": [submission_json(request, s) for s in own]})


@router.post(
    "/submissions",
    url_name="submissions",
    auth=common.TOKEN,
    throttle=common.RateLimit("upload"),
    description="A public submission must give the whole model card: "
    + ", ".join(PUBLIC_REQUIRED)
    + "; weights open or closed, and the temperature unless sampling is greedy or beam. Each one missing is"
    " named in the error's `details`. A private submission needs the model name only. The scores come"
    " once it is scored: follow its `status_url`.",
    **common.documented(
        "Upload predictions with a model card",
        201,
        SubmissionJSON,
        {
            400: common.INVALID + " or line of the file",
            **common.NO_TOKEN,
            403: "The benchmark version takes no submissions (`version_closed`). "
            + common.UNCONFIRMED
            + ". You left the team meanwhile (`not_a_member`)",
            413: common.TOO_LARGE,
            429: "Quota (`quota_exceeded`) or rate limit (`rate_limited`, with Retry-After) exceeded",
        },
    ),
)
def submission_create(
    request: AuthenticatedHttpRequest, fields: Form[UploadFields], predictions: File[UploadedFile]
) -> HttpResponse:
    data = fields.form_data()
    if "version" in data:
        data["version"] = common.published_version(data["version"]).pk
    # Django's upload handlers always set the size.
    if cast(int, predictions.size) > settings.TERMITE_MAX_UPLOAD_BYTES:
        raise common.ApiError(
            413,
            "too_large",
            f"predictions: the file is larger than {settings.TERMITE_MAX_UPLOAD_BYTES // 1024} KB",
        )
    form = SubmissionForm(data, {"predictions": predictions}, user=request.user)
    if not form.is_valid():
        raise common.invalid("Invalid submission.", form)
    try:
        submission = services.submission_create(
            user=request.user,
            version=form.cleaned_data["version"],
            upload=services.Upload(name=cast(str, predictions.name), data=predictions.read()),
            model_card=form.model_card(),
            team=form.cleaned_data["team"],
        )
    except services.EmailUnconfirmed as problem:
        raise common.ApiError(403, "email_unconfirmed", str(problem)) from None
    except PredictionFileError as problem:
        raise common.ApiError(
            400, "invalid_predictions", "The predictions file was refused.", problem.errors
        ) from None
    except services.NotTeamMember as problem:
        raise common.ApiError(403, "not_a_member", str(problem)) from None
    except services.QuotaExceeded as problem:
        raise common.ApiError(429, "quota_exceeded", str(problem)) from None
    # The submission as stored, queued: nothing in the answer may depend on how scoring goes (in the
    # embedded mode it has begun in a thread by now).
    response = JsonResponse(submission_json(request, submission), status=201)
    response["Location"] = reverse("api:submission_detail", args=[submission.pk])
    return response


@router.get(
    "/submissions/{int:id}",
    url_name="submission_detail",
    auth=common.TOKEN,
    **common.documented(
        "One submission: status, receipt and, once scored, the scores",
        200,
        SubmissionJSON,
        {**common.NO_TOKEN, 404: "No such submission visible to you: your own, or a public one"},
    ),
)
def submission_detail(request: AuthenticatedHttpRequest, id: int) -> HttpResponse:
    submission = (
        Submission.objects.visible_to(request.user).filter(pk=id).select_related("version", "team").first()
    )
    if submission is None:
        raise Http404(f"No submission {id}.")
    return JsonResponse(submission_json(request, submission))


# Errata.


@common.from_form(ErratumForm)
class ErratumFields(common.FormFields):
    """A report that a question is wrong. Staff read it; only you and they see its description."""

    version: str | None = Field(None, description=common.LABEL)


class ErrataJSON(TypedDict):
    errata: Annotated[list[ErratumJSON], Schema(description="Newest first")]


@router.get(
    "/errata",
    url_name="errata",
    auth=common.TOKEN,
    **common.documented(
        "Your own reports that a question is wrong, with staff's answers", 200, ErrataJSON, common.NO_TOKEN
    ),
)
def errata_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    own = request.user.errata.select_related("question__version")
    return JsonResponse({"errata": [erratum_json(erratum) for erratum in own]})


@router.post(
    "/errata",
    url_name="errata",
    auth=common.CONFIRMED,
    description="Staff read the report; only you and they see its description. At most"
    " TERMITE_ERRATA_LIMIT_PER_DAY reports a day (20 by default).",
    **common.documented(
        "Report that a question is wrong",
        201,
        ErratumJSON,
        {
            400: common.INVALID,
            **common.NO_TOKEN,
            403: common.UNCONFIRMED,
            413: common.TOO_LARGE,
            429: "Too many reports today (`rate_limited`)",
        },
    ),
)
def erratum_report(request: AuthenticatedHttpRequest, report: ErratumFields) -> HttpResponse:
    form = ErratumForm(report.form_data(), user=request.user)
    if not form.is_valid():
        raise common.invalid("Invalid report.", form)
    try:
        erratum = errata_services.erratum_report(
            reporter=request.user,
            question=form.cleaned_data["question"],
            description=form.cleaned_data["description"],
        )
    except errata_services.TooManyReports as problem:
        raise common.ApiError(429, "rate_limited", str(problem)) from None
    return JsonResponse(erratum_json(erratum), status=201)


# The leaderboard and the paired test.


@router.get(
    "/leaderboard",
    url_name="leaderboard",
    description="Public scored submissions, best first, and baselines reported in papers (not scored here),"
    " which sit below every row with at least their EA. Accuracies are fractions in [0, 1].",
    **common.documented(
        "The public ranking of a published benchmark version; no token needed",
        200,
        LeaderboardJSON,
        {400: "A malformed query", 404: "No such published version"},
        security=[],
    ),
)
def leaderboard(
    request: HttpRequest,
    version: QueryEx[str | None, P(description=common.LABEL)] = None,
) -> HttpResponse:
    versions = BenchmarkVersion.objects.published()
    shown = versions.filter(label=version).first() if version else versions.latest_published()
    if shown is None:
        raise Http404(f"No published version {version!r}." if version else "No version is published yet.")
    # Kept gzipped (a tenth of the size): compressed once per change of the ranking, not per request.
    zipped = ranking.cached(
        shown.label,
        "json-gzip",
        lambda: gzip.compress(
            json.dumps(exports.json_document(ranking.leaderboard_for(version=shown))).encode(), mtime=0
        ),
    )
    if accepts_gzip(request):
        response = HttpResponse(zipped, content_type="application/json")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(zipped), content_type="application/json")
    patch_vary_headers(response, ("Accept-Encoding",))
    return response


@common.from_form(CompareForm)
class CompareFields(common.FormFields):
    """Two submissions, by id."""


# Why a pair has no paired test, as an HTTP status.
_REFUSAL_STATUS = {"different_versions": 400, "not_public": 403, "not_computable": 422}


@router.get(
    "/compare",
    url_name="compare",
    auth=common.ANYONE,
    description="McNemar's exact test and a paired bootstrap 95% interval of EA(A) - EA(B), over the"
    " questions scored for both, as on the compare page. Both must be scored on the same version and public"
    " (staff may compare any two). Without a token, public submissions only. Only counts are returned, never"
    " which questions differ.",
    **common.documented(
        "Whether two submissions' EA differ significantly: a paired test",
        200,
        ComparisonJSON,
        {
            400: "A missing or malformed id (`common.invalid`), or two submissions scored on different benchmark"
            " versions (`different_versions`)",
            401: "An unknown or revoked token (`invalid_token`)",
            403: "Not both public (`not_public`): the paired test of private submissions is not shown, to"
            " their owners either",
            404: "Not found: either submission is not scored, or not visible to you",
            422: "Scores stored without a verdict per question (`not_computable`): rescoring them makes the"
            " test possible",
        },
        security=[{}],
    ),
)
def compare(request: HttpRequest, pair: Query[CompareFields]) -> HttpResponse:
    form = CompareForm(pair.form_data())
    if not form.is_valid():
        raise common.invalid("Give two submission ids: ?a=ID&b=ID.", form)
    ids = (form.cleaned_data["a"], form.cleaned_data["b"])
    scored = selectors.scored_pair_visible_to(viewer=request.user, ids=ids)
    if scored is None:
        raise Http404(f"No scored submissions {ids[0]} and {ids[1]} visible to you.")
    with translation.override("en"):  # the API speaks English, whatever the browser asks for
        paired = feedback.paired_comparison(*scored, request.user, rule=ranking.rank_rule_for(*scored))
    if paired.shown is None:
        refusal = cast(feedback.Refusal, paired.refusal)  # never None when there is no test
        raise common.ApiError(_REFUSAL_STATUS[refusal], refusal, paired.note)
    return JsonResponse(paired.shown)


# What a client needs to start.


class VersionJSON(TypedDict):
    """A benchmark version: what it holds, and whether it takes submissions."""

    label: Annotated[str, Schema(description="What `version` takes everywhere in this API")]
    name: str
    kind: Annotated[
        str,
        Schema(
            enum=["sealed", "practice"],
            description="sealed: hidden data, a participant sees scores only; practice: public data (like the"
            " demo's), its questions' gold and every submission's answers per question are shown, no quota,"
            " never ranked with a sealed version",
        ),
    ]
    questions: Annotated[int, Schema(description="The questions it scores")]
    databases: int
    published_at: Annotated[str | None, Schema(format="date-time", description="null for a draft (staff)")]
    first_added_on: Annotated[
        str | None, Schema(format="date", description="When its first database joined the benchmark")
    ]
    last_added_on: Annotated[
        str | None, Schema(format="date", description="When its latest database joined the benchmark")
    ]
    accepts_submissions: Annotated[bool, Schema(description="Published: it takes uploads, runs and errata")]
    latest: Annotated[bool, Schema(description="The latest published: the default wherever `version` is")]
    questions_url: Annotated[str, Schema(format="uri")]


class VersionsJSON(TypedDict):
    versions: Annotated[list[VersionJSON], Schema(description="Newest first")]


@router.get(
    "/versions",
    url_name="versions",
    auth=common.ANYONE,
    **common.documented(
        "The benchmark's published versions (staff: drafts too)",
        200,
        VersionsJSON,
        common.NO_TOKEN,
        security=[{}],
    ),
)
def version_list(request: HttpRequest) -> HttpResponse:
    latest = BenchmarkVersion.objects.latest_published()
    versions = benchmark.visible_versions(user=request.user)
    return JsonResponse({"versions": [_version_json(request, version, latest) for version in versions]})


def _version_json(request: HttpRequest, version: Any, latest: BenchmarkVersion | None) -> VersionJSON:
    """`version` as `visible_versions` annotates it."""
    return {
        "label": version.label,
        "name": version.name,
        "kind": version.kind,
        "questions": version.scored_count,
        "databases": version.database_count,
        "published_at": version.published_at.isoformat() if version.published_at else None,
        "first_added_on": version.first_added_on.isoformat() if version.first_added_on else None,
        "last_added_on": version.last_added_on.isoformat() if version.last_added_on else None,
        "accepts_submissions": version.is_published,
        "latest": version == latest,
        "questions_url": request.build_absolute_uri(reverse("api:version_questions", args=[version.label])),
    }


class QuestionsJSON(TypedDict):
    version: str
    questions: Annotated[
        list[BundleQuestionJSON],
        Schema(description="questions.jsonl of the task bundle: the same questions, in the same order"),
    ]


@router.get(
    "/versions/{label}/questions",
    url_name="version_questions",
    auth=common.CONFIRMED,
    description="The schemas are in the task bundle, on the version's page.",
    **common.documented(
        "A version's questions, as its task bundle gives them (their gold on a practice version only)",
        200,
        QuestionsJSON,
        {**common.NO_TOKEN, 403: common.UNCONFIRMED, 404: "No such version visible to you"},
    ),
)
def version_questions(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    version = benchmark.version_for(user=request.user, label=label)
    return JsonResponse({"version": version.label, "questions": bundle_questions(version)})
