from __future__ import annotations

import re
from datetime import date
from typing import Any

from django import template

register = template.Library()


@register.filter
def percent(value: float | str | None) -> str:
    """A score (EA, EA-strict, TS-EA, an end of an interval) as every page shows it: a percentage with one
    decimal, 0.4567 → "45.7"; "—" for a missing value. The one way: a page that rounds otherwise would
    show the same submission with two different numbers."""
    if value is None or value == "":
        return "—"
    return _one_decimal(100 * float(value))


def _one_decimal(percentage: float) -> str:
    return f"{percentage:.1f}"


@register.filter
def points(value: float | str | None) -> str:
    """A difference of fractions in percentage points, signed: 0.123 → "+12.3"."""
    if value is None or value == "":
        return "—"
    return f"{100 * float(value):+.1f}"


@register.filter
def p_value(value: float | str | None) -> str:
    """A p-value with three significant digits: 0.038574 → "0.0386", 1.0 → "1"; "< 0.0001" below that."""
    if value is None or value == "":
        return "—"
    if float(value) < 0.0001:
        return "< 0.0001"
    return f"{float(value):.3g}"


@register.filter
def sort_value(value: object) -> str:
    """What static/js/leaderboard.js sorts a cell by: a plain number, an ISO date or lower-case text;
    empty for a missing value, which sorts last. Never localised, unlike {{ value }}."""
    if value is None:
        return ""
    if isinstance(value, float | int):
        return repr(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value).lower()


@register.filter
def chart_numbers(figure: dict[str, Any]) -> dict[str, Any]:
    """The numbers a plotly figure of leaderboard/charts.py draws, as a table for those who cannot see the
    chart: one column per trace, one row per x value (a database, a hardness level, a day), in the order
    the traces first reach it. Read from the figure itself, so the table and the chart cannot disagree.
    A trace's hover text (the system behind a step of "best EA") follows its value."""
    columns = [trace.get("name", "") for trace in figure["data"]]
    rows: dict[str, list[str]] = {}
    for index, trace in enumerate(figure["data"]):
        texts = trace.get("text") or [None] * len(trace["x"])
        for x, y, text in zip(trace["x"], trace["y"], texts, strict=False):
            label = str(x)[:10] if _ISO_DATETIME.match(str(x)) else str(x)  # the axis shows days only
            cells = rows.setdefault(label, [""] * len(columns))
            value = "—" if y is None else _one_decimal(float(y))  # the figure's numbers are percentages
            cells[index] = f"{value} ({text})" if text else value
    return {"columns": columns, "rows": list(rows.items())}


_ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T")
