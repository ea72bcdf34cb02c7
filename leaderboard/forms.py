from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, cast

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.validators import MaxValueValidator
from django.db.models import Field
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.html import escape
from django.utils.translation import gettext_lazy as _

from evaluation.models import BenchmarkVersion
from leaderboard.model_card import (
    PUBLIC_REQUIRED,
    RUN_SAYS,
    UNKNOWN,
    Approach,
    Weights,
    card_problems,
    parse_cutoff,
)
from leaderboard.models import Submission
from leaderboard.protocols import catalogue
from leaderboard.protocols.catalogue import DEFAULT_PROTOCOL
from leaderboard.ranking import COLUMN_GROUPS, FOLDED_GROUPS, NO_GROUP_HIDDEN, RowFilters
from leaderboard.run_services import Budget, Decoding, protocol_card
from termite_site.accounts.models import Team, User
from termite_site.outbound import OutboundRefused, check_url

# django-stubs makes ModelForm generic in its model; Django's own class cannot be subscripted at run time.
if TYPE_CHECKING:
    _SubmissionModelForm = forms.ModelForm[Submission]
else:
    _SubmissionModelForm = forms.ModelForm


class SubmissionForm(_SubmissionModelForm):
    """The model card and the file; the file's content is validated by the service, line by line. The
    API's upload (leaderboard/api.py) is this form too, so both say the same of a model card."""

    version = forms.ModelChoiceField(
        label=_("Benchmark version"),
        queryset=BenchmarkVersion.objects.published(),
        empty_label=None,
        required=False,
    )
    predictions = forms.FileField(
        label=_("Predictions file"),
        # Help texts are rendered as HTML (the password ones carry a list); this one shows a literal "<db>".
        help_text=escape(
            _('JSONL, one {"question_id": …, "sql": …} per line; or a zip of <db>/predict.txt files.')
        ),
    )

    paper_url = forms.URLField(label=_("Paper URL"), required=False, assume_scheme="https")
    code_url = forms.URLField(label=_("Code URL"), required=False, assume_scheme="https")
    # Among the uploader's teams, by slug (the API sends the slug too); none by default.
    team = forms.ModelChoiceField(
        label=_("Team"),
        queryset=Team.objects.none(),
        to_field_name="slug",
        required=False,
        empty_label=_("none: just me"),
        help_text=_("One of your teams: the leaderboard shows it, and it counts towards the team's quota."),
        error_messages={
            "invalid_choice": _(
                "You are not a member of a team “%(value)s”: choose one of your teams, or none."
            )
        },
    )
    model_url = forms.URLField(
        label=_("Model URL"),
        required=False,
        assume_scheme="https",
        help_text=_("e.g. its page on a model hub"),
    )
    # Longer than the stored "YYYY-MM-DD" so that anything else gets the message that says what to write.
    training_cutoff = forms.CharField(
        label=_("Training-data cutoff"),
        required=False,
        max_length=40,
        help_text=_("YYYY-MM-DD (a month, YYYY-MM, means its last day), or unknown"),
        widget=forms.TextInput(attrs={"placeholder": "YYYY-MM-DD"}),
    )

    class Meta:
        model = Submission
        fields: tuple[str, ...] = Submission.MODEL_CARD_FIELDS
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "run_date": forms.DateInput(attrs={"type": "date"}),
        }

    # The file first: it is what the form is for, and what a returning uploader changes.
    field_order: tuple[str, ...] = ("predictions", "model_name", "team")

    # Marked "required if public" by the form's template (templates/accounts/_form.html).
    public_required = frozenset(PUBLIC_REQUIRED)

    # Choices a script may leave out on a private submission; they take the model card's defaults.
    DEFAULTED = ("weights", "approach", "dialect")

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "version" in self.fields:  # not on a card corrected after the upload (ModelCardForm)
            self.fields["version"].initial = BenchmarkVersion.objects.latest_published()
            cast("forms.ModelChoiceField[Team]", self.fields["team"]).queryset = user.teams.order_by(
                Lower("name")
            )
        for name in self.DEFAULTED:
            if name in self.fields:
                self.fields[name].required = False

    def clean_model_size(self) -> str:
        size = self.cleaned_data["model_size"].strip()
        return UNKNOWN if size.lower() == UNKNOWN else size

    def clean_training_cutoff(self) -> str:
        text = self.cleaned_data["training_cutoff"]
        return parse_cutoff(text) if text.strip() else ""

    def clean(self) -> dict[str, Any]:
        cleaned = cast(dict[str, Any], super().clean())  # a ModelForm's clean() returns cleaned_data
        # Before the defaults: on a public submission a choice left out is missing, not the default.
        card = self.card_to_check(cleaned)
        problems = card_problems(card, public=bool(card.get("is_public")))
        for name, message in problems.items():
            if name not in self.errors:  # a value already refused needs no second error
                self.add_error(name, message)
        for name in self.DEFAULTED:
            if not cleaned.get(name):
                # Concrete fields of the model, each with a default.
                cleaned[name] = cast("Field[Any, Any]", Submission._meta.get_field(name)).default
        return cleaned

    def card_to_check(self, cleaned: dict[str, Any]) -> dict[str, Any]:
        """The model card `card_problems` checks: what the form was given."""
        return cleaned

    def clean_version(self) -> BenchmarkVersion:
        version = self.cleaned_data.get("version") or BenchmarkVersion.objects.latest_published()
        if version is None:
            raise forms.ValidationError(_("No benchmark version is published yet."))
        return version

    def model_card(self) -> dict[str, Any]:
        return {name: self.cleaned_data[name] for name in self.Meta.fields}


