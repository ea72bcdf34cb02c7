"""Calling a participant's model endpoint (minimal version, to be replaced by the safe client).

This branch's stand-in keeps the interface the protocol runner calls: a plain http/https POST of JSON
that allows loopback addresses only, and only with TERMITE_PROTOCOL_ALLOW_LOOPBACK=1. The full client
(public addresses checked at connect time, redirects refused, TLS) replaces it with the same signatures.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings


class OutboundRefused(Exception):
    """The URL, or an address it resolves to, may not be called (the message says why)."""


class OutboundFailed(Exception):
    """Allowed, but did not complete: timeout, connection error, TLS, an answer over max_bytes, a redirect."""


@dataclass(frozen=True)
class OutboundResponse:
    status: int
    body: bytes
    headers: dict[str, str]  # names lower-cased


def check_url(url: str) -> None:
    """The static check a form runs before saving: scheme, host, port, no credentials in the URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise OutboundRefused(f"not a valid URL ({error})") from None
    if parts.scheme not in ("http", "https"):
        raise OutboundRefused("the URL must start with https://")
    if not parts.hostname:
        raise OutboundRefused("the URL has no host")
    if parts.username is not None or parts.password is not None:
        raise OutboundRefused("the URL must not hold credentials: give the API key in its own field")
    if port == 0:
        raise OutboundRefused("the URL's port must be between 1 and 65535")


def post_json(
    url: str, payload: object, *, headers: Mapping[str, str], timeout: float, max_bytes: int
) -> OutboundResponse:
    check_url(url)
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = _loopback_address(host, port)
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    body = json.dumps(payload).encode()
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(address, port, timeout=timeout)
    try:
        connection.request(
            "POST",
            path,
            body=body,
            headers={"Host": host, "Content-Type": "application/json", **headers},
        )
        response = connection.getresponse()
        data = response.read(max_bytes + 1)
    except (OSError, http.client.HTTPException) as error:
        raise OutboundFailed(f"the request did not complete ({type(error).__name__})") from None
    finally:
        connection.close()
    if 300 <= response.status < 400:
        raise OutboundFailed(f"the endpoint answered with a redirect ({response.status}), not followed")
    if len(data) > max_bytes:
        raise OutboundFailed(f"the answer is larger than {max_bytes} bytes")
    return OutboundResponse(
        status=response.status,
        body=data,
        headers={name.lower(): value for name, value in response.getheaders()},
    )


def _loopback_address(host: str, port: int) -> str:
    if not settings.TERMITE_PROTOCOL_ALLOW_LOOPBACK:
        raise OutboundRefused(
            "this build calls loopback endpoints only, with TERMITE_PROTOCOL_ALLOW_LOOPBACK=1"
        )
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise OutboundFailed(f"the host {host} does not resolve") from None
    addresses = [info[4][0] for info in found]
    if not addresses or not all(ipaddress.ip_address(a).is_loopback for a in addresses):
        raise OutboundRefused(f"{host} resolves to an address that is not loopback")
    return addresses[0]
