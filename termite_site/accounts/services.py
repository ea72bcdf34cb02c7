from __future__ import annotations

from termite_site.accounts.models import ApiToken, User, hash_token


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
