"""In a real browser, with gunicorn and an rqworker: staff rescore a version after a scorer change, then
publish a derived version that carries the submissions over; the participant sees both in the history."""

from __future__ import annotations

import pytest

from evaluation.scoring.score import SCORER_VERSION
from leaderboard.models import Submission
from leaderboard.services import submission_score
from tests.demo import demo_gold

pytestmark = [pytest.mark.browser, pytest.mark.processes]

OLDER = "1.2.0"


def log_in(page, url: str, username: str, password: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("form.card button:has-text('Log in')")


def test_staff_rescore_after_a_scorer_change_then_carry_the_submissions_to_a_new_version(
    live_portal, page, screenshot, django_user_model, demo_version
):
    version = demo_version
    django_user_model.objects.create_user(
        "carla", "carla@example.org", "una-passphrase-lunga-17", is_staff=True
    )
    ada = django_user_model.objects.create_user("ada", "ada@example.org", "una-passphrase-lunga-18")
    submission = Submission.objects.create(
        user=ada,
        version=version,
        model_name="Modello di Ada",
        predictions=demo_gold(),
        file_name="p.jsonl",
        file_sha256="0" * 64,
        file_format="jsonl",
        scorer_version=OLDER,
        is_public=True,
    )
    assert submission_score(submission_id=submission.pk) == "scored"
    # What the scorer before this one stored: its version, and a lower EA.
    submission.refresh_from_db()
    older = {
        **submission.scores,
        "scorer_version": OLDER,
        "overall": {**submission.scores["overall"], "ea": 0.5},
    }
    Submission.objects.filter(pk=submission.pk).update(scorer_version=OLDER, scores=older, ea=0.5)
    submission.scorings.update(scorer_version=OLDER, scores=older)

    log_in(page, live_portal, "carla", "una-passphrase-lunga-17")
    page.goto(f"{live_portal}/leaderboard/")
    assert f"scored by {OLDER}" in page.inner_text("main")  # the row says which scorer scored it
    page.goto(f"{live_portal}/staff/versions/demo-1.0/")
    page.click("text=Rescore its submissions")
    assert "1 submission was scored by an older scorer." in page.inner_text("#older-count")
    page.click("button:has-text('Rescore every submission')")
    for _ in range(60):  # the worker rescores it; the page shows the progress, then what moved
        if "EA 50.0 → 100.0" in page.inner_text("#rescorings"):
            break
        page.wait_for_timeout(500)
        page.reload()
    assert "1 / 1" in page.inner_text("#rescorings .progress")
    screenshot(page, "rescoring-0-staff")
    submission.refresh_from_db()
    assert submission.scorer_version == SCORER_VERSION and submission.ea == 1.0
    page.goto(f"{live_portal}/changelog/")
    assert f"Rescored with scorer {SCORER_VERSION}" in page.inner_text("main")
    assert "EA 50.0 → 100.0" in page.inner_text("main")
    screenshot(page, "rescoring-1-changelog")

    page.goto(f"{live_portal}/staff/")
    page.fill("#id_draft-label", "demo-1.1")
    page.fill("#id_draft-name", "Termite demo")
    page.select_option("#id_draft-derived_from", label="Termite demo demo-1.0")
    page.click("button:has-text('Create draft')")
    page.wait_for_url("**/staff/versions/demo-1.1/")
    page.click("#publish")
    page.wait_for_url("**/staff/versions/demo-1.1/publish/")
    assert page.is_checked("#publish input[name=carry]")
    page.click("button:has-text('Publish this version')")
    page.wait_for_selector("text=is published")
    carried = Submission.objects.get(version__label="demo-1.1")
    for _ in range(60):
        carried.refresh_from_db()
        if carried.status == "scored":
            break
        page.wait_for_timeout(500)
    assert carried.carried_from_id == submission.pk and carried.ea == 1.0

    page.context.clear_cookies()
    log_in(page, live_portal, "ada", "una-passphrase-lunga-18")
    page.goto(f"{live_portal}/submissions/{submission.pk}/")
    history = page.inner_text("#score-history")
    assert "EA 50" in history and "→ EA 100" in history and SCORER_VERSION in history
    page.goto(f"{live_portal}/submissions/{carried.pk}/")
    assert f"Carried from #{submission.pk} on Termite demo demo-1.0" in page.inner_text("#carried-from")
    screenshot(page, "rescoring-2-carried")
