from django.apps import AppConfig

from evaluation.signals import version_published, version_rebuilt
from termite_site.accounts.signals import team_renamed


class LeaderboardConfig(AppConfig):
    name = "leaderboard"

    def ready(self) -> None:
        from leaderboard import rescoring, services  # noqa: PLC0415 (models load after the app registry)

        version_published.connect(rescoring.carry_on_publish, dispatch_uid="leaderboard-carry-on-publish")
        version_published.connect(services.version_published_receiver, dispatch_uid="leaderboard-published")
        version_rebuilt.connect(
            rescoring.rescore_after_rebuild, dispatch_uid="leaderboard-rescore-after-rebuild"
        )
        team_renamed.connect(services.team_renamed_receiver, dispatch_uid="leaderboard-team-renamed")
