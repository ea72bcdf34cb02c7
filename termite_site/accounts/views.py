from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import Resolver404, resolve, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from termite_site import ratelimit
from termite_site.accounts import services
from termite_site.accounts.confirmation import LinkState, read_token
from termite_site.accounts.forms import ApiTokenForm, LoginForm, ProfileForm, SignupForm, TeamForm
from termite_site.accounts.http import AuthenticatedHttpRequest
from termite_site.accounts.models import Team, TeamMembership

if TYPE_CHECKING:  # generic in django-stubs only
    _LoginViewBase = auth_views.LoginView[LoginForm]
else:
    _LoginViewBase = auth_views.LoginView


class LoginView(_LoginViewBase):
    """Django's login, refusing with 429 once an address or an account has made too many attempts."""

    form_class = LoginForm
    template_name = "accounts/login.html"

    def form_invalid(self, form: LoginForm) -> HttpResponse:
        response = super().form_invalid(form)
        if form.has_error(NON_FIELD_ERRORS, "rate_limited"):
            response.status_code = 429
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["invited_to"] = _invited_to(context["next"])  # Django's `next`, already checked as local
        return context


def _safe_next(request: HttpRequest) -> str:
    """The page of this site to go on to (`next`, as Django's login takes it), or "" for none or another
    site's."""
    wanted = request.POST.get("next") or request.GET.get("next", "")
    safe = url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return wanted if safe else ""


def _invited_to(next_url: str) -> Team | None:
    """The team of the invitation link an invitee not logged in was sent on from, when `next_url` is one:
    the login and sign-up pages name it, so that the invitee knows why to log in."""
    try:
        match = resolve(urlsplit(next_url).path)
    except Resolver404:
        return None
    if match.view_name != "accounts:team_join":
        return None
    return services.team_invited_to(raw=match.kwargs["token"])


def signup(request: HttpRequest) -> HttpResponse:
    next_url = _safe_next(request)
    if request.user.is_authenticated:
        return redirect(next_url or "accounts:profile")
    form = SignupForm(request.POST or None)
    context = {"form": form, "next": next_url, "invited_to": _invited_to(next_url)}
    if request.method == "POST":
        limit, window = settings.SIGNUP_RATE_LIMIT_PER_IP
        if ratelimit.hit("signup-ip", ratelimit.client_ip(request), limit=limit, window=window):
            form.add_error(None, _("Too many sign-ups from your address. Try again later."))
            return render(request, "accounts/signup.html", context, status=429)
        if form.is_valid():
            user = services.user_sign_up(
                username=form.cleaned_data["username"],
                email=form.cleaned_data["email"],
                password=form.cleaned_data["password1"],
                affiliation=form.cleaned_data["affiliation"],
                site_url=_site_url(request),
            )
            login(request, user)
            messages.success(request, _("Welcome to Termite Portal, %(name)s.") % {"name": user.username})
            messages.info(
                request,
                _(
                    "We have sent a link to %(email)s: open it to confirm your address before your first upload."
                )
                % {"email": user.email},
            )
            # An invitee goes on to the invitation: joining a team needs no confirmed address.
            return redirect(next_url or "accounts:profile")
    return render(request, "accounts/signup.html", context)


