"""Shared by the protocol-run tests: a model that answers the demo's questions, and runs made as the
service makes them. The answers are the demo's own gold (our content, never the hidden benchmark's)."""

from __future__ import annotations

from collections.abc import Callable

from evaluation.models import BenchmarkVersion, Question
from leaderboard import run_services
from leaderboard.models import ProtocolRun
from tests.demo import demo_gold
from tests.openai_stub import OpenAIStub, Reply, Request, answer

INTERPRETATION = "Il database descrive libri, prestiti e corridori."


def gold_by_question_text(version: BenchmarkVersion) -> dict[str, str]:
    gold = demo_gold()
    return {q.text: gold[q.public_id] for q in Question.objects.filter(version=version).scored()}


def fenced(sql: str) -> str:
    return f"Ecco la query:\n```sql\n{sql}\n```\nSpero sia utile."


def good_model(version: BenchmarkVersion, **options) -> Callable[[Request], Reply]:
    """Answers every first turn with an interpretation and every question with its gold SQL in fences."""
    by_text = gold_by_question_text(version)

    def respond(request: Request) -> Reply:
        if request.is_first_turn:
            return answer(INTERPRETATION, **options)
        return answer(fenced(by_text[request.last.rsplit("\n", 1)[-1]]), **options)

    return respond


def start_run(user, version, stub: OpenAIStub, **changes) -> ProtocolRun:
    values = {
        "user": user,
        "version": version,
        "endpoint_url": stub.url,
        "api_key": "sk-test-secret-key-123",
        "model": "stub-model",
        "protocol_id": "termite-2turn-it/1",
        "decoding": run_services.Decoding(temperature=0.0),
        "budget": run_services.Budget(max_requests=500, max_seconds=600),
        "concurrency": 2,
        "model_card": {"model_name": "Modello via protocollo", "is_public": False},
    }
    values.update(changes)
    return run_services.run_create(**values)
