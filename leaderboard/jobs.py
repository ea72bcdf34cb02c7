"""django-rq jobs: each takes a primary key, loads the row and calls a service."""

from __future__ import annotations

from leaderboard.protocols.runner import run_execute
from leaderboard.rescoring import submission_rescore
from leaderboard.run_services import run_finished
from leaderboard.services import submission_score


def score_submission(submission_id: int) -> str:
    return submission_score(submission_id=submission_id)


def rescore_submission(submission_id: int, rescoring_id: int) -> str:
    return submission_rescore(submission_id=submission_id, rescoring_id=rescoring_id)


def run_protocol(run_id: int) -> str:
    ending = run_execute(run_id=run_id)
    if ending is None:
        return "not ended here"
    run_finished(run_id=run_id)
    return ending.status
