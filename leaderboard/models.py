from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from evaluation.models import BenchmarkVersion, Dialect, VersionKind
from evaluation.scoring.scores_json import ScoresJSON
from leaderboard.model_card import HOW_IT_RAN, ModelCard
from leaderboard.verdicts import ea_verdicts
from termite_site.accounts.models import Team, User


def release_time(*, received: datetime, started: datetime) -> datetime:
    """When participants see how a scoring ended: TERMITE_RESULT_DELAY_SECONDS after the file was
    `received`, or, when its job `started` late (a long queue), TERMITE_SCORING_BOUND_SECONDS after that.
    Both are known before anything runs, and no scoring outlasts the bound (the sandbox stops its queries
    at the submission budget; services.submission_score logs one that ends later): so when a result
    shows tells how busy the queue was, never how long the file's queries ran. With no delay (0), at once.
    """
    delay = settings.TERMITE_RESULT_DELAY_SECONDS
    if not delay:
        return started
    return max(
        received + timedelta(seconds=delay),
        started + timedelta(seconds=settings.TERMITE_SCORING_BOUND_SECONDS),
    )


class SubmissionQuerySet(models.QuerySet["Submission"]):
    def visible_to(self, user: User | AnonymousUser) -> SubmissionQuerySet:
        """What a person may open: public scored submissions, plus their own; staff see everything."""
        live = self.filter(withdrawn_at__isnull=True)
        if user.is_authenticated and user.is_staff:
            return live
        # Once released (leaderboard/feedback.py): a page that appears when scoring ends would time it.
        released = models.Q(released_at__isnull=True) | models.Q(released_at__lte=timezone.now())
        public = models.Q(is_public=True, is_hidden=False, status=Submission.Status.SCORED) & released
        if user.is_authenticated:
            return live.filter(public | models.Q(user=user))
        return live.filter(public)

    def counting_towards_quota(self) -> SubmissionQuerySet:
        # A submission that failed through no fault of the user does not use up their quota; a withdrawn
        # one does, or withdrawing would let anyone probe the hidden answers without limit. One carried
        # over to a new version was not uploaded to it. A practice version's submissions have no quota
        # (only the upload rate limit): its answers are public, there is nothing to probe.
        return (
            self.exclude(status=Submission.Status.FAILED)
            .exclude(version__kind=VersionKind.PRACTICE)
            .filter(carried_from__isnull=True)
        )

    def ranked(self, version: BenchmarkVersion) -> SubmissionQuerySet:
        """The leaderboard of `version`: public, scored, live and unhidden, best EA first, then best
        EA-strict, then the earlier submission (leaderboard/ranking.py adds shared ranks)."""
        return self.filter(
            version=version,
            status=Submission.Status.SCORED,
            is_public=True,
            is_hidden=False,
            withdrawn_at__isnull=True,
        ).order_by(
            models.F("ea").desc(nulls_last=True),
            models.F("ea_strict").desc(nulls_last=True),
            "created_at",
            "pk",
        )


