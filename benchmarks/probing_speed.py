"""How fast the watch for probing is (leaderboard/probing.py): 1,000 synthetic uploads x 200 predictions.

    .venv/bin/python -m benchmarks.probing_speed [--files 1000] [--questions 200] [--accounts 150]

In memory, no database: the detectors take plain `Filed` records. Two populations:

- `realistic`: each account runs a system of its own (a ring of three accounts and two pairs share
  one); on each question a system writes the query most systems write (more often on easier questions),
  one of a few popular alternatives, or its own, in its account's spelling (case, blanks). Accounts
  upload a skewed number of files: most change 10 to 40 predictions at a time, a tenth of the accounts
  probe (1 to 3 changes a time, in chains), and five upload trivial files half of the time;
- `rings`: the accounts in rings as large as a prediction may be shared and still count as evidence
  (`common_limit`), each ring sharing one system: the inverted index's costliest case for its size.

Prints the time of the normal forms of every file (sqlglot, cold: no cache, only the memo of the texts
already seen in the run; one run), of the cache keys (a digest of each file's predictions), of reading
the version's cache entry back, and of each detector (best of three), with what each found; and, for
comparison, the time of comparing every pair of files of two accounts (one run). Prints no SQL.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from itertools import combinations
from typing import TypeVar

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "termite_site.settings_test")
django.setup()

from leaderboard.probing import (  # noqa: E402 (Django must be set up before the app is imported)
    Filed,
    Thresholds,
    _file_key,
    _packed,
    common_limit,
    forms_of,
    resubmissions,
    trivial_files,
    twin_files,
)

REPEATS = 3
START = datetime(2026, 3, 2, tzinfo=UTC)
TABLES = ["libri", "autori", "prestiti", "utenti", "corridori", "squadre", "tappe", "classifiche"]
COLUMNS = ["nome", "titolo", "anno", "citta", "punti", "tempo", "eta", "nazione"]
KEYWORDS = re.compile(
    r"\b(?:SELECT|FROM|WHERE|JOIN|ON|AS|GROUP BY|ORDER BY|DESC|LIMIT|COUNT|AVG|MAX|IS NOT NULL)\b"
)
T = TypeVar("T")


def query(rng: random.Random) -> str:
    table, other = rng.sample(TABLES, 2)
    column, key, measure = rng.sample(COLUMNS, 3)
    shape = rng.randrange(4)
    if shape == 0:
        return f"SELECT {column} FROM {table} WHERE {key} = '{rng.choice(['Roma', 'Torino', 'Bari'])}'"
    if shape == 1:
        return (
            f"SELECT t.{column}, COUNT(*) FROM {table} AS t JOIN {other} AS o ON o.id = t.{other}_id "
            f"GROUP BY t.{column} ORDER BY COUNT(*) DESC LIMIT {rng.randrange(1, 10)}"
        )
    if shape == 2:
        return f"SELECT AVG({measure}) FROM {table} WHERE {key} > {rng.randrange(1900, 2025)}"
    return (
        f"SELECT {column} FROM {table} WHERE {measure} = (SELECT MAX({measure}) FROM {table} "
        f"WHERE {key} IS NOT NULL)"
    )


def spelled(sql: str, style: int) -> str:
    """One account's way of writing a query: same query, other text."""
    if style == 1:
        return KEYWORDS.sub(lambda keyword: keyword.group().lower(), sql)
    if style == 2:
        return sql.replace(" FROM ", "\n  FROM ").replace(" WHERE ", "\n WHERE ")
    if style == 3:
        return sql.replace(" = ", "=").replace(", ", ",") + ";"
    return sql


