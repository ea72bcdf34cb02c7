"""In a real browser: sign up, confirm the address, log in, download the bundle, upload, watch it get scored,
see the chart."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser import chart_drawn
from tests.demo import demo_gold, predictions_jsonl

pytestmark = [pytest.mark.browser, pytest.mark.processes]


def test_a_visitor_signs_up_submits_and_watches_the_results_arrive(
    live_portal, page, screenshot, tmp_path, confirmation_links
):
    page.goto(live_portal)
    page.click("text=Sign up")
    page.fill("#id_username", "giulia")
    page.fill("#id_email", "giulia@example.org")
    page.fill("#id_affiliation", "Università di Pisa")
    page.fill("#id_password1", "una-passphrase-lunga-17")
    page.fill("#id_password2", "una-passphrase-lunga-17")
    page.click("button:has-text('Sign up')")
    page.wait_for_url("**/accounts/profile/")

    # No upload before the address is confirmed: the upload page says so, and the mail holds the link.
    page.goto(f"{live_portal}/submissions/new/")
    assert page.is_visible("#email-confirmation") and not page.is_visible("#id_predictions")
    (link,) = confirmation_links("giulia@example.org")
    page.goto(link)
    page.click("#confirmation button:has-text('Confirm')")
    page.wait_for_selector("#confirmation[data-state='confirmed']")

    page.click("button:has-text('Log out')")
    page.click("text=Log in")
    page.fill("#id_username", "giulia")
    page.fill("#id_password", "una-passphrase-lunga-17")
    page.click("form.card button:has-text('Log in')")
    page.wait_for_url("**/accounts/profile/")

    page.click("nav >> text=Benchmark")
    page.click("text=Termite demo demo-1.0")
    with page.expect_download() as download:
        page.click("text=Download the task bundle")
    bundle = zipfile.ZipFile(download.value.path())
    questions = [json.loads(line) for line in bundle.read("questions.jsonl").decode().splitlines()]
    assert len(questions) == 23

    predictions = tmp_path / "predictions.jsonl"
    predictions.write_bytes(predictions_jsonl(demo_gold()))
    page.goto(f"{live_portal}/submissions/new/")
    page.fill("#id_model_name", "Modello del browser")
    # A public submission says how its predictions were made.
    page.fill("#id_model_size", "7B")
    page.select_option("#id_weights", "open")
    page.select_option("#id_approach", "prompting")
    page.fill("#id_training_cutoff", "2024-09")
    page.fill("#id_shots", "0")
    page.select_option("#id_schema_format", "mysql-ddl")
    page.select_option("#id_instruction_language", "it")
    page.select_option("#id_sampling", "greedy")
    page.fill("#id_run_date", "2025-06-01")
    page.check("#id_is_public")
    page.set_input_files("#id_predictions", str(predictions))
    page.click("button:has-text('Upload and score')")
    page.wait_for_url("**/submissions/*/")
    # A marker on the window survives only if the page is not reloaded while the results arrive.
    page.evaluate("window.__notReloaded = true")
    page.wait_for_selector("#ea", timeout=60_000)
    assert page.evaluate("window.__notReloaded === true")
    assert page.inner_text("#status") == "scored"
    assert page.inner_text("#ea") == "100.0"
    assert page.inner_text("#card-cutoff") == "2024-09-30"
    chart_drawn(page, "results-chart")
    screenshot(page, "1-results")


def test_the_submission_appears_on_the_leaderboard_which_sorts_filters_exports_and_speaks_italian(
    live_portal, page, screenshot, owner, make_submission, gold, tmp_path
):
    from leaderboard.services import submission_score

    scored = {}
    for name, predictions in {
        "Modello pubblico": gold,
        "Modello debole": {qid: "SELECT 1" for qid in gold},
    }.items():
        submission = make_submission(model_name=name, is_public=True, predictions=predictions)
        submission_score(submission_id=submission.pk)
        scored[name] = submission

    page.goto(f"{live_portal}/leaderboard/")
    rows = page.locator("#leaderboard tbody tr:not([hidden])")
    assert rows.count() == 2
    assert "Modello pubblico" in rows.nth(0).inner_text()

    # Sorting by EA ascending puts the weaker system first.
    page.click("#leaderboard th[data-key='ea'] a")
    page.click("#leaderboard th[data-key='ea'] a")
    expect(rows.first).to_contain_text("Modello debole")

    # Filtering by text (live, as one types) leaves one row.
    page.fill("#leaderboard-filters input[name='q']", "pubblico")
    expect(rows).to_have_count(1)
    assert "Modello pubblico" in page.inner_text("#leaderboard tbody tr:not([hidden])")

    with page.expect_download() as download:
        page.click("#export-csv")
    csv_text = Path(download.value.path()).read_text(encoding="utf-8")
    assert "Modello pubblico" in csv_text and "Modello debole" in csv_text
    assert csv_text.splitlines()[0].startswith("rank,")

    page.select_option("#language", "it")
    page.wait_for_selector("html[lang='it']")
    assert "Esci" not in page.inner_text("nav")  # anonymous here: the Italian log-in link instead
    assert "Accedi" in page.inner_text("nav")
    screenshot(page, "2-leaderboard-it")
