"""The scoring worker warms the gold caches before its first job, and starts even when it cannot; while it
works, it sweeps up lost submissions and protocol runs on its own."""

from __future__ import annotations

import pytest

from leaderboard import worker
from tests.demo import database_lost
from tests.processes import run_worker_burst


@pytest.mark.processes
def test_a_worker_warms_the_gold_of_the_published_versions_before_it_works(real_services, demo_version):
    version = demo_version
    done = run_worker_burst()
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"gold cache warmed for {version}" in done.stderr


@pytest.mark.processes
def test_a_worker_that_cannot_warm_a_version_logs_the_error_type_and_still_works(real_services, demo_version):
    version = demo_version
    with database_lost(version.databases.get(slug="ciclismo")):
        done = run_worker_burst()
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"gold cache of version {version.pk} not warmed: DatabaseUnavailable" in done.stderr
    assert "gold cache warmed for no published version" in done.stderr
    assert "database copies: 0 fetched, 1 already here, 1 missing" in done.stderr


@pytest.mark.processes
def test_a_worker_without_the_gold_key_in_its_environment_refuses_to_start(real_services, tmp_path):
    # In debug mode settings.py would generate a key on this host, which could read no stored gold.
    done = run_worker_burst(DEBUG="1", TERMITE_GOLD_KEY="", TERMITE_DATA_DIR=str(tmp_path))
    assert done.returncode != 0
    assert "A scoring worker needs TERMITE_GOLD_KEY from the environment" in done.stderr


def test_a_working_worker_sweeps_submissions_protocol_runs_and_lost_imports_every_sweep_period(
    monkeypatch, settings
):
    settings.TERMITE_SWEEP_SECONDS = 7.5
    swept, waited = [], []
    monkeypatch.setattr(worker, "sweep_submissions", lambda: swept.append("submissions"))
    monkeypatch.setattr(worker, "sweep_runs", lambda: swept.append("protocol runs"))
    monkeypatch.setattr(worker, "sweep_imports", lambda: swept.append("database imports"))
    # Two periods pass, then the worker stops while the third is running.
    stops = iter([False, False, True])

    def wait(seconds: float) -> bool:
        waited.append(seconds)
        return next(stops)

    worker.sweep_periodically(wait)
    assert waited == [7.5, 7.5, 7.5]
    assert swept == ["submissions", "protocol runs", "database imports"] * 2
