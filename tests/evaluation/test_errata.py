"""Errata: participants report wrong questions, staff accept or decline, and an accepted erratum flows into
the next version. Who sees what: the description only its reporter and staff, the gold only staff, the
public page ids, status and public reasons."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from evaluation.errata import (
    ErratumResolvedError,
    TooManyReports,
    erratum_accept,
    erratum_decline,
    erratum_report,
)
from evaluation.models import BenchmarkVersion, Erratum, Question
from evaluation.services import question_set_excluded, version_create_draft, version_publish
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts

pytestmark = pytest.mark.django_db

NEW = reverse("errata:new")
MINE = reverse("errata:mine")
PUBLIC = reverse("errata:list")
# What a reporter writes may quote the data: a mark to look for where it must never show.
DESCRIPTION = "La risposta attesa ignora i prestiti scaduti (SegnalazioneRiservataQ7)."
MARK = "SegnalazioneRiservataQ7"


@pytest.fixture
def question(demo_version) -> Question:
    return demo_version.questions.get(public_id="biblioteca-001")


@pytest.fixture
def reported(owner, question) -> Erratum:
    return erratum_report(reporter=owner, question=question, description=DESCRIPTION)


def text_of(response) -> str:
    return html.unescape(response.content.decode())


def derive(version: BenchmarkVersion, label: str) -> BenchmarkVersion:
    return version_create_draft(label=label, name="Termite demo", derived_from=version)


def status_in(version: BenchmarkVersion, public_id: str = "biblioteca-001") -> tuple[str, str]:
    question = version.questions.get(public_id=public_id)
    return question.status, question.status_reason


# Answering: accept, decline, and the flow into the next version


def test_accepting_on_a_draft_excludes_the_question_there_with_the_public_reason(staff, demo_version):
    draft = derive(demo_version, "demo-1.1")
    erratum = erratum_report(
        reporter=staff, question=draft.questions.get(public_id="biblioteca-001"), description="x"
    )
    assert erratum_accept(erratum=erratum, by=staff, public_reason="La domanda è ambigua.") == [draft]
    assert status_in(draft) == ("excluded", "La domanda è ambigua.")
    assert status_in(demo_version) == ("valid", "")
    erratum.refresh_from_db()
    assert (erratum.status, erratum.public_reason, erratum.resolved_by) == (
        "accepted",
        "La domanda è ambigua.",
        staff,
    )


def test_accepting_on_a_published_version_leaves_it_frozen_and_excludes_in_its_drafts(
    staff, reported, demo_version
):
    existing = derive(demo_version, "demo-1.1")
    assert erratum_accept(erratum=reported, by=staff, public_reason="La domanda è ambigua.") == [existing]
    assert status_in(demo_version) == ("valid", "")
    assert status_in(existing) == ("excluded", "La domanda è ambigua.")
    later = derive(demo_version, "demo-1.2")
    assert status_in(later) == ("excluded", "La domanda è ambigua.")
    assert later.questions.scored().count() == demo_version.questions.scored().count() - 1


def test_an_erratum_accepted_after_the_next_version_was_published_reaches_the_one_after(
    staff, reported, demo_version
):
    successor = derive(demo_version, "demo-1.1")
    version_publish(version=successor)
    erratum_accept(erratum=reported, by=staff, public_reason="Ambigua.")
    assert status_in(successor) == ("valid", "")  # published: frozen
    assert status_in(derive(successor, "demo-1.2")) == ("excluded", "Ambigua.")


def test_a_question_staff_brought_back_after_an_erratum_stays_back_in_later_versions(
    staff, reported, demo_version
):
    erratum_accept(erratum=reported, by=staff, public_reason="Ambigua.")
    fixed = derive(demo_version, "demo-1.1")
    question_set_excluded(question=fixed.questions.get(public_id="biblioteca-001"), excluded=False)
    version_publish(version=fixed)
    assert status_in(derive(fixed, "demo-1.2")) == ("valid", "")


def test_a_question_already_out_of_scoring_keeps_its_reason(staff, reported, demo_version):
    draft = derive(demo_version, "demo-1.1")
    question_set_excluded(
        question=draft.questions.get(public_id="biblioteca-001"), excluded=True, reason="Già tolta."
    )
    assert erratum_accept(erratum=reported, by=staff, public_reason="Ambigua.") == []
    assert status_in(draft) == ("excluded", "Già tolta.")


def test_declining_changes_no_question_and_keeps_the_reason_for_the_reporter(staff, reported, demo_version):
    draft = derive(demo_version, "demo-1.1")
    erratum_decline(erratum=reported, by=staff, staff_reason="  La domanda è corretta.  ")
    reported.refresh_from_db()
    assert (reported.status, reported.staff_reason, reported.public_reason) == (
        "declined",
        "La domanda è corretta.",
        "",
    )
    assert reported.reason_for_reporter == "La domanda è corretta."
    assert (
        status_in(demo_version)
        == status_in(draft)
        == status_in(derive(demo_version, "demo-1.2"))
        == ("valid", "")
    )


def test_reports_past_the_daily_limit_are_refused(owner, other_user, question, settings):
    settings.TERMITE_ERRATA_RATE_LIMIT = (1, 86400)
    erratum_report(reporter=owner, question=question, description="x")
    with pytest.raises(TooManyReports, match="You may report 1 errata a day"):
        erratum_report(reporter=owner, question=question, description="y")
    erratum_report(reporter=other_user, question=question, description="z")
    assert Erratum.objects.count() == 2


def test_an_erratum_is_answered_once(staff, reported):
    erratum_decline(erratum=reported, by=staff, staff_reason="La domanda è corretta.")
    with pytest.raises(ErratumResolvedError):
        erratum_accept(erratum=reported, by=staff, public_reason="Ambigua.")
    reported.refresh_from_db()
    assert reported.status == "declined"


# Reporting, by the web form


def test_anonymous_visitors_are_sent_to_log_in_to_report_or_read_their_reports(client, demo_version):
    for url in (NEW, MINE):
        response = client.get(url)
        assert response.status_code == 302 and reverse("accounts:login") in response.url
    assert client.post(NEW, {"question_id": "biblioteca-001", "description": "x"}).status_code == 302
    assert not Erratum.objects.exists()


def test_the_form_offers_published_versions_and_starts_on_the_latest(client, owner, demo_version):
    derive(demo_version, "demo-1.1")  # a draft: participants never see it
    client.force_login(owner)
    page = text_of(client.get(NEW))
    assert '<option value="demo-1.0" selected>' in page
    assert "demo-1.1" not in page


def test_a_participant_reports_a_question_and_finds_it_on_their_page(client, owner, question):
    client.force_login(owner)
    response = client.post(
        NEW, {"version": "demo-1.0", "question_id": "biblioteca-001", "description": DESCRIPTION}
    )
    assert response.status_code == 302 and response.url == MINE
    erratum = Erratum.objects.get()
    assert (erratum.question, erratum.reporter, erratum.status) == (question, owner, "open")
    page = text_of(client.get(MINE))
    assert "biblioteca-001" in page and MARK in page and "open" in page


def test_without_a_version_the_report_is_on_the_latest_published(client, owner, question):
    client.force_login(owner)
    client.post(NEW, {"question_id": "biblioteca-001", "description": DESCRIPTION})
    assert Erratum.objects.get().question == question


def test_a_link_from_a_question_fills_the_form_in(client, owner, demo_version):
    client.force_login(owner)
    database_page = text_of(
        client.get(reverse("evaluation:database_detail", args=["demo-1.0", "biblioteca"]))
    )
    assert f"{NEW}?version=demo-1.0" in database_page
    # Each question's row links to the form with its id filled in.
    row_link = f"{NEW}?version=demo-1.0&question_id=biblioteca-002"
    assert row_link in database_page
    form = text_of(client.get(row_link))
    assert 'value="biblioteca-002"' in form


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"question_id": ""}, "question_id", "This field is required."),
        (
            {"question_id": "biblioteca-999"},
            "question_id",
            "Termite demo demo-1.0 has no question biblioteca-999.",
        ),
        ({"description": ""}, "description", "This field is required."),
        ({"description": "x" * 2001}, "description", "at most 2000 characters (it has 2001)"),
        ({"version": "9.9"}, "version", "There is no published version 9.9."),
        ({"version": "demo-1.1"}, "version", "There is no published version demo-1.1."),
    ],
)
def test_each_invalid_report_is_refused_with_its_field_and_reason(
    client, owner, demo_version, fields, field, message
):
    derive(demo_version, "demo-1.1")
    client.force_login(owner)
    data = {"version": "demo-1.0", "question_id": "biblioteca-001", "description": DESCRIPTION, **fields}
    response = client.post(NEW, data)
    assert response.status_code == 400
    assert [error for error in response.context["form"].errors[field] if message in error]
    assert message in text_of(response)
    assert not Erratum.objects.exists()


def test_before_any_version_is_published_a_report_is_refused(client, owner, empty_store):
    client.force_login(owner)
    response = client.post(NEW, {"question_id": "biblioteca-001", "description": DESCRIPTION})
    assert response.status_code == 400
    assert response.context["form"].errors["version"] == ["No version is published yet."]


def test_staff_may_report_on_a_draft_which_the_public_page_leaves_out(client, staff, demo_version):
    derive(demo_version, "demo-1.1")
    client.force_login(staff)
    response = client.post(NEW, {"version": "demo-1.1", "question_id": "biblioteca-001", "description": "x"})
    assert response.status_code == 302
    assert Erratum.objects.get().question.version.label == "demo-1.1"
    client.logout()
    assert "demo-1.1" not in text_of(client.get(PUBLIC))


def test_reports_are_rate_limited_per_participant(client, owner, other_user, question, settings):
    settings.TERMITE_ERRATA_RATE_LIMIT = (2, 86400)
    client.force_login(owner)
    data = {"question_id": "biblioteca-001", "description": DESCRIPTION}
    assert [client.post(NEW, data).status_code for _ in range(3)] == [302, 302, 429]
    assert "You may report 2 errata a day; try again tomorrow." in text_of(client.post(NEW, data))
    assert Erratum.objects.count() == 2
    client.force_login(other_user)
    assert client.post(NEW, data).status_code == 302


def test_a_refused_form_costs_nothing_of_the_rate_limit(client, owner, question, settings):
    settings.TERMITE_ERRATA_RATE_LIMIT = (1, 86400)
    client.force_login(owner)
    assert client.post(NEW, {"question_id": "biblioteca-999", "description": "x"}).status_code == 400
    assert client.post(NEW, {"question_id": "biblioteca-001", "description": "x"}).status_code == 302


# Staff pages


def test_participants_are_refused_the_staff_errata_pages(client, owner, reported):
    urls = [reverse("staff:errata"), reverse("staff:question_errata", args=[reported.question.pk])]
    resolve = reverse("staff:erratum_resolve", args=[reported.pk])
    for url in [*urls, resolve]:
        assert client.get(url).status_code == 302  # anonymous: to the login page
    client.force_login(owner)
    for url in urls:
        response = client.get(url)
        assert response.status_code == 403, url
        assert_no_gold(response.content, gold_texts(), where=url)
    assert client.post(resolve, {"decision": "accepted", "reason": "x"}).status_code == 403
    reported.refresh_from_db()
    assert reported.is_open


def test_staff_reach_the_open_errata_from_their_home_page(client, staff, reported, other_user):
    erratum_report(reporter=other_user, question=reported.question, description="anche io")
    client.force_login(staff)
    home = text_of(client.get(reverse("staff:home")))
    assert "2 open errata" in home and reverse("staff:errata") in home
    listing = text_of(client.get(reverse("staff:errata")))
    assert reverse("staff:question_errata", args=[reported.question.pk]) in listing
    assert "biblioteca-001" in listing


def test_the_question_page_shows_staff_the_gold_the_findings_and_every_report(client, staff, reported):
    client.force_login(staff)
    response = client.get(reverse("staff:question_errata", args=[reported.question.pk]))
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    page = text_of(response)
    # Checked without pytest's comparison, which would print the gold.
    if " ".join(reported.question.decrypt_gold().split()) not in " ".join(page.split()):
        pytest.fail("the staff errata page does not show the question's gold", pytrace=False)
    assert reported.question.text in page and MARK in page and reported.reporter.username in page
    assert "Findings" in page


def test_answering_an_erratum_asks_first_since_the_answer_is_final(client, staff, reported):
    client.force_login(staff)
    body = client.get(reverse("staff:question_errata", args=[reported.question.pk])).content.decode()
    assert 'data-confirm="Accept this erratum? The answer is final' in body
    assert 'data-confirm="Decline this erratum? The answer is final."' in body


def test_staff_accept_on_the_question_page_and_are_told_where_it_is_left_out(
    client, staff, reported, demo_version
):
    derive(demo_version, "demo-1.1")
    client.force_login(staff)
    response = client.post(
        reverse("staff:erratum_resolve", args=[reported.pk]),
        {"decision": "accepted", "reason": "La domanda è ambigua."},
        follow=True,
    )
    page = text_of(response)
    assert "demo-1.0 is published and stays as it is" in page
    assert "Left out already in: Termite demo demo-1.1." in page
    assert "Public reason: La domanda è ambigua." in page


def test_a_resolution_needs_a_reason(client, staff, reported):
    client.force_login(staff)
    response = client.post(
        reverse("staff:erratum_resolve", args=[reported.pk]),
        {"decision": "accepted", "reason": " "},
        follow=True,
    )
    assert "This field is required." in text_of(response)
    reported.refresh_from_db()
    assert reported.is_open


# Declining, and who sees what


def test_a_declined_erratum_shows_its_reason_to_the_reporter_only(client, staff, owner, other_user, reported):
    client.force_login(staff)
    client.post(
        reverse("staff:erratum_resolve", args=[reported.pk]),
        {"decision": "declined", "reason": "La query attesa è corretta (MotivoPrivatoK3)."},
    )
    assert status_in(reported.question.version) == ("valid", "")
    client.force_login(owner)
    mine = text_of(client.get(MINE))
    assert "declined" in mine and "MotivoPrivatoK3" in mine
    client.force_login(other_user)
    assert "MotivoPrivatoK3" not in text_of(client.get(MINE))
    client.logout()
    public = text_of(client.get(PUBLIC))
    assert "declined" in public and "MotivoPrivatoK3" not in public


def test_the_public_page_shows_ids_status_and_public_reasons_never_a_description_or_gold(
    client, staff, owner, other_user, question, demo_version
):
    accepted = erratum_report(reporter=owner, question=question, description=DESCRIPTION)
    erratum_accept(erratum=accepted, by=staff, public_reason="Risposta attesa incompleta.")
    erratum_report(
        reporter=other_user, question=demo_version.questions.get(public_id="ciclismo-001"), description=MARK
    )
    response = client.get(PUBLIC)
    assert response.status_code == 200
    page = text_of(response)
    assert "biblioteca-001" in page and "accepted" in page and "Risposta attesa incompleta." in page
    assert "ciclismo-001" in page and "open" in page
    assert MARK not in page and other_user.username not in page
    assert_no_gold(response.content, gold_texts(), where="the public errata page")


def test_the_errata_page_is_linked_from_the_navigation_and_the_changelog(client, demo_version):
    assert PUBLIC in text_of(client.get("/"))
    assert PUBLIC in text_of(client.get(reverse("changelog")))


def test_the_errata_page_invites_participants_to_report(client, owner):
    assert reverse("accounts:login") in text_of(client.get(PUBLIC))
    client.force_login(owner)
    page = text_of(client.get(PUBLIC))
    assert NEW in page and MINE in page


def test_the_errata_page_takes_no_post(client):
    assert client.post(PUBLIC).status_code == 405
