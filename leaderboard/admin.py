"""Moderation in the Django admin: hide or flag a submission with a public reason, raise a user's quota."""

from django.contrib import admin, messages
from django.db import models
from django.db.models import Count

from leaderboard import ranking
from leaderboard.baselines import baseline_delete, baseline_save
from leaderboard.models import Baseline, Submission, SubmissionQuota
from leaderboard.services import requeue_stuck, submission_moderate


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = (
        "pk",
        "model_name",
        "user",
        "version",
        "status",
        "ea",
        "is_public",
        "is_hidden",
        "is_flagged",
        "created_at",
    )
    list_filter = ("status", "version", "is_public", "is_hidden", "is_flagged")
    search_fields = ("model_name", "team", "user__username")
    fields = (
        ("is_hidden", "is_flagged"),
        "moderation_reason",
        ("model_name", "team", "user", "version"),
        ("status", "attempts", "failure_reason"),
        ("created_at", "enqueued_at", "started_at", "scored_at", "withdrawn_at"),
        ("file_name", "file_sha256", "scorer_version"),
        ("ea", "ea_strict", "ts_ea"),
    )
    readonly_fields = tuple(
        name for group in fields[2:] for name in (group if isinstance(group, tuple) else (group,))
    )
    actions = ["requeue"]

    def has_add_permission(self, request):
        return False

    @admin.display(description="TS-EA")
    def ts_ea(self, obj: Submission) -> str:
        ts_ea = ((obj.scores or {}).get("overall") or {}).get("ts_ea")
        # Scores made before scorer 1.3.0 have none: the admin's mark for an empty value (a readonly
        # method's None would show as "None").
        return self.get_empty_value_display() if ts_ea is None else str(ts_ea)

    def save_model(self, request, obj, form, change):
        # Through the service, so the cached leaderboard is dropped when a row is hidden or shown.
        submission_moderate(
            submission=obj, hidden=obj.is_hidden, flagged=obj.is_flagged, reason=obj.moderation_reason
        )

    @admin.action(description="Re-run the sweeper (re-enqueue what is stuck)")
    def requeue(self, request, queryset):
        requeued = requeue_stuck()
        self.message_user(request, f"Re-enqueued {len(requeued)} submission(s).", messages.INFO)


@admin.register(SubmissionQuota)
class SubmissionQuotaAdmin(admin.ModelAdmin):
    list_display = ("user", "per_day", "per_version")
    search_fields = ("user__username",)
    autocomplete_fields = ("user",)


@admin.register(Baseline)
class BaselineAdmin(admin.ModelAdmin):
    """Results reported in papers, shown on the leaderboard marked as such and unranked."""

    list_display = ("model_name", "version", "shown_ea", "date", "source_url")
    list_filter = ("version",)
    search_fields = ("model_name", "team", "source")
    fields = (
        ("version", "model_name", "team"),
        ("model_size", "weights", "approach"),
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
    def save_model(self, request, obj, form, change):
        baseline_save(baseline=obj)

    def delete_model(self, request, obj):
        baseline_delete(baseline=obj)

    def delete_queryset(self, request, queryset):
        for baseline in queryset.select_related("version"):
            baseline_delete(baseline=baseline)
