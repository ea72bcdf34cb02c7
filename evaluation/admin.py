"""The Django admin for the benchmark store. Gold is never listed, shown or editable here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin
from django.http import HttpRequest

from evaluation.models import BenchmarkVersion, Database, Question, ValidationReport

# django-stubs makes ModelAdmin generic in its model; Django's takes no type argument.
if TYPE_CHECKING:
    _BenchmarkVersionAdminBase = admin.ModelAdmin[BenchmarkVersion]
    _DatabaseAdminBase = admin.ModelAdmin[Database]
    _QuestionAdminBase = admin.ModelAdmin[Question]
    _ValidationReportAdminBase = admin.ModelAdmin[ValidationReport]
else:
    _BenchmarkVersionAdminBase = _DatabaseAdminBase = _QuestionAdminBase = _ValidationReportAdminBase = (
        admin.ModelAdmin
    )


@admin.register(BenchmarkVersion)
class BenchmarkVersionAdmin(_BenchmarkVersionAdminBase):
    list_display = ("__str__", "status", "created_at", "published_at")
    list_filter = ("status",)
    # What participants see is set on the staff version page, through the service that applies its rules.
    readonly_fields = ("source_sha256", "created_at", "published_at", "derived_from", "participants_see")

    def has_change_permission(self, request: HttpRequest, obj: BenchmarkVersion | None = None) -> bool:
        # Published versions are frozen: a fix is a new draft (staff pages), never an edit.
        return obj is None or not obj.is_published


@admin.register(Database)
class DatabaseAdmin(_DatabaseAdminBase):
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

    def has_change_permission(self, request: HttpRequest, obj: Database | None = None) -> bool:
        return obj is None or not obj.version.is_published


@admin.register(Question)
class QuestionAdmin(_QuestionAdminBase):
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

    def has_change_permission(self, request: HttpRequest, obj: Question | None = None) -> bool:
        return obj is None or not obj.version.is_published

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ValidationReport)
class ValidationReportAdmin(_ValidationReportAdminBase):
    list_display = ("title", "version", "created_at")
    readonly_fields = ("version", "created_at", "title", "data", "text")
