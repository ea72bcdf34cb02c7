"""How long building a database's test suite takes as the data grows, and how much the suite tells apart.

    .venv/bin/python -m benchmarks.suite_build [--rows N] [--candidates N] [--seed TEXT]

A synthetic rental-shop database in mysqldump's style (countries, cities, addresses, customers, films,
categories, actors, inventory, rentals, payments; about `--rows` rows in all, 50,000 by default, drawn
from a fixed seed) and eight gold queries over it: filters with boundaries, joins over three tables,
groupings, a LIKE, an aggregate over a date range. The target (issue 32): the suite of a database of about
50,000 rows built in 30 s at most, telling at least as many near misses apart as before.

The suite is built as an import builds it (`evaluation.distillation.distil_suite`, `--candidates`
neighbour candidates, 40 by default as TERMITE_SUITE_CANDIDATES, no reference engine). Prints figures only:
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
CREATE TABLE `country` (
  `country_id` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `country` VARCHAR(50) NOT NULL,
  PRIMARY KEY (`country_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `city` (
  `city_id` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `city` VARCHAR(50) NOT NULL,
  `country_id` SMALLINT UNSIGNED NOT NULL,
  PRIMARY KEY (`city_id`),
  CONSTRAINT `fk_city_country` FOREIGN KEY (`country_id`) REFERENCES `country` (`country_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `address` (
  `address_id` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `address` VARCHAR(50) NOT NULL,
  `district` VARCHAR(20) NOT NULL,
  `city_id` SMALLINT UNSIGNED NOT NULL,
  PRIMARY KEY (`address_id`),
  CONSTRAINT `fk_address_city` FOREIGN KEY (`city_id`) REFERENCES `city` (`city_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `customer` (
  `customer_id` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `first_name` VARCHAR(45) NOT NULL,
  `last_name` VARCHAR(45) NOT NULL,
  `email` VARCHAR(50) DEFAULT NULL,
  `address_id` SMALLINT UNSIGNED NOT NULL,
  `active` TINYINT(1) NOT NULL DEFAULT 1,
  PRIMARY KEY (`customer_id`),
  CONSTRAINT `fk_customer_address` FOREIGN KEY (`address_id`) REFERENCES `address` (`address_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `category` (
  `category_id` TINYINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `name` VARCHAR(25) NOT NULL,
  PRIMARY KEY (`category_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `film` (
  `film_id` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `title` VARCHAR(128) NOT NULL,
  `release_year` SMALLINT DEFAULT NULL,
  `rental_rate` DECIMAL(4,2) NOT NULL DEFAULT 4.99,
  `length` SMALLINT UNSIGNED DEFAULT NULL,
  `rating` ENUM('G','PG','PG-13','R','NC-17') DEFAULT 'G',
  PRIMARY KEY (`film_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `film_category` (
  `film_id` SMALLINT UNSIGNED NOT NULL,
  `category_id` TINYINT UNSIGNED NOT NULL,
  PRIMARY KEY (`film_id`, `category_id`),
  CONSTRAINT `fk_fc_film` FOREIGN KEY (`film_id`) REFERENCES `film` (`film_id`),
  CONSTRAINT `fk_fc_category` FOREIGN KEY (`category_id`) REFERENCES `category` (`category_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `actor` (
  `actor_id` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `first_name` VARCHAR(45) NOT NULL,
  `last_name` VARCHAR(45) NOT NULL,
  PRIMARY KEY (`actor_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `film_actor` (
  `actor_id` SMALLINT UNSIGNED NOT NULL,
  `film_id` SMALLINT UNSIGNED NOT NULL,
  PRIMARY KEY (`actor_id`, `film_id`),
  CONSTRAINT `fk_fa_actor` FOREIGN KEY (`actor_id`) REFERENCES `actor` (`actor_id`),
  CONSTRAINT `fk_fa_film` FOREIGN KEY (`film_id`) REFERENCES `film` (`film_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `inventory` (
  `inventory_id` MEDIUMINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `film_id` SMALLINT UNSIGNED NOT NULL,
  `store_id` TINYINT UNSIGNED NOT NULL,
  PRIMARY KEY (`inventory_id`),
  CONSTRAINT `fk_inventory_film` FOREIGN KEY (`film_id`) REFERENCES `film` (`film_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `rental` (
  `rental_id` INT NOT NULL AUTO_INCREMENT,
  `rental_date` DATETIME NOT NULL,
  `inventory_id` MEDIUMINT UNSIGNED NOT NULL,
  `customer_id` SMALLINT UNSIGNED NOT NULL,
  `return_date` DATETIME DEFAULT NULL,
  PRIMARY KEY (`rental_id`),
  CONSTRAINT `fk_rental_inventory` FOREIGN KEY (`inventory_id`) REFERENCES `inventory` (`inventory_id`),
  CONSTRAINT `fk_rental_customer` FOREIGN KEY (`customer_id`) REFERENCES `customer` (`customer_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `payment` (
  `payment_id` SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `customer_id` SMALLINT UNSIGNED NOT NULL,
  `rental_id` INT DEFAULT NULL,
  `amount` DECIMAL(5,2) NOT NULL,
  `payment_date` DATETIME NOT NULL,
  PRIMARY KEY (`payment_id`),
  CONSTRAINT `fk_payment_customer` FOREIGN KEY (`customer_id`) REFERENCES `customer` (`customer_id`),
  CONSTRAINT `fk_payment_rental` FOREIGN KEY (`rental_id`) REFERENCES `rental` (`rental_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
"""