def population(files: int, questions: int, accounts: int, *, ring: int, seed: int = 16) -> list[Filed]:
    """`files` uploads of `accounts` accounts; with `ring` over 1, rings of that many accounts share a
    system (see the module's docstring)."""
    rng = random.Random(seed)
    qids = [f"db{n // 20}-{n % 20:03d}" for n in range(questions)]
    ease = {qid: rng.uniform(0.2, 0.9) for qid in qids}  # how many systems write the obvious query
    popular = {qid: [query(rng) for _ in range(4)] for qid in qids}
    systems = [
        {
            qid: popular[qid][0]
            if rng.random() < ease[qid]
            else (rng.choice(popular[qid][1:]) if rng.random() < 0.5 else query(rng))
            for qid in qids
        }
        for _ in range(accounts)
    ]
    system_of = [account // ring for account in range(accounts)]
    if ring == 1:
        system_of[1] = system_of[2] = system_of[0]  # a ring of three
        system_of[4] = system_of[3]
        system_of[6] = system_of[5]
    probing = set(rng.sample(range(accounts), accounts // 10))
    trivial = set(rng.sample(sorted(set(range(accounts)) - probing), 5))
    weights = [rng.paretovariate(1.2) for _ in range(accounts)]
    owners = rng.choices(range(accounts), weights=weights, k=files - accounts) + list(range(accounts))
    rng.shuffle(owners)
    current: dict[int, dict[str, str]] = {}
    memo: dict = {}
    filed = []
    for pk, account in enumerate(owners, start=1):
        if account in trivial and rng.random() < 0.5:
            predictions = {qid: "SELECT 1" if rng.random() < 0.7 else systems[0][qid] for qid in qids}
        else:
            before = current.get(account) or {
                qid: spelled(sql, account % 4) for qid, sql in systems[system_of[account]].items()
            }
            changes = rng.randint(1, 3) if account in probing else rng.randint(10, 40)
            predictions = dict(before)
            if account in current or ring > 1:
                for qid in rng.sample(qids, changes):
                    predictions[qid] = spelled(query(rng), account % 4)
            current[account] = predictions
        filed.append(
            Filed(
                id=pk,
                user_id=account,
                created_at=START + timedelta(minutes=pk),
                ea=rng.random(),
                predictions=predictions,
                forms=forms_of(predictions, source="mysql", memo=memo),
                missing=0,
            )
        )
    return filed


def forms(filed: list[Filed]) -> None:
    memo: dict = {}
    for file in filed:
        forms_of(file.predictions, source="mysql", memo=memo)


def best_of(run: Callable[[], T], *, repeats: int = REPEATS) -> tuple[float, T]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - started)
    return min(times), result  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--accounts", type=int, default=150)
    args = parser.parse_args()
    limits = Thresholds(max_changed=5, trivial_share=0.5, similarity=0.9, common_share=0.1)
    ring = common_limit(args.accounts, limits.common_share)
    for name, size in (("realistic", 1), (f"rings of {ring}", ring)):
        filed = population(args.files, args.questions, args.accounts, ring=size)
        texts = {sql for file in filed for sql in file.predictions.values()}
        accounts = len({file.user_id for file in filed})
        print(
            f"{name}: {len(filed)} files x {args.questions} predictions, {accounts} accounts, {len(texts)} texts"
        )
        seconds, _ = best_of(lambda filed=filed: forms(filed), repeats=1)
        print(f"  normal forms, cold (sqlglot once per text)  {seconds:8.3f} s")
        seconds, _ = best_of(lambda filed=filed: [_file_key("mysql", file.predictions) for file in filed])
        print(f"  cache keys (a digest per file)              {seconds:8.3f} s")
        entry = pickle.dumps({_file_key("mysql", file.predictions): _packed(file.forms) for file in filed})
        seconds, _ = best_of(lambda entry=entry: pickle.loads(entry))
        print(f"  cache entry read back ({len(entry) / 1e6:.1f} MB pickled)    {seconds:8.3f} s")
        for file in filed:
            file.entries  # noqa: B018 (built once per file, as the report does, before the detectors)
        seconds, edits = best_of(lambda filed=filed: resubmissions(filed, max_changed=limits.max_changed))
        chains = max((edit.chain for edit in edits), default=0)
        print(f"  resubmissions  {seconds:8.3f} s: {len(edits)} edits, longest chain {chains}")
        seconds, trivial = best_of(lambda filed=filed: trivial_files(filed, min_share=limits.trivial_share))
        print(f"  trivial files  {seconds:8.3f} s: {len(trivial)} files")
        seconds, twins = best_of(
            lambda filed=filed: twin_files(
                filed, min_similarity=limits.similarity, common_share=limits.common_share
            )
        )
        print(f"  twin files     {seconds:8.3f} s: {len(twins)} pairs of accounts")
        seconds, pairs = best_of(lambda filed=filed: every_pair(filed, limits.similarity), repeats=1)
        print(
            f"  for comparison, every pair of files of two accounts compared: {seconds:.3f} s, {pairs} pairs"
        )


def every_pair(filed: list[Filed], similarity: float) -> int:
    """The pairs of accounts the naive comparison finds: files² set intersections (in C, not Python)."""
    found = set()
    for one, other in combinations(filed, 2):
        if one.user_id != other.user_id:
            shared = len(one.entries & other.entries)
            if shared / (len(one.entries) + len(other.entries) - shared) >= similarity:
                found.add(frozenset((one.user_id, other.user_id)))
    return len(found)


if __name__ == "__main__":
    main()
