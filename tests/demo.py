"""The project's demo benchmark as tests use it: its gold (our own content, safe to read) and upload files."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator

from evaluation.models import Database, StoredDatabase
from leaderboard.demo import demo_gold

# A whole model card as the upload form and the API take it (text fields): what a public submission must
# give besides its model name (leaderboard.model_card.PUBLIC_REQUIRED).
PUBLIC_CARD = {
    "model_size": "7B",
    "weights": "open",
    "approach": "prompting",
    "training_cutoff": "2024-09-30",
    "shots": "0",
    "schema_format": "mysql-ddl",
    "instruction_language": "it",
    "sampling": "greedy",
    "run_date": "2025-06-01",
}


def predictions_jsonl(predictions: dict[str, str]) -> bytes:
    return "\n".join(json.dumps({"question_id": q, "sql": s}) for q, s in predictions.items()).encode()


@contextlib.contextmanager
def database_lost(database: Database) -> Iterator[None]:
    """The platform loses a database (its stored row) and this host its copy, until the block ends."""
    stored = StoredDatabase.objects.get(sha256=database.sqlite_sha256)
    path = database.sqlite_path
    aside = path.with_suffix(".aside")
    shutil.move(path, aside)
    stored.delete()
    try:
        yield
    finally:
        shutil.move(aside, path)
        StoredDatabase.objects.create(sha256=stored.sha256, content=stored.content, size=stored.size)


__all__ = ["PUBLIC_CARD", "database_lost", "demo_gold", "predictions_jsonl"]
