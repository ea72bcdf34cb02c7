"""static/js/leaderboard.js and charts.js in Chromium: the table sorts, filters and hides column groups as
the server does and keeps the URL in step; the charts are drawn, fetching plotly.js only once they near the
view. Skipped where Chromium is missing."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone

from tests.browser import chart_drawn
from tests.factories import baseline_make
from tests.leaderboard.page_rows import row_names
from tests.leaderboard.scored import scored_fields

pytestmark = [pytest.mark.browser, pytest.mark.processes]


@pytest.fixture
def page(browser, live_server, transactional_db, make_submission, make_team, demo_version):
    now = timezone.now()
    teams = {"Torino": make_team("Torino"), "Milano": make_team("Milano"), "": None}
    # Beta's scores are older than TS-EA: it has none.
    systems = [
        ("Alfa", "Torino", "70B", "open", "prompting", 85.0, 20, 12),
        ("Beta", "Milano", "7B", "closed", "fine-tuning", None, 15, None),
        ("Gamma", "Torino", "", "open", "prompting", 79.3, 14, 13),
        ("Delta", "", "1.5B", "unknown", "other", 60.0, 5, 5),
    ]
    for days, (name, team, size, weights, approach, spider, correct, ts) in enumerate(systems):
        make_submission(
            model_name=name,
            team=teams[team],
            model_size=size,
            weights=weights,
            approach=approach,
            spider_dev_ea=spider,
            created_at=now - timedelta(days=10 - days * 3),
            **scored_fields(correct, ts=ts),
        )
    baseline_make(version=demo_version, per_database={"biblioteca": 0.5, "ciclismo": 0.4})
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/leaderboard/")
    yield page
    page.close()
    assert not errors, errors


def visible_names(page) -> list[str]:
    return page.eval_on_selector_all(
        "#leaderboard tbody tr:not([hidden]) td.model",
        "cells => cells.map(cell => cell.textContent.trim().split(/\\s/)[0])",
    )


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def server_names(client, url: str) -> list[str]:
    return row_names(client.get(url))


def test_the_browser_sorts_each_column_as_the_server_does(page, client):
    page.click("#unfold")  # the columns per database and per hardness too
    for key in (
        "ea",
        "ts_ea",
        "model_name",
        "team",
        "spider_gap",
        "model_size",
        "db_ciclismo",
        "hardness_hard",
        "date",
    ):
        header = page.locator(f'th[data-key="{key}"] a:not(.about)')
        for _ in range(2):  # first click: the column's natural order; second click: the other way
            header.click()
            url = urlsplit(page.url)
            assert server_names(client, f"{url.path}?{url.query}") == visible_names(page), url.query
        assert query(page)["sort"] == [key]
    page.locator('th[data-key="rank"] a').click()
    assert visible_names(page) == ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]
    assert "sort" not in query(page)


def test_the_browser_filters_as_the_server_does_and_keeps_the_url(page, client):
    page.fill("input[name=q]", "torino")
    assert visible_names(page) == ["Alfa", "Gamma"]
    assert page.text_content("#shown-count") == "2"
    page.select_option("select[name=weights]", "open")
    page.select_option("select[name=size]", "70B")
    assert visible_names(page) == ["Alfa"]
    assert query(page) == {"q": ["torino"], "weights": ["open"], "size": ["70B"]}
    url = urlsplit(page.url)
    assert server_names(client, f"{url.path}?{url.query}") == ["Alfa"]
    page.fill("input[name=q]", "")
    page.select_option("select[name=weights]", "")
    page.select_option("select[name=size]", "")
    assert visible_names(page) == ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]
    page.select_option("select[name=team]", "milano")
    assert visible_names(page) == ["Beta"]
    assert query(page) == {"team": ["milano"]}
    url = urlsplit(page.url)
    assert server_names(client, f"{url.path}?{url.query}") == ["Beta"]


def test_the_browser_hides_and_shows_column_groups(page):
    page.click("#unfold")
    cell = page.locator('#leaderboard tbody td[data-group="databases"]').first
    assert cell.is_visible()
    page.check('input[name=hide][value="databases"]')
    assert not cell.is_visible()
    assert page.locator('#leaderboard tbody td[data-group="hardness"]').first.is_visible()
    assert query(page) == {"hide": ["databases"]}
    page.uncheck('input[name=hide][value="databases"]')
    assert cell.is_visible()
    assert query(page) == {"hide": ["none"]}


def test_the_groups_come_folded_and_one_click_unfolds_them(page):
    cells = [
        page.locator(f'#leaderboard tbody td[data-group="{group}"]').first
        for group in ("databases", "hardness", "tags")
    ]
    assert not any(cell.is_visible() for cell in cells) and page.is_visible("#folded-groups")
    page.click("#unfold")
    assert all(cell.is_visible() for cell in cells) and not page.is_visible("#folded-groups")
    assert query(page) == {"hide": ["none"]}
    page.check('input[name=hide][value="databases"]')
    page.check('input[name=hide][value="hardness"]')
    page.check('input[name=hide][value="tags"]')
    assert query(page) == {}  # the default again: one address for it
    # The row of group headings shows while a group does, and no empty row is left once none does.
    assert page.is_visible("#leaderboard tr.groups")
    page.check('input[name=hide][value="spider"]')
    assert not page.is_visible("#leaderboard tr.groups")


def test_the_charts_are_drawn(page):
    chart_drawn(page, "databases-chart")
    chart_drawn(page, "progress-chart")


def test_a_first_visit_sorts_the_table_before_plotly_arrives(page, browser, live_server):
    """What the first visit weighs, plotly.js included: tests/e2e/test_newcomer_path.py."""
    visitor = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    held = []  # plotly.js, held back until the table has been read and sorted
    visitor.route("**/vendor/plotly*", lambda route: held.append(route))
    visitor.goto(f"{live_server.url}/leaderboard/")
    assert visible_names(visitor) == ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]
    visitor.click('th[data-key="model_name"] a:not(.about)')
    assert visible_names(visitor) in (sorted(visible_names(visitor)), sorted(visible_names(visitor))[::-1])
    assert visitor.evaluate("typeof window.Plotly") == "undefined"
    visitor.locator("#progress-chart").scroll_into_view_if_needed()
    for _ in range(200):  # Playwright hands over the held request only while it is driven
        if held:
            break
        visitor.wait_for_timeout(50)
    held[0].continue_()
    chart_drawn(visitor, "databases-chart")
    chart_drawn(visitor, "progress-chart")
    visitor.context.close()


def test_a_rank_says_which_rows_are_better_on_hover_and_on_keyboard_focus(page):
    """Delta (5 right of 23) is shown worse than the three others, which no test tells apart."""
    delta = page.locator("#leaderboard tbody tr", has_text="Delta").locator(".rank-why")
    assert delta.inner_text() == "4"
    why = delta.get_attribute("title")
    assert why.startswith("Significantly better: ") and all(name in why for name in ("Alfa", "Beta", "Gamma"))
    page.keyboard.press("Tab")  # a real keyboard focus, so that :focus-visible applies
    delta.focus()
    assert delta.evaluate("el => getComputedStyle(el, '::after').content") == f'"{why}"'
    alfa = page.locator("#leaderboard tbody tr", has_text="Alfa").locator(".rank-why")
    assert alfa.get_attribute("title") == "No row is significantly better."
