"""leaderboard/demo.py: the demo content a new portal starts with, gathered in one place."""

from __future__ import annotations

import pytest

from evaluation import services as evaluation_services
from evaluation.models import NeighbourDatabase
from evaluation.scoring.score import SCORER_VERSION
from leaderboard import ranking
from leaderboard.baselines import PAPER_GPT35, PAPER_GPT35_EA
from leaderboard.demo import DEMO_ADMIN, DEMO_TEAMS, demo_admin_exists, demo_gold, demo_load
from leaderboard.models import Baseline, Scoring, Submission
from tests.leaderboard.page_rows import row_ranks
from tests.leaderboard.test_exports import JSON, csv_url, read_csv

pytestmark = pytest.mark.django_db


def test_it_loads_the_admin_the_benchmark_three_submissions_and_a_baseline_once(in_process, empty_store):
    assert not demo_admin_exists()
    first = demo_load()
    assert demo_admin_exists() and first.benchmark_loaded and first.submissions_made == 3
    assert first.baseline_added
    assert first.version.label == evaluation_services.DEMO_LABEL
    again = demo_load()
    assert (again.benchmark_loaded, again.submissions_made, again.baseline_added) == (False, 0, False)
    assert (again.version, again.admin_password) == (first.version, first.admin_password)
    assert Submission.objects.count() == 3 and Baseline.objects.count() == 1
    assert DEMO_ADMIN == "admin"


def test_the_demo_leaderboard_shows_at_once_whatever_the_release_delay(in_process, empty_store, settings):
    """The release time seals the hidden data's timing; the demo's data is ours and public."""
    settings.TERMITE_RESULT_DELAY_SECONDS = 120
    version = demo_load().version
    assert [row.model_name for row in ranking.leaderboard_rows(version=version)] == [
        "Oracolo (the demo's own answers)",
        "Metà e metà",
        "GPT-3.5",  # the example baseline, placed by its EA, unranked
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


# The paper's GPT-3.5 row: an example of a baseline. The paper has no figure for the demo's questions.


def test_the_demo_shows_the_papers_gpt35_row_as_its_one_baseline_with_no_figure_made_up(in_process):
    version = demo_load().version
    (baseline,) = Baseline.objects.filter(version=version)
    assert (baseline.model_name, baseline.team) == ("GPT-3.5", "Ranaldi et al.")
    assert baseline.source == PAPER_GPT35.fields["source"] and "arXiv:2402.08100" in baseline.source
    assert (baseline.source_url, baseline.date) == (
        PAPER_GPT35.fields["source_url"],
        PAPER_GPT35.fields["date"],
    )
    assert (baseline.weights, baseline.approach, baseline.training_cutoff) == (
        "closed",
        "prompting",
        "2021-09-30",
    )
    # The plain mean of the ten published figures, (50.79 + 56.25 + ... + 56.25) / 10 = 50.13%.
    assert baseline.ea == pytest.approx(sum(PAPER_GPT35_EA.values()) / 10 / 100) == pytest.approx(0.5013)
    assert baseline.per_database == {}  # the demo's databases are not the paper's
    assert "gpt-3.5-turbo-16k" in baseline.note
    assert "on Termite's ten databases, not measured on the demo's questions" in baseline.note
    assert "how a baseline row looks" in baseline.note
    (row,) = [row for row in ranking.leaderboard_rows(version=version) if row.baseline]
    assert (row.model_name, row.rank, row.ea) == ("GPT-3.5", None, pytest.approx(0.5013))
    assert row.per_database == {"biblioteca": None, "ciclismo": None}


def test_the_demo_baseline_is_marked_and_unranked_on_the_page_and_in_the_exports(in_process, client):
    demo_load()
    response = client.get("/leaderboard/")
    body = response.content.decode()
    assert row_ranks(response) == {
        "Oracolo (the demo's own answers)": "1",
        "Metà e metà": "2",  # the oracle is shown better than each of the others; they are not told apart
        "GPT-3.5": "—",
        "Solo domande facili": "2",
    }
    (html,) = [html for html in body.split("<tr") if ">GPT-3.5<" in html]
    assert 'class="baseline"' in html and '<span class="badge baseline">baseline</span>' in html
    assert "reported in the paper, not scored here" in html and "not measured on the demo" in html
    assert html.count('data-group="databases" data-sort="">—</td>') == 2  # no figure for either database
    bars = [trace["name"].split(" (#")[0] for trace in response.context["charts"]["databases"]["data"]]
    assert bars == ["Oracolo (the demo's own answers)", "Metà e metà", "Solo domande facili"]  # none for it

    (exported,) = [row for row in client.get(JSON).json()["rows"] if row["baseline"]]
    assert (exported["model_name"], exported["rank"], exported["submission_id"]) == ("GPT-3.5", None, None)
    assert exported["ea"] == pytest.approx(0.5013)
    assert exported["per_database"] == {"biblioteca": None, "ciclismo": None}
    assert exported["source"] == PAPER_GPT35.fields["source"]

    (line,) = [line for line in read_csv(client.get(csv_url())) if line["baseline"] == "true"]
    assert (line["model_name"], line["rank"], line["ea"]) == ("GPT-3.5", "", "0.5013")
    assert (line["db_biblioteca"], line["db_ciclismo"]) == ("", "")


def test_a_demo_loaded_before_the_baseline_existed_gets_it_once(in_process):
    version = demo_load().version
    Baseline.objects.filter(version=version).delete()
    assert demo_load().baseline_added
    assert not demo_load().baseline_added
    assert Baseline.objects.filter(version=version).count() == 1
