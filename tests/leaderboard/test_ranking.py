"""The ranking of a version: who is in it, in which order, and which ranks are shared."""

from __future__ import annotations

import contextlib
import itertools
import random
from datetime import date, timedelta

import pytest
import threadpoolctl
from django.utils import timezone

from evaluation.scoring import significance
from evaluation.scoring.score import SCORER_VERSION
from evaluation.scoring.significance import Pairs, holm_threshold, mcnemar_p, paired_ranks
from leaderboard.feedback import public_ea_verdicts
from leaderboard.ranking import (
    Row,
    baseline_overall,
    build_leaderboard,
    filter_rows,
    parameters,
    sort_rows,
)
from leaderboard.services import submission_score
from tests.factories import baseline_make
from tests.leaderboard.scored import scored_fields

pytestmark = pytest.mark.django_db


def row(ea: float, ci: tuple[float, float] | None = None, **fields) -> Row:
    values = {
        "submission_id": 1,
        "model_name": "m",
        "team": "",
        "date": date(2026, 1, 1),
        "ea": ea,
        "ea_strict": ea,
        "ea_ci95": ci,
        "per_database": {},
        "per_hardness": {},
        "spider_ea": None,
    }
    return Row(**{**values, **fields})


def blocks(**sizes: int) -> dict[str, dict[str, bool]]:
    """The EA verdicts of systems A, B and C on consecutive blocks of questions: `sizes` gives how many
    questions fall in each pattern, named by who is right there ("ab": A and B, not C; "none": nobody)."""
    systems: dict[str, dict[str, bool]] = {"A": {}, "B": {}, "C": {}}
    number = 0
    for pattern, size in sizes.items():
        for _ in range(size):
            for name, found in systems.items():
                found[f"q{number:03d}"] = name.lower() in pattern
            number += 1
    return systems


def test_a_rank_counts_the_rows_shown_better_by_the_paired_test_after_holms_correction():
    """The metrics page's example, on 200 questions: A against C, 30 and 10 questions right alone,
    p = 0.0022, significant (below 0.05 / 3); A against B, 25 and 12, p = 0.047, not below 0.05 / 2: the
    procedure stops there; B against C, 14 and 7, p = 0.19."""
    systems = blocks(abc=100, a=23, ac=2, b=7, bc=5, ab=7, c=5, none=51)
    pairs = {
        (x, y): Pairs.of((systems[x][q], systems[y][q]) for q in systems[x])
        for x, y in (("A", "B"), ("A", "C"), ("B", "C"))
    }
    assert {key: (p.only_a, p.only_b) for key, p in pairs.items()} == {
        ("A", "B"): (25, 12),
        ("A", "C"): (30, 10),
        ("B", "C"): (14, 7),
    }
    rule = paired_ranks(systems)
    assert rule.comparisons == 3 and rule.threshold == pytest.approx(0.047, abs=0.0005)
    assert rule.better == {"A": (), "B": (), "C": ("A",)}
    assert rule.ranks == {"A": 1, "B": 1, "C": 2}
    # Without the correction, A against B (p < 0.05) would have made B rank 2.
    assert mcnemar_p(25, 12) < 0.05


def test_holms_threshold_is_the_first_p_value_not_below_its_share_of_the_level():
    assert holm_threshold([0.001, 0.02, 0.03]) == 1.0  # below 0.05/3, 0.05/2 and 0.05: all significant
    assert holm_threshold([0.001, 0.03, 0.04]) == 0.03  # 0.03 is not below 0.05 / 2: it and 0.04 are not
    assert holm_threshold([0.02, 0.03]) == 1.0  # 0.02 < 0.05 / 2, then 0.03 < 0.05 / 1
    assert holm_threshold([0.03, 0.04]) == 0.03  # 0.03 is not below 0.05 / 2: neither is significant
    assert holm_threshold([]) == 1.0


