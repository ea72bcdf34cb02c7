"""How long building a database's test suite takes as the data grows, and how much the suite tells apart.

    .venv/bin/python -m benchmarks.suite_build [--rows N] [--candidates N] [--seed TEXT]

A synthetic bicycle-rental database of our own design, in mysqldump's style (regions, cities, addresses,
customers, bicycle types, bicycles, mechanics and the bicycles they service, the bicycles at each shop,
rentals, payments; about `--rows` rows in all, 50,000 by default, drawn from a fixed seed) and eight gold queries over it: filters with boundaries, joins over three tables,
groupings, a LIKE, an aggregate over a date range. The target (issue 32): the suite of a database of about
50,000 rows built in 30 s at most, telling at least as many near misses apart as before.

The suite is built as an import builds it (`evaluation.distillation.distil_suite`, `--candidates`
neighbour candidates, 60 by default as TERMITE_SUITE_CANDIDATES, no reference engine). Prints figures only:
the build time, the candidates built and kept, and the near misses told apart by the original alone and by
the original with the suite.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path

from evaluation.distillation import ScorableGold, distil_suite, suite_seed_of
from evaluation.scoring.dialect import read_schema, to_sqlite
from evaluation.scoring.mysql_dump import build_sqlite

SCHEMA = """\
CREATE TABLE `regione` (
  `id_regione` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `nome` VARCHAR(50) NOT NULL,
  PRIMARY KEY (`id_regione`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `citta` (
  `id_citta` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `nome` VARCHAR(50) NOT NULL,
  `id_regione` SMALLINT UNSIGNED NOT NULL,
  PRIMARY KEY (`id_citta`),
  CONSTRAINT `fk_citta_regione` FOREIGN KEY (`id_regione`) REFERENCES `regione` (`id_regione`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `indirizzo` (
  `id_indirizzo` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `via` VARCHAR(50) NOT NULL,
  `quartiere` VARCHAR(20) NOT NULL,
  `id_citta` SMALLINT UNSIGNED NOT NULL,
  PRIMARY KEY (`id_indirizzo`),
  CONSTRAINT `fk_indirizzo_citta` FOREIGN KEY (`id_citta`) REFERENCES `citta` (`id_citta`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `cliente` (
  `id_cliente` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `nome` VARCHAR(45) NOT NULL,
  `cognome` VARCHAR(45) NOT NULL,
  `email` VARCHAR(50) DEFAULT NULL,
  `id_indirizzo` SMALLINT UNSIGNED NOT NULL,
  `attivo` TINYINT(1) NOT NULL DEFAULT 1,
  PRIMARY KEY (`id_cliente`),
  CONSTRAINT `fk_cliente_indirizzo` FOREIGN KEY (`id_indirizzo`) REFERENCES `indirizzo` (`id_indirizzo`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `tipo` (
  `id_tipo` TINYINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `nome` VARCHAR(25) NOT NULL,
  PRIMARY KEY (`id_tipo`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `bicicletta` (
  `id_bici` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `modello` VARCHAR(128) NOT NULL,
  `anno` SMALLINT DEFAULT NULL,
  `tariffa` DECIMAL(4,2) NOT NULL DEFAULT 2.99,
  `peso_etti` SMALLINT UNSIGNED DEFAULT NULL,
  `taglia` ENUM('XS','S','M','L','XL') DEFAULT 'M',
  PRIMARY KEY (`id_bici`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `bici_tipo` (
  `id_bici` SMALLINT UNSIGNED NOT NULL,
  `id_tipo` TINYINT UNSIGNED NOT NULL,
  PRIMARY KEY (`id_bici`, `id_tipo`),
  CONSTRAINT `fk_bt_bici` FOREIGN KEY (`id_bici`) REFERENCES `bicicletta` (`id_bici`),
  CONSTRAINT `fk_bt_tipo` FOREIGN KEY (`id_tipo`) REFERENCES `tipo` (`id_tipo`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `meccanico` (
  `id_meccanico` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `nome` VARCHAR(45) NOT NULL,
  `cognome` VARCHAR(45) NOT NULL,
  PRIMARY KEY (`id_meccanico`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `revisione` (
  `id_meccanico` SMALLINT UNSIGNED NOT NULL,
  `id_bici` SMALLINT UNSIGNED NOT NULL,
  PRIMARY KEY (`id_meccanico`, `id_bici`),
  CONSTRAINT `fk_rev_meccanico` FOREIGN KEY (`id_meccanico`) REFERENCES `meccanico` (`id_meccanico`),
  CONSTRAINT `fk_rev_bici` FOREIGN KEY (`id_bici`) REFERENCES `bicicletta` (`id_bici`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `mezzo` (
  `id_mezzo` MEDIUMINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `id_bici` SMALLINT UNSIGNED NOT NULL,
  `id_sede` TINYINT UNSIGNED NOT NULL,
  PRIMARY KEY (`id_mezzo`),
  CONSTRAINT `fk_mezzo_bici` FOREIGN KEY (`id_bici`) REFERENCES `bicicletta` (`id_bici`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `noleggio` (
  `id_noleggio` INT NOT NULL AUTO_INCREMENT,
  `inizio` DATETIME NOT NULL,
  `id_mezzo` MEDIUMINT UNSIGNED NOT NULL,
  `id_cliente` SMALLINT UNSIGNED NOT NULL,
  `fine` DATETIME DEFAULT NULL,
  PRIMARY KEY (`id_noleggio`),
  CONSTRAINT `fk_noleggio_mezzo` FOREIGN KEY (`id_mezzo`) REFERENCES `mezzo` (`id_mezzo`),
  CONSTRAINT `fk_noleggio_cliente` FOREIGN KEY (`id_cliente`) REFERENCES `cliente` (`id_cliente`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `pagamento` (
  `id_pagamento` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `id_cliente` SMALLINT UNSIGNED NOT NULL,
  `id_noleggio` INT DEFAULT NULL,
  `importo` DECIMAL(5,2) NOT NULL,
  `pagato_il` DATETIME NOT NULL,
  PRIMARY KEY (`id_pagamento`),
  CONSTRAINT `fk_pagamento_cliente` FOREIGN KEY (`id_cliente`) REFERENCES `cliente` (`id_cliente`),
  CONSTRAINT `fk_pagamento_noleggio` FOREIGN KEY (`id_noleggio`) REFERENCES `noleggio` (`id_noleggio`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
"""

# Each reads what a question over a bicycle rental would; none quotes anything of the Termite archive.
GOLDS = (
    "SELECT COUNT(*) FROM noleggio WHERE fine IS NULL",
    "SELECT c.nome, c.cognome FROM cliente AS c JOIN indirizzo AS i ON c.id_indirizzo = i.id_indirizzo "
    "JOIN citta AS ci ON i.id_citta = ci.id_citta WHERE ci.nome = 'Bologna'",
    "SELECT modello FROM bicicletta WHERE tariffa > 2.99 AND peso_etti >= 120 ORDER BY modello",
    "SELECT t.nome, COUNT(*) FROM bici_tipo AS bt JOIN tipo AS t ON bt.id_tipo = t.id_tipo GROUP BY t.nome",
    "SELECT SUM(p.importo) FROM pagamento AS p JOIN noleggio AS n ON p.id_noleggio = n.id_noleggio "
    "WHERE n.inizio >= '2025-06-01'",
    "SELECT id_sede, COUNT(*) FROM mezzo GROUP BY id_sede",
    "SELECT nome FROM meccanico WHERE cognome LIKE 'B%' ORDER BY nome, id_meccanico",
    "SELECT COUNT(DISTINCT id_cliente) FROM cliente WHERE attivo = 1 AND email IS NOT NULL",
)

SYLLABLES = ("ba", "ro", "ki", "ne", "lu", "ma", "to", "si", "de", "vo", "ca", "ri", "po", "le")
TYPES = ("Città", "Corsa", "Montagna", "Gravel", "Elettrica", "Cargo", "Pieghevole", "Tandem")
CITIES = ("Bologna", "Torino", "Roma", "Milano", "Napoli", "Bari", "Trento", "Genova", "Parma", "Lecce")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000, help="About how many rows in all")
    parser.add_argument("--candidates", type=int, default=60, help="Neighbour candidates")
    parser.add_argument("--seed", default="termite", help="The suite's seed")
    args = parser.parse_args()
    dump = synthetic_dump(args.rows)
    with tempfile.TemporaryDirectory(prefix="suite-build-") as folder:
        directory = Path(folder)
        original = directory / "noleggio.sqlite3"
        built = build_sqlite(dump, original)
        with closing(sqlite3.connect(original)) as connection:
            column_types = read_schema(connection)
        golds = [
            ScorableGold(f"noleggio-{number:03d}", gold, to_sqlite(gold, schema=column_types))
            for number, gold in enumerate(GOLDS, 1)
        ]
        started = time.perf_counter()
        suite = distil_suite(
            slug="noleggio",
            dump=dump,
            dialect="mysql",
            sqlite_file=original,
            column_types=column_types,
            golds=golds,
            workdir=directory,
            candidates=args.candidates,
            seed=suite_seed_of(args.seed, hashlib.sha256(original.read_bytes()).hexdigest()),
            reference_url=None,
        )
        seconds = time.perf_counter() - started
    if suite is None:
        raise SystemExit("no suite was built")
    near_misses = sum(question.near_misses for question in suite.questions.values())
    by_original = sum(len(question.told_apart_by_original) for question in suite.questions.values())
    by_suite = sum(question.told_apart_by_suite for question in suite.questions.values())
    print(f"database: {built.table_count} tables, {built.row_count:,} rows; {len(golds)} gold queries")
    print(f"suite built in {seconds:.1f} s (target: 30 s at most)")
    print(
        f"candidates: {suite.candidates}, {suite.candidates - suite.unbuildable} built, "
        f"{len(suite.neighbours)} kept"
    )
    print(f"near misses: {near_misses}")
    print(f"told apart by the original alone: {by_original}")
    print(f"told apart by the original and the suite: {by_suite}")
    for question_id, question in sorted(suite.questions.items()):
        print(
            f"  {question_id}: {question.told_apart_by_suite} of {question.near_misses} "
            f"({len(question.told_apart_by_original)} by the original), "
            f"{len(question.neighbours)} neighbours"
        )


def synthetic_dump(rows: int) -> str:
    """A dump of about `rows` rows, the same text for the same number."""
    rng = random.Random(rows)
    scale = rows / 50_000
    counts = {
        "regione": 40,
        "citta": max(len(CITIES), round(300 * scale)),
        "indirizzo": round(1_200 * scale),
        "cliente": round(1_200 * scale),
        "tipo": len(TYPES),
        "bicicletta": round(1_000 * scale),
        "meccanico": round(200 * scale),
        "revisione": round(5_000 * scale),
        "mezzo": round(4_500 * scale),
        "noleggio": round(16_000 * scale),
    }
    # bici_tipo: one a bicycle.
    counts["pagamento"] = max(0, rows - sum(counts.values()) - counts["bicicletta"])
    start = datetime(2025, 5, 24, 22, 53, 30)

    def name() -> str:
        return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()

    def when(days: int) -> datetime:
        return start + timedelta(seconds=rng.randint(0, days * 86_400))

    def pairs(count: int, left: int, right: int) -> Iterator[tuple[int, int]]:
        seen: set[tuple[int, int]] = set()
        while len(seen) < min(count, left * right):
            pair = (rng.randint(1, left), rng.randint(1, right))
            if pair not in seen:
                seen.add(pair)
                yield pair

    rentals = []
    for number in range(1, counts["noleggio"] + 1):
        rented = when(90)
        returned = None if rng.random() < 0.01 else rented + timedelta(hours=rng.randint(1, 240))
        rentals.append(
            (
                number,
                rented,
                rng.randint(1, counts["mezzo"]),
                rng.randint(1, counts["cliente"]),
                returned,
            )
        )
    tables: dict[str, Callable[[], Iterator[tuple[object, ...]]]] = {
        "regione": lambda: ((n, name()) for n in range(1, counts["regione"] + 1)),
        "citta": lambda: (
            (n, CITIES[n - 1] if n <= len(CITIES) else name(), rng.randint(1, counts["regione"]))
            for n in range(1, counts["citta"] + 1)
        ),
        "indirizzo": lambda: (
            (n, f"Via {name()} {rng.randint(1, 999)}", name()[:20], rng.randint(1, counts["citta"]))
            for n in range(1, counts["indirizzo"] + 1)
        ),
        "cliente": lambda: (
            (
                n,
                name(),
                name(),
                None if rng.random() < 0.05 else f"{name().lower()}@example.org",
                rng.randint(1, counts["indirizzo"]),
                int(rng.random() < 0.97),
            )
            for n in range(1, counts["cliente"] + 1)
        ),
        "tipo": lambda: ((n, kind) for n, kind in enumerate(TYPES, 1)),
        "bicicletta": lambda: (
            (
                n,
                f"{name()} {name()}",
                rng.randint(2015, 2025),
                rng.choice(("1.99", "2.99", "4.99")),
                rng.randint(46, 185),
                rng.choice(("XS", "S", "M", "L", "XL")),
            )
            for n in range(1, counts["bicicletta"] + 1)
        ),
        "bici_tipo": lambda: ((n, rng.randint(1, len(TYPES))) for n in range(1, counts["bicicletta"] + 1)),
        "meccanico": lambda: ((n, name(), name()) for n in range(1, counts["meccanico"] + 1)),
        "revisione": lambda: pairs(counts["revisione"], counts["meccanico"], counts["bicicletta"]),
        "mezzo": lambda: (
            (n, rng.randint(1, counts["bicicletta"]), rng.randint(1, 2))
            for n in range(1, counts["mezzo"] + 1)
        ),
        "noleggio": lambda: iter(rentals),
        "pagamento": lambda: (
            (
                n,
                (rental := rng.choice(rentals))[3],
                rental[0],
                rng.choice(("0.99", "1.99", "2.99", "3.99", "4.99", "5.99")),
                rental[1] + timedelta(minutes=rng.randint(0, 600)),
            )
            for n in range(1, counts["pagamento"] + 1)
        ),
    }
    parts = [SCHEMA]
    for table, rows_of in tables.items():
        parts.extend(_inserts(table, list(rows_of())))
    return "\n".join(parts)


def _inserts(table: str, rows: list[tuple[object, ...]], batch: int = 1_000) -> Iterator[str]:
    for first in range(0, len(rows), batch):
        values = ",".join(
            "(" + ",".join(_literal(v) for v in row) + ")" for row in rows[first : first + batch]
        )
        yield f"INSERT INTO `{table}` VALUES {values};"


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime):
        return f"'{value:%Y-%m-%d %H:%M:%S}'"
    return "'" + str(value).replace("'", "''") + "'"


if __name__ == "__main__":
    main()
