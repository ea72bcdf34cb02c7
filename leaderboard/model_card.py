"""The model card: what is said about a system on the leaderboard, declared once for the submissions
uploaded here and the baselines reported elsewhere, so that both carry the same fields, labels and choices.
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _


class Weights(models.TextChoices):
    OPEN = "open", _("open weights")
    CLOSED = "closed", _("closed weights")
    UNKNOWN = "unknown", _("not said")


class Approach(models.TextChoices):
    PROMPTING = "prompting", _("prompting")
    FINE_TUNING = "fine-tuning", _("fine-tuning")
    OTHER = "other", _("other")


class ModelCard(models.Model):
    """The fields a submission and a baseline share. Not the team: a submission's is a team of this portal
    (`Submission.team`), a baseline's the authors named in its paper (`Baseline.team`)."""

    model_name = models.CharField(_("model name"), max_length=120)
    model_size = models.CharField(_("model size"), max_length=40, blank=True, help_text=_("e.g. 7B, 70B"))
    weights = models.CharField(_("weights"), max_length=10, choices=Weights.choices, default=Weights.UNKNOWN)
    approach = models.CharField(
        _("approach"), max_length=12, choices=Approach.choices, default=Approach.PROMPTING
    )
    # In %, as papers report it; the leaderboard shows it beside the EA here (leaderboard/ranking.py).
    spider_dev_ea = models.FloatField(
        _("self-reported Spider dev EA (%)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
    )

    class Meta:
        abstract = True
