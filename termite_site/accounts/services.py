from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from termite_site import ratelimit
from termite_site.accounts.models import (
    ApiToken,
    Team,
    TeamInvitation,
    TeamMembership,
    User,
    hash_token,
)
from termite_site.accounts.signals import team_renamed


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
