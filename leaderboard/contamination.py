"""Contamination hints: a model's EA on the questions it cannot have seen in training.

Each question was added to the benchmark on its database's `added_on` (evaluation/models.py). A model
whose card gives a training-data cutoff before that day cannot have been trained on the question, so
its EA there is free of contamination by it; beside its EA on every question, it hints at how much the
others may owe to having been seen. The leaderboard shows it for the rows whose card gives a cutoff date
(leaderboard/ranking.py computes it with the ranking, and caches it with it).

Its limits, which the metrics page states: the cutoff is self-reported; "after the cutoff" means the
model could not have seen a question, never that it did see the earlier ones; and the questions after a
cutoff are few, and from a few databases, so their EA is noisier and may differ from the EA on all for
reasons that have nothing to do with contamination.

Sealed feedback: a database and its questions are added together, so the questions after any cutoff
are whole databases, and this EA is the question-weighted mean of the submission's EA per database,
which the leaderboard already shows for a public submission. It tells nothing more of the hidden data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class AfterCutoff:
    """EA on the n scored questions added after a training-data cutoff."""

    ea: float
    n: int


def ea_after_cutoff(
    *, cutoff: date | None, verdicts: Mapping[str, bool] | None, added_on: Mapping[str, date]
) -> AfterCutoff | None:
    """EA over the scored questions added strictly after `cutoff` (a question added on the cutoff day
    itself may have been seen), from `verdicts` (question id -> right under EA, a question not submitted
    being wrong) and `added_on` (question id -> the day its database was added). None when there is no
    cutoff, no verdicts, or no such question."""
    if cutoff is None or verdicts is None:
        return None
    later = [qid for qid, added in added_on.items() if added > cutoff and qid in verdicts]
    if not later:
        return None
    right = sum(1 for qid in later if verdicts[qid])
    return AfterCutoff(ea=round(right / len(later), 6), n=len(later))
