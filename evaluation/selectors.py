from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime
from typing import cast

from django.contrib.auth.models import AnonymousUser
from django.db.models import Count, Max, Min, Q
from django.http import Http404

from evaluation.models import BenchmarkVersion, Database, Erratum, Hardness, Question, SchemaShown
from termite_site.accounts.models import User


def visible_versions(*, user: User | AnonymousUser) -> list[BenchmarkVersion]:
    """Published versions for everyone; drafts too for staff; each with its counts of questions (all, and
    those it scores) and databases, and the days its first and latest databases joined the benchmark."""
    versions = BenchmarkVersion.objects.all() if user.is_staff else BenchmarkVersion.objects.published()
    return list(
        versions.annotate(
            question_count=Count("questions", distinct=True),
            scored_count=Count("questions", filter=Q(questions__status=Question.Status.VALID), distinct=True),
            database_count=Count("databases", distinct=True),
            first_added_on=Min("databases__added_on"),
            last_added_on=Max("databases__added_on"),
        )
    )


def version_for(*, user: User | AnonymousUser, label: str) -> BenchmarkVersion:
    version = BenchmarkVersion.objects.filter(label=label).first()
    if version is None or not (version.is_published or user.is_staff):
        raise Http404("No such benchmark version.")
    return version


def practice_gold(*, version: BenchmarkVersion) -> dict[str, str]:
    """Question id -> gold query (as written), for a practice version, whose participants may read it:
    its data is public. Empty for a sealed version, whose gold no participant ever sees: every page,
    bundle and API answer that shows gold to participants takes it from here."""
    if not version.is_practice:
        return {}
    return {question.public_id: question.decrypt_gold() for question in version.questions.all()}


def database_summaries(*, version: BenchmarkVersion) -> list[Database]:
    counts = {
        f"{level}_count": Count("questions", filter=Q(questions__hardness=level)) for level in Hardness.values
    }
    return list(
        version.databases.annotate(
            question_count=Count("questions"),
            scored_count=Count("questions", filter=Q(questions__status=Question.Status.VALID)),
            **counts,
        )
    )


def hardness_totals(*, version: BenchmarkVersion) -> dict[str, int]:
    rows = version.questions.scored().values("hardness").annotate(n=Count("id"))
    totals = dict.fromkeys(Hardness.values, 0)
    totals.update({row["hardness"]: row["n"] for row in rows})
    return totals


def question_ids_by_database(*, version: BenchmarkVersion) -> dict[str, list[str]]:
    """Every question id of the version, per database in benchmark order (excluded ones too: a prediction
    for an excluded question is accepted and simply not scored)."""
    ids: dict[str, list[str]] = {}
    for slug, public_id in version.questions.order_by("database__slug", "position").values_list(
        "database__slug", "public_id"
    ):
        ids.setdefault(slug, []).append(public_id)
    return ids


def question_dates(*, version: BenchmarkVersion) -> dict[str, date]:
    """The scored questions of a version, each with the day its database was added to the benchmark."""
    return dict(version.questions.scored().values_list("public_id", "database__added_on"))


def changelog_versions() -> list[BenchmarkVersion]:
    """Published versions, newest first, with their counts, the questions left out and why, and the
    databases shown with names other than the authors' schema-only dumps: never what is inside."""
    versions = list(
        BenchmarkVersion.objects.published()
        .select_related("derived_from")
        .annotate(
            database_count=Count("databases", distinct=True),
            question_count=Count("questions", distinct=True),
            scored_count=Count("questions", filter=Q(questions__status=Question.Status.VALID), distinct=True),
        )
        .order_by("-published_at")
    )
    renamed = renamed_schemas(versions=versions)
    exclusions = excluded_questions(versions=versions)
    for version in versions:
        version.renamed_schemas = renamed.get(version.pk, [])  # type: ignore[attr-defined]  # for the template
        version.exclusions = exclusions.get(version.pk, [])  # type: ignore[attr-defined]  # for the template
    return versions


def renamed_schemas(*, versions: list[BenchmarkVersion]) -> dict[int, list[str]]:
    """Per version, the databases whose schema shown (the scored database's) differs from the authors'
    schema-only dump, by slug."""
    found: dict[int, list[str]] = {}
    databases = (
        Database.objects.filter(version__in=versions, schema_shown=SchemaShown.SCORED)
        .exclude(schema_differences=[])
        .order_by("slug")
        .values_list("version_id", "slug")
    )
    for version_id, slug in databases:
        found.setdefault(version_id, []).append(slug)
    return found


