from __future__ import annotations

import pytest

# Five predictions that never end: at one second each, a worker is busy long enough to be killed mid-job.
# They read a table of the library (the first five questions are its own), or the scorer would refuse them
# from their text as hard-coded answers (reads_no_table) without running them.
RUNAWAY = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
    " WHERE EXISTS (SELECT 1 FROM libri)"
)


@pytest.fixture
def slow_predictions():
    from tests.demo import demo_gold

    gold = demo_gold()
    slow = dict(gold)
    for question_id in list(gold)[:5]:
        slow[question_id] = RUNAWAY
    return slow
