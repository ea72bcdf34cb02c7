from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from evaluation.imports import database_import_create, database_import_run
from evaluation.management.commands._base import BenchmarkCommand
from evaluation.models import DatabaseImport
from evaluation.scoring.vocabulary import DIALECTS
from evaluation.services import VersionStateError
from evaluation.sources import SourceError, database_source_from_files


class Command(BenchmarkCommand):
    help = (
        "Add a database and its questions to a draft benchmark version: a MySQL or SQLite dump, an optional "
        "schema-only dump shown to participants, and a JSONL file of {id?, question, gold_sql}. Runs the job "
        "the staff page queues, here, printing each step, then the validation report; nothing is stored if "
        "any input is bad."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--version", dest="label", required=True, help="Label of a draft version")
        parser.add_argument("--dump", type=Path, required=True, help="The database dump (.sql)")
        parser.add_argument("--questions", type=Path, required=True, help="Questions, JSONL")
        parser.add_argument("--schema", type=Path, help="Schema-only dump shown to participants")
        parser.add_argument("--slug", help="Database name (default: from the dump's file name)")
        parser.add_argument("--name", dest="display_name", help="Display name (default: the slug)")
        parser.add_argument("--dialect", choices=DIALECTS, default="mysql")

    def handle(
        self,
        *args: Any,
        label: str,
        dump: Path,
        questions: Path,
        schema: Path | None,
        slug: str | None,
        display_name: str | None,
        dialect: str,
        **options: Any,
    ) -> None:
        version = self.version_named(label)
        try:
            database, question_sources = database_source_from_files(
                dump=_read(dump),
                dump_name=dump.name,
                questions=_read(questions),
                questions_name=questions.name,
                schema=_read(schema) if schema else None,
                slug=slug,
                display_name=display_name,
                dialect=dialect,
            )
            job = database_import_create(
                version=version, database=database, questions=question_sources, requested_by=None, queue=False
            )
        except (SourceError, VersionStateError) as error:
            raise CommandError(str(error)) from None
        database_import_run(job_id=job.pk, progress=self._print_step)
        job.refresh_from_db()
        if job.state != DatabaseImport.State.DONE or job.report is None:
            raise CommandError(job.error)
        self.stdout.write(job.report.text)
        self.stdout.write(
            self.style.SUCCESS(f"Added {database.slug} to {version} ({len(question_sources)} questions).")
        )

    def _print_step(self, percent: int, message: str) -> None:
        self.stdout.write(f"[{percent:3d}%] {message}")
        self.stdout.flush()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}") from None
