"""Who did what among staff: an action taken outside the admin is written to the admin's history of each
object it changed (a `LogEntry`, listed on that object's admin page and in the admin's recent actions)
and to the log, so that a hidden row or a disabled account can always be traced to the person."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Model

logger = logging.getLogger(__name__)


def staff_action_record(*, by: AbstractBaseUser, objects: Sequence[Model], message: str) -> None:
    """Record that staff member `by` changed `objects` as `message` says (in English, as the log is)."""
    if not objects:
        return
    LogEntry.objects.log_actions(by.pk, objects, CHANGE, change_message=message)
    logger.info(
        "staff %s: %s (%s)",
        by.get_username(),
        message,
        ", ".join(f"{obj._meta.label} {obj.pk}" for obj in objects),
    )
