"""In a real browser, issue 29: a newcomer's whole path through the portal on a phone, then every page of the
site map on a phone as each kind of visitor, and a first visit to the leaderboard at 1280 px.

- At 390 x 844 no page scrolls sideways (the document is no wider than the window): each page of the path,
  and every page of the site map (tests/site_map.py: every URL pattern of the URLconf, filled with the ids
  the path made) as an anonymous visitor, as the newcomer and as staff.
- At 1280 x 800 the leaderboard's default columns all fit without scrolling (the groups per database and
  per hardness come folded; tests/e2e/test_screens_and_accessibility.py unfolds them).
- A first visit to the leaderboard, with an empty cache, that scrolls down to its charts (which fetch
  plotly.js when they near the view) transfers at most 1.5 MB in all: every response's headers and body.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import expect

from evaluation.errata import erratum_report
from evaluation.models import DatabaseImport
from leaderboard.models import RunExchange, Submission
from termite_site.accounts.models import User
from tests.browser import chart_drawn, log_in
from tests.demo import EXPECTED_DIFFERENCES, PUBLIC_CARD, demo_gold, practice_file, predictions_jsonl
from tests.factories import run_make
from tests.site_map import SiteRoute, site_routes

pytestmark = [pytest.mark.browser, pytest.mark.processes]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
FIRST_VISIT_BYTES = 1_500_000
NEWCOMER, PASSWORD = "giulia", "una-passphrase-lunga-17"
MODEL_NAME = "Modello della nuova arrivata"


@dataclass
class Widths:
    """The pages checked, by the browser page they were open in, and those found wider than their window,
    each with its URL, viewport and width: every one of them is named when the test fails."""

    checked: set[tuple[object, str]] = field(default_factory=set)
    too_wide: list[str] = field(default_factory=list)

    def check(self, page) -> None:
        page.wait_for_load_state()  # a click's navigation may still be under way
        width, window = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        self.checked.add((page, page.url))
        if width > window:
            size = page.viewport_size
            self.too_wide.append(f"{page.url} at {size['width']}x{size['height']}: {width} px wide")


@dataclass(frozen=True)
class Answer:
    """What a route answered one visitor."""

    status: int
    html: bool

    @property
    def redirect(self) -> bool:
        return 300 <= self.status < 400

    @property
    def reached(self) -> bool:
        """More than a redirect or a refusal: a page, a file, an answer in JSON, a method refused (an action)."""
        return not self.redirect and self.status not in (403, 404)

    @property
    def page(self) -> bool:
        return self.html and self.status != 405 and not self.redirect


def new_page(browser, viewport, errors: list[str]):
    """A page of a fresh browser context (its own cookies and an empty cache), its script errors kept."""
    page = browser.new_context(locale="en-GB", viewport=viewport, accept_downloads=True).new_page()
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
    return page


def fill_form(page, fields: dict[str, str]) -> None:
    for name, value in fields.items():
        field_ = page.locator(f"#id_{name}")
        if field_.evaluate("element => element.tagName") == "SELECT":
            field_.select_option(value)
        else:
            field_.fill(value)


def walk_the_newcomers_path(page, portal: str, widths: Widths, confirmation_links, tmp_path, others) -> dict:
    """From the home page to an API token, as a newcomer would go, checking each page's width on the way:
    what the path made (the ids of the site map's pages)."""
    page.goto(portal)
    widths.check(page)
    page.click("nav >> text=Sign up")
    fill_form(
        page, {"username": NEWCOMER, "email": f"{NEWCOMER}@example.org", "affiliation": "Università di Pisa"}
    )
    fill_form(page, {"password1": PASSWORD, "password2": PASSWORD})
    widths.check(page)
    page.click("button:has-text('Sign up')")
    page.wait_for_url("**/accounts/profile/")
    widths.check(page)

    (link,) = confirmation_links(f"{NEWCOMER}@example.org")
    page.goto(link)
    page.click("#confirmation button:has-text('Confirm')")
    page.wait_for_selector("#confirmation[data-state='confirmed']")
    widths.check(page)

    page.click("button:has-text('Log out')")
    page.click("nav >> text=Log in")
    fill_form(page, {"username": NEWCOMER, "password": PASSWORD})
    widths.check(page)
    page.click("form.card button:has-text('Log in')")
    page.wait_for_url("**/accounts/profile/")

    page.click("nav >> text=Benchmark")
    widths.check(page)
    page.click("text=Termite demo demo-1.0")
    widths.check(page)
    with page.expect_download() as download:
        page.click("text=Download the task bundle")
    questions = zipfile.ZipFile(download.value.path()).read("questions.jsonl").decode().splitlines()
    assert len(questions) == len(demo_gold())
    page.click("a[href$='/biblioteca/']")
    assert page.locator("table").first.is_visible()  # the database's questions
    widths.check(page)

    predictions = tmp_path / "predictions.jsonl"
    predictions.write_bytes(predictions_jsonl(demo_gold()))
    page.goto(f"{portal}/submissions/new/")
    page.set_input_files("#id_predictions", str(predictions))
    fill_form(page, {"model_name": MODEL_NAME, **PUBLIC_CARD})
    page.check("#id_is_public")
    widths.check(page)
    page.click("button:has-text('Upload and score')")
    page.wait_for_url("**/submissions/*/")
    page.wait_for_selector("#ea", timeout=60_000)
    # The headline first: the status, then EA with its interval, then how the predictions were made.
    assert page.inner_text("#status") == "scored" and page.inner_text("#ea") == "100.0"
    assert page.inner_text("#ea-ci95").startswith("(95% CI")
    tops = [page.locator(f"#{part}").bounding_box()["y"] for part in ("status-card", "scores", "model-card")]
    assert tops == sorted(tops), tops
    widths.check(page)
    submission = Submission.objects.get(model_name=MODEL_NAME)

    page.click("nav >> text=Leaderboard")
    expect(page.locator("#leaderboard tbody tr:not([hidden]) td.model", has_text=MODEL_NAME)).to_be_visible()
    widths.check(page)

    page.goto(f"{portal}/accounts/teams/")
    page.fill("#id_name", "Gruppo Pisa")
    widths.check(page)
    page.click("button:has-text('Create team')")
    page.wait_for_url("**/accounts/teams/gruppo-pisa/")
    page.click("button:has-text('Create an invitation link')")
    invitation_link = page.inner_text("#new-link").strip()
    widths.check(page)
    page.goto(f"{portal}/teams/gruppo-pisa/")
    assert "Gruppo Pisa" in page.inner_text("h1")
    widths.check(page)

    page.goto(f"{portal}/leaderboard/compare/")
    widths.check(page)
    page.select_option("#compare-form select[name=a]", str(submission.pk))
    page.select_option("#compare-form select[name=b]", str(others[0].pk))
    page.click("#compare-form button:has-text('Compare')")
    chart_drawn(page, "compare-chart")
    widths.check(page)

    for name in ("Metrics", "About"):
        page.click(f"nav >> text={name}")
        widths.check(page)

    page.click(f"nav >> text={NEWCOMER}")
    page.fill("form[action$='/accounts/tokens/'] input[name=name]", "script del gruppo")
    page.click("button:has-text('Create token')")
    assert page.inner_text("#new-token").strip()
    widths.check(page)

    newcomer = User.objects.get(username=NEWCOMER)
    team = newcomer.teams.get()
    return {
        "newcomer": newcomer,
        "submission": submission,
        "team": team,
        "token": newcomer.api_tokens.get(),
        "invitation": team.invitations.get(),
        "confirmation_token": link.rstrip("/").rsplit("/", 1)[1],
        "invitation_token": invitation_link.rstrip("/").rsplit("/", 1)[1],
    }


def site_map_ids(made: dict, version) -> dict[str, dict[str, object]]:
    """The ids each route of the site map is filled with, by its name: every route's parameters have one,
    so that a new route with a parameter of a new name fails here until the test gives it an id."""
    question = version.questions.order_by("pk").first()
    run = run_make(user=made["newcomer"], version=version, transcript_sha256="ab" * 32)
    RunExchange.objects.create(
        run=run, database="biblioteca", question_id=question.public_id, kind="question", attempt=1,
        request=[{"role": "user", "content": question.text}],
        answer="```sql\nSELECT titolo, anno_pubblicazione FROM libri WHERE anno_pubblicazione > 2000\n```",
        sql="SELECT titolo, anno_pubblicazione FROM libri WHERE anno_pubblicazione > 2000", ok=True,
    )  # fmt: skip
    erratum = erratum_report(
        reporter=made["newcomer"], question=question, description="La domanda è ambigua."
    )
    # A job that adds a database to a draft, done: its page shows its steps and its report.
    database_import = DatabaseImport.objects.create(
        version=version, slug="officina", state=DatabaseImport.State.DONE, percent=100
    )
    common = {
        "label": version.label,
        "slug": made["team"].slug,
        "pk": made["submission"].pk,
        "id": made["submission"].pk,
        "token_id": made["token"].pk,
        "invitation_id": made["invitation"].pk,
        "user_id": made["newcomer"].pk,
        # An invalid reset link: a valid one signs the newcomer's password hash, which no page shows.
        "uidb64": "MQ",
        "token": "set-password",
    }
    by_name_prefix = {
        "evaluation:database_detail": {"slug": "biblioteca"},
        "staff:database_schema": {"slug": "biblioteca"},
        "accounts:email_confirm": {"token": made["confirmation_token"]},
        "accounts:team_join": {"token": made["invitation_token"]},
        "leaderboard:run_": {"pk": run.pk},
        "api:run_": {"id": run.pk},
        "staff:question_": {"pk": question.pk},
        "staff:report": {"pk": version.reports.first().pk},
        "staff:erratum_": {"pk": erratum.pk},
        "staff:database_import": {"pk": database_import.pk},
    }
    ids = {}
    for route in site_routes():
        overrides = [given for prefix, given in by_name_prefix.items() if route.name.startswith(prefix)]
        ids[route.name] = {**common, **{key: value for given in overrides for key, value in given.items()}}
    return ids


def walk_the_site_map(pages: dict[str, object], portal: str, ids, widths: Widths) -> dict[SiteRoute, dict]:
    """Every route of the site map, asked for by each visitor in turn (`pages`: a page of their browser, by
    who they are, the least privileged first) until one of them reaches it: what it answered each. An
    answer in HTML, but for a redirect or a refused method (an action, POST only), is a page: it is opened
    in the visitor's browser and its width checked, unless it was already. So each page is checked as the
    first visitor who may see it: anonymous pages anonymously, a participant's as the newcomer, staff's as
    staff. A refusal (403, 404) is checked once: the site's one page for it, whatever the route."""
    answers: dict[SiteRoute, dict[str, Answer]] = {}
    refusals_checked: set[int] = set()
    for route in site_routes():
        path = route.path(ids[route.name])
        assert path is not None, f"{route.name} ({route.route}): no id for {route.parameters}"
        url, answers[route] = f"{portal}{path}", {}
        for visitor, page in pages.items():
            response = page.context.request.get(url, max_redirects=0)
            html = response.headers.get("content-type", "").startswith("text/html")
            answer = answers[route][visitor] = Answer(response.status, html)
            refusal_seen = answer.status in refusals_checked
            if answer.page and (page, url) not in widths.checked and not refusal_seen:
                refusals_checked.update({answer.status} & {403, 404})
                page.goto(url)
                widths.check(page)
            if answer.reached:
                break
    return answers


def first_visit(browser, portal: str, errors: list[str]) -> tuple[int, dict[str, int], dict[str, int]]:
    """A first visit to the leaderboard at 1280 px, with an empty cache, scrolling down past every chart:
    the bytes each response took (headers and body), and how wide the table is, its box, the document and
    the window, and where its last column shown ends."""
    page = new_page(browser, DESKTOP, errors)
    sizes: dict[str, int] = {}

    def count(request) -> None:
        sent = request.sizes()
        sizes[request.url] = (
            sizes.get(request.url, 0) + sent["responseHeadersSize"] + sent["responseBodySize"]
        )

    page.on("requestfinished", count)
    page.goto(f"{portal}/leaderboard/")
    table = page.evaluate(
        """() => {
          const box = document.querySelector('.table-scroll:has(> #leaderboard)');
          const shown = [...document.querySelectorAll('#leaderboard thead th')].filter(th => th.offsetParent);
          return {
            table: box.scrollWidth, box: box.clientWidth,
            document: document.documentElement.scrollWidth, window: innerWidth,
            last_column_ends: Math.max(...shown.map(th => th.getBoundingClientRect().right)),
          };
        }"""
    )
    assert page.is_visible("#unfold")  # the groups come folded, one link away
    charts = page.eval_on_selector_all("[id$='-chart']", "charts => charts.map(chart => chart.id)")
    for chart in charts:  # as a reader scrolling down would bring each into view
        chart_drawn(page, chart)
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_load_state("networkidle")
    page.context.close()
    return sum(sizes.values()), sizes, table


def test_a_newcomers_path_and_the_whole_site_map_fit_a_phone_and_a_first_leaderboard_visit_fits_1280_px_in_1_5_mb(
    ranked, browser, staff, password, confirmation_links, tmp_path, demo_version
):
    portal, submissions = ranked
    widths, errors = Widths(), []
    newcomer = new_page(browser, PHONE, errors)
    made = walk_the_newcomers_path(newcomer, portal, widths, confirmation_links, tmp_path, submissions)

    staff_page = new_page(browser, PHONE, errors)
    log_in(staff_page, portal, staff.username, password)
    visitors = {"anonymous": new_page(browser, PHONE, errors), "newcomer": newcomer, "staff": staff_page}
    answers = walk_the_site_map(visitors, portal, site_map_ids(made, demo_version), widths)
    for page in visitors.values():
        page.context.close()

    total, sizes, table = first_visit(browser, portal, errors)

    assert widths.too_wide == []
    seen = {
        visitor: {
            route.name
            for route, by_visitor in answers.items()
            if by_visitor.get(visitor) == Answer(200, True)
        }
        for visitor in visitors
    }
    # Three kinds of visitor indeed: only a participant uploads, only staff see the staff pages.
    assert "leaderboard:submission_new" in seen["newcomer"] - seen["anonymous"]
    assert "staff:home" in seen["staff"] - seen["newcomer"]
    # Every route is reached by someone. One that every visitor is refused, is not found by, or is sent to log
    # in by lacks a real id here, and would go unchecked; a logged-in visitor sent elsewhere is the route's
    # answer (the language form's address asked for without the form, say).
    unreached = {
        route.name: {visitor: answer.status for visitor, answer in by_visitor.items()}
        for route, by_visitor in answers.items()
        if not any(
            answer.reached or (answer.redirect and visitor != "anonymous")
            for visitor, answer in by_visitor.items()
        )
    }
    assert unreached == {}
    failing = [
        route.name for route, by_visitor in answers.items() if Answer(500, True) in by_visitor.values()
    ]
    assert failing == []
    assert (
        table["table"] <= table["box"]
        and table["document"] <= table["window"]
        and table["last_column_ends"] <= table["window"]
    ), f"{portal}/leaderboard/ at 1280x800: its default columns do not all fit: {table} (px)"
    assert any("plotly-basic" in url for url in sizes), sorted(sizes)
    assert total <= FIRST_VISIT_BYTES, f"a first visit to /leaderboard/ transfers {total} bytes: {sizes}"
    assert errors == []


def test_on_the_practice_demo_a_newcomer_sees_each_question_in_full_and_every_page_fits_a_phone(
    live_portal, practice_demo, browser, owner, password, tmp_path
):
    """The demo a new portal loads is a practice version: its database pages show the gold, and an upload
    comes back, as soon as it is scored, with each question in full (the query as it ran, both results' first
    rows, why they differ), all of it within a phone's width."""
    widths, errors = Widths(), []
    page = new_page(browser, PHONE, errors)
    log_in(page, live_portal, owner.username, password)
    page.goto(f"{live_portal}{practice_demo.databases.get(slug='biblioteca').get_absolute_url()}")
    assert (
        page.locator("code.sql.gold").count()
        == practice_demo.questions.filter(database__slug="biblioteca").count()
    )
    widths.check(page)

    predictions = tmp_path / "practice.jsonl"
    predictions.write_bytes(predictions_jsonl(practice_file(demo_gold())))
    page.goto(f"{live_portal}/submissions/new/")
    page.set_input_files("#id_predictions", str(predictions))
    page.fill("#id_model_name", "Prova sulla demo")
    page.click("button:has-text('Upload and score')")
    page.wait_for_url("**/submissions/*/")
    page.wait_for_selector("#practice-questions", timeout=60_000)
    widths.check(page)
    for question_id in EXPECTED_DIFFERENCES:
        details = page.locator(f"#q-{question_id}")
        assert details.get_attribute("open") is not None  # a wrong answer comes unfolded
        expect(details.locator("pre.sql-run")).to_be_visible()
        expect(details.locator("table.rows.gold")).to_be_visible()
    page.click("#q-biblioteca-001 summary")  # the right one comes folded: open it too
    expect(page.locator("#q-biblioteca-001 table.rows.mine")).to_be_visible()
    widths.check(page)
    assert widths.too_wide == [] and errors == []
