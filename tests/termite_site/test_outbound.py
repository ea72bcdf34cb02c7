"""The outbound client (termite_site/outbound.py): which URLs and addresses it refuses, where it connects, and
how it reads an answer.

No test sends a packet outside loopback. The autouse `_loopback_only` fixture fails any test whose code looks
up a name or connects anywhere but loopback; refusals are shown with a stubbed resolver (`resolver`), and the
tests of a public host stub the socket's connect (`connects`) to record the address it was given and reach a
server on 127.0.0.1 instead.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import logging
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from termite_site import outbound
from termite_site.outbound import OutboundFailed, OutboundRefused, check_url, post_json

NOT_PUBLIC = "An address of {host} is not public: the portal only calls public addresses."
PUBLIC = "93.184.215.14"  # a public address: connections to it are stubbed, never made
LIMITS = {"timeout": 5.0, "max_bytes": 10_000}
PAYLOAD = {"model": "m", "messages": [{"role": "user", "content": "Considera il seguente database:"}]}
_real_connect = socket.socket.connect
_real_getaddrinfo = socket.getaddrinfo


def _is_loopback(address: object) -> bool:
    return isinstance(address, tuple) and ipaddress.ip_address(address[0].split("%")[0]).is_loopback


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):
    """The safety net: a connection outside loopback, or a name looked up, fails the test before any packet."""

    def connect(sock: socket.socket, address: object) -> None:
        assert _is_loopback(address), f"a test tried to connect to {address}"
        _real_connect(sock, address)

    def getaddrinfo(host: str, *args: object, **kwargs: object) -> list:
        ipaddress.ip_address(host)  # a name would be a DNS query: ValueError
        return _real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@dataclass
class Resolver:
    """The stubbed resolver: what each name resolves to, one list of addresses per lookup (the last repeats)."""

    answers: dict[str, tuple[list[str], ...]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)

    def answer(self, host: str, *answers: list[str]) -> None:
        self.answers[host] = answers

    def resolve(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        if host not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        turn = self.lookups.count(host) - 1
        return self.answers[host][min(turn, len(self.answers[host]) - 1)]


@pytest.fixture
def resolver(monkeypatch) -> Resolver:
    stub = Resolver()
    monkeypatch.setattr(outbound, "resolve", stub.resolve)
    return stub


@dataclass
class Connects:
    """What the stubbed connect was given, and where it really connects: the test server, or nowhere."""

    addresses: list[tuple] = field(default_factory=list)
    refuse: set[str] = field(default_factory=set)  # addresses that answer "connection refused"
    server: tuple[str, int] | None = None


@pytest.fixture
def connects(monkeypatch) -> Connects:
    record = Connects()

    def connect(sock: socket.socket, address: tuple) -> None:
        record.addresses.append(address)
        if record.server is None or address[0] in record.refuse:
            raise ConnectionRefusedError(111, "Connection refused")
        _real_connect(sock, record.server)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return record


@pytest.fixture
def allow_loopback(settings):
    settings.TERMITE_PROTOCOL_ALLOW_LOOPBACK = True


# The test server.


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        route, _, size = self.path.partition("?")
        if route == "/v1/chat/completions":
            self._answer(200, json.dumps({"echo": json.loads(body), "host": self.headers["Host"]}).encode())
        elif route == "/redirect":
            self._answer(302, b"", location="/v1/chat/completions")
        elif route == "/big":
            self._answer(200, b"x" * int(size))
        elif route == "/unsized":  # no Content-Length: the body runs to the end of the connection
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"x" * int(size))
            self.close_connection = True
        elif route == "/slow":
            time.sleep(1.5)
            self._answer(200, b"{}")
        elif route == "/drip":  # every byte comes soon after the one before, the whole answer late
            self.send_response(200)
            self.send_header("Content-Length", "30")
            self.end_headers()
            for _ in range(30):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.05)
        elif route == "/hang-up":
            self.close_connection = True
        else:
            self._answer(500, b'{"error": "the model is down"}')

    def _answer(self, status: int, body: bytes, location: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Trace", "one")
        self.send_header("X-Trace", "two")
        if location:
            self.send_header("Location", location)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the client gave up on purpose (timeouts, caps): the broken pipe is expected


@dataclass
class Server:
    port: int
    seen: list[Seen]
    server_names: list[str | None]  # the SNI of each TLS handshake

    def url(self, path: str, *, scheme: str = "http", host: str = "127.0.0.1") -> str:
        return f"{scheme}://{host}:{self.port}{path}"


def _serve(context: ssl.SSLContext | None = None) -> Iterator[Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.seen = []
    names: list[str | None] = []
    if context is not None:
        context.sni_callback = lambda _socket, name, _context: names.append(name)
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Server(httpd.server_address[1], httpd.seen, names)
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    yield from _serve()


@dataclass(frozen=True)
class Certificates:
    ca: Path  # the test's own certificate authority, PEM
    chain: Path  # the server's certificate, for model.example, localhost and 127.0.0.1
    key: Path


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> Certificates:
    folder = tmp_path_factory.mktemp("tls")
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Termite test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [
        x509.DNSName("model.example"),
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "model.example")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = Certificates(folder / "ca.pem", folder / "chain.pem", folder / "key.pem")
    paths.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths.chain.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return paths


@pytest.fixture
def https_server(certificates) -> Iterator[Server]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificates.chain, certificates.key)
    yield from _serve(context)


@pytest.fixture
def trust_test_ca(monkeypatch, certificates) -> None:
    """The client trusts the test's authority, as it trusts the system's in production (no setting does this)."""
    context = ssl.create_default_context(cafile=certificates.ca)
    monkeypatch.setattr(outbound, "tls_context", lambda: context)


def _post(url: str, **limits: float) -> outbound.OutboundResponse:
    return post_json(url, PAYLOAD, headers={"Authorization": "Bearer sk-test"}, **{**LIMITS, **limits})


# check_url: the static check a form runs before saving.


def test_check_url_accepts_an_https_url_without_resolving_it(resolver, connects):
    check_url("https://api.example.org/v1/chat/completions")
    check_url("https://api.example.org:8443/v1/chat/completions?api-version=1")
    check_url(f"https://{PUBLIC}/v1/chat/completions")
    check_url("https://bücher.example/v1")
    assert resolver.lookups == []
    assert connects.addresses == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://api.example.org/v1", "The URL must start with https://."),
        ("ftp://api.example.org/v1", "The URL must start with https://."),
        ("api.example.org/v1", "The URL must start with https://."),
        (
            "https://user:secret@api.example.org/v1",
            "The URL must not hold a user name or a password: give the API key in its own field.",
        ),
        ("https://sk-key@api.example.org/v1", "The URL must not hold a user name or a password"),
        ("https:///v1/chat/completions", "The URL has no host name."),
        ("https://api.example.org:0/v1", "The URL's port must be a number from 1 to 65535."),
        ("https://api.example.org:65536/v1", "The URL's port must be a number from 1 to 65535."),
        ("https://api.example.org:https/v1", "The URL's port must be a number from 1 to 65535."),
        ("https://api.example.org/v1 chat", "The URL holds a space or a control character."),
        ("https://api.example.org/v1\n", "The URL holds a space or a control character."),
        ("https://api.example.org/" + "v" * 2000, "The URL is longer than 2000 characters."),
        ("https://a..b/v1", "a..b is not a valid host name."),
        (
            "https://api.example.org/vè",
            "The URL's path may hold only ASCII characters: percent-encode the others.",
        ),
        ("https://10.0.0.1/v1", "10.0.0.1 is a private address: the portal only calls public addresses."),
        ("https://[::1]/v1", "::1 is a loopback address"),
        ("https://127.0.0.1:8000/v1", "127.0.0.1 is a loopback address"),
        ("https://169.254.169.254/latest", "169.254.169.254 is a cloud metadata address"),
    ],
)
def test_check_url_refuses_a_url_the_portal_may_not_call(url, message):
    with pytest.raises(OutboundRefused) as refusal:
        check_url(url)
    assert str(refusal.value).startswith(message)


def test_check_url_allows_http_and_loopback_only_with_the_development_setting(allow_loopback):
    check_url("http://127.0.0.1:8000/v1/chat/completions")
    check_url("https://[::1]:8443/v1/chat/completions")
    check_url("http://localhost:8000/v1/chat/completions")  # the name's addresses are judged at the call
    with pytest.raises(OutboundRefused, match=r"10\.0\.0\.1 is a private address"):
        check_url("http://10.0.0.1:8000/v1")
    with pytest.raises(OutboundRefused, match="plain http is allowed only to loopback"):
        check_url(f"http://{PUBLIC}/v1")


# post_json: the addresses a name resolves to, judged before any connection.


@pytest.mark.parametrize(
    ("addresses", "refused", "kind"),
    [
        (["10.0.0.1"], "10.0.0.1", "private"),
        (["192.168.1.1"], "192.168.1.1", "private"),
        (["172.16.5.4"], "172.16.5.4", "private"),
        (["fc00::1"], "fc00::1", "private"),
        (["fec0::1"], "fec0::1", "private"),  # site-local, which ipaddress calls global
        (["192.0.2.7"], "192.0.2.7", "private"),  # documentation range
        (["169.254.169.254"], "169.254.169.254", "metadata"),
        (["fd00:ec2::254"], "fd00:ec2::254", "metadata"),
        (
            ["192.0.0.192"],
            "192.0.0.192",
            "metadata",
        ),  # Oracle's, which ipaddress calls global
        (["100.64.0.1"], "100.64.0.1", "shared"),
        (["::1"], "::1", "loopback"),
        (["127.0.0.2"], "127.0.0.2", "loopback"),
        (["fe80::1"], "fe80::1", "link-local"),
        (["169.254.1.1"], "169.254.1.1", "link-local"),
        (["224.0.0.1"], "224.0.0.1", "multicast"),  # which ipaddress calls global
        (["ff02::1"], "ff02::1", "multicast"),
        (["0.0.0.0"], "0.0.0.0", "unspecified"),
        (["::"], "::", "unspecified"),
        (["240.0.0.1"], "240.0.0.1", "reserved"),
        # IPv6 forms that reach an IPv4 address: mapped, 6to4, NAT64
        (["::ffff:127.0.0.1"], "::ffff:127.0.0.1", "loopback"),
        (["::ffff:10.0.0.1"], "::ffff:10.0.0.1", "private"),
        (["2002:a00:1::"], "2002:a00:1::", "private"),
        (["64:ff9b::a9fe:a9fe"], "64:ff9b::a9fe:a9fe", "metadata"),
        # one refused address refuses the name
        ([PUBLIC, "10.0.0.1"], "10.0.0.1", "private"),
        (["2606:4700::1111", "fe80::1"], "fe80::1", "link-local"),
    ],
)
def test_it_refuses_a_name_with_an_address_that_is_not_public_before_connecting(
    resolver, connects, caplog, addresses, refused, kind
):
    resolver.answer("model.example", addresses)
    with (
        caplog.at_level(logging.WARNING, logger="termite_site.outbound"),
        pytest.raises(OutboundRefused) as refusal,
    ):
        _post("https://model.example/v1/chat/completions")
    assert str(refusal.value) == NOT_PUBLIC.format(host="model.example")
    assert connects.addresses == []
    # What it resolved to, and why that is refused, are for staff: in the log only.
    assert caplog.messages == [f"refused model.example: its address {refused} is {kind}"]


@pytest.mark.parametrize("host", ["localhost", "db.internal", "model.example"])
def test_the_refusal_of_a_name_is_one_sentence_whatever_it_resolves_to(resolver, connects, host):
    refusals = set()
    for address in ("10.0.0.1", "127.0.0.1", "169.254.169.254", "::1", "100.64.0.1"):
        resolver.answer(host, [address])
        with pytest.raises(OutboundRefused) as refusal:
            _post(f"https://{host}/v1/chat/completions")
        refusals.add(str(refusal.value))
        assert address not in str(refusal.value)
    assert refusals == {NOT_PUBLIC.format(host=host)}
    assert not re.search(r"\d+\.\d+\.\d+\.\d+|::|loopback|private|metadata|link-local", refusals.pop())
    assert connects.addresses == []


def test_a_public_ipv6_form_of_a_public_address_is_allowed(resolver, connects):
    resolver.answer("model.example", ["::ffff:8.8.8.8"], ["2002:808:808::1"])
    for _ in range(2):
        with pytest.raises(OutboundFailed, match="Connection refused"):
            _post("https://model.example/v1/chat/completions")
    assert connects.addresses == [("8.8.8.8", 443), ("2002:808:808::1", 443)]


def test_the_development_setting_allows_loopback_and_nothing_else(allow_loopback, resolver, connects):
    for addresses in (["10.0.0.1"], ["169.254.169.254"], ["100.64.0.1"], ["fe80::1"], ["127.0.0.1", PUBLIC]):
        resolver.answer("model.example", addresses)
        with pytest.raises(OutboundRefused, match="the portal only calls public addresses"):
            _post("https://model.example/v1/chat/completions")
    resolver.answer("model.example", [PUBLIC])
    with pytest.raises(OutboundRefused, match="plain http is allowed only to loopback, use https"):
        _post("http://model.example/v1/chat/completions")
    assert connects.addresses == []


def test_without_the_setting_a_loopback_endpoint_is_refused_before_any_connection(server, resolver):
    resolver.answer("localhost", ["127.0.0.1"])
    with pytest.raises(OutboundRefused, match="127.0.0.1 is a loopback address"):
        _post(server.url("/v1/chat/completions", scheme="https"))
    with pytest.raises(OutboundRefused, match="^An address of localhost is not public"):
        _post(server.url("/v1/chat/completions", scheme="https", host="localhost"))
    with pytest.raises(OutboundRefused, match="must start with https://"):
        _post(server.url("/v1/chat/completions"))
    assert server.seen == []


def test_an_international_name_is_resolved_in_its_ascii_form(resolver, connects):
    resolver.answer("xn--bcher-kva.example", ["10.0.0.1"])
    with pytest.raises(OutboundRefused, match=r"^An address of bücher\.example is not public"):
        _post("https://bücher.example/v1/chat/completions")
    assert resolver.lookups == ["xn--bcher-kva.example"]


def test_a_name_that_does_not_resolve_fails(resolver, connects):
    with pytest.raises(OutboundFailed, match=r"^The name nowhere\.example could not be resolved\.$"):
        _post("https://nowhere.example/v1/chat/completions")
    assert connects.addresses == []


@pytest.mark.parametrize("key", ["Bearer a\r\nX-Evil: 1", "Bearer a\x00b", "Bearer clé"])
def test_a_header_value_that_is_not_printable_ascii_is_refused_before_connecting(resolver, connects, key):
    resolver.answer("model.example", [PUBLIC])
    with pytest.raises(OutboundRefused) as refusal:
        post_json("https://model.example/v1", PAYLOAD, headers={"Authorization": key}, **LIMITS)
    assert (
        str(refusal.value)
        == "The value of the Authorization header may hold only printable ASCII characters."
    )
    assert connects.addresses == []


@pytest.mark.parametrize("name", ["Host", "content-length", "Transfer-Encoding", "Connection", "X Bad"])
def test_the_caller_cannot_set_the_request_framing_or_a_malformed_header_name(resolver, connects, name):
    resolver.answer("model.example", [PUBLIC])
    with pytest.raises(ValueError, match="post_json cannot send a header named"):
        post_json("https://model.example/v1", PAYLOAD, headers={name: "x"}, **LIMITS)
    assert connects.addresses == []


# post_json: it connects to the address it judged, never to the name again.


def test_it_connects_to_the_checked_address_so_a_rebinding_name_cannot_reach_a_private_one(
    resolver, connects, https_server, trust_test_ca
):
    resolver.answer("model.example", [PUBLIC], ["10.0.0.1"])  # public when checked, private ever after
    connects.server = ("127.0.0.1", https_server.port)
    response = _post("https://model.example/v1/chat/completions")
    assert response.status == 200
    assert resolver.lookups == ["model.example"]
    assert connects.addresses == [(PUBLIC, 443)]
    assert https_server.server_names == ["model.example"]  # SNI: the name, verified against the certificate
    assert https_server.seen[0].headers["host"] == "model.example"
    assert json.loads(response.body)["host"] == "model.example"


def test_it_tries_the_next_checked_address_when_one_does_not_answer(
    resolver, connects, https_server, trust_test_ca
):
    resolver.answer("model.example", ["2606:4700::1111", PUBLIC])
    connects.refuse = {"2606:4700::1111"}
    connects.server = ("127.0.0.1", https_server.port)
    assert _post("https://model.example:8443/v1/chat/completions").status == 200
    assert [address[0] for address in connects.addresses] == ["2606:4700::1111", PUBLIC]
    assert https_server.seen[0].headers["host"] == "model.example:8443"


def test_a_connection_refused_everywhere_fails_with_the_reason(resolver, connects):
    resolver.answer("model.example", [PUBLIC])
    with pytest.raises(
        OutboundFailed, match=r"^The connection to model\.example failed: Connection refused\.$"
    ):
        _post("https://model.example/v1/chat/completions")
    assert connects.addresses == [(PUBLIC, 443)]


def test_it_uses_no_proxy_from_the_environment(resolver, connects, https_server, trust_test_ca, monkeypatch):
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://10.0.0.1:3128")
    resolver.answer("model.example", [PUBLIC])
    connects.server = ("127.0.0.1", https_server.port)
    assert _post("https://model.example/v1/chat/completions").status == 200
    assert connects.addresses == [(PUBLIC, 443)]


def test_a_certificate_for_another_name_fails(resolver, connects, https_server, trust_test_ca):
    resolver.answer("other.example", [PUBLIC])
    connects.server = ("127.0.0.1", https_server.port)
    with pytest.raises(
        OutboundFailed, match=r"^The TLS certificate of other\.example could not be verified: "
    ):
        _post("https://other.example/v1/chat/completions")
    assert https_server.seen == []


def test_a_certificate_no_system_authority_signed_fails(allow_loopback, https_server):
    with pytest.raises(OutboundFailed, match=r"^The TLS certificate of 127\.0\.0\.1 could not be verified: "):
        _post(https_server.url("/v1/chat/completions", scheme="https"))
    assert https_server.seen == []


# post_json against a real server on loopback (the development setting on).


def test_it_posts_json_and_returns_the_answer(allow_loopback, server):
    response = _post(server.url("/v1/chat/completions"))
    assert response.status == 200
    assert json.loads(response.body) == {"echo": PAYLOAD, "host": f"127.0.0.1:{server.port}"}
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-trace"] == "one, two"
    [seen] = server.seen
    assert seen.path == "/v1/chat/completions"
    assert json.loads(seen.body) == PAYLOAD
    assert seen.headers["authorization"] == "Bearer sk-test"
    assert seen.headers["content-type"] == "application/json"


def test_it_posts_over_https_on_loopback(allow_loopback, https_server, trust_test_ca, resolver):
    resolver.answer("localhost", ["127.0.0.1"])
    response = _post(https_server.url("/v1/chat/completions", scheme="https", host="localhost"))
    assert response.status == 200
    assert json.loads(response.body)["host"] == f"localhost:{https_server.port}"
    assert https_server.server_names == ["localhost"]


def test_it_never_follows_a_redirect_even_to_loopback(allow_loopback, server):
    with pytest.raises(OutboundFailed) as failure:
        _post(server.url("/redirect"))
    assert str(failure.value) == (
        "127.0.0.1 answered with a redirect (status 302): the portal does not follow redirects, "
        "give the URL that answers."
    )
    assert [seen.path for seen in server.seen] == ["/redirect"]


def test_an_error_status_is_returned_for_the_caller_to_decide(allow_loopback, server):
    response = _post(server.url("/down"))
    assert response.status == 500
    assert json.loads(response.body) == {"error": "the model is down"}


@pytest.mark.parametrize("route", ["/big", "/unsized"])
def test_an_answer_over_max_bytes_fails_and_one_at_it_is_read(allow_loopback, server, route):
    assert _post(server.url(f"{route}?1000"), max_bytes=1000).body == b"x" * 1000
    with pytest.raises(OutboundFailed, match=r"^The answer of 127\.0\.0\.1 is larger than 999 bytes\.$"):
        _post(server.url(f"{route}?1000"), max_bytes=999)


def test_a_slow_answer_fails_at_the_timeout(allow_loopback, server):
    with pytest.raises(OutboundFailed, match=r"^127\.0\.0\.1 did not answer within 0\.3 seconds\.$"):
        _post(server.url("/slow"), timeout=0.3)


def test_the_timeout_bounds_the_whole_answer_not_each_read(allow_loopback, server):
    # Each byte of /drip comes 0.05 s after the one before, well within the timeout; all 30 take 1.5 s.
    with pytest.raises(OutboundFailed, match=r"^127\.0\.0\.1 did not answer within 0\.5 seconds\.$"):
        _post(server.url("/drip"), timeout=0.5)


def test_a_server_that_hangs_up_without_answering_fails(allow_loopback, server):
    with pytest.raises(OutboundFailed, match=r"^127\.0\.0\.1 closed the connection without answering\.$"):
        _post(server.url("/hang-up"))


def test_resolve_returns_the_addresses_of_a_literal_without_a_lookup():
    assert outbound.resolve("127.0.0.1", 80) == ["127.0.0.1"]
    assert outbound.resolve("::1", 80) == ["::1"]
