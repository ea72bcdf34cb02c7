"""How fast two small kernels of the scoring library are: a neighbour database, and the bootstrap interval.

    .venv/bin/python -m benchmarks.kernel_speed [--repeats N]

- A neighbour of the demo's `biblioteca` (5 tables, 100 rows), as test-suite accuracy draws them by the
  dozen at import: target well under 50 ms.
- The 95% bootstrap interval of a full benchmark's 202 answers, computed for every score shown: target
  under 200 ms.

Each is timed `--repeats` times (5 by default) in this process; the best and the median are printed with
the target and their ratio to it. Plain Python, no Django: the scoring library alone.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evaluation.scoring.metrics import bootstrap_ci
from evaluation.scoring.mysql_dump import build_sqlite, schema_text
from evaluation.scoring.neighbours import neighbour_dump
from evaluation.sources import demo_database_sources

NEIGHBOUR_TARGET_S = 0.050
INTERVAL_TARGET_S = 0.200


def timed(work: Callable[[int], object], repeats: int) -> list[float]:
    timings = []
    for number in range(repeats):
        started = time.perf_counter()
        work(number)
        timings.append(time.perf_counter() - started)
    return timings


def report(name: str, timings: list[float], target: float) -> None:
    best, median = min(timings), statistics.median(timings)
    print(
        f"{name:<44} best {best * 1000:7.1f} ms  median {median * 1000:7.1f} ms  "
        f"target {target * 1000:.0f} ms  best/target {best / target:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats

    (dump,) = [database.dump for database, _ in demo_database_sources() if database.slug == "biblioteca"]
    with tempfile.TemporaryDirectory() as folder:
        original = Path(folder) / "biblioteca.sqlite3"
        build_sqlite(dump, original)
        schema = schema_text(dump)
        report(
            "neighbour of the demo's biblioteca",
            timed(
                lambda seed: neighbour_dump(original=original, schema_text=schema, seed=str(seed)), repeats
            ),
            NEIGHBOUR_TARGET_S,
        )
    report(
        "bootstrap interval of 202 answers",
        timed(lambda _: bootstrap_ci([True, False] * 101), repeats),
        INTERVAL_TARGET_S,
    )


if __name__ == "__main__":
    main()
