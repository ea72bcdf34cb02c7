"""In a real browser: a team is made and grows by an invitation link, a member submits on its behalf with a
complete model card, staff verify the run, and the leaderboard shows it as the team's verified row."""

from __future__ import annotations

import hashlib

import pytest

from tests.demo import demo_gold, predictions_jsonl

pytestmark = [pytest.mark.browser, pytest.mark.processes]

PASSWORD = "una-passphrase-lunga-17"


def log_in(browser, portal: str, username: str):
    """A page of a fresh browser context, logged in as `username`: each person has their own cookies."""
    page = browser.new_context(locale="en-GB").new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{portal}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("form.card button:has-text('Log in')")
    page.wait_for_url("**/accounts/profile/")
    return page


def test_a_team_submits_a_run_that_staff_verify_and_the_leaderboard_shows_as_the_teams(
    live_portal, browser, page, screenshot, tmp_path, django_user_model
):
    for username, is_staff in (("paolo", False), ("marta", False), ("carla", True)):
        django_user_model.objects.create_user(
            username, f"{username}@example.org", PASSWORD, is_staff=is_staff
        )

    # Paolo makes the team and an invitation link.
    owner = log_in(browser, live_portal, "paolo")
    owner.goto(f"{live_portal}/accounts/teams/")
    owner.fill("#id_name", "Gruppo Pisa")
    owner.click("button:has-text('Create team')")
    owner.wait_for_url("**/accounts/teams/gruppo-pisa/")
    owner.click("button:has-text('Create an invitation link')")
    link = owner.inner_text("#new-link").strip()

    # Marta joins through it, then submits on the team's behalf, saying how the predictions were made.
    member = log_in(browser, live_portal, "marta")
    member.goto(link)
    member.click("button:has-text('Join Gruppo Pisa')")
    assert "marta" in member.inner_text("#members")

    predictions = tmp_path / "predictions.jsonl"
    predictions.write_bytes(predictions_jsonl(demo_gold()))
    member.goto(f"{live_portal}/submissions/new/")
    member.fill("#id_model_name", "Modello di squadra")
    member.select_option("#id_team", "gruppo-pisa")
    member.fill("#id_model_size", "unknown")
    member.select_option("#id_weights", "closed")
    member.select_option("#id_approach", "prompting")
    member.fill("#id_training_cutoff", "2023-12-31")
    member.fill("#id_shots", "3")
    member.select_option("#id_schema_format", "full-dump")
    member.select_option("#id_instruction_language", "it")
    member.select_option("#id_sampling", "top-p")
    member.fill("#id_temperature", "0.7")
    member.fill("#id_run_date", "2025-06-01")
    member.check("#id_is_public")
    member.set_input_files("#id_predictions", str(predictions))
    member.click("button:has-text('Upload and score')")
    member.wait_for_url("**/submissions/*/")
    member.wait_for_selector("#ea", timeout=60_000)
    submission_url = member.url

    # Carla, staff, reproduced the run: she marks it verified, with a public note.
    staff = log_in(browser, live_portal, "carla")
    staff.goto(submission_url)
    staff.check("#id_verified")
    staff.fill("#id_note", "riprodotto dagli organizzatori con il codice pubblicato")
    staff.click("#verify button:has-text('Save')")
    staff.wait_for_selector("#verify")

    # Anyone sees it on the leaderboard as the team's verified row, and can filter on both.
    page.goto(f"{live_portal}/leaderboard/?team=gruppo-pisa&verified=1")
    rows = page.locator("#leaderboard tbody tr:not([hidden])")
    assert rows.count() == 1
    row = rows.nth(0)
    assert "Modello di squadra" in row.inner_text()
    assert row.locator("td.team").inner_text() == "Gruppo Pisa"
    assert row.locator(".badge.verified").is_visible()
    screenshot(page, "5-team-verified-row")

    # The row's page gives the sha256 of the file uploaded, so the number can be tied to that file.
    page.click("text=Modello di squadra")
    assert hashlib.sha256(predictions.read_bytes()).hexdigest() in page.inner_text("body")

    # The team's public page lists the row under its members.
    page.goto(f"{live_portal}/teams/gruppo-pisa/")
    assert "Modello di squadra" in page.inner_text("body")
    assert "marta" in page.inner_text("body") and "paolo" in page.inner_text("body")
