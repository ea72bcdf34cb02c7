"""The paper's protocol, end to end, against a real local model server: requests/s, the run's wall time,
the time to score and the EA it got.

    .venv/bin/python -m benchmarks.protocol_run --llama-python /work/llama-venv/bin/python \\
        --model-file PATH/TO/model.gguf
    .venv/bin/python -m benchmarks.protocol_run --server-url http://127.0.0.1:8080/v1/chat/completions

The model server is either llama-cpp-python's OpenAI-compatible server, started here on a free 127.0.0.1
port and stopped at the end (`--llama-python`: the Python of a virtual environment holding
`llama-cpp-python[server]`; `--model-file`: a .gguf; or the environment variables
TERMITE_BENCH_LLAMA_PYTHON and TERMITE_BENCH_MODEL_FILE), or one already running (`--server-url`, or
TERMITE_BENCH_SERVER_URL: its `/v1/chat/completions` URL). Nothing is found by guessing. With neither, or
when the one named cannot be used (no such file, no llama_cpp.server in that Python, no answer at the
URL), it says why and exits 0: a benchmark with nothing to measure, not a failure. The README's "Running
the paper's protocol" says how to build the server.

Needs PostgreSQL and Redis on this machine: a scratch portal (benchmarks/loadkit.py) with gunicorn and one
rq worker listening on the scoring queue and its sibling, the protocol queue, all on 127.0.0.1, with
TERMITE_PROTOCOL_ALLOW_LOOPBACK=1. It loads the demo benchmark and starts a run of the paper's protocol
(`termite-2turn-it/1`) as a participant would, through the API (`POST /api/v1/runs`, which goes through
the same form and `run_services.run_create` as the web form and `manage.py run_protocol`); it follows the
run's progress through the API until the run becomes a submission and that submission is scored, then
prints the requests, errors, retries, tokens, requests/s, the run's wall time, the time to score and the
EA. A tiny base model writes little SQL: a low EA is expected and is not a failure.

Loopback only: a server URL whose host is not a loopback address literal (127.0.0.1, [::1]) is refused.
Bounded: the run's own budget (--max-requests, and --max-seconds of running) and the script's deadline
(--max-seconds for the run, then --score-seconds for the scoring); past it the run is cancelled and the
script fails.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.loadkit import Portal, free_port
from benchmarks.portal_load import prepare

PROTOCOL = "termite-2turn-it/1"
ENDED = ("finished", "budget_exhausted", "cancelled", "failed")
# The demo's largest dump with its data (biblioteca) is 5,600 tokens for Gemma 3, its schema alone 1,100:
# the first turn, the interpretation and a question's answer fit in 8,192.
DEFAULT_N_CTX = 8192
# No proxy, whatever the environment says: every request goes straight to a loopback address.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Unavailable(Exception):
    """No model server can be used; the message says why."""


@dataclass(frozen=True)
class Endpoint:
    url: str  # .../v1/chat/completions, on loopback
    model: str  # the name sent as `model`
    described: str  # what serves it, for the report


def loopback_problem(url: str) -> str:
    """Why `url` is not an http(s) URL on a loopback address literal ("" when it is)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not an http:// URL"
    try:
        address = ipaddress.ip_address(parts.hostname)
    except ValueError:
        return (
            f"{parts.hostname!r} is not an address: give 127.0.0.1 or [::1], so that nothing leaves this host"
        )
    if not address.is_loopback:
        return f"{address} is not a loopback address: this benchmark calls 127.0.0.1 or ::1 only"
    return ""


def post_chat(url: str, model: str, content: str, *, max_tokens: int, timeout: float) -> dict:
    body = json.dumps(
        {"model": model, "messages": [{"role": "user", "content": content}], "max_tokens": max_tokens}
    ).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with OPENER.open(request, timeout=timeout) as response:
        return json.loads(response.read())


