"""The project's demo benchmark as tests use it: its gold (our own content, safe to read) and upload files."""

from __future__ import annotations

import json

from evaluation.services import DEMO_DIR


def demo_gold() -> dict[str, str]:
    gold = {}
    for slug in ("biblioteca", "ciclismo"):
        for line in (DEMO_DIR / f"{slug}.jsonl").read_text().splitlines():
            item = json.loads(line)
            gold[item["id"]] = item["gold_sql"]
    return gold


def predictions_jsonl(predictions: dict[str, str]) -> bytes:
    return "\n".join(json.dumps({"question_id": q, "sql": s}) for q, s in predictions.items()).encode()
