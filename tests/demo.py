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


# One prediction of each kind of difference the practice page explains, on the demo's own questions.
PRACTICE_FILE = {
    "biblioteca-002": "SELECT COUNT(*) FROM libri",  # one value, not the gold's
    "biblioteca-003": "SELEC cognome FROM soci",  # refused before it runs
    "biblioteca-004": "SELECT titolo, id FROM libri WHERE titolo LIKE '%notte%'",  # a column too many
    # the gold's three rows, cheapest first where the gold's ORDER BY puts the dearest first
    "biblioteca-007": "SELECT * FROM (SELECT titolo, prezzo FROM libri ORDER BY 2 DESC LIMIT 3) AS t ORDER BY prezzo",
    "biblioteca-008": "SELECT cognome FROM autori",  # every author, not only the poets
}
EXPECTED_DIFFERENCES = {
    "biblioteca-002": "values",
    "biblioteca-004": "columns",
    "biblioteca-007": "order",
    "biblioteca-008": "row_count",
}


def practice_file(gold: dict[str, str]) -> dict[str, str]:
    """One right answer, then one prediction of each kind the practice page explains; the rest left out."""
    return {"biblioteca-001": gold["biblioteca-001"], **PRACTICE_FILE}


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


__all__ = [
    "EXPECTED_DIFFERENCES",
    "PRACTICE_FILE",
    "PUBLIC_CARD",
    "database_lost",
    "demo_gold",
    "practice_file",
    "predictions_jsonl",
]
