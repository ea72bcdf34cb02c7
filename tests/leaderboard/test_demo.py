"""leaderboard/demo.py: the demo content a new portal starts with, gathered in one place."""

from __future__ import annotations

import pytest

from evaluation import services as evaluation_services
from evaluation.models import NeighbourDatabase
from evaluation.scoring.score import SCORER_VERSION
from leaderboard import ranking
from leaderboard.demo import DEMO_ADMIN, DEMO_TEAMS, demo_admin_exists, demo_gold, demo_load
from leaderboard.models import Scoring, Submission

pytestmark = pytest.mark.django_db


def test_it_loads_the_admin_the_benchmark_and_three_submissions_once(in_process, empty_store):
    assert not demo_admin_exists()
    first = demo_load()
    assert demo_admin_exists() and first.benchmark_loaded and first.submissions_made == 3
    assert first.version.label == evaluation_services.DEMO_LABEL
    again = demo_load()
    assert (again.benchmark_loaded, again.submissions_made) == (False, 0)
    assert (again.version, again.admin_password) == (first.version, first.admin_password)
    assert DEMO_ADMIN == "admin"


def test_the_demo_leaderboard_shows_at_once_whatever_the_release_delay(in_process, empty_store, settings):
    """The release time seals the hidden data's timing; the demo's data is ours and public."""
    settings.TERMITE_RESULT_DELAY_SECONDS = 120
    version = demo_load().version
    assert [row.model_name for row in ranking.leaderboard_rows(version=version)] == [
        "Oracolo (the demo's own answers)",
        "Metà e metà",
        "Solo domande facili",
    ]
    assert all(s.released_at == s.scored_at for s in Scoring.objects.filter(submission__version=version))


def test_the_demo_gold_covers_every_demo_question(demo_version):
    assert set(demo_gold()) == set(demo_version.questions.values_list("public_id", flat=True))


def test_evaluation_keeps_only_what_builds_the_demo_benchmark():
    assert hasattr(evaluation_services, "demo_benchmark_load")
    assert not hasattr(evaluation_services, "demo_gold")


def test_a_demo_an_earlier_portal_loaded_gets_its_suites_and_the_current_scorer(in_process, settings):
    first = demo_load()  # the tests' settings build no suites: as a portal before suites existed
    submission = Submission.objects.filter(version=first.version).first()
    Submission.objects.filter(pk=submission.pk).update(scorer_version="1.2.0")
    settings.TERMITE_SUITE_CANDIDATES = 12
    demo_load()
    assert NeighbourDatabase.objects.filter(database__version=first.version).exists()
    submission.refresh_from_db()
    assert submission.scorer_version == SCORER_VERSION
    assert [s.reason for s in submission.scorings.all()] == ["first", "scorer"]


def test_a_demo_an_earlier_scorer_built_is_rebuilt_and_all_its_submissions_rescored(
    in_process, django_capture_on_commit_callbacks
):
    version = demo_load().version
    version.databases.update(built_by_scorer="1.4.0")
    with django_capture_on_commit_callbacks(execute=True):
        demo_load()
    assert set(version.databases.values_list("built_by_scorer", flat=True)) == {SCORER_VERSION}
    reasons = {tuple(s.reason for s in submission.scorings.all()) for submission in version.submissions.all()}
    assert reasons == {("first", "rebuild")}


def test_the_demo_submissions_are_made_on_behalf_of_two_demo_teams_the_demo_user_owns(in_process):
    version = demo_load().version
    teams = {s.model_name: s.team for s in Submission.objects.filter(version=version).select_related("team")}
    assert sorted({team.name for team in teams.values()}) == sorted(DEMO_TEAMS)
    assert all(
        team.is_owner(team.created_by) and team.created_by.username == "demo" for team in teams.values()
    )
