from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from termite_site.accounts.models import ApiToken, User
from termite_site.accounts.services import users_mark_email_confirmed


class EmailConfirmedFilter(admin.SimpleListFilter):
    title = _("e-mail confirmed")
    parameter_name = "email_confirmed"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("yes", _("Yes")), ("no", _("No"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[User]) -> QuerySet[User]:
        if self.value() in ("yes", "no"):
            return queryset.filter(email_confirmed_at__isnull=self.value() == "no")
        return queryset


@admin.register(User)
class PortalUserAdmin(UserAdmin):
    # The confirmation time is read-only: staff confirm an address with the action, never unconfirm one
    # by hand. A user staff add here counts as confirmed (see User.email_confirmed_at).
    fieldsets = (*UserAdmin.fieldsets, ("Termite", {"fields": ("affiliation", "email_confirmed_at")}))
    readonly_fields = ("email_confirmed_at",)
    list_display = ("username", "email", "email_confirmed", "affiliation", "is_staff", "date_joined")
    list_filter = (*UserAdmin.list_filter, EmailConfirmedFilter)
    search_fields = ("username", "email", "affiliation")
    actions = ["mark_email_confirmed"]

    @admin.display(boolean=True, description=_("e-mail confirmed"), ordering="email_confirmed_at")
    def email_confirmed(self, user: User) -> bool:
        return user.email_confirmed

    @admin.action(description=_("Mark e-mail confirmed"), permissions=["change"])
    def mark_email_confirmed(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        count = users_mark_email_confirmed(users=queryset)
        self.message_user(
            request,
            ngettext("%(n)d address marked confirmed.", "%(n)d addresses marked confirmed.", count)
            % {"n": count},
            messages.SUCCESS,
        )


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "hint", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("token_hash", "hint", "created_at", "last_used_at")
    list_filter = ("revoked_at",)
