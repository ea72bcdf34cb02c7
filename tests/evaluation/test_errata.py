"""Errata: participants report wrong questions, staff accept or decline, and an accepted erratum flows into
the next version."""

from __future__ import annotations

import pytest

from evaluation.errata import (
    ErratumResolvedError,
    TooManyReports,
    erratum_accept,
    erratum_decline,
    erratum_report,
)
from evaluation.models import BenchmarkVersion, Erratum, Question
from evaluation.services import question_set_excluded, version_create_draft, version_publish

pytestmark = pytest.mark.django_db

DESCRIPTION = "La risposta attesa ignora i prestiti scaduti."


@pytest.fixture
def question(demo_version) -> Question:
    return demo_version.questions.get(public_id="biblioteca-001")


@pytest.fixture
def reported(owner, question) -> Erratum:
    return erratum_report(reporter=owner, question=question, description=DESCRIPTION)


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
