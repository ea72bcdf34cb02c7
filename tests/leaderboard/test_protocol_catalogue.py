"""The catalogue of protocols: data files, checked when loaded; the paper's wording, word for word."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from leaderboard.protocols.catalogue import FOLDER, ProtocolError, load_catalogue, protocols
from leaderboard.protocols.prompts import database_messages, question_messages

PAPER = "termite-2turn-it/1"


def write(folder: Path, name: str, **changes) -> Path:
    data = json.loads((FOLDER / "termite-2turn-it-1.json").read_text())
    data.update(changes)
    path = folder / name
    path.write_text(json.dumps(data))
    return path


def test_the_catalogue_holds_the_papers_protocol_and_a_single_turn_variant():
    catalogue = protocols()
    assert {PAPER, "termite-1turn-it/1"} <= set(catalogue)
    paper = catalogue[PAPER]
    assert paper.database_turn == "Considera il seguente database:\n{dump}"
    assert paper.question_turn.startswith(
        "Traduci in SQL la seguente query. Rispondi usando esclusivamente linguaggio SQL.\n"
    )
    assert catalogue["termite-1turn-it/1"].database_turn is None


def test_the_papers_protocol_replays_the_first_turn_and_the_interpretation_in_each_conversation():
    paper = protocols()[PAPER]
    first = database_messages(paper, dump="CREATE TABLE t (a INT);")
    assert first == [{"role": "user", "content": "Considera il seguente database:\nCREATE TABLE t (a INT);"}]
    asked = question_messages(
        paper, dump="CREATE TABLE t (a INT);", question="Quante righe?", interpretation="Ok."
    )
    assert asked[:2] == [*first, {"role": "assistant", "content": "Ok."}]
    assert asked[2]["content"].endswith("linguaggio SQL.\nQuante righe?")


def test_the_variant_asks_in_one_turn_and_braces_in_the_data_are_sent_as_they_are():
    variant = protocols()["termite-1turn-it/1"]
    (only,) = question_messages(
        variant, dump="INSERT INTO t VALUES ('{question}');", question="Chi?", interpretation=None
    )
    assert only["content"].count("{question}") == 1 and only["content"].endswith("SQL.\nChi?")


def test_adding_a_file_adds_a_protocol(tmp_path):
    shutil.copy(FOLDER / "termite-2turn-it-1.json", tmp_path)
    write(
        tmp_path,
        "termite-2turn-it-2.json",
        id="termite-2turn-it/2",
        question_turn="Scrivi la SQL di: {question}",
    )
    assert set(load_catalogue(tmp_path)) == {PAPER, "termite-2turn-it/2"}


@pytest.mark.parametrize(
    ("changes", "rule"),
    [
        ({"id": "Termite 2turn"}, "id must be name/number"),
        ({"question_turn": "Traduci in SQL."}, "must use {question}"),
        ({"question_turn": "{question} {gold}"}, "may use only"),
        ({"database_turn": "Considera {question}"}, "may use only {dump}"),
        ({"dump": "gold"}, "dump must be one of"),
        ({"conversations": "one-for-all"}, "conversations must be"),
        ({"shots": -1}, "shots must be"),
        ({"format": 2}, "format must be 1"),
        ({"extra": 1}, "unknown extra"),
    ],
)
def test_a_file_that_breaks_a_rule_is_refused_with_the_rule(tmp_path, changes, rule):
    write(tmp_path, "bad.json", **changes)
    with pytest.raises(ProtocolError, match="bad.json: .*" + rule.replace("{", r"\{").replace("}", r"\}")):
        load_catalogue(tmp_path)


def test_a_repeated_id_and_unreadable_json_are_refused(tmp_path):
    shutil.copy(FOLDER / "termite-2turn-it-1.json", tmp_path / "a.json")
    shutil.copy(FOLDER / "termite-2turn-it-1.json", tmp_path / "b.json")
    with pytest.raises(ProtocolError, match="already another file's"):
        load_catalogue(tmp_path)
    (tmp_path / "b.json").write_text("{not json")
    with pytest.raises(ProtocolError, match="b.json: not readable JSON"):
        load_catalogue(tmp_path)
