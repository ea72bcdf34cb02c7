"""`manage.py score`: offline scoring of a predictions file, as a table or as JSON scripts rely on."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO

import pytest
from django.core import checks
from django.core.management import CommandError, call_command, load_command_class

from tests.demo import demo_gold
from tests.processes import ROOT, embedded_env, require_process_lane

pytestmark = pytest.mark.django_db


def score(*args) -> str:
    out = StringIO()
    call_command("score", *map(str, args), stdout=out)
    return out.getvalue()


def write_jsonl(path, predictions: dict[str, str]):
    path.write_text("\n".join(json.dumps({"question_id": q, "sql": s}) for q, s in predictions.items()))
    return path


def test_the_gold_scores_every_question_and_the_json_has_the_promised_shape(demo_version, tmp_path):
    result = json.loads(score(write_jsonl(tmp_path / "p.jsonl", demo_gold()), "--json"))
    assert set(result) == {"version", "scorer_version", "overall", "per_database", "per_hardness", "outcomes"}
    assert result["version"] == str(demo_version)
    assert result["overall"]["ea"] == 1.0 and result["overall"]["ea_strict"] == 1.0
    assert result["overall"]["ea_ci95"] == [1.0, 1.0]
    assert result["overall"]["n"] == 23 and result["overall"]["excluded"] == 0
    assert set(result["per_database"]) == {"biblioteca", "ciclismo"}
    assert set(result["per_hardness"]) == {"easy", "medium", "hard", "extra"}
    assert result["outcomes"]["correct"] == 23


def test_missing_and_wrong_predictions_lower_the_score(demo_version, tmp_path):
    gold = demo_gold()
    predictions = dict(list(gold.items())[:10])
    predictions["biblioteca-001"] = "SELECT 42"
    predictions["biblioteca-002"] = "SELEC nonsense"
    result = json.loads(score(write_jsonl(tmp_path / "p.jsonl", predictions), "--json"))
    outcomes = result["outcomes"]
    assert outcomes["correct"] == 8
    assert outcomes["reads_no_table"] == 1  # a hard-coded answer, wrong whatever it returns
    assert outcomes["wrong_result"] == 0
    assert outcomes["syntax_error"] == 1
    assert outcomes["not_submitted"] == 13
    assert result["overall"]["ea"] == pytest.approx(8 / 23)
    lo, hi = result["overall"]["ea_ci95"]
    assert lo <= 8 / 23 <= hi


def test_the_table_reads_like_the_papers_table(demo_version, tmp_path):
    table = score(write_jsonl(tmp_path / "p.jsonl", demo_gold()))
    assert "database" in table and "EA %" in table
    assert any(line.startswith("biblioteca") and "100.00" in line for line in table.splitlines())
    assert any(line.startswith("overall") and "95% CI" in line for line in table.splitlines())


def test_the_authors_folder_layout_is_scored_like_jsonl(demo_version, tmp_path):
    gold = demo_gold()
    for slug in ("biblioteca", "ciclismo"):
        folder = tmp_path / "run" / slug
        folder.mkdir(parents=True)
        lines = [
            f"{' '.join(sql.split())}\t{slug}" for qid, sql in sorted(gold.items()) if qid.startswith(slug)
        ]
        (folder / "predict.txt").write_text("\n".join(lines) + "\n")
    result = json.loads(score(tmp_path / "run", "--json"))
    assert result["overall"]["ea"] == 1.0


def test_sqlite_predictions_are_declared_with_dialect(demo_version, tmp_path):
    result = json.loads(
        score(
            write_jsonl(
                tmp_path / "p.jsonl", {"biblioteca-001": "SELECT COUNT(*) FROM soci WHERE citta = 'Roma'"}
            ),
            "--dialect",
            "sqlite",
            "--json",
        )
    )
    assert result["outcomes"]["correct"] == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{oops", "p.jsonl: line 1: not a JSON object"),
        ('{"question_id": "nope-001", "sql": "SELECT 1"}', "unknown question 'nope-001'"),
        ("", "p.jsonl: the file is empty"),
    ],
)
def test_bad_input_is_one_line_and_a_non_zero_exit(demo_version, tmp_path, content, message):
    path = tmp_path / "p.jsonl"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        score(path)


def test_an_unknown_version_or_file_is_refused(demo_version, tmp_path):
    with pytest.raises(CommandError, match="No benchmark version 'nope'"):
        score(tmp_path / "p.jsonl", "--version", "nope")
    with pytest.raises(CommandError, match="No such file"):
        score(tmp_path / "absent.jsonl")


def test_predictions_nested_too_deeply_are_scored_as_their_own_failures(demo_version, tmp_path):
    deep = {
        "biblioteca-001": "SELECT " + "(" * 900 + "1" + ")" * 900,
        "biblioteca-002": "SELECT " + "NOT " * 3000 + "1",
        "biblioteca-003": "SELECT " + "ABS(" * 3000 + "1" + ")" * 3000,
    }
    predictions = {**demo_gold(), **deep}
    result = json.loads(score(write_jsonl(tmp_path / "p.jsonl", predictions), "--json"))
    assert result["outcomes"]["correct"] == 23 - len(deep)
    assert result["outcomes"]["resource_limit"] + result["outcomes"]["syntax_error"] == len(deep)


def test_questions_adds_each_questions_verdict_to_the_json(demo_version, tmp_path):
    gold = demo_gold()
    first, second, *_ = sorted(gold)
    predictions = {
        **gold,
        first: "SELECT 1 FROM DUAL WHERE 1 == 1",
        second: "SELECT COUNT(*) FROM sedi WHERE 1 = 0",
    }
    result = json.loads(score(write_jsonl(tmp_path / "p.jsonl", predictions), "--json", "--questions"))
    rows = {row["question_id"]: row for row in result["questions"]}
    assert len(rows) == 23
    assert set(rows[first]) == {"question_id", "outcome", "ea", "ea_strict", "ts_ea", "static"}
    assert rows[first] == {
        "question_id": first,
        "outcome": "syntax_error",
        "ea": False,
        "ea_strict": False,
        "ts_ea": False,
        "static": True,
    }
    assert rows[second]["outcome"] == "wrong_result" and rows[second]["static"] is False
    assert sum(row["ea"] for row in rows.values()) == 21
    assert sum(row["ts_ea"] for row in rows.values()) == 21  # the gold itself is right on every neighbour


def test_questions_needs_json(demo_version, tmp_path):
    with pytest.raises(CommandError, match="--json"):
        score(write_jsonl(tmp_path / "p.jsonl", demo_gold()), "--questions")


def test_it_runs_no_system_check_even_from_the_command_line(demo_version, tmp_path, monkeypatch):
    """Django's checks would import the whole site to check its URLs (every view, the API, the charts):
    a third of the command's time, for nothing scoring uses (benchmarks/score_command.py)."""

    def run_checks(*args, **kwargs):
        raise AssertionError("the system checks ran")

    monkeypatch.setattr(checks, "run_checks", run_checks)
    command = load_command_class("evaluation", "score")
    # The options as the command line gives them (call_command would skip the checks anyway).
    argv = [str(write_jsonl(tmp_path / "p.jsonl", demo_gold()))]
    options = vars(command.create_parser("manage.py", "score").parse_args(argv))
    out = StringIO()
    command.execute(**{**options, "stdout": out})
    assert "overall" in out.getvalue()


