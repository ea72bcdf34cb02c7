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


def comparison(first: Submission, second: Submission) -> dict:
    """Two scored submissions side by side: overall, per database and per hardness level, with the
    difference first - second (None where either has no scored question)."""

    def line(name: str, a: dict | None, b: dict | None) -> dict:
        ea_a = a["ea"] if a and a.get("n") else None
        ea_b = b["ea"] if b and b.get("n") else None
        return {
            "name": name,
            "a": ea_a,
            "b": ea_b,
            "a_n": a.get("n") if a else None,
            "b_n": b.get("n") if b else None,
            "difference": None if ea_a is None or ea_b is None else ea_a - ea_b,
        }

    a, b = first.scores, second.scores
    databases = sorted(set(a["per_database"]) | set(b["per_database"]))
    levels = [level for level in HARDNESS_LEVELS if level in a["per_hardness"] or level in b["per_hardness"]]
    return {
        "overall": [
            line("EA", a["overall"], b["overall"]),
            line(
                "EA-strict",
                {"ea": a["overall"]["ea_strict"], "n": a["overall"]["n"]},
                {"ea": b["overall"]["ea_strict"], "n": b["overall"]["n"]},
            ),
        ],
        "per_database": [line(db, a["per_database"].get(db), b["per_database"].get(db)) for db in databases],
        "per_hardness": [
            line(level, a["per_hardness"].get(level), b["per_hardness"].get(level)) for level in levels
        ],
    }
