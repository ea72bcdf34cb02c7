"""Scores that stay true: every scoring is kept, a version is rescored with the current scorer, and
submissions are carried over to a version derived from theirs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core import mail
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.gold import encrypt_gold
from evaluation.rebuilding import version_rebuild
from evaluation.scoring.score import SCORER_VERSION
from evaluation.services import question_set_excluded, version_create_draft, version_publish
from leaderboard.jobs import rescore_submission, score_submission
from leaderboard.models import Rescoring, Scoring, Submission
from leaderboard.rescoring import rescoring_start
from termite_site.accounts.services import api_token_create
from tests.factories import version_make

OLDER = "1.2.0"

pytestmark = pytest.mark.django_db


def scored(make_submission, predictions, **fields) -> Submission:
    submission = make_submission(predictions=predictions, **fields)
    assert score_submission(submission.pk) == "scored"
    submission.refresh_from_db()
    return submission


def as_if_an_older_scorer_scored_it(submission: Submission, *, ea: float) -> None:
    """What a scorer before TS-EA stored: its version, no TS-EA, and (here) another EA, with the verdicts per
    question that give it (the first questions right), which the rank rule reads."""
    scores = {**submission.scores, "scorer_version": OLDER}
    scores["overall"] = {
        key: value for key, value in scores["overall"].items() if not key.startswith("ts_")
    } | {"ea": ea}
    right = round(ea * len(submission.outcomes))
    outcomes = [{**line, "ea": n < right} for n, line in enumerate(submission.outcomes)]
    Submission.objects.filter(pk=submission.pk).update(
        scorer_version=OLDER, scores=scores, ea=ea, outcomes=outcomes
    )
    submission.scorings.update(scorer_version=OLDER, scores=scores, outcomes=outcomes)


@pytest.fixture
def two_public(make_submission, gold, other_user, in_process):
    """Two public submissions: the gold itself, and half the gold; an older scorer ranked them the other way."""
    half = dict(list(gold.items())[: len(gold) // 2])
    best = scored(make_submission, gold, is_public=True, model_name="Tutto giusto")
    partial = scored(make_submission, half, is_public=True, model_name="Metà", user=other_user)
    as_if_an_older_scorer_scored_it(best, ea=0.25)
    as_if_an_older_scorer_scored_it(partial, ea=0.75)
    return best, partial


def test_the_first_scoring_starts_the_history(make_submission, gold, in_process):
    submission = scored(make_submission, gold)
    (first,) = submission.scorings.all()
    assert (first.reason, first.scorer_version, first.benchmark_version) == (
        "first",
        SCORER_VERSION,
        "demo-1.0",
    )
    assert first.scores == submission.scores


def test_rescoring_a_version_rescores_what_an_older_scorer_scored_and_keeps_the_history(
    two_public, demo_version
):
    best, partial = two_public
    out = call_command_output("rescore", "--version", "demo-1.0")
    assert "2 of 2 submissions done, finished" in out
    best.refresh_from_db()
    assert best.scorer_version == SCORER_VERSION and best.ea == 1.0
    history = list(best.scorings.all())
    assert [(s.reason, s.scorer_version) for s in history] == [("first", OLDER), ("scorer", SCORER_VERSION)]
    rescoring = Rescoring.objects.get()
    assert (rescoring.done, rescoring.total, rescoring.finished_at is not None) == (2, 2, True)
    assert rescoring.moved == [
        {
            "submission": best.pk,
            "model_name": "Tutto giusto",
            "ea_before": 0.25,
            "ea_after": 1.0,
            "rank_before": 2,
            "rank_after": 1,
        },
        {
            "submission": partial.pk,
            "model_name": "Metà",
            "ea_before": 0.75,
            "ea_after": partial.scorings.last().scores["overall"]["ea"],
            "rank_before": 1,
            "rank_after": 2,
        },
    ]


def test_rescoring_again_changes_nothing(two_public, demo_version):
    call_command_output("rescore", "--version", "demo-1.0")
    assert "nothing to rescore" in call_command_output("rescore", "--version", "demo-1.0")
    assert Rescoring.objects.count() == 1 and Scoring.objects.count() == 4


def test_rescoring_every_version_rescores_each_one_an_older_scorer_scored(two_public, demo_version):
    other = version_make(label="vuota-1.0")
    out = call_command_output("rescore", "--all")
    assert f"Rescoring {demo_version} with scorer {SCORER_VERSION}: 2 of 2 submissions done, finished." in out
    assert f"Every submission of {other} is scored by the current scorer: nothing to rescore." in out
    again = call_command_output("rescore", "--all")
    assert again.count("nothing to rescore") == 2 and Rescoring.objects.count() == 1


def test_a_version_built_by_an_older_scorer_is_rebuilt_then_every_submission_rescored(
    make_submission, gold, in_process, demo_version, django_capture_on_commit_callbacks
):
    # Scored by the current scorer, but on copies an older one built: the rebuild rescores it all the same.
    submission = scored(make_submission, gold, is_public=True, model_name="Tutto giusto")
    demo_version.databases.update(built_by_scorer="1.4.0")
    with django_capture_on_commit_callbacks(execute=True):
        out = call_command_output("rescore", "--all")
    assert (
        f"Rebuilt what an older scorer built for {demo_version}:\n  biblioteca: built by scorer 1.4.0;" in out
    )
    # Its jobs go on the queue once the rebuild commits: here, when the captured callbacks run.
    assert f"Rescoring {demo_version} with scorer {SCORER_VERSION}: 0 of 1 submissions done" in out
    assert Rescoring.objects.get().finished_at is not None
    assert [(s.reason, s.scorer_version) for s in submission.scorings.all()] == [
        ("first", SCORER_VERSION),
        ("rebuild", SCORER_VERSION),
    ]
    assert Rescoring.objects.get().get_reason_display() == (
        "rescoring after its databases were rebuilt by a newer scorer"
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert "nothing to rescore" in call_command_output("rescore", "--all")
    assert submission.scorings.count() == 2


def test_a_rebuild_interrupted_before_its_jobs_were_queued_is_resumed_by_the_next_rescore(
    make_submission, gold, in_process, demo_version
):
    submission = scored(make_submission, gold)
    demo_version.databases.update(built_by_scorer="1.4.0")
    version_rebuild(version=demo_version)  # committed, but the process ends before its on-commit enqueue
    assert submission.scorings.count() == 1
    out = call_command_output("rescore", "--version", demo_version.label)
    assert "1 of 1 submissions done, finished." in out
    assert [s.reason for s in submission.scorings.all()] == ["first", "rebuild"]


def test_a_refused_rebuild_fails_the_command_and_leaves_that_versions_scores(
    make_submission, gold, in_process, demo_version
):
    submission = scored(make_submission, gold)
    demo_version.databases.update(built_by_scorer="1.4.0")
    question = demo_version.questions.get(public_id="ciclismo-003")
    question.gold_sqlite_encrypted = encrypt_gold("SELECT 1")
    question.save(update_fields=["gold_sqlite_encrypted"])
    with pytest.raises(CommandError, match="ciclismo-003 on ciclismo: its gold returns other rows"):
        call_command_output("rescore", "--all")
    assert submission.scorings.count() == 1 and not Rescoring.objects.exists()


def test_staff_see_which_databases_an_older_scorer_built(client, staff, demo_version):
    demo_version.databases.filter(slug="ciclismo").update(built_by_scorer="1.4.0")
    client.force_login(staff)
    body = client.get(reverse("leaderboard_staff:rescore", args=["demo-1.0"])).content.decode()
    assert "ciclismo: its SQLite copy and SQLite gold were built by an older scorer." in body
    assert "<code>manage.py rescore --version demo-1.0</code>" in body
    assert 'value="rebuild"' not in body


def test_an_errata_rescoring_names_its_version():
    with pytest.raises(CommandError, match="--reason errata rescores one version"):
        call_command("rescore", "--all", "--reason", "errata")


def test_a_rescoring_resumes_after_a_crash_and_never_scores_a_submission_twice(two_public, demo_version):
    best, partial = two_public
    # As a crash leaves it: the run recorded, one job done, the other lost.
    rescoring = Rescoring.objects.create(
        version=demo_version,
        scorer_version=SCORER_VERSION,
        reason="scorer",
        submission_ids=[best.pk, partial.pk],
    )
    assert rescore_submission(best.pk, rescoring.pk) == "rescored"
    assert rescore_submission(best.pk, rescoring.pk) == "skipped: already rescored"
    resumed = rescoring_start(version=demo_version, reason="scorer")
    assert resumed.pk == rescoring.pk and resumed.finished_at is not None
    assert Scoring.objects.filter(rescoring=rescoring).count() == 2


def test_the_changelog_lists_what_a_rescoring_moved(client, two_public, demo_version):
    best, _partial = two_public
    call_command_output("rescore", "--version", "demo-1.0")
    body = client.get(reverse("changelog")).content.decode()
    assert f"Rescored with scorer {SCORER_VERSION}" in body
    assert f"#{best.pk} Tutto giusto</a>: EA 25.0 → 100.0, rank 2 → 1" in body


def test_the_page_and_the_api_show_the_history_oldest_first(client, owner, two_public, demo_version):
    best, _partial = two_public
    call_command_output("rescore", "--version", "demo-1.0")
    client.force_login(owner)
    page = client.get(best.get_absolute_url()).content.decode()
    assert 'id="score-history"' in page and "→ EA 100" in page
    body = client.get(reverse("api:submission_detail", args=[best.pk]), **bearer(owner)).json()
    history = body["score_history"]
    assert [entry["scorer_version"] for entry in history] == [OLDER, SCORER_VERSION]
    assert set(history[0]) == {"scorer_version", "benchmark_version", "reason", "scored_at", "overall"}
    assert [entry["reason"] for entry in history] == ["first", "scorer"]
    assert history[1]["overall"]["ea"] == 1.0 and "per_database" not in history[1]


def test_a_private_submissions_history_is_its_owners_and_staffs_only(
    client, other_user, make_submission, gold, in_process
):
    private = scored(make_submission, gold)
    assert (
        client.get(reverse("api:submission_detail", args=[private.pk]), **bearer(other_user)).status_code
        == 404
    )


def test_staff_start_a_rescoring_and_watch_its_progress(client, staff, owner, two_public, demo_version):
    page = reverse("leaderboard_staff:rescore", args=["demo-1.0"])
    client.force_login(owner)
    assert client.get(page).status_code == 403
    client.force_login(staff)
    assert "2 submissions were scored by an older scorer." in client.get(page).content.decode()
    response = client.post(page, {"reason": "scorer"}, follow=True)
    body = response.content.decode()
    assert "2 / 2" in body and "rank 2 → 1" in body
    assert client.post(page, {"reason": "nonsense"}, follow=True).status_code == 200


def test_staff_asking_to_rescore_a_version_with_nothing_outdated_are_told_so(client, staff):
    version = version_make(label="vuota-1.0")
    client.force_login(staff)
    response = client.post(
        reverse("leaderboard_staff:rescore", args=[version.label]), {"reason": "scorer"}, follow=True
    )
    assert (
        f"Every submission of {version} is scored by the current scorer: nothing to rescore."
        in response.content.decode()
    )
    assert not Rescoring.objects.exists()


def test_publishing_a_derived_version_carries_its_submissions_over(
    client, owner, make_submission, make_team, gold, in_process, django_capture_on_commit_callbacks
):
    team = make_team("Gruppo Torino")
    origin = scored(make_submission, gold, is_public=True, model_name="Riportato", team=team)
    draft = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=origin.version)
    dropped = draft.questions.order_by("public_id").first()
    question_set_excluded(question=dropped, excluded=True, reason="Errata corrige: la risposta era ambigua.")
    with django_capture_on_commit_callbacks(execute=True):
        version_publish(version=draft, carry_submissions=True)
    copy = Submission.objects.get(version=draft)
    assert copy.carried_from == origin and copy.user == origin.user
    assert (copy.model_name, copy.team, copy.is_public) == ("Riportato", team, True)
    assert copy.status == "scored" and copy.scores["overall"]["excluded"] == 1
    assert [s.reason for s in copy.scorings.all()] == ["carried"]
    assert mail.outbox and origin.version.label in mail.outbox[0].body and owner.email in mail.outbox[0].to
    client.force_login(owner)
    page = client.get(copy.get_absolute_url()).content.decode()
    assert f'Carried from <a href="{origin.get_absolute_url()}">#{origin.pk}</a> on' in page
    assert (
        client.get(reverse("api:submission_detail", args=[copy.pk]), **bearer(owner)).json()["carried_from"]
        == origin.pk
    )


def test_carried_submissions_use_no_quota_and_are_carried_once(make_submission, gold, in_process):
    origin = scored(make_submission, gold)
    draft = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=origin.version)
    version_publish(version=draft, carry_submissions=True)
    from leaderboard.rescoring import version_carry_submissions

    assert version_carry_submissions(version=draft) == []
    assert not Submission.objects.filter(version=draft).counting_towards_quota().exists()


def test_a_version_with_no_parent_has_nothing_to_carry(demo_version):
    from evaluation.services import VersionStateError

    draft = version_create_draft(label="vuota", name="Vuota")
    with pytest.raises(VersionStateError, match="derives from no version"):
        version_publish(version=draft, carry_submissions=True)


def bearer(user) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {api_token_create(user=user, name='tests')[1]}"}


def call_command_output(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_a_rescored_result_shows_at_the_release_time_of_its_own_job(
    make_submission, gold, in_process, demo_version, settings, owner
):
    """When a rescoring's result appears must not tell how long its queries ran, as for the first result."""
    submission = scored(make_submission, gold, is_public=True)
    as_if_an_older_scorer_scored_it(submission, ea=0.5)
    settings.TERMITE_RESULT_DELAY_SECONDS = 3600
    rescoring = rescoring_start(version=demo_version, reason="scorer")
    submission.refresh_from_db()
    rescored = submission.scorings.last()
    assert submission.released_at == rescored.released_at == rescoring.created_at + timedelta(seconds=3600)
    assert rescored.scored_at < rescored.released_at  # staff's real time, kept apart
    from leaderboard.feedback import feedback_for

    seen = feedback_for(submission, owner)
    assert seen.status == "running" and seen.shown is None
    assert not Submission.objects.visible_to(AnonymousUser()).filter(pk=submission.pk).exists()
