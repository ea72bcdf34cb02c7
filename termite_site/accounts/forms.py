from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from termite_site import ratelimit
from termite_site.accounts.models import Team, User
from termite_site.accounts.services import (
    login_attempt_reserve,
    login_attempts_forget,
    team_name_clean,
    team_name_taken,
)

if TYPE_CHECKING:  # generic in django-stubs only
    _SignupFormBase = UserCreationForm[User]
else:
    _SignupFormBase = UserCreationForm


class SignupForm(_SignupFormBase):
    class Meta:
        model = User
        fields = ("username", "email", "affiliation")
        help_texts = {"affiliation": _("University, company or lab; shown on your public submissions.")}

    def clean_email(self) -> str:
        email: str = self.cleaned_data["email"].strip()
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError(_("An account with this e-mail address already exists."))
        return email


class LoginForm(AuthenticationForm):
    """Django's login, refusing unchecked once an address or an account has made too many attempts."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "rate_limited": _("Too many login attempts. Wait a few minutes and try again."),
    }

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        request = cast(HttpRequest, self.request)  # LoginView always passes it
        if not login_attempt_reserve(ip=ratelimit.client_ip(request), username=username):
            raise forms.ValidationError(self.error_messages["rate_limited"], code="rate_limited")
        cleaned = super().clean()  # checks the password
        login_attempts_forget(username=username)
        return cleaned


class ProfileForm(forms.Form):
    """The account's own fields. Not a ModelForm: saving is user_profile_update's, which must see the
    address as it was (a new one needs confirming), and a ModelForm writes the new one onto the user."""

    email = User._meta.get_field("email").formfield()
    affiliation = User._meta.get_field("affiliation").formfield()

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        kwargs.setdefault("initial", {"email": user.email, "affiliation": user.affiliation})
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_email(self) -> str:
        email: str = self.cleaned_data["email"].strip()
        if User.objects.filter(email__iexact=email).exclude(pk=self.user.pk).exists():
            raise forms.ValidationError(_("An account with this e-mail address already exists."))
        return email


class ApiTokenForm(forms.Form):
    name = forms.CharField(label=_("Token name"), max_length=100, help_text=_("e.g. “cluster scripts”"))


class TeamForm(forms.Form):
    """A team's name, to create or rename it; `team` is the one being renamed."""

    name = forms.CharField(label=_("Team name"), max_length=120)

    def __init__(self, *args: Any, team: Team | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.team = team

    def clean_name(self) -> str:
        name = team_name_clean(self.cleaned_data["name"])
        if not name:
            raise forms.ValidationError(_("Give the team a name."))
        if team_name_taken(name, exclude=self.team):
            raise forms.ValidationError(_("A team named “%(name)s” already exists.") % {"name": name})
        return name
