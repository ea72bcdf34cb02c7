"""The one way the portal calls a URL a user gave (a model's endpoint): a JSON POST that cannot be turned
against the portal's own network (server-side request forgery).

Every call keeps these rules, each a layer:

1. The URL (`check_url`, which a form runs before saving and `post_json` runs again): `https`, a host,
   a port from 1 to 65535, no user name or password in it, no space or control character, at most
   `MAX_URL_CHARS`. A host written as an address is judged as in 2 at once.
2. The host is resolved once, by `resolve`, and every address it resolves to is judged: the call is
   refused unless all of them are public, so a name that also points inside (a public and a private
   address) is refused. Not public: private, loopback, link-local, multicast, reserved, unspecified,
   shared (100.64.0.0/10), site-local, the cloud metadata addresses (`METADATA_ADDRESSES`), and an
   IPv6 address carrying one of those in IPv4 (mapped `::ffff:a.b.c.d`, 6to4, NAT64). The refusal of a
   name says only that an address of it is not public: never which address or what kind (the portal's
   resolver may know internal names, and the message would tell them), which the log keeps for staff.
3. The socket connects to the addresses judged in 2, never to the name again, so a resolver that
   answers differently the second time (DNS rebinding) cannot reach a private address.
4. TLS verifies the server's certificate against the host's name (which is also sent as SNI), with the
   system's certificate authorities; the `Host` header is the name.
5. Redirects are never followed: a 3xx answer is `OutboundFailed`, naming its status.
6. `timeout` bounds the whole call after the name is resolved (connecting, TLS, sending, every read), not
   each step, so a server that drips its answer a byte at a time cannot hold a worker longer. Resolving
   keeps the system resolver's own timeouts.
7. At most `max_bytes` of the body are read; a longer answer is `OutboundFailed`.
8. No proxy: `http.client` reads no proxy variables from the environment, unlike `urllib`.

`TERMITE_PROTOCOL_ALLOW_LOOPBACK` (read at each call, for development and the tests) lets `http` and
`https` reach a host whose addresses are all loopback (127.0.0.0/8, ::1); every other range stays
refused, and plain `http` to anything but loopback too.

The standard library does it all: `requests` or `urllib3` would need their connection classes patched
to pin the address, which is more code than `http.client` on a socket of our own.
"""

from __future__ import annotations

import functools
import http.client
import io
import ipaddress
import json
import logging
import re
import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

logger = logging.getLogger(__name__)

MAX_URL_CHARS = 2000
USER_AGENT = "TermitePortal (protocol runs)"
# Where clouds answer with a host's credentials; most are link-local or private anyway, but 192.0.0.192
# (Oracle) counts as global for `ipaddress`, and naming them says why they are refused.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean
        "169.254.169.123",  # AWS time
        "169.254.169.253",  # AWS DNS
        "169.254.170.2",  # AWS ECS task credentials
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud
        "fd00:ec2::254",  # AWS over IPv6
        "fd00:ec2::23",  # AWS DNS over IPv6
    )
)
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
# The request's own framing: a caller setting them would make the request lie about itself.
_OWN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})
_READ_CHUNK = 64 * 1024

# What an address that is not public is, for the sentence that refuses it.
_KINDS = {
    "metadata": gettext_lazy("a cloud metadata address"),
    "loopback": gettext_lazy("a loopback address"),
    "private": gettext_lazy("a private address"),
    "link-local": gettext_lazy("a link-local address"),
    "multicast": gettext_lazy("a multicast address"),
    "unspecified": gettext_lazy("the unspecified address"),
    "shared": gettext_lazy("a shared address of carrier networks (100.64.0.0/10)"),
    "reserved": gettext_lazy("a reserved address"),
}


class OutboundRefused(Exception):
    """The URL, or an address it resolves to, may not be called; the message says why."""


class OutboundFailed(Exception):
    """The call was allowed but did not complete: timeout, connection error, TLS, an answer over
    max_bytes, a redirect (never followed) or an answer that is not HTTP; the message says which."""


@dataclass(frozen=True)
class OutboundResponse:
    status: int
    body: bytes
    headers: dict[str, str]  # names lower-cased; a repeated header's values joined with ", "


@dataclass(frozen=True)
class _Target:
    scheme: str
    host: str  # as the user wrote it, lower-cased, for messages
    ascii_host: str  # IDNA: what is resolved, verified by TLS and sent as Host
    literal: bool  # the host is written as an address: nothing to resolve
    port: int
    path: str  # with the query string


def check_url(url: str) -> None:
    """Refuse a URL the portal may not call, without resolving it: scheme, host, port, credentials, and
    a host written as an address. `post_json` checks the addresses the name resolves to when it calls."""
    target = _target(url)
    if target.literal:
        _judge(target, [target.ascii_host])


