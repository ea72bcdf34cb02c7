"""How long the leaderboard's rank rule takes: every pair of rows tested, Holm's correction, the ranks.

    .venv/bin/python -m benchmarks.rank_rule

The rule (`evaluation.scoring.significance.paired_ranks`) runs when a version's ranking is built, which is
then cached until the ranking changes: its time adds to an empty cache's render, never to a cached page.
Systems here answer 202 questions (Termite's count) with accuracies spread from 20% to 90%, drawn from a
fixed seed. Prints, for 30, 100, 300 and 1,000 rows: the pairs compared, the best of three times, the time
per pair, and the processor time of that run (all of this process's threads: above the time when a library
runs threads of its own, which a web process serving other requests meanwhile pays for).
"""

from __future__ import annotations

import random
import time

from evaluation.scoring.significance import mcnemar_p, paired_ranks

QUESTIONS = 202


def systems(count: int) -> dict[int, dict[str, bool]]:
    rng = random.Random(count)
    return {
        number: {f"q{q:03d}": rng.random() < 0.2 + 0.7 * number / count for q in range(QUESTIONS)}
        for number in range(count)
    }


def main() -> None:
    print(f"{'rows':>6} {'pairs':>8} {'seconds':>9} {'us/pair':>8} {'CPU s':>7} {'ranks 1..':>10}")
    for count in (30, 100, 300, 1000):
        verdicts = systems(count)
        best, processor = float("inf"), float("inf")
        for _ in range(3):
            mcnemar_p.cache_clear()  # as the first build after a worker starts
            started, processor_started = time.perf_counter(), time.process_time()
            rule = paired_ranks(verdicts)
            best, processor = min(
                (best, processor), (time.perf_counter() - started, time.process_time() - processor_started)
            )
        print(
            f"{count:>6} {rule.comparisons:>8} {best:>9.3f} {best / rule.comparisons * 1e6:>8.2f}"
            f" {processor:>7.3f} {max(rule.ranks.values()):>10}"
        )


if __name__ == "__main__":
    main()
