from __future__ import annotations

import pytest

from leaderboard.models import Submission
from tests.demo import demo_gold


@pytest.fixture
def in_process(settings):
    """Score in this process (django-rq's synchronous mode), as the embedded default does."""
    settings.REDIS_URL = ""


@pytest.fixture
def gold():
    return demo_gold()


@pytest.fixture
def make_submission(demo_version, owner):
    """A stored submission, straight in the table: for tests about what happens after an upload."""

    def make(**fields) -> Submission:
        values = {
            "user": owner,
            "version": demo_version,
            "model_name": "Modello di prova",
            "predictions": {"biblioteca-001": "SELECT 1"},
            "file_name": "p.jsonl",
            "file_sha256": "0" * 64,
            "file_format": "jsonl",
            "scorer_version": "1.0.0",
        }
        values.update(fields)
        return Submission.objects.create(**values)

    return make
