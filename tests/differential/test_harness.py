"""The differential harness on the project's demo benchmark: MariaDB and the portal judge each case."""

from __future__ import annotations

import pytest

from evaluation.sources import demo_source
from tests.differential.generator import DIALECT, EQUIVALENT
from tests.differential.harness import AGREE, CORRECT, REFUSED, run_differential

pytestmark = pytest.mark.mariadb


def test_mariadb_finds_every_equivalent_rewrite_correct_and_the_portal_agrees(reference_url, tmp_path):
    result = run_differential(demo_source(), reference_url=reference_url, directory=tmp_path)
    equivalent = [j for j in result.judged if j.case.family == EQUIVALENT]
    assert len(result.runnable) == len(demo_source().questions)
    assert equivalent
    assert all(j.mariadb == CORRECT for j in equivalent)
    assert all(j.classification == AGREE for j in equivalent)


def test_mariadb_refuses_a_double_equals_and_the_scratch_databases_are_dropped(reference_url, tmp_path):
    from evaluation.scoring.reference import connect

    result = run_differential(demo_source(), reference_url=reference_url, directory=tmp_path)
    double_equals = [j for j in result.judged if j.case.rule == "sqlite_double_equals"]
    assert double_equals and all(j.mariadb == REFUSED and j.case.family == DIALECT for j in double_equals)
    assert result.scratch_databases
    # Only this run's: another run may be using the server at the same time (an xdist worker, a session).
    with connect(reference_url) as conn, conn.cursor() as cursor:
        cursor.execute("SHOW DATABASES LIKE 'c12c\\_%'")
        assert set(result.scratch_databases).isdisjoint(name for (name,) in cursor.fetchall())
