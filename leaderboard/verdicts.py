"""Each scored question's EA verdict, from a submission's outcome lines: what the rank rule and the paired
test read of them.

`Submission.mark_scored` keeps them beside the lines (`Submission.ea_verdicts`): a ranking of a thousand
rows reads a few bytes a question then, not the lines' hundred and more (their outcome, error, EA-strict,
TS-EA...). Who may see what is decided elsewhere (leaderboard/feedback.py); this only counts.
"""

from __future__ import annotations

from typing import Any

from evaluation.scoring.vocabulary import EXCLUDED

# What a verdict needs of a line; lines stored by older scorers may lack it.
_VERDICT_FIELDS = frozenset({"question_id", "outcome", "ea"})


def ea_verdicts(lines: Any) -> dict[str, bool] | None:
    """Question id -> EA verdict, for the questions scored (not excluded); a question not submitted is
    wrong, as in EA. None when the lines are missing or one lacks its verdict."""
    if not isinstance(lines, list):
        return None
    verdicts = {}
    for line in lines:
        if not isinstance(line, dict) or not line.keys() >= _VERDICT_FIELDS:
            return None
        if line["outcome"] != EXCLUDED:
            verdicts[line["question_id"]] = bool(line["ea"])
    return verdicts
