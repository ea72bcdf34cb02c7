"""Rebuilding a version's derived data with the current scorer, so that a rescoring judges by it.

A database's SQLite copy, its neighbours' copies and its questions' SQLite gold are derived: built from the
stored dump and gold by the converter and transpiler of the scorer that imported them. When a newer scorer
builds them otherwise (say, unsigned columns declared as such, or the collations a column names), scoring
with it on the old copies would be neither the old score nor the new one. So before a version's
submissions are rescored, its databases built by an older scorer are rebuilt from what is stored, as an
import now would build them.

A rebuild changes how the benchmark is run, never what it asks: each scored question's gold must return
the same rows on the rebuilt copy (and on each neighbour of its test suite) as on the old one, and stay
scorable. If any does not, nothing is written and `RebuildRefused` names the questions and why; the
version's submissions then keep their scores until staff look into it. A rebuild tells the leaderboard
(`version_rebuilt`), which rescores every scored submission of the version once it commits. Question statuses and test suites
are the version's content and are kept; the hardness levels, which the scorer computes, are brought up
to date and the report says which changed. Messages and reports name question ids, never gold SQL.
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from evaluation import database_cache
from evaluation.gold import encrypt_gold
from evaluation.models import BenchmarkVersion, Database, NeighbourDatabase, Question, ValidationReport
from evaluation.prepared import PreparedDatabase
from evaluation.scoring import mysql_dump, schema_shape
from evaluation.scoring.compare import order_key_query, results_match, results_match_strict
from evaluation.scoring.sandbox import Sandbox
from evaluation.scoring.score import SCORER_VERSION
from evaluation.signals import version_rebuilt
from evaluation.sources import DatabaseSource, QuestionSource, SourceError
from evaluation.validation import VALIDATION_LIMITS, build_database, transpile_question


class RebuildRefused(ValueError):
    """The current scorer would change what a version's gold returns: nothing was rebuilt."""


def databases_to_rebuild(version: BenchmarkVersion) -> list[Database]:
    """The version's databases whose derived data an older scorer built."""
    return list(version.databases.exclude(built_by_scorer=SCORER_VERSION).order_by("slug"))


@dataclass
class _Rebuilt:
    database: Database
    copy: PreparedDatabase
    neighbours: list[tuple[NeighbourDatabase, Path, str]]  # (neighbour, rebuilt file, its sha256)
    golds: dict[int, str]  # question pk -> its gold transpiled by the current scorer ("" if it no longer is)
    hardness: dict[int, str]  # question pk -> its level by the current scorer
    problems: list[str] = field(default_factory=list)
    rows_checked: int = 0


def version_rebuild(*, version: BenchmarkVersion) -> ValidationReport | None:
    """Rebuild what an older scorer built for `version` (see the module's docstring) and record it in a
    validation report; None when the current scorer built all of it. Raises `RebuildRefused`."""
    outdated = databases_to_rebuild(version)
    if not outdated:
        return None
    with (
        tempfile.TemporaryDirectory(prefix="termite-rebuild-") as workdir,
        Sandbox(VALIDATION_LIMITS) as sandbox,
    ):
        rebuilt = [_rebuild(database, Path(workdir), sandbox) for database in outdated]
        problems = [problem for one in rebuilt for problem in one.problems]
        if problems:
            raise RebuildRefused(
                f"{version}: scorer {SCORER_VERSION} would change what its gold returns, so nothing was "
                "rebuilt and its submissions keep their scores:\n" + "\n".join(f"  {p}" for p in problems)
            )
        files = [(one.copy.sqlite_file, one.copy.sqlite_sha256) for one in rebuilt]
        files += [(path, sha256) for one in rebuilt for _, path, sha256 in one.neighbours]
        with database_cache.installed_copies(files) as installed, transaction.atomic():
            installed.store()
            summary = {one.database.slug: _save(one) for one in rebuilt}
            version_rebuilt.send(sender=BenchmarkVersion, version=version)
            return ValidationReport.objects.create(
                version=version,
                title=f"Derived data rebuilt by scorer {SCORER_VERSION}",
                data={"scorer_version": SCORER_VERSION, "databases": summary},
                text="\n".join(_report_lines(summary)),
                created_at=timezone.now(),
            )


