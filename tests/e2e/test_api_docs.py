"""In a real browser: the API's docs page draws every endpoint of the generated document from this site's
own files, under its Content-Security-Policy, and a researcher can try an endpoint from it; no request
leaves the portal."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.processes]

BROWSER_COMPLAINTS = ("Content Security Policy", "Content-Security-Policy", "Refused to")


def test_the_docs_draw_every_endpoint_from_the_site_alone_and_try_one(
    live_portal, browser, demo_version, screenshot
):
    context = browser.new_context(locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(30_000)
    requested, complaints, errors = [], [], []
    page.on("request", lambda request: requested.append(request.url))
    page.on("console", lambda message: complaints.append(message.text) if any(
        word in message.text for word in BROWSER_COMPLAINTS) else None)  # fmt: skip
    page.on("pageerror", lambda error: errors.append(str(error)))

    response = page.goto(f"{live_portal}/api/v1/docs")
    assert response is not None and response.ok
    document = page.request.get(f"{live_portal}/api/v1/openapi.json").json()
    operations = sum(len(methods) for methods in document["paths"].values())
    page.wait_for_selector(".opblock")
    assert page.locator(".opblock").count() == operations
    assert page.locator(".opblock-summary-path", has_text="/api/v1/versions/{label}/questions").count() == 1

    # Tried from the page: the public list of versions.
    versions = page.locator('.opblock-get:has(.opblock-summary-path[data-path="/api/v1/versions"])')
    versions.locator(".opblock-summary").click()
    versions.get_by_role("button", name="Try it out").click()
    versions.get_by_role("button", name="Execute").click()
    page.wait_for_selector(".live-responses-table tbody .response-col_status")
    assert (
        page.locator(".live-responses-table tbody .response-col_status").first.inner_text().strip() == "200"
    )
    assert "demo-1.0" in page.locator(".live-responses-table .microlight").first.inner_text()

    screenshot(page, "api-docs")
    portal = urlsplit(live_portal).netloc
    assert requested and {urlsplit(url).netloc for url in requested if not url.startswith("data:")} == {
        portal
    }
    assert complaints == [] and errors == []
    context.close()
