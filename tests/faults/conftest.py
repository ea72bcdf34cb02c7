from __future__ import annotations

import pytest

from tests.processes import require_postgresql
from tests.services import require_service

# Five predictions that never end: at one second each, a worker is busy long enough to be killed mid-job.
RUNAWAY = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"


@pytest.fixture
def real_services(transactional_db, settings):
    require_service("DATABASE_URL", 5432)
    settings.REDIS_URL = require_service("REDIS_URL", 6379)
    require_postgresql()
    from evaluation.queue import scoring_queue

    scoring_queue().empty()
    return settings


@pytest.fixture
def slow_predictions():
    from tests.demo import demo_gold

    gold = demo_gold()
    slow = dict(gold)
    for question_id in list(gold)[:5]:
        slow[question_id] = RUNAWAY
    return slow
