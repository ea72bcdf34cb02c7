"""Workers share no disk with the web site or each other: each fetches, checks and keeps its own copies.

The benchmark is imported here, on this test's data folder; the workers run on data folders of their own,
empty when they start, and reach only the shared PostgreSQL and Redis, as workers on other machines would.
While they run, the importing host's copies are out of reach, so a worker that read them would fail.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from evaluation.models import BenchmarkVersion, StoredDatabase
from leaderboard.models import Submission
from leaderboard.queue import scoring_queue
from leaderboard.services import Upload, submission_create
from tests.demo import demo_gold, predictions_jsonl
from tests.processes import PROCESS_START_SECONDS, start_logged_worker, stop, wait_for

pytestmark = pytest.mark.processes


@pytest.fixture
def imported(real_services, demo_with_suites):
    """The demo with its test suites (so neighbours travel too), imported on this host; its copies here
    are then moved out of reach until the test ends."""
    real_services.TERMITE_DAILY_QUOTA = real_services.TERMITE_VERSION_QUOTA = 100
    version = demo_with_suites
    here = real_services.TERMITE_DATABASE_CACHE_DIR
    aside = here.with_name(here.name + ".out-of-reach")
    here.rename(aside)
    try:
        yield version
    finally:
        if here.exists():
            shutil.rmtree(here)
        aside.rename(here)


def copies_of(version: BenchmarkVersion) -> set[str]:
    shas = set(version.databases.values_list("sqlite_sha256", flat=True))
    shas |= {n.sqlite_sha256 for db in version.databases.all() for n in db.neighbours.all()}
    return shas


def held(folder: Path) -> set[str]:
    """The copies in a worker's cache that are what their name says."""
    return {
        path.stem
        for path in folder.glob("*.sqlite3")
        if hashlib.sha256(path.read_bytes()).hexdigest() == path.stem
    }


def score_batch(owner, version, count: int) -> list[Submission]:
    batch = [
        submission_create(
            user=owner,
            version=version,
            upload=Upload(f"p{i}.jsonl", predictions_jsonl(demo_gold())),
            model_card={"model_name": f"M{i}"},
        )
        for i in range(count)
    ]

    def all_done() -> bool:
        statuses = Submission.objects.filter(pk__in=[s.pk for s in batch]).values_list("status", flat=True)
        return all(status in ("scored", "failed") for status in statuses)

    wait_for(all_done, seconds=60, what=f"{count} submissions to be scored")
    for submission in batch:
        submission.refresh_from_db()
    return batch


def test_workers_on_empty_data_folders_score_refetch_a_deleted_cache_and_replace_a_corrupted_copy(
    imported, owner, tmp_path, settings
):
    version = imported
    imported_cache = settings.TERMITE_DATABASE_CACHE_DIR
    expected = copies_of(version)
    assert len(expected) > 2  # the two databases and their neighbours
    assert set(StoredDatabase.objects.values_list("sha256", flat=True)) >= expected
    folders = {name: tmp_path / name for name in ("b", "c")}
    for folder in folders.values():
        folder.mkdir()
    caches = {name: folder / "databases" for name, folder in folders.items()}
    logs = {name: tmp_path / f"{name}.log" for name in ("b", "c", "c2")}
    tag = os.getpid()

    def start(name: str, folder: str):
        return start_logged_worker(
            name=f"{name}-{tag}", log=logs[name], TERMITE_DATA_DIR=str(folders[folder])
        )

    def ready(name: str) -> bool:
        return "gold cache warmed for" in logs[name].read_text()

    # Two workers, each on its own empty data folder, score a batch between them.
    workers = {"b": start("b", "b"), "c": start("c", "c")}
    try:
        wait_for(
            lambda: ready("b") and ready("c"), seconds=PROCESS_START_SECONDS, what="both workers to start"
        )
        for name in ("b", "c"):
            assert held(caches[name]) == expected  # fetched when it started, before warming the gold
            assert (
                f"database copies: {len(expected)} fetched, 0 already here, 0 missing"
                in logs[name].read_text()
            )
        batch = score_batch(owner, version, 8)
        assert [(s.status, s.ea) for s in batch] == [("scored", 1.0)] * 8
        queue = scoring_queue()
        took_part = {queue.fetch_job(f"submission-{s.pk}-0").worker_name for s in batch}  # first attempts
        assert took_part == {f"b-{tag}", f"c-{tag}"}

        # B loses its whole cache mid-run: its next job fetches what it needs again.
        stop(workers.pop("c"))
        for path in caches["b"].glob("*.sqlite3"):
            path.unlink()
        batch = score_batch(owner, version, 2)
        assert [(s.status, s.ea) for s in batch] == [("scored", 1.0)] * 2
        assert held(caches["b"]) == expected
        assert "fetched database biblioteca" in logs["b"].read_text()

        # C's copy of a database is overwritten (same size, other bytes) while C runs: its next job finds
        # the sha256 wrong, replaces the copy and scores right.
        stop(workers.pop("b"))
        workers["c2"] = start("c2", "c")
        wait_for(lambda: ready("c2"), seconds=PROCESS_START_SECONDS, what="worker C to start again")
        biblioteca = version.databases.get(slug="biblioteca").sqlite_sha256
        corrupted = caches["c"] / f"{biblioteca}.sqlite3"
        size = corrupted.stat().st_size
        corrupted.chmod(0o644)
        corrupted.write_bytes(b"\0" * size)
        batch = score_batch(owner, version, 2)
        assert [(s.status, s.ea) for s in batch] == [("scored", 1.0)] * 2
        assert held(caches["c"]) == expected
        assert (
            f"cached copy of database biblioteca ({biblioteca}) does not match its sha256; replacing it"
            in logs["c2"].read_text()
        )
    finally:
        for worker in workers.values():
            stop(worker)
    assert not imported_cache.exists()  # nothing on this host needed a copy while the workers scored
