"""In a real browser, issue 18: the leaderboard is readable at 1280 px and on a phone, and axe-core finds no
serious accessibility violation on the pages a participant sees (the leaderboard they use, `ranked`, is in
tests/e2e/conftest.py; every page of the site map on a phone: tests/e2e/test_newcomer_path.py).

Screenshots of the leaderboard at both widths go to var/screenshots/ (a CI artefact)."""

from __future__ import annotations

from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe

from leaderboard.models import Submission
from tests.browser import chart_drawn, log_in
from tests.leaderboard.scored import scored_fields
from tests.processes import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.processes]

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# axe-core's impact levels are minor, moderate, serious and critical.
BLOCKING = {"serious", "critical"}


def new_page(browser, viewport, **options):
    context = browser.new_context(locale="en-GB", viewport=viewport, **options)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors


def in_viewport(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= size["width"]
        and box["y"] + box["height"] <= size["height"]
    )


def first_screen(page, full: Path) -> None:
    """Beside the whole page's screenshot, what the first screen shows."""
    page.screenshot(path=str(full.with_name(f"{full.stem}-first-screen.png")))


SCROLL = "document.getElementById('leaderboard').parentElement"


def until(page, expression: str) -> None:
    """Wait until `expression` holds in the page. Polled from here: Playwright's wait_for_function evaluates
    its predicate with eval(), which the site's Content-Security-Policy refuses."""
    wait_for(lambda: page.evaluate(expression), seconds=30, what=expression)


def scroll_to(page, left: str) -> None:
    """Scroll the table's box to `left` (a JavaScript expression of `el`), again until it stays there: the
    arrow key's smooth scrolling may still be under way."""
    until(
        page,
        f"(el => {{ el.scrollLeft = {left}; return Math.abs(el.scrollLeft - ({left})) < 1; }})({SCROLL})",
    )


FIRST_EA = "#leaderboard tbody tr:not([hidden]) >> nth=0 >> td >> nth=4"


def test_at_1280_px_the_first_rows_ea_is_in_view_and_every_column_is_reachable(ranked, browser, screenshot):
    portal, _ = ranked
    page, errors = new_page(browser, DESKTOP)
    page.goto(f"{portal}/leaderboard/")
    assert page.locator("#leaderboard thead th[data-key='ea']").inner_text().startswith("EA")
    assert in_viewport(page, FIRST_EA)
    assert page.is_visible("#leaderboard-filters select[name=weights]")  # the filters are open here
    # The default columns all fit: the groups per database and per hardness come folded.
    scroll = page.locator(".table-scroll:has(> #leaderboard)")
    assert scroll.evaluate("el => el.scrollWidth <= el.clientWidth")
    assert in_viewport(page, "#leaderboard thead th[data-key='spider_gap']")  # the last one shown
    first_screen(page, screenshot(page, "leaderboard-1280-folded"))

    # Unfolded, the table scrolls inside its own container, which the keyboard can reach and which has a name.
    page.click("#unfold")
    assert scroll.get_attribute("tabindex") == "0" and scroll.get_attribute("role") == "region"
    assert scroll.evaluate("el => el.scrollWidth > el.clientWidth")
    last = page.locator("#leaderboard thead tr:last-child th:last-child")
    assert not in_viewport(page, "#leaderboard thead tr:last-child th:last-child")
    scroll.focus()
    page.keyboard.press("ArrowRight")  # the keyboard scrolls it
    until(page, f"{SCROLL}.scrollLeft > 0")
    scroll_to(page, "el.scrollWidth - el.clientWidth")
    assert last.is_visible() and in_viewport(page, "#leaderboard thead tr:last-child th:last-child")
    # Rank and model stay in place while the rest scrolls under them.
    assert in_viewport(page, "#leaderboard tbody tr >> nth=0 >> td.model")
    # Not hidden under the model either: the rank column ends where the model column starts.
    rank, model = (
        page.locator(f"#leaderboard tbody tr >> nth=0 >> td >> nth={i}").bounding_box() for i in (0, 1)
    )
    assert rank["x"] + rank["width"] <= model["x"] + 1
    scroll_to(page, "0")
    scroll.blur()
    first_screen(page, screenshot(page, "leaderboard-1280"))
    assert not errors, errors


