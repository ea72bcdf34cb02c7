from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from evaluation.management.commands._base import BenchmarkCommand
from evaluation.models import BenchmarkVersion
from leaderboard import ranking
from leaderboard.baselines import BaselineError, paper_baseline_load


class Command(BenchmarkCommand):
    help = (
        "Add the GPT-3.5 run reported in the paper that introduced Termite (EA per database, "
        "gpt-3.5-turbo-16k, temperature 1) to a version's leaderboard, as a baseline: marked as reported in "
        "the paper, not scored here, and unranked. The version must hold exactly the ten Termite databases. "
        "Running it again brings the row up to date and adds nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--version", dest="label", required=True, help="The benchmark version's label")
        parser.add_argument("--dry-run", action="store_true", help="Check and print, store nothing")

    def handle(self, *args: Any, label: str, dry_run: bool, **options: Any) -> None:
        version = BenchmarkVersion.objects.filter(label=label).first()
        if version is None:
            raise CommandError(f"--version {label!r}: no such benchmark version.")
        try:
            baseline, created = paper_baseline_load(version=version, dry_run=dry_run)
        except BaselineError as error:
            raise CommandError(str(error)) from None
        counts = {db.slug: db.questions.count() for db in version.databases.all()}
        overall = ranking.baseline_overall(baseline.per_database, counts)
        verb = (
            ("Would add" if created else "Would update") if dry_run else ("Added" if created else "Updated")
        )
        self.stdout.write(
            f"{verb} the baseline {baseline.model_name!r} on {version}: EA on {len(counts)} databases, "
            f"{100 * overall:.2f}% overall (weighted by their {sum(counts.values())} questions)."
        )
