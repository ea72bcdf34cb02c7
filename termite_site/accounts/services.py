from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from termite_site import ratelimit
from termite_site.accounts import confirmation
from termite_site.accounts.models import ApiToken, User, hash_token

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
    return users.filter(email_confirmed_at__isnull=True).update(email_confirmed_at=timezone.now())


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
