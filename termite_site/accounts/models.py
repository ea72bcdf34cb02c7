from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from django.contrib.auth.models import AbstractUser, AnonymousUser
from django.db import models
from django.db.models.functions import Lower
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from termite_site.accounts import stamps

TOKEN_PREFIX = "tmt_"


class User(AbstractUser):
    email = models.EmailField(_("e-mail address"), unique=True)
    affiliation = models.CharField(_("affiliation"), max_length=200, blank=True)
    # Confirmed unless said otherwise: every way staff create an account (the admin, createsuperuser,
    # create_user in a command or a script) counts as confirmed without knowing about this field, and the
    # one way that must not, self sign-up, goes through one service that starts it at None. Forgetting
    # the field in a new staff path thus errs on the side the issue asks for; sign-up is pinned by tests.
    email_confirmed_at = models.DateTimeField(
        _("e-mail confirmed at"),
        null=True,
        blank=True,
        default=timezone.now,
        help_text=_("Empty until a self-registered user opens the link sent to the address."),
    )

    @property
    def email_confirmed(self) -> bool:
        return self.email_confirmed_at is not None

    @property
    def must_confirm_email(self) -> bool:
        """Whether the account must confirm its address before uploading; staff never must."""
        return self.email_confirmed_at is None and not (self.is_staff or self.is_superuser)

    def confirm_email(self, *, email: str) -> bool:
        """Confirm the address, if it is still `email` and not yet confirmed; False when it was not.

        One conditional UPDATE, so that a link for an address changed in the meantime confirms nothing.
        """
        now = timezone.now()
        changed = User.objects.filter(pk=self.pk, email=email, email_confirmed_at__isnull=True).update(
            email_confirmed_at=now
        )
        if changed:
            self.email_confirmed_at = now
            stamps.forget([stamps.of_user(self.pk)])
        return bool(changed)

    def change_email(self, email: str) -> None:
        """Take a new address, unconfirmed until its link is opened."""
        self.email = email
        self.email_confirmed_at = None
        self.save(update_fields=["email", "email_confirmed_at"])


def hash_token(raw: str) -> str:
    # Tokens are 256-bit random values, so a fast unsalted hash is enough: nothing to brute-force.
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    """A named API token; only its hash is stored, the token itself is shown once at creation."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(_("name"), max_length=100)
    token_hash = models.CharField(max_length=64, unique=True)
    hint = models.CharField(max_length=12, help_text="The first characters, to tell tokens apart.")
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.hint}…)"

    @staticmethod
    def generate() -> str:
        return TOKEN_PREFIX + secrets.token_urlsafe(32)

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    def mark_used(self) -> None:
        self.last_used_at = timezone.now()
        self.save(update_fields=["last_used_at"])


class Team(models.Model):
    """A group of people who submit together. Its name is unique whatever its case; its slug, made from
    the first name, never changes, so that links to its page and the API's `team` stay valid."""

    name = models.CharField(_("name"), max_length=120)
    slug = models.SlugField(_("slug"), max_length=140, unique=True)
    created_by = models.ForeignKey(
        User, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("created by")
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    members: models.ManyToManyField[User, TeamMembership] = models.ManyToManyField(
        User, through="TeamMembership", related_name="teams"
    )

    class Meta:
        ordering = [Lower("name")]  # type: ignore[list-item]  # Django orders by expressions; the stubs say str
        constraints = [
            models.UniqueConstraint(
                Lower("name"),
                name="unique_team_name_ignoring_case",
                violation_error_message=_("A team with this name already exists."),
            )
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        # Its public page, which the leaderboard serves (it lists the team's public submissions).
        return reverse("leaderboard:team", args=[self.slug])

    def membership_of(self, user: User | AnonymousUser) -> TeamMembership | None:
        if not user.is_authenticated:
            return None
        return self.memberships.filter(user=user).first()

    def has_member(self, user: User | AnonymousUser) -> bool:
        return user.is_authenticated and self.memberships.filter(user=user).exists()

    def is_owner(self, user: User | AnonymousUser) -> bool:
        return (
            user.is_authenticated
            and self.memberships.filter(user=user, role=TeamMembership.Role.OWNER).exists()
        )


class TeamMembership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner", _("owner")
        MEMBER = "member", _("member")

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="team_memberships")
    role = models.CharField(_("role"), max_length=10, choices=Role.choices, default=Role.MEMBER)
    joined_at = models.DateTimeField(_("joined"), default=timezone.now)

    class Meta:
        ordering = ["joined_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="one_membership_per_team_and_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"

    @property
    def is_owner(self) -> bool:
        return self.role == self.Role.OWNER

    def make_owner(self) -> None:
        self.role = self.Role.OWNER
        self.save(update_fields=["role"])


class TeamInvitationQuerySet(models.QuerySet["TeamInvitation"]):
    def pending(self, now: datetime | None = None) -> TeamInvitationQuerySet:
        """Links that would still let someone in: not used, not revoked, not expired."""
        return self.filter(
            used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now or timezone.now()
        )


class TeamInvitation(models.Model):
    """A link that lets one person join a team, once, until it expires or an owner revokes it. Only the
    hash of its token is stored: the link is shown once, to the owner who made it."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    created_by = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = TeamInvitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"invitation to {self.team} ({self.created_at:%Y-%m-%d})"

    @staticmethod
    def generate() -> str:
        return secrets.token_urlsafe(32)

    def revoke(self) -> None:
        if self.revoked_at is None and self.used_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])
