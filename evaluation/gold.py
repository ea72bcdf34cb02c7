"""Gold SQL at rest: encrypted with TERMITE_GOLD_KEY (Fernet), decrypted only by scoring and validation.

TERMITE_GOLD_KEY may list several comma-separated keys: the first encrypts, all of them decrypt, so a key
can be rotated (`manage.py rotate_gold_key`) without a moment when stored gold is unreadable.
"""

from __future__ import annotations

from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class GoldKeyError(RuntimeError):
    """Stored gold cannot be decrypted with the configured keys."""


@cache
def _fernet(keys: str) -> MultiFernet:
    return MultiFernet([Fernet(key.strip().encode()) for key in keys.split(",") if key.strip()])


def _current() -> MultiFernet:
    return _fernet(settings.TERMITE_GOLD_KEY)


def encrypt_gold(sql: str) -> str:
    return _current().encrypt(sql.encode()).decode()


def decrypt_gold(token: str) -> str:
    try:
        return _current().decrypt(token.encode()).decode()
    except InvalidToken:
        # Says which key is wrong, never what the token holds.
        raise GoldKeyError(
            "stored gold cannot be decrypted with TERMITE_GOLD_KEY (was the key changed?)"
        ) from None


def rotate_gold(token: str) -> str:
    """Re-encrypt with the first configured key."""
    try:
        return _current().rotate(token.encode()).decode()
    except InvalidToken:
        raise GoldKeyError(
            "stored gold cannot be decrypted with TERMITE_GOLD_KEY (was the key changed?)"
        ) from None
