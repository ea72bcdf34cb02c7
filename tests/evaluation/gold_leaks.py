"""Assertions that gold never shows: used by every test that renders what people or admins see.

A failure names the page and counts the leaks; it never quotes the gold, and it skips pytest's traceback,
which would print the gold list among the function's arguments.
"""

from __future__ import annotations

import pytest

from evaluation.models import Question


def gold_texts(questions=None) -> list[str]:
    """Every gold query (as written and as transpiled), whitespace-normalised, for leak checks."""
    texts = []
    for question in questions if questions is not None else Question.objects.all():
        texts.append(question.decrypt_gold())
        if question.gold_sqlite_encrypted:
            texts.append(question.decrypt_gold_sqlite())
    return [" ".join(text.split()) for text in texts]


def assert_no_gold(body: bytes | str, golds: list[str], *, where: str) -> None:
    text = body.decode(errors="replace") if isinstance(body, bytes) else body
    flat = " ".join(text.split())
    leaked = sum(1 for gold in golds if gold and gold in flat)
    if leaked:
        pytest.fail(f"{where}: {leaked} gold queries appear in the response", pytrace=False)
