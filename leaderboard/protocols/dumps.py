"""What a protocol's first turn shows of a database: the dump participants may see of it, under its
version's setting (`evaluation.schemas.participant_dump`: the schema only, or the schema and the data)."""

from __future__ import annotations

from evaluation.models import BenchmarkVersion, Database
from evaluation.schemas import participant_dump
from leaderboard.model_card import SchemaFormat


def first_turn_dump(database: Database) -> str:
    """The MySQL text of `database` that a protocol's turns show the model: what participants may see."""
    return participant_dump(database)


def dump_schema_format(version: BenchmarkVersion) -> str:
    """How the model card names what `first_turn_dump` shows for the databases of `version`."""
    return SchemaFormat.FULL_DUMP if version.shows_data else SchemaFormat.MYSQL_DDL
