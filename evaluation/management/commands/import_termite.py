from __future__ import annotations

import argparse
import os
from datetime import date
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from evaluation.gold import GoldKeyError
from evaluation.management.commands._base import BenchmarkCommand
from evaluation.models import LABEL_VALIDATOR, ParticipantsSee
from evaluation.services import benchmark_import
from evaluation.sources import SourceError


class Command(BenchmarkCommand):
    help = (
        "Import the Termite archive (the authors' AES-encrypted zip): build the SQLite copies, compute hardness, "
        "encrypt the gold, check it (against MariaDB when TERMITE_REFERENCE_MYSQL_URL is set) and print the "
        "validation report. Importing the same archive again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("archive", type=Path, help="Path to Termite.zip")
        parser.add_argument("--password", required=True, help="The archive's password")
        parser.add_argument("--version", dest="label", default="1.0", help="Version label (default 1.0)")
        parser.add_argument("--name", default="Termite", help="Benchmark name (default Termite)")
        parser.add_argument("--draft", action="store_true", help="Keep the version as a draft, unpublished")
        parser.add_argument(
            "--added-on",
            type=_iso_date,
            help="The day its databases count as added to the benchmark, YYYY-MM-DD (default: the newest "
            "entry date inside the archive, when its authors packed it; today if it has none)",
        )
        parser.add_argument(
            "--participants-see",
            choices=ParticipantsSee.values,
            default=ParticipantsSee.SCHEMA,
            help="What participants see of each database: its schema only (the default), or its schema and "
            "data, the authors' full dump, as the paper's first turn shows it",
        )

    def handle(
        self,
        *args: Any,
        archive: Path,
        password: str,
        label: str,
        name: str,
        draft: bool,
        added_on: date | None,
        participants_see: str,
        **options: Any,
    ) -> None:
        try:
            LABEL_VALIDATOR(label)
        except ValidationError:
            raise CommandError(
                f"--version {label!r}: use letters, digits, dots, dashes or underscores"
            ) from None
        try:
            result = benchmark_import(
                archive=archive,
                password=password,
                label=label,
                name=name,
                publish=not draft,
                reference_url=os.environ.get("TERMITE_REFERENCE_MYSQL_URL") or None,
                added_on=added_on,
                participants_see=participants_see,
            )
        except (SourceError, GoldKeyError) as error:
            raise CommandError(str(error)) from None
        version = result.version
        if not result.created:
            self.stdout.write(f"{version} is already imported from this archive: nothing changed.")
            if version.participants_see != participants_see:
                self.stdout.write(
                    f"What its participants see of each database: {version.get_participants_see_display()}; "
                    "change that on its staff page."
                )
            return
        if result.report is not None:
            self.stdout.write(result.report.text)
        state = "published" if version.is_published else "a draft"
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {version}: {version.databases.count()} databases, {version.questions.count()} questions "
                f"({version.questions.scored().count()} scored); {state}."
            )
        )
        self.stdout.write(
            f"What its participants see of each database: {version.get_participants_see_display()}."
        )
        first = version.databases.order_by("added_on").first()
        if first is not None:
            self.stdout.write(f"Its databases count as added to the benchmark on {first.added_on:%Y-%m-%d}.")


def _iso_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date: use YYYY-MM-DD") from None
