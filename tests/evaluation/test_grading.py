"""Warming the gold caches: the worker runs the gold of every published version once, before its jobs."""

from __future__ import annotations

import logging

import pytest

from evaluation import grading
from evaluation.scoring.sandbox import Sandbox
from tests.demo import database_lost

pytestmark = pytest.mark.django_db


@pytest.fixture
def cold_caches(monkeypatch):
    monkeypatch.setattr(grading, "_GOLD_RESULTS", grading._BoundedCache(limit=20_000))
    monkeypatch.setattr(grading, "_GOLD_QUESTIONS", {})


@pytest.fixture
def executed_queries(monkeypatch) -> list:
    """Every query the scorer hands a sandbox, from now on."""
    queries: list = []
    stream = Sandbox.stream  # every batch goes through it, execute_many's too

    def recording(self, batch):
        def recorded():  # the scorer's batch is made as the sandbox asks for it: recorded as it goes
            for query in batch:
                queries.append(query)
                yield query

        return stream(self, recorded())

    monkeypatch.setattr(Sandbox, "stream", recording)
    return queries


def test_warming_caches_the_gold_of_the_demo_version_so_that_scoring_runs_no_gold_query(
    demo_version, cold_caches, executed_queries, gold
):
    assert grading.warm_gold_cache() == [str(demo_version)]
    assert executed_queries and not any(query.budgeted for query in executed_queries)
    assert len(grading._GOLD_RESULTS) == len(gold)
    executed_queries.clear()

    report = grading.score_version(version=demo_version, predictions=gold)

    assert report.metrics.outcomes["correct"] == len(gold)
    assert len(executed_queries) == len(gold) and all(query.budgeted for query in executed_queries)


def test_a_draft_version_is_not_warmed(demo_version, cold_caches, executed_queries):
    demo_version.status = demo_version.Status.DRAFT
    demo_version.save(update_fields=["status"])
    assert grading.warm_gold_cache() == []
    assert executed_queries == [] and len(grading._GOLD_RESULTS) == 0


def test_a_version_that_cannot_be_scored_is_skipped_and_logged_by_its_error_type_only(
    demo_version, cold_caches, caplog
):
    ciclismo = demo_version.databases.get(slug="ciclismo")
    with database_lost(ciclismo), caplog.at_level(logging.WARNING, logger="evaluation.grading"):
        assert grading.warm_gold_cache() == []
    assert [record.getMessage() for record in caplog.records] == [
        f"gold cache of version {demo_version.pk} not warmed: DatabaseUnavailable"
    ]
