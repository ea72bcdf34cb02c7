from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from termite_site import ratelimit
from termite_site.accounts import confirmation, stamps
from termite_site.accounts.models import (
    ApiToken,
    Team,
    TeamInvitation,
    TeamMembership,
    User,
    hash_token,
)
from termite_site.accounts.signals import team_renamed
from termite_site.audit import staff_action_record

logger = logging.getLogger(__name__)


class TooManyConfirmationMails(Exception):
    """The account has asked for as many confirmation e-mails as it may this hour; the message says so."""


def user_sign_up(*, username: str, email: str, password: str, affiliation: str, site_url: str) -> User:
    """Create a self-registered account, unconfirmed, and mail it the link that confirms its address.

    The only way an account starts unconfirmed: every other way of making one counts as confirmed
    (see User.email_confirmed_at). `site_url` is the scheme and host the link points to.
    """
    user = User.objects.create_user(
        username=username, email=email, password=password, affiliation=affiliation, email_confirmed_at=None
    )
    email_confirmation_send(user=user, site_url=site_url)
    return user


def email_confirmation_send(*, user: User, site_url: str) -> None:
    """Mail the confirmation link to the account's address, in the active language.

    A mail server that fails is logged, not raised: the account is there either way, and the profile
    page offers a new link.
    """
    link = site_url.rstrip("/") + reverse("accounts:email_confirm", args=[confirmation.make_token(user)])
    context = {"user": user, "link": link, "days": settings.TERMITE_EMAIL_CONFIRM_DAYS}
    subject = " ".join(render_to_string("accounts/email_confirmation_subject.txt", context).split())
    message = EmailMultiAlternatives(
        subject, render_to_string("accounts/email_confirmation_email.txt", context), to=[user.email]
    )
    message.attach_alternative(
        render_to_string("accounts/email_confirmation_email.html", context), "text/html"
    )
    try:
        message.send()
    except OSError as error:  # smtplib's errors are OSErrors too
        logger.warning("the confirmation e-mail to user %s was not sent: %s", user.pk, error)


def email_confirmation_resend(*, user: User, site_url: str) -> None:
    """Mail a new link, if the account has not asked for too many this hour (TooManyConfirmationMails)."""
    _count_confirmation_mail(user=user)
    email_confirmation_send(user=user, site_url=site_url)


def email_confirm(*, token: str) -> confirmation.ConfirmationLink:
    """Confirm the address a link was sent to, if the link may: `confirmed` then, else what it found."""
    link = confirmation.read_token(token)
    if link.state is not confirmation.LinkState.VALID or link.user is None:
        return link
    if link.user.confirm_email(email=link.user.email):
        return confirmation.ConfirmationLink(confirmation.LinkState.CONFIRMED, link.user)
    return confirmation.read_token(token)  # the account changed in between: say what the link finds now


def user_profile_update(*, user: User, email: str, affiliation: str, site_url: str) -> bool:
    """Save the profile. A new address is unconfirmed until its own link, mailed to it here, is opened;
    True then. The same address in other letter case is no new address.

    Raises TooManyConfirmationMails, and changes nothing, when a new address would be one mail too many.
    """
    new_address = not confirmation.same_address(email, user.email)
    if new_address:
        _count_confirmation_mail(user=user)
        user.email_confirmed_at = None
    user.email, user.affiliation = email, affiliation
    user.save(update_fields=["email", "affiliation", "email_confirmed_at"])
    if new_address:
        email_confirmation_send(user=user, site_url=site_url)
    return new_address


def users_mark_email_confirmed(*, users: QuerySet[User]) -> int:
    """Staff vouch for these accounts' addresses (the admin's action); how many were unconfirmed."""
    unconfirmed = list(users.filter(email_confirmed_at__isnull=True).values_list("pk", flat=True))
    with transaction.atomic():
        stamps.forget(map(stamps.of_user, unconfirmed))
        return User.objects.filter(pk__in=unconfirmed, email_confirmed_at__isnull=True).update(
            email_confirmed_at=timezone.now()
        )


def _count_confirmation_mail(*, user: User) -> None:
    # Each mail goes to an address the account chose, so this bounds how often the site can be made to
    # write to anyone. The first link, at sign-up, is not counted: the sign-up limit bounds it.
    limit, window = settings.TERMITE_CONFIRM_MAIL_RATE_LIMIT
    if ratelimit.hit("confirm-mail", str(user.pk), limit=limit, window=window):
        raise TooManyConfirmationMails(
            _(
                "You have asked for %(n)s confirmation e-mails in the last hour, the most there may be. Try again later."
            )
            % {"n": limit}
        )


def api_token_create(*, user: User, name: str) -> tuple[ApiToken, str]:
    """Create a token and return it with its secret value, which is never retrievable again."""
    raw = ApiToken.generate()
    token = ApiToken.objects.create(
        user=user, name=name.strip() or "token", token_hash=hash_token(raw), hint=raw[:8]
    )
    return token, raw


