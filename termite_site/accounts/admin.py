from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from termite_site.accounts.models import ApiToken, Team, TeamInvitation, TeamMembership, User
from termite_site.accounts.services import (
    TeamError,
    team_name_clean,
    team_name_taken,
    team_rename_unchecked,
    users_mark_email_confirmed,
)

# django-stubs makes the admin and form classes generic in their model; Django's take no type argument.
if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise, WithAnnotations

    _UserAdminBase = UserAdmin[User]
    _ApiTokenAdminBase = admin.ModelAdmin[ApiToken]
    _TeamMembershipInlineBase = admin.TabularInline[TeamMembership, Team]
    _TeamAdminFormBase = forms.ModelForm[Team]
    _TeamAdminBase = admin.ModelAdmin[Team]
    _TeamMembershipAdminBase = admin.ModelAdmin[TeamMembership]
    _TeamInvitationAdminBase = admin.ModelAdmin[TeamInvitation]

    class _MemberCount(TypedDict):
        member_count: int

else:
    _UserAdminBase = UserAdmin
    _ApiTokenAdminBase = _TeamAdminBase = _TeamMembershipAdminBase = _TeamInvitationAdminBase = (
        admin.ModelAdmin
    )
    _TeamMembershipInlineBase = admin.TabularInline
    _TeamAdminFormBase = forms.ModelForm


class EmailConfirmedFilter(admin.SimpleListFilter):
    title = _("e-mail confirmed")
    parameter_name = "email_confirmed"

    def lookups(
        self, request: HttpRequest, model_admin: admin.ModelAdmin[User]
    ) -> list[tuple[str, StrOrPromise]]:
        return [("yes", _("Yes")), ("no", _("No"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[User]) -> QuerySet[User]:
        if self.value() in ("yes", "no"):
            return queryset.filter(email_confirmed_at__isnull=self.value() == "no")
        return queryset


@admin.register(User)
class PortalUserAdmin(_UserAdminBase):
    # The confirmation time is read-only: staff confirm an address with the action, never unconfirm one
    # by hand. A user staff add here counts as confirmed (see User.email_confirmed_at).
    fieldsets = (*UserAdmin.fieldsets, ("Termite", {"fields": ("affiliation", "email_confirmed_at")}))  # type: ignore[misc]  # UserAdmin sets them; the stubs allow None
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
class ApiTokenAdmin(_ApiTokenAdminBase):
    list_display = ("name", "user", "hint", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("token_hash", "hint", "created_at", "last_used_at")
    list_filter = ("revoked_at",)


class TeamMembershipInline(_TeamMembershipInlineBase):
    model = TeamMembership
    extra = 0
    autocomplete_fields = ("user",)


class TeamAdminForm(_TeamAdminFormBase):
    class Meta:
        model = Team
        fields = ("name",)

    def clean_name(self) -> str:
        name = team_name_clean(self.cleaned_data["name"])
        if team_name_taken(name, exclude=self.instance if self.instance.pk else None):
            raise forms.ValidationError("A team with this name already exists.")
        return name


@admin.register(Team)
class TeamAdmin(_TeamAdminBase):
    """Teams; a team with submissions cannot be deleted (they are credited to it), only renamed."""

    form = TeamAdminForm
    list_display = ("name", "slug", "created_by", "created_at", "member_count")
    search_fields = ("name", "slug", "memberships__user__username")
    readonly_fields = ("slug", "created_by", "created_at")
    inlines = [TeamMembershipInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Team]:
        return super().get_queryset(request).annotate(member_count=Count("memberships"))

    @admin.display(description="members", ordering="member_count")
    def member_count(self, obj: WithAnnotations[Team, _MemberCount]) -> int:
        return obj.member_count

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A team has an owner from its first moment: people create theirs on the site.
        return False

    def save_model(self, request: HttpRequest, obj: Team, form: TeamAdminForm, change: bool) -> None:
        # Through the service, so that the leaderboard's cached rows drop the old name.
        try:
            team_rename_unchecked(team=Team.objects.get(pk=obj.pk), name=obj.name)
        except TeamError as error:
            self.message_user(request, str(error), messages.ERROR)


@admin.register(TeamMembership)
class TeamMembershipAdmin(_TeamMembershipAdminBase):
    list_display = ("team", "user", "role", "joined_at")
    list_filter = ("role",)
    search_fields = ("team__name", "user__username")
    autocomplete_fields = ("team", "user")


@admin.register(TeamInvitation)
class TeamInvitationAdmin(_TeamInvitationAdminBase):
    list_display = ("team", "created_by", "created_at", "expires_at", "used_by", "used_at", "revoked_at")
    list_filter = (("used_at", admin.EmptyFieldListFilter), ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("team__name",)
    readonly_fields = ("team", "created_by", "token_hash", "created_at", "used_at", "used_by")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # The link is shown once, to an owner on the team's page; one made here could never be shown.
        return False

    @admin.action(description="Withdraw the selected invitation links")
    def revoke(self, request: HttpRequest, queryset: QuerySet[TeamInvitation]) -> None:
        for invitation in queryset:
            invitation.revoke()
        self.message_user(request, "The selected links can no longer be used.", messages.INFO)