def test_on_a_phone_the_filters_fold_away_and_the_ranking_is_on_the_first_screen(ranked, browser, screenshot):
    portal, _ = ranked
    page, errors = new_page(browser, PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    page.goto(f"{portal}/leaderboard/")
    assert not page.is_visible("#leaderboard-filters select[name=weights]")
    assert in_viewport(page, FIRST_EA)
    assert in_viewport(page, "#leaderboard tbody tr >> nth=0 >> td.model")
    first_screen(page, screenshot(page, "leaderboard-390"))
    # Unfolded, the filters work as before.
    page.click("#filters-toggle summary")
    page.select_option("#leaderboard-filters select[name=size]", "70B")
    assert page.locator("#leaderboard tbody tr:not([hidden])").count() == 1
    assert not errors, errors


def test_without_javascript_a_phone_still_reaches_the_ranking_first(ranked, browser):
    portal, _ = ranked
    page, _ = new_page(browser, PHONE, java_script_enabled=False, is_mobile=True)
    page.goto(f"{portal}/leaderboard/")
    assert not page.is_visible("#leaderboard-filters select[name=weights]")
    assert in_viewport(page, FIRST_EA)
    page.click("#filters-toggle summary")
    assert page.is_visible("#leaderboard-filters select[name=weights]")


def test_sorting_in_the_browser_moves_aria_sort(ranked, browser):
    portal, _ = ranked
    page, errors = new_page(browser, DESKTOP)
    page.goto(f"{portal}/leaderboard/")
    assert page.get_attribute("th[data-key='rank']", "aria-sort") == "ascending"
    page.click("th[data-key='ea'] a:not(.about)")
    assert page.get_attribute("th[data-key='ea']", "aria-sort") == "descending"
    assert page.get_attribute("th[data-key='rank']", "aria-sort") == "none"
    assert not errors, errors


def test_the_charts_have_their_numbers_as_a_table(ranked, browser):
    portal, _ = ranked
    page, _ = new_page(browser, DESKTOP)
    page.goto(f"{portal}/leaderboard/")
    figure = page.locator("figure:has(#databases-chart)")
    assert figure.locator("figcaption").inner_text().startswith("EA per database")
    numbers = figure.locator("table")
    assert numbers.locator("th[scope=col]").count() >= 2
    # The first system answers 12 of 12 on biblioteca: 100.0 in the chart, and in its table.
    assert "100.0" in numbers.text_content()
    assert page.locator("figure:has(#progress-chart) table tbody tr").count() >= 1


def serious_violations(page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[node['target'] for node in v['nodes']][:5]}"
        for v in results.response["violations"]
        if v["impact"] in BLOCKING
    ]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_axe_finds_no_serious_violation_on_the_participants_pages(ranked, browser, owner, password, viewport):
    portal, submissions = ranked
    first, second = submissions[0].pk, submissions[1].pk
    page, errors = new_page(browser, viewport)
    pages = {
        "home": ("/", None),
        "leaderboard": ("/leaderboard/", "databases-chart"),
        "results": (f"/submissions/{first}/", "results-chart"),
        "compare": (f"/leaderboard/compare/?a={first}&b={second}", "compare-chart"),
        "compare-form": ("/leaderboard/compare/", None),
    }
    found = {}
    for name, (path, drawn) in pages.items():
        page.goto(f"{portal}{path}")
        if drawn:
            chart_drawn(page, drawn)
        found[name] = serious_violations(page)
    log_in(page, portal, owner.username, password)
    page.goto(f"{portal}/submissions/new/")
    found["upload"] = serious_violations(page)
    assert found == {name: [] for name in found}
    assert not errors, errors


