from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from leaderboard.run_services import requeue_stuck_runs
from leaderboard.services import requeue_stuck


class Command(BaseCommand):
    help = (
        "Re-enqueue submissions left behind: queued without a live job (Redis was down, a job was lost), "
        "running with a heartbeat silent for three beats (the job died) or past TERMITE_STUCK_AFTER_SECONDS, "
        "or failed for a reason that repairs itself; and protocol runs queued without a live job or running "
        "with a silent heartbeat (resumed where they stopped). "
        "Safe to run at any time and from cron; scoring claims each submission atomically."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="List what would be re-enqueued, change nothing"
        )

    def handle(self, *args: Any, dry_run: bool, **options: Any) -> None:
        requeued = requeue_stuck(dry_run=dry_run)
        verb = "Would re-enqueue" if dry_run else "Re-enqueued"
        self.stdout.write(
            f"{verb} {len(requeued)} submission(s){': ' if requeued else '.'}{', '.join(map(str, requeued))}"
        )
        runs = requeue_stuck_runs(dry_run=dry_run)
        self.stdout.write(
            f"{verb} {len(runs)} protocol run(s){': ' if runs else '.'}{', '.join(map(str, runs))}"
        )
