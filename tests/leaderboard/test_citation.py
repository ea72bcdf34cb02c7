"""Cite this result (leaderboard/citation.py): the fields, a BibTeX entry that LaTeX reads as written
whatever the model's and team's names hold, and the same citation as one paragraph."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from evaluation.scoring.significance import RANK_RULE
from leaderboard.citation import CitedResult, bibtex_escape, citation

SHA256 = "ab" * 32
RESULT = CitedResult(
    permalink="https://termite.example/submissions/7/",
    model="Qwen2.5-Coder 32B",
    team="Gruppo Torino",
    ea=16 / 23,
    ea_ci95=(0.5217, 0.8696),
    rank=2,
    benchmark="Termite",
    benchmark_version="demo-1.0",
    scorer_version="1.3.0",
    file_sha256=SHA256,
    submission_id=7,
    submitted=date(2026, 11, 30),
)


def test_the_citation_gives_every_field_of_the_result():
    cited = citation(RESULT)
    assert {key: value for key, value in cited.items() if key not in ("bibtex", "text")} == {
        "permalink": "https://termite.example/submissions/7/",
        "model": "Qwen2.5-Coder 32B",
        "team": "Gruppo Torino",
        "ea": 16 / 23,
        "ea_ci95": [0.5217, 0.8696],
        "rank": 2,
        "rank_rule": RANK_RULE,
        "benchmark": "Termite",
        "benchmark_version": "demo-1.0",
        "scorer_version": "1.3.0",
        "file_sha256": SHA256,
        "submitted": "2026-11-30",
    }


def test_the_bibtex_is_a_misc_entry_keyed_by_version_and_submission_with_everything_in_its_note():
    assert citation(RESULT)["bibtex"] == (
        "@misc{termite-demo-1.0-7,\n"
        "  author       = {{Gruppo Torino}},\n"
        "  title        = {Qwen2.5-Coder 32B on Termite demo-1.0},\n"
        "  howpublished = {Termite Portal leaderboard},\n"
        "  year         = {2026},\n"
        r"  note         = {EA 69.6\% (95\% CI 52.2-87.0\%); rank 2 (paired McNemar exact test, Holm-corrected,"
        rf" 5\%); scorer 1.3.0; predictions file sha256 {SHA256}}},"
        "\n"
        "  url          = {https://termite.example/submissions/7/}\n"
        "}"
    )


def test_the_plain_text_is_one_paragraph_with_the_same_fields():
    assert citation(RESULT)["text"] == (
        "Gruppo Torino. Qwen2.5-Coder 32B on Termite demo-1.0: EA 69.6% (95% CI 52.2-87.0%), rank 2"
        f" ({RANK_RULE}). Scorer 1.3.0; predictions file sha256 {SHA256}. Submitted 2026-11-30."
        " https://termite.example/submissions/7/"
    )


def test_latex_special_characters_in_names_are_escaped_so_the_entry_reads_as_written():
    awkward = replace(RESULT, model="R&D_bot #2 {beta} 100%", team="A$b ^c~ d\\e")
    entry = citation(awkward)["bibtex"]
    assert r"title        = {R\&D\_bot \#2 \{beta\} 100\% on Termite demo-1.0}," in entry
    assert r"author       = {{A\$b \^{}c\~{} d\textbackslash{}e}}," in entry
    # The braces of the entry balance: no name can close a field early.
    depth = 0
    for before, character in zip(" " + entry[:-1], entry, strict=True):
        if before != "\\":
            depth += {"{": 1, "}": -1}.get(character, 0)
        assert depth >= 0
    assert depth == 0
    # The plain text keeps the names as they are.
    assert citation(awkward)["text"].startswith("A$b ^c~ d\\e. R&D_bot #2 {beta} 100% on Termite")


def test_an_escape_is_never_escaped_again():
    assert bibtex_escape("\\%{}") == r"\textbackslash{}\%\{\}"


def test_a_name_on_several_lines_is_cited_on_one():
    cited = citation(replace(RESULT, model="Modello\n  a capo", team="Gruppo\tTorino"))
    assert "title        = {Modello a capo on" in cited["bibtex"]
    assert cited["text"].startswith("Gruppo Torino. Modello a capo on")


def test_without_a_team_the_entry_has_no_author_and_the_text_starts_with_the_model():
    cited = citation(replace(RESULT, team=None))
    assert cited["team"] is None and "author" not in cited["bibtex"]
    assert cited["text"].startswith("Qwen2.5-Coder 32B on Termite demo-1.0:")


def test_an_unranked_row_is_cited_without_a_rank():
    cited = citation(replace(RESULT, rank=None))
    assert cited["rank"] is None
    assert f"unranked ({RANK_RULE})" in cited["text"]
    assert "unranked (paired McNemar exact test, Holm-corrected, 5\\%)" in cited["bibtex"]
