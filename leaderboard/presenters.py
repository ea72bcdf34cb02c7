"""The tables of the results and compare pages, from scores that `feedback` has already cut."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from evaluation.scoring.score import scored_by_older_scorer
from evaluation.scoring.scores_json import AccuracyJSON, VisibleScoresJSON
from evaluation.scoring.vocabulary import HARDNESS_LEVELS, OUTCOMES, Outcome

# Scores made before scorer 1.3.0 have no TS-EA: None, which the pages show as unknown ("—").
_NO_TS_EA = {"ts_ea": None, "ts_ea_ci95": None, "ts_questions": None}


def score_tables(scores: VisibleScoresJSON) -> dict[str, Any]:
    """The tables of a results page, from scores as `feedback` cut them: a hidden breakdown is None.
    `older_scorer` is the version of the scorer that made them when it is not the current one, else "".
    TS-EA is None wherever the scores lack it."""
    scorer = scores["scorer_version"]
    head = {
        "overall": {**_NO_TS_EA, **scores["overall"]},
        "older_scorer": scorer if scored_by_older_scorer(scorer) else "",
    }
    if scores["per_database"] is None:
        return {**head, "per_database": None, "per_hardness": None, "outcomes": None}
    # `feedback` hides the breakdowns together: with `per_database` shown, these are too.
    hardness = cast(dict[str, AccuracyJSON], scores["per_hardness"])
    outcomes = cast(dict[Outcome, int], scores["outcomes"])
    per_hardness = [
        (level, {"ts_ea": None, **hardness[level]}) for level in HARDNESS_LEVELS if level in hardness
    ]
    return {
        **head,
        "per_database": [
            (db, {"ts_ea": None, **group}) for db, group in sorted(scores["per_database"].items())
        ],
        "per_hardness": per_hardness,
        "outcomes": [(name, outcomes.get(name, 0)) for name in OUTCOMES],
    }


def comparison(a: VisibleScoresJSON, b: VisibleScoresJSON) -> dict[str, Any]:
    """Two submissions' scores (as `feedback` cut them) side by side: EA, EA-strict and TS-EA overall, and
    EA and TS-EA (under "ts_ea") per database and per hardness level where both show them, with the
    difference a - b. A value is None where its side has no scored question or, for TS-EA, where its
    scores were made before scorer 1.3.0; the difference is None where either value is."""
    overall = [
        _line("EA", a["overall"], b["overall"], "ea"),
        _line("EA-strict", a["overall"], b["overall"], "ea_strict"),
        _line("TS-EA", a["overall"], b["overall"], "ts_ea"),
    ]
    if a["per_database"] is None or b["per_database"] is None:
        return {"overall": overall, "per_database": None, "per_hardness": None}
    databases = sorted(set(a["per_database"]) | set(b["per_database"]))
    # `feedback` hides the breakdowns together: with `per_database` shown, `per_hardness` is too.
    hardness_a = cast(dict[str, AccuracyJSON], a["per_hardness"])
    hardness_b = cast(dict[str, AccuracyJSON], b["per_hardness"])
    levels = [level for level in HARDNESS_LEVELS if level in hardness_a or level in hardness_b]
    return {
        "overall": overall,
        "per_database": [
            _group_line(db, a["per_database"].get(db), b["per_database"].get(db)) for db in databases
        ],
        "per_hardness": [
            _group_line(level, hardness_a.get(level), hardness_b.get(level)) for level in levels
        ],
    }


# The section of the metrics page that explains a metric, for the metrics a reader may not know.
_ABOUT = {"ts_ea": "ts-ea"}


def _line(name: str, a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, metric: str) -> dict[str, Any]:
    value_a, value_b = _value(a, metric), _value(b, metric)
    return {
        "name": name,
        "about": _ABOUT.get(metric, ""),
        "a": value_a,
        "b": value_b,
        "a_n": a.get("n") if a else None,
        "b_n": b.get("n") if b else None,
        "difference": None if value_a is None or value_b is None else value_a - value_b,
    }


def _group_line(name: str, a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> dict[str, Any]:
    return {**_line(name, a, b, "ea"), "ts_ea": _line(name, a, b, "ts_ea")}


def _value(group: Mapping[str, Any] | None, metric: str) -> float | None:
    return group.get(metric) if group and group.get("n") else None
