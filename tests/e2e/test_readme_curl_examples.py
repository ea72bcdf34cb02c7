"""The README's curl examples, run as written against a real portal holding the demo: every command of its
```sh blocks that calls the portal (or the model server of "Against a model server on your own machine"),
and every variable those blocks set, runs in bash with the real curl in a folder holding the files they
name. Only the addresses change (the portal's and the model server's are the test's own); `$TOKEN` is a
confirmed user's token and `$OTHER` one of the demo's public systems, as the README says. Each must answer
2xx with what the README says it gives, so that an example that breaks fails here rather than in a reader's
shell."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from leaderboard.demo import demo_submissions_load
from leaderboard.models import Submission
from termite_site.accounts.services import api_token_create
from tests.demo import predictions_jsonl
from tests.leaderboard.protocol_runs import good_model
from tests.openai_stub import OpenAIStub, Reply, Request, answer
from tests.processes import child_env, require_process_lane
from tests.readme import shell_command_texts

pytestmark = pytest.mark.processes

# The module's portal (tests/e2e/conftest.py) may call the model server on loopback, as the README starts it.
PORTAL_ENV = {"TERMITE_PROTOCOL_ALLOW_LOOPBACK": "1"}

README_PORTAL = "http://127.0.0.1:8000"
README_MODEL_SERVER = "http://127.0.0.1:8080"
# A command that only sets a variable from a command's output, `ID=$(...)`: the commands after it use it.
SETS_VARIABLE = re.compile(r"\s*([A-Za-z_]\w*)=\$\(.*\)\s*(#[^\n]*)?\n", re.S)
# curl exits 0 whatever the HTTP status; its config file makes it also say the status, on stderr, so that
# the command and what it prints stay as written. Each request is bounded.
CURLRC = 'write-out = "%{stderr}HTTP %{http_code}\\n"\nmax-time = 60\nno-progress-meter\n'
STATUS_LINE = re.compile(r"^HTTP (\d{3})$", re.M)


def readme_commands() -> dict[str, str]:
    """The README's commands that call the portal or the model server, each under its method and URL
    (`POST /api/v1/submissions`, the portal's address left out), and the commands that set a variable,
    each under `NAME=`."""
    found: dict[str, str] = {}
    for text in shell_command_texts():
        assignment = SETS_VARIABLE.fullmatch(text)
        words = shlex.split(text.replace("\\\n", " "), comments=True)
        # The URL curl asks for is a word of its own; the model server's address in a run's JSON is not.
        urls = [word for word in words if word.startswith((README_PORTAL, README_MODEL_SERVER))]
        if assignment:
            key = f"{assignment[1]}="
        elif words[0] == "curl" and urls:
            method = "POST" if {"-d", "-F"} & set(words) else "GET"
            key = f"{method} {urls[0].removeprefix(README_PORTAL)}"
        else:
            continue
        assert key not in found, f"README: two commands are {key}"
        found[key] = text
    return found


README_COMMANDS = readme_commands()


@dataclass(frozen=True)
class Answer:
    stdout: str

    def json(self):
        return json.loads(self.stdout)


class ReadersShell:
    """A reader's terminal: the README's commands run one after another in `folder`, through bash, with the
    variables the reader set and those the commands set themselves."""

    def __init__(
        self, folder: Path, *, portal: str, model_server: str = README_MODEL_SERVER, **variables: str
    ):
        require_process_lane("bash and curl")
        self.folder = folder
        self.addresses = {README_PORTAL: portal, README_MODEL_SERVER: model_server}
        (folder / ".curlrc").write_text(CURLRC)
        self.env = {**child_env(), "CURL_HOME": str(folder), **variables}

    def run(self, key: str, *, status: int = 200) -> Answer:
        """Run the README's command `key` as written, but for the addresses; fail unless each request it
        makes answers `status`."""
        return self.run_text(README_COMMANDS[key], status=status)

    def run_text(self, text: str, *, status: int = 200) -> Answer:
        for readme_address, address in self.addresses.items():
            text = text.replace(readme_address, address)
        assignment = SETS_VARIABLE.fullmatch(text)
        script = f'{text}printf %s "${assignment[1]}"' if assignment else text
        done = subprocess.run(
            ["bash", "-c", script], cwd=self.folder, env=self.env, capture_output=True, text=True, timeout=90
        )
        statuses = [int(code) for code in STATUS_LINE.findall(done.stderr)]
        # A command that sets a variable may ask nothing itself; any other asks at least once.
        as_said = all(code == status for code in statuses) and bool(statuses or assignment)
        if done.returncode != 0 or not as_said:
            pytest.fail(
                f"README: `{text.strip()}` exited {done.returncode}, answered {statuses} (not {status}):"
                f" {done.stdout[-2000:]} {STATUS_LINE.sub('', done.stderr)[-2000:]}"
            )
        if assignment:
            self.env[assignment[1]] = done.stdout
        return Answer(done.stdout)

    def run_until(self, key: str, condition, *, seconds: float = 90) -> Answer:
        """Run the README's command `key` again until what it answers meets `condition`, as a reader
        following a submission or a run does."""
        deadline = time.monotonic() + seconds
        while not condition((seen := self.run(key)).json()):
            if time.monotonic() > deadline:
                pytest.fail(f"README: `{key}` still answers {seen.stdout[:2000]} after {seconds} s")
            time.sleep(0.5)
        return seen


@pytest.fixture
def token(owner) -> str:
    return api_token_create(user=owner, name="README")[1]


def test_the_json_api_examples_list_the_versions_upload_follow_list_and_compare(
    live_portal, demo_version, gold, token, tmp_path
):
    """The README's walk through the API: the labels, the task, an upload with a whole model card, its
    status until it is scored, the list, and the paired test with one of the demo's systems."""
    demo_submissions_load(version=demo_version)
    other = Submission.objects.get(model_name="Oracolo (the demo's own answers)").pk
    (tmp_path / "predictions.jsonl").write_bytes(predictions_jsonl(gold))
    shell = ReadersShell(tmp_path, portal=live_portal, TOKEN=token, OTHER=str(other))

    versions = shell.run("GET /api/v1/versions").json()["versions"]
    assert [version["label"] for version in versions] == ["demo-1.0"]
    task = shell.run("GET /api/v1/versions/demo-1.0/questions").json()
    assert sorted(question["question_id"] for question in task["questions"]) == sorted(gold)

    uploaded = shell.run("POST /api/v1/submissions", status=201).json()
    assert (
        uploaded["public"] and uploaded["receipt"] and uploaded["status"] in ("queued", "running", "scored")
    )
    assert json.loads((tmp_path / "submission.json").read_text()) == uploaded
    assert shell.run("ID=").stdout == str(uploaded["id"])

    scored = shell.run_until("GET /api/v1/submissions/$ID", lambda seen: seen["status"] == "scored").json()
    assert scored["id"] == uploaded["id"] and scored["scores"]["overall"]["ea"] == 1.0
    listed = shell.run("GET /api/v1/submissions").json()["submissions"]
    assert [submission["id"] for submission in listed] == [uploaded["id"]]
    paired = shell.run("GET /api/v1/compare?a=$ID&b=$OTHER").json()
    assert (paired["a"], paired["b"], paired["version"]) == (uploaded["id"], other, "demo-1.0")


def test_the_errata_examples_report_a_question_and_list_the_report(
    live_portal, demo_version, token, tmp_path
):
    """A report on one of the demo's questions, then the reporter's list holding it, open."""
    shell = ReadersShell(tmp_path, portal=live_portal, TOKEN=token)
    report = shell.run("POST /api/v1/errata", status=201).json()
    assert (report["question_id"], report["version"], report["status"]) == (
        "biblioteca-001",
        "demo-1.0",
        "open",
    )
    listed = shell.run("GET /api/v1/errata").json()
    assert [erratum["id"] for erratum in listed["errata"]] == [report["id"]]


def greeting_demo_model(version) -> Callable[[Request], Reply]:
    """The demo's model of the protocol tests, which also answers the README's "Ciao" (is it up?)."""
    knows = good_model(version)

    def respond(request: Request) -> Reply:
        try:
            return knows(request)
        except KeyError:  # not one of the demo's questions
            return answer("Ciao! Come posso aiutarti?")

    return respond


def test_the_protocol_run_examples_check_the_model_server_start_a_run_and_follow_it_to_its_submission(
    live_portal, demo_version, token, tmp_path
):
    """The model server answers the README's check; the run the README starts on it through the API asks
    it every question and becomes a submission."""
    with OpenAIStub(greeting_demo_model(demo_version)) as stub:
        model_server = stub.url.removesuffix("/v1/chat/completions")
        shell = ReadersShell(tmp_path, portal=live_portal, model_server=model_server, TOKEN=token)

        hello = shell.run(f"POST {README_MODEL_SERVER}/v1/chat/completions").json()
        assert hello["choices"][0]["message"]["content"]

        started = shell.run("POST /api/v1/runs", status=201).json()
        assert (started["version"], started["model"], started["protocol"]) == (
            "demo-1.0",
            "gemma3-270m",
            "termite-2turn-it/1",
        )
        assert shell.run("RUN=").stdout == str(started["id"])
        ended = shell.run_until(
            "GET /api/v1/runs/$RUN", lambda seen: seen["submission_id"] is not None
        ).json()
    assert ended["id"] == started["id"] and ended["status"] == "finished"
    assert Submission.objects.get(pk=ended["submission_id"]).model_name == "Gemma 3 270M"


def test_every_readme_command_that_calls_the_portal_or_the_model_server_is_run_here():
    """What the tests above run; a new example in the README needs its check here."""
    assert sorted(README_COMMANDS) == sorted(
        [
            "GET /api/v1/versions",
            "GET /api/v1/versions/demo-1.0/questions",
            "POST /api/v1/submissions",
            "ID=",
            "GET /api/v1/submissions/$ID",
            "GET /api/v1/submissions",
            "GET /api/v1/compare?a=$ID&b=$OTHER",
            "POST /api/v1/errata",
            "GET /api/v1/errata",
            f"POST {README_MODEL_SERVER}/v1/chat/completions",
            "POST /api/v1/runs",
            "RUN=",
            "GET /api/v1/runs/$RUN",
        ]
    )


def test_a_command_the_portal_refuses_fails_its_check(live_portal, demo_version, token, tmp_path):
    """The README's question command on a label the demo lacks: the check fails, with the portal's answer."""
    shell = ReadersShell(tmp_path, portal=live_portal, TOKEN=token)
    wrong_label = README_COMMANDS["GET /api/v1/versions/demo-1.0/questions"].replace("demo-1.0", "demo-9.9")
    with pytest.raises(pytest.fail.Exception, match=r"answered \[404\]"):
        shell.run_text(wrong_label)
