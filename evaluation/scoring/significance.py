"""Whether two systems' EA differ by more than chance, from their verdicts on the same questions.

Both tests are paired: they look at the questions one system gets right and the other wrong, which is
far more telling than two separate confidence intervals (two systems right on the same 150 of 198
questions are equal, whatever their intervals say). Everything here depends on the four counts of the
2 x 2 table of verdicts (`Pairs`), never on which questions fall in which cell.

- McNemar's exact test (McNemar 1947): of the b + c questions where the verdicts differ, A alone is right
  on b; were the systems equally good, b would be Binomial(b + c, 1/2). The two-sided p-value is
  min(1, 2 P(X <= min(b, c))), computed exactly in integers; 1 when b + c = 0.
- A paired bootstrap interval of EA(A) - EA(B) (Koehn 2004): resample the questions with replacement and
  take the percentiles of the difference. A resample of n questions is a Multinomial(n; the four cells'
  shares) draw of the four counts, and the difference is (b* - c*) / n, so each resample is drawn from
  the counts directly (b* ~ Binomial(n, b/n), then c* ~ Binomial(n - b*, c/(n - b))): the same bootstrap
  as resampling questions, in two random numbers instead of n. The seed is fixed, as for
  `metrics.bootstrap_ci`: the same table always gets the same interval.

The leaderboard ranks by the same test (`paired_ranks`): a row's rank is 1 + the number of rows shown to be
better than it by McNemar's exact test on the questions scored for both, with Holm's correction for the
number of pairs compared, so that "rank 3" means "two systems are shown to be better".
"""

from __future__ import annotations

import bisect
import functools
import math
import random
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Generic, TypeVar

import numpy
from threadpoolctl import ThreadpoolController
from typing_extensions import TypedDict

from evaluation.scoring.metrics import BOOTSTRAP_SEED, binomial_cdf, percentile_interval
from evaluation.scoring.scores_json import Fraction, Interval, Schema

PAIRED_RESAMPLES = 2000
# A difference is called significant when McNemar's p-value is below this (on the leaderboard, after
# Holm's correction for the number of pairs of rows).
SIGNIFICANCE_LEVEL = 0.05
# The rank rule's name, as exports and citations give it.
RANK_RULE = "paired McNemar exact test, Holm-corrected, 5%"


@dataclass(frozen=True)
class Pairs:
    """Two systems' verdicts on the same n questions, counted: right in both, in A only (b), in B only (c),
    in neither."""

    both: int
    only_a: int
    only_b: int
    neither: int

    def __post_init__(self) -> None:
        if min(self.both, self.only_a, self.only_b, self.neither) < 0:
            raise ValueError(f"negative count in {self}")

    @classmethod
    def of(cls, verdicts: Iterable[tuple[bool, bool]]) -> Pairs:
        """The table of (A right, B right) verdicts, one per question."""
        counts = [0, 0, 0, 0]
        for a, b in verdicts:
            counts[(not a) * 2 + (not b)] += 1
        both, only_a, only_b, neither = counts
        return cls(both=both, only_a=only_a, only_b=only_b, neither=neither)

    @property
    def n(self) -> int:
        return self.both + self.only_a + self.only_b + self.neither

    @property
    def difference(self) -> float:
        """EA(A) - EA(B) on these questions; 0.0 when there are none."""
        return (self.only_a - self.only_b) / self.n if self.n else 0.0


class PairedTestJSON(TypedDict):
    n: Annotated[int, Schema(description="Questions scored for both submissions: the tests' sample")]
    ea_a: Annotated[Fraction, Schema(description="EA of A on those questions")]
    ea_b: Annotated[Fraction, Schema(description="EA of B on those questions")]
    difference: Annotated[float, Schema(minimum=-1, maximum=1, description="ea_a - ea_b")]
    difference_ci95: Annotated[
        Interval, Schema(description="Paired bootstrap 95% interval of the difference (fixed seed)")
    ]
    mcnemar_p: Annotated[Fraction, Schema(description="Two-sided p-value of McNemar's exact test")]
    right_only_a: Annotated[int, Schema(description="How many of the questions A alone answers right")]
    right_only_b: Annotated[int, Schema(description="How many of the questions B alone answers right")]