class Submission(ModelCard):
    class Status(models.TextChoices):
        QUEUED = "queued", _("queued")
        RUNNING = "running", _("running")
        SCORED = "scored", _("scored")
        FAILED = "failed", _("failed")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions")
    # The team it was made on behalf of, of which the uploader was a member then (services.submission_create).
    # PROTECT: a team with submissions cannot be deleted, since they are credited to it (and counted
    # towards its quota); SET_NULL would silently make them nobody's.
    team = models.ForeignKey(
        Team,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="submissions",
        verbose_name=_("team"),
    )
    version = models.ForeignKey(BenchmarkVersion, on_delete=models.PROTECT, related_name="submissions")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    # The model card: the shared fields (leaderboard/model_card.py) and these.
    description = models.TextField(_("description"), max_length=2000, blank=True)
    paper_url = models.URLField(_("paper URL"), blank=True)
    code_url = models.URLField(_("code URL"), blank=True)
    model_url = models.URLField(_("model URL"), blank=True, help_text=_("e.g. its page on a model hub"))
    dialect = models.CharField(
        _("SQL dialect of the predictions"), max_length=10, choices=Dialect.choices, default=Dialect.MYSQL
    )
    is_public = models.BooleanField(_("public"), default=False)

    # What was uploaded, and the receipt.
    predictions = models.JSONField(help_text="question id → predicted SQL, as uploaded.")
    file_name = models.CharField(max_length=255)
    file_sha256 = models.CharField(max_length=64)
    file_format = models.CharField(max_length=20)
    missing_count = models.PositiveIntegerField(default=0)
    scorer_version = models.CharField(max_length=20)

    # The lifecycle.
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    failure_reason = models.TextField(blank=True)
    failure_retryable = models.BooleanField(default=False)
    attempts = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # While a job scores the submission, stamped every TERMITE_HEARTBEAT_SECONDS on the database's clock
    # (see leaderboard/liveness.py): a running submission whose stamp goes stale lost its job.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # The real times above are staff's: how long scoring took depends on the hidden data.
    scored_at = models.DateTimeField(null=True, blank=True)
    # When participants see how scoring ended (leaderboard/feedback.py), by `release_time`: a function of
    # when the file came and when its job started, never of how long it ran.
    released_at = models.DateTimeField(null=True, blank=True)

    # The results: `scores` is the object `manage.py score --json` prints (ScoresJSON); `outcomes` is per
    # question.
    scores = models.JSONField(null=True, blank=True)
    outcomes = models.JSONField(null=True, blank=True)
    # Question id -> EA verdict, made of `outcomes` when scored (leaderboard/verdicts.py): what the rank rule
    # reads of a thousand rows, a few bytes a question rather than the lines' hundred and more. Read through
    # leaderboard/feedback.py, as the lines are.
    ea_verdicts = models.JSONField(null=True, blank=True, editable=False)
    ea = models.FloatField(null=True, blank=True, db_index=True)
    ea_strict = models.FloatField(null=True, blank=True)

    # Moderation.
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    is_hidden = models.BooleanField(default=False)
    is_flagged = models.BooleanField(default=False)
    moderation_reason = models.CharField(_("public moderation note"), max_length=500, blank=True)
    # Verification (leaderboard/services.py, submission_verify): staff reproduced the run, or received the
    # system and ran it. The date and the note are public; who verified it is for staff only.
    verified_at = models.DateField(_("verified on"), null=True, blank=True)
    verified_note = models.CharField(
        _("public verification note"),
        max_length=200,
        blank=True,
        help_text=_("e.g. reproduced by the organisers from the released code"),
    )
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # A submission carried over to a version derived from its own: scored again from the same predictions.
    carried_from = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="carried_to"
    )
    # Made by the portal running a protocol against a model endpoint (ProtocolRun), not uploaded: which
    # protocol, the endpoint's host (never its path or key), when the run ended, and the sha256 of the
    # run's transcript (its canonical JSONL, which the owner and staff can download and check). Public on
    # a public row, as the protocol and host; empty for an upload.
    portal_protocol = models.CharField(_("protocol run by the portal"), max_length=80, blank=True)
    portal_endpoint_host = models.CharField(_("endpoint host"), max_length=255, blank=True)
    portal_run_at = models.DateTimeField(_("run by the portal at"), null=True, blank=True)
    transcript_sha256 = models.CharField(max_length=64, blank=True)

    objects = SubmissionQuerySet.as_manager()

    # What the uploader says about the system, in the order the form asks for it (the team is who
    # submitted, not what: it is checked and stored apart). What a public submission must fill in is
    # model_card.PUBLIC_REQUIRED.
    MODEL_CARD_FIELDS = (
        "model_name",
        "description",
        "model_size",
        "weights",
        "approach",
        *HOW_IT_RAN,
        "dialect",
        "paper_url",
        "code_url",
        "model_url",
        "spider_dev_ea",
        "is_public",
    )
    # What its owner may correct after the upload: not the dialect, which says how the file was read and
    # scored, nor whether it is public.
    EDITABLE_CARD_FIELDS = tuple(name for name in MODEL_CARD_FIELDS if name not in ("dialect", "is_public"))

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["version", "status", "is_public", "is_hidden"])]

    def __str__(self) -> str:
        return f"#{self.pk} {self.model_name}"

    def get_absolute_url(self) -> str:
        return reverse("leaderboard:submission_detail", args=[self.pk])

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SCORED, self.Status.FAILED)

    @property
    def receipt(self) -> dict[str, Any]:
        return {
            "submission_id": self.pk,
            "file_name": self.file_name,
            "file_sha256": self.file_sha256,
            "benchmark_version": self.version.label,
            "scorer_version": self.scorer_version,
            "received_at": self.created_at.isoformat(),
            "predictions": len(self.predictions),
            "not_submitted": self.missing_count,
        }

    def mark_enqueued(self) -> None:
        self.enqueued_at = timezone.now()
        self.save(update_fields=["enqueued_at"])

    def mark_failed(self, reason: str, *, retryable: bool) -> None:
        self.status = self.Status.FAILED
        self.failure_reason = reason
        self.failure_retryable = retryable
        now = timezone.now()
        self.released_at = self._release_time(
            received=self.created_at, started=self.started_at or now, now=now
        )
        self.save(update_fields=["status", "failure_reason", "failure_retryable", "released_at"])

    def _release_time(self, *, received: datetime, started: datetime, now: datetime) -> datetime:
        """`release_time`, except on a practice version: its data is public, so how long its queries ran
        tells nothing hidden and the result shows at once."""
        return now if self.version.is_practice else release_time(received=received, started=started)

    def mark_scored(
        self,
        *,
        scores: ScoresJSON,
        outcomes: list[dict[str, Any]],
        reason: str = "",
        rescoring: Rescoring | None = None,
        started: datetime | None = None,
    ) -> Scoring:
        """The new scores become the current ones, shown to participants at the `release_time` of the
        scoring's job: this submission's upload and its job's start, or for a rescoring's job, the
        rescoring's request and the job's `started`. The scoring joins the submission's history."""
        scored_at = timezone.now()
        if rescoring is None:
            received, started = self.created_at, self.started_at or scored_at
        else:
            received, started = rescoring.created_at, started or scored_at
        self.released_at = self._release_time(received=received, started=started, now=scored_at)
        self.status = self.Status.SCORED
        self.scores = scores
        self.outcomes = outcomes
        self.ea_verdicts = ea_verdicts(outcomes)
        self.ea = scores["overall"]["ea"]
        self.ea_strict = scores["overall"]["ea_strict"]
        self.scorer_version = scores["scorer_version"]
        self.failure_reason = ""
        self.failure_retryable = False
        self.scored_at = scored_at
        self.save(
            update_fields=[
                "released_at",
                "status",
                "scores",
                "outcomes",
                "ea_verdicts",
                "ea",
                "ea_strict",
                "scorer_version",
                "failure_reason",
                "failure_retryable",
                "scored_at",
            ]
        )
        first = Scoring.Reason.CARRIED if self.carried_from_id else Scoring.Reason.FIRST
        return Scoring.objects.create(
            submission=self,
            rescoring=rescoring,
            reason=reason or first,
            scorer_version=scores["scorer_version"],
            benchmark_version=self.version.label,
            scored_at=scored_at,
            released_at=self.released_at,
            scores=scores,
            outcomes=outcomes,
        )

    @property
    def is_verified(self) -> bool:
        return self.verified_at is not None

    @property
    def is_portal_run(self) -> bool:
        return bool(self.portal_protocol)

    def withdraw(self) -> None:
        self.withdrawn_at = timezone.now()
        self.save(update_fields=["withdrawn_at"])


