"""A host's local copy of a stored database: fetched when missing, checked, replaced when altered."""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import time
from pathlib import Path

import pytest

from evaluation import database_cache
from evaluation.database_cache import DatabaseUnavailable, databases_fetch, local_copy
from evaluation.models import StoredDatabase

CONTENT = b"SQLite format 3\x00" + b"una copia di prova" * 100
SHA = hashlib.sha256(CONTENT).hexdigest()


@pytest.fixture
def stored(db, settings, tmp_path):
    settings.TERMITE_DATABASE_CACHE_DIR = tmp_path / "cache"
    database_cache._VERIFIED.clear()
    return StoredDatabase.objects.create(sha256=SHA, content=CONTENT, size=len(CONTENT))


def test_a_missing_copy_is_fetched_checked_and_kept_read_only(stored):
    path = local_copy(SHA, name="negozio")
    assert path == StoredDatabase.cache_path(SHA) and path.read_bytes() == CONTENT
    assert path.stat().st_mode & 0o777 == 0o444
    assert [p.name for p in path.parent.iterdir() if p.suffix == ".partial"] == []


def test_a_copy_this_process_checked_is_not_hashed_again_until_it_changes(stored, monkeypatch):
    local_copy(SHA)
    hashed = []
    real_hash = database_cache._hash_file
    monkeypatch.setattr(database_cache, "_hash_file", lambda path: hashed.append(path) or real_hash(path))
    local_copy(SHA)
    assert hashed == []
    StoredDatabase.cache_path(SHA).chmod(0o444)  # a changed ctime, even with the same bytes
    local_copy(SHA)
    assert len(hashed) == 1


def test_an_altered_copy_is_never_used_but_logged_and_replaced(stored, caplog):
    path = local_copy(SHA)
    path.chmod(0o644)
    path.write_bytes(b"\0" * len(CONTENT))  # the same size, other bytes
    with caplog.at_level(logging.WARNING, logger="evaluation.database_cache"):
        assert local_copy(SHA, name="negozio").read_bytes() == CONTENT
    assert f"cached copy of database negozio ({SHA}) does not match its sha256; replacing it" in caplog.text


def test_a_database_the_platform_lacks_is_unavailable(stored):
    stored.delete()
    with pytest.raises(DatabaseUnavailable, match="Database negozio is not stored on the platform"):
        local_copy(SHA, name="negozio")


def test_stored_bytes_that_do_not_match_their_sha256_are_never_written_to_the_cache(stored):
    StoredDatabase.objects.filter(sha256=SHA).update(content=b"altered")
    with pytest.raises(DatabaseUnavailable, match="does not match its sha256"):
        local_copy(SHA, name="negozio")
    assert not StoredDatabase.cache_path(SHA).exists()


def _fetch_slowly(sha256: str, name: str) -> bytes:
    with open(f"{StoredDatabase.cache_path(sha256)}.fetches", "a") as log:
        log.write("fetch\n")
    time.sleep(0.3)
    return CONTENT


def _copy_in_child(sha256: str) -> None:
    local_copy(sha256)


def test_processes_sharing_a_cache_fetch_a_copy_once(stored, monkeypatch):
    # Forked like rq's work-horses; the fetch is replaced, as a forked child must not share this
    # process's database connection.
    monkeypatch.setattr(database_cache, "_fetch", _fetch_slowly)
    context = multiprocessing.get_context("fork")
    children = [context.Process(target=_copy_in_child, args=(SHA,)) for _ in range(3)]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=30)
    assert [child.exitcode for child in children] == [0, 0, 0]
    assert Path(f"{StoredDatabase.cache_path(SHA)}.fetches").read_text() == "fetch\n"
    assert StoredDatabase.cache_path(SHA).read_bytes() == CONTENT


def test_fetching_a_version_lists_each_copy_once_and_fetches_only_what_is_missing(
    demo_version, settings, tmp_path
):
    settings.TERMITE_DATABASE_CACHE_DIR = tmp_path / "elsewhere"
    first = databases_fetch()
    assert sorted(copy.name for copy in first) == ["demo-1.0/biblioteca", "demo-1.0/ciclismo"]
    assert all(copy.fetched and not copy.problem for copy in first)
    assert not any(copy.fetched for copy in databases_fetch(versions=[demo_version]))