@dataclass(frozen=True)
class PairedTest:
    pairs: Pairs
    difference_ci95: tuple[float, float]
    mcnemar_p: float

    @property
    def significant(self) -> bool:
        return self.mcnemar_p < SIGNIFICANCE_LEVEL

    def as_dict(self) -> PairedTestJSON:
        pairs, n = self.pairs, self.pairs.n or 1
        return {
            "n": pairs.n,
            "ea_a": (pairs.both + pairs.only_a) / n,
            "ea_b": (pairs.both + pairs.only_b) / n,
            "difference": pairs.difference,
            "difference_ci95": list(self.difference_ci95),
            "mcnemar_p": self.mcnemar_p,
            "right_only_a": pairs.only_a,
            "right_only_b": pairs.only_b,
        }


def paired_test(pairs: Pairs, *, resamples: int = PAIRED_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> PairedTest:
    return PairedTest(
        pairs=pairs,
        difference_ci95=paired_bootstrap_ci(pairs, resamples=resamples, seed=seed),
        mcnemar_p=mcnemar_p(pairs.only_a, pairs.only_b),
    )


@functools.lru_cache(maxsize=1 << 16)  # (202 + 1) ** 2 pairs of counts for Termite's 202 questions
def mcnemar_p(only_a: int, only_b: int) -> float:
    """The two-sided p-value of McNemar's exact test: min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c,
    1/2); 1.0 when the verdicts never differ. Exact: the tail is a sum of integers over 2 ** (b + c)."""
    if min(only_a, only_b) < 0:
        raise ValueError("counts must not be negative")
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    tail = sum(math.comb(discordant, k) for k in range(min(only_a, only_b) + 1))
    # True division of two integers rounds once, correctly, however large they are.
    return min(1.0, 2 * tail / (1 << discordant))


def paired_bootstrap_ci(
    pairs: Pairs,
    *,
    level: float = 0.95,
    resamples: int = PAIRED_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile paired-bootstrap interval of EA(A) - EA(B), drawn from the counts (module docstring);
    (0.0, 0.0) when there are no questions."""
    n = pairs.n
    if n == 0:
        return (0.0, 0.0)
    rng = random.Random(seed)
    only_a_cdf = binomial_cdf(n, pairs.only_a / n)
    rest = n - pairs.only_a
    only_b_share = pairs.only_b / rest if rest else 0.0
    only_b_cdfs: dict[int, list[float]] = {}  # by the number of questions left once b* is drawn
    differences = []
    for _ in range(resamples):
        only_a = _draw(only_a_cdf, rng)
        left = n - only_a
        if left not in only_b_cdfs:
            only_b_cdfs[left] = binomial_cdf(left, only_b_share)
        differences.append((only_a - _draw(only_b_cdfs[left], rng)) / n)
    return percentile_interval(differences, level=level)


def _draw(cumulative: list[float], rng: random.Random) -> int:
    """One draw by inversion from the distribution on 0..len - 1 whose cumulative probabilities these are
    (the last exactly 1), as `metrics.bootstrap_ci` draws."""
    return bisect.bisect_left(cumulative, rng.random())


K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class PairedRanks(Generic[K]):
    """The leaderboard's rank rule over a set of systems (`paired_ranks`)."""

    ranks: dict[K, int]  # 1 + how many systems are significantly better
    better: dict[K, tuple[K, ...]]  # which they are, best first
    comparisons: int  # the pairs compared: Holm's m
    threshold: float  # a pair is significant when its p-value is below it

    def significantly_better(self, a: K, b: K) -> bool:
        """Whether `a` is shown to be better than `b` by the rule."""
        return a in self.better.get(b, ())


def paired_ranks(
    verdicts: Mapping[K, Mapping[str, bool]], *, level: float = SIGNIFICANCE_LEVEL
) -> PairedRanks[K]:
    """Ranks from each system's EA verdict per question (question id -> right), as `Pairs` counts them.

    Every pair of systems is tested on the questions scored for both (McNemar's exact test, as the compare
    page does); Holm's step-down correction holds the chance of calling any equal pair different at `level`
    over all m pairs: with the p-values sorted, p(1) <= ... <= p(m), the i-th is significant while every
    p(j), j <= i, is below level / (m - j + 1). That is one threshold, the first p-value that is not, which
    `threshold` keeps so that a single pair can be judged alike later. The better system of a significant
    pair is the one right alone on more questions. A system's rank is 1 + the number of systems
    significantly better than it.

    A board has up to a million pairs, so they are counted at once as matrices: with R (right) and W
    (scored and wrong) as systems x questions 0/1 matrices, R @ W.T holds, for each pair (a, b), the
    questions a alone is right on among those scored for both. A p-value depends only on the two counts,
    and there are far fewer distinct pairs of counts than pairs of systems: each is computed once."""
    keys = list(verdicts)
    n = len(keys)
    questions = {question: i for i, question in enumerate(sorted({q for v in verdicts.values() for q in v}))}
    # Each system's verdicts as one byte per question (0: not scored, 1: wrong, 2: right), read by numpy
    # in one piece: a Python loop per cell would cost more than all the arithmetic below.
    rows = []
    for key in keys:
        row = bytearray(len(questions))
        for question, ok in verdicts[key].items():
            row[questions[question]] = 2 if ok else 1
        rows.append(row)
    codes = numpy.frombuffer(b"".join(rows), dtype=numpy.uint8).reshape(n, len(questions))
    right, wrong = ((codes == code).astype(numpy.float32) for code in (2, 1))
    # Exact: sums of at most len(questions) ones, far below float32's 2 ** 24. One thread: OpenBLAS's own
    # would spin on the other core after each product, taking it from the requests served meanwhile, for
    # products that take a millisecond or two.
    with blas_threads().limit(limits=1, user_api="blas"):
        alone = (right @ wrong.T).astype(numpy.int32)  # alone[a, b]: questions a alone is right on
        # alone transposed, made rather than read across rows: two passes over a strided million
        # cells cost more than the product.
        against = (wrong @ right.T).astype(numpy.int32)
    width = len(questions) + 1
    # The p-value's key: it is symmetric in the two counts, and so is this matrix.
    pair_counts = numpy.minimum(alone, against) * width + numpy.maximum(alone, against)
    # Each pair once: every cell counted, less the diagonal (a system with itself), halved.
    everywhere = numpy.bincount(pair_counts.ravel(), minlength=width * width)
    multiplicity = (everywhere - numpy.bincount(pair_counts.diagonal(), minlength=width * width)) // 2
    present = numpy.flatnonzero(multiplicity)
    p_of = numpy.ones(width * width)
    p_of[present] = [mcnemar_p(*divmod(int(key), width)) for key in present]
    by_p = sorted(zip(p_of[present].tolist(), multiplicity[present].tolist(), strict=True))
    threshold = holm_threshold_counted(by_p, level=level)
    # A pair with equal counts has p = 1 and is never significant, so "more alone" names the better one.
    beats = (p_of < threshold)[pair_counts] & (alone > against)  # beats[a, b]: a is better than b
    systems = numpy.empty(n, dtype=object)
    systems[:] = keys  # filled after creation, so that a tuple key stays one element
    better = {key: tuple(systems[column].tolist()) for key, column in zip(keys, beats.T, strict=True)}
    return PairedRanks(
        ranks={key: 1 + len(better[key]) for key in keys},
        better=better,
        comparisons=n * (n - 1) // 2,
        threshold=threshold,
    )


@functools.cache
def blas_threads() -> ThreadpoolController:
    """numpy's BLAS, for `paired_ranks` to limit its threads: found once per process, when the rule first
    runs (a scan of the process's libraries, some 6 ms, which a process that never ranks does not pay)."""
    return ThreadpoolController()


def holm_threshold(p_values: list[float], *, level: float = SIGNIFICANCE_LEVEL) -> float:
    """Holm's step-down procedure over sorted p-values, as one threshold: the first p(i) that is not below
    level / (m - i + 1); every p-value below it is significant, none at or above it. 1.0 when all are
    (each is below `level` then)."""
    return holm_threshold_counted([(p, 1) for p in p_values], level=level)


def holm_threshold_counted(p_values: list[tuple[float, int]], *, level: float = SIGNIFICANCE_LEVEL) -> float:
    """`holm_threshold` over sorted p-values given with how many pairs have each. Within a run of equal
    p-values the bound level / (m - i + 1) only grows, so the run's first place decides for all of it."""
    m = sum(count for _p, count in p_values)
    place = 0
    for p, count in p_values:
        if p >= level / (m - place):
            return p
        place += count
    return 1.0