class ModelCardForm(SubmissionForm):
    """A submission's model card corrected by its owner: checked as at upload, for the submission's
    visibility (a public one keeps a whole card)."""

    predictions = None  # type: ignore[assignment]  # the file stays as uploaded
    version = None  # type: ignore[assignment]
    team = None  # type: ignore[assignment]

    class Meta(SubmissionForm.Meta):
        fields = Submission.EDITABLE_CARD_FIELDS

    field_order = ("model_name",)

    def __init__(self, *args: Any, instance: Submission, **kwargs: Any) -> None:
        super().__init__(*args, instance=instance, user=instance.user, **kwargs)

    def card_to_check(self, cleaned: dict[str, Any]) -> dict[str, Any]:
        return {**cleaned, "is_public": self.instance.is_public}


class RunForm(SubmissionForm):
    """A protocol run (leaderboard/run_services.py): the endpoint, the model, the decoding, the protocol, the
    budget, and the upload's model card but for what the run itself says (the prompt, the decoding, the
    day it ran: `run_services.protocol_card`). The web form, the API and `manage.py run_protocol` all
    validate with it."""

    predictions = None  # type: ignore[assignment]  # a run makes its own: None drops the inherited field
    endpoint_url = forms.URLField(
        label=_("Endpoint URL"),
        max_length=500,
        assume_scheme="https",
        help_text=_("An OpenAI-compatible chat endpoint, e.g. https://api.example.org/v1/chat/completions"),
    )
    api_key = forms.CharField(
        label=_("API key"),
        required=False,
        max_length=500,
        widget=forms.PasswordInput(render_value=False),
        help_text=_(
            "Sent as Authorization: Bearer; stored encrypted, used only to call the endpoint, never shown again."
        ),
    )
    delete_key_when_done = forms.BooleanField(
        label=_("Delete the API key when the run ends"), required=False, initial=True
    )
    model = forms.CharField(
        label=_("Model at the endpoint"), max_length=200, help_text=_("e.g. gpt-3.5-turbo-16k")
    )
    protocol = forms.ChoiceField(label=_("Protocol"), initial=DEFAULT_PROTOCOL)
    temperature = forms.FloatField(label=_("Temperature"), min_value=0, max_value=2, initial=1.0)
    top_p = forms.FloatField(label=_("Top-p"), required=False, min_value=0, max_value=1)
    max_tokens = forms.IntegerField(
        label=_("Max tokens per answer"), required=False, min_value=1, max_value=1_000_000
    )
    seed = forms.IntegerField(label=_("Seed"), required=False, min_value=-(2**63), max_value=2**63 - 1)
    max_requests = forms.IntegerField(label=_("Budget: most requests"), min_value=1, initial=1000)
    max_total_tokens = forms.IntegerField(label=_("Budget: most tokens"), required=False, min_value=1)
    max_seconds = forms.IntegerField(label=_("Budget: most seconds of running"), min_value=1, initial=3600)
    concurrency = forms.IntegerField(label=_("Requests at once"), min_value=1, initial=2)

    class Meta(SubmissionForm.Meta):
        fields: tuple[str, ...] = tuple(name for name in Submission.MODEL_CARD_FIELDS if name not in RUN_SAYS)

    # The run's own temperature is a setting of the run, asked of every run, public or not.
    public_required = SubmissionForm.public_required - frozenset(RUN_SAYS)

    field_order = (
        "version",
        "endpoint_url",
        "api_key",
        "delete_key_when_done",
        "model",
        "protocol",
        "temperature",
        "top_p",
        "max_tokens",
        "seed",
        "max_requests",
        "max_total_tokens",
        "max_seconds",
        "concurrency",
        "model_name",
        "team",
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, user=user, **kwargs)
        cast(forms.ChoiceField, self.fields["protocol"]).choices = catalogue.choices()
        for name, limit in (
            ("max_requests", settings.TERMITE_PROTOCOL_MAX_REQUESTS),
            ("max_seconds", settings.TERMITE_PROTOCOL_MAX_SECONDS),
            ("concurrency", settings.TERMITE_PROTOCOL_MAX_CONCURRENCY),
        ):
            cast(forms.IntegerField, self.fields[name]).max_value = limit
            self.fields[name].validators.append(MaxValueValidator(limit))
            self.fields[name].widget.attrs["max"] = limit

    def clean_endpoint_url(self) -> str:
        url: str = self.cleaned_data["endpoint_url"]
        try:
            check_url(url)
        except OutboundRefused as error:
            raise forms.ValidationError(str(error)) from None  # a sentence that says why
        return url

    def card_to_check(self, cleaned: dict[str, Any]) -> dict[str, Any]:
        version = cleaned.get("version") or BenchmarkVersion.objects.latest_published()
        if version is None or cleaned.get("temperature") is None:
            return cleaned
        said = protocol_card(
            protocol_id=cleaned.get("protocol") or DEFAULT_PROTOCOL,
            version=version,
            temperature=cleaned["temperature"],
            top_p=cleaned.get("top_p"),
            seed=cleaned.get("seed"),
            max_tokens=cleaned.get("max_tokens"),
            run_date=timezone.localdate(),
        )
        return {**cleaned, **said}

    def decoding(self) -> Decoding:
        data = self.cleaned_data
        return Decoding(
            temperature=data["temperature"],
            top_p=data["top_p"],
            max_tokens=data["max_tokens"],
            seed=data["seed"],
        )

    def budget(self) -> Budget:
        data = self.cleaned_data
        return Budget(
            max_requests=data["max_requests"],
            max_seconds=data["max_seconds"],
            max_total_tokens=data["max_total_tokens"],
        )

    def run_arguments(self) -> RunArguments:
        """What `run_services.run_create` takes from the form: all but the user and the API key, which the
        web form and the API take from the form and the command from the environment."""
        data = self.cleaned_data
        return {
            "version": data["version"],
            "endpoint_url": data["endpoint_url"],
            "model": data["model"],
            "protocol_id": data["protocol"],
            "decoding": self.decoding(),
            "budget": self.budget(),
            "concurrency": data["concurrency"],
            "model_card": self.model_card(),
            "team": data["team"],
            "delete_key_when_done": data["delete_key_when_done"],
        }


