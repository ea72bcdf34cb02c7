from django.apps import AppConfig

from evaluation.signals import version_published


class LeaderboardConfig(AppConfig):
    name = "leaderboard"

    def ready(self) -> None:
        from leaderboard.rescoring import carry_on_publish  # noqa: PLC0415 (models load after the app registry)

        version_published.connect(carry_on_publish, dispatch_uid="leaderboard-carry-on-publish")
