from __future__ import annotations

from django.core.management.base import BaseCommand

from leaderboard.demo import DEMO_ADMIN, demo_admin_exists, demo_load


class Command(BaseCommand):
    help = "Load the demo content and make sure a demo admin exists; prints the admin's credentials."

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="Say what would be done, change nothing.")

    def handle(self, *args, dry_run: bool, **options):
        if dry_run:
            exists = demo_admin_exists()
            self.stdout.write(f"Demo admin {DEMO_ADMIN!r}: {'present' if exists else 'would be created'}.")
            return
        loaded = demo_load()
        version = loaded.version
        if loaded.benchmark_loaded:
            self.stdout.write(f"Demo benchmark: loaded {version} ({version.questions.count()} questions).")
        else:
            self.stdout.write("Demo benchmark: already loaded.")
        made = loaded.submissions_made
        self.stdout.write(f"Demo submissions: {made} scored." if made else "Demo submissions: already there.")
        self.stdout.write(
            self.style.SUCCESS(f"Demo admin: username {DEMO_ADMIN!r}, password {loaded.admin_password!r}")
        )