SHA256 = "5e1f" + "0123456789abcdef" * 3 + "c0ffee5e1f00"
COPY_SHA256 = "Copy the sha256 of the predictions file"


@pytest.fixture
def long_named(ranked, make_submission):
    """Two more ranked systems with names as long as an upload may give: one without a space, one with."""
    from leaderboard.services import leaderboard_changed

    portal, submissions = ranked
    longest = Submission._meta.get_field("model_name").max_length
    names = (("Termite" * longest)[:longest], " ".join(["modello"] * longest)[:longest])
    long = [
        make_submission(model_name=name, file_sha256=SHA256, **scored_fields(20 + i, ts=18))
        for i, name in enumerate(names)
    ]
    leaderboard_changed(version=submissions[0].version)
    return portal, long


def test_a_copy_button_copies_the_whole_hash_a_phone_shows_cut_short(long_named, browser):
    portal, (submission, _) = long_named
    page, errors = new_page(browser, PHONE, permissions=["clipboard-read", "clipboard-write"])
    page.goto(f"{portal}/submissions/{submission.pk}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shown = page.locator("#file-sha256")
    # Cut short on the screen, whole in the page.
    assert shown.evaluate("el => el.scrollWidth > el.clientWidth") and shown.text_content() == SHA256
    button = page.get_by_role("button", name=COPY_SHA256)
    # Beside the hash, on the screen.
    box, hash_box = button.bounding_box(), shown.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"] and box["x"] >= hash_box["x"] + hash_box["width"]
    assert abs((box["y"] + box["height"] / 2) - (hash_box["y"] + hash_box["height"] / 2)) < box["height"] / 2
    # The keyboard reaches it (in the tab order) and presses it.
    assert button.evaluate("el => el.tabIndex") == 0
    button.focus()
    page.keyboard.press("Enter")
    status = page.locator("#file-sha256 ~ [role=status]")
    until(page, "document.querySelector('#file-sha256 ~ [role=status]').textContent === 'Copied'")
    assert status.get_attribute("aria-live") == "polite" and status.is_visible()
    assert page.evaluate("navigator.clipboard.readText()") == SHA256
    assert not errors, errors


def test_where_the_clipboard_is_refused_the_copy_button_selects_the_hash(long_named, browser):
    portal, (submission, _) = long_named
    page, errors = new_page(browser, PHONE)
    # As on a page not served over HTTPS, or when the reader's browser denies the permission.
    page.add_init_script(
        "navigator.clipboard.writeText = () => Promise.reject(new DOMException('refused', 'NotAllowedError'))"
    )
    page.goto(f"{portal}/submissions/{submission.pk}/")
    page.get_by_role("button", name=COPY_SHA256).click()
    until(page, "document.querySelector('#file-sha256 ~ [role=status]').textContent.startsWith('Selected')")
    assert page.evaluate("window.getSelection().toString()") == SHA256
    assert not errors, errors


def lines(element) -> float:
    """How many lines an element shows: its height over its line height."""
    return element.evaluate("el => el.clientHeight / parseFloat(getComputedStyle(el).lineHeight)")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_a_very_long_model_name_takes_at_most_two_lines_of_the_leaderboard(long_named, browser, viewport):
    portal, submissions = long_named
    page, errors = new_page(browser, viewport)
    page.goto(f"{portal}/leaderboard/")
    for submission in submissions:
        name = page.locator(f"#leaderboard a.model-name[href$='/submissions/{submission.pk}/']")
        assert lines(name) <= 2.01
        assert name.evaluate("el => el.scrollHeight > el.clientHeight")  # it was cut: it is longer than that
        # Whole in its title, and to a screen reader.
        assert name.get_attribute("title") == submission.model_name
        assert page.get_by_role("link", name=submission.model_name, exact=True).count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert not errors, errors
