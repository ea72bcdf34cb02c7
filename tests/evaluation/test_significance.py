"""Significance of a difference between two systems: McNemar's exact test and a paired bootstrap interval
of the EA difference, both from the 2 x 2 table of verdicts on the same questions."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from evaluation.scoring.metrics import percentile_interval
from evaluation.scoring.significance import (
    PAIRED_RESAMPLES,
    Pairs,
    mcnemar_p,
    paired_bootstrap_ci,
    paired_test,
)


def table(both: int, only_a: int, only_b: int, neither: int) -> Pairs:
    return Pairs(both=both, only_a=only_a, only_b=only_b, neither=neither)


def test_the_table_counts_each_pair_of_verdicts():
    verdicts = [(True, True)] * 3 + [(True, False)] * 2 + [(False, True)] + [(False, False)] * 4
    pairs = Pairs.of(verdicts)
    assert pairs == table(3, 2, 1, 4)
    assert pairs.n == 10 and pairs.difference == pytest.approx(0.1)
    assert Pairs.of([]) == table(0, 0, 0, 0) and Pairs.of([]).difference == 0.0
    with pytest.raises(ValueError, match="negative"):
        table(1, -1, 0, 0)


@pytest.mark.parametrize(
    ("only_a", "only_b", "expected"),
    [
        (10, 2, Fraction(2 * (1 + 12 + 66), 2**12)),  # 0.0386: the textbook case
        (2, 10, Fraction(2 * 79, 2**12)),  # two-sided: symmetric
        (0, 5, Fraction(2, 2**5)),  # 0.0625: five differences all one way are not enough at 5%
        (0, 6, Fraction(2, 2**6)),  # 0.03125: six are
        (1, 9, Fraction(2 * (1 + 10), 2**10)),  # 0.0215
        (3, 4, Fraction(1)),
        (7, 7, Fraction(1)),  # b = c: no evidence either way
        (0, 0, Fraction(1)),  # the verdicts never differ
        (1, 0, Fraction(1)),
    ],
)
def test_mcnemars_exact_p_value_matches_known_values(only_a, only_b, expected):
    assert mcnemar_p(only_a, only_b) == pytest.approx(float(expected), rel=1e-12)


def test_the_p_value_of_the_textbook_case_is_0_0386():
    assert round(mcnemar_p(10, 2), 4) == 0.0386


def test_the_p_value_stays_exact_far_into_the_tail():
    # 2 ** -199 underflows nothing: the tail is summed in integers before one division.
    assert mcnemar_p(0, 198) == pytest.approx(2.0**-197, rel=1e-12)
    assert mcnemar_p(99, 99) == 1.0
    with pytest.raises(ValueError):
        mcnemar_p(-1, 3)


@pytest.mark.parametrize(
    "pairs",
    [table(100, 10, 2, 86), table(150, 20, 5, 23), table(10, 1, 1, 10), table(40, 0, 9, 149)],
)
def test_the_interval_contains_the_observed_difference(pairs):
    low, high = paired_bootstrap_ci(pairs)
    assert low <= pairs.difference <= high
    assert -1 <= low <= high <= 1


def test_the_interval_is_the_same_every_time_and_changes_with_the_seed():
    pairs = table(100, 10, 2, 86)
    assert paired_bootstrap_ci(pairs) == paired_bootstrap_ci(pairs)
    assert paired_bootstrap_ci(pairs, seed=7) != paired_bootstrap_ci(pairs)


def test_the_interval_narrows_with_more_questions():
    widths = []
    for scale in (1, 4, 16):
        low, high = paired_bootstrap_ci(table(50 * scale, 10 * scale, 5 * scale, 35 * scale))
        widths.append(high - low)
    assert widths[0] > widths[1] > widths[2] > 0
    assert widths[0] / widths[2] == pytest.approx(4, rel=0.2)  # as 1 / sqrt(n)


def test_without_differences_the_interval_is_the_single_point_zero():
    assert paired_bootstrap_ci(table(30, 0, 0, 20)) == (0.0, 0.0)
    assert paired_bootstrap_ci(table(0, 0, 0, 0)) == (0.0, 0.0)
    assert paired_bootstrap_ci(table(0, 4, 0, 0)) == (1.0, 1.0)  # A alone right on every question


def test_drawing_from_the_counts_is_the_bootstrap_that_resamples_questions():
    """The shortcut against the textbook bootstrap (resample n questions, recount): the same percentiles
    within a question's worth of difference."""
    pairs = table(120, 25, 12, 41)
    questions = [(1, 1)] * 120 + [(1, 0)] * 25 + [(0, 1)] * 12 + [(0, 0)] * 41
    rng = random.Random(1)
    n = len(questions)
    differences = []
    for _ in range(PAIRED_RESAMPLES):
        sample = rng.choices(questions, k=n)
        differences.append(sum(a - b for a, b in sample) / n)
    textbook = percentile_interval(differences, level=0.95)
    shortcut = paired_bootstrap_ci(pairs)
    assert shortcut[0] == pytest.approx(textbook[0], abs=1.5 / n)
    assert shortcut[1] == pytest.approx(textbook[1], abs=1.5 / n)


def test_the_test_reports_the_table_and_says_whether_the_difference_is_significant():
    result = paired_test(table(100, 10, 2, 86))
    assert result.significant and result.mcnemar_p == pytest.approx(0.03857, abs=1e-5)
    assert result.as_dict() == {
        "n": 198,
        "ea_a": pytest.approx(110 / 198),
        "ea_b": pytest.approx(102 / 198),
        "difference": pytest.approx(8 / 198),
        "difference_ci95": list(result.difference_ci95),
        "mcnemar_p": result.mcnemar_p,
        "right_only_a": 10,
        "right_only_b": 2,
    }
    assert not paired_test(table(100, 5, 5, 88)).significant
    assert paired_test(table(0, 0, 0, 0)).as_dict()["ea_a"] == 0.0
