"""The template filters that show numbers (leaderboard/templatetags/leaderboard.py)."""

from __future__ import annotations

import pytest

from leaderboard.templatetags.leaderboard import chart_numbers, percent, points


@pytest.mark.parametrize(
    ("score", "shown"),
    [
        (16 / 23, "69.6"),
        (17 / 23, "73.9"),
        (1.0, "100.0"),
        (0.0, "0.0"),
        ("0.5", "50.0"),
        (None, "—"),
        ("", "—"),
    ],
)
def test_a_score_is_shown_as_a_percentage_with_one_decimal(score, shown):
    assert percent(score) == shown


def test_a_difference_is_shown_in_signed_percentage_points():
    assert (points(1 / 23), points(-0.5), points(None)) == ("+4.3", "-50.0", "—")


def test_the_table_under_a_chart_rounds_as_the_pages_do():
    figure = {"data": [{"name": "EA", "x": ["biblioteca", "ciclismo"], "y": [69.57, None]}]}
    assert chart_numbers(figure) == {
        "columns": ["EA"],
        "rows": [("biblioteca", ["69.6"]), ("ciclismo", ["—"])],
    }