class Rescoring(models.Model):
    """One rescoring of every scored submission of a version with the current scorer (a run of jobs)."""

    class Reason(models.TextChoices):
        SCORER = "scorer", _("rescoring after a scorer change")
        ERRATA = "errata", _("rescoring after errata")
        REBUILD = "rebuild", _("rescoring after its databases were rebuilt by a newer scorer")

    version = models.ForeignKey(BenchmarkVersion, on_delete=models.CASCADE, related_name="rescorings")
    scorer_version = models.CharField(max_length=20)
    reason = models.CharField(max_length=10, choices=Reason.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    submission_ids = models.JSONField(default=list, help_text="The submissions it rescores.")
    # What it moved on the public leaderboard: rows whose EA changed, with their ranks before and after.
    moved = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.version} with scorer {self.scorer_version}"

    @property
    def total(self) -> int:
        return len(self.submission_ids)

    @property
    def done(self) -> int:
        return self.scorings.count()


class ModelCardRevision(models.Model):
    """The model card a submission had before its owner corrected it: every version of a card is kept, and
    the submission's page says when it changed."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="card_revisions")
    # The fields of Submission.EDITABLE_CARD_FIELDS as they were (a date as ISO 8601 text).
    card = models.JSONField(encoder=DjangoJSONEncoder)
    replaced_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["replaced_at", "pk"]

    def __str__(self) -> str:
        return f"#{self.submission_id}'s card until {self.replaced_at:%Y-%m-%d %H:%M}"


class Scoring(models.Model):
    """One scoring of a submission, kept for good: its history, oldest first; the latest is current."""

    class Reason(models.TextChoices):
        FIRST = "first", _("first scoring")
        CARRIED = "carried", _("carried over to a new version")
        SCORER = "scorer", _("rescoring after a scorer change")
        ERRATA = "errata", _("rescoring after errata")
        REBUILD = "rebuild", _("rescoring after its databases were rebuilt by a newer scorer")

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="scorings")
    rescoring = models.ForeignKey(
        Rescoring, on_delete=models.SET_NULL, null=True, blank=True, related_name="scorings"
    )
    reason = models.CharField(max_length=10, choices=Reason.choices)
    scorer_version = models.CharField(max_length=20)
    benchmark_version = models.CharField(max_length=40)
    # When it was scored (staff's), and when participants may see it (`release_time`, as for the first result).
    scored_at = models.DateTimeField()
    released_at = models.DateTimeField()
    scores = models.JSONField()
    outcomes = models.JSONField(default=list)

    class Meta:
        ordering = ["scored_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "rescoring"],
                condition=models.Q(rescoring__isnull=False),
                name="one_scoring_per_submission_and_rescoring",
            )
        ]

    def __str__(self) -> str:
        return f"#{self.submission_id} by scorer {self.scorer_version} ({self.reason})"


class SubmissionQuota(models.Model):
    """A user's own limits, set by staff; users without one get the site defaults."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submission_quota"
    )
    per_day = models.PositiveIntegerField()
    per_version = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"{self.user}: {self.per_day}/day, {self.per_version}/version"


