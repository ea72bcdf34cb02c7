from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from evaluation.gold import decrypt_gold
from evaluation.scoring.vocabulary import DIALECT_NAMES, DIALECTS, HARDNESS_LEVELS
from termite_site.accounts.models import User

LABEL_VALIDATOR = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$", _("Use letters, digits, dots, dashes or underscores.")
)
SLUG_VALIDATOR = RegexValidator(
    r"^[a-z0-9][a-z0-9_]{0,49}$", _("Use lower-case letters, digits or underscores.")
)


# The choices of the shared vocabulary (evaluation/scoring/vocabulary.py), with the labels pages show.
_HARDNESS_LABELS = {"easy": _("easy"), "medium": _("medium"), "hard": _("hard"), "extra": _("extra hard")}
Hardness = models.TextChoices(  # type: ignore[call-overload]  # the stubs lack labelled members and `module`
    "Hardness",
    [(level.upper(), (level, _HARDNESS_LABELS[level])) for level in HARDNESS_LEVELS],
    module=__name__,
)
Dialect = models.TextChoices(  # type: ignore[call-overload]  # the stubs lack labelled members and `module`
    "Dialect", [(dialect.upper(), (dialect, DIALECT_NAMES[dialect])) for dialect in DIALECTS], module=__name__
)


class StoredDatabase(models.Model):
    """A built SQLite database (a version's copy, or a neighbour of a test suite), as the platform keeps it.

    Content-addressed by its sha256 and written once, in the transaction that stores what refers to it,
    and never changed: every host that scores keeps a local copy of it (`evaluation/database_cache.py`),
    fetched from here and checked against the sha256, so no worker depends on the disk of the host that
    imported the benchmark.
    """

    sha256 = models.CharField(max_length=64, primary_key=True)
    content = models.BinaryField()
    size = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.sha256[:12]} ({self.size} bytes)"

    @staticmethod
    def cache_path(sha256: str) -> Path:
        """The file of this host's local copy, named by its sha256."""
        return Path(settings.TERMITE_DATABASE_CACHE_DIR) / f"{sha256}.sqlite3"


class ParticipantsSee(models.TextChoices):
    """What participants may see of each database of a version (`evaluation.schemas.participant_dump`)."""

    SCHEMA = "schema", _("the schema only")
    SCHEMA_AND_DATA = "schema-and-data", _("the schema and the data")


class VersionKind(models.TextChoices):
    """What participants may learn from a version's submissions (leaderboard/feedback.py): a *sealed*
    version's data is hidden and its feedback sealed; a *practice* version's data is public (the demo's),
    so participants see everything, per question. Set when a version is created, never changed."""

    SEALED = "sealed", _("sealed")
    PRACTICE = "practice", _("practice")


class BenchmarkVersionQuerySet(models.QuerySet["BenchmarkVersion"]):
    def published(self) -> BenchmarkVersionQuerySet:
        return self.filter(status=BenchmarkVersion.Status.PUBLISHED)

    def latest_published(self) -> BenchmarkVersion | None:
        """The newest published version, sealed before practice: the one the leaderboard and the upload
        form open on, since a practice round is never what the benchmark's results are."""
        return (
            self.published()
            .order_by(
                models.Case(models.When(kind=VersionKind.SEALED, then=0), default=1), "-published_at", "-pk"
            )
            .first()
        )


