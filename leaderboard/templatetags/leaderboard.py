from django import template

register = template.Library()


@register.filter
def percent(value) -> str:
    """0.4567 → "45.7"; empty for a missing value."""
    if value is None or value == "":
        return "—"
    return f"{100 * float(value):.1f}"
