"""Writes to the benchmark store: importing, adding databases, drafting and publishing versions.

Every service validates and builds outside the database transaction, then stores in one atomic block,
so a failure at any point leaves the store exactly as it was (built files included).
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, TypedDict

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evaluation import database_cache
from evaluation.distillation import ScorableGold, distil_suite, suite_seed_of
from evaluation.gold import encrypt_gold, rotate_gold
from evaluation.models import (
    BenchmarkVersion,
    Database,
    Erratum,
    NeighbourDatabase,
    ParticipantsSee,
    Question,
    SchemaShown,
    ValidationReport,
    VersionKind,
)
from evaluation.prepared import (
    HIDDEN_SCHEMA,
    Finding,
    PreparedBenchmark,
    report_text,
    schema_report,
    schema_report_lines,
    suite_report,
    suite_report_lines,
)
from evaluation.schemas import quoted_golds
from evaluation.scoring import schema_shape
from evaluation.scoring.dialect import read_schema
from evaluation.scoring.score import SCORER_VERSION
from evaluation.scoring.suites import BuiltSuite
from evaluation.selectors import errata_to_carry
from evaluation.signals import version_published
from evaluation.sources import (
    BenchmarkSource,
    DatabaseSource,
    QuestionSource,
    SourceError,
    demo_database_sources,
    read_termite_archive,
)
from evaluation.validation import Progress, no_progress, prepare_benchmark


class VersionStateError(ValueError):
    """The version cannot take this change (published versions are frozen)."""


@dataclass(frozen=True)
class ImportResult:
    version: BenchmarkVersion
    created: bool
    report: ValidationReport | None


class _SuiteSettings(TypedDict):
    suite_candidates: int
    suite_seed: str


def _suite_settings() -> _SuiteSettings:
    return {"suite_candidates": settings.TERMITE_SUITE_CANDIDATES, "suite_seed": settings.TERMITE_SUITE_SEED}


def benchmark_import(
    *,
    archive: Path,
    password: str,
    label: str,
    name: str = "Termite",
    publish: bool = True,
    reference_url: str | None = None,
    added_on: date | None = None,
    participants_see: str = ParticipantsSee.SCHEMA,
) -> ImportResult:
    """Import the Termite archive as version `label`; importing the same archive again changes nothing.

    Its databases count as added to the benchmark on `added_on`; by default on the day the authors
    packed the archive (its newest entry), or today if the archive does not say. Its participants see
    what `participants_see` says of each database (`version_set_participants_see`).
    """
    _check_participants_see(participants_see)
    source = read_termite_archive(archive, password)
    existing = BenchmarkVersion.objects.filter(label=label).first()
    if existing is not None:
        if existing.source_sha256 == source.sha256:
            return ImportResult(version=existing, created=False, report=existing.reports.first())
        raise SourceError(
            f"version {label!r} already exists with other content; import under another --version"
        )
    return _create_version(
        source=source,
        label=label,
        name=name,
        publish=publish,
        reference_url=reference_url,
        title=f"Import of {archive.name}",
        added_on=added_on or source.packed_on or timezone.localdate(),
        participants_see=participants_see,
    )


def _create_version(
    *,
    source: BenchmarkSource,
    label: str,
    name: str,
    publish: bool,
    reference_url: str | None,
    title: str,
    added_on: date,
    participants_see: str,
) -> ImportResult:
    with tempfile.TemporaryDirectory(prefix="termite-build-") as workdir:
        prepared = prepare_benchmark(
            source, workdir=Path(workdir), reference_url=reference_url, **_suite_settings()
        )
        if participants_see == ParticipantsSee.SCHEMA_AND_DATA:
            _refuse_dumps_quoting_gold(_prepared_dumps(prepared), error=SourceError)
        with database_cache.installed_copies(_built_files(prepared)) as files, transaction.atomic():
            files.store()
            version = BenchmarkVersion.objects.create(
                name=name, label=label, source_sha256=source.sha256, participants_see=participants_see
            )
            _store(version, prepared, added_on=added_on)
            _refuse_crossing_kinds(version, error=SourceError)
            report = _store_report(version, prepared, title=title)
            if publish:
                version.publish()
    return ImportResult(version=version, created=True, report=report)


def database_check_addable(*, version: BenchmarkVersion, slug: str) -> None:
    """Refuse what `database_add` refuses before it builds anything: a published version, a name taken."""
    if version.is_published:
        raise VersionStateError(f"{version} is published; add databases to a new draft version")
    if version.databases.filter(slug=slug).exists():
        raise SourceError(f"{version} already has a database {slug!r}")


def database_add(
    *,
    version: BenchmarkVersion,
    database: DatabaseSource,
    questions: list[QuestionSource],
    reference_url: str | None = None,
    added_on: date | None = None,
    progress: Progress = no_progress,
) -> ValidationReport:
    """Add one database and its questions to a draft version, as added to the benchmark on `added_on`
    (default: today), telling `progress` each step. In the web site it runs as a job
    (evaluation/imports.py)."""
    database_check_addable(version=version, slug=database.slug)
    source = BenchmarkSource(databases=[database], questions=questions)
    with tempfile.TemporaryDirectory(prefix="termite-build-") as workdir:
        prepared = prepare_benchmark(
            source, workdir=Path(workdir), reference_url=reference_url, progress=progress, **_suite_settings()
        )
        # A practice version's gold is public: a dump may quote it.
        if version.shows_data and not version.is_practice:
            _refuse_dumps_quoting_gold(_prepared_dumps(prepared), error=SourceError)
        progress(95, f"storing {database.slug}, its questions and its test suite")
        with database_cache.installed_copies(_built_files(prepared)) as files, transaction.atomic():
            files.store()
            _store(version, prepared, added_on=added_on or timezone.localdate())
            _refuse_crossing_kinds(version, error=SourceError)
            return _store_report(version, prepared, title=f"Database {database.slug} added")


def version_create_draft(
    *,
    label: str,
    name: str,
    notes: str = "",
    derived_from: BenchmarkVersion | None = None,
    kind: str | None = None,
) -> BenchmarkVersion:
    """A new draft, empty or holding a copy of another version's databases and questions. A copied
    database keeps the day it was added to the benchmark, and the draft what participants see of each
    database.

    Its `kind` is the version it copies' (sealed when it copies none) unless said, and never changes. A
    practice draft gives participants the data. Copying a sealed version into a practice draft is refused,
    as any practice version sharing a database or a question with a sealed one is
    (`_refuse_crossing_kinds`).

    A copy leaves out of scoring the questions that accepted errata report (`errata_to_carry` says which),
    each with its erratum's public reason: an accepted erratum flows into the next version.
    """
    if BenchmarkVersion.objects.filter(label=label).exists():
        raise VersionStateError(f"version {label!r} already exists")
    kind = kind or (derived_from.kind if derived_from else VersionKind.SEALED)
    if kind not in VersionKind.values:
        raise VersionStateError(f"a version is {' or '.join(VersionKind.values)}, not {kind!r}")
    participants_see: str = ParticipantsSee.SCHEMA_AND_DATA
    if kind == VersionKind.SEALED:
        participants_see = derived_from.participants_see if derived_from else ParticipantsSee.SCHEMA
    with transaction.atomic():
        draft = BenchmarkVersion.objects.create(
            label=label,
            name=name,
            notes=notes,
            derived_from=derived_from,
            kind=kind,
            participants_see=participants_see,
        )
        if derived_from is not None:
            _copy_content(derived_from, draft)
            _refuse_crossing_kinds(draft, error=VersionStateError)
            errata_apply(version=draft, errata=errata_to_carry(source=derived_from))
    return draft


def _copy_content(source: BenchmarkVersion, draft: BenchmarkVersion) -> None:
    for database in source.databases.all():
        questions = list(database.questions.all())
        neighbours = list(database.neighbours.all())
        database.pk = None
        database.version = draft
        database.save()
        for neighbour in neighbours:
            neighbour.pk = None
            neighbour.database = database
        NeighbourDatabase.objects.bulk_create(neighbours)
        for question in questions:
            question.pk = None
            question.version = draft
            question.database = database
        Question.objects.bulk_create(questions)


def version_publish(*, version: BenchmarkVersion, carry_submissions: bool = False) -> BenchmarkVersion:
    """Publish a draft; with `carry_submissions`, the submissions of the version it derives from are
    carried over and scored on it (the leaderboard app does that, on `version_published`)."""
    if version.is_published:
        raise VersionStateError(f"{version} is already published")
    if carry_submissions and version.derived_from is None:
        raise VersionStateError(f"{version} derives from no version: there are no submissions to carry over")
    if not version.questions.scored().exists():
        raise VersionStateError(f"{version} has no scorable question")
    with transaction.atomic():
        _refuse_crossing_kinds(version, error=VersionStateError)
        version.publish()
        version_published.send(sender=BenchmarkVersion, version=version, carry_submissions=carry_submissions)
    return version


def version_set_participants_see(*, version: BenchmarkVersion, participants_see: str) -> BenchmarkVersion:
    """Give participants of `version` each database's schema only, or its schema and data (the full dump).

    A draft takes either. A published version may only widen, from the schema to the data: its
    participants may have downloaded the bundle already, so narrowing would take nothing back from them
    and only leave the version's page saying less than they were given. The data is refused while a
    dump quotes a gold query of its database (the error names the questions, never their gold).
    """
    _check_participants_see(participants_see)
    with transaction.atomic():
        locked = BenchmarkVersion.objects.select_for_update().get(pk=version.pk)
        if participants_see != locked.participants_see:
            if locked.is_practice:
                raise VersionStateError(f"{version} is a practice version: its participants see everything")
            if locked.is_published and participants_see == ParticipantsSee.SCHEMA:
                raise VersionStateError(
                    f"{version} is published and its participants may have downloaded the data already: "
                    "it cannot be taken back, so a published version keeps giving it"
                )
            if participants_see == ParticipantsSee.SCHEMA_AND_DATA:
                _refuse_dumps_quoting_gold(_stored_dumps(locked), error=VersionStateError)
            locked.participants_see = participants_see
            locked.save(update_fields=["participants_see"])
    version.participants_see = locked.participants_see
    return version


def _refuse_crossing_kinds(version: BenchmarkVersion, *, error: type[Exception]) -> None:
    """Refuse a version that shares a database (by its built copy's content hash) or a question (by its
    text, whatever its case and spacing) with a version of the other kind: what a practice version shows
    everyone must never be what a sealed version hides. The message names what is shared and where."""
    other = VersionKind.SEALED if version.is_practice else VersionKind.PRACTICE
    own_databases = dict(version.databases.values_list("sqlite_sha256", "slug"))
    shared = [
        f"database {own_databases[sha256]} (as {slug} of {label})"
        for sha256, slug, label in Database.objects.filter(
            version__kind=other, sqlite_sha256__in=own_databases
        ).values_list("sqlite_sha256", "slug", "version__label")
    ]
    own_questions = {
        _question_key(text): public_id
        for public_id, text in version.questions.values_list("public_id", "text")
    }
    shared += [
        f"question {own_questions[_question_key(text)]} (as {public_id} of {label})"
        for public_id, text, label in Question.objects.filter(version__kind=other).values_list(
            "public_id", "text", "version__label"
        )
        if _question_key(text) in own_questions
    ]
    if shared:
        raise error(
            f"{version} is a {version.get_kind_display()} version and cannot share with a "
            f"{VersionKind(other).label} one: {'; '.join(sorted(shared))}"
        )


def _question_key(text: str) -> str:
    return " ".join(text.casefold().split())


def _check_participants_see(participants_see: str) -> None:
    if participants_see not in ParticipantsSee.values:
        raise VersionStateError(
            f"participants see {participants_see!r}: choose one of {', '.join(ParticipantsSee.values)}"
        )


# A database's dump, and its questions' gold as (public id, gold query), the gold in every form kept.
_DumpAndGold = tuple[str, str, list[tuple[str, str]]]


def _prepared_dumps(prepared: PreparedBenchmark) -> list[_DumpAndGold]:
    golds: dict[str, list[tuple[str, str]]] = {}
    for q in prepared.questions:
        golds.setdefault(q.source.db_slug, []).extend(
            (q.source.public_id, gold) for gold in (q.source.gold_sql, q.gold_sqlite)
        )
    return [(db.source.slug, db.source.dump, golds.get(db.source.slug, [])) for db in prepared.databases]


def _stored_dumps(version: BenchmarkVersion) -> list[_DumpAndGold]:
    return [
        (
            database.slug,
            database.original_dump,
            [
                (question.public_id, gold)
                for question in database.questions.all()
                for gold in _gold_forms(question)
            ],
        )
        for database in version.databases.order_by("slug")
    ]


def _gold_forms(question: Question) -> list[str]:
    forms = [question.decrypt_gold()]
    if question.gold_sqlite_encrypted:  # empty where the gold does not transpile
        forms.append(question.decrypt_gold_sqlite())
    return forms


def _refuse_dumps_quoting_gold(dumps: list[_DumpAndGold], *, error: type[Exception]) -> None:
    quoting = [(slug, quoted_golds(dump, golds)) for slug, dump, golds in dumps]
    found = [f"{slug} quotes the gold of {', '.join(ids)}" for slug, ids in quoting if ids]
    if found:
        raise error(
            "participants cannot be given the databases' data: the dump of " + "; the dump of ".join(found)
        )


def question_set_excluded(*, question: Question, excluded: bool, reason: str = "") -> Question:
    """Exclude a question from scoring (or bring it back) in a draft version."""
    if question.version.is_published:
        raise VersionStateError("questions of a published version are frozen; make a new draft version")
    if question.status == Question.Status.INVALID:
        raise VersionStateError(
            f"{question.public_id} is invalid (its gold does not run) and cannot be scored"
        )
    question.status = Question.Status.EXCLUDED if excluded else Question.Status.VALID
    question.status_reason = reason.strip() if excluded else ""
    question.save(update_fields=["status", "status_reason"])
    return question


def errata_apply(*, version: BenchmarkVersion, errata: list[Erratum]) -> list[Question]:
    """Exclude from draft `version` the question each accepted erratum reports (the same public id), with
    the erratum's public reason; returns those excluded. A question already out of scoring (excluded for
    another reason, or invalid) is left as it is: it needs no fix."""
    excluded = []
    for erratum in errata:
        question = version.questions.filter(public_id=erratum.question.public_id).first()
        if question is not None and question.is_scored:
            excluded.append(
                question_set_excluded(question=question, excluded=True, reason=erratum.public_reason)
            )
    return excluded


def database_schema_choose(*, database: Database, shown: str) -> ValidationReport:
    """Show participants the scored database's schema or the authors' dump, in a draft version.

    The questions whose gold uses names the schema shown lacks are marked (`gold_uses_hidden_schema`),
    for staff to exclude with a public reason; a validation report records the choice.
    """
    if database.version.is_published:
        raise VersionStateError("a published version's schemas are frozen; make a new draft version")
    if shown == SchemaShown.AUTHORS and not database.authors_schema_sql:
        raise VersionStateError(f"{database.slug} has no schema-only dump of its authors to show")
    gaps = database.authors_schema_gaps if shown == SchemaShown.AUTHORS else {}
    with transaction.atomic():
        database.schema_shown = shown
        database.save(update_fields=["schema_shown"])
        for question in database.questions.select_for_update():
            problems = [p for p in question.problems if p["code"] != HIDDEN_SCHEMA]
            if question.public_id in gaps:
                lacking = ", ".join(gaps[question.public_id])
                problems.append(
                    Finding(HIDDEN_SCHEMA, f"uses what the participants' schema lacks: {lacking}").as_dict()
                )
            if problems != question.problems:
                question.problems = problems
                question.save(update_fields=["problems"])
        data: dict[str, Any] = {
            "databases": [
                {
                    "slug": database.slug,
                    "schema": schema_report(
                        shown=shown,
                        has_authors_dump=bool(database.authors_schema_sql),
                        differences=database.schema_differences,
                        gaps=database.authors_schema_gaps,
                    ),
                }
            ]
        }
        return ValidationReport.objects.create(
            version=database.version,
            title=f"Schema shown for {database.slug}: {database.get_schema_shown_display()}",
            data=data,
            text="\n".join(schema_report_lines(data["databases"][0]["schema"])),
        )


def gold_key_rotate() -> int:
    """Re-encrypt all stored gold with the first key of TERMITE_GOLD_KEY; returns how many questions."""
    count = 0
    with transaction.atomic():
        for question in Question.objects.select_for_update().only(
            "pk", "gold_encrypted", "gold_sqlite_encrypted"
        ):
            question.gold_encrypted = rotate_gold(question.gold_encrypted)
            if question.gold_sqlite_encrypted:
                question.gold_sqlite_encrypted = rotate_gold(question.gold_sqlite_encrypted)
            question.save(update_fields=["gold_encrypted", "gold_sqlite_encrypted"])
            count += 1
    return count


def _built_files(prepared: PreparedBenchmark) -> list[tuple[Path, str]]:
    """Every SQLite file an import built: the databases' copies and their suites' neighbours."""
    files = [(db.sqlite_file, db.sqlite_sha256) for db in prepared.databases]
    files += [(n.path, n.sha256) for db in prepared.databases if db.suite for n in db.suite.neighbours]
    return files


def _store(version: BenchmarkVersion, prepared: PreparedBenchmark, *, added_on: date) -> None:
    databases = {}
    for db in prepared.databases:
        databases[db.source.slug] = Database.objects.create(
            version=version,
            added_on=added_on,
            slug=db.source.slug,
            display_name=db.source.display_name,
            description=db.source.description,
            source_dialect=db.source.dialect,
            original_dump=db.source.dump,
            schema_sql=db.scored_schema.text,
            sqlite_schema=db.scored_schema.sqlite,
            schema_shape=schema_shape.to_json(db.scored_schema.shape),
            authors_schema_sql=db.authors_schema.text if db.authors_schema else "",
            authors_sqlite_schema=db.authors_schema.sqlite if db.authors_schema else "",
            authors_schema_shape=schema_shape.to_json(db.authors_schema.shape) if db.authors_schema else [],
            schema_differences=db.schema_differences,
            authors_schema_gaps=db.authors_schema_gaps,
            sqlite_sha256=db.sqlite_sha256,
            table_count=len(db.tables),
            column_count=db.column_count,
            row_count=db.row_count,
            build_report={"tables": db.tables, "findings": [f.as_dict() for f in db.findings]},
            built_by_scorer=SCORER_VERSION,
            suite_report=_without_questions(suite_report(db.suite)),
        )
        if db.suite is not None:
            _store_neighbours(databases[db.source.slug], db.suite)
    suites = {
        question_id: entry
        for db in prepared.databases
        for question_id, entry in (suite_report(db.suite) or {"questions": {}})["questions"].items()
    }
    Question.objects.bulk_create(
        Question(
            version=version,
            database=databases[q.source.db_slug],
            public_id=q.source.public_id,
            position=q.source.position,
            text=q.source.text,
            hardness=q.hardness,
            gold_encrypted=encrypt_gold(q.source.gold_sql),
            gold_sqlite_encrypted=encrypt_gold(q.gold_sqlite) if q.gold_sqlite else "",
            status=Question.Status.VALID if q.is_valid else Question.Status.INVALID,
            status_reason="; ".join(f.message for f in q.findings if not q.is_valid),
            problems=[f.as_dict() for f in q.findings],
            suite=suites.get(q.source.public_id, {}).get("suite", []),
            suite_report=suites.get(q.source.public_id, {}),
        )
        for q in prepared.questions
    )


def _store_neighbours(database: Database, suite: BuiltSuite) -> None:
    NeighbourDatabase.objects.bulk_create(
        NeighbourDatabase(
            database=database,
            position=position,
            seed=neighbour.seed,
            dump=neighbour.dump,
            sqlite_sha256=neighbour.sha256,
        )
        for position, neighbour in enumerate(suite.neighbours)
    )


def version_build_suites(*, version: BenchmarkVersion, reference_url: str | None = None) -> ValidationReport:
    """Build the test suites of a version's databases that have none (imported before suites existed, or
    with TERMITE_SUITE_CANDIDATES=0), as an import now would. EA does not change; TS-EA of the version's
    submissions uses the suites once they are rescored."""
    lines = []
    with tempfile.TemporaryDirectory(prefix="termite-suites-") as workdir:
        built = {}
        for database in version.databases.filter(neighbours__isnull=True).order_by("slug"):
            suite = _distil_stored(database, Path(workdir), reference_url)
            if suite is not None:
                built[database.pk] = (database, suite)
            lines += [f"{database.slug}:", *(f"  {line}" for line in suite_report_lines(suite_report(suite)))]
        files = [(n.path, n.sha256) for _, suite in built.values() for n in suite.neighbours]
        with database_cache.installed_copies(files) as installed, transaction.atomic():
            installed.store()
            for database, suite in built.values():
                _store_neighbours(database, suite)
                report = suite_report(suite) or {"questions": {}}
                database.suite_report = _without_questions(report)
                database.save(update_fields=["suite_report"])
                for question in database.questions.filter(public_id__in=report["questions"]):
                    question.suite_report = report["questions"][question.public_id]
                    question.suite = question.suite_report["suite"]
                    question.save(update_fields=["suite", "suite_report"])
            return ValidationReport.objects.create(
                version=version,
                title=f"Test suites built for {version}",
                data={
                    "suites": {
                        db.slug: _without_questions(suite_report(suite)) for db, suite in built.values()
                    }
                },
                text="\n".join(lines) or "every database has its test suite already",
            )


def _distil_stored(database: Database, workdir: Path, reference_url: str | None) -> BuiltSuite | None:
    path = database_cache.local_copy(database.sqlite_sha256, name=database.slug)
    with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        column_types = read_schema(conn)
    golds = [
        ScorableGold(question.public_id, question.decrypt_gold(), question.decrypt_gold_sqlite())
        for question in database.questions.scored().order_by("position")
    ]
    return distil_suite(
        slug=database.slug,
        dump=database.original_dump,
        dialect=database.source_dialect,
        sqlite_file=path,
        column_types=column_types,
        golds=golds,
        workdir=workdir,
        candidates=settings.TERMITE_SUITE_CANDIDATES,
        seed=suite_seed_of(settings.TERMITE_SUITE_SEED, database.sqlite_sha256),
        reference_url=reference_url,
    )


def _without_questions(report: dict[str, Any] | None) -> dict[str, Any]:
    """A database's suite report; each question keeps its own part."""
    return {key: value for key, value in (report or {}).items() if key != "questions"}


