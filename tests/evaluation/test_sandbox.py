"""The sandbox runs one read-only query at a time in a child process, within time, size and memory limits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evaluation.scoring import sandbox as sandbox_module
from evaluation.scoring.sandbox import Limits, Query, Sandbox
from tests.evaluation.demo_db import make_demo_db, sha256_of
from tests.evaluation.hostile_sql import HOSTILE, INFINITE_CTE, UNINTERRUPTIBLE

BUDGET = 0.25
TEST_LIMITS = Limits(query_seconds=BUDGET, kill_grace_seconds=0.3, memory_bytes=128 * 2**20)
NORMAL = "SELECT COUNT(*) FROM clienti"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return make_demo_db(tmp_path_factory.mktemp("sandbox") / "demo.sqlite")


@pytest.fixture(scope="module")
def pristine(demo) -> str:
    return sha256_of(demo)


@pytest.fixture(scope="module")
def shared_sandbox() -> Sandbox:
    with Sandbox(TEST_LIMITS) as sandbox:
        yield sandbox


@pytest.fixture
def sandbox() -> Sandbox:
    with Sandbox(TEST_LIMITS) as sandbox:
        yield sandbox


def assert_still_serves(sandbox: Sandbox, demo: Path) -> None:
    execution = sandbox.execute(demo, NORMAL)
    assert (execution.outcome, execution.rows) == ("ok", ((6,),))


@pytest.mark.parametrize(("sql", "outcome"), HOSTILE)
def test_a_hostile_prediction_is_contained(shared_sandbox, demo, pristine, sql, outcome):
    execution = shared_sandbox.execute(demo, sql)
    assert execution.outcome == outcome, execution.error
    assert (execution.error is None) == (outcome == "ok")
    assert sha256_of(demo) == pristine
    assert_still_serves(shared_sandbox, demo)


def test_the_corpus_has_at_least_forty_hostile_predictions():
    assert len(HOSTILE) >= 40


def test_a_query_returns_its_columns_rows_and_time(shared_sandbox, demo):
    execution = shared_sandbox.execute(
        demo, "SELECT nome, eta AS anni FROM clienti WHERE id <= 2 ORDER BY id"
    )
    assert execution.outcome == "ok"
    assert execution.columns == ("nome", "anni")
    assert execution.rows == (("Mario", 34), ("Giulia", 28))
    assert execution.error is None
    assert 0 <= execution.elapsed < BUDGET


def test_values_cross_the_pipe_as_plain_python(shared_sandbox, demo):
    execution = shared_sandbox.execute(demo, "SELECT 1, 2.5, 'testo', x'00ff', NULL")
    assert execution.rows == ((1, 2.5, "testo", b"\x00\xff", None),)
    assert [type(value) for value in execution.rows[0]] == [int, float, str, bytes, type(None)]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COUNT(*) FROM clienti;",
        "SELECT COUNT(*) FROM clienti ;  \n\t",
        "-- quanti clienti?\nSELECT COUNT(*) FROM clienti -- tutti\n",
        "/* quanti */ SELECT COUNT(*) FROM clienti /* fine */ ;",
    ],
    ids=["semicolon", "trailing-whitespace", "line-comments", "block-comments"],
)
def test_comments_semicolon_and_whitespace_are_one_statement(shared_sandbox, demo, sql):
    assert shared_sandbox.execute(demo, sql).rows == ((6,),)


def test_the_mysql_functions_of_the_dialect_are_installed(shared_sandbox, demo):
    assert shared_sandbox.execute(demo, "SELECT mysql_truncate(1.259, 2)").rows == ((1.25,),)


def test_an_error_speaks_of_the_query_given(shared_sandbox, demo):
    execution = shared_sandbox.execute(demo, "SELECT cognome FROM clienti")
    assert execution.outcome == "runtime_error"
    assert "cognome" in execution.error


def test_an_error_mysql_raises_as_the_query_runs_has_mysqls_message_and_is_no_static_error(
    shared_sandbox, demo
):
    unsigned_age = "SELECT mysql_bigint('-', eta, 40, 'us', '(eta - 40)') FROM clienti"
    execution = shared_sandbox.execute(demo, unsigned_age)
    assert (execution.outcome, execution.static) == ("runtime_error", False)
    assert execution.error == "ERROR 1690 (22003): BIGINT UNSIGNED value is out of range in '(eta - 40)'"
    assert "cognome" in shared_sandbox.execute(demo, "SELECT cognome FROM clienti").error  # its own error


def test_a_syntax_error_is_told_apart(shared_sandbox, demo):
    assert shared_sandbox.execute(demo, "SELEC nome FROM clienti").outcome == "syntax_error"


def test_a_runaway_query_is_stopped_by_sqlite_itself_at_its_budget(shared_sandbox, demo):
    child = shared_sandbox.child_pid
    started = time.perf_counter()
    execution = shared_sandbox.execute(demo, INFINITE_CTE)
    assert (execution.outcome, execution.error) == ("timeout", "the query ran past its time budget")
    assert BUDGET <= time.perf_counter() - started < BUDGET + 1.0
    assert shared_sandbox.child_pid == child


def test_a_step_sqlite_cannot_interrupt_is_killed_and_a_fresh_child_goes_on(sandbox, demo, pristine):
    first_child = sandbox.child_pid
    started = time.perf_counter()
    execution = sandbox.execute(demo, UNINTERRUPTIBLE)
    assert execution.outcome == "timeout"
    assert time.perf_counter() - started < BUDGET + TEST_LIMITS.kill_grace_seconds + 1.0
    assert "killed" in execution.error
    assert_still_serves(sandbox, demo)
    assert sandbox.child_pid != first_child
    assert sandbox.child_starts == 2
    assert sha256_of(demo) == pristine


def test_a_child_that_crashes_mid_query_fails_that_query_only(demo, pristine):
    with Sandbox(Limits(query_seconds=5.0)) as sandbox:
        threading.Timer(0.2, os.kill, (sandbox.child_pid, signal.SIGSEGV)).start()
        execution = sandbox.execute(demo, INFINITE_CTE)
        assert execution.outcome == "resource_limit"
        assert "SQL engine" in execution.error
        assert_still_serves(sandbox, demo)
        assert sandbox.child_starts == 2
    assert sha256_of(demo) == pristine


ORPHANING_PARENT = """
import os, sys, threading, time
from evaluation.scoring import sandbox as sandbox_module
from evaluation.scoring.sandbox import Limits, Query, Sandbox
# The parent dies long before its own watchdog (0.7 s) would kill the child.
sandbox = Sandbox(Limits(query_seconds=0.2, kill_grace_seconds=0.5)).__enter__()
sandbox.execute(sys.argv[1], "SELECT 1")  # the child is up
threading.Thread(target=sandbox.execute, args=(sys.argv[1], sys.argv[2]), daemon=True).start()
time.sleep(0.1)
print(sandbox.child_pid, flush=True)
os._exit(0)
"""


@pytest.mark.processes
def test_a_runaway_child_whose_parent_died_is_ended_by_its_cpu_backstop(demo):
    parent = subprocess.run(
        [sys.executable, "-c", ORPHANING_PARENT, str(demo), UNINTERRUPTIBLE],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the child inherits it: a pipe would be read until the child ends
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    orphan = int(parent.stdout)
    assert is_running(orphan)
    deadline = time.monotonic() + 8
    while is_running(orphan) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not is_running(orphan)


def is_running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_a_child_that_died_between_queries_is_replaced(sandbox, demo):
    os.kill(sandbox.child_pid, signal.SIGKILL)
    time.sleep(0.05)
    assert_still_serves(sandbox, demo)


def test_the_total_budget_ends_a_submission_but_not_the_gold(demo):
    with Sandbox(Limits(query_seconds=0.2, total_seconds=0.5)) as sandbox:
        outcomes = [sandbox.execute(demo, INFINITE_CTE) for _ in range(4)]
        assert [e.outcome for e in outcomes] == ["timeout"] * 4
        assert "total time budget" in outcomes[-1].error
        assert sandbox.execute(demo, NORMAL).outcome == "timeout"
        assert sandbox.execute(demo, NORMAL, budgeted=False).rows == ((6,),)
        assert 0.5 <= sandbox.spent_seconds < 1.0


class SkewedClock:
    """`time` as the sandbox reads it: the real monotonic clock, plus what the test adds."""

    def __init__(self) -> None:
        self.skew = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.skew


def test_the_wall_time_bound_counts_the_callers_time_between_results_too(demo, monkeypatch):
    """What the total budget does not count (here, the caller taking 10 s over each result) counts towards
    `wall_seconds`: past it, no budgeted query starts, so a scoring's length is bounded whatever it does."""
    clock = SkewedClock()
    monkeypatch.setattr(sandbox_module, "time", clock)
    with Sandbox(Limits(query_seconds=1.0, total_seconds=100.0, wall_seconds=5.0)) as sandbox:
        outcomes = []
        for _index, execution in sandbox.stream([Query(demo, NORMAL)] * 6):
            outcomes.append((execution.outcome, execution.error))
            clock.skew += 10
        assert outcomes[0] == ("ok", None)
        assert outcomes[-3:] == [("timeout", "the submission's total time budget is spent")] * 3
        assert sandbox.spent_seconds < 100  # not the total budget: the wall-time bound
        assert sandbox.execute(demo, NORMAL, budgeted=False).rows == ((6,),)  # the gold still runs


