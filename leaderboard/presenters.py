"""What a results page shows of a scored submission, and to whom."""

from __future__ import annotations

from django.conf import settings

from evaluation.scoring.metrics import HARDNESS_LEVELS, OUTCOMES
from leaderboard.models import Submission

# Without TERMITE_SHOW_CORRECTNESS_TO_OWNER, these two outcomes are shown as one: telling the owner which
# answers were right would let them find the hidden answers by probing.
HIDDEN_VERDICT = "executed"


def owner_outcomes(submission: Submission) -> list[dict]:
    """The owner's own predictions with their outcome and their own error message, never anything of the gold."""
    show = settings.TERMITE_SHOW_CORRECTNESS_TO_OWNER
    rows = []
    for item in submission.outcomes or []:
        outcome = item["outcome"]
        if not show and outcome in ("correct", "wrong_result"):
            outcome = HIDDEN_VERDICT
        rows.append(
            {
                "question_id": item["question_id"],
                "outcome": outcome,
                "error": item.get("error"),
                "sql": submission.predictions.get(item["question_id"], ""),
            }
        )
    return rows


def score_tables(scores: dict) -> dict:
    per_hardness = [
        (level, scores["per_hardness"][level]) for level in HARDNESS_LEVELS if level in scores["per_hardness"]
    ]
    return {
        "overall": scores["overall"],
        "per_database": sorted(scores["per_database"].items()),
        "per_hardness": per_hardness,
        "outcomes": [(name, scores["outcomes"].get(name, 0)) for name in OUTCOMES],
    }
