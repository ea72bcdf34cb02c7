from __future__ import annotations

from django.conf import settings

from termite_site import ratelimit
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
