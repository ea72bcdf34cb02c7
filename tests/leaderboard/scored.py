"""Scored submissions without running the scorer: `scores` JSON shaped exactly as the scorer writes it
for the demo benchmark (23 questions: biblioteca 12, ciclismo 11; easy 6, medium 7, hard 6, extra 4)."""

from __future__ import annotations

from collections.abc import Iterable

from evaluation.scoring.metrics import bootstrap_ci
from evaluation.scoring.score import SCORER_VERSION
from evaluation.scoring.vocabulary import OUTCOMES
from leaderboard.verdicts import ea_verdicts

DATABASES = {"biblioteca": 12, "ciclismo": 11}
HARDNESS = {"easy": 6, "medium": 7, "hard": 6, "extra": 4}
QUESTIONS = sum(DATABASES.values())
QUESTION_IDS = [f"{db}-{i:03d}" for db, size in DATABASES.items() for i in range(1, size + 1)]


def _spread(correct: int, sizes: dict[str, int]) -> dict[str, int]:
    """`correct` answers filling the groups in order: the first group is answered best."""
    spread = {}
    for name, size in sizes.items():
        spread[name] = min(correct, size)
        correct -= spread[name]
    return spread


def _interval(right: int) -> list[float]:
    return list(bootstrap_ci([True] * right + [False] * (QUESTIONS - right)))


def scores_json(
    correct: int, *, strict: int | None = None, ts: int | None = None, scorer_version: str | None = None
) -> dict:
    """`correct` right answers under EA, `strict` under EA-strict (default: as EA). With `ts`, that many
    right under test-suite EA, every question having a suite, as the current scorer writes it; without
    it, no TS-EA at all, as in scores made before scorer 1.3.0 (the default scorer version is then 1.0.0)."""
    strict = correct if strict is None else strict
    if scorer_version is None:
        scorer_version = "1.0.0" if ts is None else SCORER_VERSION

    def groups(sizes: dict[str, int]) -> dict:
        right, right_strict = _spread(correct, sizes), _spread(strict, sizes)
        right_ts = _spread(ts or 0, sizes)
        return {
            name: {
                "ea": right[name] / size,
                "ea_strict": right_strict[name] / size,
                **({} if ts is None else {"ts_ea": right_ts[name] / size}),
                "n": size,
            }
            for name, size in sizes.items()
        }

    overall = {"ea": correct / QUESTIONS, "ea_strict": strict / QUESTIONS, "ea_ci95": _interval(correct)}
    if ts is not None:
        overall.update(ts_ea=ts / QUESTIONS, ts_ea_ci95=_interval(ts), ts_questions=QUESTIONS)
    outcomes = dict.fromkeys(OUTCOMES, 0)
    outcomes.update(correct=correct, wrong_result=QUESTIONS - correct)
    return {
        "version": "demo-1.0",
        "scorer_version": scorer_version,
        "overall": {**overall, "n": QUESTIONS, "excluded": 0},
        "per_database": groups(DATABASES),
        "per_hardness": groups(HARDNESS),
        "outcomes": outcomes,
    }


def scored_fields(
    correct: int,
    *,
    strict: int | None = None,
    ts: int | None = None,
    scorer_version: str | None = None,
    outcomes: list[dict] | None = None,
) -> dict:
    """The fields of a public submission scored with `correct` right answers of 23 (see `scores_json`):
    by default the first `correct` questions of QUESTION_IDS, as its lines per question (`outcomes`) say,
    and the EA verdicts kept of them (`ea_verdicts`, which the rank rule reads)."""
    scores = scores_json(correct, strict=strict, ts=ts, scorer_version=scorer_version)
    lines = outcome_lines(range(correct)) if outcomes is None else outcomes
    return {
        "status": "scored",
        "is_public": True,
        "scores": scores,
        "outcomes": lines,
        "ea_verdicts": ea_verdicts(lines),
        "ea": scores["overall"]["ea"],
        "ea_strict": scores["overall"]["ea_strict"],
    }


def outcome_lines(
    right: Iterable[int], *, not_submitted: Iterable[int] = (), excluded: Iterable[int] = ()
) -> list[dict]:
    """`Submission.outcomes` as the current scorer stores it: the questions at the positions `right` (in
    QUESTION_IDS) correct, those in `not_submitted` not submitted, those in `excluded` excluded, the
    others wrong results."""
    right, not_submitted, excluded = set(right), set(not_submitted), set(excluded)
    lines = []
    for position, qid in enumerate(QUESTION_IDS):
        outcome = (
            "excluded"
            if position in excluded
            else "correct"
            if position in right
            else "not_submitted"
            if position in not_submitted
            else "wrong_result"
        )
        correct = outcome == "correct"
        lines.append(
            {
                "question_id": qid,
                "outcome": outcome,
                "ea": correct,
                "ea_strict": correct,
                "ts_ea": correct,
                "error": None,
                "static": outcome == "not_submitted",
            }
        )
    return lines


def bulk_scored(count: int, *, user, version) -> None:
    """`count` public scored submissions in one INSERT, with the predictions and outcomes a real one has."""
    from datetime import timedelta

    from django.utils import timezone

    from leaderboard.models import Submission
    from termite_site.accounts.models import Team

    teams = Team.objects.bulk_create(Team(name=f"Gruppo {n}", slug=f"gruppo-{n}") for n in range(7))
    question_ids = QUESTION_IDS
    now = timezone.now()
    submissions = []
    for i in range(count):
        correct = i % (QUESTIONS + 1)
        submissions.append(
            Submission(
                user=user,
                version=version,
                created_at=now - timedelta(minutes=i),
                model_name=f"Sistema {i}",
                team=teams[i % 7],
                model_size=("7B", "13B", "70B", "")[i % 4],
                weights=("open", "closed", "unknown")[i % 3],
                approach=("prompting", "fine-tuning")[i % 2],
                spider_dev_ea=60 + i % 30 if i % 2 else None,
                predictions={qid: f"SELECT {n} FROM tabella_{n}" for n, qid in enumerate(question_ids)},
                file_name="predictions.jsonl",
                file_sha256=f"{i:064x}",
                file_format="jsonl",
                scorer_version="1.0.0",
                scored_at=now,
                **scored_fields(correct),
            )
        )
    Submission.objects.bulk_create(submissions, batch_size=500)
