"""A page cached whole, stored gzipped, and served with the one part that differs per visitor.

A cached page is everything but its <nav> (which holds the visitor's name, their links and the CSRF
tokens of the logout and language forms): `CachedPage.of(html)` splits the page at `NAV_MARKER` and
deflates the two halves once, when the page is built. `respond` renders the nav for the request and
serves head + nav + tail:

- gzipped, to a client that accepts gzip, without compressing the halves again. Each half, and the nav,
  is deflated on its own and ends on a byte boundary (a sync flush), so the three make one valid deflate
  stream; only the CRC-32 of the whole needs the halves' checksums combined (`_crc_after`).
- uncompressed otherwise, the halves inflated back.
- 304 Not Modified to an `If-None-Match` that names the page as this visitor would get it: the cached
  halves, the visitor's nav (their CSRF tokens aside: a fresh mask each time, the same secret) and, when
  the nav holds a token, their CSRF secret, so that the copy their browser keeps holds tokens their
  cookie still accepts.

The cached halves never hold anything of one visitor: the page is rendered for the cache without a
request, and a page with a message for its visitor is not to be cached (see leaderboard/ranking_views.py).

An anonymous visitor's nav holds nothing of theirs either (its one form, the language's, needs no CSRF
token: see termite_site/views.py), so for them the whole answer can be kept: a `WholePage`, served by
`serve_whole` with no rendering at all. `anonymous_visit` says when a request may have one.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.contrib.messages.storage.cookie import CookieStorage
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.translation import get_language

from termite_site.page_token import page_token

NAV_MARKER = "<!--per-visitor nav-->"

_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate, no name, no time, unknown OS
_LAST_BLOCK = b"\x03\x00"  # an empty final block: the parts before it end on sync flushes
_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')
_WORD = 0xFFFFFFFF


def _deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)


def _stored(data: bytes) -> bytes:
    """`data` as deflate's stored (uncompressed) blocks, none of them final (RFC 1951, 3.2.4), after data
    that ends on a byte boundary: a header byte, the length and its complement, the bytes."""
    blocks = []
    for start in range(0, len(data), _STORED_MAX):
        chunk = data[start : start + _STORED_MAX]
        blocks.append(struct.pack("<BHH", 0, len(chunk), len(chunk) ^ 0xFFFF) + chunk)
    return b"".join(blocks)


_STORED_MAX = 0xFFFF


@dataclass(frozen=True)
class Deflated:
    """A part of a body as raw deflate data, with what the gzip trailer needs of it."""

    data: bytes
    crc: int
    size: int
    # CRC-32 is linear: the checksum of X + this part is shift(crc(X)) ^ crc(this part), where shift
    # multiplies by x^(8 * size). `shift` holds its value on each of the 32 bits, computed once here
    # rather than by running the CRC over `size` zero bytes on every request.
    shift: tuple[int, ...]

    @classmethod
    def of(cls, raw: bytes) -> Deflated:
        zeros = bytes(len(raw))
        base = zlib.crc32(zeros)
        shift = tuple(zlib.crc32(zeros, 1 << bit) ^ base for bit in range(32))
        return cls(_deflate(raw), zlib.crc32(raw), len(raw), shift)

    def raw(self) -> bytes:
        return zlib.decompressobj(-zlib.MAX_WBITS).decompress(self.data)


def _crc_after(crc: int, part: Deflated) -> int:
    """The CRC-32 of X + part, from crc = CRC-32 of X."""
    shifted = 0
    for bit in range(32):
        if crc >> bit & 1:
            shifted ^= part.shift[bit]
    return shifted ^ part.crc


def gzip_around(head: Deflated, middle: bytes, tail: Deflated) -> bytes:
    """The gzip file of head + middle + tail, `middle` stored as it is. It is a nav, a few hundred bytes
    that change with every request (the CSRF token): compressing it cost 59 us a request (23 us with the
    least memory for zlib's state, which setting up is most of it) to save some 500 bytes."""
    crc = _crc_after(zlib.crc32(middle, head.crc), tail)
    size = head.size + len(middle) + tail.size
    trailer = struct.pack("<II", crc, size & _WORD)
    return b"".join((_GZIP_HEADER, head.data, _stored(middle), tail.data, _LAST_BLOCK, trailer))


@dataclass(frozen=True)
class CachedPage:
    head: Deflated
    tail: Deflated
    digest: str
    # As for a `WholePage`: set where the page is kept per address, for visitors with a nav of their own.
    token: str = ""
    expires: float | None = None
    made_from: tuple[str, ...] | None = None

    @classmethod
    def of(cls, html: str) -> CachedPage:
        head, marker, tail = html.partition(NAV_MARKER)
        if not marker:
            raise ValueError("a cached page needs NAV_MARKER where the per-visitor nav goes")
        digest = hashlib.sha256(html.encode()).hexdigest()[:24]
        return cls(Deflated.of(head.encode()), Deflated.of(tail.encode()), digest)


def accepts_gzip(request: HttpRequest) -> bool:
    """Whether Accept-Encoding allows gzip: named with a q above 0, or "*" when gzip is not named."""
    qualities = {}
    for item in request.headers.get("Accept-Encoding", "").split(","):
        coding, _semicolon, params = item.partition(";")
        quality = 1.0
        name, _equals, value = params.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                quality = float(value)
            except ValueError:
                quality = 0.0
        qualities[coding.strip().lower()] = quality
    return qualities.get("gzip", qualities.get("x-gzip", qualities.get("*", 0.0))) > 0


def visitor_nav(request: HttpRequest) -> str:
    """`site/_nav.html` for this request's visitor. Rendered once per visitor, language and address in this
    process (what it shows: the name, whether staff, the address its language form returns to), its CSRF
    token put in fresh each time, as {% csrf_token %} would (`page_token`)."""
    user = request.user
    key = (user.pk, user.get_username(), user.is_staff, get_language(), request.get_full_path())
    nav = _NAVS.get(key)
    if nav is None:
        nav = _TOKEN.sub(_TOKEN_PLACEHOLDER, render_to_string("site/_nav.html", request=request))
        if len(_NAVS) >= _NAVS_KEPT:
            _NAVS.clear()
        _NAVS[key] = nav
    if _TOKEN_PLACEHOLDER not in nav:
        return nav
    return nav.replace(_TOKEN_PLACEHOLDER, f'name="csrfmiddlewaretoken" value="{page_token(request)}"')


_NAVS: dict[tuple[object, ...], str] = {}
_NAVS_KEPT = 10_000
_TOKEN_PLACEHOLDER = "<!--csrf token-->"


def respond(request: HttpRequest, page: CachedPage, *, nav: Callable[[], str]) -> HttpResponse:
    """`page` with the visitor's `nav()`, gzipped if they accept it, or 304 if they have it already."""
    nav_html = nav()  # first: it sets the CSRF secret of a visitor who has none yet
    secret = request.META.get("CSRF_COOKIE", "") if _TOKEN.search(nav_html) else ""
    visitor = f"{secret}\n{_TOKEN.sub('', nav_html)}"
    etag = f'W/"{page.digest}-{hashlib.sha256(visitor.encode()).hexdigest()[:16]}"'
    response: HttpResponse | None = get_conditional_response(request, etag=etag)
    if response is None:
        if accepts_gzip(request):
            response = HttpResponse(gzip_around(page.head, nav_html.encode(), page.tail))
            response["Content-Encoding"] = "gzip"
        else:
            response = HttpResponse(b"".join((page.head.raw(), nav_html.encode(), page.tail.raw())))
    return _with_headers(response, etag)


def _with_headers(response: HttpResponse, etag: str) -> HttpResponse:
    response["ETag"] = etag
    # The body may hold one visitor's CSRF tokens, and their name when logged in: no shared cache may
    # keep it, and the browser asks again each time (a 304 when nothing changed).
    patch_cache_control(response, private=True, no_cache=True)
    patch_vary_headers(response, ("Accept-Encoding", "Cookie"))
    return response


def anonymous_visit(request: HttpRequest) -> bool:
    """No session and no message waiting in a cookie: nothing on the page can be this visitor's own."""
    return (
        settings.SESSION_COOKIE_NAME not in request.COOKIES
        and CookieStorage.cookie_name not in request.COOKIES
    )


@dataclass(frozen=True)
class WholePage:
    """An answer as every anonymous visitor gets it, gzipped (inflated for the rare client that takes no
    gzip); `token` and `expires` say, to whoever keeps it, until when it holds."""

    gzipped: bytes
    etag: str
    token: str
    expires: float | None
    # Which cached value it was made of, for whoever keeps it to tell when a newer one is being made.
    made_from: tuple[str, ...] | None = None

    @classmethod
    def of(cls, response: HttpResponse, *, token: str, expires: float | None = None) -> WholePage | None:
        """The answer `respond` gave an anonymous visitor, if it is a whole page (a 304 is not)."""
        if response.status_code != 200:
            return None
        zipped = response.get("Content-Encoding") == "gzip"
        body = response.content if zipped else gzip.compress(response.content, mtime=0)
        return cls(body, response["ETag"], token, expires)


def serve_whole(request: HttpRequest, page: WholePage) -> HttpResponse:
    response = get_conditional_response(request, etag=page.etag)
    if response is None and accepts_gzip(request):
        response = HttpResponse(page.gzipped)
        response["Content-Encoding"] = "gzip"
    elif response is None:
        response = HttpResponse(gzip.decompress(page.gzipped))
    return _with_headers(response, page.etag)
