"""The demo benchmark as the suite shares it: built once per test session (once per xdist worker).

Building it runs the real importer: SQLite copies built from the dumps, every gold query checked in the
sandbox's child process. That is worth doing once, not in each of the hundreds of tests that read it. So
the session builds it and commits it (`tests/conftest.py`, `django_db_setup`); every test runs inside a
transaction that rolls back, and so finds it as it was built. The built files stay in the session's data
folder. What the importer stored is also kept in memory as rows (`StoreRows`), so that putting it back
after a test that flushed the database (`transactional_db`) is an insert, not an import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import models, transaction

from evaluation.models import (
    BenchmarkVersion,
    Database,
    NeighbourDatabase,
    ParticipantsSee,
    Question,
    StoredDatabase,
    ValidationReport,
    VersionKind,
)
from evaluation.services import DEMO_LABEL, demo_benchmark_load

# Every table an import writes, parents before children: the order rows go back in.
STORE_MODELS: tuple[type[models.Model], ...] = (
    StoredDatabase,
    BenchmarkVersion,
    Database,
    NeighbourDatabase,
    Question,
    ValidationReport,
)


@dataclass(frozen=True)
class StoreRows:
    """The rows of the benchmark store at one moment, to be written back as they were (same keys)."""

    rows: tuple[tuple[type[models.Model], tuple[models.Model, ...]], ...]

    @classmethod
    def take(cls) -> StoreRows:
        return cls(tuple((model, tuple(model._default_manager.order_by("pk"))) for model in STORE_MODELS))

    def restore(self) -> None:
        """Empty the store and write these rows back, in one transaction."""
        with transaction.atomic():
            store_empty()
            for model, instances in self.rows:
                model._default_manager.bulk_create(instances)


def store_empty() -> None:
    """No version, database or question at all, as on a portal where nothing was imported yet."""
    for model in reversed(STORE_MODELS):
        model._default_manager.all().delete()


def sealed_demo_load() -> Any:
    """The demo as a sealed version whose participants see the schema only: the store most tests read."""
    return demo_benchmark_load(kind=VersionKind.SEALED, participants_see=ParticipantsSee.SCHEMA)


def store_built_once(
    stash: pytest.Stash, key: pytest.StashKey[StoreRows], build: Callable[[], Any]
) -> BenchmarkVersion:
    """The store as `build` makes it from empty, built by the first test that asks and written back from
    the rows kept under `key` for the next ones; the demo version in it."""
    kept = stash.get(key, None)
    if kept is None:
        store_empty()
        build()
        stash[key] = StoreRows.take()
    else:
        kept.restore()
    return BenchmarkVersion.objects.get(label=DEMO_LABEL)
