"""The model card: what is said about a system on the leaderboard, declared once for the submissions
uploaded here and the baselines reported elsewhere, so that both carry the same fields, labels and choices.

A number is worth citing only with how it was made: a public submission must say which model, how it was
prompted and decoded, when it ran and what the model could have seen in training (`card_problems` says
what is missing, for the upload form and the API alike). A private submission may leave all of it out;
a baseline carries what its paper reports.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

# The explicit answer for what a closed model does not publish: its size, its training-data cutoff.
UNKNOWN = "unknown"


class Weights(models.TextChoices):
    OPEN = "open", _("open weights")
    CLOSED = "closed", _("closed weights")
    # Kept for private submissions and older rows; a public submission must say open or closed.
    UNKNOWN = "unknown", _("not said")


class Approach(models.TextChoices):
    PROMPTING = "prompting", _("prompting")
    FINE_TUNING = "fine-tuning", _("fine-tuning")
    OTHER = "other", _("other")


class SchemaFormat(models.TextChoices):
    """How the prompt gave the database's schema: the task bundle's forms, or the whole dump."""

    MYSQL_DDL = "mysql-ddl", _("MySQL DDL")
    SQLITE_DDL = "sqlite-ddl", _("SQLite DDL")
    TABLES_JSON = "tables-json", _("Spider's tables.json")
    FULL_DUMP = "full-dump", _("full dump, with the data")
    OTHER = "other", _("other")


class InstructionLanguage(models.TextChoices):
    ITALIAN = "it", _("Italian")
    ENGLISH = "en", _("English")
    OTHER = "other", _("other")


class Sampling(models.TextChoices):
    GREEDY = "greedy", _("greedy")
    TOP_P = "top-p", _("sampling with top-p")
    BEAM = "beam", _("beam search")
    OTHER = "other", _("other")


_CUTOFF = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")


def parse_cutoff(text: str) -> str:
    """A training-data cutoff as stored: "YYYY-MM-DD", or "unknown"; a month ("YYYY-MM") is its last
    day, as a model card that says "September 2021" means. Raises ValidationError for anything else."""
    text = text.strip()
    if text.lower() == UNKNOWN:
        return UNKNOWN
    match = _CUTOFF.match(text)
    try:
        if match is None:
            raise ValueError(text)
        year, month = int(match[1]), int(match[2])
        day = int(match[3]) if match[3] else calendar.monthrange(year, month)[1]
        return date(year, month, day).isoformat()
    except ValueError:
        raise ValidationError(
            _("Give the cutoff as a date, YYYY-MM-DD (or a month, YYYY-MM), or write unknown."),
            code="invalid_cutoff",
        ) from None


def validate_cutoff(value: str) -> None:
    if value and parse_cutoff(value) != value:
        raise ValidationError(_("Give the cutoff as YYYY-MM-DD, or write unknown."), code="invalid_cutoff")


def cutoff_date(value: str) -> date | None:
    """The date of a stored cutoff; None when it is unknown or not said."""
    return date.fromisoformat(value) if value and value != UNKNOWN else None


# How the predictions were made: the part of the card the issue of citable results added, in the order the
# upload form, the leaderboard's rows and its exports list it.
HOW_IT_RAN = (
    "training_cutoff",
    "shots",
    "schema_format",
    "instruction_language",
    "sampling",
    "temperature",
    "decoding_note",
    "run_date",
)


# The model card's fields a protocol run fills in itself (leaderboard/run_services.py,
# protocol_card), so the run form and the API leave them out.
RUN_SAYS = ("approach", *(name for name in HOW_IT_RAN if name != "training_cutoff"), "dialect")


class ModelCard(models.Model):
    """The fields a submission and a baseline share. Not the team: a submission's is a team of this portal
    (`Submission.team`), a baseline's the authors named in its paper (`Baseline.team`). All but the model
    name may be empty in the table: what a public submission must say is checked when it is uploaded
    (`card_problems`), not here, so older rows and baselines keep what they had."""

    model_name = models.CharField(_("model name"), max_length=120)
    model_size = models.CharField(
        _("model size"),
        max_length=40,
        blank=True,
        help_text=_("e.g. 7B, 70B; or unknown, for a closed model whose size is not published"),
    )
    weights = models.CharField(_("weights"), max_length=10, choices=Weights.choices, default=Weights.UNKNOWN)
    approach = models.CharField(
        _("approach"), max_length=12, choices=Approach.choices, default=Approach.PROMPTING
    )
    # Text, not a date: "unknown" is an answer too, and the exports carry the same word.
    training_cutoff = models.CharField(
        _("training-data cutoff"),
        max_length=10,
        blank=True,
        validators=[validate_cutoff],
        help_text=_("YYYY-MM-DD, or unknown"),
    )
    shots = models.PositiveSmallIntegerField(
        _("examples in the prompt (shots)"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(1000)],
        help_text=_("0 for zero-shot"),
    )
    schema_format = models.CharField(
        _("schema in the prompt"), max_length=12, choices=SchemaFormat.choices, blank=True
    )
    instruction_language = models.CharField(
        _("language of the instructions"), max_length=5, choices=InstructionLanguage.choices, blank=True
    )
    sampling = models.CharField(_("decoding"), max_length=10, choices=Sampling.choices, blank=True)
    temperature = models.FloatField(
        _("temperature"),
        null=True,
        blank=True,
        validators=[MinValueValidator(0), MaxValueValidator(10)],
        help_text=_("may be left blank for greedy decoding and beam search"),
    )
    decoding_note = models.CharField(
        _("decoding note"),
        max_length=200,
        blank=True,
        help_text=_("e.g. top-p 0.95; beam width 4; self-consistency over 5 samples"),
    )
    run_date = models.DateField(
        _("date of the run"), null=True, blank=True, help_text=_("when the predictions were generated")
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

    @property
    def training_cutoff_date(self) -> date | None:
        return cutoff_date(self.training_cutoff)


# What a public submission must say, each with the error its absence gets; in the order the form asks.
PUBLIC_REQUIRED = {
    "model_size": _(
        "A public submission must give the model size (e.g. 7B), or unknown for a closed model that does "
        "not publish it."
    ),
    "weights": _("A public submission must say whether the weights are open or closed."),
    "approach": _("A public submission must say its approach: prompting, fine-tuning or other."),
    "training_cutoff": _(
        "A public submission must give the model's training-data cutoff as a date, or unknown."
    ),
    "shots": _("A public submission must give the number of examples in the prompt: 0 for zero-shot."),
    "schema_format": _("A public submission must say in which form the prompt gave the schema."),
    "instruction_language": _("A public submission must give the language of the prompt's instructions."),
    "sampling": _(
        "A public submission must say how the output was decoded: greedy, sampling with top-p, beam "
        "search or other."
    ),
    "temperature": _("A public submission must give the temperature when the output was sampled."),
    "run_date": _("A public submission must give the date the predictions were generated."),
}


# Decodings that sample, where the temperature matters (greedy decoding and beam search do not).
_SAMPLED = (Sampling.TOP_P, Sampling.OTHER)


def _missing(card: Mapping[str, Any], name: str) -> bool:
    value = card.get(name)
    if name == "weights":
        return value not in (Weights.OPEN, Weights.CLOSED)
    if name == "temperature":
        # Without a decoding, the error on `sampling` says it: whether a temperature is needed is not known.
        return value is None and card.get("sampling") in _SAMPLED
    return value is None or value == ""


def card_problems(card: Mapping[str, Any], *, public: bool) -> dict[str, Any]:
    """What is wrong with a model card as uploaded, field name -> message; empty when nothing is.

    The card holds cleaned values (a choice not given is empty). Any card: a run dated in the future, or
    a cutoff after the run. A public one: every field of PUBLIC_REQUIRED given; the weights open or
    closed ("not said" is not an answer there); the temperature when the output was sampled (not for
    greedy decoding or beam search).
    """
    problems: dict[str, Any] = {}
    run_date, cutoff = card.get("run_date"), cutoff_date(card.get("training_cutoff") or "")
    # A day of slack: the uploader's today may be tomorrow here.
    if run_date and run_date > timezone.localdate() + timedelta(days=1):
        problems["run_date"] = _("The date of the run is in the future.")
    if run_date and cutoff and cutoff > run_date:
        problems["training_cutoff"] = _("The training-data cutoff is after the date of the run.")
    if public:
        for name, message in PUBLIC_REQUIRED.items():
            if name not in problems and _missing(card, name):
                problems[name] = message
    return problems
