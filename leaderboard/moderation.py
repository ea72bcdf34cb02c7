"""Staff's answers to probing, taken from a version's probing page (leaderboard/probing.py finds it):
hiding rows with a public reason, and lowering an account's quota. Each is recorded as who did what
(termite_site/audit.py). Disabling an account belongs to the accounts app (`account_disable`)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction
from django.utils.translation import gettext as _

from leaderboard.models import Submission, SubmissionQuota
from leaderboard.selectors import quota_limits
from leaderboard.services import submission_moderate
from termite_site.accounts.models import User
from termite_site.audit import staff_action_record


class QuotaNotLowered(Exception):
    """The quota asked for is not lower than the account's current one; the message says why."""


def submissions_hide(*, submissions: Sequence[Submission], reason: str, by: User) -> None:
    """Hide `submissions` from the public pages with the public `reason` (their owners and staff still
    see them); a flag set before stays."""
    with transaction.atomic():
        for submission in submissions:
            submission_moderate(
                submission=submission, hidden=True, flagged=submission.is_flagged, reason=reason
            )
        staff_action_record(by=by, objects=list(submissions), message=f"Hid the submission: {reason.strip()}")


def submission_quota_lower(*, user: User, per_day: int, per_version: int, by: User) -> SubmissionQuota:
    """Give `user` their own lower quota: `per_day` submissions per 24 hours, `per_version` per version.

    Neither limit may be above the current one and one must be below it: a quota is raised in the admin,
    deliberately, not from the page that watches for probing. A limit below what the user has already
    used stops their uploads until the window frees up (per day), or for good on the versions where they
    have used it up (per version). Raises QuotaNotLowered; nothing is saved then.
    """
    if per_day < 0 or per_version < 0:
        raise QuotaNotLowered(_("A quota cannot be negative."))
    with transaction.atomic():
        day_now, version_now = quota_limits(user=user)
        if per_day > day_now or per_version > version_now or (per_day, per_version) == (day_now, version_now):
            raise QuotaNotLowered(
                _(
                    "The new quota must be lower than %(user)s's current one (%(day)s a day, %(version)s "
                    "per version): neither limit higher, at least one lower. Raise a quota in the admin."
                )
                % {"user": user.get_username(), "day": day_now, "version": version_now}
            )
        quota, _created = SubmissionQuota.objects.update_or_create(
            user=user, defaults={"per_day": per_day, "per_version": per_version}
        )
        staff_action_record(
            by=by,
            objects=[user],
            message=(
                f"Lowered the submission quota to {per_day} a day and {per_version} per version "
                f"(from {day_now} and {version_now})."
            ),
        )
    return quota