class BenchmarkVersion(models.Model):
    """A frozen set of databases and questions; every score belongs to exactly one version.

    A published version is never edited: fixing a question means a new draft derived from it.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", _("draft")
        PUBLISHED = "published", _("published")

    name = models.CharField(_("benchmark"), max_length=100, default="Termite")
    label = models.CharField(_("version"), max_length=40, unique=True, validators=[LABEL_VALIDATOR])
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    notes = models.TextField(_("changelog notes"), blank=True)
    derived_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # The sha256 of what an importer read, so that importing the same archive again changes nothing.
    source_sha256 = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    published_at = models.DateTimeField(null=True, blank=True)
    kind = models.CharField(
        _("kind"), max_length=10, choices=VersionKind.choices, default=VersionKind.SEALED, editable=False
    )
    # Off by default: on a private submission the breakdowns tell which of a few answers are right
    # (leaderboard/feedback.py). Staff may open them for a version, e.g. a practice version.
    private_breakdowns = models.BooleanField(
        _("breakdowns for private submissions"),
        default=False,
        help_text=_(
            "Show owners of private submissions EA per database and per hardness, and outcome counts."
        ),
    )

    # The schema only by default: the rows are the authors' and the benchmark's own. Staff may give the
    # authors' full dumps instead, as the paper's first turn did; once published it may only widen
    # (`services.version_set_participants_see` says why).
    participants_see = models.CharField(
        _("participants see of each database"),
        max_length=20,
        choices=ParticipantsSee.choices,
        default=ParticipantsSee.SCHEMA,
    )

    objects = BenchmarkVersionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} {self.label}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # A version never changes kind: a sealed version's data must never turn public, and a practice
        # version's submissions were made with everything shown.
        update_fields = kwargs.get("update_fields")
        if self.pk is not None and (update_fields is None or "kind" in update_fields):
            stored = BenchmarkVersion.objects.filter(pk=self.pk).values_list("kind", flat=True).first()
            if stored is not None and stored != self.kind:
                raise ValueError(f"{self} is {stored}: a version never changes kind")
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("evaluation:version_detail", args=[self.label])

    @property
    def is_published(self) -> bool:
        return self.status == self.Status.PUBLISHED

    @property
    def is_practice(self) -> bool:
        return self.kind == VersionKind.PRACTICE

    def lineage(self) -> list[BenchmarkVersion]:
        """This version, then the version it derives from, and so on to the first."""
        versions = [self]
        while versions[-1].derived_from_id is not None:
            # derived_from_id is set, so derived_from is a version.
            versions.append(cast(BenchmarkVersion, versions[-1].derived_from))
        return versions

    def set_private_breakdowns(self, shown: bool) -> None:
        self.private_breakdowns = shown
        self.save(update_fields=["private_breakdowns"])

    @property
    def shows_data(self) -> bool:
        return self.participants_see == ParticipantsSee.SCHEMA_AND_DATA

    def publish(self) -> None:
        self.status = self.Status.PUBLISHED
        self.published_at = timezone.now()
        self.save(update_fields=["status", "published_at"])


class SchemaShown(models.TextChoices):
    SCORED = "scored", _("the scored database's schema")
    AUTHORS = "authors", _("the authors' schema-only dump, as published")


class Database(models.Model):
    version = models.ForeignKey(BenchmarkVersion, on_delete=models.CASCADE, related_name="databases")
    slug = models.CharField(max_length=50, validators=[SLUG_VALIDATOR])
    display_name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    source_dialect = models.CharField(max_length=10, choices=Dialect.choices, default=Dialect.MYSQL)
    original_dump = models.TextField(
        help_text="The dump as given; participants see it only when its version gives them the data."
    )
    # The scored database's schema in each form (evaluation/schemas.py): what participants see by default.
    schema_sql = models.TextField(help_text="The scored database's schema, in the original dialect.")
    sqlite_schema = models.TextField(help_text="The same schema as built in SQLite.")
    schema_shape = models.JSONField(default=list, blank=True, help_text="Its tables, columns, types, keys.")
    # The authors' schema-only dump as published, when the archive has one, in the same forms.
    authors_schema_sql = models.TextField(blank=True)
    authors_sqlite_schema = models.TextField(blank=True)
    authors_schema_shape = models.JSONField(default=list, blank=True)
    # How the authors' dump differs from the scored database, and which gold it leaves unanswerable.
    schema_differences = models.JSONField(default=list, blank=True)
    authors_schema_gaps = models.JSONField(
        default=dict, blank=True, help_text="{question id: names its gold uses that the authors' dump lacks}"
    )
    schema_shown = models.CharField(
        _("schema shown to participants"),
        max_length=10,
        choices=SchemaShown.choices,
        default=SchemaShown.SCORED,
    )
    # How its test suite was built (evaluation/scoring/suites.py): candidates, kept, seconds, seed.
    suite_report = models.JSONField(default=dict, blank=True)
    # The day the database and its questions joined the benchmark, which its questions read through it:
    # a database comes with its questions and none is added on its own. A version derived from another
    # keeps the dates of the databases it carries. The leaderboard compares it with a model's training
    # cutoff (leaderboard/contamination.py); it is no secret, and participants see it.
    added_on = models.DateField(_("added to the benchmark on"), default=timezone.localdate)
    # Built copies are content-addressed (the file name is its sha256), so versions share them and a
    # copy never changes under a running scorer.
    sqlite_sha256 = models.CharField(max_length=64)
    table_count = models.PositiveIntegerField(default=0)
    column_count = models.PositiveIntegerField(default=0)
    row_count = models.PositiveIntegerField(default=0)
    build_report = models.JSONField(default=dict, blank=True)
    # The scorer version whose converter built the copy and its neighbours and whose transpiler wrote the
    # questions' SQLite gold: an older one means they are rebuilt before its submissions are rescored
    # (evaluation/rebuilding.py). Blank for databases stored before this was recorded.
    built_by_scorer = models.CharField(max_length=20, blank=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.UniqueConstraint(fields=["version", "slug"], name="unique_database_slug_per_version")
        ]

    def __str__(self) -> str:
        return f"{self.slug} ({self.version})"

    def get_absolute_url(self) -> str:
        return reverse("evaluation:database_detail", args=[self.version.label, self.slug])

    @property
    def sqlite_path(self) -> Path:
        """Where this host's cache keeps the copy; it may not be there (`database_cache.local_copy` fetches it)."""
        return StoredDatabase.cache_path(self.sqlite_sha256)

    @property
    def shows_authors_schema(self) -> bool:
        return self.schema_shown == SchemaShown.AUTHORS and bool(self.authors_schema_sql)

    @property
    def shown_schema_sql(self) -> str:
        return self.authors_schema_sql if self.shows_authors_schema else self.schema_sql

    @property
    def shown_sqlite_schema(self) -> str:
        return self.authors_sqlite_schema if self.shows_authors_schema else self.sqlite_schema

    @property
    def shown_schema_shape(self) -> list[dict[str, Any]]:
        shape: list[dict[str, Any]] = (
            self.authors_schema_shape if self.shows_authors_schema else self.schema_shape
        )
        return shape

    @property
    def renames_authors_schema(self) -> bool:
        """Participants see the scored database's names where the authors' dump has others."""
        return not self.shows_authors_schema and bool(self.schema_differences)


