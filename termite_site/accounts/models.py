from __future__ import annotations

import hashlib
import secrets

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

TOKEN_PREFIX = "tmt_"


class User(AbstractUser):
    email = models.EmailField(_("e-mail address"), unique=True)
    affiliation = models.CharField(_("affiliation"), max_length=200, blank=True)


def hash_token(raw: str) -> str:
    # Tokens are 256-bit random values, so a fast unsalted hash is enough: nothing to brute-force.
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet):
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
