"""The README's client in Python, run as written against a real portal holding the demo: it uploads a file
with a token, waits for the scores and prints them; a refusal prints the API's error."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from termite_site.accounts.services import api_token_create
from tests.demo import predictions_jsonl
from tests.processes import ROOT, child_env, require_process_lane

pytestmark = pytest.mark.processes


def readme_client() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n#### A client in Python\n", 1)[1].split("\n#", 1)[0]
    (script,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return script


def run_client(tmp_path, portal: str, token: str, predictions: bytes) -> subprocess.CompletedProcess:
    require_process_lane("the README's client")
    (tmp_path / "client.py").write_text(readme_client())
    (tmp_path / "predictions.jsonl").write_bytes(predictions)
    return subprocess.run(
        [sys.executable, "client.py", "predictions.jsonl"],
        cwd=tmp_path,
        env={**child_env(), "TERMITE_PORTAL": portal, "TERMITE_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_readme_client_uploads_waits_and_prints_the_scores(live_portal, owner, gold, tmp_path):
    token = api_token_create(user=owner, name="README")[1]
    done = run_client(tmp_path, live_portal, token, predictions_jsonl(gold))
    assert done.returncode == 0, done.stderr
    scores = json.loads(done.stdout)
    assert scores["version"] == "Termite demo demo-1.0" and scores["overall"]["ea"] == 1.0


def test_the_readme_client_prints_the_apis_refusal(live_portal, owner, tmp_path):
    done = run_client(tmp_path, live_portal, "tmt_unknown", b"{}")
    assert done.returncode == 1
    assert json.loads(done.stderr)["code"] == "invalid_token"
