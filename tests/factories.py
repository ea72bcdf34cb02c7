"""Rows made with only what a test reads: no importer, no scorer, no queue.

A ranking, export, sweeper or page test needs rows, not the path that makes them: these write the rows
straight into their tables. Where a test needs the path (an upload, an import, a run started through the
service), it calls the service itself.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.utils import timezone

from evaluation.gold import encrypt_gold
from evaluation.models import BenchmarkVersion, Database, Question
from evaluation.scoring.score import SCORER_VERSION
from leaderboard.models import Baseline, ProtocolRun, Submission
from leaderboard.verdicts import ea_verdicts
from termite_site.accounts.models import Team, TeamMembership, User
from termite_site.accounts.services import team_create


def version_make(
    *, label: str = "fabbrica-1.0", databases: dict[str, int] | None = None, published: bool = True
) -> BenchmarkVersion:
    """A version with `databases` ({slug: number of questions}) as rows, every gold `SELECT 1`. It has no
    built copy, so nothing on it can be scored: for the pages, rankings and exports of a second version."""
    version = BenchmarkVersion.objects.create(label=label, name="Termite")
    for slug, size in ({"biblioteca": 2} if databases is None else databases).items():
        database = Database.objects.create(
            version=version,
            slug=slug,
            display_name=slug.title(),
            schema_sql="",
            sqlite_schema="",
            sqlite_sha256="",
            built_by_scorer=SCORER_VERSION,
        )
        Question.objects.bulk_create(
            Question(
                version=version,
                database=database,
                public_id=f"{slug}-{position:03d}",
                position=position,
                text=f"Domanda {position} su {slug}?",
                hardness="easy",
                gold_encrypted=encrypt_gold("SELECT 1"),
            )
            for position in range(1, size + 1)
        )
    if published:
        version.publish()
    return version


def submission_make(*, user: User, version: BenchmarkVersion, **fields: Any) -> Submission:
    """A stored submission, as an upload leaves it before scoring (override any field: `status`, `scores`,
    `is_public`, ...). `tests/leaderboard/scored.py` gives the fields of a scored one."""
    values: dict[str, Any] = {
        "user": user,
        "version": version,
        "model_name": "Modello di prova",
        "predictions": {"biblioteca-001": "SELECT 1"},
        "file_name": "p.jsonl",
        "file_sha256": "0" * 64,
        "file_format": "jsonl",
        "scorer_version": "1.0.0",
        **fields,
    }
    if "outcomes" in fields:  # the verdicts kept beside the lines, as scoring keeps them, whatever the lines
        values["ea_verdicts"] = ea_verdicts(fields["outcomes"])
    return Submission.objects.create(**values)


def team_make(*, owner: User, name: str = "Gruppo Torino", members: tuple[User, ...] = ()) -> Team:
    """A team made as on the site (its owner a member, its slug taken), with `members` in it too."""
    team = team_create(user=owner, name=name)
    TeamMembership.objects.bulk_create(TeamMembership(team=team, user=member) for member in members)
    return team


def run_make(*, user: User, version: BenchmarkVersion, **fields: Any) -> ProtocolRun:
    """A protocol run as stored, without its key and without running (default: finished just now)."""
    values: dict[str, Any] = {
        "user": user,
        "version": version,
        "endpoint_url": "http://127.0.0.1:9/v1/chat/completions",
        "model": "stub-model",
        "protocol": "termite-2turn-it/1",
        "max_requests": 10,
        "max_seconds": 60,
        "status": ProtocolRun.Status.FINISHED,
        "finished_at": timezone.now(),
        **fields,
    }
    return ProtocolRun.objects.create(**values)


def baseline_make(*, version: BenchmarkVersion, **fields: Any) -> Baseline:
    """A baseline reported in a made-up paper, straight in the table: EA per database as given, else a half
    on biblioteca and a quarter on ciclismo."""
    defaults: dict[str, Any] = {
        "model_name": "Riferimento",
        "per_database": {"biblioteca": 0.5, "ciclismo": 0.25},
        "source": "Un articolo, 2024.",
        "date": date(2024, 5, 1),
    }
    return Baseline.objects.create(version=version, **{**defaults, **fields})
