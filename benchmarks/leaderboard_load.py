"""The public leaderboard under load: 1,000 scored submissions, gunicorn on PostgreSQL, Redis cache.

    .venv/bin/python -m benchmarks.leaderboard_load [--submissions 1000] [--users 20] [--seconds 15]

Needs PostgreSQL and Redis on this machine (BENCH_POSTGRES_URL, BENCH_REDIS_URL) and Debian's `wrk`;
makes and drops a scratch database. Prints, for the leaderboard page (its first page and the page of
every row) and its JSON export, in one run: one cold request (empty cache), then requests per second and
p50/p99 latency with `--users` concurrent clients, and the bytes of each answer as sent and uncompressed.
Every client sends `Accept-Encoding: gzip, deflate, br` as browsers do. Each endpoint is loaded twice:
by wrk (C: the load costs the server almost none of the machine's two cores) and by Python threads
(`loadkit.hammer`, which take about one core themselves). Loopback only.
"""

from __future__ import annotations

import argparse
import gzip
import random
import time
import urllib.request

from benchmarks.loadkit import Portal, hammer, wrk


def seed(count: int) -> str:
    from django.utils import timezone

    from evaluation.services import demo_benchmark_load
    from leaderboard.models import Submission
    from termite_site.accounts.models import Team, User

    version = demo_benchmark_load(kind="sealed")  # the sealed rule, production's case
    users = User.objects.bulk_create(
        User(username=f"ricercatore{n}", email=f"r{n}@example.org", password="!") for n in range(50)
    )
    teams = Team.objects.bulk_create(Team(name=f"Gruppo {n}", slug=f"gruppo-{n}") for n in range(37))
    rng = random.Random(7)
    rows = []
    for n in range(count):
        ea = rng.random()
        per_db = {
            db: {"ea": rng.random(), "ea_strict": rng.random(), "n": 12} for db in ("biblioteca", "ciclismo")
        }
        per_level = {
            lv: {"ea": rng.random(), "ea_strict": rng.random(), "n": 6}
            for lv in ("easy", "medium", "hard", "extra")
        }
        scores = {
            "version": str(version),
            "scorer_version": "1.0.0",
            "overall": {
                "ea": ea,
                "ea_strict": ea * 0.9,
                "ea_ci95": [max(0, ea - 0.1), min(1, ea + 0.1)],
                "n": 23,
                "excluded": 0,
            },
            "per_database": per_db,
            "per_hardness": per_level,
            "outcomes": {"correct": int(23 * ea), "wrong_result": 23 - int(23 * ea)},
        }
        rows.append(
            Submission(
                user=users[n % len(users)],
                version=version,
                model_name=f"Modello {n}",
                team=teams[n % 37],
                predictions={},
                file_name="p.jsonl",
                file_sha256="0" * 64,
                file_format="jsonl",
                scorer_version="1.0.0",
                status="scored",
                is_public=True,
                scores=scores,
                ea=ea,
                ea_strict=ea * 0.9,
                scored_at=timezone.now(),
                spider_dev_ea=rng.uniform(50, 90),
                weights=rng.choice(["open", "closed"]),
                approach=rng.choice(["prompting", "fine-tuning"]),
            )
        )
    Submission.objects.bulk_create(rows, batch_size=500)
    return version.label


# What a browser sends; the server picks the encodings it has among them.
BROWSER = {"Accept-Encoding": "gzip, deflate, br"}


def cold_request(url: str) -> tuple[float, int]:
    """The time of one request on an empty cache, and the size of its answer uncompressed."""
    from django.core.cache import cache

    cache.clear()
    started = time.perf_counter()
    request = urllib.request.Request(url, headers=BROWSER)
    with urllib.request.urlopen(request, timeout=60) as response:
        body = response.read()
        encoding = response.headers.get("Content-Encoding")
    elapsed = time.perf_counter() - started
    return elapsed, len(gzip.decompress(body) if encoding == "gzip" else body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=15)
    args = parser.parse_args()
    with Portal("leaderboard_load") as portal:
        label = seed(args.submissions)
        portal.start_web(workers=3)
        pages = {
            "/leaderboard/": "/leaderboard/",
            "/leaderboard/?all=1": "/leaderboard/?all=1",
            "/api/v1/leaderboard": f"/api/v1/leaderboard?version={label}",
        }
        print(f"{args.submissions} scored public submissions, gunicorn 3 workers, PostgreSQL, Redis cache")
        print(f"{args.users} concurrent clients, {args.seconds:.0f} s per endpoint, 127.0.0.1, {BROWSER}")
        table = []
        for name, path in pages.items():
            cold, size = cold_request(portal.url + path)
            loads = {
                "wrk": wrk(portal.url + path, users=args.users, seconds=args.seconds, headers=BROWSER),
                "Python": hammer(portal.url, [path], users=args.users, seconds=args.seconds, headers=BROWSER),
            }
            for client, load in loads.items():
                print(load.line(f"{name} ({client})"))
                table.append(
                    f"| `{name}` | {client} | {1000 * cold:.0f} ms | {load.requests_per_second:.1f} | "
                    f"{1000 * load.percentile(50):.0f} ms | {1000 * load.percentile(99):.0f} ms | "
                    f"{load.bytes_per_request / 1000:,.1f} KB | {size / 1000:,.1f} KB | {load.errors} |"
                )
        print()
        print(
            "| endpoint | client | empty cache | requests/s | p50 | p99 | sent per answer (wrk: with headers) "
            "| uncompressed | errors |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        print("\n".join(table))


if __name__ == "__main__":
    main()