class Baseline(ModelCard):
    """A result reported elsewhere (a paper), entered by an admin and shown on the leaderboard, marked
    as such and never ranked: its numbers were not produced by this portal's scorer.

    `per_database` holds EA as fractions per database slug of the version. `ea` is the overall EA as
    reported; left blank, the leaderboard shows the question-weighted mean of `per_database`. A baseline
    reported on other databases than the version's (the demo's example) gives `ea` and no database.
    """

    version = models.ForeignKey(BenchmarkVersion, on_delete=models.PROTECT, related_name="baselines")
    # The authors as the paper names them: text, not a team of this portal.
    team = models.CharField(_("team"), max_length=120, blank=True)
    per_database = models.JSONField(
        _("EA per database"),
        default=dict,
        blank=True,
        help_text=_(
            'Fractions between 0 and 1 per database slug, e.g. {"bowling": 0.5079}; {} when the paper '
            "reports none of the version's databases."
        ),
    )
    ea = models.FloatField(
        _("overall EA"),
        null=True,
        blank=True,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text=_(
            "A fraction. Leave blank to use the question-weighted mean of the per-database EA; required "
            "without any."
        ),
    )
    note = models.CharField(_("note"), max_length=300, blank=True, help_text=_("e.g. model and settings."))
    source = models.TextField(_("source"), help_text=_("The citation of the paper that reports it."))
    source_url = models.URLField(_("source URL"), blank=True)
    date = models.DateField(_("date"), help_text=_("When the result was published."))
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["version", "model_name"]
        constraints = [
            models.UniqueConstraint(fields=["version", "model_name"], name="unique_baseline_per_version")
        ]

    def __str__(self) -> str:
        return f"{self.model_name} ({self.version}, baseline)"

    def clean(self) -> None:
        if self.per_database is None:  # the admin's box left empty
            self.per_database = {}
        if not isinstance(self.per_database, dict):
            raise ValidationError({"per_database": _("Give the EA per database as {slug: fraction}.")})
        if not self.per_database and self.ea is None:
            raise ValidationError(
                {
                    "per_database": _(
                        "Give the EA of at least one database, {slug: fraction}, or the overall EA."
                    )
                }
            )
        for slug, value in self.per_database.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValidationError(
                    {"per_database": _("%(slug)s: EA must be a fraction between 0 and 1.") % {"slug": slug}}
                )
        if self.version_id is not None:
            known = set(self.version.databases.values_list("slug", flat=True))
            unknown = sorted(set(self.per_database) - known)
            if unknown:
                raise ValidationError(
                    {
                        "per_database": _("%(version)s has no database %(slugs)s.")
                        % {"version": self.version, "slugs": ", ".join(unknown)}
                    }
                )


class ProtocolRunQuerySet(models.QuerySet["ProtocolRun"]):
    def visible_to(self, user: User | AnonymousUser) -> ProtocolRunQuerySet:
        """A run is its owner's, and staff's: its transcript holds the questions and the schema."""
        if user.is_authenticated and user.is_staff:
            return self
        if user.is_authenticated:
            return self.filter(user=user)
        return self.none()


