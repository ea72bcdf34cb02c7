"""In a real browser: a staff member adds a database through the staff pages, watches the job that adds it
until its report shows, publishes."""

from __future__ import annotations

import json

import pytest

from evaluation.models import BenchmarkVersion

pytestmark = [pytest.mark.browser, pytest.mark.processes]

DUMP = """CREATE DATABASE negozio; USE negozio;
CREATE TABLE clienti (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, nome VARCHAR(40), citta VARCHAR(40)) ENGINE=InnoDB;
INSERT INTO clienti (nome, citta) VALUES ('Ada', 'Roma'), ('Bruno', 'Milano'), ('Carla', 'roma');
"""
QUESTIONS = [
    {
        "question": "Quanti clienti abitano a Roma?",
        "gold_sql": "SELECT COUNT(*) FROM clienti WHERE citta = 'Roma'",
    },
    {"question": "Elenca i clienti di Milano", "gold_sql": "SELECT nome FROM clienti WHERE citta = 'Milano'"},
]


def test_staff_add_a_database_read_the_report_and_publish_a_new_version(
    live_portal, page, screenshot, tmp_path, django_user_model
):
    django_user_model.objects.create_user(
        "carla", "carla@example.org", "una-passphrase-lunga-17", is_staff=True
    )
    (tmp_path / "negozio.sql").write_text(DUMP)
    (tmp_path / "negozio.jsonl").write_text("\n".join(json.dumps(q) for q in QUESTIONS))

    page.goto(f"{live_portal}/accounts/login/")
    page.fill("#id_username", "carla")
    page.fill("#id_password", "una-passphrase-lunga-17")
    page.click("form.card button:has-text('Log in')")
    page.click("nav >> text=Staff")
    page.fill("#id_draft-label", "demo-1.1")
    page.fill("#id_draft-name", "Termite demo")
    page.select_option("#id_draft-derived_from", label="Termite demo demo-1.0")
    page.click("button:has-text('Create draft')")
    page.wait_for_url("**/staff/versions/demo-1.1/")

    page.click("text=Add a database")
    page.set_input_files("#id_dump", str(tmp_path / "negozio.sql"))
    page.set_input_files("#id_questions", str(tmp_path / "negozio.jsonl"))
    page.fill("#id_display_name", "Negozio")
    page.click("button:has-text('Build, validate and add')")
    page.wait_for_url("**/staff/imports/*/")  # the worker builds it; the page reloads until it is done
    page.wait_for_selector("#report-text", timeout=120_000)
    assert page.inner_text("#import-state") == "done"
    report = page.inner_text("#report-text")
    assert "negozio: 1 tables, 3 rows" in report
    assert "questions: 2, valid 2" in report
    screenshot(page, "3-report")

    page.click("text=Termite demo demo-1.1")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#publish")  # publishing cannot be undone: it asks on a page of its own
    page.wait_for_selector("#cannot-be-undone")
    page.click("button:has-text('Publish this version')")
    page.wait_for_selector("text=is published")
    assert BenchmarkVersion.objects.get(label="demo-1.1").is_published
    assert BenchmarkVersion.objects.get(label="demo-1.1").questions.count() == 25
    screenshot(page, "3-published")
