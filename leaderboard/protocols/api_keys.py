"""A run's API key at rest: Fernet with keys derived from TERMITE_GOLD_KEY by HKDF, under a purpose label
of their own, so the portal has one secret to manage and a key for the gold never encrypts anything else.

Every key TERMITE_GOLD_KEY lists derives one (the first encrypts, all decrypt), so rotating the gold key
keeps the stored API keys readable until the old key is dropped. The plain key is read only by the
runner, to call the endpoint; it is never shown, logged or sent anywhere else.
"""

from __future__ import annotations

import base64
from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

PURPOSE = b"termite-portal protocol-run api-key v1"


class ApiKeyUnreadable(RuntimeError):
    """The stored key cannot be decrypted with the configured TERMITE_GOLD_KEY."""


def _derive(gold_key: str) -> Fernet:
    material = base64.urlsafe_b64decode(gold_key.strip().encode())
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=PURPOSE).derive(material)
    return Fernet(base64.urlsafe_b64encode(derived))


@cache
def _fernet(keys: str) -> MultiFernet:
    return MultiFernet([_derive(key) for key in keys.split(",") if key.strip()])


def encrypt_api_key(raw: str) -> str:
    return _fernet(settings.TERMITE_GOLD_KEY).encrypt(raw.encode()).decode()


def decrypt_api_key(token: str) -> str:
    try:
        return _fernet(settings.TERMITE_GOLD_KEY).decrypt(token.encode()).decode()
    except InvalidToken:
        raise ApiKeyUnreadable(
            "the run's API key cannot be decrypted (was TERMITE_GOLD_KEY changed?)"
        ) from None