def rank_rule_pair_by_pair(verdicts: dict[int, dict[str, bool]]) -> tuple[dict, float]:
    """The rank rule as its definition reads: McNemar on each pair's common questions, Holm over all."""
    tests = []
    for a, b in itertools.combinations(verdicts, 2):
        pairs = Pairs.of((verdicts[a][q], verdicts[b][q]) for q in verdicts[a].keys() & verdicts[b].keys())
        winner, loser = (a, b) if pairs.only_a >= pairs.only_b else (b, a)
        tests.append((mcnemar_p(pairs.only_a, pairs.only_b), winner, loser))
    threshold = holm_threshold(sorted(p for p, _, _ in tests))
    better: dict[int, list[int]] = {key: [] for key in verdicts}
    for p, winner, loser in tests:
        if p < threshold:
            better[loser].append(winner)
    return {key: tuple(sorted(found)) for key, found in better.items()}, threshold


@pytest.mark.parametrize("seed", range(6))
def test_the_rank_rule_counted_as_matrices_agrees_with_its_definition_pair_by_pair(seed):
    """Systems of every strength on 60 questions, some not scored for every system (a question added
    later), many pairs with equal counts: the rule gives what testing each pair on its own gives."""
    rng = random.Random(seed)
    questions = [f"q{n:02d}" for n in range(60)]
    verdicts = {
        system: {q: rng.random() < strength for q in questions if q < "q50" or rng.random() < 0.5}
        for system, strength in enumerate(rng.choice((0.1, 0.4, 0.6, 0.95)) for _ in range(40))
    }
    rule = paired_ranks(verdicts)
    better, threshold = rank_rule_pair_by_pair(verdicts)
    assert (rule.better, rule.threshold, rule.comparisons) == (better, threshold, 40 * 39 // 2)
    assert rule.ranks == {key: 1 + len(found) for key, found in better.items()}
    assert any(rule.better.values()), "the boards must have significant pairs for the check to tell"


def test_the_rank_rules_matrix_products_run_on_one_blas_thread(monkeypatch):
    """OpenBLAS's own threads would spin on the other core after each product, taking it from the requests
    a web process serves meanwhile: the rule's products run in the calling thread alone."""
    threads_seen = []
    limit = significance.blas_threads().limit

    @contextlib.contextmanager
    def observed_limit(**limits):
        with limit(**limits):
            threads_seen.extend(
                library["num_threads"]
                for library in threadpoolctl.threadpool_info()
                if library["user_api"] == "blas"
            )
            yield

    monkeypatch.setattr(significance.blas_threads(), "limit", observed_limit)
    rng = random.Random(1)
    paired_ranks({system: {f"q{n}": rng.random() < 0.5 for n in range(30)} for system in range(50)})
    assert threads_seen and set(threads_seen) == {1}


def test_baselines_and_rows_without_verdicts_take_no_rank_and_rows_follow_their_rank_then_ea(
    make_submission, demo_version
):
    stronger = make_submission(model_name="Forte", **scored_fields(23))
    weaker = make_submission(model_name="Debole", **scored_fields(3))
    unverdicted = make_submission(model_name="Vecchio", **scored_fields(20, outcomes=[]))
    baseline_make(version=demo_version, ea=0.5, per_database={})
    rows = build_leaderboard(version=demo_version).rows
    assert [(r.model_name, r.rank, r.significantly_better) for r in rows] == [
        ("Forte", 1, ()),
        ("Riferimento", None, ()),
        ("Debole", 2, (stronger.pk,)),
        ("Vecchio", None, ()),
    ]
    assert weaker.pk and unverdicted.pk


def test_the_ranking_holds_public_scored_live_submissions_best_first(make_submission, other_user):
    best = make_submission(model_name="Primo", **scored_fields(20))
    second = make_submission(model_name="Secondo", **scored_fields(15))
    third = make_submission(model_name="Terzo", user=other_user, **scored_fields(14))
    last = make_submission(model_name="Ultimo", **scored_fields(5))
    make_submission(model_name="Privato", **{**scored_fields(23), "is_public": False})
    make_submission(model_name="Nascosto", is_hidden=True, **scored_fields(23))
    make_submission(model_name="Ritirato", withdrawn_at=timezone.now(), **scored_fields(23))
    make_submission(model_name="In coda", is_public=True)
    make_submission(model_name="Fallito", is_public=True, status="failed")

    rows = build_leaderboard(version=best.version).rows

    assert [r.submission_id for r in rows] == [best.pk, second.pk, third.pk, last.pk]
    # Right on the first 20, 15, 14 and 5 questions: of the six pairs, Holm's correction keeps the three
    # against the last (p = 0.00006, 0.002, 0.004); 20 against 14 (p = 0.031) is not below 0.05 / 3.
    assert [r.rank for r in rows] == [1, 1, 1, 4]
    assert rows[3].significantly_better == (best.pk, second.pk, third.pk)


def test_equal_ea_is_ordered_by_ea_strict_then_by_the_earlier_submission(make_submission):
    now = timezone.now()
    later = make_submission(model_name="Dopo", created_at=now, **scored_fields(15, strict=14))
    earlier = make_submission(
        model_name="Prima", created_at=now - timedelta(days=1), **scored_fields(15, strict=14)
    )
    stricter = make_submission(model_name="Più severo", created_at=now, **scored_fields(15, strict=15))
    rows = build_leaderboard(version=later.version).rows
    assert [r.submission_id for r in rows] == [stricter.pk, earlier.pk, later.pk]
    assert [r.rank for r in rows] == [1, 1, 1]


def test_a_row_carries_ci_per_database_per_hardness_spider_and_model_card(make_submission, make_team):
    submission = make_submission(
        model_name="Modello",
        team=make_team("Gruppo"),
        model_size="7B",
        weights="open",
        approach="fine-tuning",
        spider_dev_ea=80.5,
        **scored_fields(14, strict=13),
    )
    (only,) = build_leaderboard(version=submission.version).rows
    assert only.ea == pytest.approx(14 / 23) and only.ea_strict == pytest.approx(13 / 23)
    assert only.ea_ci95 == tuple(submission.scores["overall"]["ea_ci95"])
    assert only.per_database == {"biblioteca": 1.0, "ciclismo": pytest.approx(2 / 11)}
    assert only.per_hardness == {"easy": 1.0, "medium": 1.0, "hard": pytest.approx(1 / 6), "extra": 0.0}
    assert only.spider_ea == 0.805 and only.spider_gap == pytest.approx(0.805 - 14 / 23, abs=1e-6)
    assert (only.model_size, only.weights, only.approach, only.baseline) == (
        "7B",
        "open",
        "fine-tuning",
        False,
    )
    assert only.date == submission.created_at.date()
    assert (only.team, only.team_slug) == ("Gruppo", "gruppo")


def test_a_row_carries_the_scorer_version_of_its_scores_and_flags_an_older_one(make_submission):
    old = make_submission(model_name="Vecchio", scorer_version=SCORER_VERSION, **scored_fields(14))
    new = make_submission(model_name="Nuovo", **scored_fields(10, scorer_version=SCORER_VERSION))
    rows = {row.model_name: row for row in build_leaderboard(version=old.version).rows}
    # The version is the one in the scores, not the one the upload was received under.
    assert (rows["Vecchio"].scorer_version, rows["Vecchio"].scored_by_older_scorer) == ("1.0.0", True)
    assert (rows["Nuovo"].scorer_version, rows["Nuovo"].scored_by_older_scorer) == (SCORER_VERSION, False)
    assert new.pk


@pytest.fixture
def scored_by_the_scorer(make_submission, gold):
    """A public submission scored by the real scorer: the gold, but a wrong result for ciclismo-002."""
    predictions = dict(gold)
    predictions["ciclismo-002"] = "SELECT 42"
    submission = make_submission(predictions=predictions, is_public=True)
    submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    return submission


def test_a_row_scored_by_the_real_scorer_reads_the_same(scored_by_the_scorer):
    submission = scored_by_the_scorer
    (only,) = build_leaderboard(version=submission.version).rows
    assert only.ea == submission.ea == pytest.approx(22 / 23)
    assert only.per_database["biblioteca"] == 1.0
    assert only.per_database["ciclismo"] == pytest.approx(10 / 11)
    assert only.rank == 1
    assert only.scorer_version == SCORER_VERSION and not only.scored_by_older_scorer
    # The demo benchmark has no test suites: each question's TS-EA is its EA.
    assert only.ts_ea == only.ea and only.ts_ea_ci95 == only.ea_ci95


def test_scoring_keeps_each_questions_ea_verdict_beside_its_lines_for_the_rank_rule(scored_by_the_scorer):
    submission = scored_by_the_scorer
    assert submission.ea_verdicts == public_ea_verdicts(submission.outcomes)
    assert len(submission.ea_verdicts) == 23 and submission.ea_verdicts["ciclismo-002"] is False
    assert sum(submission.ea_verdicts.values()) == 22


def test_a_row_carries_ts_ea_and_its_interval_and_none_where_they_are_unknown(make_submission, demo_version):
    current = make_submission(model_name="Nuovo", **scored_fields(20, ts=16))
    make_submission(model_name="Vecchio", **scored_fields(15))
    baseline_make(version=demo_version, per_database={"biblioteca": 0.5})
    rows = {r.model_name: r for r in build_leaderboard(version=demo_version).rows}
    assert rows["Nuovo"].ts_ea == pytest.approx(16 / 23)
    assert rows["Nuovo"].ts_ea_ci95 == tuple(current.scores["overall"]["ts_ea_ci95"])
    # Scores made before scorer 1.3.0, and baselines: unknown, neither 0 nor their EA.
    for name in ("Vecchio", "Riferimento"):
        assert (rows[name].ts_ea, rows[name].ts_ea_ci95) == (None, None)


def test_a_group_without_scored_questions_has_no_ea(make_submission):
    fields = scored_fields(10)
    fields["scores"]["per_hardness"]["extra"] = {"ea": 0.0, "ea_strict": 0.0, "n": 0}
    submission = make_submission(**fields)
    (only,) = build_leaderboard(version=submission.version).rows
    assert only.per_hardness["extra"] is None


def test_a_baseline_sits_unranked_below_the_rows_with_at_least_its_ea(make_submission, demo_version):
    above = make_submission(model_name="Sopra", **scored_fields(15))
    below = make_submission(model_name="Sotto", **scored_fields(5))
    baseline_make(version=demo_version)
    rows = build_leaderboard(version=demo_version).rows
    assert [(r.model_name, r.rank, r.baseline) for r in rows] == [
        ("Sopra", 1, False),
        ("Riferimento", None, True),
        ("Sotto", 2, False),
    ]
    baseline = rows[1]
    # Left blank, the overall EA is the mean weighted by questions: (12 * 0.5 + 11 * 0.25) / 23.
    assert baseline.ea == pytest.approx((12 * 0.5 + 11 * 0.25) / 23, abs=1e-6)
    assert baseline.per_database == {"biblioteca": 0.5, "ciclismo": 0.25}
    assert baseline.submission_id is None and baseline.ea_ci95 is None and baseline.ea_strict is None
    assert baseline.scorer_version is None and not baseline.scored_by_older_scorer
    assert above.pk and below.pk


def test_a_baseline_with_an_overall_ea_keeps_it(demo_version):
    baseline_make(version=demo_version, per_database={"biblioteca": 0.5}, ea=0.42)
    (only,) = build_leaderboard(version=demo_version).rows
    assert only.ea == 0.42 and only.per_database == {"biblioteca": 0.5, "ciclismo": None}


def test_the_weighted_mean_uses_question_counts_and_falls_back_to_the_plain_mean():
    assert baseline_overall({"a": 1.0, "b": 0.0}, {"a": 3, "b": 1}) == 0.75
    assert baseline_overall({"a": 1.0, "b": 0.0}, {}) == 0.5


def test_the_ranking_reads_in_three_queries(make_submission, demo_version, django_assert_num_queries):
    """The databases, the rows with their verdicts per question (for the rank rule), the baselines."""
    for correct in (3, 9, 15):
        make_submission(**scored_fields(correct))
    with django_assert_num_queries(3):
        build_leaderboard(version=demo_version)


def test_another_versions_submissions_stay_out(make_submission, demo_version):
    from evaluation.services import version_create_draft

    other = version_create_draft(label="altra-1.0", name="Altra")
    make_submission(version=other, **scored_fields(20))
    assert build_leaderboard(version=demo_version).rows == []


# Filtering and sorting, in Python on the rows.

ROWS = [
    row(
        0.9,
        submission_id=1,
        model_name="Alfa-7B",
        team="Torino",
        team_slug="torino",
        model_size="7B",
        weights="open",
        ts_ea=0.5,
    ),
    row(
        0.7,
        submission_id=2,
        model_name="Beta",
        team="Milano",
        team_slug="milano",
        model_size="70 b",
        approach="fine-tuning",
        ts_ea=0.6,
    ),
    row(0.6, submission_id=3, model_name="Gamma", model_size="", spider_ea=0.8, ea_strict=None),
    row(
        0.5,
        submission_id=4,
        model_name="Delta",
        team="Torino",
        team_slug="torino",
        model_size="1.5B",
        spider_ea=0.55,
        ts_ea=0.3,
    ),
]


def ids(rows) -> list[int]:
    return [r.submission_id for r in rows]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({}, [1, 2, 3, 4]),
        ({"q": "torino"}, [1, 4]),
        ({"q": "ALFA"}, [1]),
        ({"q": "torino delta"}, [4]),
        ({"q": "nessuno"}, []),
        ({"weights": "open"}, [1]),
        ({"approach": "fine-tuning"}, [2]),
        ({"size": "70B"}, [2]),
        ({"size": "7b"}, [1]),
        ({"q": "torino", "size": "1.5B"}, [4]),
        ({"team": "torino"}, [1, 4]),
        ({"team": "milano", "q": "beta"}, [2]),
        ({"team": "nessuna"}, []),
    ],
)
def test_filters(filters, expected):
    assert ids(filter_rows(ROWS, **filters)) == expected


