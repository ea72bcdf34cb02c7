from __future__ import annotations

from datetime import date

from django import template

register = template.Library()


@register.filter
def percent(value) -> str:
    """0.4567 → "45.7"; empty for a missing value."""
    if value is None or value == "":
        return "—"
    return f"{100 * float(value):.1f}"


@register.filter
def points(value) -> str:
    """A difference of fractions in percentage points, signed: 0.123 → "+12.3"."""
    if value is None or value == "":
        return "—"
    return f"{100 * float(value):+.1f}"


@register.filter
def p_value(value) -> str:
    """A p-value with three significant digits: 0.038574 → "0.0386", 1.0 → "1"; "< 0.0001" below that."""
    if value is None or value == "":
        return "—"
    if float(value) < 0.0001:
        return "< 0.0001"
    return f"{float(value):.3g}"


@register.filter
def sort_value(value) -> str:
    """What static/js/leaderboard.js sorts a cell by: a plain number, an ISO date or lower-case text;
    empty for a missing value, which sorts last. Never localised, unlike {{ value }}."""
    if value is None:
        return ""
    if isinstance(value, float | int):
        return repr(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value).lower()
