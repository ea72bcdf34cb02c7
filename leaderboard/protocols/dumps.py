"""What a protocol's first turn shows of a database: the dump participants may see of it.

One place, so that wiring it to the version's setting (schema only, or schema and data:
`evaluation.schemas.participant_dump`) is a change here alone.
"""

from __future__ import annotations

from evaluation.models import BenchmarkVersion, Database
from leaderboard.model_card import SchemaFormat


def first_turn_dump(database: Database) -> str:
    """The MySQL text of `database` that a protocol's turns show the model."""
    return database.schema_sql


def dump_schema_format(version: BenchmarkVersion) -> str:
    """How the model card names what `first_turn_dump` shows for the databases of `version`."""
    return SchemaFormat.MYSQL_DDL