class ProtocolRun(models.Model):
    """The portal running a protocol (leaderboard/protocols/) against a participant's model endpoint; when
    it ends, its answers become a submission through the same path as an upload, marked as run by the
    portal. Each request and answer is kept (`RunExchange`): its transcript."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("queued")
        RUNNING = "running", _("running")
        FINISHED = "finished", _("finished")
        BUDGET_EXHAUSTED = "budget_exhausted", _("budget exhausted")
        CANCELLED = "cancelled", _("cancelled")
        FAILED = "failed", _("failed")

    # What a run may still do: only these take requests; a run in any other state has ended.
    ACTIVE = (Status.QUEUED, Status.RUNNING)
    # Ended with answers worth scoring: the owner may submit them (leaderboard/run_services.py).
    SUBMITTABLE = (Status.FINISHED, Status.BUDGET_EXHAUSTED, Status.CANCELLED)

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="protocol_runs")
    team = models.ForeignKey(
        Team, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("team")
    )
    version = models.ForeignKey(BenchmarkVersion, on_delete=models.PROTECT, related_name="protocol_runs")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    # The endpoint and how to call it.
    endpoint_url = models.URLField(_("endpoint URL"), max_length=500)
    # Fernet, with a key derived from TERMITE_GOLD_KEY (leaderboard/protocols/api_keys.py); "" once deleted.
    api_key_encrypted = models.TextField(blank=True, editable=False)
    delete_key_when_done = models.BooleanField(_("delete the API key when the run ends"), default=True)
    model = models.CharField(_("model"), max_length=200, help_text=_("The model name the endpoint expects."))
    protocol = models.CharField(_("protocol"), max_length=80)
    temperature = models.FloatField(
        _("temperature"), default=1.0, validators=[MinValueValidator(0), MaxValueValidator(2)]
    )
    top_p = models.FloatField(
        _("top-p"), null=True, blank=True, validators=[MinValueValidator(0), MaxValueValidator(1)]
    )
    max_tokens = models.PositiveIntegerField(_("max tokens per answer"), null=True, blank=True)
    seed = models.BigIntegerField(_("seed"), null=True, blank=True)

    # What the submission will say: the upload form's model card (cleaned; dates in ISO 8601).
    model_card = models.JSONField(default=dict)

    # The budget, checked before each request, and the requests in flight at once.
    max_requests = models.PositiveIntegerField(_("most requests"))
    max_total_tokens = models.PositiveBigIntegerField(_("most tokens"), null=True, blank=True)
    max_seconds = models.PositiveIntegerField(_("most seconds"))
    concurrency = models.PositiveSmallIntegerField(_("requests at once"), default=2)

    # The lifecycle, as the submission's (leaderboard/liveness.py's heartbeat, the sweep).
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True)
    message = models.TextField(blank=True, help_text="Why it stopped, or why it was not submitted.")
    attempts = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Seconds spent running over every attempt: the wall-time budget counts these, not the time queued.
    seconds_spent = models.FloatField(default=0)

    # Progress: what is to be asked (each database's first turn and each question) and what is done.
    tasks_total = models.PositiveIntegerField(default=0)
    tasks_done = models.PositiveIntegerField(default=0)
    requests_done = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    tokens_used = models.PositiveBigIntegerField(default=0)

    submission = models.OneToOneField(
        Submission, on_delete=models.SET_NULL, null=True, blank=True, related_name="protocol_run"
    )
    transcript_sha256 = models.CharField(max_length=64, blank=True)

    objects = ProtocolRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"run #{self.pk} {self.model} ({self.protocol})"

    def get_absolute_url(self) -> str:
        return reverse("leaderboard:run_detail", args=[self.pk])

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def has_key(self) -> bool:
        return bool(self.api_key_encrypted)

    @property
    def may_submit(self) -> bool:
        return self.status in self.SUBMITTABLE and self.submission_id is None

    @property
    def progress_percent(self) -> int:
        return math.floor(100 * self.tasks_done / self.tasks_total) if self.tasks_total else 0

    def delete_key(self) -> None:
        self.api_key_encrypted = ""
        self.save(update_fields=["api_key_encrypted"])


class RunExchange(models.Model):
    """One request of a run and what came back: a line of its transcript. A failed attempt is kept too;
    the one that answered has `ok`, and a resumed run never asks what has one."""

    class Kind(models.TextChoices):
        INTERPRETATION = "interpretation", _("interpretation of the database")
        QUESTION = "question", _("question")

    run = models.ForeignKey(ProtocolRun, on_delete=models.CASCADE, related_name="exchanges")
    database = models.CharField(max_length=50)
    question_id = models.CharField(max_length=80, blank=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    attempt = models.PositiveSmallIntegerField()
    request = models.JSONField(help_text="The messages sent.")
    answer = models.TextField(blank=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    tokens = models.PositiveIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(default=0)
    sql = models.TextField(blank=True)
    ok = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["database", "kind", "question_id", "attempt"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "kind", "database", "question_id", "attempt"], name="one_exchange_per_attempt"
            )
        ]

    def __str__(self) -> str:
        return f"run #{self.run_id} {self.kind} {self.question_id or self.database} #{self.attempt}"