def api_token_authenticate(*, raw: str) -> User | None:
    """The active user owning this token, or None for an unknown, revoked or malformed token."""
    if not raw:
        return None
    token = ApiToken.objects.active().select_related("user").filter(token_hash=hash_token(raw)).first()
    if token is None or not token.user.is_active:
        return None
    token.mark_used()
    return token.user


def login_attempt_reserve(*, ip: str, username: str) -> bool:
    """Count a login attempt against its address and its account; False when either is over its limit.

    Call it before checking the password, and check none when it says False: attempts made at the same
    time each take their own number, so no more of them than the limit are ever checked.
    """
    ip_limit, ip_window = settings.LOGIN_RATE_LIMIT_PER_IP
    if ratelimit.hit("login-ip", ip, limit=ip_limit, window=ip_window):
        return False
    account_limit, account_window = settings.LOGIN_RATE_LIMIT_PER_ACCOUNT
    return not ratelimit.hit("login-account", _account(username), limit=account_limit, window=account_window)


def login_attempts_forget(*, username: str) -> None:
    """After a successful login its account starts afresh; its address keeps its count."""
    ratelimit.reset("login-account", _account(username), window=settings.LOGIN_RATE_LIMIT_PER_ACCOUNT[1])


def _account(username: str) -> str:
    return username.strip().lower()


# Teams: a user creates one and becomes its owner; owners make invitation links, each letting one person
# join once before it expires; owners remove members and make them owners; a member may leave, but a team
# always keeps an owner. Every refusal says why, in words for the person who asked.


class TeamError(Exception):
    """A change to a team was refused; the message says why."""


class InvitationRefused(Exception):
    """An invitation link cannot be used; `code` is unknown, member, revoked, used or expired."""

    def __init__(self, message: str, *, code: str, team: Team | None = None):
        super().__init__(message)
        self.code = code
        self.team = team


def team_name_clean(name: str) -> str:
    """The name as stored: runs of spaces made one, and none at either end."""
    return " ".join(name.split())


def team_name_taken(name: str, *, exclude: Team | None = None) -> bool:
    teams = Team.objects.filter(name__iexact=team_name_clean(name))
    if exclude is not None:
        teams = teams.exclude(pk=exclude.pk)
    return teams.exists()


def _name_refusal(name: str) -> str:
    return _("A team named “%(name)s” already exists.") % {"name": name}


def team_create(*, user: User, name: str) -> Team:
    """A new team named `name` (unique whatever its case), with `user` as its owner. Raises TeamError."""
    name = team_name_clean(name)
    if not name:
        raise TeamError(_("Give the team a name."))
    if team_name_taken(name):
        raise TeamError(_name_refusal(name))
    try:
        with transaction.atomic():
            team = Team.objects.create(name=name, slug=_free_slug(name), created_by=user)
            TeamMembership.objects.create(team=team, user=user, role=TeamMembership.Role.OWNER)
    except IntegrityError:  # created at the same moment by someone else
        raise TeamError(_name_refusal(name)) from None
    return team


def _free_slug(name: str) -> str:
    base = slugify(name)[:120] or "team"
    slug, n = base, 1
    while Team.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def _require_owner(team: Team, user: User) -> None:
    if not team.is_owner(user):
        raise PermissionDenied("Only the team's owners may do this.")


def team_rename(*, team: Team, name: str, by: User) -> Team:
    """Rename a team (its slug, in links, stays). Only an owner may; raises TeamError for a bad name."""
    _require_owner(team, by)
    return team_rename_unchecked(team=team, name=name)


def team_rename_unchecked(*, team: Team, name: str) -> Team:
    """`team_rename` without the owner check, for staff in the admin."""
    name = team_name_clean(name)
    if not name:
        raise TeamError(_("Give the team a name."))
    if team_name_taken(name, exclude=team):
        raise TeamError(_name_refusal(name))
    if name != Team.objects.filter(pk=team.pk).values_list("name", flat=True).first():
        team.name = name
        team.save(update_fields=["name"])
        team_renamed.send(sender=Team, team=team)
    return team


def team_invitation_create(*, team: Team, by: User) -> tuple[TeamInvitation, str]:
    """A new invitation link's record and its token, which is never retrievable again. Owners only."""
    _require_owner(team, by)
    raw = TeamInvitation.generate()
    now = timezone.now()
    invitation = TeamInvitation.objects.create(
        team=team,
        created_by=by,
        token_hash=hash_token(raw),
        created_at=now,
        expires_at=now + timedelta(days=settings.TERMITE_TEAM_INVITATION_DAYS),
    )
    return invitation, raw


def team_invitation_revoke(*, invitation: TeamInvitation, by: User) -> None:
    _require_owner(invitation.team, by)
    invitation.revoke()


