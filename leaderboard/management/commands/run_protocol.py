from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from evaluation.management.commands._base import BenchmarkCommand
from evaluation.models import BenchmarkVersion
from leaderboard import feedback, run_services, services
from leaderboard.forms import RunForm
from leaderboard.jobs import run_protocol
from leaderboard.models import ProtocolRun, Submission
from leaderboard.protocols.catalogue import DEFAULT_PROTOCOL


class Command(BenchmarkCommand):
    help = (
        "Run a protocol against an OpenAI-compatible endpoint for a user, as the run form does (same checks,"
        " same budget, same submission). Without --wait it is queued for the worker and its id is printed;"
        " with --wait it runs here, in the foreground, until its submission is scored, then prints"
        ' {"run_id", "submission_id", "scores"} as JSON, `scores` being the object `manage.py score --json`'
        " prints."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--endpoint", required=True, help="The chat completions URL")
        parser.add_argument("--model", required=True, help="The model name the endpoint expects")
        parser.add_argument("--version", dest="label", required=True, help="Benchmark version label")
        parser.add_argument("--user", dest="username", required=True, help="Whose run and submission it is")
        parser.add_argument("--wait", action="store_true", help="Run in the foreground until scored")
        parser.add_argument("--protocol", default=DEFAULT_PROTOCOL)
        parser.add_argument(
            "--api-key-env", help="The environment variable that holds the API key (never the key itself)"
        )
        parser.add_argument("--keep-key", action="store_true", help="Keep the API key when the run ends")
        parser.add_argument("--temperature", type=float, default=1.0)
        parser.add_argument("--top-p", type=float)
        parser.add_argument("--max-tokens", type=int)
        parser.add_argument("--seed", type=int)
        parser.add_argument("--max-requests", type=int, default=1000)
        parser.add_argument("--max-total-tokens", type=int)
        parser.add_argument("--max-seconds", type=int, default=3600)
        parser.add_argument("--concurrency", type=int, default=2)
        parser.add_argument(
            "--card", type=Path, help="A JSON file of model-card fields, as the API takes them"
        )
        parser.add_argument("--model-name", help="The name on the leaderboard (default: --model)")
        parser.add_argument("--team", help="A team's slug, of which the user is a member")
        parser.add_argument(
            "--public", action="store_true", help="A public submission (needs the whole card)"
        )
        parser.add_argument(
            "--timeout", type=float, default=600, help="With --wait, seconds to wait for the scoring"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user {options['username']!r}.")
        version = self.version_named(options["label"])
        form = RunForm(self._data(options, version), user=user)
        if not form.is_valid():
            problems = [
                f"{field}: {message}" for field, messages in form.errors.items() for message in messages
            ]
            raise CommandError("The run was refused:\n  " + "\n  ".join(problems))
        try:
            run = run_services.run_create(
                user=user,
                api_key=self._api_key(options["api_key_env"]),
                enqueue=not options["wait"],
                **form.run_arguments(),
            )
        except (services.EmailUnconfirmed, services.NotTeamMember, run_services.RunRefused) as error:
            raise CommandError(str(error)) from None
        if not options["wait"]:
            self.stdout.write(f"Run {run.pk} queued: {run.get_absolute_url()}")
            return
        self._wait(run, timeout=options["timeout"])

    def _data(self, options: dict[str, Any], version: BenchmarkVersion) -> dict[str, Any]:
        card: dict[str, Any] = {}
        if options["card"]:
            try:
                card = json.loads(options["card"].read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise CommandError(f"--card {options['card']}: not a readable JSON file ({error})") from None
            if not isinstance(card, dict):
                raise CommandError(f"--card {options['card']}: the file must hold one JSON object")
        data = {
            **card,
            "version": str(version.pk),
            "endpoint_url": options["endpoint"],
            "model": options["model"],
            "model_name": options["model_name"] or card.get("model_name") or options["model"],
            "protocol": options["protocol"],
            "temperature": options["temperature"],
            "max_requests": options["max_requests"],
            "max_seconds": options["max_seconds"],
            "concurrency": options["concurrency"],
        }
        for name in ("top_p", "max_tokens", "seed", "max_total_tokens", "team"):
            if options[name] is not None:
                data[name] = options[name]
        if options["public"]:
            data["is_public"] = True
        if not options["keep_key"]:
            data["delete_key_when_done"] = True
        return data

    def _api_key(self, variable: str | None) -> str:
        if not variable:
            return ""
        if variable not in os.environ:
            raise CommandError(f"--api-key-env: the environment variable {variable} is not set.")
        return os.environ[variable]

    def _wait(self, run: ProtocolRun, *, timeout: float) -> None:
        # The run's own job, here: it submits the run when it finishes; the submission is scored by the
        # queue (in this process without Redis, by a worker with it).
        run_protocol(run.pk)
        run.refresh_from_db()
        if run.submission is None:
            raise CommandError(
                f"Run {run.pk} ended {run.get_status_display()} without a submission. {run.message}".strip()
            )
        deadline = time.monotonic() + timeout
        submission = run.submission
        while not submission.is_finished and time.monotonic() < deadline:
            time.sleep(0.5)
            submission.refresh_from_db()
        if submission.status != Submission.Status.SCORED:
            raise CommandError(
                f"Submission {submission.pk} of run {run.pk} is {submission.get_status_display()}: "
                f"{submission.failure_reason or 'not scored in time'}"
            )
        self.stdout.write(
            json.dumps(
                {
                    "run_id": run.pk,
                    "submission_id": submission.pk,
                    "scores": feedback.operator_scores(submission),
                },
                indent=2,
            )
        )
