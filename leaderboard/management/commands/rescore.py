from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from evaluation.management.commands._base import BenchmarkCommand
from leaderboard.models import Rescoring
from leaderboard.rescoring import rescoring_start


class Command(BenchmarkCommand):
    help = (
        "Rescore every scored submission of a version with the current scorer, one job per submission on the "
        "scoring queue (in this process without Redis). Idempotent: run it again after a crash and it resumes, "
        "enqueueing only what is left. Each submission keeps its history; the changelog lists what moved."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--version", dest="label", required=True, help="Label of a benchmark version")
        parser.add_argument("--reason", choices=Rescoring.Reason.values, default=Rescoring.Reason.SCORER)

    def handle(self, *args: Any, label: str, reason: str, **options: Any) -> None:
        version = self.version_named(label)
        rescoring = rescoring_start(version=version, reason=reason)
        if rescoring is None:
            self.stdout.write(
                f"Every submission of {version} is scored by the current scorer: nothing to rescore."
            )
            return
        state = "finished" if rescoring.finished_at else "in progress on the scoring queue"
        self.stdout.write(
            f"Rescoring {version} with scorer {rescoring.scorer_version}: {rescoring.done} of {rescoring.total} "
            f"submissions done, {state}."
        )
        for row in rescoring.moved:
            self.stdout.write(
                f"  #{row['submission']} {row['model_name']}: EA {row['ea_before']:.4f} -> {row['ea_after']:.4f}, "
                f"rank {row['rank_before']} -> {row['rank_after']}"
            )
