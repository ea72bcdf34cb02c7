"""A prediction's normal form: one text for the queries that differ only in how they are written, and what
its text alone says about it. Staff's watch for probing (leaderboard/probing.py) compares files with it.

- `text`: the query as sqlglot writes it back in its dialect, without comments, with every name unquoted
  and lower-cased (`select Titolo from `Libri`` and `SELECT titolo FROM libri` are one query); string
  literals are kept as written. A text sqlglot cannot read (a syntax error, several statements, a query
  `query_shape` refuses) falls back to its words, lower-cased and joined by single blanks.
- `reads_no_table`: the scorer's own test (`survey.tree_is_hard_coded`): a query that reads no table of
  the database, a hard-coded answer (`SELECT 'Roma'`, `SELECT 1`).
- `constant`: a query that reads a table but selects only constants (`SELECT 1 FROM libri`): its rows say
  how many rows there are, not what they hold.

Nothing here runs a query, and whatever the text, nothing raises: the text is a participant's.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import version
from typing import NamedTuple

from sqlglot import exp

from evaluation.scoring.query_shape import check_shape
from evaluation.scoring.statements import SQLGLOT_DIALECTS, parse_one, split_statements
from evaluation.scoring.survey import tree_is_hard_coded
from evaluation.scoring.vocabulary import Dialect

# Changes whenever the normal form of some text may change: stored forms keyed by it are then stale.
NORMAL_FORM_VERSION = f"1-sqlglot-{version('sqlglot')}"

# What a projection may be in a query that selects only constants.
_CONSTANTS = (exp.Literal, exp.Null, exp.Boolean)


class NormalForm(NamedTuple):
    text: str  # "" for a prediction with no statement at all (blank, or only comments)
    parsed: bool  # sqlglot read it: `text` is its canonical SQL, not only its words
    reads_no_table: bool
    constant: bool

    @property
    def empty(self) -> bool:
        return not self.text

    @property
    def digest(self) -> int:
        """64 bits of `text`'s BLAKE2b: the same in every process, unlike `hash`, so it can be stored."""
        return int.from_bytes(hashlib.blake2b(self.text.encode(), digest_size=8).digest(), "big")


def normal_form(sql: str, *, source: Dialect) -> NormalForm:
    """The normal form of one prediction written for `source` (see the module's docstring)."""
    if not split_statements(sql, source=source):
        return NormalForm("", parsed=False, reads_no_table=False, constant=False)
    try:
        # The cost check of translating too: writing the tree back costs what translating does.
        check_shape(sql, source=source, translating=True)
        tree, _text = parse_one(sql, source=source)
        reads_no_table = tree_is_hard_coded(tree)
        constant = not reads_no_table and _selects_only_constants(tree)
        for name in tree.find_all(exp.Identifier):
            name.set("quoted", False)
            name.set("this", name.name.lower())
        text = SQLGLOT_DIALECTS[source].generate(tree, copy=False, comments=False)
    except Exception:
        # Unreadable (TranspileError), too deep (RecursionError), or a tree sqlglot's generator trips on:
        # its words will do.
        return NormalForm(_words(sql), parsed=False, reads_no_table=False, constant=False)
    return NormalForm(text, parsed=True, reads_no_table=reads_no_table, constant=constant)


def _selects_only_constants(tree: exp.Expr) -> bool:
    if not isinstance(tree, exp.Select) or not tree.expressions:
        return False
    return all(isinstance(_unwrapped(projection), _CONSTANTS) for projection in tree.expressions)


def _unwrapped(node: exp.Expr) -> exp.Expr:
    """An aliased, bracketed or negated constant as the constant itself."""
    while isinstance(node, (exp.Alias, exp.Paren, exp.Neg)):
        node = node.this
    return node


def _words(sql: str) -> str:
    return " ".join(sql.lower().split())
