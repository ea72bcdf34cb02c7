"""Scored submissions without running the scorer: `scores` JSON shaped exactly as the scorer writes it
for the demo benchmark (23 questions: biblioteca 12, ciclismo 11; easy 6, medium 7, hard 6, extra 4)."""

from __future__ import annotations

from evaluation.scoring.metrics import bootstrap_ci
from evaluation.scoring.vocabulary import OUTCOMES

DATABASES = {"biblioteca": 12, "ciclismo": 11}
HARDNESS = {"easy": 6, "medium": 7, "hard": 6, "extra": 4}
QUESTIONS = sum(DATABASES.values())


def _spread(correct: int, sizes: dict[str, int]) -> dict[str, int]:
    """`correct` answers filling the groups in order: the first group is answered best."""
    spread = {}
    for name, size in sizes.items():
        spread[name] = min(correct, size)
        correct -= spread[name]
    return spread


def scores_json(correct: int, *, strict: int | None = None, scorer_version: str = "1.0.0") -> dict:
    strict = correct if strict is None else strict

    def groups(sizes: dict[str, int]) -> dict:
        right, right_strict = _spread(correct, sizes), _spread(strict, sizes)
        return {
            name: {"ea": right[name] / size, "ea_strict": right_strict[name] / size, "n": size}
            for name, size in sizes.items()
        }

    low, high = bootstrap_ci([True] * correct + [False] * (QUESTIONS - correct))
    outcomes = dict.fromkeys(OUTCOMES, 0)
    outcomes.update(correct=correct, wrong_result=QUESTIONS - correct)
    return {
        "version": "demo-1.0",
        "scorer_version": scorer_version,
        "overall": {
            "ea": correct / QUESTIONS,
            "ea_strict": strict / QUESTIONS,
            "ea_ci95": [low, high],
            "n": QUESTIONS,
            "excluded": 0,
        },
        "per_database": groups(DATABASES),
        "per_hardness": groups(HARDNESS),
        "outcomes": outcomes,
    }


def scored_fields(correct: int, *, strict: int | None = None, scorer_version: str = "1.0.0") -> dict:
    """The fields of a public submission scored with `correct` right answers of 23 by `scorer_version`."""
    scores = scores_json(correct, strict=strict, scorer_version=scorer_version)
    return {
        "status": "scored",
        "is_public": True,
        "scores": scores,
        "ea": scores["overall"]["ea"],
        "ea_strict": scores["overall"]["ea_strict"],
    }


def bulk_scored(count: int, *, user, version) -> None:
    """`count` public scored submissions in one INSERT, with the predictions and outcomes a real one has."""
    from datetime import timedelta

    from django.utils import timezone

    from leaderboard.models import Submission

    question_ids = [f"{db}-{i:03d}" for db, size in DATABASES.items() for i in range(1, size + 1)]
    now = timezone.now()
    submissions = []
    for i in range(count):
        correct = i % (QUESTIONS + 1)
        outcomes = [
            {"question_id": qid, "outcome": "correct" if n < correct else "wrong_result", "error": None}
            for n, qid in enumerate(question_ids)
        ]
        submissions.append(
            Submission(
                user=user,
                version=version,
                created_at=now - timedelta(minutes=i),
                model_name=f"Sistema {i}",
                team=f"Gruppo {i % 7}",
                model_size=("7B", "13B", "70B", "")[i % 4],
                weights=("open", "closed", "unknown")[i % 3],
                approach=("prompting", "fine-tuning")[i % 2],
                spider_dev_ea=60 + i % 30 if i % 2 else None,
                predictions={qid: f"SELECT {n} FROM tabella_{n}" for n, qid in enumerate(question_ids)},
                outcomes=outcomes,
                file_name="predictions.jsonl",
                file_sha256=f"{i:064x}",
                file_format="jsonl",
                scorer_version="1.0.0",
                scored_at=now,
                **scored_fields(correct),
            )
        )
    Submission.objects.bulk_create(submissions, batch_size=500)
