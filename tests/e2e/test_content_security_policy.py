"""In a real browser, issue 26: every page a visitor, a participant and staff reach loads under the
Content-Security-Policy with no violation, and its scripts still work under it.

Violations are collected twice: the `securitypolicyviolation` events a page fires (listened to before any
of its scripts runs) and Chromium's console messages. On every page an inline script is tried as well: the
policy must stop it, which shows the page is under the policy at all."""

from __future__ import annotations

import base64
import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.errata import erratum_report
from tests.browser import chart_drawn
from tests.factories import run_make
from tests.leaderboard.scored import scored_fields
from tests.processes import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.processes]

DESKTOP = {"width": 1280, "height": 800}

COLLECT_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", function (event) {
  window.cspViolations.push(
    event.effectiveDirective + " refused " + (event.blockedURI || "?") + " at " + event.sourceFile + ":" + event.lineNumber
  );
});
"""
# What an injected inline script would do; under the policy it never runs. Chromium names the refused
# script by its hash: so the console's report of this one is told from any other.
INLINE_SCRIPT = "window.inlineScriptRan = true;"
INLINE_SCRIPT_HASH = base64.b64encode(hashlib.sha256(INLINE_SCRIPT.encode()).digest()).decode()
TRY_INLINE_SCRIPT = f"""() => {{
  const script = document.createElement("script");
  script.textContent = "{INLINE_SCRIPT}";
  document.body.appendChild(script);
  return window.inlineScriptRan === true;
}}"""
BROWSER_COMPLAINTS = ("Content Security Policy", "Content-Security-Policy", "Permissions-Policy")


class Visit:
    """A browser of one kind of visitor: the pages it saw, with what each reported against the policy."""

    def __init__(self, browser, portal: str):
        self.portal = portal
        self.context = browser.new_context(locale="en-GB", viewport=DESKTOP)
        self.context.add_init_script(COLLECT_VIOLATIONS)
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.console: list[str] = []
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.violations: dict[str, list[str]] = {}
        self.inline_ran: list[str] = []

    def _console(self, message) -> None:
        if (
            any(word in message.text for word in BROWSER_COMPLAINTS)
            and INLINE_SCRIPT_HASH not in message.text
        ):
            self.console.append(f"{self.page.url}: {message.text}")

    def open(self, path: str, *, drawn: str | None = None) -> None:
        response = self.page.goto(f"{self.portal}{path}")
        assert response is not None and response.ok, (path, response and response.status)
        if drawn:
            chart_drawn(self.page, drawn)
        self.record(path)

    def record(self, path: str) -> None:
        """What the page reported so far, then the inline script that must not run."""
        self.page.wait_for_load_state("load")
        self.violations[path] = self.page.evaluate("window.cspViolations.splice(0)")
        if self.page.evaluate(TRY_INLINE_SCRIPT):
            self.inline_ran.append(path)
        else:  # refused, and reported: that report is the probe's own. (Polled from here: Playwright's
            # wait_for_function evaluates its predicate with eval(), which the policy refuses.)
            wait_for(
                lambda: self.page.evaluate("window.cspViolations.length > 0"), seconds=10, what="the report"
            )
            self.page.evaluate("window.cspViolations.splice(0)")

    def log_in(self, username: str, password: str) -> None:
        self.page.goto(f"{self.portal}/accounts/login/")
        self.page.fill("#id_username", username)
        self.page.fill("#id_password", password)
        self.page.click("form.card button:has-text('Log in')")
        self.page.wait_for_url("**/accounts/profile/")

    def assert_clean(self) -> None:
        assert self.violations and self.violations == {path: [] for path in self.violations}
        assert self.console == []
        assert self.inline_ran == []
        assert self.errors == []
        self.context.close()


@pytest.fixture
def site(live_portal, demo_version, owner, staff, make_submission, make_team):
    """Something on every page: scored public submissions in a team, a protocol run, an erratum."""
    from leaderboard.services import leaderboard_changed

    now = timezone.now()
    team = make_team("Gruppo NLP")
    first, second = (
        make_submission(
            model_name=name, team=team, model_size=size, created_at=now - timedelta(days=days),
            **scored_fields(correct),
        )
        for name, size, correct, days in (("Modello grande", "70B", 20, 3), ("Modello piccolo", "7B", 12, 2))
    )  # fmt: skip
    leaderboard_changed(version=demo_version)
    question = demo_version.questions.first()
    erratum_report(reporter=owner, question=question, description="La domanda è ambigua.")
    staff.is_superuser = True
    staff.save()
    return {
        "portal": live_portal,
        "version": demo_version,
        "team": team,
        "first": first,
        "second": second,
        "run": run_make(user=owner, version=demo_version),
        "question": question,
        "report": demo_version.reports.first(),
    }


def test_a_visitors_pages_load_under_the_policy_and_their_scripts_work(site, browser):
    first, second = site["first"].pk, site["second"].pk
    visit = Visit(browser, site["portal"])
    for path in ("/", "/about/", "/metrics/", "/changelog/", "/errata/", "/leaderboard/compare/"):
        visit.open(path)
    for path in ("/accounts/login/", "/accounts/signup/", "/accounts/password/reset/", "/admin/login/"):
        visit.open(path)
    visit.open(f"/teams/{site['team'].slug}/")
    visit.open(f"/submissions/{first}/", drawn="results-chart")
    visit.open(f"/leaderboard/compare/?a={first}&b={second}", drawn="compare-chart")

    page = visit.page
    visit.open("/leaderboard/", drawn="databases-chart")
    chart_drawn(page, "progress-chart")
    # plotly.js's own style rules are in, written through the CSSOM into the sheet the page gave it.
    assert page.evaluate("document.getElementById('plotly.js-style-global').sheet.cssRules.length") > 0
    assert page.get_attribute("#filters-toggle", "open") is not None  # unfolded where there is room
    page.click("th[data-key='ea'] a:not(.about)")
    assert page.get_attribute("th[data-key='ea']", "aria-sort") == "descending"
    page.select_option("#leaderboard-filters select[name=size]", "7B")
    assert page.locator("#leaderboard tbody tr:not([hidden])").count() == 1
    page.check("#leaderboard-filters input[name=hide][value=databases]")
    assert "hide-databases" in page.get_attribute("#leaderboard", "class")
    visit.record("/leaderboard/ (sorted, filtered)")

    # The language menu switches at once, with no button.
    page.select_option("#language", "it")
    page.wait_for_selector("html[lang=it]")
    visit.record("/leaderboard/ (in Italian)")
    visit.assert_clean()


def test_a_participants_pages_load_under_the_policy_and_their_scripts_work(site, browser, owner, password):
    version, run = site["version"], site["run"]
    visit = Visit(browser, site["portal"])
    visit.log_in(owner.username, password)
    for path in (
        "/accounts/profile/",
        "/accounts/password/change/",
        "/accounts/teams/",
        f"/accounts/teams/{site['team'].slug}/",
        "/benchmark/",
        f"/benchmark/{version.label}/",
        f"/benchmark/{version.label}/biblioteca/",
        "/submissions/",
        "/submissions/new/",
        "/errata/new/",
        "/errata/mine/",
        "/runs/",
        "/runs/new/",
        f"/runs/{run.pk}/",
    ):
        visit.open(path)

    page = visit.page
    mine = site["first"]
    visit.open(f"/submissions/{mine.pk}/", drawn="results-chart")
    # Withdrawing asks first; saying no leaves the submission as it was.
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.click("button:has-text('Withdraw')")
    assert asked == ["Withdraw this submission?"]
    mine.refresh_from_db()
    assert mine.status == "scored"
    visit.record(f"/submissions/{mine.pk}/ (withdraw declined)")
    visit.assert_clean()


def test_staffs_pages_and_the_admin_load_under_the_policy_and_their_scripts_work(
    site, browser, staff, password
):
    label = site["version"].label
    visit = Visit(browser, site["portal"])
    visit.log_in(staff.username, password)
    for path in (
        "/staff/",
        f"/staff/versions/{label}/",
        f"/staff/versions/{label}/probing/",
        f"/staff/versions/{label}/rescore/",
        "/staff/errata/",
        f"/staff/questions/{site['question'].pk}/errata/",
        f"/staff/reports/{site['report'].pk}/",
        "/admin/",
        "/admin/evaluation/question/",
        f"/admin/evaluation/question/{site['question'].pk}/change/",
        "/admin/accounts/user/",
        "/admin/accounts/user/add/",
        f"/admin/leaderboard/submission/{site['first'].pk}/change/",
        "/admin/rq/",
        "/admin/django_rq/dashboard/",
    ):
        visit.open(path)

    # The admin's own scripts work: selecting every row for an action.
    page = visit.page
    visit.open("/admin/leaderboard/submission/")
    page.check("#action-toggle")
    assert page.locator("input.action-select:checked").count() == 2
    visit.record("/admin/leaderboard/submission/ (all selected)")
    visit.assert_clean()


def test_the_portal_serving_these_pages_reports_itself_healthy_with_its_worker(live_portal, page):
    """/healthz as a load balancer reads it, with a real worker beating its heartbeat (tests/e2e/conftest.py)."""
    wait_for(lambda: page.request.get(f"{live_portal}/healthz").ok, seconds=60, what="a healthy portal")
    health = page.request.get(f"{live_portal}/healthz").json()
    assert health["failing"] == [] and health["workers"] == health["queues"] == {"status": "ok"}
