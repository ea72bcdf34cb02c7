"""The demo content a new portal starts with (`manage.py load_demo`, run by `python3 dev.py start`): a demo
admin, the demo benchmark (built by evaluation from its own files), three scored public submissions made
on behalf of two demo teams, so that the leaderboard shows something, and the paper's GPT-3.5 row as an
example of a baseline. Loading it again changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F

from evaluation.models import BenchmarkVersion
from evaluation.rebuilding import version_rebuild
from evaluation.scoring.score import SCORER_VERSION
from evaluation.services import (
    DEMO_LABEL,
    demo_benchmark_load,
    version_build_suites,
)
from evaluation.sources import DEMO_DATABASES, DEMO_DIR
from leaderboard.baselines import PAPER_GPT35, baseline_put
from leaderboard.model_card import Approach, InstructionLanguage, Sampling, SchemaFormat, Weights
from leaderboard.models import Rescoring, Scoring, Submission
from leaderboard.rescoring import rescoring_start
from leaderboard.services import submission_score
from termite_site.accounts.models import Team, User
from termite_site.accounts.services import team_create

DEMO_ADMIN = "admin"
DEMO_SUBMITTER = "demo"
# The demo teams; the demo submitter owns both.
DEMO_TEAMS = ("Termite Portal demo", "Laboratorio demo")


@dataclass(frozen=True)
class DemoLoad:
    version: BenchmarkVersion
    benchmark_loaded: bool  # False: it was there already
    submissions_made: int  # 0: they were there already
    baseline_added: bool  # False: it was there already
    admin_password: str


def demo_load() -> DemoLoad:
    """Make sure the demo admin, the demo benchmark (a practice version: participants see everything),
    the demo submissions and the example baseline exist."""
    with transaction.atomic():
        password = demo_admin_password()
        version = demo_benchmark_load()
    loaded = version is not None
    version = version or BenchmarkVersion.objects.get(label=DEMO_LABEL)
    made = demo_submissions_load(version=version)
    baseline_added = demo_baseline_load(version=version)
    if not loaded:
        _bring_up_to_date(version)
    return DemoLoad(
        version=version,
        benchmark_loaded=loaded,
        submissions_made=made,
        baseline_added=baseline_added,
        admin_password=password,
    )


def _bring_up_to_date(version: BenchmarkVersion) -> None:
    """A demo an earlier portal loaded gets what this one adds: its test suites, its copies and SQLite gold
    as the current scorer builds them, and its submissions scored by the current scorer (each does nothing
    when there is nothing to do)."""
    if settings.TERMITE_SUITE_CANDIDATES and version.databases.filter(neighbours__isnull=True).exists():
        version_build_suites(version=version)
    if version_rebuild(version=version) is None:  # a rebuild rescores every submission itself
        rescoring_start(version=version, reason=Rescoring.Reason.SCORER)


def demo_admin_exists() -> bool:
    return get_user_model().objects.filter(username=DEMO_ADMIN).exists()


def demo_admin_password() -> str:
    """The demo admin's password, creating the admin (or a new password) where needed. It is kept beside
    the other generated secrets so that every start can print it."""
    path = settings.DATA_DIR / "secrets" / "demo-admin-password"
    user = get_user_model().objects.filter(username=DEMO_ADMIN).first()
    if user is not None and path.exists():
        return path.read_text().strip()
    password = secrets.token_urlsafe(12)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(password)
    path.chmod(0o600)
    if user is None:
        get_user_model().objects.create_superuser(DEMO_ADMIN, "admin@example.org", password)
    else:
        user.set_password(password)
        user.save(update_fields=["password"])
    return password


def demo_gold() -> dict[str, str]:
    """The demo's own gold, question id -> MySQL query: our content, not the hidden benchmark's."""
    gold = {}
    for slug in DEMO_DATABASES:
        for line in (DEMO_DIR / f"{slug}.jsonl").read_text().splitlines():
            item = json.loads(line)
            gold[item["id"]] = item["gold_sql"]
    return gold


# A table of each demo database. A wrong answer reads one: a query that reads no table (`SELECT 1`) is not
# wrong by what it returns but by its text (`reads_no_table`), which is not the system this one stands for.
_A_TABLE = {"biblioteca": "libri", "ciclismo": "corridori"}


def _wrong_answer(question_id: str) -> str:
    database = question_id.rsplit("-", 1)[0]
    return f"SELECT COUNT(*) FROM {_A_TABLE[database]} WHERE 1 = 0"


# The demo systems' model cards, complete as a public submission's must be. Made up, like the systems;
# the cutoffs fall before, between and after the demo databases' dates (evaluation.services.DEMO_ADDED_ON),
# so that the leaderboard shows EA after the cutoff.
DEMO_CARDS: dict[str, dict[str, Any]] = {
    "Oracolo (the demo's own answers)": {
        "model_size": "unknown",
        "weights": Weights.CLOSED,
        "approach": Approach.OTHER,
        "training_cutoff": "unknown",
        "shots": 0,
        "schema_format": SchemaFormat.MYSQL_DDL,
        "instruction_language": InstructionLanguage.ITALIAN,
        "sampling": Sampling.GREEDY,
        "decoding_note": "the gold queries, copied",
        "run_date": date(2025, 6, 2),
    },
    "Metà e metà": {
        "model_size": "7B",
        "weights": Weights.OPEN,
        "approach": Approach.PROMPTING,
        "training_cutoff": "2024-09-30",
        "shots": 3,
        "schema_format": SchemaFormat.SQLITE_DDL,
        "instruction_language": InstructionLanguage.ENGLISH,
        "sampling": Sampling.TOP_P,
        "temperature": 0.7,
        "decoding_note": "top-p 0.95",
        "run_date": date(2025, 6, 2),
    },
    "Solo domande facili": {
        "model_size": "70B",
        "weights": Weights.OPEN,
        "approach": Approach.FINE_TUNING,
        "training_cutoff": "2023-12-31",
        "shots": 0,
        "schema_format": SchemaFormat.TABLES_JSON,
        "instruction_language": InstructionLanguage.ITALIAN,
        "sampling": Sampling.BEAM,
        "decoding_note": "beam width 4",
        "run_date": date(2025, 6, 3),
    },
}


def demo_submissions_load(*, version: BenchmarkVersion) -> int:
    """Three public, scored submissions on the demo benchmark, so that a new portal shows a leaderboard.

    Built from the demo's own question files (our content, not the hidden benchmark); scored here and now
    rather than queued, so the demo needs no worker. Returns how many were made (0 if already there).
    """
    user, created = get_user_model().objects.get_or_create(
        username=DEMO_SUBMITTER, defaults={"email": "demo@example.org", "affiliation": "Termite Portal"}
    )
    if not created and user.submissions.exists():
        return 0
    gold = demo_gold()
    easy = set(version.questions.filter(hardness="easy").values_list("public_id", flat=True))
    portal, lab = (_demo_team(user=user, name=name) for name in DEMO_TEAMS)
    systems = {
        "Oracolo (the demo's own answers)": (portal, gold),
        "Metà e metà": (
            portal,
            {qid: gold[qid] if n % 2 == 0 else _wrong_answer(qid) for n, qid in enumerate(sorted(gold))},
        ),
        "Solo domande facili": (lab, {qid: sql for qid, sql in gold.items() if qid in easy}),
    }
    for model_name, (team, predictions) in systems.items():
        submission = Submission.objects.create(
            user=user,
            version=version,
            model_name=model_name,
            team=team,
            is_public=True,
            **DEMO_CARDS[model_name],
            predictions=predictions,
            file_name="demo.jsonl",
            file_sha256=hashlib.sha256(json.dumps(predictions, sort_keys=True).encode()).hexdigest(),
            file_format="jsonl",
            missing_count=len(gold) - len(predictions),
            scorer_version=SCORER_VERSION,
        )
        submission_score(submission_id=submission.pk)
    # The release time seals the hidden data's timing; the demo's data is ours and public, so its
    # leaderboard shows at once rather than after TERMITE_RESULT_DELAY_SECONDS.
    made = Submission.objects.filter(user=user, version=version)
    Scoring.objects.filter(submission__in=made).update(released_at=F("scored_at"))
    made.update(released_at=F("scored_at"))
    return len(systems)


def _demo_team(*, user: User, name: str) -> Team:
    # A team of that name may be there already, from a demo loaded before teams existed (the migration
    # made its text team a team): it is taken as it is.
    team = Team.objects.filter(name__iexact=name).first()
    return team if team is not None else team_create(user=user, name=name)


# The paper measured GPT-3.5 on Termite's databases, not on the demo's: it has no figure for the demo's
# questions, and none is made up. The row carries the paper's model card and citation, the mean of its
# published per-database EA and no EA per demo database, and says so.
DEMO_BASELINE_NOTE = (
    f"{PAPER_GPT35.fields['note']}. The mean of the EA the paper reports on Termite's ten databases, not "
    "measured on the demo's questions: shown so that a newcomer sees how a baseline row looks."
)


def demo_baseline_load(*, version: BenchmarkVersion) -> bool:
    """The paper's GPT-3.5 row on the demo, as an example of a baseline: unranked, like every baseline.
    Brought up to date if there already; returns whether it is new."""
    fields = {**PAPER_GPT35.fields, "per_database": {}, "ea": PAPER_GPT35.mean_ea, "note": DEMO_BASELINE_NOTE}
    _, created = baseline_put(version=version, fields=fields)
    return created
