"""Plotly figures as JSON for the pages; the browser draws them with the plotly.js the site serves."""

from __future__ import annotations

import json
from typing import Any, cast

import plotly.graph_objects as go

from evaluation.scoring.scores_json import AccuracyJSON, VisibleScoresJSON
from evaluation.scoring.vocabulary import HARDNESS_LEVELS
from leaderboard.ranking import Leaderboard, Row

_LAYOUT = {
    "margin": {"l": 50, "r": 10, "t": 30, "b": 80},
    "yaxis": {"title": {"text": "EA (%)"}, "range": [0, 100]},
    "legend": {"orientation": "h", "y": -0.25},
    "height": 380,
}


def _percent(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 2)


def results_bars(scores: VisibleScoresJSON) -> dict[str, Any]:
    """One submission: EA, EA-strict and TS-EA per database, and per hardness level, as grouped bars; its
    breakdowns must be shown. Scores made before scorer 1.3.0 have no TS-EA, and no TS-EA bars."""
    per_database, per_hardness = _shown_breakdowns(scores)
    databases = sorted(per_database)
    levels = [level for level in HARDNESS_LEVELS if level in per_hardness]
    labels = databases + levels
    rows = [per_database[db] for db in databases] + [per_hardness[lv] for lv in levels]
    bars = [
        go.Bar(name="EA", x=labels, y=[_percent(row["ea"]) for row in rows]),
        go.Bar(name="EA-strict", x=labels, y=[_percent(row["ea_strict"]) for row in rows]),
    ]
    if "ts_ea" in scores["overall"]:
        bars.append(go.Bar(name="TS-EA", x=labels, y=[_percent(row.get("ts_ea")) for row in rows]))
    figure = go.Figure(data=bars, layout={**_LAYOUT, "barmode": "group"})
    drawn: dict[str, Any] = json.loads(figure.to_json())
    return drawn


def _shown_breakdowns(scores: VisibleScoresJSON) -> tuple[dict[str, AccuracyJSON], dict[str, AccuracyJSON]]:
    """EA per database and per hardness level of scores whose breakdowns the caller shows (never None)."""
    return (
        cast(dict[str, AccuracyJSON], scores["per_database"]),
        cast(dict[str, AccuracyJSON], scores["per_hardness"]),
    )


TOP_SYSTEMS = 5


def _name(row: Row, baseline_label: str) -> str:
    return (
        f"{row.model_name} ({baseline_label})" if row.baseline else f"{row.model_name} (#{row.submission_id})"
    )


def _has_a_database(row: Row) -> bool:
    return any(ea is not None for ea in row.per_database.values())


def leaderboard_bars(
    board: Leaderboard, *, baseline_label: str, top: int = TOP_SYSTEMS
) -> dict[str, Any] | None:
    """EA per database of the best `top` submissions and of the baselines, as grouped bars. A baseline
    with no EA on any of the version's databases (reported on others) has no bar to draw."""
    ranked = [row for row in board.rows if not row.baseline][:top]
    rows = ranked + [row for row in board.rows if row.baseline and _has_a_database(row)]
    if not rows or not board.databases:
        return None
    figure = go.Figure(
        data=[
            go.Bar(
                name=_name(row, baseline_label),
                x=board.databases,
                y=[_percent(row.per_database[slug]) for slug in board.databases],
            )
            for row in rows
        ],
        layout={**_LAYOUT, "barmode": "group"},
    )
    drawn: dict[str, Any] = json.loads(figure.to_json())
    return drawn


def best_over_time(board: Leaderboard, *, best_label: str, baseline_label: str) -> dict[str, Any] | None:
    """The best EA reached by the date of each submission that raised it, as a step line; baselines as
    dotted horizontal lines. None until the submissions span two days: one day draws a dot, not a line."""
    ranked = sorted((row for row in board.rows if not row.baseline), key=lambda row: row.date)
    if len({row.date for row in ranked}) < 2:
        return None
    steps: list[Row] = []
    for row in ranked:
        if not steps or row.ea > steps[-1].ea:
            steps.append(row)
    first, last = ranked[0].date.isoformat(), ranked[-1].date.isoformat()
    x = [row.date.isoformat() for row in steps] + [last]
    y = [_percent(row.ea) for row in steps] + [_percent(steps[-1].ea)]
    text = [_name(row, baseline_label) for row in steps] + [_name(steps[-1], baseline_label)]
    traces = [
        go.Scatter(name=best_label, x=x, y=y, text=text, mode="lines+markers", line={"shape": "hv"}),
        *(
            go.Scatter(
                name=_name(row, baseline_label),
                x=[first, last],
                y=[_percent(row.ea)] * 2,
                mode="lines",
                line={"dash": "dot"},
            )
            for row in board.rows
            if row.baseline
        ),
    ]
    # Whole days: submissions minutes apart must not stretch the axis into milliseconds.
    xaxis = {"type": "date", "tickformat": "%Y-%m-%d", "dtick": 86_400_000}
    figure = go.Figure(data=traces, layout={**_LAYOUT, "xaxis": xaxis})
    drawn: dict[str, Any] = json.loads(figure.to_json())
    return drawn


def compare_bars(
    first: VisibleScoresJSON, second: VisibleScoresJSON, *, names: tuple[str, str]
) -> dict[str, Any]:
    """Two submissions' EA per database and per hardness level, side by side; both must show their
    breakdowns."""
    first_databases, first_hardness = _shown_breakdowns(first)
    second_databases, second_hardness = _shown_breakdowns(second)
    databases = sorted(set(first_databases) | set(second_databases))
    levels = [level for level in HARDNESS_LEVELS if level in first_hardness or level in second_hardness]

    def values(scores: VisibleScoresJSON) -> list[float | None]:
        per_database, per_hardness = _shown_breakdowns(scores)
        groups = [per_database.get(db) for db in databases]
        groups += [per_hardness.get(level) for level in levels]
        return [_percent(group["ea"]) if group and group.get("n") else None for group in groups]

    figure = go.Figure(
        data=[
            go.Bar(name=name, x=databases + levels, y=values(scores))
            for name, scores in zip(names, (first, second), strict=True)
        ],
        layout={**_LAYOUT, "barmode": "group"},
    )
    drawn: dict[str, Any] = json.loads(figure.to_json())
    return drawn