def team_invitation_find(*, raw: str, user: User) -> TeamInvitation:
    """The invitation of a link, when `user` may join by it now; else raises InvitationRefused."""
    invitation = (
        TeamInvitation.objects.select_related("team").filter(token_hash=hash_token(raw)).first()
        if raw
        else None
    )
    if invitation is None:
        raise InvitationRefused(
            _("This invitation link is not valid. Check that you copied all of it."), code="unknown"
        )
    team = invitation.team
    if team.has_member(user):
        raise InvitationRefused(
            _("You are already a member of %(team)s.") % {"team": team.name}, code="member", team=team
        )
    if invitation.revoked_at is not None:
        raise InvitationRefused(
            _("This invitation link to %(team)s was withdrawn by its owners. Ask them for a new one.")
            % {"team": team.name},
            code="revoked",
            team=team,
        )
    if invitation.used_at is not None:
        raise InvitationRefused(
            _(
                "This invitation link to %(team)s was already used: each link lets one person in. Ask its"
                " owners for a new one."
            )
            % {"team": team.name},
            code="used",
            team=team,
        )
    if invitation.expires_at <= timezone.now():
        raise InvitationRefused(
            _("This invitation link to %(team)s expired on %(date)s. Ask its owners for a new one.")
            % {"team": team.name, "date": f"{invitation.expires_at:%Y-%m-%d}"},
            code="expired",
            team=team,
        )
    return invitation


def team_invited_to(*, raw: str) -> Team | None:
    """The team a link would let someone into now, for the pages an invitee sees before logging in; None
    for a link that is unknown, used, withdrawn or expired (its own page says which, after the login)."""
    invitation = (
        TeamInvitation.objects.pending().select_related("team").filter(token_hash=hash_token(raw)).first()
    )
    return invitation.team if invitation is not None else None


def team_join(*, raw: str, user: User) -> Team:
    """Join the team of an invitation link, using the link up. Raises InvitationRefused."""
    invitation = team_invitation_find(raw=raw, user=user)
    now = timezone.now()
    try:
        with transaction.atomic():
            # Claimed in one UPDATE: of two people using one link at once, one gets in.
            claimed = (
                TeamInvitation.objects.pending(now).filter(pk=invitation.pk).update(used_at=now, used_by=user)
            )
            if claimed != 1:
                team_invitation_find(raw=raw, user=user)  # raises, saying what happened meanwhile
            TeamMembership.objects.create(team=invitation.team, user=user, joined_at=now)
    except IntegrityError:  # joined by another link at the same moment; this link stays unused
        team_invitation_find(raw=raw, user=user)
        raise
    return invitation.team


def team_member_remove(*, team: Team, user: User, by: User) -> None:
    """An owner takes someone out of the team; taking oneself out is leaving."""
    if user == by:
        team_leave(team=team, user=user)
        return
    _require_owner(team, by)
    team.memberships.filter(user=user).delete()


def team_member_make_owner(*, team: Team, user: User, by: User) -> None:
    _require_owner(team, by)
    membership = team.memberships.filter(user=user).first()
    if membership is None:
        raise TeamError(_("%(user)s is not a member of %(team)s.") % {"user": user, "team": team.name})
    membership.make_owner()


def team_leave(*, team: Team, user: User) -> None:
    """A member leaves. Their submissions stay the team's. The last owner may not leave: a team keeps one."""
    with transaction.atomic():
        memberships = list(team.memberships.select_for_update())
        mine = next((m for m in memberships if m.user_id == user.pk), None)
        if mine is None:
            raise TeamError(_("You are not a member of %(team)s.") % {"team": team.name})
        if mine.is_owner and not any(m.is_owner for m in memberships if m is not mine):
            raise TeamError(
                _("You are the only owner of %(team)s: make another member an owner before you leave.")
                % {"team": team.name}
            )
        mine.delete()


class AccountNotDisabled(Exception):
    """The account cannot be disabled from here; the message says why."""


def account_disable(*, user: User, by: User) -> int:
    """Disable `user`'s account and revoke its API tokens; the number of tokens revoked.

    A disabled account cannot log in, and its open sessions end at their next request (Django's
    authentication refuses inactive users); its revoked tokens stay revoked should it be enabled again in
    the admin. Raises AccountNotDisabled for one's own account, a staff account (take its staff status
    away in the admin first) or one already disabled; nothing changes then.
    """
    if user.pk == by.pk:
        raise AccountNotDisabled(_("You cannot disable your own account."))
    if user.is_staff or user.is_superuser:
        raise AccountNotDisabled(
            _("%(user)s is a staff account: take its staff status away in the admin first.")
            % {"user": user.get_username()}
        )
    if not user.is_active:
        raise AccountNotDisabled(_("%(user)s is already disabled.") % {"user": user.get_username()})
    with transaction.atomic():
        user.is_active = False
        user.save(update_fields=["is_active"])
        tokens = list(user.api_tokens.active())
        for token in tokens:
            token.revoke()
        staff_action_record(
            by=by, objects=[user], message=f"Disabled the account and revoked {len(tokens)} API token(s)."
        )
    return len(tokens)
