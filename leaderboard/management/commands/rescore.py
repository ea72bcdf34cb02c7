from __future__ import annotations

import textwrap
from typing import Any

from django.core.management.base import CommandError, CommandParser

from evaluation.management.commands._base import BenchmarkCommand
from evaluation.models import BenchmarkVersion
from evaluation.rebuilding import RebuildRefused, version_rebuild
from evaluation.scoring.score import SCORER_VERSION
from leaderboard.models import Rescoring
from leaderboard.rescoring import REQUESTABLE_REASONS, rescoring_start


class Command(BenchmarkCommand):
    help = (
        "Rescore every scored submission of a version (or of every version, with --all) with the current "
        "scorer, one job per submission on the scoring queue (in this process without Redis). A version whose "
        "SQLite copies or SQLite gold an older scorer built has them rebuilt first (each gold checked to return "
        "the same rows), and then every one of its submissions is rescored. Idempotent: run it again after a "
        "crash and it resumes, enqueueing only what is left; with nothing outdated it does nothing, so a "
        "deployment can run it after every migrate. Each submission keeps its history; the changelog lists "
        "what moved."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--version", dest="label", help="Label of a benchmark version")
        which.add_argument("--all", dest="every", action="store_true", help="Every benchmark version")
        parser.add_argument("--reason", choices=REQUESTABLE_REASONS, default=Rescoring.Reason.SCORER)

    def handle(self, *args: Any, label: str | None, every: bool, reason: str, **options: Any) -> None:
        if every and reason == Rescoring.Reason.ERRATA:
            raise CommandError("--reason errata rescores one version: name it with --version.")
        versions = (
            BenchmarkVersion.objects.order_by("created_at") if every else [self.version_named(label or "")]
        )
        refused = []
        for version in versions:
            try:
                rebuilt = version_rebuild(version=version)
            except RebuildRefused as error:
                refused.append(str(error))
                continue
            if rebuilt is None:
                self.show(version, rescoring_start(version=version, reason=reason))
            else:
                self.stdout.write(f"Rebuilt what an older scorer built for {version}:")
                self.stdout.write(textwrap.indent(rebuilt.text, "  "))
                self.show(version, version.rescorings.filter(scorer_version=SCORER_VERSION).first())
        if refused:
            raise CommandError("\n".join(refused))

    def show(self, version: BenchmarkVersion, rescoring: Rescoring | None) -> None:
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