def test_queries_made_as_the_sandbox_asks_for_them_spend_no_budget_while_they_are_made(demo):
    """The scorer transpiles each prediction when the sandbox asks for the next query, while the child
    runs those sent: that time is the caller's, as if the query had been made before, so neither the total
    budget nor the wall-time bound counts it."""

    def slowly_made():
        for _ in range(5):
            time.sleep(0.15)
            yield Query(demo, NORMAL)

    with Sandbox(Limits(query_seconds=0.2, total_seconds=0.4, wall_seconds=0.4)) as sandbox:
        outcomes = [execution.outcome for _index, execution in sandbox.stream(slowly_made())]
        assert outcomes == ["ok"] * 5
        assert sandbox.spent_seconds < 0.2


def test_a_request_that_waited_while_the_caller_made_the_next_query_is_timed_from_when_it_went(demo):
    """Requests wait in the parent until a few are ready to go together: a query's budget runs from when
    its request went to the child, not from when the caller handed it over."""

    def made_with_a_pause():
        yield from [Query(demo, NORMAL)] * 3
        time.sleep(0.6)  # longer than a query's budget and its grace together
        yield Query(demo, NORMAL)

    with Sandbox(Limits(query_seconds=0.2, kill_grace_seconds=0.2)) as sandbox:
        outcomes = [execution.outcome for _index, execution in sandbox.stream(made_with_a_pause())]
        assert outcomes == ["ok"] * 4
        assert sandbox.child_starts == 1


