"""The README's `python3 dev.py manage` examples name commands that exist and give options those commands
take: an example with a missing command or a wrong option fails here rather than in a reader's shell.
Each is checked in this process, by the command's own parser; those that only read the demo or redo what it
has (and the protocol run on a model server on loopback) also run as written, in the process lane."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from django.core.management import CommandError, get_commands, load_command_class

from evaluation.models import BenchmarkVersion
from leaderboard.models import Submission
from tests.demo import predictions_jsonl
from tests.leaderboard.protocol_runs import good_model
from tests.openai_stub import OpenAIStub
from tests.processes import ROOT, portal_env, require_process_lane, start_worker, stop
from tests.readme import shell_command_texts, shell_commands

DEV_PY_MANAGE = ["python3", "dev.py", "manage"]
# What a `$VAR` placeholder stands for: a word every kind of option takes (text, a number, a path).
SAMPLE_VALUE = "1"


def manage_arguments(words: list[str]) -> list[str] | None:
    """The arguments after `python3 dev.py manage` of a command run that way, past the variables it sets
    first (`OPENAI_API_KEY=... python3 dev.py manage run_protocol ...`); None for another command."""
    while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
        words = words[1:]
    return words[3:] if words[:3] == DEV_PY_MANAGE else None


def readme_manage_commands() -> list[list[str]]:
    """The arguments of each README command run through `python3 dev.py manage`, a variable standing for
    a sample value."""
    found = []
    for words in shell_commands():
        arguments = manage_arguments(words)
        if arguments is not None:
            found.append([re.sub(r"\$\{?\w+\}?", SAMPLE_VALUE, word) for word in arguments])
    return found


def check_manage_command(arguments: list[str]) -> None:
    """Fail unless `manage.py *arguments` names a command and its options parse."""
    name, *options = arguments
    app = get_commands().get(name)
    if app is None:
        pytest.fail(f"README: `python3 dev.py manage {name}`: there is no such command")
    try:
        load_command_class(app, name).create_parser("manage.py", name).parse_args(options)
    except CommandError as error:
        pytest.fail(f"README: `python3 dev.py manage {' '.join(arguments)}`: {error}")


README_MANAGE_COMMANDS = readme_manage_commands()


def test_the_readme_runs_manage_py_through_dev_py_manage_only():
    """`python manage.py` fails on a fresh checkout (no Django outside the venv; with DEBUG off, no
    secrets), and `.venv/bin/python manage.py` too unless DEBUG=1 is said."""
    assert [words for words in shell_commands() if any("manage.py" in word for word in words)] == []
    assert len(README_MANAGE_COMMANDS) >= 10, README_MANAGE_COMMANDS


@pytest.mark.parametrize("arguments", README_MANAGE_COMMANDS, ids=lambda arguments: arguments[0])
def test_each_readme_manage_command_exists_and_takes_its_options(arguments):
    check_manage_command(arguments)


@pytest.mark.parametrize(
    "arguments",
    [["scoring", "predictions.jsonl"], ["score", "predictions.jsonl", "--versions", "demo-1.0"], ["rescore"]],
    ids=["a missing command", "a wrong option", "a required option left out"],
)
def test_the_check_fails_an_example_with(arguments):
    with pytest.raises(pytest.fail.Exception, match="README: `python3 dev.py manage"):
        check_manage_command(arguments)


# The README's manage commands that are only parsed above, and why: each needs what only the reader has.
PARSED_ONLY = {
    "import_termite": "the real Termite archive",
    "add_database": "the reader's own dump and questions",
    "rotate_gold_key": "a new gold key the reader sets",
}
# The model servers the README's protocol runs call, and the file of model-card fields one of them reads.
README_MODEL_SERVERS = ("https://api.openai.com", "http://127.0.0.1:8080")
README_CARD = "card.json"


def readme_texts_run_against_the_demo() -> list[str]:
    """Every other manage command as written, in the README's order (load_demo makes the admin a run
    names), and the command that writes the card a run reads."""
    found = []
    for text, words in zip(shell_command_texts(), shell_commands(), strict=True):
        arguments = manage_arguments(words)
        writes_the_card = words[0] == "printf" and words[-2:] == [">", README_CARD]
        if (arguments is not None and arguments[0] not in PARSED_ONLY) or writes_the_card:
            found.append(text)
    return found


@pytest.mark.processes
def test_the_readme_manage_commands_run_as_written_against_the_demo(
    real_services, demo_version, gold, tmp_path
):
    """All but those that need what only the reader has, each in bash, in a folder holding `dev.py` and
    the `predictions.jsonl` it names, on the test database and its demo. The model servers of the protocol
    runs (OpenAI's, and one on loopback) are the test's stub; the README's card makes one run public."""
    require_process_lane("python3 dev.py manage")
    texts = readme_texts_run_against_the_demo()
    assert len(texts) == 12, texts
    (tmp_path / "dev.py").symlink_to(ROOT / "dev.py")
    (tmp_path / "predictions.jsonl").write_bytes(predictions_jsonl(gold))
    printed: dict[str, list[str]] = {}  # by command, what each run of it printed
    worker = start_worker()  # scores the protocol run's submission, as the README's worker does
    try:
        with OpenAIStub(good_model(demo_version)) as stub:
            for text in texts:
                script = text
                for server in README_MODEL_SERVERS:
                    script = script.replace(server, stub.url.removesuffix("/v1/chat/completions"))
                done = subprocess.run(
                    ["bash", "-c", script],
                    cwd=tmp_path,
                    # The stub stands in for OpenAI's server too, on loopback: the portal may call it.
                    env=portal_env(TERMITE_PROTOCOL_ALLOW_LOOPBACK="1"),
                    capture_output=True,
                    text=True,
                    timeout=240,
                )
                assert done.returncode == 0, f"README: `{text.strip()}`: {done.stderr[-2000:]}"
                command = text.split(" manage ", 1)[1].split()[0] if " manage " in text else "printf"
                printed.setdefault(command, []).append(done.stdout)
    finally:
        stop(worker)
    assert (
        "Demo submissions: 3 scored." in printed["load_demo"][0]
        and "username 'admin'" in printed["load_demo"][0]
    )
    scores = json.loads(printed["score"][0])
    assert scores["overall"]["ea"] == 1.0 and len(scores["questions"]) == len(gold)
    assert printed["create_version"][0].startswith(
        "Draft Termite 1.1 created, a copy of Termite demo demo-1.0 (2 databases,"
    )
    assert not BenchmarkVersion.objects.get(label="1.1").is_published
    assert "Would re-enqueue 0 submission(s)." in printed["requeue_stuck"][0]
    assert all(f"{database}:" in printed["build_suites"][0] for database in ("biblioteca", "ciclismo"))
    assert "0 fetched, 2 already here" in printed["fetch_databases"][0]
    assert (
        all("nothing to rescore" in output for output in printed["rescore"]) and len(printed["rescore"]) == 2
    )
    assert json.loads(printed["probing_report"][0])["version"] == "demo-1.0"
    openai_run, loopback_run = (json.loads(output) for output in printed["run_protocol"])
    assert openai_run["scores"]["overall"]["ea"] == loopback_run["scores"]["overall"]["ea"] == 1.0
    public = Submission.objects.get(pk=openai_run["submission_id"])  # the card made it a whole public one
    assert public.is_public and (public.model_size, public.weights) == ("unknown", "closed")
    assert not Submission.objects.get(pk=loopback_run["submission_id"]).is_public
