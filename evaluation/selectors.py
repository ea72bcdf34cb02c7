from __future__ import annotations

from django.db.models import Count, Q
from django.http import Http404

from evaluation.models import BenchmarkVersion, Database, Hardness, Question


def visible_versions(*, user) -> list[BenchmarkVersion]:
    """Published versions for everyone; drafts too for staff."""
    versions = BenchmarkVersion.objects.all() if user.is_staff else BenchmarkVersion.objects.published()
    return list(
        versions.annotate(question_count=Count("questions"), database_count=Count("databases", distinct=True))
    )


def version_for(*, user, label: str) -> BenchmarkVersion:
    version = BenchmarkVersion.objects.filter(label=label).first()
    if version is None or not (version.is_published or user.is_staff):
        raise Http404("No such benchmark version.")
    return version


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


def changelog_versions() -> list[BenchmarkVersion]:
    """Published versions, newest first, with their counts: what changed, never what is inside."""
    return list(
        BenchmarkVersion.objects.published()
        .select_related("derived_from")
        .annotate(
            database_count=Count("databases", distinct=True),
            question_count=Count("questions", distinct=True),
            scored_count=Count("questions", filter=Q(questions__status=Question.Status.VALID), distinct=True),
        )
        .order_by("-published_at")
    )
