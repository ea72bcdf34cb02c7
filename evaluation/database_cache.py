"""A local, verified copy of a stored database: what a scorer opens, on whichever host it runs.

The platform keeps every built database in `StoredDatabase` (content-addressed, written once at import);
each host keeps copies in TERMITE_DATABASE_CACHE_DIR, named by their sha256. The contract of `local_copy`:

- It returns a path only to a file whose sha256 is the one asked for. A copy that fails the check (altered
  on disk, truncated) is logged and replaced, never used.
- A missing or altered copy is fetched from the platform, checked, written to a temporary file in the
  same folder, flushed to disk and renamed over the old name: a reader sees the whole old file or the
  whole new one, never a half-written one, and a crash leaves at most a stray temporary file.
- Processes sharing a cache folder (a worker's forked work-horses, or several workers on one host) take
  an exclusive `flock` on `<sha256>.lock` before fetching, and check again once they hold it: one of them
  fetches a copy, the others find it there.
- Checking a copy means hashing it. A process remembers the files it checked by (device, inode, size,
  mtime, ctime) and hashes again only when one of them changes, so a job does not re-read every database
  of its version. Any write to the file, or a new file under its name, changes them (ctime cannot be set
  back); only a change below the file system (bit rot) would go unseen, until the next process checks.
  The worker checks every copy when it starts (`databases_fetch`), and its work-horses inherit what it
  remembered. Hashing the demo's copies takes well under a millisecond; Termite's, some milliseconds per
  megabyte, which a job would otherwise pay for each of its version's databases and neighbours.
- `DatabaseUnavailable` means the platform itself lacks the database, or holds bytes that do not match
  its sha256: nothing a retry repairs.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from evaluation.models import BenchmarkVersion, StoredDatabase

logger = logging.getLogger(__name__)


class DatabaseUnavailable(RuntimeError):
    """The platform lacks a stored database, or holds it altered: an operations problem for an admin."""


# Files this process has hashed and found right: path -> (device, inode, size, mtime, ctime) then.
_VERIFIED: dict[Path, tuple[int, int, int, int, int]] = {}


def local_copy(sha256: str, *, name: str = "") -> Path:
    """The path of a checked copy of stored database `sha256` on this host, fetched if need be.

    `name` (a database's slug, or a neighbour's key) only makes messages readable.
    """
    _ensure(sha256, name)
    return StoredDatabase.cache_path(sha256)


def databases_fetch(*, versions: Iterable[BenchmarkVersion] | None = None) -> list[Fetched]:
    """Make sure this host holds a checked copy of every database of `versions` (default: all of them,
    drafts too: staff check a draft by scoring on it, and publishing scores carried submissions on it).

    The worker runs it when it starts, before it warms the gold cache, and `manage.py fetch_databases`
    runs it to prepare a host; each copy is listed once, however many versions share it.
    """
    wanted: dict[str, str] = {}
    for version in versions if versions is not None else BenchmarkVersion.objects.order_by("pk"):
        for database in version.databases.prefetch_related("neighbours").order_by("slug"):
            wanted.setdefault(database.sqlite_sha256, f"{version.label}/{database.slug}")
            for neighbour in database.neighbours.all():
                wanted.setdefault(neighbour.sqlite_sha256, f"{version.label}/{neighbour.key}")
    copies = []
    for sha256, name in wanted.items():
        try:
            copies.append(Fetched(name, sha256, fetched=_ensure(sha256, name)))
        except DatabaseUnavailable as error:  # the others are worth fetching all the same
            logger.error("%s", error)
            copies.append(Fetched(name, sha256, fetched=False, problem=str(error)))
    return copies


@dataclass(frozen=True)
class Fetched:
    name: str
    sha256: str
    fetched: bool  # False: a right copy was here already, or (with a problem) none could be had
    problem: str = ""


def _ensure(sha256: str, name: str) -> bool:
    """Whether a copy had to be fetched; afterwards a checked one is in place."""
    path = StoredDatabase.cache_path(sha256)
    if _is_verified(path, sha256):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path.with_suffix(".lock")):
        if _is_verified(path, sha256):  # another process fetched it while this one waited
            return False
        if path.exists():
            logger.warning(
                "cached copy of database %s (%s) does not match its sha256; replacing it", name, sha256
            )
        content = _fetch(sha256, name)
        write_copy(content, sha256)
        logger.info("fetched database %s (%s, %d bytes)", name or sha256, sha256, len(content))
    return True


def write_copy(content: bytes, sha256: str) -> Path:
    """Write `content` as this host's copy of `sha256`, atomically (the import calls it for what it built)."""
    path = StoredDatabase.cache_path(sha256)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{sha256}.", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(partial, 0o444)  # a scorer only reads; nothing on this host should write it
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)  # the rename itself survives a crash
    _remember(path)
    return path


def forget(sha256: str) -> None:
    """Drop this host's copy (the import's rollback); the platform keeps the stored one, if any."""
    path = StoredDatabase.cache_path(sha256)
    _VERIFIED.pop(path, None)
    path.unlink(missing_ok=True)


def _fetch(sha256: str, name: str) -> bytes:
    stored = StoredDatabase.objects.filter(sha256=sha256).values_list("content", flat=True).first()
    if stored is None:
        raise DatabaseUnavailable(
            f"Database {name or sha256} is not stored on the platform; an admin must import it again."
        )
    content = bytes(stored)
    if hashlib.sha256(content).hexdigest() != sha256:
        raise DatabaseUnavailable(
            f"The stored copy of database {name or sha256} does not match its sha256; an admin must import "
            "it again."
        )
    return content


def _signature(stat: os.stat_result) -> tuple[int, int, int, int, int]:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _is_verified(path: Path, sha256: str) -> bool:
    try:
        before = os.stat(path)
        if _VERIFIED.get(path) == _signature(before):
            return True
        digest = _hash_file(path)
        after = os.stat(path)
    except FileNotFoundError:
        return False
    if digest != sha256 or _signature(after) != _signature(before):
        _VERIFIED.pop(path, None)
        return False
    _VERIFIED[path] = _signature(after)
    return True


def _remember(path: Path) -> None:
    _VERIFIED[path] = _signature(os.stat(path))


def _hash_file(path: Path) -> str:
    with path.open("rb") as source:
        return hashlib.file_digest(source, "sha256").hexdigest()


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    with lock_path.open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class installed_copies:
    """Store built SQLite files on the platform and in this host's cache; on failure undo what this added.

    Entered outside the transaction that stores what refers to them, and `store()` called inside it: the
    `StoredDatabase` rows then commit or roll back with the version, and the files this host's cache gained
    are removed on failure. The web host keeps its own copies, so the embedded mode never fetches one.
    """

    def __init__(self, files: list[tuple[Path, str]]) -> None:
        self.files = files  # (built file, its sha256)
        self.added: list[str] = []

    def __enter__(self) -> installed_copies:
        for path, sha256 in self.files:
            if not StoredDatabase.cache_path(sha256).exists():
                write_copy(path.read_bytes(), sha256)
                self.added.append(sha256)
        return self

    def store(self) -> None:
        """The platform's copies: each written once, whichever version built it first."""
        known = set(
            StoredDatabase.objects.filter(sha256__in=[sha for _, sha in self.files]).values_list(
                "sha256", flat=True
            )
        )
        for path, sha256 in self.files:
            if sha256 not in known:
                known.add(sha256)
                content = path.read_bytes()
                StoredDatabase.objects.create(sha256=sha256, content=content, size=len(content))

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is not None:
            for sha256 in self.added:
                forget(sha256)