class NeighbourDatabase(models.Model):
    """A database of the test suite: the schema of `database` with generated rows, never shown to anyone."""

    database = models.ForeignKey(Database, on_delete=models.CASCADE, related_name="neighbours")
    position = models.PositiveSmallIntegerField()
    seed = models.CharField(max_length=200)
    dump = models.TextField(help_text="The generated MySQL dump, for the reference engine.")
    # Content-addressed beside the main copies (Database.sqlite_sha256).
    sqlite_sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["database", "position"]
        constraints = [
            models.UniqueConstraint(fields=["database", "position"], name="unique_neighbour_position")
        ]

    def __str__(self) -> str:
        return f"{self.database.slug}~{self.position}"

    @property
    def key(self) -> str:
        """Its name among the scorer's database paths."""
        return f"{self.database.slug}~{self.position}"

    @property
    def sqlite_path(self) -> Path:
        """Where this host's cache keeps the copy; it may not be there (`database_cache.local_copy` fetches it)."""
        return StoredDatabase.cache_path(self.sqlite_sha256)


class QuestionQuerySet(models.QuerySet["Question"]):
    def scored(self) -> QuestionQuerySet:
        return self.filter(status=Question.Status.VALID)


class Question(models.Model):
    class Status(models.TextChoices):
        VALID = "valid", _("valid")
        INVALID = "invalid", _("invalid: gold does not run")
        EXCLUDED = "excluded", _("excluded by an admin")

    version = models.ForeignKey(BenchmarkVersion, on_delete=models.CASCADE, related_name="questions")
    database = models.ForeignKey(Database, on_delete=models.CASCADE, related_name="questions")
    public_id = models.CharField(max_length=80)
    position = models.PositiveIntegerField()
    text = models.TextField()
    hardness = models.CharField(max_length=10, choices=Hardness.choices)
    gold_encrypted = models.TextField(editable=False)
    # The gold transpiled to SQLite, cached (encrypted too) because transpiling costs more than running.
    gold_sqlite_encrypted = models.TextField(editable=False, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.VALID)
    status_reason = models.TextField(blank=True)
    problems = models.JSONField(default=list, blank=True, help_text="Validation findings: [{code, message}].")
    # Positions of the database's neighbours that make this question's test suite, and how they were chosen.
    suite = models.JSONField(default=list, blank=True)
    suite_report = models.JSONField(default=dict, blank=True)

    objects = QuestionQuerySet.as_manager()

    class Meta:
        ordering = ["database__slug", "position"]
        constraints = [
            models.UniqueConstraint(fields=["version", "public_id"], name="unique_question_id_per_version")
        ]

    def __str__(self) -> str:
        return self.public_id

    @property
    def is_scored(self) -> bool:
        return self.status == self.Status.VALID

    def decrypt_gold(self) -> str:
        """For scoring and validation code, and for the staff page of a question's errata, the one page that
        shows a gold query (to staff only): the gold must never reach another page, a log or a message."""
        return decrypt_gold(self.gold_encrypted)

    def decrypt_gold_sqlite(self) -> str:
        return decrypt_gold(self.gold_sqlite_encrypted)


