from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.models import LABEL_VALIDATOR, BenchmarkVersion, VersionKind
from evaluation.services import VersionStateError, version_create_draft


class Command(BaseCommand):
    help = (
        "Create a draft benchmark version LABEL, empty or holding a copy of the databases and questions of "
        "the version --from names (as the staff page's draft form does), to add databases to with "
        "add_database. Accepted errata of the version it copies leave their questions out of scoring."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("label", help="The new version's label, e.g. 1.1")
        parser.add_argument("--from", dest="derived_from", help="Label of the version to copy")
        parser.add_argument("--name", default="Termite", help="The benchmark's name (default: Termite)")
        parser.add_argument("--notes", default="", help="Changelog notes")
        parser.add_argument(
            "--kind",
            choices=VersionKind.values,
            help="sealed or practice (default: the kind of the version it copies; sealed when empty)",
        )

    def handle(
        self,
        *args: Any,
        label: str,
        derived_from: str | None,
        name: str,
        notes: str,
        kind: str | None,
        **options: Any,
    ) -> None:
        try:
            LABEL_VALIDATOR(label)
        except ValidationError as error:
            raise CommandError(f"{label!r} cannot be a version's label: {' '.join(error.messages)}") from None
        source = None
        if derived_from is not None:
            source = BenchmarkVersion.objects.filter(label=derived_from).first()
            if source is None:
                raise CommandError(f"No benchmark version {derived_from!r} to copy (--from).")
        try:
            draft = version_create_draft(label=label, name=name, notes=notes, derived_from=source, kind=kind)
        except VersionStateError as error:
            raise CommandError(str(error)) from None
        content = (
            f"a copy of {source} ({draft.databases.count()} databases, {draft.questions.count()} questions)"
            if source
            else "empty"
        )
        self.stdout.write(
            self.style.SUCCESS(f"Draft {draft} created, {content}, {draft.get_kind_display()}.")
        )