class RunArguments(TypedDict):
    """What `RunForm.run_arguments` gives `run_services.run_create`."""

    version: BenchmarkVersion
    endpoint_url: str
    model: str
    protocol_id: str
    decoding: Decoding
    budget: Budget
    concurrency: int
    model_card: dict[str, Any]
    team: Team | None
    delete_key_when_done: bool


class ModerationForm(forms.Form):
    is_hidden = forms.BooleanField(required=False)
    is_flagged = forms.BooleanField(required=False)
    moderation_reason = forms.CharField(max_length=500, required=False)


class VerificationForm(forms.Form):
    """Staff mark a public scored submission verified, with a public note, or remove the mark."""

    verified = forms.BooleanField(label=_("Verified"), required=False)
    note = forms.CharField(
        label=_("Public note"),
        max_length=200,
        required=False,
        help_text=_("e.g. reproduced by the organisers from the released code"),
    )

    def clean(self) -> dict[str, Any]:
        cleaned = cast(dict[str, Any], super().clean())  # a Form's clean() returns cleaned_data
        if cleaned.get("verified") and not cleaned.get("note", "").strip():
            self.add_error("note", _("Say how the run was verified: the note is shown on the leaderboard."))
        return cleaned


class HideRowsForm(forms.Form):
    """Staff hide chosen submissions of a version, with the public reason their rows show."""

    submissions = forms.ModelMultipleChoiceField(
        queryset=Submission.objects.none(),
        error_messages={
            "required": _("Choose the submissions to hide."),
            "invalid_choice": _("Submission %(value)s is not one of this version's."),
            "invalid_pk_value": _("“%(pk)s” is not a submission number."),
        },
    )
    reason = forms.CharField(
        label=_("Public reason"),
        max_length=500,
        error_messages={"required": _("Give the reason shown on the hidden rows.")},
    )

    def __init__(self, *args: Any, version: BenchmarkVersion, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        submissions = cast("forms.ModelMultipleChoiceField[Submission]", self.fields["submissions"])
        submissions.queryset = Submission.objects.filter(version=version)


class AccountForm(forms.Form):
    """The account a staff action is about, by its number."""

    user = forms.ModelChoiceField(
        queryset=get_user_model().objects.all(),
        error_messages={
            "required": _("Choose an account."),
            "invalid_choice": _("There is no such account."),
        },
    )


class QuotaLowerForm(AccountForm):
    """Staff give an account its own lower quota; the service checks that it is lower."""

    per_day = forms.IntegerField(label=_("Per 24 hours"), min_value=0)
    per_version = forms.IntegerField(label=_("Per version"), min_value=0)


@dataclass(frozen=True)
class RankingView:
    """What a visitor asked of the leaderboard page; anything invalid falls back to the default."""

    q: str = ""
    weights: str = ""
    approach: str = ""
    size: str = ""
    verified: bool = False
    portal_run: bool = False
    team: str = ""
    sort: str = "rank"
    descending: bool = False
    hidden: tuple[str, ...] = FOLDED_GROUPS
    page: int = 1
    everything: bool = False  # ?all=1: every row on one page, as the browser's own sorting and filters want

    @property
    def filters(self) -> RowFilters:
        return {
            "q": self.q,
            "weights": self.weights,
            "approach": self.approach,
            "size": self.size,
            "verified": self.verified,
            "portal_run": self.portal_run,
            "team": self.team,
        }


class RankingForm(forms.Form):
    """The leaderboard's query string: ?q=&weights=&approach=&size=&verified=1&portal_run=1&team=&sort=
    &order=&hide=&page=&all=1."""

    q = forms.CharField(required=False, max_length=100)
    weights = forms.ChoiceField(required=False, choices=[("", ""), *Weights.choices])
    approach = forms.ChoiceField(required=False, choices=[("", ""), *Approach.choices])
    size = forms.CharField(required=False, max_length=40)
    verified = forms.BooleanField(required=False)
    portal_run = forms.BooleanField(required=False)
    team = forms.SlugField(required=False, max_length=140)
    sort = forms.ChoiceField(required=False)
    order = forms.ChoiceField(required=False, choices=[("asc", "asc"), ("desc", "desc")])
    hide = forms.MultipleChoiceField(
        required=False, choices=[*COLUMN_GROUPS.items(), (NO_GROUP_HIDDEN, NO_GROUP_HIDDEN)]
    )
    page = forms.IntegerField(required=False, min_value=1, max_value=100_000)
    all = forms.BooleanField(required=False)

    def __init__(self, data: Mapping[str, Any], *, columns: list[str]) -> None:
        super().__init__(data)
        cast(forms.ChoiceField, self.fields["sort"]).choices = [(key, key) for key in columns]

    def view(self) -> RankingView:
        self.is_valid()
        data = {name: value for name, value in self.cleaned_data.items() if value}
        return RankingView(
            q=data.get("q", "").strip(),
            weights=data.get("weights", ""),
            approach=data.get("approach", ""),
            size=data.get("size", "").strip(),
            verified=bool(data.get("verified")),
            portal_run=bool(data.get("portal_run")),
            team=data.get("team", ""),
            sort=data.get("sort", "rank"),
            descending=data.get("order") == "desc",
            hidden=tuple(group for group in COLUMN_GROUPS if group in data["hide"])
            if "hide" in data
            else FOLDED_GROUPS,
            page=data.get("page", 1),
            everything=bool(data.get("all")),
        )


class CompareForm(forms.Form):
    a = forms.IntegerField(min_value=1)
    b = forms.IntegerField(min_value=1)