def post_json(
    url: str, payload: object, *, headers: Mapping[str, str], timeout: float, max_bytes: int
) -> OutboundResponse:
    """POST `payload` as JSON to `url` under the rules of the module docstring; any status but a 3xx is
    returned as it came (what to retry is the caller's decision)."""
    target = _target(url)
    request_headers = _request_headers(target, headers)
    body = json.dumps(payload, ensure_ascii=False).encode()
    addresses = _judge(target, [target.ascii_host] if target.literal else _resolved(target))
    deadline = time.monotonic() + timeout
    try:
        sock = _connect(target, addresses, deadline)
    except OSError as error:
        raise _failure(target, error, timeout) from None
    try:
        if target.scheme == "https":
            sock.settimeout(_remaining(deadline))
            sock = tls_context().wrap_socket(sock, server_hostname=target.ascii_host)
        connection = http.client.HTTPConnection(target.ascii_host, target.port)
        connection.sock = _DeadlineSocket(sock, deadline)
        connection.request("POST", target.path, body, request_headers)
        return _read(target, connection.getresponse(), max_bytes)
    except (OSError, http.client.HTTPException) as error:  # a certificate refused is an OSError too
        raise _failure(target, error, timeout) from None
    finally:
        sock.close()


def resolve(host: str, port: int) -> list[str]:
    """The addresses of `host`, as text, in the resolver's order; the tests replace this function."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS settings of every call: the system's certificate authorities, the host name checked.

    There is deliberately no setting to trust another authority; the tests replace this function to
    trust the one they generate.
    """
    context = ssl.create_default_context()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def _target(url: str) -> _Target:
    if len(url) > MAX_URL_CHARS:
        raise OutboundRefused(_("The URL is longer than %(n)s characters.") % {"n": MAX_URL_CHARS})
    if any(character.isspace() or not character.isprintable() for character in url):
        raise OutboundRefused(_("The URL holds a space or a control character."))
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme != "https" and not (scheme == "http" and settings.TERMITE_PROTOCOL_ALLOW_LOOPBACK):
        raise OutboundRefused(_("The URL must start with https://."))
    if parts.username is not None or parts.password is not None:
        raise OutboundRefused(
            _("The URL must not hold a user name or a password: give the API key in its own field.")
        )
    host = parts.hostname or ""
    if not host:
        raise OutboundRefused(_("The URL has no host name."))
    try:
        port = parts.port if parts.port is not None else (443 if scheme == "https" else 80)
    except ValueError:  # not a number, or over 65535
        port = 0
    if port == 0:
        raise OutboundRefused(_("The URL's port must be a number from 1 to 65535."))
    literal = _is_address(host)
    try:
        ascii_host = host if literal else host.encode("idna").decode("ascii")
    except UnicodeError:
        raise OutboundRefused(_("%(host)s is not a valid host name.") % {"host": host}) from None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if not path.isascii():
        raise OutboundRefused(_("The URL's path may hold only ASCII characters: percent-encode the others."))
    return _Target(scheme, host, ascii_host, literal, port, path)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _resolved(target: _Target) -> list[str]:
    try:
        addresses = list(dict.fromkeys(resolve(target.ascii_host, target.port)))
    except OSError:
        addresses = []
    if not addresses:
        raise OutboundFailed(_("The name %(host)s could not be resolved.") % {"host": target.host})
    return addresses


def _judge(target: _Target, texts: list[str]) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses when the host may be called at all of them; else OutboundRefused, which names the
    address and its kind only when the user wrote it as such."""
    addresses = [ipaddress.ip_address(text) for text in texts]
    kinds = [_kind(address) for address in addresses]
    if settings.TERMITE_PROTOCOL_ALLOW_LOOPBACK and all(kind == "loopback" for kind in kinds):
        return addresses
    for text, kind in zip(texts, kinds, strict=True):
        if kind is None:
            continue
        if target.literal:  # the user wrote the address: saying what it is tells them nothing new
            raise OutboundRefused(
                _("%(address)s is %(kind)s: the portal only calls public addresses.")
                % {"address": text, "kind": _KINDS[kind]}
            )
        # Neither the address nor its kind, or the message would be a DNS oracle (rule 2): the log has both.
        logger.warning("refused %s: its address %s is %s", target.host, text, kind)
        raise OutboundRefused(
            _("An address of %(host)s is not public: the portal only calls public addresses.")
            % {"host": target.host}
        )
    if target.scheme == "http":
        raise OutboundRefused(
            _("%(host)s is not a loopback address: plain http is allowed only to loopback, use https.")
            % {"host": target.host}
        )
    return addresses


def _kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """What the address is when it is not public (a key of _KINDS), or None when it is public."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return _kind(embedded)
    if address in METADATA_ADDRESSES:
        return "metadata"
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address in _SHARED:
        return "shared"
    if address.is_reserved:
        return "reserved"
    if address.is_private or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local):
        return "private"
    return None if address.is_global else "reserved"


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address reaches: IPv4-mapped, 6to4 and NAT64 forms."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _request_headers(target: _Target, headers: Mapping[str, str]) -> dict[str, str]:
    for name, value in headers.items():
        if not _HEADER_NAME.match(name) or name.lower() in _OWN_HEADERS:
            raise ValueError(f"post_json cannot send a header named {name!r}")
        # A line break would add headers of the user's choosing; http.client sends values in Latin-1.
        if not (value.isascii() and all(character == "\t" or character.isprintable() for character in value)):
            raise OutboundRefused(
                _("The value of the %(name)s header may hold only printable ASCII characters.")
                % {"name": name}
            )
    default_port = 443 if target.scheme == "https" else 80
    host = f"[{target.ascii_host}]" if ":" in target.ascii_host else target.ascii_host
    return {
        "User-Agent": USER_AGENT,
        "Accept": "application/json",
        "Content-Type": "application/json",
        **headers,
        "Host": host if target.port == default_port else f"{host}:{target.port}",
        "Connection": "close",
    }


