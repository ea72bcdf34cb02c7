"""The project's demo benchmark as tests use it: its gold (our own content, safe to read) and upload files."""

from __future__ import annotations

import json

from leaderboard.demo import demo_gold


def predictions_jsonl(predictions: dict[str, str]) -> bytes:
    return "\n".join(json.dumps({"question_id": q, "sql": s}) for q, s in predictions.items()).encode()


__all__ = ["demo_gold", "predictions_jsonl"]