# Each reads what a question over a rental shop would; none quotes anything of the Termite archive.
GOLDS = (
    "SELECT COUNT(*) FROM rental WHERE return_date IS NULL",
    "SELECT c.first_name, c.last_name FROM customer AS c JOIN address AS a ON c.address_id = a.address_id "
    "JOIN city AS ci ON a.city_id = ci.city_id WHERE ci.city = 'Lisboa'",
    "SELECT title FROM film WHERE rental_rate > 2.99 AND length >= 120 ORDER BY title",
    "SELECT cat.name, COUNT(*) FROM film_category AS fc JOIN category AS cat "
    "ON fc.category_id = cat.category_id GROUP BY cat.name",
    "SELECT SUM(p.amount) FROM payment AS p JOIN rental AS r ON p.rental_id = r.rental_id "
    "WHERE r.rental_date >= '2005-06-01'",
    "SELECT store_id, COUNT(*) FROM inventory GROUP BY store_id",
    "SELECT first_name FROM actor WHERE last_name LIKE 'B%' ORDER BY first_name, actor_id",
    "SELECT COUNT(DISTINCT customer_id) FROM customer WHERE active = 1 AND email IS NOT NULL",
)

SYLLABLES = ("ba", "ro", "ki", "ne", "lu", "ma", "to", "si", "de", "vo", "ca", "ri", "po", "le")
CATEGORIES = ("Action", "Animation", "Children", "Classics", "Comedy", "Drama", "Horror", "Music")
CITIES = ("Lisboa", "Porto", "Roma", "Milano", "Paris", "Lyon", "Berlin", "Wien", "Bern", "Praha")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000, help="About how many rows in all")
    parser.add_argument("--candidates", type=int, default=40, help="Neighbour candidates")
    parser.add_argument("--seed", default="termite", help="The suite's seed")
    args = parser.parse_args()
    dump = synthetic_dump(args.rows)
    with tempfile.TemporaryDirectory(prefix="suite-build-") as folder:
        directory = Path(folder)
        original = directory / "shop.sqlite3"
        built = build_sqlite(dump, original)
        with closing(sqlite3.connect(original)) as connection:
            column_types = read_schema(connection)
        golds = [
            ScorableGold(f"shop-{number:03d}", gold, to_sqlite(gold, schema=column_types))
            for number, gold in enumerate(GOLDS, 1)
        ]
        started = time.perf_counter()
        suite = distil_suite(
            slug="shop",
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
        "country": 40,
        "city": max(len(CITIES), round(300 * scale)),
        "address": round(1_200 * scale),
        "customer": round(1_200 * scale),
        "category": len(CATEGORIES),
        "film": round(1_000 * scale),
        "actor": round(200 * scale),
        "film_actor": round(5_000 * scale),
        "inventory": round(4_500 * scale),
        "rental": round(16_000 * scale),
    }
    counts["payment"] = max(0, rows - sum(counts.values()) - counts["film"])  # film_category: one a film
    start = datetime(2005, 5, 24, 22, 53, 30)

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
    for number in range(1, counts["rental"] + 1):
        rented = when(90)
        returned = None if rng.random() < 0.01 else rented + timedelta(hours=rng.randint(1, 240))
        rentals.append(
            (
                number,
                rented,
                rng.randint(1, counts["inventory"]),
                rng.randint(1, counts["customer"]),
                returned,
            )
        )
    tables: dict[str, Callable[[], Iterator[tuple[object, ...]]]] = {
        "country": lambda: ((n, name()) for n in range(1, counts["country"] + 1)),
        "city": lambda: (
            (n, CITIES[n - 1] if n <= len(CITIES) else name(), rng.randint(1, counts["country"]))
            for n in range(1, counts["city"] + 1)
        ),
        "address": lambda: (
            (n, f"{rng.randint(1, 999)} {name()} Street", name()[:20], rng.randint(1, counts["city"]))
            for n in range(1, counts["address"] + 1)
        ),
        "customer": lambda: (
            (
                n,
                name(),
                name(),
                None if rng.random() < 0.05 else f"{name().lower()}@example.org",
                rng.randint(1, counts["address"]),
                int(rng.random() < 0.97),
            )
            for n in range(1, counts["customer"] + 1)
        ),
        "category": lambda: ((n, category) for n, category in enumerate(CATEGORIES, 1)),
        "film": lambda: (
            (
                n,
                f"{name()} {name()}",
                rng.randint(2000, 2006),
                rng.choice(("0.99", "2.99", "4.99")),
                rng.randint(46, 185),
                rng.choice(("G", "PG", "PG-13", "R", "NC-17")),
            )
            for n in range(1, counts["film"] + 1)
        ),
        "film_category": lambda: ((n, rng.randint(1, len(CATEGORIES))) for n in range(1, counts["film"] + 1)),
        "actor": lambda: ((n, name(), name()) for n in range(1, counts["actor"] + 1)),
        "film_actor": lambda: pairs(counts["film_actor"], counts["actor"], counts["film"]),
        "inventory": lambda: (
            (n, rng.randint(1, counts["film"]), rng.randint(1, 2)) for n in range(1, counts["inventory"] + 1)
        ),
        "rental": lambda: iter(rentals),
        "payment": lambda: (
            (
                n,
                (rental := rng.choice(rentals))[3],
                rental[0],
                rng.choice(("0.99", "1.99", "2.99", "3.99", "4.99", "5.99")),
                rental[1] + timedelta(minutes=rng.randint(0, 600)),
            )
            for n in range(1, counts["payment"] + 1)
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
