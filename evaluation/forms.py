from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib.auth.models import AnonymousUser
from django.utils.translation import gettext_lazy as _

from evaluation.models import (
    LABEL_VALIDATOR,
    SLUG_VALIDATOR,
    BenchmarkVersion,
    Dialect,
    Erratum,
    ParticipantsSee,
    SchemaShown,
    VersionKind,
)
from evaluation.sources import MAX_ARCHIVE_BYTES, MAX_DUMP_BYTES, MAX_QUESTIONS_BYTES
from termite_site.accounts.models import User


class CappedFileField(forms.FileField):
    """A file field that refuses uploads over a size, before anything reads them."""

    def __init__(self, *, max_bytes: int, **kwargs: Any) -> None:
        self.max_bytes = max_bytes
        super().__init__(**kwargs)

    def clean(self, data: Any, initial: Any | None = None) -> Any:
        upload = super().clean(data, initial)
        if upload and upload.size > self.max_bytes:
            raise forms.ValidationError(
                _("The file is larger than %(mb)s MB.") % {"mb": self.max_bytes // 2**20}, code="too_large"
            )
        return upload


class DraftVersionForm(forms.Form):
    label = forms.CharField(label=_("Version label"), max_length=40, validators=[LABEL_VALIDATOR])
    name = forms.CharField(label=_("Benchmark name"), max_length=100, initial="Termite")
    notes = forms.CharField(
        label=_("Changelog notes"), widget=forms.Textarea(attrs={"rows": 3}), required=False
    )
    derived_from = forms.ModelChoiceField(
        label=_("Copy databases and questions from"),
        queryset=BenchmarkVersion.objects.all(),
        required=False,
        empty_label=_("(start empty)"),
    )
    kind = forms.ChoiceField(
        label=_("Kind"),
        choices=[("", _("as the version it copies (sealed when empty)")), *VersionKind.choices],
        required=False,
        help_text=_(
            "Sealed: hidden data, participants see their scores only. Practice: public data, participants see "
            "everything. It never changes, and a practice version may share no database or question with a "
            "sealed one."
        ),
    )

    def clean_label(self) -> str:
        label: str = self.cleaned_data["label"]
        if BenchmarkVersion.objects.filter(label=label).exists():
            raise forms.ValidationError(_("A version with this label already exists."))
        return label


class AddDatabaseForm(forms.Form):
    dump = CappedFileField(label=_("Database dump (.sql)"), max_bytes=MAX_DUMP_BYTES)
    questions = CappedFileField(
        label=_("Questions (JSONL)"),
        max_bytes=MAX_QUESTIONS_BYTES,
        help_text=_('One {"id"?, "question", "gold_sql"} object per line.'),
    )
    schema = CappedFileField(
        label=_("Schema shown to participants (optional)"), max_bytes=MAX_DUMP_BYTES, required=False
    )
    slug = forms.CharField(
        label=_("Database name"),
        max_length=50,
        required=False,
        validators=[SLUG_VALIDATOR],
        help_text=_("Default: the dump's file name."),
    )
    display_name = forms.CharField(label=_("Display name"), max_length=200, required=False)
    description = forms.CharField(
        label=_("Description"), widget=forms.Textarea(attrs={"rows": 2}), required=False
    )
    dialect = forms.ChoiceField(label=_("Dialect of the dump and gold"), choices=Dialect.choices)


class ImportArchiveForm(forms.Form):
    archive = CappedFileField(label=_("Termite archive (.zip)"), max_bytes=MAX_ARCHIVE_BYTES)
    password = forms.CharField(label=_("Archive password"), widget=forms.PasswordInput)
    label = forms.CharField(
        label=_("Version label"), max_length=40, validators=[LABEL_VALIDATOR], initial="1.0"
    )
    publish = forms.BooleanField(label=_("Publish at once"), required=False)
    added_on = forms.DateField(
        label=_("Added to the benchmark on"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=_("Default: the newest date inside the archive, when its authors packed it."),
    )
    participants_see = forms.TypedChoiceField(
        label=_("Participants see of each database"),
        choices=ParticipantsSee.choices,
        initial=ParticipantsSee.SCHEMA,
        required=False,
        empty_value=ParticipantsSee.SCHEMA,
        widget=forms.RadioSelect,
    )


class ExcludeQuestionForm(forms.Form):
    excluded = forms.BooleanField(required=False)
    reason = forms.CharField(label=_("Public reason"), max_length=500, required=False)
    # The staff page to return to (the version's, or a database's schema page).
    next = forms.CharField(required=False, max_length=300)

    def clean(self) -> dict[str, Any]:
        cleaned = cast(dict[str, Any], super().clean())  # Form.clean gives cleaned_data, never None
        if cleaned.get("excluded") and not cleaned.get("reason", "").strip():
            self.add_error("reason", _("Say why the question is excluded."))
        return cleaned


class SchemaShownForm(forms.Form):
    shown = forms.ChoiceField(
        label=_("Schema shown to participants"), choices=SchemaShown.choices, widget=forms.RadioSelect
    )


class ParticipantsSeeForm(forms.Form):
    participants_see = forms.ChoiceField(
        label=_("Participants see of each database"),
        choices=ParticipantsSee.choices,
        widget=forms.RadioSelect,
    )


class ErratumForm(forms.Form):
    """A report that a question is wrong, from the web form and the API alike (the version by its label).

    The versions are those the reporter may see: published ones, and drafts too for staff. Without a
    version, the latest published one.
    """

    version = forms.ModelChoiceField(
        label=_("Version"),
        queryset=BenchmarkVersion.objects.none(),
        to_field_name="label",
        required=False,
        empty_label=None,
        error_messages={"invalid_choice": _("There is no published version %(value)s.")},
    )
    question_id = forms.CharField(label=_("Question id"), max_length=80, help_text=_("e.g. biblioteca-001"))
    description = forms.CharField(
        label=_("What is wrong"),
        max_length=Erratum.MAX_DESCRIPTION_CHARS,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=_("Only you and the staff read this; the errata page lists the question id alone."),
    )

    def __init__(self, *args: Any, user: User | AnonymousUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        versions = BenchmarkVersion.objects.all() if user.is_staff else BenchmarkVersion.objects.published()
        version_field = cast("forms.ModelChoiceField[BenchmarkVersion]", self.fields["version"])
        version_field.queryset = versions.order_by("-published_at", "-created_at")
        self.fields["version"].initial = BenchmarkVersion.objects.latest_published()

    def clean_version(self) -> BenchmarkVersion | None:
        version = self.cleaned_data["version"] or BenchmarkVersion.objects.latest_published()
        if version is None:
            raise forms.ValidationError(_("No version is published yet."))
        return version

    def clean(self) -> dict[str, Any]:
        cleaned = cast(dict[str, Any], super().clean())  # Form.clean gives cleaned_data, never None
        version, public_id = cleaned.get("version"), cleaned.get("question_id")
        if version is not None and public_id:
            question = version.questions.filter(public_id=public_id).first()
            if question is None:
                self.add_error(
                    "question_id",
                    _("%(version)s has no question %(id)s.") % {"version": version, "id": public_id},
                )
            cleaned["question"] = question
        return cleaned


class ErratumResolveForm(forms.Form):
    decision = forms.ChoiceField(
        choices=[(status, label) for status, label in Erratum.Status.choices if status != Erratum.Status.OPEN]
    )
    reason = forms.CharField(max_length=Erratum.MAX_REASON_CHARS)
