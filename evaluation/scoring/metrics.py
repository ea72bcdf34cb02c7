"""Aggregate scores: EA, EA-strict and TS-EA overall, per database and per hardness level, outcome counts,
and bootstrap confidence intervals for overall EA and TS-EA. Excluded questions leave every denominator and
are counted.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaluation.scoring.scores_json import AccuracyJSON
from evaluation.scoring.vocabulary import EXCLUDED, HARDNESS_LEVELS, OUTCOMES, Outcome

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20240613


@dataclass(frozen=True)
class Graded:
    """One question's verdict, as the aggregates need it. `outcome` is one of OUTCOMES or EXCLUDED."""

    db_id: str
    hardness: str
    outcome: str
    ea: bool
    ea_strict: bool
    ts: bool = False  # EA on the original database and on every database of the question's test suite
    has_suite: bool = False


@dataclass(frozen=True)
class Accuracy:
    ea: float
    ea_strict: float
    n: int
    ts_ea: float = 0.0

    def as_dict(self) -> AccuracyJSON:
        return {"ea": self.ea, "ea_strict": self.ea_strict, "ts_ea": self.ts_ea, "n": self.n}


@dataclass(frozen=True)
class Metrics:
    overall: Accuracy
    ea_ci95: tuple[float, float]
    excluded: int
    per_database: dict[str, Accuracy]
    per_hardness: dict[str, Accuracy]
    outcomes: dict[Outcome, int]
    ts_ea_ci95: tuple[float, float] = (0.0, 0.0)
    ts_questions: int = 0


def summarise(graded: Sequence[Graded]) -> Metrics:
    scored = [g for g in graded if g.outcome != EXCLUDED]
    counts = Counter(g.outcome for g in scored)
    unknown = set(counts) - set(OUTCOMES)
    if unknown:
        raise ValueError(f"unknown outcomes: {sorted(unknown)}")
    hardness_levels = [*HARDNESS_LEVELS, *sorted({g.hardness for g in scored} - set(HARDNESS_LEVELS))]
    return Metrics(
        overall=accuracy(scored),
        ea_ci95=bootstrap_ci([g.ea for g in scored]),
        excluded=len(graded) - len(scored),
        per_database=_accuracy_by(scored, lambda g: g.db_id, sorted({g.db_id for g in scored})),
        per_hardness=_accuracy_by(scored, lambda g: g.hardness, hardness_levels),
        outcomes={outcome: counts[outcome] for outcome in OUTCOMES},
        ts_ea_ci95=bootstrap_ci([g.ts for g in scored]),
        ts_questions=sum(g.has_suite for g in scored),
    )


def accuracy(graded: Sequence[Graded]) -> Accuracy:
    """EA, EA-strict and TS-EA as fractions of `graded`; 0.0 when there is nothing to score."""
    n = len(graded)
    if n == 0:
        return Accuracy(ea=0.0, ea_strict=0.0, n=0)
    return Accuracy(
        ea=sum(g.ea for g in graded) / n,
        ea_strict=sum(g.ea_strict for g in graded) / n,
        n=n,
        ts_ea=sum(g.ts for g in graded) / n,
    )


def bootstrap_ci(
    successes: Sequence[bool],
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of `successes`, reproducible through a fixed seed.

    A resample of n right-or-wrong answers holds a Binomial(n, correct/n) number of right ones, so each
    resample's mean is drawn from that distribution directly (one random number, not n): the same
    bootstrap, fast. It depends on the count alone, not on the order of the questions.
    """
    n = len(successes)
    if n == 0:
        return (0.0, 0.0)
    cumulative = binomial_cdf(n, sum(map(bool, successes)) / n)
    rng = random.Random(seed)
    return percentile_interval(
        [bisect.bisect_left(cumulative, rng.random()) / n for _ in range(resamples)], level=level
    )


def percentile_interval(draws: Sequence[float], *, level: float) -> tuple[float, float]:
    """The central `level` interval of bootstrap `draws` (not empty), by their percentiles."""
    ordered = sorted(draws)
    tail = (1 - level) / 2
    last = len(ordered) - 1
    return ordered[math.floor(tail * last)], ordered[math.ceil((1 - tail) * last)]


def binomial_cdf(n: int, p: float) -> list[float]:
    """P(X <= k) for k = 0..n, X ~ Binomial(n, p); the last entry is exactly 1."""
    if p in (0.0, 1.0):
        return [1.0 - p] * n + [1.0]
    # In logarithms: (1 - p) ** n underflows for a few hundred questions.
    log_choose = math.lgamma(n + 1)
    weights = [
        math.exp(
            log_choose
            - math.lgamma(k + 1)
            - math.lgamma(n - k + 1)
            + k * math.log(p)
            + (n - k) * math.log1p(-p)
        )
        for k in range(n + 1)
    ]
    total = math.fsum(weights)
    cumulative = list(itertools.accumulate(w / total for w in weights))
    cumulative[-1] = 1.0
    return cumulative


def _accuracy_by(
    graded: Sequence[Graded], group_of: Callable[[Graded], str], groups: Sequence[str]
) -> dict[str, Accuracy]:
    members: dict[str, list[Graded]] = {group: [] for group in groups}
    for g in graded:
        members[group_of(g)].append(g)
    return {group: accuracy(items) for group, items in members.items()}
