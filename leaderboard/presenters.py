"""The tables of the results and compare pages, from scores that `feedback` has already cut."""

from __future__ import annotations

from evaluation.scoring.score import scored_by_older_scorer
from evaluation.scoring.scores_json import VisibleScoresJSON
from evaluation.scoring.vocabulary import HARDNESS_LEVELS, OUTCOMES


def score_tables(scores: VisibleScoresJSON) -> dict:
    """The tables of a results page, from scores as `feedback` cut them: a hidden breakdown is None.
    `older_scorer` is the version of the scorer that made them when it is not the current one, else ""."""
    scorer = scores["scorer_version"]
    head = {"overall": scores["overall"], "older_scorer": scorer if scored_by_older_scorer(scorer) else ""}
    if scores["per_database"] is None:
        return {**head, "per_database": None, "per_hardness": None, "outcomes": None}
    per_hardness = [
        (level, scores["per_hardness"][level]) for level in HARDNESS_LEVELS if level in scores["per_hardness"]
    ]
    return {
        **head,
        "per_database": sorted(scores["per_database"].items()),
        "per_hardness": per_hardness,
        "outcomes": [(name, scores["outcomes"].get(name, 0)) for name in OUTCOMES],
    }


def comparison(a: VisibleScoresJSON, b: VisibleScoresJSON) -> dict:
    """Two submissions' scores (as `feedback` cut them) side by side: overall, and per database and per
    hardness level where both show them, with the difference a - b (None where either has no scored
    question)."""

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

    overall = [
        line("EA", a["overall"], b["overall"]),
        line(
            "EA-strict",
            {"ea": a["overall"]["ea_strict"], "n": a["overall"]["n"]},
            {"ea": b["overall"]["ea_strict"], "n": b["overall"]["n"]},
        ),
    ]
    if a["per_database"] is None or b["per_database"] is None:
        return {"overall": overall, "per_database": None, "per_hardness": None}
    databases = sorted(set(a["per_database"]) | set(b["per_database"]))
    levels = [level for level in HARDNESS_LEVELS if level in a["per_hardness"] or level in b["per_hardness"]]
    return {
        "overall": overall,
        "per_database": [line(db, a["per_database"].get(db), b["per_database"].get(db)) for db in databases],
        "per_hardness": [
            line(level, a["per_hardness"].get(level), b["per_hardness"].get(level)) for level in levels
        ],
    }
