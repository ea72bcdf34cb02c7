"""The CSRF token of a page served from the cache with the visitor's nav (`cached_page.visitor_nav`).

Django's `get_token` masks the visitor's secret with a new random mask for every answer, so that the
token cannot be read out of compressed answers (BREACH). That is kept; two of its costs are not, on the
one page signed-in visitors load most:

- its mask is drawn one character at a time, by `secrets.choice`, a read of the system's random source
  each: 114 us an answer. `page_token` draws the same mask, 32 characters each uniform over the 62 of
  `CSRF_ALLOWED_CHARS`, with one `secrets.randbelow`, and applies it as Django does, so that Django's
  CSRF check unmasks it to the same secret: 18 us the token (timeit).
- it marks the CSRF cookie to be set again with every answer (40 us), only to renew its expiry, a year
  away. A visitor whose cookie came with their request keeps it; it is renewed by the pages Django
  serves (every form's), and one that lapsed is made again here, by Django, as for a first visit.
"""

from __future__ import annotations

import secrets

from django.http import HttpRequest
from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH, get_token

_BASE = len(CSRF_ALLOWED_CHARS)
_MASKS = _BASE**CSRF_SECRET_LENGTH
_INDEX = {char: index for index, char in enumerate(CSRF_ALLOWED_CHARS)}


def page_token(request: HttpRequest) -> str:
    """A CSRF token for a form on the page answering `request`, as `django.middleware.csrf.get_token`
    gives: the visitor's secret (a new one, with its cookie, if they sent none) under a fresh mask."""
    # Set by CsrfViewMiddleware from a well-formed cookie the request sent; absent, Django makes one.
    secret = request.META.get("CSRF_COOKIE")
    if secret is None:
        return get_token(request)
    draw = secrets.randbelow(_MASKS)
    mask = []
    cipher = []
    for char in secret:
        draw, offset = divmod(draw, _BASE)
        mask.append(CSRF_ALLOWED_CHARS[offset])
        cipher.append(CSRF_ALLOWED_CHARS[(_INDEX[char] + offset) % _BASE])
    return "".join(mask) + "".join(cipher)
