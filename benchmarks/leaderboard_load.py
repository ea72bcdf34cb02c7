"""The public leaderboard under load: 1,000 scored submissions, gunicorn on PostgreSQL, Redis cache.

    .venv/bin/python -m benchmarks.leaderboard_load [--submissions 1000] [--users 20] [--seconds 15]

Needs PostgreSQL and Redis on this machine (BENCH_POSTGRES_URL, BENCH_REDIS_URL); makes and drops a
scratch database. Prints, for the leaderboard page and its JSON export: one cold request (empty cache),
then requests per second and p50/p99 latency with `--users` concurrent clients. Loopback only.
"""

from __future__ import annotations

import argparse
import random
import time
import urllib.request

from benchmarks.loadkit import Portal, hammer


def seed(count: int) -> str:
    from django.utils import timezone

    from evaluation.services import demo_benchmark_load
    from leaderboard.models import Submission
    from termite_site.accounts.models import Team, User

    version = demo_benchmark_load()
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


def cold_request(url: str) -> float:
    from django.core.cache import cache

    cache.clear()
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        response.read()
    return time.perf_counter() - started


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
            "leaderboard page": "/leaderboard/",
            "leaderboard JSON": f"/api/v1/leaderboard?version={label}",
        }
        print(f"{args.submissions} scored public submissions, gunicorn 3 workers, PostgreSQL, Redis cache")
        print(f"{args.users} concurrent clients, {args.seconds:.0f} s per endpoint, 127.0.0.1")
        for name, path in pages.items():
            print(f"{name + ' (cold, empty cache)':<34} {1000 * cold_request(portal.url + path):>8.1f} ms")
            print(hammer(portal.url, [path], users=args.users, seconds=args.seconds).line(name))


if __name__ == "__main__":
    main()