@login_required
def profile(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ProfileForm(request.POST or None, user=request.user)
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            new_address = services.user_profile_update(
                user=request.user,
                email=form.cleaned_data["email"],
                affiliation=form.cleaned_data["affiliation"],
                site_url=_site_url(request),
            )
        except services.TooManyConfirmationMails as problem:
            form.add_error("email", str(problem))
            status = 429
        else:
            messages.success(request, _("Your profile was saved."))
            if new_address:
                messages.info(
                    request,
                    _("We have sent a link to %(email)s: open it to confirm your new address.")
                    % {"email": request.user.email},
                )
            return redirect("accounts:profile")
    return _render_profile(request, status=status, profile_form=form)


def _render_profile(request: AuthenticatedHttpRequest, *, status: int = 200, **context: Any) -> HttpResponse:
    context.setdefault("profile_form", ProfileForm(user=request.user))
    context.setdefault("token_form", ApiTokenForm())
    context["tokens"] = request.user.api_tokens.all()
    return render(request, "accounts/profile.html", context, status=status)


def _site_url(request: HttpRequest) -> str:
    """Scheme and host of this request, for links in e-mails (the host is one ALLOWED_HOSTS accepts)."""
    return request.build_absolute_uri("/").rstrip("/")


@login_required
@require_POST
def email_confirmation_resend(request: AuthenticatedHttpRequest) -> HttpResponse:
    if request.user.email_confirmed:
        messages.info(request, _("Your e-mail address is already confirmed."))
    else:
        try:
            services.email_confirmation_resend(user=request.user, site_url=_site_url(request))
        except services.TooManyConfirmationMails as problem:
            return _render_profile(request, status=429, confirmation_error=str(problem))
        messages.success(request, _("A new link is on its way to %(email)s.") % {"email": request.user.email})
    return redirect(_safe_next(request) or "accounts:profile")


# A link that cannot confirm answers with an error status, so that the failure shows in logs too.
_CONFIRM_STATUS = {LinkState.INVALID: 400, LinkState.EXPIRED: 410}


@require_http_methods(["GET", "POST"])
def email_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """The page a confirmation link opens. Opening it confirms nothing: mail scanners open links too; the
    page's button POSTs, and that confirms. Anyone holding the link may, logged in or not."""
    link = services.email_confirm(token=token) if request.method == "POST" else read_token(token)
    return render(
        request,
        "accounts/email_confirm.html",
        {"link": link, "state": link.state.value, "days": settings.TERMITE_EMAIL_CONFIRM_DAYS},
        status=_CONFIRM_STATUS.get(link.state, 200),
    )


@login_required
@require_POST
def token_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ApiTokenForm(request.POST)
    if not form.is_valid():
        return _render_profile(request, token_form=form)
    _token, raw = services.api_token_create(user=request.user, name=form.cleaned_data["name"])
    # Rendered, not redirected: the raw token must not travel through the session or a URL.
    return _render_profile(request, new_token=raw)


@login_required
@require_POST
def token_revoke(request: AuthenticatedHttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(request.user.api_tokens, pk=token_id)
    token.revoke()
    messages.success(request, _("Token “%(name)s” was revoked.") % {"name": token.name})
    return redirect("accounts:profile")


# Teams. The pages here are for members; the public page of a team, with its submissions, is the
# leaderboard's (leaderboard:team).


@login_required
def team_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Your teams, and a new one."""
    form = TeamForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            team = services.team_create(user=request.user, name=form.cleaned_data["name"])
        except services.TeamError as error:
            form.add_error("name", str(error))
        else:
            messages.success(request, _("Team “%(team)s” was created.") % {"team": team.name})
            return redirect("accounts:team_detail", slug=team.slug)
    memberships = request.user.team_memberships.select_related("team").order_by("team__name")
    status = 400 if form.errors else 200
    return render(request, "accounts/teams.html", {"form": form, "memberships": memberships}, status=status)


def _team_of_member(request: HttpRequest, slug: str) -> tuple[Team, TeamMembership]:
    team = get_object_or_404(Team, slug=slug)
    membership = team.membership_of(request.user)
    if membership is None:
        raise Http404("No such team of yours.")
    return team, membership


@login_required
def team_detail(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    team, membership = _team_of_member(request, slug)
    return _render_team(request, team, membership)


def _render_team(
    request: HttpRequest, team: Team, membership: TeamMembership, *, status: int = 200, **context: Any
) -> HttpResponse:
    context.setdefault("rename_form", TeamForm(initial={"name": team.name}, team=team))
    context.update(
        {
            "team": team,
            "membership": membership,
            "memberships": team.memberships.select_related("user"),
            "invitations": team.invitations.pending().select_related("created_by")
            if membership.is_owner
            else [],
            "invitation_days": settings.TERMITE_TEAM_INVITATION_DAYS,
        }
    )
    return render(request, "accounts/team_detail.html", context, status=status)


@login_required
@require_POST
def team_rename(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    team, membership = _team_of_member(request, slug)
    form = TeamForm(request.POST, team=team)
    if form.is_valid():
        try:
            services.team_rename(team=team, name=form.cleaned_data["name"], by=request.user)
        except services.TeamError as error:
            form.add_error("name", str(error))
        else:
            messages.success(request, _("The team is now called “%(team)s”.") % {"team": team.name})
            return redirect("accounts:team_detail", slug=team.slug)
    team.refresh_from_db()
    return _render_team(request, team, membership, rename_form=form, status=400)


@login_required
@require_http_methods(["GET", "POST"])
def team_invitation_create(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    team, membership = _team_of_member(request, slug)
    if request.method == "GET":
        # The address of the page that showed a new link, opened again (a reload, the history): the link
        # is not kept, so the team's page with the links still unused answers instead.
        messages.info(
            request,
            _(
                "An invitation link is shown once, when it is made. Those not used yet are listed here; make"
                " a new one if you did not copy yours."
            ),
        )
        return redirect(reverse("accounts:team_detail", args=[team.slug]) + "#invitations")
    _invitation, raw = services.team_invitation_create(team=team, by=request.user)
    link = request.build_absolute_uri(reverse("accounts:team_join", args=[raw]))
    # Rendered, not redirected: the link must not travel through the session.
    return _render_team(request, team, membership, new_link=link)


@login_required
@require_POST
def team_invitation_revoke(request: AuthenticatedHttpRequest, slug: str, invitation_id: int) -> HttpResponse:
    team, _membership = _team_of_member(request, slug)
    invitation = get_object_or_404(team.invitations, pk=invitation_id)
    services.team_invitation_revoke(invitation=invitation, by=request.user)
    messages.success(request, _("The invitation link was withdrawn."))
    return redirect("accounts:team_detail", slug=team.slug)


@login_required
@require_POST
def team_member_remove(request: AuthenticatedHttpRequest, slug: str, user_id: int) -> HttpResponse:
    team, _membership = _team_of_member(request, slug)
    member = get_object_or_404(team.members, pk=user_id)
    try:
        services.team_member_remove(team=team, user=member, by=request.user)
    except services.TeamError as error:
        messages.error(request, str(error))
        return redirect("accounts:team_detail", slug=team.slug)
    if member == request.user:
        messages.success(request, _("You left %(team)s.") % {"team": team.name})
        return redirect("accounts:team_list")
    messages.success(request, _("%(user)s is no longer in %(team)s.") % {"user": member, "team": team.name})
    return redirect("accounts:team_detail", slug=team.slug)


@login_required
@require_POST
def team_member_make_owner(request: AuthenticatedHttpRequest, slug: str, user_id: int) -> HttpResponse:
    team, _membership = _team_of_member(request, slug)
    member = get_object_or_404(team.members, pk=user_id)
    services.team_member_make_owner(team=team, user=member, by=request.user)
    messages.success(
        request, _("%(user)s is now an owner of %(team)s.") % {"user": member, "team": team.name}
    )
    return redirect("accounts:team_detail", slug=team.slug)


@login_required
@require_POST
def team_leave(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    team, _membership = _team_of_member(request, slug)
    try:
        services.team_leave(team=team, user=request.user)
    except services.TeamError as error:
        messages.error(request, str(error))
        return redirect("accounts:team_detail", slug=team.slug)
    messages.success(request, _("You left %(team)s.") % {"team": team.name})
    return redirect("accounts:team_list")


# How a refused invitation link answers: gone for good, or never there.
_REFUSAL_STATUS = {"unknown": 404, "member": 409, "revoked": 410, "used": 410, "expired": 410}


@login_required
def team_join(request: AuthenticatedHttpRequest, token: str) -> HttpResponse:
    """An invitation link: GET says which team it is for, POST joins it (a link opened by a mail
    client's preview must not join anyone)."""
    try:
        if request.method == "POST":
            team = services.team_join(raw=token, user=request.user)
        else:
            invitation = services.team_invitation_find(raw=token, user=request.user)
            return render(request, "accounts/team_join.html", {"team": invitation.team})
    except services.InvitationRefused as refusal:
        context = {"team": refusal.team, "refusal": str(refusal), "member": refusal.code == "member"}
        return render(request, "accounts/team_join.html", context, status=_REFUSAL_STATUS[refusal.code])
    messages.success(request, _("Welcome to %(team)s.") % {"team": team.name})
    return redirect("accounts:team_detail", slug=team.slug)
