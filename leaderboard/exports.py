"""The ranking as JSON and CSV. The names of keys and columns are a public contract: add, never rename.

Accuracies are fractions in [0, 1] in both, the self-reported Spider EA and the gap to it too. The JSON
objects are typed below; the API (leaderboard/api.py) declares its answer with these types, and its OpenAPI
document is generated from them.
"""

from __future__ import annotations

import csv
import io
from datetime import date
from typing import Annotated

from typing_extensions import TypedDict

from evaluation.scoring.scores_json import Fraction, Schema
from evaluation.scoring.significance import RANK_RULE
from leaderboard.model_card import HOW_IT_RAN, Approach, InstructionLanguage, Sampling, SchemaFormat, Weights
from leaderboard.ranking import Leaderboard, Row


class LeaderboardRowJSON(TypedDict):
    """A public scored submission, or a baseline reported in a paper and not scored here."""

    rank: Annotated[
        int | None,
        Schema(
            description="1 + the number of rows significantly better (`rank_rule`); null for baselines and for"
            " scores stored without a verdict per question, until they are rescored"
        ),
    ]
    significantly_better: Annotated[
        list[int],
        Schema(
            description="The submission ids of the rows significantly better than this one, by the rank rule:"
            " what the rank counts"
        ),
    ]
    submission_id: Annotated[int | None, Schema(description="null for baselines")]
    model_name: str
    team: Annotated[
        str,
        Schema(
            description="A submission's team's name (empty for none), or the authors a baseline's paper names"
        ),
    ]
    team_slug: Annotated[
        str | None,
        Schema(
            description="The slug of a submission's team, as in the ranking's ?team= filter and the team's"
            " page; null for none and for baselines"
        ),
    ]
    date: Annotated[str, Schema(format="date", description="Submitted, or published for a baseline")]
    ea: Fraction
    ea_strict: Fraction | None
    ea_ci95: Annotated[
        list[float] | None,
        Schema(minItems=2, maxItems=2, description="95% bootstrap interval of EA; null for baselines"),
    ]
    ts_ea: Annotated[
        Fraction | None,
        Schema(
            description="Test-suite EA: right on every neighbour database of the question's test suite too;"
            " null when unknown (baselines, and scores made before scorer 1.3.0 until they are rescored)"
        ),
    ]
    ts_ea_ci95: Annotated[
        list[float] | None,
        Schema(minItems=2, maxItems=2, description="95% bootstrap interval of TS-EA; null when TS-EA is"),
    ]
    per_database: Annotated[
        dict[str, Fraction | None],
        Schema(
            description="EA per database slug; null where nothing was scored, and for a baseline where its"
            " paper gives no figure (all null for one reported on other databases)"
        ),
    ]
    per_hardness: dict[str, Fraction | None]
    spider_ea: Annotated[Fraction | None, Schema(description="Self-reported Spider dev EA, as a fraction")]
    spider_gap: Annotated[float | None, Schema(description="spider_ea minus ea")]
    model_size: str
    weights: Annotated[str, Schema(enum=Weights.values)]
    approach: Annotated[str, Schema(enum=Approach.values)]
    baseline: bool
    source: Annotated[str, Schema(description="A baseline's citation; empty for submissions")]
    scorer_version: Annotated[
        str | None,
        Schema(
            description="The scorer version that produced the scores; rows scored by an older one will be"
            " rescored. null for baselines"
        ),
    ]
    verified: Annotated[
        bool,
        Schema(
            description="The organisers reproduced the run, or ran the system themselves; false for a"
            " self-reported run and for baselines"
        ),
    ]
    verified_at: Annotated[
        str | None, Schema(format="date", description="When the run was verified; null if it was not")
    ]
    verified_note: Annotated[
        str | None,
        Schema(description="How the run was verified, in the organisers' words; null if it was not"),
    ]
    # How the predictions were made, as the model card says (null where it is silent: private
    # submissions, older rows and baselines may be).
    training_cutoff: Annotated[
        str | None,
        Schema(description='The model\'s training-data cutoff: a date, YYYY-MM-DD, or "unknown"'),
    ]
    shots: Annotated[int | None, Schema(description="Examples in the prompt: 0 for zero-shot")]
    schema_format: Annotated[
        str | None,
        Schema(enum=[*SchemaFormat.values, None], description="How the prompt gave the schema"),
    ]
    instruction_language: Annotated[
        str | None,
        Schema(
            enum=[*InstructionLanguage.values, None], description="The language of the prompt's instructions"
        ),
    ]
    sampling: Annotated[
        str | None, Schema(enum=[*Sampling.values, None], description="How the output was decoded")
    ]
    temperature: float | None
    decoding_note: str | None
    run_date: Annotated[str | None, Schema(format="date", description="When the predictions were generated")]
    paper_url: Annotated[str | None, Schema(description="For a baseline, the paper that reports it")]
    code_url: str | None
    model_url: str | None
    file_sha256: Annotated[
        str | None,
        Schema(
            description="The sha256 of the predictions file as uploaded, so that a number can be tied to"
            " one file; null for baselines"
        ),
    ]
    ea_after_cutoff: Annotated[
        Fraction | None,
        Schema(
            description="EA on the questions added to the benchmark after the model's training-data"
            " cutoff; null without a cutoff date, when no question came after it, and for baselines"
        ),
    ]
    questions_after_cutoff: Annotated[
        int | None, Schema(description="How many scored questions ea_after_cutoff is over; null with it")
    ]
    portal_run: Annotated[
        bool,
        Schema(
            description="The portal made these predictions by running a protocol against the model's endpoint"
            " (the same prompts for every such row); false for an upload and for baselines"
        ),
    ]
    portal_protocol: Annotated[
        str | None, Schema(description="The protocol the portal ran, e.g. termite-2turn-it/1; null if none")
    ]
    portal_endpoint_host: Annotated[
        str | None, Schema(description="The host of the endpoint the portal called; null if none")
    ]
    portal_run_at: Annotated[
        str | None, Schema(format="date", description="The day the portal's run ended; null if none")
    ]


