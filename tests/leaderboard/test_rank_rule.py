"""Ranks that mean what they say (issue 30): on a board of 34 rows with planted differences, for every pair
of rows, the ranks agree with the compare page's verdict, which is the API's; and the planted pairs show
why the rule is paired: intervals that overlap while the paired test tells the two apart, and intervals
apart while it cannot."""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse

from evaluation.scoring.metrics import bootstrap_ci
from evaluation.scoring.score import SCORER_VERSION
from leaderboard import feedback, ranking

pytestmark = pytest.mark.django_db

QUESTIONS = [f"q{n:03d}" for n in range(200)]


def verdict_lines(right: set[int]) -> list[dict]:
    """Stored verdicts on the 200 questions, right on those at the positions `right`."""
    return [
        {"question_id": qid, "outcome": "correct" if n in right else "wrong_result", "ea": n in right}
        for n, qid in enumerate(QUESTIONS)
    ]


def scored(make_submission, name: str, right: set[int]):
    """A public row scored on the 200 questions: the EA and its interval its verdicts give."""
    verdicts = [n in right for n in range(len(QUESTIONS))]
    ea = sum(verdicts) / len(verdicts)
    scores = {
        "version": "demo-1.0",
        "scorer_version": SCORER_VERSION,
        "overall": {
            "ea": ea,
            "ea_strict": ea,
            "ea_ci95": list(bootstrap_ci(verdicts)),
            "n": len(verdicts),
            "excluded": 0,
        },
        "per_database": {},
        "per_hardness": {},
        "outcomes": {"correct": sum(verdicts), "wrong_result": len(verdicts) - sum(verdicts)},
    }
    return make_submission(
        model_name=name,
        status="scored",
        is_public=True,
        scores=scores,
        outcomes=verdict_lines(right),
        ea=ea,
        ea_strict=ea,
    )


@pytest.fixture
def board(make_submission):
    """Thirty systems in tiers of accuracy drawn from a fixed seed, and two planted pairs:

    - "Vicino" and "Vicino meno": the same answers but for 16 questions the first alone gets right (EA 60
      and 52): their 95% intervals overlap, yet the paired test tells them apart (p = 0.00003);
    - "Lontano" and "Lontano meno": EA 70 and 56.5, 60 questions right only by the first and 33 only by the
      second: their intervals are apart, yet the paired test cannot tell them apart among so many pairs
      (p = 0.007, far above Holm's threshold)."""
    rng = random.Random(30)
    rows = {}
    for number in range(30):
        share = (0.85, 0.7, 0.55, 0.4, 0.25)[number % 5]
        rows[f"Sistema {number:02d}"] = {n for n in range(200) if rng.random() < share}
    rows["Vicino"] = set(range(120))
    rows["Vicino meno"] = set(range(104))
    rows["Lontano"] = set(range(140))  # both right on 0-79, this one alone on 80-139
    rows["Lontano meno"] = set(range(80)) | set(range(140, 173))
    return {name: scored(make_submission, name, right) for name, right in rows.items()}


def test_every_pair_of_rows_is_judged_by_the_compare_page_as_the_ranks_say(client, board, demo_version):
    rows = {row.submission_id: row for row in ranking.leaderboard_rows(version=demo_version)}
    assert len(rows) == 34 and all(row.rank is not None for row in rows.values())
    submissions = {s.pk: s for s in board.values()}
    significant_pairs = 0
    for a, b in combinations(rows, 2):
        first, second = submissions[a], submissions[b]
        paired = feedback.paired_comparison(
            first, second, AnonymousUser(), rule=ranking.rank_rule_for(first, second)
        )
        better = paired.shown["significantly_better"]
        judged = (better == "a", better == "b")
        ranked = (a in rows[b].significantly_better, b in rows[a].significantly_better)
        assert judged == ranked, (rows[a].model_name, rows[b].model_name)
        significant_pairs += better is not None
    for row in rows.values():
        # The rank counts exactly the rows the compare page calls better.
        assert row.rank == 1 + len(row.significantly_better)
    assert significant_pairs > 100  # the tiers are told apart: the check is not vacuous


def test_the_planted_pairs_show_why_the_rule_is_paired(client, board, demo_version):
    rows = {row.model_name: row for row in ranking.leaderboard_rows(version=demo_version)}
    close, close_less = rows["Vicino"], rows["Vicino meno"]
    assert close_less.ea_ci95[1] > close.ea_ci95[0]  # the intervals overlap
    assert close.submission_id in close_less.significantly_better
    apart, apart_less = rows["Lontano"], rows["Lontano meno"]
    assert apart_less.ea_ci95[1] < apart.ea_ci95[0]  # the intervals are apart
    assert apart.submission_id not in apart_less.significantly_better
    # The API's answer says the same, and names the rule.
    for pair, better in (((close, close_less), "a"), ((apart, apart_less), None)):
        query = {"a": pair[0].submission_id, "b": pair[1].submission_id}
        answer = client.get(reverse("api:compare"), query).json()
        assert answer["significantly_better"] == better and answer["comparisons"] == 34 * 33 // 2
        assert answer["significant"] == (answer["mcnemar_p"] < answer["threshold"])


def test_rows_are_ordered_by_rank_then_by_ea_and_the_exports_explain_each_rank(client, board):
    rows = client.get(reverse("api:leaderboard")).json()
    ranked = [(row["rank"], -row["ea"]) for row in rows["rows"]]
    assert ranked == sorted(ranked)
    assert rows["comparisons"] == 34 * 33 // 2 and "Holm" in rows["rank_rule"]
    for row in rows["rows"]:
        assert row["rank"] == 1 + len(row["significantly_better"])