def _connect(
    target: _Target, addresses: list[ipaddress.IPv4Address | ipaddress.IPv6Address], deadline: float
) -> socket.socket:
    """A socket connected to the first of the judged addresses that answers; the name is not resolved again."""
    error: OSError = TimeoutError()
    for judged in addresses:
        # An IPv4-mapped address is its IPv4 address (which was judged): IPv4 reaches it without dual stack.
        mapped = judged.ipv4_mapped if isinstance(judged, ipaddress.IPv6Address) else None
        address = mapped or judged
        family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(_remaining(deadline))
            sock.connect((str(address), target.port))
        except OSError as failure:
            sock.close()
            error = failure
            if isinstance(failure, TimeoutError):
                break
            continue
        return sock
    raise error


def _remaining(deadline: float) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    return remaining


class _DeadlineSocket:
    """What `http.client` sees of the connected socket: every send and read waits only until the deadline."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def sendall(self, data: bytes) -> None:
        self._sock.settimeout(_remaining(self._deadline))
        self._sock.sendall(data)

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))

    def close(self) -> None:
        """Nothing: `http.client` closes the connection as soon as an answer says `Connection: close`,
        before its body is read; `post_json` closes the socket once it has the body."""


class _DeadlineReader(io.RawIOBase):
    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # io passes only these
        self._sock.settimeout(_remaining(self._deadline))
        return self._sock.recv_into(buffer)


def _read(target: _Target, response: http.client.HTTPResponse, max_bytes: int) -> OutboundResponse:
    if 300 <= response.status < 400:
        raise OutboundFailed(
            _(
                "%(host)s answered with a redirect (status %(status)s): the portal does not follow "
                "redirects, give the URL that answers."
            )
            % {"host": target.host, "status": response.status}
        )
    too_large = OutboundFailed(
        _("The answer of %(host)s is larger than %(n)s bytes.") % {"host": target.host, "n": max_bytes}
    )
    if response.length is not None and response.length > max_bytes:
        raise too_large
    body = bytearray()
    while chunk := response.read(min(_READ_CHUNK, max_bytes + 1 - len(body))):
        body += chunk
        if len(body) > max_bytes:
            raise too_large
    headers: dict[str, str] = {}
    for name, value in response.getheaders():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return OutboundResponse(status=response.status, body=bytes(body), headers=headers)


def _failure(target: _Target, error: Exception, timeout: float) -> OutboundFailed:
    """The sentence for a call that did not complete."""
    values = {"host": target.host, "seconds": f"{timeout:g}"}
    if isinstance(error, TimeoutError):
        return OutboundFailed(_("%(host)s did not answer within %(seconds)s seconds.") % values)
    if isinstance(error, ssl.SSLCertVerificationError):
        return OutboundFailed(
            _("The TLS certificate of %(host)s could not be verified: %(reason)s.")
            % {**values, "reason": error.verify_message}
        )
    if isinstance(error, http.client.RemoteDisconnected):
        return OutboundFailed(_("%(host)s closed the connection without answering.") % values)
    if isinstance(error, ssl.SSLError):
        return OutboundFailed(_("The TLS connection with %(host)s failed.") % values)
    if isinstance(error, http.client.HTTPException):
        return OutboundFailed(_("The answer of %(host)s is not valid HTTP.") % values)
    reason = error.strerror if isinstance(error, OSError) and error.strerror else error.__class__.__name__
    return OutboundFailed(_("The connection to %(host)s failed: %(reason)s.") % {**values, "reason": reason})
