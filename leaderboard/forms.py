from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from evaluation.models import BenchmarkVersion
from leaderboard.models import Submission


class SubmissionForm(forms.ModelForm):
    """The model card and the file; the file's content is validated by the service, line by line."""

    version = forms.ModelChoiceField(
        label=_("Benchmark version"),
        queryset=BenchmarkVersion.objects.published(),
        empty_label=None,
        required=False,
    )
    predictions = forms.FileField(
        label=_("Predictions"),
        help_text=_('JSONL, one {"question_id": …, "sql": …} per line; or a zip of <db>/predict.txt files.'),
    )

    paper_url = forms.URLField(label=_("Paper URL"), required=False, assume_scheme="https")
    code_url = forms.URLField(label=_("Code URL"), required=False, assume_scheme="https")

    class Meta:
        model = Submission
        fields = [
            "model_name",
            "team",
            "description",
            "model_size",
            "weights",
            "approach",
            "dialect",
            "paper_url",
            "code_url",
            "spider_dev_ea",
            "is_public",
        ]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}

    # Choices a script may leave out; they take the model card's defaults.
    DEFAULTED = ("weights", "approach", "dialect")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["version"].initial = BenchmarkVersion.objects.latest_published()
        for name in self.DEFAULTED:
            self.fields[name].required = False

    def clean(self):
        cleaned = super().clean()
        for name in self.DEFAULTED:
            if not cleaned.get(name):
                cleaned[name] = Submission._meta.get_field(name).default
        return cleaned

    def clean_version(self) -> BenchmarkVersion:
        version = self.cleaned_data.get("version") or BenchmarkVersion.objects.latest_published()
        if version is None:
            raise forms.ValidationError(_("No benchmark version is published yet."))
        return version

    def model_card(self) -> dict:
        return {name: self.cleaned_data[name] for name in self.Meta.fields}


class ModerationForm(forms.Form):
    is_hidden = forms.BooleanField(required=False)
    is_flagged = forms.BooleanField(required=False)
    moderation_reason = forms.CharField(max_length=500, required=False)