def excluded_questions(*, versions: list[BenchmarkVersion]) -> dict[int, list[Question]]:
    """Per version, the questions staff excluded, with their public reason."""
    found: dict[int, list[Question]] = {}
    questions = Question.objects.filter(version__in=versions, status=Question.Status.EXCLUDED).only(
        "version_id", "public_id", "status_reason"
    )
    for question in questions.order_by("database__slug", "position"):
        found.setdefault(question.version_id, []).append(question)
    return found


@dataclass(frozen=True)
class PublicErratum:
    """What anyone may see of an erratum: never its description, which may quote the gold or the data."""

    version: str
    question_id: str
    status: str
    status_display: str
    public_reason: str
    reported_on: datetime
    resolved_on: datetime | None


def errata_public() -> list[PublicErratum]:
    """The errata of published versions, newest first, as the public errata page shows them (staff may
    report on a draft, which only staff see)."""
    published = Erratum.objects.filter(question__version__status=BenchmarkVersion.Status.PUBLISHED)
    errata = published.select_related("question__version").only(
        "status",
        "public_reason",
        "created_at",
        "resolved_at",
        "question__public_id",
        "question__version__label",
    )
    return [
        PublicErratum(
            version=erratum.question.version.label,
            question_id=erratum.question.public_id,
            status=erratum.status,
            status_display=erratum.get_status_display(),
            public_reason=erratum.public_reason if erratum.status == Erratum.Status.ACCEPTED else "",
            reported_on=erratum.created_at,
            resolved_on=erratum.resolved_at,
        )
        for erratum in errata
    ]


def errata_of(*, reporter: User) -> list[Erratum]:
    """The reporter's own errata, newest first."""
    return list(reporter.errata.select_related("question__version"))


def questions_with_open_errata() -> list[Question]:
    """Questions that have open errata, the longest waiting first, with how many and since when."""
    return list(
        Question.objects.filter(errata__status=Erratum.Status.OPEN)
        .select_related("version")
        .annotate(open_errata=Count("errata"), waiting_since=Min("errata__created_at"))
        .order_by("waiting_since")
    )


def drafts_descending_from(version: BenchmarkVersion) -> list[BenchmarkVersion]:
    """The draft versions derived from `version`, directly or through others, and `version` if a draft."""
    return [
        draft
        for draft in BenchmarkVersion.objects.filter(status=BenchmarkVersion.Status.DRAFT)
        if version.pk in {v.pk for v in draft.lineage()}
    ]


def errata_to_carry(*, source: BenchmarkVersion) -> list[Erratum]:
    """The accepted errata that a new draft derived from `source` must apply, oldest first.

    An erratum accepted on `source` or on a version `source` derives from reaches the drafts descending
    from that version once: those existing when it is accepted (evaluation/errata.py), and those created
    later from a version that was already published then. A version that was a draft when the erratum
    was accepted, or was created after, got it already; what it says of the question now is staff's later
    word (brought back after a fix, say), and its drafts copy that.
    """
    lineage = source.lineage()
    position = {version.pk: n for n, version in enumerate(lineage)}
    errata = Erratum.objects.accepted().filter(question__version__in=lineage).select_related("question")
    return [
        erratum
        for erratum in errata.order_by("resolved_at", "pk")
        if all(
            # An accepted erratum is resolved, so it has its time.
            version.published_at is not None and version.published_at <= cast(datetime, erratum.resolved_at)
            for version in lineage[: position[erratum.question.version_id] + 1]
        )
    ]


@dataclass(frozen=True)
class InformationBound:
    """The most one submission's scores can tell of the hidden data, in bits, through each thing a page
    shows (leaderboard/feedback.py decides which). A count of right answers out of n takes one of n + 1
    values: log2(n + 1) bits. EA, EA-strict and TS-EA together are counts k >= j and k >= t (a strict or
    test-suite right answer is right): sum over k of (k + 1)^2 triples, log2((n + 1)(n + 2)(2n + 3) / 6).
    Groups add up. The outcome counts split n questions into `outcome_kinds` kinds."""

    questions: int
    overall_ea: float
    overall: float  # EA, EA-strict and TS-EA
    per_database: float
    per_hardness: float
    outcome_counts: float


def information_bound(*, version: BenchmarkVersion, outcome_kinds: int) -> InformationBound:
    scored = list(version.questions.scored().values_list("database__slug", "hardness"))
    n = len(scored)
    return InformationBound(
        questions=n,
        overall_ea=math.log2(n + 1),
        overall=_scores_bits(n),
        per_database=sum(map(_scores_bits, Counter(db for db, _level in scored).values())),
        per_hardness=sum(map(_scores_bits, Counter(level for _db, level in scored).values())),
        outcome_counts=math.log2(math.comb(n + outcome_kinds - 1, outcome_kinds - 1)),
    )


def _scores_bits(n: int) -> float:
    return math.log2((n + 1) * (n + 2) * (2 * n + 3) / 6)
