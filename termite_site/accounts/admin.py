from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from termite_site.accounts.models import ApiToken, User


@admin.register(User)
class PortalUserAdmin(UserAdmin):
    fieldsets = (*UserAdmin.fieldsets, ("Termite", {"fields": ("affiliation",)}))
    list_display = ("username", "email", "affiliation", "is_staff", "date_joined")
    search_fields = ("username", "email", "affiliation")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "hint", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("token_hash", "hint", "created_at", "last_used_at")
    list_filter = ("revoked_at",)
