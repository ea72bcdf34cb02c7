"""The Django admin for the benchmark store. Gold is never listed, shown or editable here."""

from django.contrib import admin

from evaluation.models import BenchmarkVersion, Database, Question, ValidationReport


@admin.register(BenchmarkVersion)
class BenchmarkVersionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "status", "created_at", "published_at")
    list_filter = ("status",)
    # What participants see is set on the staff version page, through the service that applies its rules.
    readonly_fields = ("source_sha256", "created_at", "published_at", "derived_from", "participants_see")

    def has_change_permission(self, request, obj=None):
        # Published versions are frozen: a fix is a new draft (staff pages), never an edit.
        return obj is None or not obj.is_published


@admin.register(Database)
class DatabaseAdmin(admin.ModelAdmin):
    list_display = (
        "slug",
        "display_name",
        "version",
        "added_on",
        "source_dialect",
        "table_count",
        "row_count",
    )
    list_filter = ("version",)
    exclude = ("original_dump",)
    readonly_fields = (
        "sqlite_sha256",
        "table_count",
        "column_count",
        "row_count",
        "build_report",
        "sqlite_schema",
    )

    def has_change_permission(self, request, obj=None):
        return obj is None or not obj.version.is_published


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("public_id", "version", "hardness", "status")
    list_filter = ("version", "hardness", "status")
    search_fields = ("public_id", "text")
    fields = (
        "public_id",
        "version",
        "database",
        "position",
        "text",
        "hardness",
        "status",
        "status_reason",
        "problems",
    )
    readonly_fields = ("public_id", "version", "database", "position", "hardness", "problems")

    def has_change_permission(self, request, obj=None):
        return obj is None or not obj.version.is_published

    def has_add_permission(self, request):
        return False


@admin.register(ValidationReport)
class ValidationReportAdmin(admin.ModelAdmin):
    list_display = ("title", "version", "created_at")
    readonly_fields = ("version", "created_at", "title", "data", "text")
