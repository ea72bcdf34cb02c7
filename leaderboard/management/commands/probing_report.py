from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser

from evaluation.management.commands._base import BenchmarkCommand
from leaderboard.probing import probing_report, report_as_json


class Command(BenchmarkCommand):
    help = (
        "Print the accounts of a version whose uploads look like probing, as the staff page shows them: "
        "edits of an earlier file of the same account, mostly trivial files, near-identical files of two "
        "accounts, each with its evidence. Reads only. With --json, the whole report, SQL included, as JSON."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--version", dest="label", required=True, help="Label of a benchmark version")
        parser.add_argument("--json", dest="as_json", action="store_true", help="Print the report as JSON")

    def handle(self, *args: Any, label: str, as_json: bool = False, **options: Any) -> None:
        report = probing_report(version=self.version_named(label))
        if as_json:
            self.stdout.write(json.dumps(report_as_json(report), ensure_ascii=False, indent=2))
            return
        t = report.thresholds
        self.stdout.write(
            f"{report.version}: {report.uploads} uploads from {report.accounts_seen} accounts; "
            f"{len(report.accounts)} with findings (edits of at most {t.max_changed} predictions, files at "
            f"least {t.trivial_share:.0%} trivial, files of two accounts at least {t.similarity:.0%} alike)."
        )
        for account in report.accounts:
            user = account.user
            state = "" if user.is_active else ", disabled"
            self.stdout.write(
                f"\n{user.username} (account {user.pk}{state}): {account.uploads} uploads; quota "
                f"{account.quota.per_day} a day, {account.quota.per_version} per version"
            )
            for edit in account.edits:
                self.stdout.write(
                    f"  edit #{edit.later} ({edit.later_at:%Y-%m-%d %H:%M}) of #{edit.earlier} "
                    f"({edit.earlier_at:%Y-%m-%d %H:%M}), chain {edit.chain}: {', '.join(edit.changed)}; "
                    f"EA {_ea(edit.ea_before)} -> {_ea(edit.ea_after)}"
                )
            for found in account.trivial:
                kinds = ", ".join(f"{kind} {n}" for kind, n in found.counts.items() if n)
                self.stdout.write(
                    f"  mostly trivial #{found.submission}: {found.trivial} of {found.questions} "
                    f"({found.share:.0%}): {kinds}; EA {_ea(found.ea)}"
                )
            for twin in account.twins:
                self.stdout.write(
                    f"  near-identical to {twin.other.username}: #{twin.mine} and #{twin.theirs}, similarity "
                    f"{twin.twins.similarity:.3f} ({twin.twins.shared} of {twin.twins.union} shared, "
                    f"{twin.twins.distinctive} distinctive); {twin.twins.pairs} such pairs of files"
                )


def _ea(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
