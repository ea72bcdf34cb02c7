"""An erratum as its reporter sees it through the API. The keys are a public contract: add, never rename;
the API (leaderboard/api.py) declares its answer with this type, and its OpenAPI document is generated from it."""

from __future__ import annotations

from typing import Annotated

from typing_extensions import TypedDict

from evaluation.models import Erratum
from evaluation.scoring.scores_json import Schema


class ErratumJSON(TypedDict):
    """One of your reports that a question is wrong, and staff's answer."""

    id: int
    version: Annotated[str, Schema(description="The label of the version the question belongs to")]
    question_id: str
    description: Annotated[str, Schema(description="What you wrote; only you and the staff read it")]
    status: Annotated[str, Schema(enum=Erratum.Status.values)]
    reason: Annotated[
        str | None,
        Schema(
            description="Staff's answer: the public reason once accepted, the reason it was declined once"
            " declined (yours only); null while open"
        ),
    ]
    created_at: Annotated[str, Schema(format="date-time")]
    resolved_at: Annotated[str | None, Schema(format="date-time")]


def erratum_json(erratum: Erratum) -> ErratumJSON:
    return {
        "id": erratum.pk,
        "version": erratum.question.version.label,
        "question_id": erratum.question.public_id,
        "description": erratum.description,
        "status": erratum.status,
        "reason": erratum.reason_for_reporter or None,
        "created_at": erratum.created_at.isoformat(),
        "resolved_at": erratum.resolved_at.isoformat() if erratum.resolved_at else None,
    }
