"""The model card (leaderboard/model_card.py): submissions and baselines describe a system with the same
fields, labels and choices."""

from __future__ import annotations

import pytest

from leaderboard.model_card import Approach, ModelCard, Weights
from leaderboard.models import Baseline, Submission
from termite_site.accounts.models import Team

SHARED = [field.name for field in ModelCard._meta.get_fields()]


def test_the_shared_fields_are_the_model_card_of_both():
    assert SHARED == ["model_name", "model_size", "weights", "approach", "spider_dev_ea"]
    assert set(SHARED) <= set(Submission.MODEL_CARD_FIELDS)


def test_a_submissions_team_is_one_of_the_portal_and_a_baselines_the_papers_authors():
    assert Submission._meta.get_field("team").related_model is Team
    assert "team" not in Submission.MODEL_CARD_FIELDS  # who submitted, checked apart
    assert Baseline._meta.get_field("team").get_internal_type() == "CharField"


@pytest.mark.parametrize("name", SHARED)
def test_a_submission_and_a_baseline_label_each_shared_field_alike(name):
    on_submission, on_baseline = Submission._meta.get_field(name), Baseline._meta.get_field(name)
    assert str(on_submission.verbose_name) == str(on_baseline.verbose_name)
    assert str(on_submission.help_text) == str(on_baseline.help_text)
    assert on_submission.choices == on_baseline.choices
    assert on_submission.default == on_baseline.default


def test_the_choices_are_the_model_cards():
    assert Submission._meta.get_field("weights").choices == Weights.choices
    assert Baseline._meta.get_field("approach").choices == Approach.choices
    assert Weights.values == ["open", "closed", "unknown"]
    assert Approach.values == ["prompting", "fine-tuning", "other"]
