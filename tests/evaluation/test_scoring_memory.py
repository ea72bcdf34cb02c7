"""Scoring fits in 300 MB, the scoring process and the sandbox's child together, whatever the predictions:
a memory bomb is a resource limit for its question alone. benchmarks/score_memory.py measures the tree."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from evaluation.grading import scoring_limits
from evaluation.scoring.sandbox import Limits
from evaluation.scoring.score import GoldQuestion, score_predictions
from tests.evaluation.demo_db import make_demo_db
from tests.evaluation.hostile_sql import MEMORY_BOMBS, UNDER_THE_RESULT_CAPS
from tests.processes import ROOT, child_env, require_process_lane

TREE_BYTES = 300 * 2**20
GOLD = "SELECT nome FROM clienti ORDER BY id"
PREDICTIONS = {
    **{kind: (dialect, sql.format(table="ordini")) for kind, (dialect, sql) in MEMORY_BOMBS.items()},
    # The largest result one prediction may hand to the scoring process, which holds it while comparing.
    "under-the-caps": ("sqlite", UNDER_THE_RESULT_CAPS.format(table="ordini")),
    "right": ("sqlite", GOLD),
}
# A process that has loaded what `manage.py score` loads, scoring as it does. It prints the outcomes, its own
# peak resident set (VmHWM: ru_maxrss would start from its parent's, inherited at fork) and the address-space
# limit of a sandbox child under the same limits, which the child's resident set can never pass.
SCORING_PROCESS = """
import json, sys
import django

django.setup()
from evaluation.grading import scoring_limits
from evaluation.management.commands import score  # what `manage.py score` loads weighs on the peak too
from evaluation.scoring.sandbox import Sandbox
from tests.evaluation.test_scoring_memory import child_address_space, scored, status_bytes

outcomes = scored(sys.argv[1], json.loads(sys.argv[2]), scoring_limits())
with Sandbox(scoring_limits()) as sandbox:
    sandbox.execute(sys.argv[1], "SELECT 1")
    child_bytes = child_address_space(sandbox.child_pid)
print(json.dumps({
    "outcomes": outcomes,
    "own_bytes": status_bytes("self", "VmHWM"),
    "child_bytes": child_bytes,
}))
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return make_demo_db(tmp_path_factory.mktemp("memory") / "demo.sqlite")


def scored(demo: str | Path, predictions: dict[str, tuple[str, str]], limits: Limits) -> dict[str, str]:
    """The outcome of each prediction, scored in its dialect. The time budgets are far above what any of
    them needs to reach the memory caps, so that only those can stop them, however busy the machine."""
    limits = replace(limits, query_seconds=60.0, total_seconds=3600.0)
    outcomes = {}
    for dialect in ("sqlite", "mysql"):
        chosen = {qid: sql for qid, (of, sql) in predictions.items() if of == dialect}
        report = score_predictions(
            questions=[GoldQuestion(qid, "negozio", "easy", GOLD) for qid in chosen],
            predictions=chosen,
            database_paths={"negozio": Path(demo)},
            dialect=dialect,
            limits=limits,
        )
        outcomes |= {question.question_id: question.outcome for question in report.questions}
    return outcomes


def status_bytes(pid: int | str, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith(f"{field}:")).split()[1]) * 1024


def child_address_space(pid: int) -> int:
    limits = Path(f"/proc/{pid}/limits").read_text().splitlines()
    return int(next(line for line in limits if line.startswith("Max address space")).split()[3])


@pytest.mark.parametrize("kind", sorted(MEMORY_BOMBS))
def test_a_memory_bomb_is_a_resource_limit_for_its_question_alone(demo, kind):
    outcomes = scored(demo, {kind: PREDICTIONS[kind], "right": PREDICTIONS["right"]}, scoring_limits())
    assert outcomes == {kind: "resource_limit", "right": "correct"}


@pytest.mark.processes
def test_the_scoring_process_and_the_sandbox_fit_in_300_mb_together_whatever_the_predictions(demo):
    require_process_lane("a Python child")
    done = subprocess.run(
        [sys.executable, "-c", SCORING_PROCESS, str(demo), json.dumps(PREDICTIONS)],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout)
    assert figures["outcomes"] == {
        **{kind: "resource_limit" for kind in MEMORY_BOMBS},
        "under-the-caps": "wrong_result",
        "right": "correct",
    }
    assert figures["own_bytes"] + figures["child_bytes"] <= TREE_BYTES, figures
