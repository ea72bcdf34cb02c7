"""Submissions stored before a migration get what the new code would have stored."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.migrations import migrate

# Every store these migrations met started empty: the demo the suite shares is not in it.
pytestmark = pytest.mark.usefixtures("empty_store")

# The benchmark store as it stood then too: a later column of its own (a version's participants_see) has
# no default in the database, so a row made with the old models needs the old table.
BEFORE_TEAMS = [("leaderboard", "0007_submission_verified"), ("evaluation", "0007_stored_databases")]
AFTER_TEAMS = [("leaderboard", "0008_submission_team")]


def uploaded(Submission, **fields) -> int:
    """The id of a submission row made with a migration state's model, as an upload leaves it, with
    `fields` (its user, version, ...)."""
    return Submission.objects.create(
        model_name="Modello",
        predictions={},
        file_name="p.jsonl",
        file_sha256="0" * 64,
        file_format="jsonl",
        scorer_version="1.0.0",
        **fields,
    ).pk


@pytest.mark.django_db(transaction=True)
def test_each_text_team_becomes_a_team_of_its_submitters(latest_after):
    apps = migrate(BEFORE_TEAMS)
    User = apps.get_model("accounts", "User")
    Version = apps.get_model("evaluation", "BenchmarkVersion")
    Submission = apps.get_model("leaderboard", "Submission")
    ada, bruno, carla = (
        User.objects.create(username=name, email=f"{name}@example.org") for name in ("ada", "bruno", "carla")
    )
    version = Version.objects.create(name="Termite", label="vecchia")
    start = timezone.now() - timedelta(days=10)

    def submit(user, team: str, days: int):
        return uploaded(
            Submission, user=user, version=version, team=team, created_at=start + timedelta(days=days)
        )

    # The same team three ways, written first by bruno; ada's own team; carla's and one with no team.
    torino = [
        submit(bruno, "Gruppo Torino", 1),
        submit(ada, "gruppo  torino ", 2),
        submit(carla, "GRUPPO TORINO", 3),
    ]
    again = submit(bruno, "Gruppo Torino", 4)
    milano = submit(ada, "Milano", 0)
    alone = [submit(carla, "", 5), submit(carla, "   ", 6)]

    apps = migrate(AFTER_TEAMS)
    Team = apps.get_model("accounts", "Team")
    Membership = apps.get_model("accounts", "TeamMembership")
    Submission = apps.get_model("leaderboard", "Submission")
    assert sorted(Team.objects.values_list("name", "slug")) == [
        ("Gruppo Torino", "gruppo-torino"),
        ("Milano", "milano"),
    ]
    team = Team.objects.get(slug="gruppo-torino")
    assert (team.created_by_id, team.created_at) == (bruno.pk, start + timedelta(days=1))
    members = {m.user_id: (m.role, m.joined_at) for m in Membership.objects.filter(team=team)}
    assert members == {
        bruno.pk: ("owner", start + timedelta(days=1)),
        ada.pk: ("member", start + timedelta(days=2)),
        carla.pk: ("member", start + timedelta(days=3)),
    }
    assert set(Submission.objects.filter(team=team).values_list("pk", flat=True)) == {*torino, again}
    assert Submission.objects.get(pk=milano).team.name == "Milano"
    assert list(Membership.objects.filter(team__slug="milano").values_list("user_id", "role")) == [
        (ada.pk, "owner")
    ]
    assert list(Submission.objects.filter(pk__in=alone).values_list("team", flat=True)) == [None, None]

    # Going back, each submission gets its team's name as text.
    apps = migrate(BEFORE_TEAMS)
    Submission = apps.get_model("leaderboard", "Submission")
    assert dict(Submission.objects.values_list("pk", "team")) == {
        **dict.fromkeys([*torino, again], "Gruppo Torino"),
        milano: "Milano",
        **dict.fromkeys(alone, ""),
    }


# With the benchmark store as it stands: a version row needs all of its columns.
STORE = ("evaluation", "0011_database_imports")
BEFORE_VERDICTS = [("leaderboard", "0014_baseline_with_only_an_overall_ea"), STORE]
AFTER_VERDICTS = [("leaderboard", "0015_ea_verdicts_kept"), STORE]


@pytest.mark.django_db(transaction=True)
def test_each_scored_submission_keeps_the_verdicts_of_its_outcome_lines(latest_after):
    apps = migrate(BEFORE_VERDICTS)
    User = apps.get_model("accounts", "User")
    Version = apps.get_model("evaluation", "BenchmarkVersion")
    Submission = apps.get_model("leaderboard", "Submission")
    user = User.objects.create(username="ada", email="ada@example.org")
    version = Version.objects.create(name="Termite", label="vecchia")

    def stored(outcomes):
        return uploaded(Submission, user=user, version=version, outcomes=outcomes)

    def line(question_id: str, outcome: str, ea: bool):
        return {"question_id": question_id, "outcome": outcome, "ea": ea, "ea_strict": ea, "error": None}

    scored = stored(
        [
            line("biblioteca-001", "correct", True),
            line("biblioteca-002", "wrong_result", False),
            line("biblioteca-003", "not_submitted", False),
            line("biblioteca-004", "excluded", False),
        ]
    )
    older = stored([{"question_id": "biblioteca-001", "outcome": "correct"}])  # no verdict in its lines
    unscored = stored(None)

    apps = migrate(AFTER_VERDICTS)
    Submission = apps.get_model("leaderboard", "Submission")
    assert dict(Submission.objects.values_list("pk", "ea_verdicts")) == {
        scored: {"biblioteca-001": True, "biblioteca-002": False, "biblioteca-003": False},
        older: None,
        unscored: None,
    }
