"""Aggregates: EA and EA-strict overall, per database and per hardness, outcome counts, bootstrap CI."""

from __future__ import annotations

import random

import pytest

from evaluation.scoring.metrics import BOOTSTRAP_RESAMPLES, Graded, bootstrap_ci, summarise
from evaluation.scoring.vocabulary import EXCLUDED, HARDNESS_LEVELS, OUTCOMES


def graded(db_id="negozio", hardness="easy", outcome="correct", ea=None, ea_strict=None) -> Graded:
    ea = outcome == "correct" if ea is None else ea
    return Graded(db_id, hardness, outcome, ea, ea if ea_strict is None else ea_strict)


SAMPLE = [
    graded("negozio", "easy", "correct"),
    graded("negozio", "easy", "correct", ea_strict=False),
    graded("negozio", "medium", "wrong_result"),
    graded("negozio", "hard", "syntax_error"),
    graded("scuola", "medium", "correct"),
    graded("scuola", "extra", "timeout"),
    graded("scuola", "extra", "not_submitted"),
    graded("scuola", "hard", EXCLUDED),
    graded("museo", "easy", EXCLUDED),
]


def test_excluded_questions_leave_every_denominator_and_are_counted():
    metrics = summarise(SAMPLE)
    assert metrics.excluded == 2
    assert metrics.overall.n == 7
    assert metrics.overall.ea == pytest.approx(3 / 7)
    assert metrics.overall.ea_strict == pytest.approx(2 / 7)
    assert "museo" not in metrics.per_database
    assert metrics.per_database["scuola"].n == 3
    assert metrics.per_hardness["hard"].n == 1


def test_per_database_and_per_hardness_add_up_to_the_overall():
    metrics = summarise(SAMPLE)
    for groups in (metrics.per_database, metrics.per_hardness):
        assert sum(a.n for a in groups.values()) == metrics.overall.n
        assert sum(a.ea * a.n for a in groups.values()) == pytest.approx(
            metrics.overall.ea * metrics.overall.n
        )


def test_per_database_values():
    metrics = summarise(SAMPLE)
    assert metrics.per_database["negozio"].as_dict() == {"ea": 0.5, "ea_strict": 0.25, "ts_ea": 0.0, "n": 4}
    assert list(metrics.per_database) == ["negozio", "scuola"]


def test_every_hardness_level_is_reported_even_when_empty():
    metrics = summarise([graded(hardness="medium")])
    assert list(metrics.per_hardness) == list(HARDNESS_LEVELS)
    assert metrics.per_hardness["easy"].as_dict() == {"ea": 0.0, "ea_strict": 0.0, "ts_ea": 0.0, "n": 0}


def test_an_unknown_hardness_label_gets_its_own_group():
    metrics = summarise([graded(hardness="unknown")])
    assert metrics.per_hardness["unknown"].n == 1


def test_outcomes_count_every_outcome_but_not_the_excluded():
    counts = summarise(SAMPLE).outcomes
    assert list(counts) == list(OUTCOMES)
    assert counts["correct"] == 3 and counts["resource_limit"] == 0
    assert sum(counts.values()) == 7


def test_it_refuses_an_unknown_outcome():
    with pytest.raises(ValueError):
        summarise([graded(outcome="maybe")])


def test_nothing_to_score_gives_zeros():
    metrics = summarise([graded(outcome=EXCLUDED)])
    assert (metrics.overall.n, metrics.overall.ea, metrics.ea_ci95) == (0, 0.0, (0.0, 0.0))


def test_all_correct_gives_a_degenerate_interval_at_one():
    assert bootstrap_ci([True] * 50) == (1.0, 1.0)
    assert bootstrap_ci([False] * 50) == (0.0, 0.0)


@pytest.mark.parametrize(("correct", "n"), [(1, 1), (1, 2), (1, 100), (101, 202), (150, 202), (201, 202)])
def test_the_interval_holds_the_estimate(correct, n):
    lo, hi = bootstrap_ci([True] * correct + [False] * (n - correct))
    assert 0.0 <= lo <= correct / n <= hi <= 1.0


def test_the_interval_is_about_as_wide_as_the_normal_approximation():
    lo, hi = bootstrap_ci([True] * 101 + [False] * 101)
    assert hi - lo == pytest.approx(2 * 1.96 * (0.25 / 202) ** 0.5, rel=0.15)


def test_the_interval_is_reproducible_and_independent_of_order():
    successes = [True, False, True, True, False] * 40
    assert bootstrap_ci(successes) == bootstrap_ci(successes)
    assert bootstrap_ci(successes) == bootstrap_ci(sorted(successes))


def test_the_interval_of_a_full_benchmark_draws_one_number_per_resample_not_one_per_answer(monkeypatch):
    """What keeps it fast (`python -m benchmarks.kernel_speed` times it): each resample's mean is drawn
    from its binomial distribution at once."""
    draws = []
    random_number = random.Random.random

    def counted(self):
        draws.append(1)
        return random_number(self)

    monkeypatch.setattr(random.Random, "random", counted)
    bootstrap_ci([True, False] * 101)
    assert len(draws) == BOOTSTRAP_RESAMPLES
