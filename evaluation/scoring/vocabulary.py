"""The words every part of the portal shares, declared once: hardness levels, SQL dialects, outcomes.

Plain Python, like the rest of the scoring library. The Django models build their choices from these
(adding the labels pages show), and the scorer, the pages, the exports and the API read the same tuples.
Each is a `Literal` type for annotations and a tuple of its values, in the order pages list them.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

# Spider's hardness levels, easiest first (evaluation/scoring/hardness.py computes them).
HardnessLevel: TypeAlias = Literal["easy", "medium", "hard", "extra"]
HARDNESS_LEVELS: tuple[HardnessLevel, ...] = get_args(HardnessLevel)

# The dialects a dump, a gold query or a submission's predictions may be written in, and their names.
Dialect: TypeAlias = Literal["mysql", "sqlite"]
DIALECTS: tuple[Dialect, ...] = get_args(Dialect)
DIALECT_NAMES: dict[Dialect, str] = {"mysql": "MySQL", "sqlite": "SQLite"}

# What scoring one question can end in, in the order reports list them.
Outcome: TypeAlias = Literal[
    "correct",
    "wrong_result",
    "reads_no_table",
    "syntax_error",
    "runtime_error",
    "timeout",
    "resource_limit",
    "not_submitted",
]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
# A question that is not scored (its gold is invalid, or failed at scoring time): in no denominator.
EXCLUDED = "excluded"

# The outcomes a check of a prediction's text (and of the schema) can decide before anything runs on the
# data: a participant may be told these per question (leaderboard/feedback.py). Whether one particular
# verdict was reached that way is the scorer's `static` flag; `not_submitted` always is, by the file alone.
STATIC_OUTCOMES: tuple[Outcome, ...] = (
    "reads_no_table",
    "syntax_error",
    "runtime_error",
    "resource_limit",
    "not_submitted",
)
# `reads_no_table`: a prediction whose result cannot depend on the database (it reads no table: a
# hard-coded answer, `SELECT 'Roma'`) is wrong whatever it returns, by its text alone.
DECIDED_BY_THE_FILE: frozenset[Outcome] = frozenset({"not_submitted", "reads_no_table"})
