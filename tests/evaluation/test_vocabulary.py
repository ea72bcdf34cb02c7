"""The shared vocabulary (evaluation/scoring/vocabulary.py): one declaration that the models, the scorer
and the pages all read."""

from __future__ import annotations

from evaluation.models import Database, Dialect, Hardness, Question
from evaluation.scoring.hardness import hardness
from evaluation.scoring.vocabulary import (
    DECIDED_BY_THE_FILE,
    DIALECTS,
    HARDNESS_LEVELS,
    OUTCOMES,
    STATIC_OUTCOMES,
)
from leaderboard.models import Submission


def test_the_model_choices_are_built_from_the_vocabulary():
    assert Hardness.values == list(HARDNESS_LEVELS)
    assert Dialect.values == list(DIALECTS)
    assert Question._meta.get_field("hardness").choices == Hardness.choices
    assert Database._meta.get_field("source_dialect").choices == Dialect.choices
    assert Submission._meta.get_field("dialect").choices == Dialect.choices


def test_the_labels_pages_show_are_kept():
    assert [str(label) for label in Hardness.labels] == ["easy", "medium", "hard", "extra hard"]
    assert Dialect.choices == [("mysql", "MySQL"), ("sqlite", "SQLite")]


def test_hardness_speaks_the_vocabulary():
    assert hardness("SELECT nome FROM soci") in HARDNESS_LEVELS


def test_what_a_static_check_decides_is_a_subset_of_the_outcomes():
    assert set(DECIDED_BY_THE_FILE) <= set(STATIC_OUTCOMES) <= set(OUTCOMES)
    assert "correct" not in STATIC_OUTCOMES and "timeout" not in STATIC_OUTCOMES
