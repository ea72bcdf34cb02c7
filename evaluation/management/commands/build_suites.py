from __future__ import annotations

import os
from typing import Any

from django.core.management.base import CommandParser

from evaluation.management.commands._base import BenchmarkCommand
from evaluation.services import version_build_suites


class Command(BenchmarkCommand):
    help = (
        "Build the test suites (TS-EA's neighbour databases) of a version's databases that have none, as an "
        "import does: for versions imported before suites existed. Prints what each suite tells apart; "
        "databases that have a suite are left as they are, so running it again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--version", dest="label", required=True, help="Label of a benchmark version")

    def handle(self, *args: Any, label: str, **options: Any) -> None:
        version = self.version_named(label)
        report = version_build_suites(
            version=version, reference_url=os.environ.get("TERMITE_REFERENCE_MYSQL_URL") or None
        )
        self.stdout.write(report.text)
