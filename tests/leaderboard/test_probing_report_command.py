"""`manage.py probing_report`: the probing page's findings for staff and cron, as text or JSON."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.leaderboard.scored import QUESTION_IDS, outcome_lines, scored_fields

pytestmark = pytest.mark.django_db


def real_file() -> dict[str, str]:
    return {qid: f"SELECT titolo FROM libri WHERE id = {n}" for n, qid in enumerate(QUESTION_IDS)}


@pytest.fixture
def probed(make_submission, other_user):
    first = make_submission(predictions=real_file(), **scored_fields(10, outcomes=outcome_lines(range(10))))
    second = make_submission(
        predictions={**real_file(), "ciclismo-004": "SELECT nome FROM corridori"},
        **scored_fields(10, outcomes=outcome_lines(range(10))),
    )
    trivial = make_submission(user=other_user, predictions={qid: "SELECT 'Roma'" for qid in QUESTION_IDS})
    return first, second, trivial


def run(*args: str) -> str:
    out = StringIO()
    call_command("probing_report", *args, stdout=out)
    return out.getvalue()


def test_it_prints_each_account_with_its_findings(demo_version, probed):
    first, second, trivial = probed
    printed = run("--version", demo_version.label)
    assert printed.startswith(f"{demo_version}: 3 uploads from 2 accounts; 2 with findings")
    assert f"edit #{second.pk} (" in printed and f"of #{first.pk} (" in printed
    assert "chain 1: ciclismo-004; EA 0.435 -> 0.435" in printed
    assert f"mostly trivial #{trivial.pk}: 23 of 23 (100%): reads_no_table 23; EA -" in printed
    assert "SELECT" not in printed  # the SQL is in the JSON only


def test_as_json_it_prints_the_whole_report_sql_included(demo_version, probed, owner, other_user):
    first, second, trivial = probed
    report = json.loads(run("--version", demo_version.label, "--json"))
    assert report["version"] == demo_version.label and report["thresholds"]["max_changed"] == 5
    assert [account["username"] for account in report["accounts"]] == [owner.username, other_user.username]
    [edit] = report["accounts"][0]["edits"]
    assert (edit["earlier"], edit["later"], edit["chain"]) == (first.pk, second.pk, 1)
    assert edit["changes"] == [
        {
            "question_id": "ciclismo-004",
            "before": real_file()["ciclismo-004"],
            "after": "SELECT nome FROM corridori",
            "outcome_before": "wrong_result",
            "outcome_after": "wrong_result",
        }
    ]
    [found] = report["accounts"][1]["trivial"]
    assert (found["submission"], found["share"], found["counts"]["reads_no_table"]) == (trivial.pk, 1.0, 23)
    assert found["examples"] == [
        {"question_id": "biblioteca-001", "kind": "reads_no_table", "sql": "SELECT 'Roma'"}
    ]


def test_a_version_without_findings_prints_none(demo_version):
    assert run("--version", demo_version.label).startswith(
        f"{demo_version}: 0 uploads from 0 accounts; 0 with"
    )
    assert json.loads(run("--version", demo_version.label, "--json"))["accounts"] == []


def test_an_unknown_version_is_a_clear_error(db):
    with pytest.raises(CommandError, match="No benchmark version 'nessuna'"):
        run("--version", "nessuna")
