"""`manage.py run_protocol`: the run form's checks, and with --wait the scores as `score --json` prints them."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from leaderboard.models import ProtocolRun
from tests.demo import PUBLIC_CARD
from tests.leaderboard.protocol_runs import good_model
from tests.openai_stub import OpenAIStub

pytestmark = pytest.mark.usefixtures("in_process", "loopback_allowed", "no_waiting")


def run_protocol(*args: str) -> str:
    out = io.StringIO()
    call_command("run_protocol", *args, stdout=out)
    return out.getvalue()


def test_with_wait_it_runs_until_scored_and_prints_the_score_json(
    transactional_db, demo_version, staff, tmp_path, monkeypatch
):
    # Committed as it goes, as the command runs: the submission is scored in this process once stored.
    monkeypatch.setenv("STUB_KEY", "sk-from-the-environment")
    card = tmp_path / "card.json"
    card.write_text(json.dumps({**PUBLIC_CARD, "model_name": "Baseline riprodotta"}))
    with OpenAIStub(good_model(demo_version)) as stub:
        printed = run_protocol(
            "--endpoint", stub.url, "--model", "stub-model", "--version", "demo-1.0", "--user", "carla",
            "--wait", "--api-key-env", "STUB_KEY", "--card", str(card), "--public", "--temperature", "0",
        )  # fmt: skip
    result = json.loads(printed)
    run = ProtocolRun.objects.get(pk=result["run_id"])
    assert stub.requests[0].headers["Authorization"] == "Bearer sk-from-the-environment"
    assert result["submission_id"] == run.submission_id
    assert run.submission.is_public and run.submission.model_name == "Baseline riprodotta"
    # The same object `manage.py score --json` prints for the run's predictions.
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"question_id": q, "sql": s}) + "\n" for q, s in run.submission.predictions.items()
        )
    )
    scored = io.StringIO()
    call_command("score", str(predictions), "--version", "demo-1.0", "--json", stdout=scored)
    assert result["scores"] == json.loads(scored.getvalue())
    assert result["scores"]["overall"]["ea"] == 1.0


def test_without_wait_the_run_is_queued_for_the_worker(demo_version, staff):
    printed = run_protocol(
        "--endpoint", "http://127.0.0.1:9/v1/chat/completions", "--model", "m", "--version", "demo-1.0",
        "--user", "carla",
    )  # fmt: skip
    run = ProtocolRun.objects.get()
    assert printed.strip() == f"Run {run.pk} queued: /runs/{run.pk}/" and run.status == "queued"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"--version": "9.9"}, "No benchmark version '9.9'."),
        ({"--user": "nobody"}, "No user 'nobody'."),
        ({"--endpoint": "ftp://example.org/v1"}, "endpoint_url: "),
        ({"--endpoint": "https://user:pw@example.org/v1"}, "must not hold a user name or a password"),
        ({"--concurrency": "99"}, "concurrency: "),
        ({"--api-key-env": "NOT_SET_ANYWHERE"}, "NOT_SET_ANYWHERE is not set"),
        ({"--protocol": "termite-9turn/1"}, "protocol: "),
    ],
)
def test_bad_input_gets_a_clear_error(demo_version, staff, change, message):
    options = {
        "--endpoint": "http://127.0.0.1:9/v1",
        "--model": "m",
        "--version": "demo-1.0",
        "--user": "carla",
    }
    options.update(change)
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(".", r"\.")):
        run_protocol(*[part for pair in options.items() for part in pair])
    assert not ProtocolRun.objects.exists()


def test_a_public_run_with_an_incomplete_card_is_refused_field_by_field(demo_version, staff):
    with pytest.raises(CommandError) as refused:
        run_protocol(
            "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--version", "demo-1.0", "--user", "carla",
            "--public",
        )  # fmt: skip
    text = str(refused.value)
    assert "model_size: A public submission must give the model size" in text
    assert "training_cutoff: " in text and "shots" not in text  # the protocol says how it prompted