def _rebuild(database: Database, workdir: Path, sandbox: Sandbox) -> _Rebuilt:
    source = DatabaseSource(
        slug=database.slug,
        display_name=database.display_name,
        dump=database.original_dump,
        dialect=database.source_dialect,
        schema_dump=database.authors_schema_sql or None,
        description=database.description,
    )
    try:
        copy = build_database(source, workdir)
    except SourceError as error:
        raise RebuildRefused(f"{database.version}: {error}") from None
    questions = list(database.questions.order_by("position"))
    transpiled = {
        question.pk: transpile_question(
            QuestionSource(
                question.public_id, database.slug, question.position, question.text, question.decrypt_gold()
            ),
            copy,
        )
        for question in questions
    }
    rebuilt = _Rebuilt(
        database=database,
        copy=copy,
        neighbours=[
            _rebuild_neighbour(n, database.source_dialect, workdir) for n in database.neighbours.all()
        ],
        golds={pk: prepared.gold_sqlite for pk, prepared in transpiled.items()},
        hardness={pk: prepared.hardness for pk, prepared in transpiled.items()},
    )
    neighbours = {n.position: (n, path) for n, path, _ in rebuilt.neighbours}
    for question in questions:
        if not question.is_scored:
            continue
        prepared = transpiled[question.pk]
        if not prepared.is_valid:
            findings = "; ".join(finding.message for finding in prepared.findings)
            rebuilt.problems.append(
                f"{question.public_id}: the current scorer would not score it ({findings})"
            )
            continue
        pairs = [(database.sqlite_sha256, copy.sqlite_file, database.slug)]
        pairs += [
            (neighbours[position][0].sqlite_sha256, neighbours[position][1], neighbours[position][0].key)
            for position in question.suite
            if position in neighbours
        ]
        for old_sha256, new_path, name in pairs:
            old_path = database_cache.local_copy(old_sha256, name=name)
            problem = _compare(sandbox, question, prepared.gold_sqlite, old_path, new_path)
            rebuilt.rows_checked += 1
            if problem:
                rebuilt.problems.append(f"{question.public_id} on {name}: {problem}")
                break
    return rebuilt


def _rebuild_neighbour(
    neighbour: NeighbourDatabase, dialect: str, workdir: Path
) -> tuple[NeighbourDatabase, Path, str]:
    path = workdir / f"{neighbour.key}.sqlite3"
    try:
        mysql_dump.build_sqlite(neighbour.dump, path, source=dialect)
    except mysql_dump.DumpError as error:
        raise RebuildRefused(f"neighbour {neighbour.key}: {error}") from None
    return neighbour, path, hashlib.sha256(path.read_bytes()).hexdigest()


def _compare(sandbox: Sandbox, question: Question, gold_sqlite: str, old_path: Path, new_path: Path) -> str:
    """What differs between the stored gold on the old copy and the rebuilt gold on the new one, if anything."""
    before = sandbox.execute(old_path, question.decrypt_gold_sqlite(), budgeted=False)
    after = sandbox.execute(new_path, gold_sqlite, budgeted=False)
    if after.outcome != "ok":
        return f"its gold fails on the rebuilt copy ({after.outcome.replace('_', ' ')})"
    if before.outcome != "ok":
        return f"its stored gold fails on the old copy ({before.outcome.replace('_', ' ')})"
    ordered = order_key_query(gold_sqlite) is not None
    same = results_match_strict(before.rows, after.rows) or (
        not ordered and results_match(before.rows, after.rows, gold_order_keys=None)
    )
    return "" if same else "its gold returns other rows on the rebuilt copy"


def _save(rebuilt: _Rebuilt) -> dict[str, Any]:
    database, copy = rebuilt.database, rebuilt.copy
    summary: dict[str, Any] = {
        "sqlite_sha256": {"before": database.sqlite_sha256, "after": copy.sqlite_sha256},
        "built_by_scorer": {"before": database.built_by_scorer, "after": SCORER_VERSION},
        "neighbours": len(rebuilt.neighbours),
        "rows_checked": rebuilt.rows_checked,
    }
    database.sqlite_sha256 = copy.sqlite_sha256
    database.schema_sql = copy.scored_schema.text
    database.sqlite_schema = copy.scored_schema.sqlite
    database.schema_shape = schema_shape.to_json(copy.scored_schema.shape)
    database.table_count = len(copy.tables)
    database.column_count = copy.column_count
    database.row_count = copy.row_count
    database.build_report = {"tables": copy.tables, "findings": [f.as_dict() for f in copy.findings]}
    database.built_by_scorer = SCORER_VERSION
    database.save()
    for neighbour, _, sha256 in rebuilt.neighbours:
        neighbour.sqlite_sha256 = sha256
    NeighbourDatabase.objects.bulk_update([n for n, _, _ in rebuilt.neighbours], ["sqlite_sha256"])
    questions = list(database.questions.order_by("position"))
    retranspiled, hardness_changed = 0, []
    for question in questions:
        gold, level = rebuilt.golds[question.pk], rebuilt.hardness[question.pk]
        retranspiled += gold != (question.decrypt_gold_sqlite() if question.gold_sqlite_encrypted else "")
        question.gold_sqlite_encrypted = encrypt_gold(gold) if gold else ""
        if question.hardness != level:
            hardness_changed.append(
                {"question": question.public_id, "before": question.hardness, "after": level}
            )
            question.hardness = level
    Question.objects.bulk_update(questions, ["gold_sqlite_encrypted", "hardness"])
    return summary | {"golds_retranspiled": retranspiled, "hardness_changed": hardness_changed}


def _report_lines(summary: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for slug, done in summary.items():
        copy = "unchanged" if done["sqlite_sha256"]["before"] == done["sqlite_sha256"]["after"] else "rebuilt"
        lines.append(
            f"{slug}: built by scorer {done['built_by_scorer']['before'] or 'unknown'}; copy {copy}, "
            f"{done['neighbours']} neighbours rebuilt, {done['golds_retranspiled']} gold queries transpiled "
            f"anew, {done['rows_checked']} gold results checked unchanged"
        )
        lines += [
            f"  {change['question']}: hardness {change['before']} -> {change['after']}"
            for change in done["hardness_changed"]
        ]
    return lines
