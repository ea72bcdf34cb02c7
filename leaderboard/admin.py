"""Moderation in the Django admin: hide or flag a submission with a public reason, mark it verified with a
public note, raise a user's quota."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from leaderboard import ranking
from leaderboard.baselines import baseline_delete, baseline_save
from leaderboard.models import Baseline, ProtocolRun, Submission, SubmissionQuota
from leaderboard.services import (
    requeue_stuck,
    submission_moderate,
    submission_verify,
    verification_refusal,
)
from termite_site.accounts.models import User

# django-stubs makes the admin and form classes generic in their model; Django's take no type argument.
if TYPE_CHECKING:
    _SubmissionAdminFormBase = forms.ModelForm[Submission]
    _SubmissionAdminBase = admin.ModelAdmin[Submission]
    _SubmissionQuotaAdminBase = admin.ModelAdmin[SubmissionQuota]
    _BaselineAdminBase = admin.ModelAdmin[Baseline]
    _ProtocolRunAdminBase = admin.ModelAdmin[ProtocolRun]
else:
    _SubmissionAdminFormBase = forms.ModelForm
    _SubmissionAdminBase = _SubmissionQuotaAdminBase = _BaselineAdminBase = _ProtocolRunAdminBase = (
        admin.ModelAdmin
    )


class SubmissionAdminForm(_SubmissionAdminFormBase):
    verified = forms.BooleanField(
        required=False, help_text="Staff reproduced the run, or received the system and ran it."
    )

    class Meta:
        model = Submission
        fields = ("is_hidden", "is_flagged", "moderation_reason", "verified_note")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["verified"].initial = self.instance.is_verified

    def clean(self) -> dict[str, Any]:
        cleaned = cast(dict[str, Any], super().clean())  # a ModelForm's clean() returns cleaned_data
        refusal = verification_refusal(
            submission=self.instance,
            verified=cleaned.get("verified", False),
            note=cleaned.get("verified_note", ""),
        )
        if refusal:
            raise forms.ValidationError(refusal)
        return cleaned


@admin.register(Submission)
class SubmissionAdmin(_SubmissionAdminBase):
    form = SubmissionAdminForm
    list_display = (
        "pk",
        "model_name",
        "user",
        "team",
        "version",
        "status",
        "ea",
        "is_public",
        "is_hidden",
        "is_flagged",
        "verified_at",
        "created_at",
    )
    list_filter = (
        "status",
        "version",
        "is_public",
        "is_hidden",
        "is_flagged",
        ("verified_at", admin.EmptyFieldListFilter),
    )
    list_select_related = ("user", "team", "version")
    search_fields = ("model_name", "team__name", "team__slug", "user__username")
    fields = (
        ("is_hidden", "is_flagged"),
        "moderation_reason",
        ("verified", "verified_note"),
        ("verified_at", "verified_by"),
        ("model_name", "team", "user", "version"),
        ("model_size", "weights", "approach", "training_cutoff"),
        ("shots", "schema_format", "instruction_language"),
        ("sampling", "temperature", "decoding_note", "run_date"),
        ("status", "attempts", "failure_reason"),
        ("created_at", "enqueued_at", "started_at", "scored_at", "withdrawn_at"),
        ("file_name", "file_sha256", "scorer_version"),
        ("ea", "ea_strict", "ts_ea"),
    )
    readonly_fields = tuple(
        name for group in fields[3:] for name in (group if isinstance(group, tuple) else (group,))
    )
    actions = ["requeue", "unverify"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="TS-EA")
    def ts_ea(self, obj: Submission) -> str:
        ts_ea = ((obj.scores or {}).get("overall") or {}).get("ts_ea")
        # Scores made before scorer 1.3.0 have none: the admin's mark for an empty value (a readonly
        # method's None would show as "None").
        return self.get_empty_value_display() if ts_ea is None else str(ts_ea)

    def save_model(
        self, request: HttpRequest, obj: Submission, form: SubmissionAdminForm, change: bool
    ) -> None:
        # Through the services, so the cached leaderboard is dropped when a row is hidden, shown, verified.
        submission_moderate(
            submission=obj, hidden=obj.is_hidden, flagged=obj.is_flagged, reason=obj.moderation_reason
        )
        verified = form.cleaned_data["verified"]
        if verified != obj.is_verified or (verified and "verified_note" in form.changed_data):
            # The form checked the rules (verification_refusal), so this does not raise. Only staff get into
            # the admin: the user is never the anonymous visitor.
            by = cast(User, request.user)
            submission_verify(submission=obj, verified=verified, note=obj.verified_note, by=by)

    @admin.action(description="Remove the verification (back to a self-reported run)")
    def unverify(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        by = cast(User, request.user)  # only staff get into the admin
        for submission in queryset.filter(verified_at__isnull=False).select_related("version"):
            submission_verify(submission=submission, verified=False, note="", by=by)
        self.message_user(request, "The selected submissions are self-reported runs again.", messages.INFO)

    @admin.action(description="Re-run the sweeper (re-enqueue what is stuck)")
    def requeue(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        requeued = requeue_stuck()
        self.message_user(request, f"Re-enqueued {len(requeued)} submission(s).", messages.INFO)


@admin.register(SubmissionQuota)
class SubmissionQuotaAdmin(_SubmissionQuotaAdminBase):
    list_display = ("user", "per_day", "per_version")
    search_fields = ("user__username",)
    autocomplete_fields = ("user",)


@admin.register(Baseline)
class BaselineAdmin(_BaselineAdminBase):
    """Results reported in papers, shown on the leaderboard marked as such and unranked."""

    list_display = ("model_name", "version", "shown_ea", "date", "source_url")
    list_filter = ("version",)
    search_fields = ("model_name", "team", "source")
    fields = (
        ("version", "model_name", "team"),
        ("model_size", "weights", "approach", "training_cutoff"),
        ("shots", "schema_format", "instruction_language"),
        ("sampling", "temperature", "decoding_note", "run_date"),
        "per_database",
        ("ea", "shown_ea"),
        "spider_dev_ea",
        "note",
        "source",
        ("source_url", "date"),
    )
    readonly_fields = ("shown_ea",)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    @admin.display(description="overall EA on the leaderboard (%)")
    def shown_ea(self, obj: Baseline) -> str:
        if obj.pk is None:
            return "-"
        if obj.ea is not None:
            return f"{100 * obj.ea:.2f}"
        counts = dict(obj.version.databases.annotate(n=Count("questions")).values_list("slug", "n"))
        return f"{100 * ranking.baseline_overall(obj.per_database, counts):.2f} (weighted by questions)"

    # Through the services, so that the cached leaderboard is dropped.
    def save_model(self, request: HttpRequest, obj: Baseline, form: Any, change: bool) -> None:
        baseline_save(baseline=obj)

    def delete_model(self, request: HttpRequest, obj: Baseline) -> None:
        baseline_delete(baseline=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Baseline]) -> None:
        for baseline in queryset.select_related("version"):
            baseline_delete(baseline=baseline)


@admin.register(ProtocolRun)
class ProtocolRunAdmin(_ProtocolRunAdminBase):
    """Every run, read only: staff follow them here and on the run pages (cancel, transcript). The API key
    is never shown, not even encrypted."""

    list_display = (
        "pk",
        "user",
        "model",
        "protocol",
        "version",
        "status",
        "tasks_done",
        "tasks_total",
        "errors",
    )
    list_filter = ("status", "protocol", "version")
    search_fields = ("user__username", "model")
    exclude = ("api_key_encrypted",)
    readonly_fields = [
        field.name for field in ProtocolRun._meta.fields if field.name not in ("id", "api_key_encrypted")
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
