from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from termite_site.accounts import views

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

app_name = "accounts"


def _done(name: str) -> StrPromise:
    return reverse_lazy(f"accounts:{name}")


urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("profile/", views.profile, name="profile"),
    path("confirm/resend/", views.email_confirmation_resend, name="email_confirmation_resend"),
    path("confirm/<str:token>/", views.email_confirm, name="email_confirm"),
    path("tokens/", views.token_create, name="token_create"),
    path("tokens/<int:token_id>/revoke/", views.token_revoke, name="token_revoke"),
    path("teams/", views.team_list, name="team_list"),
    path("teams/join/<str:token>/", views.team_join, name="team_join"),
    path("teams/<slug:slug>/", views.team_detail, name="team_detail"),
    path("teams/<slug:slug>/rename/", views.team_rename, name="team_rename"),
    path("teams/<slug:slug>/invitations/", views.team_invitation_create, name="team_invitation_create"),
    path(
        "teams/<slug:slug>/invitations/<int:invitation_id>/revoke/",
        views.team_invitation_revoke,
        name="team_invitation_revoke",
    ),
    path(
        "teams/<slug:slug>/members/<int:user_id>/remove/", views.team_member_remove, name="team_member_remove"
    ),
    path(
        "teams/<slug:slug>/members/<int:user_id>/owner/",
        views.team_member_make_owner,
        name="team_member_make_owner",
    ),
    path("teams/<slug:slug>/leave/", views.team_leave, name="team_leave"),
    path(
        "password/change/",
        auth_views.PasswordChangeView.as_view(
            template_name="accounts/password_change.html", success_url=_done("password_change_done")
        ),
        name="password_change",
    ),
    path(
        "password/change/done/",
        auth_views.PasswordChangeDoneView.as_view(template_name="accounts/password_change_done.html"),
        name="password_change_done",
    ),
    path(
        "password/reset/",
        auth_views.PasswordResetView.as_view(
            template_name="accounts/password_reset.html",
            email_template_name="accounts/password_reset_email.txt",
            subject_template_name="accounts/password_reset_subject.txt",
            success_url=_done("password_reset_done"),
        ),
        name="password_reset",
    ),
    path(
        "password/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(template_name="accounts/password_reset_done.html"),
        name="password_reset_done",
    ),
    path(
        "password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            template_name="accounts/password_reset_confirm.html", success_url=_done("password_reset_complete")
        ),
        name="password_reset_confirm",
    ),
    path(
        "password/reset/complete/",
        auth_views.PasswordResetCompleteView.as_view(template_name="accounts/password_reset_complete.html"),
        name="password_reset_complete",
    ),
]
