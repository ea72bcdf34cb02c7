"""The link that confirms an e-mail address: a signed, expiring token, and what opening it finds.

The token is a TimestampSigner signature (keyed on SECRET_KEY, salted for this use alone) over the
account's id and a keyed digest of the address the link was sent to. So, as a contract:
- a token changed anywhere, or made for another use, is `invalid`;
- it works for TERMITE_EMAIL_CONFIRM_DAYS days after it was made, then it is `expired`;
- it confirms only the address it was sent to: once the account's address changes it is `invalid`;
- once used, or once the address is confirmed in any other way, it is `already_confirmed` and does nothing;
- the link shows the account's id but not the address (the digest is keyed, so not guessable either).
An account that changes its address and back again, within a link's life, finds the old link for that
address working again: harmless, since going back mails a new link to the same mailbox anyway.
Reading a token changes nothing: confirming is a POST of the confirm page, which mail scanners, which
open every link of a message, do not send.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.utils.crypto import salted_hmac

from termite_site.accounts.models import User

_SALT = "termite.accounts.email-confirmation"


class LinkState(enum.StrEnum):
    VALID = "valid"  # it would confirm the address
    CONFIRMED = "confirmed"  # it has just done so (never what reading a token finds)
    EXPIRED = "expired"
    INVALID = "invalid"
    ALREADY_CONFIRMED = "already_confirmed"


@dataclass(frozen=True)
class ConfirmationLink:
    state: LinkState
    user: User | None = None


def make_token(user: User) -> str:
    return signing.TimestampSigner(salt=_SALT).sign_object({"u": user.pk, "e": _address_digest(user.email)})


def read_token(token: str) -> ConfirmationLink:
    """What the link with this token would do now; changes nothing."""
    signer = signing.TimestampSigner(salt=_SALT)
    expired = False
    try:
        payload = signer.unsign_object(token, max_age=timedelta(days=settings.TERMITE_EMAIL_CONFIRM_DAYS))
    except signing.SignatureExpired:  # the signature is good: read it again, to say more than "expired"
        payload = signer.unsign_object(token)
        expired = True
    except (signing.BadSignature, ValueError):
        return ConfirmationLink(LinkState.INVALID)
    if not isinstance(payload, dict) or not isinstance(payload.get("u"), int):
        return ConfirmationLink(LinkState.INVALID)
    user = User.objects.filter(pk=payload["u"], is_active=True).first()
    if user is None or payload.get("e") != _address_digest(user.email):
        return ConfirmationLink(LinkState.INVALID)
    if user.email_confirmed:
        return ConfirmationLink(LinkState.ALREADY_CONFIRMED, user)
    if expired:
        return ConfirmationLink(LinkState.EXPIRED, user)
    return ConfirmationLink(LinkState.VALID, user)


def same_address(a: str, b: str) -> bool:
    """Whether two spellings are one mailbox, as far as this site cares: letter case aside."""
    return a.strip().lower() == b.strip().lower()


def _address_digest(email: str) -> str:
    return salted_hmac(_SALT, email.strip().lower(), algorithm="sha256").hexdigest()[:24]
