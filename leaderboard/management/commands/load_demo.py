from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.services import VersionStateError
from leaderboard.demo import DEMO_ADMIN, demo_admin_exists, demo_load


class Command(BaseCommand):
    help = "Load the demo content and make sure a demo admin exists; prints the admin's credentials."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="Say what would be done, change nothing.")

    def handle(self, *args: Any, dry_run: bool, **options: Any) -> None:
        if dry_run:
            exists = demo_admin_exists()
            self.stdout.write(f"Demo admin {DEMO_ADMIN!r}: {'present' if exists else 'would be created'}.")
            return
        try:
            loaded = demo_load()
        except VersionStateError as error:
            raise CommandError(str(error)) from None
        version = loaded.version
        if loaded.benchmark_loaded:
            self.stdout.write(f"Demo benchmark: loaded {version} ({version.questions.count()} questions).")
        else:
            self.stdout.write("Demo benchmark: already loaded.")
        if version.is_practice:
            self.stdout.write("A practice version: participants see its questions, gold and data.")
        else:  # loaded by a portal before practice versions: it stays sealed, as a version never changes kind
            self.stdout.write("A sealed version: participants see their scores only.")
        made = loaded.submissions_made
        self.stdout.write(f"Demo submissions: {made} scored." if made else "Demo submissions: already there.")
        self.stdout.write(
            "Demo baseline: added the paper's GPT-3.5 row, as an example (not measured on the demo)."
            if loaded.baseline_added
            else "Demo baseline: already there."
        )
        self.stdout.write(
            self.style.SUCCESS(f"Demo admin: username {DEMO_ADMIN!r}, password {loaded.admin_password!r}")
        )
