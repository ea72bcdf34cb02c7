from typing import Any

from django.apps import AppConfig

from evaluation.signals import version_published, version_rebuilt
from termite_site.accounts.signals import team_renamed


class LeaderboardConfig(AppConfig):
    name = "leaderboard"

    def ready(self) -> None:
        version_published.connect(carry_on_publish, dispatch_uid="leaderboard-carry-on-publish")
        version_published.connect(version_published_receiver, dispatch_uid="leaderboard-published")
        version_rebuilt.connect(rescore_after_rebuild, dispatch_uid="leaderboard-rescore-after-rebuild")
        team_renamed.connect(team_renamed_receiver, dispatch_uid="leaderboard-team-renamed")


# The receivers import the module that does the work when their signal fires, not when Django starts: every
# process starts this app, few publish a version, rebuild one or rename a team, and `rescoring` and
# `services` import the scorer, the ranking and the queue (django-rq, redis), most of what a command such
# as `manage.py score` waited for before its own code ran (issue 31).


def carry_on_publish(sender: object, **kwargs: Any) -> None:
    from leaderboard import rescoring  # noqa: PLC0415 (start-up time: imported when a version is published)

    rescoring.carry_on_publish(sender, **kwargs)


def version_published_receiver(sender: object, **kwargs: Any) -> None:
    from leaderboard import services  # noqa: PLC0415 (start-up time: imported when a version is published)

    services.version_published_receiver(sender, **kwargs)


def rescore_after_rebuild(sender: object, **kwargs: Any) -> None:
    from leaderboard import rescoring  # noqa: PLC0415 (start-up time: imported when a version is rebuilt)

    rescoring.rescore_after_rebuild(sender, **kwargs)


def team_renamed_receiver(sender: object, **kwargs: Any) -> None:
    from leaderboard import services  # noqa: PLC0415 (start-up time: imported when a team is renamed)

    services.team_renamed_receiver(sender, **kwargs)