def check_answers(endpoint: Endpoint) -> None:
    """One short chat request; Unavailable if the endpoint does not answer one like an OpenAI server."""
    try:
        answer = post_chat(endpoint.url, endpoint.model, "Ciao", max_tokens=4, timeout=120)
        answer["choices"][0]["message"]["content"]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
        raise Unavailable(
            f"{endpoint.url} does not answer a chat request ({type(error).__name__}: {error})"
        ) from None


class LlamaServer:
    """llama-cpp-python's server on a free 127.0.0.1 port, for the length of a `with` block."""

    def __init__(self, python: Path, model_file: Path, *, n_ctx: int, threads: int, chat_format: str | None):
        if not python.is_file():
            raise Unavailable(f"--llama-python {python}: no such file")
        if not model_file.is_file():
            raise Unavailable(f"--model-file {model_file}: no such file")
        probe = subprocess.run(
            [str(python), "-c", "import llama_cpp, llama_cpp.server; print(llama_cpp.__version__)"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable(f"{python} cannot import llama_cpp.server ({last})")
        self.version = probe.stdout.strip()
        self.python, self.model_file, self.n_ctx, self.threads = python, model_file, n_ctx, threads
        self.chat_format = chat_format
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.endpoint = Endpoint(
            url=f"http://127.0.0.1:{self.port}/v1/chat/completions",
            model=model_file.stem,
            described=(
                f"llama-cpp-python {self.version} server on 127.0.0.1, {model_file.name}, n_ctx {n_ctx},"
                f" {threads} thread(s), chat format {chat_format or 'of the model file'}"
            ),
        )

    def __enter__(self) -> Endpoint:
        command = [
            str(self.python),
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_file),
            "--model_alias",
            self.endpoint.model,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads),
            *(["--chat_format", self.chat_format] if self.chat_format else []),
        ]
        self.log = Path(tempfile.mkdtemp(prefix="termite-llama-server-")) / "server.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + 180
        models = f"http://127.0.0.1:{self.port}/v1/models"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._stop()
                raise SystemExit(f"llama-cpp-python's server exited at start; see {self.log}")
            with contextlib.suppress(OSError), OPENER.open(models, timeout=2):
                return self.endpoint
            time.sleep(0.5)
        self._stop()
        raise SystemExit(f"llama-cpp-python's server did not answer within 180 s; see {self.log}")

    def __exit__(self, *exc) -> None:
        self._stop()

    def _stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def model_server(args: argparse.Namespace) -> contextlib.AbstractContextManager[Endpoint]:
    """The model server the options name, as a context manager yielding its endpoint; Unavailable says
    why there is none."""
    if args.server_url:
        problem = loopback_problem(args.server_url)
        if problem:
            raise SystemExit(f"--server-url: {problem}")
        endpoint = Endpoint(args.server_url, args.model, f"the server at {args.server_url}")
        check_answers(endpoint)
        return contextlib.nullcontext(endpoint)
    if args.llama_python or args.model_file:
        if not (args.llama_python and args.model_file):
            raise Unavailable("give both --llama-python and --model-file (or neither, and --server-url)")
        return LlamaServer(
            Path(args.llama_python),
            Path(args.model_file),
            n_ctx=args.n_ctx,
            threads=args.threads,
            chat_format=args.chat_format,
        )
    raise Unavailable(
        "neither --server-url nor --llama-python and --model-file were given (nor TERMITE_BENCH_SERVER_URL,"
        " TERMITE_BENCH_LLAMA_PYTHON, TERMITE_BENCH_MODEL_FILE)"
    )


# The portal's API, as a participant calls it.


