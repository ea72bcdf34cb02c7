"""Gzip bodies spliced from precompressed parts (termite_site/cached_page.py): any client's gzip reads them."""

from __future__ import annotations

import gzip
import random
import zlib

import pytest

from termite_site.cached_page import Deflated, gzip_around


@pytest.mark.parametrize("sizes", [(0, 0, 0), (10, 0, 5), (5000, 1700, 200_000), (1, 70_000, 0)])
def test_head_middle_and_tail_make_one_gzip_file(sizes):
    rng = random.Random(sum(sizes))
    head, middle, tail = (bytes(rng.choice(b"<tr>abc 0123\n") for _ in range(size)) for size in sizes)
    body = gzip_around(Deflated.of(head), middle, Deflated.of(tail))
    assert gzip.decompress(body) == head + middle + tail
    # zlib checks the CRC-32 and the length of the trailer too, as browsers do.
    assert zlib.decompress(body, 16 + zlib.MAX_WBITS) == head + middle + tail
    assert Deflated.of(tail).raw() == tail
