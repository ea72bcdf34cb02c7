"""Cite this result: what a paper needs to point at one public submission's result, as BibTeX and as one
plain-text paragraph, on the submission's page and in the API (`citation`).

Only a result anyone can check may be cited: a public submission, scored and released, that is a row of
its version's leaderboard. A private one is never cited (its page is its owner's), nor a hidden or
withdrawn one, nor one whose result is not released yet. The rank is the one the leaderboard shows, with
the name of the rule that made it; an unranked row (scores stored without a verdict per question) cites no
rank. The predictions file's sha256 ties the numbers to one file.

The texts are in English whatever the page's language: a paper cites one text, and the page and the API
give the same one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Annotated

from typing_extensions import TypedDict

from evaluation.scoring.scores_json import Fraction, Interval, Schema
from evaluation.scoring.significance import RANK_RULE
from leaderboard import ranking
from leaderboard.feedback import Feedback
from leaderboard.models import Submission
from leaderboard.templatetags.leaderboard import percent


class CitationJSON(TypedDict):
    """How to cite a public submission's result: the fields, and the citation made of them."""

    permalink: Annotated[str, Schema(format="uri", description="The submission's page")]
    model: str
    team: Annotated[str | None, Schema(description="The team it was made on behalf of; null for none")]
    ea: Fraction
    ea_ci95: Annotated[Interval, Schema(description="EA's 95% confidence interval")]
    rank: Annotated[
        int | None, Schema(description="Its rank on the leaderboard; null for a row the rule could not rank")
    ]
    rank_rule: Annotated[str, Schema(description="The rule the ranks are made by")]
    benchmark: str
    benchmark_version: str
    scorer_version: str
    file_sha256: Annotated[str, Schema(description="The sha256 of the predictions file as uploaded")]
    submitted: Annotated[str, Schema(format="date")]
    bibtex: Annotated[str, Schema(description="A BibTeX @misc entry")]
    text: Annotated[str, Schema(description="The same citation as one paragraph of plain text")]


@dataclass(frozen=True)
class CitedResult:
    """The values a citation is made of."""

    permalink: str
    model: str
    team: str | None
    ea: float
    ea_ci95: tuple[float, float]
    rank: int | None
    benchmark: str
    benchmark_version: str
    scorer_version: str
    file_sha256: str
    submission_id: int
    submitted: date


def citation_for(submission: Submission, seen: Feedback, *, permalink: str) -> CitationJSON | None:
    """The citation of `submission` as `seen` by its viewer; None unless it is a public, released row of its
    version's leaderboard (the ranking read from its cache)."""
    if not submission.is_public or seen.shown is None:
        return None
    row = next(
        (
            row
            for row in ranking.leaderboard_rows(version=submission.version)
            if row.submission_id == submission.pk
        ),
        None,
    )
    if row is None:
        return None
    overall = seen.shown["overall"]
    low, high = overall["ea_ci95"]
    return citation(
        CitedResult(
            permalink=permalink,
            model=submission.model_name,
            team=submission.team.name if submission.team else None,
            ea=overall["ea"],
            ea_ci95=(low, high),
            rank=row.rank,
            benchmark=submission.version.name,
            benchmark_version=submission.version.label,
            scorer_version=seen.shown["scorer_version"],
            file_sha256=submission.file_sha256,
            submission_id=submission.pk,
            submitted=submission.created_at.date(),
        )
    )


def citation(result: CitedResult) -> CitationJSON:
    return {
        "permalink": result.permalink,
        "model": result.model,
        "team": result.team,
        "ea": result.ea,
        "ea_ci95": list(result.ea_ci95),
        "rank": result.rank,
        "rank_rule": RANK_RULE,
        "benchmark": result.benchmark,
        "benchmark_version": result.benchmark_version,
        "scorer_version": result.scorer_version,
        "file_sha256": result.file_sha256,
        "submitted": result.submitted.isoformat(),
        "bibtex": bibtex(result),
        "text": plain_text(result),
    }


def bibtex_key(result: CitedResult) -> str:
    """Stable for the submission: a version's label holds only letters, digits, dots, dashes and
    underscores, all of which a BibTeX key may hold."""
    return f"termite-{result.benchmark_version}-{result.submission_id}"


def bibtex(result: CitedResult) -> str:
    note = (
        f"{_score(result)}; {_rank(result)}; scorer {result.scorer_version}; "
        f"predictions file sha256 {result.file_sha256}"
    )
    fields = [
        # Double braces: BibTeX keeps a team's name whole, as an institution, rather than split it into a
        # person's first and last names.
        *([("author", "{" + bibtex_escape(result.team) + "}")] if result.team else []),
        ("title", f"{bibtex_escape(result.model)} on {bibtex_escape(_benchmark(result))}"),
        ("howpublished", "Termite Portal leaderboard"),
        ("year", str(result.submitted.year)),
        ("note", bibtex_escape(note)),
        # Not escaped: the url field is read verbatim, and a permalink holds no brace.
        ("url", result.permalink),
    ]
    width = max(len(name) for name, _value in fields)
    lines = [f"  {name.ljust(width)} = {{{value}}}" for name, value in fields]
    return f"@misc{{{bibtex_key(result)},\n" + ",\n".join(lines) + "\n}"


def plain_text(result: CitedResult) -> str:
    by = f"{_one_line(result.team)}. " if result.team else ""
    return (
        f"{by}{_one_line(result.model)} on {_benchmark(result)}: {_score(result)}, {_rank(result)}. "
        f"Scorer {result.scorer_version}; predictions file sha256 {result.file_sha256}. "
        f"Submitted {result.submitted.isoformat()}. {result.permalink}"
    )


# What LaTeX reads as markup in a BibTeX field, each replaced in one pass: a backslash escape must not
# be escaped again.
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "%": r"\%",
    "&": r"\&",
    "_": r"\_",
    "#": r"\#",
    "$": r"\$",
    "^": r"\^{}",
    "~": r"\~{}",
}
_LATEX_SPECIAL_PATTERN = re.compile("|".join(re.escape(character) for character in _LATEX_SPECIAL))


def bibtex_escape(text: str) -> str:
    """`text` as a BibTeX field's value shows it: braces balanced, LaTeX's special characters literal,
    on one line."""
    return _LATEX_SPECIAL_PATTERN.sub(lambda found: _LATEX_SPECIAL[found.group()], _one_line(text))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _benchmark(result: CitedResult) -> str:
    return f"{_one_line(result.benchmark)} {result.benchmark_version}"


def _score(result: CitedResult) -> str:
    low, high = result.ea_ci95
    return f"EA {percent(result.ea)}% (95% CI {percent(low)}-{percent(high)}%)"


def _rank(result: CitedResult) -> str:
    rank = f"rank {result.rank}" if result.rank is not None else "unranked"
    return f"{rank} ({RANK_RULE})"
