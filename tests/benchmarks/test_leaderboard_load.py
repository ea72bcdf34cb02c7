"""`benchmarks/leaderboard_load.py`: which clients load the leaderboard, and the rows it seeds."""

from __future__ import annotations

import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

import pytest

from benchmarks import leaderboard_load, loadkit
from evaluation.models import BenchmarkVersion
from leaderboard.feedback import public_ea_verdicts
from termite_site.accounts.models import Team, User
from tests.leaderboard.scored import QUESTIONS
from tests.processes import require_process_lane
from tests.services import REQUIRE_SERVICES


class Answers(BaseHTTPRequestHandler):
    """A page that is always there, and the Cookie and Accept-Encoding headers of every request for it."""

    cookies: list[str] = []
    encodings: list[str] = []

    def do_GET(self) -> None:
        self.cookies.append(self.headers.get("Cookie", ""))
        self.encodings.append(self.headers.get("Accept-Encoding", ""))
        body = b"classifica"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:  # quiet: a test's output is its assertions
        pass


@pytest.fixture
def site():
    """An HTTP server on 127.0.0.1 in this process (threads, no process): its base URL."""
    Answers.cookies, Answers.encodings = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_without_wrk_it_says_so_and_the_python_clients_load_the_page(monkeypatch, capsys, site):
    monkeypatch.setattr(loadkit.shutil, "which", lambda name: None)

    loaders = leaderboard_load.clients(site, users=2, seconds=0.3)
    load = loaders["Python"]("/leaderboard/")

    assert list(loaders) == ["Python"]
    assert "wrk is not installed" in capsys.readouterr().out
    assert load.latencies and load.errors == 0


def test_with_wrk_installed_wrk_loads_first_then_the_python_clients(monkeypatch, capsys):
    monkeypatch.setattr(loadkit.shutil, "which", lambda name: f"/usr/bin/{name}")

    assert list(leaderboard_load.clients("http://127.0.0.1:9", users=2, seconds=1)) == ["wrk", "Python"]
    assert capsys.readouterr().out == ""


def test_each_python_client_sends_its_own_visitors_cookie(site):
    visitors = [{"Cookie": "sessionid=anna"}, {"Cookie": "sessionid=bruno"}, {"Cookie": "sessionid=carla"}]

    load = loadkit.hammer(site, ["/leaderboard/"], users=3, seconds=0.3, visitors=visitors)

    assert load.errors == 0
    assert set(Answers.cookies) == {"sessionid=anna", "sessionid=bruno", "sessionid=carla"}


@pytest.fixture
def wrk_on_path(request):
    """Debian's wrk, a process of its own: in the process lane, and installed by CI (.ci/run)."""
    require_process_lane("wrk", request.node)
    if not loadkit.wrk_installed():
        if REQUIRE_SERVICES:
            pytest.fail("wrk is missing (apt-get install wrk)")
        pytest.skip("wrk is missing")


@pytest.mark.processes
def test_wrk_sends_each_visitors_cookie_in_turn_with_the_shared_headers(site, wrk_on_path):
    visitors = [{"Cookie": "sessionid=anna"}, {"Cookie": "sessionid=bruno"}, {"Cookie": "sessionid=carla"}]

    load = loadkit.wrk(
        f"{site}/leaderboard/", users=3, seconds=1, headers={"Accept-Encoding": "gzip"}, visitors=visitors
    )

    assert load.requests > 3 and load.errors == 0
    assert set(Answers.cookies) == {"sessionid=anna", "sessionid=bruno", "sessionid=carla"}
    assert set(Answers.encodings) == {"gzip"}
    assert 0 < load.percentile(50) <= load.percentile(99)


def test_wrk_loads_of_several_turns_merge_into_one_line():
    def load(requests: int, latency: float) -> loadkit.WrkLoad:
        return loadkit.WrkLoad(
            requests=requests,
            seconds=1,
            bytes=100 * requests,
            errors=0,
            mean=latency,
            quantiles=[(latency,) * 1000],
            counts=[requests],
        )

    merged = load(990, 0.010).merged_with(load(10, 0.500))

    assert (merged.requests, merged.seconds, merged.requests_per_second) == (1000, 2, 500)
    assert merged.percentile(50) == 0.010 and merged.percentile(99) == 0.010
    assert merged.percentile(99.5) == 0.500
    assert merged.mean == pytest.approx((990 * 0.010 + 10 * 0.500) / 1000)


def test_wrk_counts_a_request_as_failed_only_after_the_python_clients_would(monkeypatch):
    """wrk's own timeout, 2 s, counted a slow answer (a render under load) as an error."""
    commands = []
    report = {"requests": 10, "seconds": 1.0, "bytes": 1000, "mean": 1000.0, "quantiles": [1000.0]}
    report |= dict.fromkeys(("connect", "read", "write", "status", "timeout"), 0)

    def run(command, **kwargs):
        commands.append(command)
        return mock.Mock(stdout=json.dumps(report) + "\n")

    monkeypatch.setattr(loadkit.subprocess, "run", run)
    loadkit.wrk("http://127.0.0.1:9/leaderboard/", users=2, seconds=1)
    timeout = commands[0][commands[0].index("--timeout") + 1]
    assert timeout == f"{loadkit.CLIENT_TIMEOUT_SECONDS}s" and loadkit.CLIENT_TIMEOUT_SECONDS == 30


class Seeded:
    """What `Churn` takes of `leaderboard_load.Seeded`: a submission to store, and the version."""

    version = BenchmarkVersion(label="demo-1.0")

    def submission(self):
        return mock.Mock()


def test_a_churn_loaded_in_turns_goes_on_where_its_last_turn_stopped(monkeypatch):
    changed = []
    monkeypatch.setattr("leaderboard.services.leaderboard_changed", lambda version: changed.append(version))
    with leaderboard_load.Churn(Seeded(), per_second=0.1) as untouched:
        pass
    assert untouched.changes == 0 and 9 < untouched.next_in <= 10  # one interval, less the time it was open

    with leaderboard_load.Churn(Seeded(), per_second=0.1, first_in=3) as resumed:
        pass
    assert resumed.changes == 0 and 2 < resumed.next_in <= 3

    with leaderboard_load.Churn(Seeded(), per_second=0.1, first_in=0) as due:
        deadline = time.monotonic() + 10
        while not changed and time.monotonic() < deadline:
            time.sleep(0.01)
    assert due.changes == 1 and changed == [Seeded.version] and 0 < due.next_in <= 10


def test_a_seeded_submissions_verdicts_per_question_agree_with_its_ea():
    version = BenchmarkVersion(label="demo-1.0")
    rng = random.Random(7)
    rows = [
        leaderboard_load.scored_submission(rng, n, version=version, users=[User()], teams=[Team()])
        for n in range(50)
    ]

    for submission in rows:
        verdicts = public_ea_verdicts(submission.outcomes)
        assert verdicts is not None and len(verdicts) == QUESTIONS  # what the rank rule reads
        assert sum(verdicts.values()) / QUESTIONS == submission.ea == submission.scores["overall"]["ea"]
        assert submission.scores["version"] == "demo-1.0"
    assert len({submission.ea for submission in rows}) > 10  # a ranking, not a tie