# The apps a store-only command runs without, and what they import (the admin: every app's admin module;
# django-rq: redis and rq; django-ninja: pydantic; the pages' CSP: its checks; static files: whitenoise).
OTHER_APPS_MODULES = (
    "leaderboard",
    "django.contrib.admin",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django_rq",
    "rq",
    "redis",
    "ninja",
    "pydantic",
    "csp.checks",
    "whitenoise",
)
# `manage.py score --help`, printing, once it has exited, the names of the modules it imported.
RUN_AND_LIST_MODULES = """
import atexit, runpy, sys

atexit.register(lambda: print("imported:", *sorted(sys.modules)))
sys.argv = ["manage.py", "score", "--help"]
runpy.run_path("manage.py", run_name="__main__")
"""


@pytest.mark.processes
def test_its_process_starts_with_the_stores_apps_alone(tmp_path):
    """The others (the admin, the queue, the API, the leaderboard) were most of what the command waited for
    before its own code ran (benchmarks/score_command.py); the store's apps and the scorer are all it
    needs."""
    require_process_lane("manage.py")
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST_MODULES],
        cwd=ROOT,
        env=embedded_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    help_text, imported_line = done.stdout.split("imported:")
    imported = set(imported_line.split())
    assert "predictions" in help_text
    assert {"evaluation.models", "termite_site.accounts.models", "evaluation.grading"} <= imported
    others = {
        module
        for module in imported
        if any(module == name or module.startswith(f"{name}.") for name in OTHER_APPS_MODULES)
        or module.endswith(".admin")
    }
    assert others == set()
