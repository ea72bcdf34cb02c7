"""A small made-up SQLite database for the scorer's tests: customers (`clienti`) and their orders (`ordini`).

Text columns are COLLATE NOCASE, as in the benchmark copies (MySQL's default collation ignores case). It
holds ties (two customers aged 28), NULLs, duplicates, floats and an index, which the tests rely on.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE clienti (
    id INTEGER PRIMARY KEY,
    nome TEXT COLLATE NOCASE NOT NULL,
    citta TEXT COLLATE NOCASE,
    eta INTEGER,
    stato_civile TEXT COLLATE NOCASE,
    data_iscrizione TEXT
);
CREATE TABLE ordini (
    id INTEGER PRIMARY KEY,
    cliente_id INTEGER NOT NULL REFERENCES clienti (id),
    prodotto TEXT COLLATE NOCASE NOT NULL,
    quantita INTEGER NOT NULL,
    prezzo REAL NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX clienti_eta ON clienti (eta);
CREATE INDEX ordini_cliente ON ordini (cliente_id);
"""

CLIENTI = [
    (1, "Mario", "Roma", 34, "Coniugato", "2020-03-15"),
    (2, "Giulia", "Milano", 28, "Nubile", "2021-07-01"),
    (3, "Luca", "Roma", 45, "coniugato", "2019-11-30"),
    (4, "Anna", "Napoli", 28, None, "2020-12-24"),
    (5, "Paolo", "Torino", None, "Celibe", "2022-01-10"),
    (6, "Sara", "Milano", 39, "Coniugata", "2020-06-05"),
]
ORDINI = [
    (1, 1, "Pasta", 3, 1.5, "2021-01-10"),
    (2, 1, "Olio", 1, 7.25, "2021-02-11"),
    (3, 2, "Pasta", 2, 1.5, "2021-02-20"),
    (4, 3, "Vino", 6, 12.0, "2022-05-03"),
    (5, 3, "Pasta", 3, 1.5, "2022-05-03"),
    (6, 4, "Caffè", 1, 4.1, "2020-12-30"),
    (7, 6, "Olio", 2, 7.25, "2021-09-09"),
    (8, 6, "Vino", 1, 12.0, "2022-01-15"),
]


def make_demo_db(path: Path) -> Path:
    connection = sqlite3.connect(path)
    with connection:
        connection.executescript(SCHEMA)
        connection.executemany("INSERT INTO clienti VALUES (?, ?, ?, ?, ?, ?)", CLIENTI)
        connection.executemany("INSERT INTO ordini VALUES (?, ?, ?, ?, ?, ?)", ORDINI)
    connection.close()
    return path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
