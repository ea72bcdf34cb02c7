"""Errata: a participant reports that a question is wrong; staff accept or decline the report.

The rule for an accepted erratum, since published versions never change:

- on a draft version, the question is excluded from scoring there, with the erratum's public reason;
- on a published version, the question stays scored there (its leaderboard stays comparable) and the
  public reason is recorded: the fix goes into the next version. Each draft that descends from the
  version now excludes the question (the same public id) with that reason, and so does each draft
  derived from it later (`evaluation.services.version_create_draft`, `selectors.errata_to_carry`).

A question already out of scoring where the erratum arrives is left as it is.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from evaluation.models import BenchmarkVersion, Erratum, Question
from evaluation.selectors import drafts_descending_from
from evaluation.services import errata_apply
from termite_site import ratelimit
from termite_site.accounts.models import User


class TooManyReports(Exception):
    """The reporter filed as many errata as the rate limit allows for now."""


class ErratumResolvedError(ValueError):
    """Staff answered this erratum already."""


def erratum_report(*, reporter: User, question: Question, description: str) -> Erratum:
    """File a report that `question` is wrong (its version checked by the form: one the reporter may see).

    Only reports that reach this point count towards TERMITE_ERRATA_LIMIT_PER_DAY: a form sent back for a
    missing field costs nothing.
    """
    limit, window = settings.TERMITE_ERRATA_RATE_LIMIT
    if ratelimit.hit("erratum", str(reporter.pk), limit=limit, window=window):
        raise TooManyReports(_("You may report %(n)s errata a day; try again tomorrow.") % {"n": limit})
    return Erratum.objects.create(question=question, reporter=reporter, description=description.strip())


def erratum_accept(*, erratum: Erratum, by: User, public_reason: str) -> list[BenchmarkVersion]:
    """Accept the erratum with a reason everyone sees; returns the drafts that now exclude its question."""
    with transaction.atomic():
        erratum = _open_for_update(erratum)
        erratum.accept(by=by, public_reason=public_reason)
        return [
            draft
            for draft in drafts_descending_from(erratum.question.version)
            if errata_apply(version=draft, errata=[erratum])
        ]


def erratum_decline(*, erratum: Erratum, by: User, staff_reason: str) -> Erratum:
    """Decline the erratum with a reason only its reporter (and staff) see."""
    with transaction.atomic():
        erratum = _open_for_update(erratum)
        erratum.decline(by=by, staff_reason=staff_reason)
    return erratum


def _open_for_update(erratum: Erratum) -> Erratum:
    """The erratum locked, so that two staff members answering at once cannot both answer."""
    locked = Erratum.objects.select_for_update().select_related("question__version").get(pk=erratum.pk)
    if not locked.is_open:
        raise ErratumResolvedError(f"this report was {locked.get_status_display()} already")
    return locked
