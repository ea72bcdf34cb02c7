"""The Redis cache keeps one client per connection pool (termite_site/redis_cache.py), and still behaves
as Django's Redis cache, from several threads at once."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

from termite_site.redis_cache import ReusingRedisCache


def test_every_call_of_a_cache_shares_one_client(redis_url):
    cache = ReusingRedisCache(redis_url, {})
    first = cache._cache.get_client(write=True)
    assert cache._cache.get_client(write=False) is first
    assert cache._cache.get_client("any key", write=True) is first


def test_it_stores_reads_and_forgets_as_djangos_redis_cache_does(redis_url):
    cache = ReusingRedisCache(redis_url, {"OPTIONS": {}})
    prefix = uuid.uuid4().hex
    cache.set(f"{prefix}:a", {"rows": [1, 2]}, timeout=60)
    assert cache.get(f"{prefix}:a") == {"rows": [1, 2]}
    assert cache.add(f"{prefix}:a", "other") is False
    cache.set_many({f"{prefix}:b": 2, f"{prefix}:c": 3}, timeout=60)
    assert cache.get_many([f"{prefix}:a", f"{prefix}:b", f"{prefix}:missing"]) == {
        f"{prefix}:a": {"rows": [1, 2]},
        f"{prefix}:b": 2,
    }
    cache.delete_many([f"{prefix}:a", f"{prefix}:b", f"{prefix}:c"])
    assert cache.get(f"{prefix}:a") is None


def test_threads_sharing_the_client_each_read_their_own_values(redis_url):
    cache = ReusingRedisCache(redis_url, {})
    prefix = uuid.uuid4().hex

    def round_trip(n: int) -> bool:
        cache.set(f"{prefix}:{n}", n, timeout=60)
        return all(cache.get(f"{prefix}:{n}") == n for _ in range(20))

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(round_trip, range(40)))
    cache.delete_many([f"{prefix}:{n}" for n in range(40)])