class ValidationReport(models.Model):
    """What an import or an added database found: kept for admins, never shown to participants."""

    version = models.ForeignKey(BenchmarkVersion, on_delete=models.CASCADE, related_name="reports")
    created_at = models.DateTimeField(default=timezone.now)
    title = models.CharField(max_length=200)
    data = models.JSONField(default=dict)
    text = models.TextField()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title


class ErratumQuerySet(models.QuerySet["Erratum"]):
    def open(self) -> ErratumQuerySet:
        return self.filter(status=Erratum.Status.OPEN)

    def accepted(self) -> ErratumQuerySet:
        return self.filter(status=Erratum.Status.ACCEPTED)


class Erratum(models.Model):
    """A participant's report that a question of a published version is wrong, and staff's answer.

    The description is the reporter's and staff's only: it may quote the gold or the data. A declined
    erratum's `staff_reason` is for the reporter; an accepted one's `public_reason` is for everyone.
    """

    MAX_DESCRIPTION_CHARS = 2000
    MAX_REASON_CHARS = 500

    class Status(models.TextChoices):
        OPEN = "open", _("open")
        ACCEPTED = "accepted", _("accepted")
        DECLINED = "declined", _("declined")

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="errata")
    reporter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="errata")
    description = models.TextField(max_length=MAX_DESCRIPTION_CHARS)
    created_at = models.DateTimeField(default=timezone.now)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    staff_reason = models.TextField(blank=True, help_text="Why it was declined: shown to the reporter only.")
    public_reason = models.TextField(blank=True, help_text="Why it was accepted: shown publicly.")
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = ErratumQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.question.public_id} ({self.get_status_display()})"

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN

    @property
    def reason_for_reporter(self) -> str:
        """What the reporter may read of staff's answer: the public reason, or the reason it was declined."""
        if self.status == self.Status.ACCEPTED:
            return self.public_reason
        if self.status == self.Status.DECLINED:
            return self.staff_reason
        return ""

    def accept(self, *, by: User, public_reason: str) -> None:
        self._resolve(self.Status.ACCEPTED, by=by, public_reason=public_reason.strip())

    def decline(self, *, by: User, staff_reason: str) -> None:
        self._resolve(self.Status.DECLINED, by=by, staff_reason=staff_reason.strip())

    def _resolve(self, status: str, *, by: User, **reason: str) -> None:
        self.status = status
        self.resolved_at = timezone.now()
        self.resolved_by = by
        for field, text in reason.items():
            setattr(self, field, text)
        self.save(update_fields=["status", "resolved_at", "resolved_by", *reason])


