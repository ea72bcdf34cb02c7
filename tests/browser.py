"""What the browser tests share: the pages' scripts, and logging in."""

from __future__ import annotations


def chart_drawn(page, chart: str) -> None:
    """Wait until the chart whose element id is `chart` is drawn. A chart fetches plotly.js only when it
    nears the view (static/js/charts.js), so it is scrolled into view first, as a reader would."""
    page.locator(f"#{chart}").scroll_into_view_if_needed()
    page.wait_for_selector(f"#{chart} .main-svg")


def log_in(page, portal: str, username: str, password: str) -> None:
    """Log in through the site's form, as a person would: the page ends on the profile."""
    page.goto(f"{portal}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("form.card button:has-text('Log in')")
    page.wait_for_url("**/accounts/profile/")
