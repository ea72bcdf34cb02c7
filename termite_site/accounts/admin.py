from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.db.models import Count

from termite_site.accounts.models import ApiToken, Team, TeamInvitation, TeamMembership, User
from termite_site.accounts.services import TeamError, team_name_clean, team_name_taken, team_rename_unchecked


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


class TeamMembershipInline(admin.TabularInline):
    model = TeamMembership
    extra = 0
    autocomplete_fields = ("user",)


class TeamAdminForm(forms.ModelForm):
    class Meta:
        model = Team
        fields = ("name",)

    def clean_name(self) -> str:
        name = team_name_clean(self.cleaned_data["name"])
        if team_name_taken(name, exclude=self.instance if self.instance.pk else None):
            raise forms.ValidationError("A team with this name already exists.")
        return name


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    """Teams; a team with submissions cannot be deleted (they are credited to it), only renamed."""

    form = TeamAdminForm
    list_display = ("name", "slug", "created_by", "created_at", "member_count")
    search_fields = ("name", "slug", "memberships__user__username")
    readonly_fields = ("slug", "created_by", "created_at")
    inlines = [TeamMembershipInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(member_count=Count("memberships"))

    @admin.display(description="members", ordering="member_count")
    def member_count(self, obj: Team) -> int:
        return obj.member_count

    def has_add_permission(self, request):
        # A team has an owner from its first moment: people create theirs on the site.
        return False

    def save_model(self, request, obj, form, change):
        # Through the service, so that the leaderboard's cached rows drop the old name.
        try:
            team_rename_unchecked(team=Team.objects.get(pk=obj.pk), name=obj.name)
        except TeamError as error:
            self.message_user(request, str(error), messages.ERROR)


@admin.register(TeamMembership)
class TeamMembershipAdmin(admin.ModelAdmin):
    list_display = ("team", "user", "role", "joined_at")
    list_filter = ("role",)
    search_fields = ("team__name", "user__username")
    autocomplete_fields = ("team", "user")


@admin.register(TeamInvitation)
class TeamInvitationAdmin(admin.ModelAdmin):
    list_display = ("team", "created_by", "created_at", "expires_at", "used_by", "used_at", "revoked_at")
    list_filter = (("used_at", admin.EmptyFieldListFilter), ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("team__name",)
    readonly_fields = ("team", "created_by", "token_hash", "created_at", "used_at", "used_by")
    actions = ["revoke"]

    def has_add_permission(self, request):
        # The link is shown once, to an owner on the team's page; one made here could never be shown.
        return False

    @admin.action(description="Withdraw the selected invitation links")
    def revoke(self, request, queryset):
        for invitation in queryset:
            invitation.revoke()
        self.message_user(request, "The selected links can no longer be used.", messages.INFO)
