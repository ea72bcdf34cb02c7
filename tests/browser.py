"""What the browser tests share about the pages' scripts."""

from __future__ import annotations


def chart_drawn(page, chart: str) -> None:
    """Wait until the chart whose element id is `chart` is drawn. A chart fetches plotly.js only when it
    nears the view (static/js/charts.js), so it is scrolled into view first, as a reader would."""
    page.locator(f"#{chart}").scroll_into_view_if_needed()
    page.wait_for_selector(f"#{chart} .main-svg")