class LeaderboardJSON(TypedDict):
    version: str
    databases: list[str]
    hardness_levels: list[str]
    rank_rule: Annotated[
        str,
        Schema(
            description="How ranks are given: a row's rank is 1 + the number of rows shown better than it by"
            " McNemar's exact test on the questions scored for both, Holm-corrected over every pair of ranked"
            " rows at 5%"
        ),
    ]
    comparisons: Annotated[int, Schema(description="The pairs of ranked rows compared: Holm's m")]
    rank_threshold: Annotated[
        float, Schema(description="Holm's threshold: a pair whose McNemar p-value is below it is significant")
    ]
    rows: list[LeaderboardRowJSON]


def json_document(board: Leaderboard) -> LeaderboardJSON:
    return {
        "version": board.version,
        "databases": board.databases,
        "hardness_levels": list(board.hardness_levels),
        "rank_rule": RANK_RULE,
        "comparisons": board.comparisons,
        "rank_threshold": board.rank_threshold,
        "rows": [json_row(row) for row in board.rows],
    }


def json_row(row: Row) -> LeaderboardRowJSON:
    return {
        "rank": row.rank,
        "significantly_better": list(row.significantly_better),
        "submission_id": row.submission_id,
        "model_name": row.model_name,
        "team": row.team,
        "team_slug": row.team_slug or None,
        "date": row.date.isoformat(),
        "ea": row.ea,
        "ea_strict": row.ea_strict,
        "ea_ci95": list(row.ea_ci95) if row.ea_ci95 else None,
        "ts_ea": row.ts_ea,
        "ts_ea_ci95": list(row.ts_ea_ci95) if row.ts_ea_ci95 else None,
        "per_database": row.per_database,
        "per_hardness": row.per_hardness,
        "spider_ea": row.spider_ea,
        "spider_gap": row.spider_gap,
        "model_size": row.model_size,
        "weights": row.weights,
        "approach": row.approach,
        "baseline": row.baseline,
        "source": row.source,
        "scorer_version": row.scorer_version,
        "verified": row.verified,
        "verified_at": row.verified_at.isoformat() if row.verified_at else None,
        "verified_note": row.verified_note if row.verified else None,
        "training_cutoff": row.training_cutoff or None,
        "shots": row.shots,
        "schema_format": row.schema_format or None,
        "instruction_language": row.instruction_language or None,
        "sampling": row.sampling or None,
        "temperature": row.temperature,
        "decoding_note": row.decoding_note or None,
        "run_date": row.run_date.isoformat() if row.run_date else None,
        "paper_url": row.paper_url or None,
        "code_url": row.code_url or None,
        "model_url": row.model_url or None,
        "file_sha256": row.file_sha256 or None,
        "ea_after_cutoff": row.ea_after_cutoff,
        "questions_after_cutoff": row.questions_after_cutoff,
        "portal_run": row.portal_run,
        "portal_protocol": row.portal_protocol or None,
        "portal_endpoint_host": row.portal_endpoint_host or None,
        "portal_run_at": row.portal_run_at.isoformat() if row.portal_run_at else None,
    }