def api(base: str, token: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        base + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with OPENER.open(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"{}")


def start_run(base: str, token: str, endpoint: Endpoint, args: argparse.Namespace, version: str) -> dict:
    fields = {
        "version": version,
        "endpoint_url": endpoint.url,
        "model": endpoint.model,
        "model_name": f"{endpoint.model} (protocol benchmark)",
        "protocol": PROTOCOL,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "seed": args.seed,
        "max_requests": args.max_requests,
        "max_seconds": args.max_seconds,
        "concurrency": args.concurrency,
    }
    status, run = api(base, token, "POST", "/api/v1/runs", fields)
    if status != 201:
        raise SystemExit(f"POST /api/v1/runs answered {status}, not 201: {run}")
    return run


def follow(base: str, token: str, run_id: int, *, deadline: float) -> dict:
    """The run as the API shows it, polled until it has ended and has become a submission (or says why it
    has not); printed whenever its status, steps, requests or errors change."""
    shown: tuple = ()
    while True:
        status, run = api(base, token, "GET", f"/api/v1/runs/{run_id}")
        if status != 200:
            raise SystemExit(f"GET /api/v1/runs/{run_id} answered {status}: {run}")
        progress = run["progress"]
        state = (run["status"], progress["steps_done"], progress["requests"], progress["errors"])
        if state != shown:
            print(
                f"  {run['status']:<16} {progress['steps_done']:>3}/{progress['steps_total']:<3} steps"
                f"  {progress['requests']:>4} requests  {progress['errors']:>3} errors"
                f"  {progress['tokens']:>7} tokens  {progress['seconds']:>7.1f} s",
                flush=True,
            )
            shown = state
        ended = run["status"] in ENDED
        # A finished run is submitted by its job right after it ends; a refusal leaves its reason.
        if ended and (run["submission_id"] or run["message"] or run["status"] != "finished"):
            return run
        if time.monotonic() > deadline:
            api(base, token, "POST", f"/api/v1/runs/{run_id}/cancel")
            raise SystemExit(f"run {run_id} had not ended by the deadline: cancelled")
        time.sleep(1)


def wait_scored(submission_id: int, *, deadline: float):
    from leaderboard.models import Submission

    submission = Submission.objects.get(pk=submission_id)
    while not submission.is_finished and time.monotonic() < deadline:
        time.sleep(0.5)
        submission.refresh_from_db()
    if submission.status != Submission.Status.SCORED:
        raise SystemExit(
            f"submission {submission_id} is {submission.status}: "
            f"{submission.failure_reason or 'not scored by the deadline'}"
        )
    return submission


def report(
    run_id: int, submission, endpoint: Endpoint
) -> None:  # submission: None when nothing was submitted
    """The figures, from the run's and the submission's rows (as staff see them)."""
    from leaderboard.models import ProtocolRun, RunExchange

    run = ProtocolRun.objects.get(pk=run_id)
    exchanges = run.exchanges.all()
    durations = sorted(exchanges.values_list("duration_ms", flat=True))
    questions = exchanges.filter(kind=RunExchange.Kind.QUESTION, ok=True)
    wall = (run.finished_at - run.started_at).total_seconds()
    print(f"model server: {endpoint.described}")
    print(
        f"protocol {run.protocol} on {run.version}, temperature {run.temperature}, max_tokens {run.max_tokens},"
        f" seed {run.seed}, {run.concurrency} request(s) at once; portal: gunicorn 2 workers, 1 rq worker"
        " (scoring + protocol), PostgreSQL, Redis, 127.0.0.1"
    )
    print(f"requests          {run.requests_done} ({run.tasks_total} steps: interpretations and questions)")
    print(f"errors            {run.errors}")
    print(f"retries           {exchanges.filter(attempt__gt=1).count()}")
    print(
        f"tokens            {run.tokens_used} ({run.tokens_used / wall:.0f}/s; usage.total_tokens: each"
        " request's whole prompt and answer, as the server counts them)"
    )
    print(f"requests/s        {run.requests_done / wall:.3f}")
    print(
        f"request time      p50 {durations[len(durations) // 2] / 1000:.2f} s, mean"
        f" {statistics.fmean(durations) / 1000:.2f} s, max {durations[-1] / 1000:.2f} s"
    )
    print(
        f"run wall time     {wall:.1f} s (started {(run.started_at - run.created_at).total_seconds():.1f} s"
        " after it was created)"
    )
    print(f"answers with SQL  {questions.exclude(sql='').count()} of {questions.count()} questions answered")
    if submission is None:
        print(f"submission        none: {run.message}")
        return
    overall = submission.scores["overall"]
    print(
        f"time to score     {(submission.scored_at - submission.created_at).total_seconds():.2f} s (submission"
        f" created to scored; run ended to scored {(submission.scored_at - run.finished_at).total_seconds():.2f} s)"
    )
    print(
        f"EA                {overall['ea']:.3f} (EA-strict {overall['ea_strict']:.3f}, n {overall['n']});"
        f" submission #{submission.pk}, marked run by the portal: {submission.portal_protocol},"
        f" endpoint host {submission.portal_endpoint_host}, transcript sha256 {submission.transcript_sha256[:16]}..."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-url", default=os.environ.get("TERMITE_BENCH_SERVER_URL"))
    parser.add_argument("--model", default="local", help="The model name sent to --server-url")
    parser.add_argument("--llama-python", default=os.environ.get("TERMITE_BENCH_LLAMA_PYTHON"))
    parser.add_argument("--model-file", default=os.environ.get("TERMITE_BENCH_MODEL_FILE"))
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="llama.cpp's threads: on a busy 2-core machine 1 was the fastest",
    )
    parser.add_argument(
        "--chat-format",
        help="llama-cpp-python's --chat_format (gemma for a model file with no chat template)",
    )
    parser.add_argument("--temperature", type=float, default=1.0, help="The paper's: 1")
    parser.add_argument("--max-tokens", type=int, default=128, help="Per answer: a base model talks on")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--concurrency", type=int, default=1, help="llama-cpp-python answers one at a time")
    parser.add_argument("--max-requests", type=int, default=200, help="The run's budget")
    parser.add_argument("--max-seconds", type=int, default=1800, help="The run's budget, and the wait for it")
    parser.add_argument("--score-seconds", type=int, default=300, help="The wait for the scoring")
    parser.add_argument(
        "--request-timeout", type=float, default=300, help="TERMITE_PROTOCOL_TIMEOUT: a CPU model is slow"
    )
    parser.add_argument(
        "--scratch-name", default="protocol_run", help="The scratch database is termite_<this>"
    )
    args = parser.parse_args()

    try:
        server = model_server(args)
    except Unavailable as why:
        print(f"No local model server to measure: {why}. Nothing was run.")
        return
    portal = Portal(args.scratch_name)
    portal.env.update(
        {
            "TERMITE_PROTOCOL_ALLOW_LOOPBACK": "1",
            "TERMITE_PROTOCOL_TIMEOUT": str(args.request_timeout),
            "TERMITE_PROTOCOL_MAX_CONCURRENCY": str(max(4, args.concurrency)),
        }
    )
    with server as endpoint, portal:
        from evaluation.services import DEMO_LABEL

        token, _gold = prepare()
        portal.start_web(workers=2)
        portal.start_workers(1, queues=("scoring", "protocol"))
        started = time.monotonic()
        run = start_run(portal.url, token, endpoint, args, DEMO_LABEL)
        print(
            f"run {run['id']} started through POST /api/v1/runs; its progress, as GET /api/v1/runs/{run['id']} shows it:"
        )
        run = follow(portal.url, token, run["id"], deadline=started + args.max_seconds + 60)
        if run["submission_id"]:
            submission = wait_scored(run["submission_id"], deadline=time.monotonic() + args.score_seconds)
        elif run["status"] == "finished":  # it ran through, but no answer gave SQL to submit: still measured
            submission = None
        else:
            raise SystemExit(f"run {run['id']} ended {run['status']} without a submission: {run['message']}")
        report(run["id"], submission, endpoint)


if __name__ == "__main__":
    main()
