"""Plotly figures as JSON for the pages; the browser draws them with the plotly.js the site serves."""

from __future__ import annotations

import json

import plotly.graph_objects as go

HARDNESS_ORDER = ("easy", "medium", "hard", "extra")
_LAYOUT = {
    "margin": {"l": 50, "r": 10, "t": 30, "b": 80},
    "yaxis": {"title": {"text": "EA (%)"}, "range": [0, 100]},
    "legend": {"orientation": "h", "y": -0.25},
    "height": 380,
}


def _percent(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 2)


def results_bars(scores: dict) -> dict:
    """One submission: EA and EA-strict per database, and per hardness level, as grouped bars."""
    databases = sorted(scores["per_database"])
    levels = [level for level in HARDNESS_ORDER if level in scores["per_hardness"]]
    labels = databases + levels
    rows = [scores["per_database"][db] for db in databases] + [scores["per_hardness"][lv] for lv in levels]
    figure = go.Figure(
        data=[
            go.Bar(name="EA", x=labels, y=[_percent(row["ea"]) for row in rows]),
            go.Bar(name="EA-strict", x=labels, y=[_percent(row["ea_strict"]) for row in rows]),
        ],
        layout={**_LAYOUT, "barmode": "group"},
    )
    return json.loads(figure.to_json())
