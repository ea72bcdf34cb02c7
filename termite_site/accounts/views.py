from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from termite_site import ratelimit
from termite_site.accounts.forms import ApiTokenForm, LoginForm, ProfileForm, SignupForm
from termite_site.accounts.services import api_token_create


class LoginView(auth_views.LoginView):
    """Django's login, refusing with 429 once an address or an account has made too many attempts."""

    form_class = LoginForm
    template_name = "accounts/login.html"

    def form_invalid(self, form: LoginForm) -> HttpResponse:
        response = super().form_invalid(form)
        if form.has_error(NON_FIELD_ERRORS, "rate_limited"):
            response.status_code = 429
        return response


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("accounts:profile")
    form = SignupForm(request.POST or None)
    if request.method == "POST":
        limit, window = settings.SIGNUP_RATE_LIMIT_PER_IP
        if ratelimit.hit("signup-ip", ratelimit.client_ip(request), limit=limit, window=window):
            form.add_error(None, _("Too many sign-ups from your address. Try again later."))
            return render(request, "accounts/signup.html", {"form": form}, status=429)
        if form.is_valid():
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, _("Welcome to Termite Portal, %(name)s.") % {"name": user.username})
            return redirect("accounts:profile")
    return render(request, "accounts/signup.html", {"form": form})


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    form = ProfileForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Your profile was saved."))
        return redirect("accounts:profile")
    return _render_profile(request, profile_form=form)


def _render_profile(request: HttpRequest, **context) -> HttpResponse:
    context.setdefault("profile_form", ProfileForm(instance=request.user))
    context.setdefault("token_form", ApiTokenForm())
    context["tokens"] = request.user.api_tokens.all()
    return render(request, "accounts/profile.html", context)


@login_required
@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    form = ApiTokenForm(request.POST)
    if not form.is_valid():
        return _render_profile(request, token_form=form)
    _token, raw = api_token_create(user=request.user, name=form.cleaned_data["name"])
    # Rendered, not redirected: the raw token must not travel through the session or a URL.
    return _render_profile(request, new_token=raw)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(request.user.api_tokens, pk=token_id)
    token.revoke()
    messages.success(request, _("Token “%(name)s” was revoked.") % {"name": token.name})
    return redirect("accounts:profile")