@pytest.mark.parametrize(
    ("key", "descending", "expected"),
    [
        ("rank", False, [1, 2, 3, 4]),
        ("rank", True, [4, 3, 2, 1]),
        ("ea", False, [4, 3, 2, 1]),
        ("model_name", False, [1, 2, 4, 3]),
        ("team", False, [2, 1, 4, 3]),  # no team comes last
        ("team", True, [1, 4, 2, 3]),  # equal teams keep the ranking order; still last
        ("model_size", True, [2, 1, 4, 3]),
        ("spider_ea", True, [3, 4, 1, 2]),
        ("spider_gap", True, [3, 4, 1, 2]),
        ("ea_strict", False, [4, 2, 1, 3]),
        ("ts_ea", True, [2, 1, 4, 3]),  # Gamma has no TS-EA: last, whichever the order
        ("ts_ea", False, [4, 1, 2, 3]),
    ],
)
def test_sorting_by_a_column_puts_missing_values_last(key, descending, expected):
    assert ids(sort_rows(ROWS, key=key, descending=descending)) == expected


def test_sorting_by_a_database_or_hardness_column():
    rows = [
        row(0.9, submission_id=1, per_database={"x": 0.2}, per_hardness={"easy": None}),
        row(0.8, submission_id=2, per_database={"x": 0.6}, per_hardness={"easy": 0.5}),
    ]
    assert ids(sort_rows(rows, key="db_x", descending=True)) == [2, 1]
    assert ids(sort_rows(rows, key="hardness_easy")) == [2, 1]


@pytest.mark.parametrize(
    ("size", "count"),
    [("7B", 7e9), ("70 b", 7e10), ("1.5B", 1.5e9), ("350M", 3.5e8), ("8x7B", None), ("", None)],
)
def test_sizes_read_as_parameter_counts(size, count):
    assert parameters(size) == count
