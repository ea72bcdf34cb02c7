"""The catalogue of protocols: one JSON file each under `catalogue/`, loaded and checked here.

A protocol is data, versioned by its id (`termite-2turn-it/1`): a variant of the wording is a new file
with a new id, never an edit of a file a run has used, so a run's protocol id says exactly what was asked.
Adding a file adds a protocol; a file that breaks a rule below keeps the portal from starting a run with
any protocol (`protocols()` raises), so a mistake is found by the tests, not by a participant.

A file holds:
- `format`: 1, the version of this layout;
- `id`: `name/number`, lower-case letters, digits and dashes, then the protocol's version number;
- `title`, `description`: shown on the run form and the run's page;
- `dump`: `participant`, the dump of the database that participants may see under its version's setting
  (the schema only, or the schema and the data);
- `shots`, `instruction_language`: what the model card says of the prompt (0; `it`, `en` or `other`);
- `conversations`: `one-per-question`, a new conversation for every question;
- `database_turn`: the user turn that opens every conversation of a database, whose answer is kept as the
  model's interpretation of the database and replayed in each of its questions' conversations; or null
  for none. It may use `{dump}`;
- `question_turn`: the user turn that asks for one question's SQL; it must use `{question}` and may use
  `{dump}`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "catalogue"
DEFAULT_PROTOCOL = "termite-2turn-it/1"

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*/[1-9][0-9]*$")
_PLACEHOLDER = re.compile(r"\{([a-z_]*)\}")
_KEYS = {
    "format",
    "id",
    "title",
    "description",
    "dump",
    "shots",
    "instruction_language",
    "conversations",
    "database_turn",
    "question_turn",
}
DUMPS = ("participant",)
CONVERSATIONS = ("one-per-question",)
LANGUAGES = ("it", "en", "other")


class ProtocolError(ValueError):
    """A catalogue file breaks a rule; the message names the file and the rule."""


@dataclass(frozen=True)
class Protocol:
    id: str
    title: str
    description: str
    dump: str
    shots: int
    instruction_language: str
    conversations: str
    database_turn: str | None
    question_turn: str

    @property
    def turns_per_database(self) -> int:
        """The requests a database costs before its questions: its interpretation, if the protocol has one."""
        return 1 if self.database_turn is not None else 0


def read_protocol(path: Path) -> Protocol:
    """One catalogue file, checked; raises ProtocolError saying what is wrong with it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProtocolError(f"{path.name}: not readable JSON ({error})") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"{path.name}: the file must hold one JSON object")
    missing, unknown = _KEYS - data.keys(), data.keys() - _KEYS
    if missing or unknown:
        raise ProtocolError(
            f"{path.name}: "
            + "; ".join(
                ([f"missing {', '.join(sorted(missing))}"] if missing else [])
                + ([f"unknown {', '.join(sorted(unknown))}"] if unknown else [])
            )
        )
    _require(path, data["format"] == 1, "format must be 1")
    _require(path, isinstance(data["id"], str) and bool(_ID.match(data["id"])), "id must be name/number")
    for key in ("title", "description", "question_turn"):
        _require(path, isinstance(data[key], str) and bool(data[key].strip()), f"{key} must be a text")
    _require(path, data["dump"] in DUMPS, f"dump must be one of {', '.join(DUMPS)}")
    _require(path, data["conversations"] in CONVERSATIONS, f"conversations must be {CONVERSATIONS[0]}")
    _require(path, data["instruction_language"] in LANGUAGES, "instruction_language must be it, en or other")
    shots = data["shots"]
    _require(
        path, isinstance(shots, int) and not isinstance(shots, bool) and shots >= 0, "shots must be >= 0"
    )
    turn = data["database_turn"]
    _require(
        path, turn is None or (isinstance(turn, str) and bool(turn.strip())), "database_turn: text or null"
    )
    _check_placeholders(path, "question_turn", data["question_turn"], allowed={"question", "dump"})
    _require(path, "{question}" in data["question_turn"], "question_turn must use {question}")
    if turn is not None:
        _check_placeholders(path, "database_turn", turn, allowed={"dump"})
    return Protocol(**{key: data[key] for key in _KEYS - {"format"}})


def _require(path: Path, condition: bool, rule: str) -> None:
    if not condition:
        raise ProtocolError(f"{path.name}: {rule}")


def _check_placeholders(path: Path, key: str, text: str, *, allowed: set[str]) -> None:
    used = set(_PLACEHOLDER.findall(text))
    _require(path, used <= allowed, f"{key} may use only {', '.join(sorted(f'{{{a}}}' for a in allowed))}")


def load_catalogue(folder: Path) -> dict[str, Protocol]:
    """Every `*.json` file of `folder`, by id; raises ProtocolError on a bad file or a repeated id."""
    found: dict[str, Protocol] = {}
    for path in sorted(folder.glob("*.json")):
        protocol = read_protocol(path)
        if protocol.id in found:
            raise ProtocolError(f"{path.name}: the id {protocol.id} is already another file's")
        found[protocol.id] = protocol
    return found


@cache
def protocols() -> dict[str, Protocol]:
    """The portal's catalogue, by id, in id order."""
    return load_catalogue(FOLDER)


def protocol(protocol_id: str) -> Protocol | None:
    return protocols().get(protocol_id)


def choices() -> list[tuple[str, str]]:
    return [(p.id, f"{p.title} ({p.id})") for p in protocols().values()]