def test_the_total_budget_counts_the_queries_own_time_not_the_callers_before_it_reads_them(demo):
    with Sandbox(Limits(query_seconds=0.2, total_seconds=100.0)) as sandbox:  # all five sent at once
        outcomes = []
        for _index, execution in sandbox.stream([Query(demo, NORMAL)] * 5):
            outcomes.append(execution.outcome)
            time.sleep(0.15)  # the answers after this one wait in the pipe meanwhile
        assert outcomes == ["ok"] * 5
        assert sandbox.spent_seconds < 0.2


def test_a_batch_answers_in_order_as_one_query_at_a_time_would(shared_sandbox, demo):
    sqls = [
        NORMAL,
        "SELEC nome FROM clienti",
        "",
        "SELECT cognome FROM clienti",
        "SELECT 1; SELECT 2",
        NORMAL,
    ]
    batch = shared_sandbox.execute_many([Query(demo, sql) for sql in sqls])
    one_by_one = [shared_sandbox.execute(demo, sql) for sql in sqls]
    assert [(e.outcome, e.rows, e.error) for e in batch] == [(e.outcome, e.rows, e.error) for e in one_by_one]
    assert [e.outcome for e in batch] == [
        "ok",
        "syntax_error",
        "syntax_error",
        "runtime_error",
        "syntax_error",
        "ok",
    ]


def test_each_query_of_a_batch_has_its_own_budget(shared_sandbox, demo):
    started = time.perf_counter()
    batch = shared_sandbox.execute_many([Query(demo, INFINITE_CTE)] * 3 + [Query(demo, NORMAL)])
    assert [e.error for e in batch[:3]] == ["the query ran past its time budget"] * 3
    assert batch[3].rows == ((6,),)
    assert 3 * BUDGET <= time.perf_counter() - started < 3 * BUDGET + 1.0


def test_a_query_that_kills_the_child_fails_alone_and_the_rest_of_the_batch_goes_on(sandbox, demo):
    batch = sandbox.execute_many([Query(demo, sql) for sql in (NORMAL, UNINTERRUPTIBLE, NORMAL, NORMAL)])
    assert [e.outcome for e in batch] == ["ok", "timeout", "ok", "ok"]
    assert "killed" in batch[1].error
    assert sandbox.child_starts == 2


def test_the_total_budget_ends_a_batch_as_it_ends_one_query_at_a_time(demo):
    with Sandbox(Limits(query_seconds=0.2, total_seconds=0.5)) as sandbox:
        batch = sandbox.execute_many([Query(demo, INFINITE_CTE)] * 4 + [Query(demo, NORMAL)])
        assert [e.outcome for e in batch] == ["timeout"] * 5
        assert "total time budget" in batch[-1].error
        assert 0.5 <= sandbox.spent_seconds < 1.0
        assert sandbox.execute_many([Query(demo, NORMAL, budgeted=False)])[0].rows == ((6,),)


