from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from evaluation.models import BenchmarkVersion
from leaderboard import feedback
from leaderboard.models import Rescoring, Submission, SubmissionQuerySet, SubmissionQuota
from termite_site.accounts.models import Team, User

QUOTA_WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class Quota:
    per_day: int
    per_version: int
    used_today: int
    used_for_version: int
    next_free_at: datetime | None
    public_per_version: int
    public_for_version: int

    @property
    def left_today(self) -> int:
        return max(0, min(self.per_day - self.used_today, self.per_version - self.used_for_version))


def quota_limits(*, user: User) -> tuple[int, int]:
    """The user's submissions allowed per 24 hours and per version: their own quota, else the site's."""
    own = SubmissionQuota.objects.filter(user=user).first()
    if own is None:
        return settings.TERMITE_DAILY_QUOTA, settings.TERMITE_VERSION_QUOTA
    return own.per_day, own.per_version


def quota_for(*, user: User, version: BenchmarkVersion, now: datetime | None = None) -> Quota:
    """A user's quota: their own limits if staff set some, else the site's."""
    per_day, per_version = quota_limits(user=user)
    return _quota(
        Submission.objects.filter(user=user),
        per_day=per_day,
        per_version=per_version,
        version=version,
        now=now,
    )


def team_quota_for(*, team: Team, version: BenchmarkVersion, now: datetime | None = None) -> Quota:
    """A team's quota (TERMITE_TEAM_QUOTAS): the site's limits, over every submission made on its behalf,
    whoever uploaded it, so that adding accounts to a team does not add to what it may submit."""
    return _quota(
        Submission.objects.filter(team=team),
        per_day=settings.TERMITE_DAILY_QUOTA,
        per_version=settings.TERMITE_VERSION_QUOTA,
        version=version,
        now=now,
    )


def _quota(
    submissions: SubmissionQuerySet,
    *,
    per_day: int,
    per_version: int,
    version: BenchmarkVersion,
    now: datetime | None,
) -> Quota:
    now = now or timezone.now()
    counted = submissions.counting_towards_quota()
    window = counted.filter(created_at__gte=now - QUOTA_WINDOW)
    oldest = window.order_by("created_at").values_list("created_at", flat=True).first()
    return Quota(
        per_day=per_day,
        per_version=per_version,
        used_today=window.count(),
        used_for_version=counted.filter(version=version).count(),
        next_free_at=oldest + QUOTA_WINDOW if oldest else None,
        public_per_version=settings.TERMITE_PUBLIC_PER_VERSION,
        public_for_version=counted.filter(version=version, is_public=True).count(),
    )


def finished_rescorings(*, versions: list[BenchmarkVersion]) -> dict[int, list[Rescoring]]:
    """Per version, its finished rescorings, newest first, with what each moved on the public leaderboard."""
    found: dict[int, list[Rescoring]] = {}
    for rescoring in Rescoring.objects.filter(version__in=versions, finished_at__isnull=False).order_by(
        "-finished_at"
    ):
        found.setdefault(rescoring.version_id, []).append(rescoring)
    return found


def scored_pair_visible_to(
    *, viewer: User | AnonymousUser, ids: tuple[int, int]
) -> tuple[Submission, Submission] | None:
    """The two submissions of `ids`, in that order, when the viewer may open both and both are scored
    and released to them (leaderboard/feedback.py): what the compare page and its API compare. None
    otherwise, without saying which: a private submission is not there for others."""
    found = {
        submission.pk: submission
        for submission in Submission.objects.visible_to(viewer)
        .filter(pk__in=ids, status=Submission.Status.SCORED)
        .defer("predictions", "outcomes")
        .select_related("version")
    }
    if set(ids) - set(found):
        return None
    # Scores not yet released to this viewer are not there to compare.
    if any(feedback.feedback_for(submission, viewer).shown is None for submission in found.values()):
        return None
    return found[ids[0]], found[ids[1]]