class DatabaseImportQuerySet(models.QuerySet["DatabaseImport"]):
    def lost(self, *, now: datetime) -> DatabaseImportQuerySet:
        """Jobs still running past the time a worker gives one (TERMITE_IMPORT_TIMEOUT, and a minute): a
        worker stopped it, or its process ended, before it could say so."""
        limit = timedelta(seconds=settings.TERMITE_IMPORT_TIMEOUT + 60)
        return self.filter(state=DatabaseImport.State.RUNNING, started_at__lt=now - limit)

    def in_progress(self) -> DatabaseImportQuerySet:
        return self.filter(state__in=[DatabaseImport.State.QUEUED, DatabaseImport.State.RUNNING])


class DatabaseImport(models.Model):
    """Adding one database to a draft version, as a job on the queue (evaluation/imports.py): who asked, how
    far it got, step by step, and how it ended: the validation report, or the error that stopped it (then
    nothing of it was stored).

    A worker shares no disk with the web host that took the upload, so the inputs wait here until the job
    ends: the database's source as JSON, and its questions encrypted like stored gold, since they hold the
    gold queries. Both are emptied when it ends; the version holds what was stored.
    """

    class State(models.TextChoices):
        QUEUED = "queued", _("queued")
        RUNNING = "running", _("running")
        DONE = "done", _("done")
        FAILED = "failed", _("failed")

    version = models.ForeignKey(BenchmarkVersion, on_delete=models.CASCADE, related_name="database_imports")
    slug = models.CharField(_("database"), max_length=50)
    requested_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    state = models.CharField(_("state"), max_length=10, choices=State.choices, default=State.QUEUED)
    percent = models.PositiveSmallIntegerField(default=0)
    # Each step as it began: {"at": ISO time, "percent": 0 to 100, "message": what it does}.
    steps = models.JSONField(default=list, blank=True)
    source = models.JSONField(default=dict, blank=True)
    questions_encrypted = models.TextField(blank=True)
    report = models.ForeignKey(
        ValidationReport, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = DatabaseImportQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.slug} into {self.version_id}: {self.state}"

    def get_absolute_url(self) -> str:
        return reverse("staff:database_import", args=[self.pk])

    @property
    def is_finished(self) -> bool:
        return self.state in (self.State.DONE, self.State.FAILED)

    def claim(self) -> bool:
        """Take the job to run it; False when another run took it first or it ended already, so that a
        retried job or a second worker runs it once."""
        started = timezone.now()
        taken = DatabaseImport.objects.filter(pk=self.pk, state=self.State.QUEUED).update(
            state=self.State.RUNNING, started_at=started
        )
        if taken:
            self.state, self.started_at = self.State.RUNNING, started
        return bool(taken)

    def record_step(self, percent: int, message: str) -> None:
        self.percent = max(0, min(100, percent))
        self.steps = [
            *self.steps,
            {"at": timezone.now().isoformat(), "percent": self.percent, "message": message},
        ]
        self.save(update_fields=["percent", "steps"])

    def mark_done(self, report: ValidationReport) -> None:
        self.report = report
        self._end(self.State.DONE, percent=100)

    def mark_failed(self, error: str) -> None:
        self.error = error
        self._end(self.State.FAILED, percent=self.percent)

    def _end(self, state: str, *, percent: int) -> None:
        self.state, self.percent, self.finished_at = state, percent, timezone.now()
        self.source, self.questions_encrypted = {}, ""
        self.save(
            update_fields=[
                "state",
                "percent",
                "finished_at",
                "report",
                "error",
                "source",
                "questions_encrypted",
            ]
        )
