"""The ranking as JSON and CSV. The names of keys and columns are a public contract: add, never rename.

Accuracies are fractions in [0, 1] in both, the self-reported Spider EA and the gap to it too.
"""

from __future__ import annotations

import csv
import io

from leaderboard.ranking import Leaderboard, Row


def json_document(board: Leaderboard) -> dict:
    return {
        "version": board.version,
        "databases": board.databases,
        "hardness_levels": list(board.hardness_levels),
        "rows": [json_row(row) for row in board.rows],
    }


def json_row(row: Row) -> dict:
    return {
        "rank": row.rank,
        "submission_id": row.submission_id,
        "model_name": row.model_name,
        "team": row.team,
        "date": row.date.isoformat(),
        "ea": row.ea,
        "ea_strict": row.ea_strict,
        "ea_ci95": list(row.ea_ci95) if row.ea_ci95 else None,
        "per_database": row.per_database,
        "per_hardness": row.per_hardness,
        "spider_ea": row.spider_ea,
        "spider_gap": row.spider_gap,
        "model_size": row.model_size,
        "weights": row.weights,
        "approach": row.approach,
        "baseline": row.baseline,
        "source": row.source,
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
    ]


def csv_text(board: Leaderboard) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(csv_header(board))
    for row in board.rows:
        low, high = row.ea_ci95 or (None, None)
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
            ]
        )
    return out.getvalue()


def _number(value: float | int | None) -> str:
    return "" if value is None else str(value)


def _text(value: str) -> str:
    # Names come from participants: a leading = + - @ would make a spreadsheet run them as a formula.
    return f"'{value}" if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