def csv_header(board: Leaderboard) -> list[str]:
    return [
        "rank",
        "submission_id",
        "model_name",
        "team",
        "date",
        "ea",
        "ea_strict",
        "ea_ci95_low",
        "ea_ci95_high",
        *(f"db_{slug}" for slug in board.databases),
        *(f"hardness_{level}" for level in board.hardness_levels),
        "spider_ea",
        "spider_gap",
        "model_size",
        "weights",
        "approach",
        "baseline",
        "source",
        "scorer_version",
        # Added last, so that a reader that counts columns finds the older ones where they were.
        "ts_ea",
        "ts_ea_ci95_low",
        "ts_ea_ci95_high",
        "verified",
        "verified_at",
        "verified_note",
        "team_slug",
        *HOW_IT_RAN,
        "paper_url",
        "code_url",
        "model_url",
        "file_sha256",
        "ea_after_cutoff",
        "questions_after_cutoff",
        "portal_run",
        "portal_protocol",
        "portal_endpoint_host",
        "portal_run_at",
        "significantly_better",
    ]


def csv_text(board: Leaderboard) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(csv_header(board))
    for row in board.rows:
        low, high = row.ea_ci95 or (None, None)
        ts_low, ts_high = row.ts_ea_ci95 or (None, None)
        writer.writerow(
            [
                _number(row.rank),
                _number(row.submission_id),
                _text(row.model_name),
                _text(row.team),
                row.date.isoformat(),
                _number(row.ea),
                _number(row.ea_strict),
                _number(low),
                _number(high),
                *(_number(row.per_database[slug]) for slug in board.databases),
                *(_number(row.per_hardness[level]) for level in board.hardness_levels),
                _number(row.spider_ea),
                _number(row.spider_gap),
                _text(row.model_size),
                row.weights,
                row.approach,
                "true" if row.baseline else "false",
                _text(row.source),
                row.scorer_version or "",
                _number(row.ts_ea),
                _number(ts_low),
                _number(ts_high),
                "true" if row.verified else "false",
                row.verified_at.isoformat() if row.verified_at else "",
                _text(row.verified_note),
                _text(row.team_slug),
                *(_cell(getattr(row, name)) for name in HOW_IT_RAN),
                _text(row.paper_url),
                _text(row.code_url),
                _text(row.model_url),
                row.file_sha256,
                _number(row.ea_after_cutoff),
                _number(row.questions_after_cutoff),
                "true" if row.portal_run else "false",
                row.portal_protocol,
                row.portal_endpoint_host,
                row.portal_run_at.isoformat() if row.portal_run_at else "",
                " ".join(str(pk) for pk in row.significantly_better),
            ]
        )
    return out.getvalue()


def _number(value: float | int | None) -> str:
    return "" if value is None else str(value)


def _cell(value: str | float | date | None) -> str:
    if isinstance(value, date):
        return value.isoformat()
    return _text(value) if isinstance(value, str) else _number(value)


def _text(value: str) -> str:
    # Names come from participants: a leading = + - @ would make a spreadsheet run them as a formula.
    return f"'{value}" if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
