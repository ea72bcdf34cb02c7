"""A protocol run end to end, timed: the paper's protocol against a model server on this machine.

    .venv/bin/python -m benchmarks.protocol_run --endpoint http://127.0.0.1:8080/v1/chat/completions \
        [--model NAME] [--protocol termite-2turn-it/1] [--concurrency 2] [--max-tokens 256]
    .venv/bin/python -m benchmarks.protocol_run --stub    # the plumbing alone, against tests/openai_stub.py

A scratch embedded portal (SQLite and a data folder under a temporary directory, scoring in-process) with
the demo benchmark; `manage.py run_protocol --wait` runs the protocol against the endpoint and scores the
submission. It prints the requests sent, requests per second, the run's wall time, its errors and tokens,
and the EA the model scored. The endpoint must be on loopback (TERMITE_PROTOCOL_ALLOW_LOOPBACK=1 is set
here for the scratch portal only); the run is bounded by its budget (--max-requests, --max-seconds).

A real local model server, for instance llama-cpp-python's OpenAI-compatible one (see the README,
"Running the paper's protocol"); without one, `--stub` measures the portal's own cost per request
against a server that answers at once.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack
from urllib.parse import urlsplit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--endpoint", help="An OpenAI-compatible chat completions URL on loopback")
    target.add_argument("--stub", action="store_true", help="The test suite's stub server, answering at once")
    parser.add_argument("--model", default="local-model")
    parser.add_argument("--protocol", default="termite-2turn-it/1")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--max-requests", type=int, default=200)
    parser.add_argument("--max-seconds", type=int, default=1800)
    args = parser.parse_args()
    if args.endpoint:
        host = urlsplit(args.endpoint).hostname or ""
        if host not in ("127.0.0.1", "::1", "localhost"):
            sys.exit("The endpoint must be on loopback (127.0.0.1, ::1, localhost).")
        if not _answers(args.endpoint):
            sys.exit(f"No model server answers at {args.endpoint}: start one first (see the README).")

    scratch = tempfile.mkdtemp(prefix="termite-protocol-bench-")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="termite_site.settings",
        DEBUG="1",
        TERMITE_DATA_DIR=scratch,
        TERMITE_PROTOCOL_ALLOW_LOOPBACK="1",
        TERMITE_RESULT_RELEASE_SECONDS="0",
        TERMITE_SUITE_CANDIDATES="0",
        TERMITE_PROTOCOL_MAX_CONCURRENCY=str(max(args.concurrency, 1)),
    )
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    import django  # after the environment above, which the settings read

    django.setup()
    from django.contrib.auth import get_user_model  # needs django.setup()
    from django.core.management import call_command  # needs django.setup()

    from evaluation.services import demo_benchmark_load  # needs django.setup()
    from leaderboard.models import ProtocolRun  # needs django.setup()

    call_command("migrate", verbosity=0)
    version = demo_benchmark_load()
    get_user_model().objects.create_user(username="bench", email="bench@example.org", password="x" * 20)
    with ExitStack() as stack:
        endpoint = args.endpoint
        if args.stub:
            from tests.leaderboard.protocol_runs import good_model  # needs django.setup()
            from tests.openai_stub import OpenAIStub  # the stub only with --stub

            endpoint = stack.enter_context(OpenAIStub(good_model(version))).url
        out = io.StringIO()
        started = time.perf_counter()
        call_command(
            "run_protocol",
            "--endpoint", endpoint, "--model", args.model, "--version", version.label, "--user", "bench",
            "--protocol", args.protocol, "--concurrency", str(args.concurrency),
            "--temperature", str(args.temperature), "--max-tokens", str(args.max_tokens),
            "--max-requests", str(args.max_requests), "--max-seconds", str(args.max_seconds),
            "--wait", stdout=out,
        )  # fmt: skip
        wall = time.perf_counter() - started
    result = json.loads(out.getvalue())
    run = ProtocolRun.objects.get(pk=result["run_id"])
    print(f"protocol {run.protocol}, model {args.model}, concurrency {args.concurrency}")
    print(f"requests: {run.requests_done} ({run.errors} errors), tokens: {run.tokens_used}")
    print(
        f"run: {run.seconds_spent:.1f} s of running, {run.requests_done / run.seconds_spent:.1f} requests/s"
    )
    print(f"wall time, run and scoring: {wall:.1f} s")
    print(
        f"EA {100 * result['scores']['overall']['ea']:.1f}% on {result['scores']['overall']['n']} questions"
    )


def _answers(url: str) -> bool:
    """Whether a server listens there (any HTTP answer, an error too)."""
    request = urllib.request.Request(url, data=b"{}", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


if __name__ == "__main__":
    main()
