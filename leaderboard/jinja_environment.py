"""The Jinja2 environment of the few templates rendered once per row of a large table (settings.TEMPLATES).

The site's templates are Django's; a template that a change of the ranking renders a thousand times is
Jinja2's, which compiles it to Python. It gets Django's translations (the language active for the render),
and the filters it shares with the Django templates; `per_row_url` makes the links of each row.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from jinja2 import Environment

from leaderboard.templatetags.leaderboard import percent, points, sort_value


def day(value: date | None) -> str:
    """A date, or a time's day where the site is (its TIME_ZONE), as Django's `date:"Y-m-d"` gives it."""
    if value is None:
        return ""
    if isinstance(value, datetime) and timezone.is_aware(value):
        value = timezone.localtime(value)
    return value.strftime("%Y-%m-%d")


def environment(**options: Any) -> Environment:
    env = Environment(extensions=["jinja2.ext.i18n"], **options)
    env.install_gettext_callables(gettext, ngettext, newstyle=False)  # type: ignore[attr-defined]  # added by the i18n extension
    env.filters.update(day=day, percent=percent, points=points, sort_value=sort_value)
    return env


_PLACEHOLDER = "2147483647"  # an id, and a slug too, that no real row has


def per_row_url(name: str) -> Callable[[object], str]:
    """`reverse(name, args=[x])` for each row's x (an id, a slug: nothing to quote), reversed once: a
    reverse per row cost more than all the rest of a row's render."""
    before, _placeholder, after = reverse(name, args=[_PLACEHOLDER]).partition(_PLACEHOLDER)
    return lambda value: f"{before}{value}{after}"
