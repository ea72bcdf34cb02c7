from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from termite_site import ratelimit
from termite_site.accounts.models import ApiToken, User, hash_token
from termite_site.audit import staff_action_record


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