def test_rows_beyond_the_cap_are_a_resource_limit(demo):
    with Sandbox(Limits(max_rows=5)) as sandbox:
        assert sandbox.execute(demo, "SELECT * FROM clienti").outcome == "resource_limit"
        assert sandbox.execute(demo, "SELECT * FROM clienti LIMIT 5").outcome == "ok"


def test_a_result_too_large_for_the_pipe_is_a_resource_limit(demo):
    with Sandbox(Limits(max_result_bytes=100_000)) as sandbox:
        execution = sandbox.execute(demo, "SELECT hex(zeroblob(10000)) FROM ordini")
        assert execution.outcome == "resource_limit"
        assert "larger than" in execution.error


def test_a_batch_of_large_results_crosses_the_pipe_whole(shared_sandbox, demo):
    rows = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 20000) "
    sql = rows + "SELECT x, printf('%040d', x) FROM r"  # about 1 MB of answer each
    batch = shared_sandbox.execute_many([Query(demo, sql)] * 5)
    assert [len(e.rows) for e in batch] == [20000] * 5
    assert batch[4].rows[-1] == (20000, "0" * 35 + "20000")


def test_an_attach_leaves_no_file_behind(shared_sandbox, demo, tmp_path):
    target = tmp_path / "altro.sqlite"
    assert shared_sandbox.execute(demo, f"ATTACH DATABASE '{target}' AS altro").outcome == "runtime_error"
    assert not target.exists()


def test_the_database_is_a_private_copy_with_its_sha256(shared_sandbox, demo, pristine):
    assert shared_sandbox.database_sha256(demo) == pristine


def test_the_child_boots_while_the_caller_goes_on_and_its_start_up_is_reported(demo):
    started = time.perf_counter()
    with Sandbox(TEST_LIMITS) as sandbox:
        entered = time.perf_counter() - started
        assert (sandbox.child_starts, sandbox.startup_seconds) == (0, 0.0)
        assert_still_serves(sandbox, demo)
        assert sandbox.child_starts == 1
        assert entered < sandbox.startup_seconds < 5


CHILD_IMPORTS = """
import sys
sys.path[:] = sys.argv[1:]
import evaluation.scoring.sandbox_child
print(" ".join(sorted(m for m in ("sqlglot", "django", "multiprocessing", "dataclasses") if m in sys.modules)))
"""


@pytest.mark.processes
def test_the_child_imports_neither_sqlglot_nor_other_slow_modules():
    # Every submission waits for the child to start: what it imports is paid each time.
    child = subprocess.run(
        [sys.executable, "-I", "-c", CHILD_IMPORTS, *sys.path], capture_output=True, text=True, check=True
    )
    assert child.stdout.strip() == ""


def test_the_child_ends_with_the_sandbox(demo):
    with Sandbox(TEST_LIMITS) as sandbox:
        pid = sandbox.child_pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_it_must_be_entered_before_use(demo):
    with pytest.raises(RuntimeError):
        Sandbox().execute(demo, NORMAL)


def test_databases_opened_ahead_answer_as_before_and_their_time_is_not_a_querys(demo, pristine):
    with Sandbox(TEST_LIMITS) as sandbox:
        sandbox.open_ahead([demo, demo])
        assert sandbox.database_sha256(demo) == pristine
        started = time.perf_counter()
        execution = sandbox.execute(demo, INFINITE_CTE)
        assert (execution.outcome, execution.error) == ("timeout", "the query ran past its time budget")
        assert time.perf_counter() - started < BUDGET + 1.0
        assert_still_serves(sandbox, demo)
        assert sandbox.child_starts == 1
    assert sha256_of(demo) == pristine


def test_a_child_lost_while_opening_ahead_is_replaced_before_the_first_query(demo):
    with Sandbox(TEST_LIMITS) as sandbox:
        sandbox.open_ahead([demo])
        os.kill(sandbox.child_pid, signal.SIGKILL)
        assert_still_serves(sandbox, demo)
        assert sandbox.child_starts in (1, 2)  # whether the killed child had said it was ready or not


def test_many_answers_of_any_size_read_together_keep_their_order(shared_sandbox, demo):
    big = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 20000) SELECT x FROM r"
    sqls = [NORMAL, big, NORMAL, "SELECT nome FROM clienti", big, NORMAL] * 5
    batch = shared_sandbox.execute_many([Query(demo, sql) for sql in sqls])
    one_by_one = [shared_sandbox.execute(demo, sql) for sql in sqls]
    assert [(e.outcome, e.rows) for e in batch] == [(e.outcome, e.rows) for e in one_by_one]
    assert batch[1].rows == tuple((x,) for x in range(1, 20001))
