"""In a real browser: a participant starts a protocol run against an OpenAI-compatible server on
127.0.0.1, watches it progress, and sees it become a scored submission marked as run by the portal."""

from __future__ import annotations

import pytest

from leaderboard.models import ProtocolRun
from tests.leaderboard.protocol_runs import good_model
from tests.openai_stub import OpenAIStub
from tests.processes import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.processes]

# The module's portal (tests/e2e/conftest.py) may call endpoints on loopback, where the stub listens.
PORTAL_ENV = {"TERMITE_PROTOCOL_ALLOW_LOOPBACK": "1"}


def progress(page) -> int:
    """The bar's value; -1 while the page reloads itself."""
    try:
        return int(page.get_attribute("#progress", "value", timeout=2_000) or -1)
    except Exception:  # the page was between two loads
        return -1


def test_a_participant_runs_the_protocol_and_watches_it_become_a_marked_submission(
    live_portal, page, screenshot, django_user_model, demo_version
):
    version = demo_version
    django_user_model.objects.create_user(
        username="giulia", email="giulia@example.org", password="una-passphrase-lunga-17"
    )
    # Slow enough to be watched: 25 requests, two at a time, 0.8 s each.
    with OpenAIStub(good_model(version, delay=0.8)) as stub:
        page.goto(f"{live_portal}/accounts/login/")
        page.fill("#id_username", "giulia")
        page.fill("#id_password", "una-passphrase-lunga-17")
        page.click("form.card button:has-text('Log in')")
        page.wait_for_url("**/accounts/profile/")

        page.click("nav >> text=Runs")
        page.click("text=New run")
        page.fill("#id_endpoint_url", stub.url)
        page.fill("#id_api_key", "sk-browser-secret")
        page.fill("#id_model", "stub-model")
        page.select_option("#id_protocol", "termite-2turn-it/1")
        page.fill("#id_temperature", "0")
        page.fill("#id_concurrency", "2")
        page.fill("#id_model_name", "Modello via browser")
        page.fill("#id_model_size", "7B")
        page.select_option("#id_weights", "open")
        page.fill("#id_training_cutoff", "2024-09")
        page.check("#id_is_public")
        page.click("button:has-text('Start the run')")
        page.wait_for_url("**/runs/*/")

        # It refreshes itself while it runs: the bar and the counters move.
        page.wait_for_selector("#status:has-text('running')", timeout=60_000)
        assert page.get_attribute("#progress", "max") == "25"
        seen = progress(page)
        wait_for(lambda: progress(page) > seen, seconds=60, what="the progress bar to move")
        page.wait_for_selector("#status:has-text('finished')", timeout=60_000)
        assert page.inner_text("#tasks") == "25 / 25" and page.inner_text("#errors") == "0"
        assert page.inner_text("#key-state") == "none stored"  # deleted when the run ended, as asked
        assert len(stub.requests) == 25

    # The submission: scored like an upload, marked as the portal's run.
    page.click("#submission-link a")
    page.wait_for_selector("#ea", timeout=60_000)
    assert page.inner_text("#status") == "scored"
    assert page.inner_text("#ea") == "100.0"
    run = ProtocolRun.objects.get()
    assert page.inner_text("#portal-transcript-sha256") == run.transcript_sha256
    assert "termite-2turn-it/1" in page.inner_text("#portal-run") and "127.0.0.1" in page.inner_text(
        "#portal-run"
    )

    # On the leaderboard, with the mark, and through its filter.
    page.goto(f"{live_portal}/leaderboard/?portal_run=1")
    assert page.is_visible("tr:has-text('Modello via browser') .badge.portal-run")
    screenshot(page, "protocol-run-journey")