def _store_report(version: BenchmarkVersion, prepared: PreparedBenchmark, *, title: str) -> ValidationReport:
    data = prepared.report()
    return ValidationReport.objects.create(
        version=version, title=title, data=data, text=report_text(data), created_at=timezone.now()
    )


DEMO_LABEL = "demo-1.0"
# The demo's databases joined its benchmark on these (made-up) days, a year apart, so that the demo
# leaderboard can show EA on the questions added after a model's training cutoff.
DEMO_ADDED_ON = {"biblioteca": date(2024, 3, 1), "ciclismo": date(2025, 3, 1)}


def demo_benchmark_load(
    *,
    label: str = DEMO_LABEL,
    reference_url: str | None = None,
    kind: str = VersionKind.PRACTICE,
    participants_see: str = ParticipantsSee.SCHEMA_AND_DATA,
) -> BenchmarkVersion | None:
    """Load the project's own small demo benchmark as a published version; None if it is already there.

    It is a practice version, since its data is the project's own and public: participants see
    everything. As a sealed version (the portal's real case, which the test suite exercises on it), its
    participants see what `participants_see` says.

    It goes through the same path as an admin's upload, so the demo also exercises the real importer.
    """
    if BenchmarkVersion.objects.filter(label=label).exists():
        return None
    with transaction.atomic():
        version = version_create_draft(
            label=label,
            name="Termite demo",
            notes="A small demo benchmark written for this portal.",
            kind=kind,
        )
        if kind == VersionKind.SEALED:
            version = version_set_participants_see(version=version, participants_see=participants_see)
        for database, questions in demo_database_sources():
            database_add(
                version=version,
                database=database,
                questions=questions,
                reference_url=reference_url,
                added_on=DEMO_ADDED_ON.get(database.slug),
            )
        version_publish(version=version)
    return version
