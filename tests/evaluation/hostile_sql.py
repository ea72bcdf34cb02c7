"""Hostile predictions for the sandbox, each with the outcome it must end in.

They target the demo database of `demo_db.py` (tables `clienti`, `ordini`, index `clienti_eta`). Runaway
queries assume a small per-query budget (a fraction of a second) and a memory limit of about 128 MiB.

Each query that is a query reads a table of the demo database: one that reads none is a hard-coded answer,
which the scorer refuses from its text (`reads_no_table`) before the layer it is meant for could act.
`WHERE EXISTS (SELECT 1 FROM clienti)` reads one without changing the work or the rows.
"""

from __future__ import annotations

import pytest

_COUNTER = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < {n}) "
_READS = " WHERE EXISTS (SELECT 1 FROM clienti)"
INFINITE_CTE = (
    "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT COUNT(*) FROM r" + _READS
)
# One printf call is one step of SQLite's virtual machine: the progress handler cannot stop it.
UNINTERRUPTIBLE = "SELECT printf('%.*c', 1000000000, 'x')"

HOSTILE = [
    # Writes and schema changes
    pytest.param("INSERT INTO clienti (nome) VALUES ('Intruso')", "runtime_error", id="insert"),
    pytest.param("INSERT INTO ordini SELECT * FROM ordini", "runtime_error", id="insert-select"),
    pytest.param("REPLACE INTO clienti (id, nome) VALUES (1, 'Intruso')", "runtime_error", id="replace"),
    pytest.param("UPDATE clienti SET eta = 0", "runtime_error", id="update"),
    pytest.param("DELETE FROM ordini", "runtime_error", id="delete"),
    pytest.param("DROP TABLE ordini", "runtime_error", id="drop-table"),
    pytest.param("DROP INDEX clienti_eta", "runtime_error", id="drop-index"),
    pytest.param("CREATE TABLE copia (a)", "runtime_error", id="create-table"),
    pytest.param("CREATE INDEX ordini_data ON ordini (data)", "runtime_error", id="create-index"),
    pytest.param("ALTER TABLE clienti ADD COLUMN note TEXT", "runtime_error", id="alter-table"),
    pytest.param("UPDATE sqlite_master SET sql = ''", "runtime_error", id="write-sqlite-master"),
    pytest.param("CREATE VIRTUAL TABLE testo USING fts5(a)", "runtime_error", id="create-virtual-table"),
    pytest.param("CREATE TEMP TABLE appunti (a)", "runtime_error", id="create-temp-table"),
    pytest.param("CREATE TEMP VIEW vista AS SELECT 1", "runtime_error", id="create-temp-view"),
    pytest.param(
        "CREATE TEMP TRIGGER scatto AFTER INSERT ON clienti BEGIN SELECT 1; END",
        "runtime_error",
        id="create-temp-trigger",
    ),
    # Other databases, files and extensions
    pytest.param(
        "ATTACH DATABASE '/tmp/termite-sandbox-attack.sqlite' AS altro", "runtime_error", id="attach"
    ),
    pytest.param("ATTACH DATABASE ':memory:' AS memoria", "runtime_error", id="attach-memory"),
    pytest.param("DETACH DATABASE main", "runtime_error", id="detach"),
    pytest.param("VACUUM INTO '/tmp/termite-sandbox-vacuum.sqlite'", "runtime_error", id="vacuum-into"),
    pytest.param("VACUUM", "runtime_error", id="vacuum"),
    pytest.param("SELECT load_extension('/tmp/termite-evil.so')", "runtime_error", id="load-extension"),
    pytest.param("SELECT fts3_tokenizer('simple')", "runtime_error", id="fts3-tokenizer"),
    pytest.param("SELECT writefile('/tmp/termite-sandbox-write', 'x')", "runtime_error", id="writefile"),
    pytest.param("SELECT * FROM clienti, json_each('[1, 2]')", "runtime_error", id="table-valued-function"),
    # PRAGMA, reads and writes
    pytest.param("PRAGMA journal_mode = DELETE", "runtime_error", id="pragma-journal-mode"),
    pytest.param("PRAGMA writable_schema = ON", "runtime_error", id="pragma-writable-schema"),
    pytest.param("PRAGMA query_only = OFF", "runtime_error", id="pragma-query-only-off"),
    pytest.param("PRAGMA table_info(clienti)", "runtime_error", id="pragma-read"),
    pytest.param("SELECT * FROM pragma_database_list", "runtime_error", id="pragma-function"),
    # Transactions and maintenance
    pytest.param("BEGIN", "runtime_error", id="begin"),
    pytest.param("COMMIT", "runtime_error", id="commit"),
    pytest.param("ROLLBACK", "runtime_error", id="rollback"),
    pytest.param("SAVEPOINT punto", "runtime_error", id="savepoint"),
    pytest.param("RELEASE punto", "runtime_error", id="release"),
    pytest.param("REINDEX", "runtime_error", id="reindex"),
    pytest.param("ANALYZE", "runtime_error", id="analyze"),
    # More than one statement
    pytest.param("SELECT 1; DROP TABLE clienti", "syntax_error", id="select-then-drop"),
    pytest.param("SELECT 1; SELECT 2", "syntax_error", id="two-selects"),
    # Text that is not a query
    pytest.param("", "syntax_error", id="empty"),
    pytest.param("-- nient'altro che un commento", "syntax_error", id="only-a-comment"),
    pytest.param("SELECT 'a\x00b' FROM clienti", "syntax_error", id="nul-byte"),
    pytest.param("SELECT '\ud800' FROM clienti", "syntax_error", id="lone-surrogate"),
    pytest.param(
        b"SELECT '\xff\xfe' FROM clienti".decode("utf-8", "surrogateescape"),
        "syntax_error",
        id="invalid-utf8",
    ),
    pytest.param("SELECT 1 FROM clienti " + " " * 5_000_000, "resource_limit", id="five-megabyte-query"),
    pytest.param("SELECT nome FROM clienti WHERE eta = ?", "resource_limit", id="bound-parameter"),
    # Time
    pytest.param(INFINITE_CTE, "timeout", id="infinite-recursive-cte"),
    pytest.param(
        "SELECT COUNT(*) FROM " + ", ".join(f"ordini o{i}" for i in range(10)),
        "timeout",
        id="cartesian-explosion",
    ),
    # Size and memory
    pytest.param("SELECT randomblob(1000000000) FROM clienti", "resource_limit", id="randomblob-gigabyte"),
    pytest.param("SELECT zeroblob(1000000000) FROM clienti", "resource_limit", id="zeroblob-gigabyte"),
    # printf stops growing its text at the value-size limit and returns what it has
    pytest.param(
        "SELECT length(printf('%.*c', 20000000, 'x')) <= 10000000" + _READS,
        "ok",
        id="printf-expansion-capped",
    ),
    pytest.param(
        "SELECT replace(hex(zeroblob(4000000)), '0', '0000000000')" + _READS,
        "resource_limit",
        id="replace-expansion",
    ),
    pytest.param(
        "SELECT length(substr(hex(zeroblob(6000000)), 1))" + _READS,
        "resource_limit",
        id="substr-of-huge-text",
    ),
    pytest.param(
        "SELECT length(group_concat(hex(zeroblob(4000000)))) FROM ordini a, ordini b",
        "resource_limit",
        id="group-concat-explosion",
    ),
    pytest.param(
        _COUNTER.format(n=300)
        + "SELECT length(b) FROM (SELECT zeroblob(9000000) || x AS b FROM r ORDER BY b)"
        + _READS,
        "resource_limit",
        id="memory-exhaustion-by-sort",
    ),
    pytest.param(
        _COUNTER.format(n=200_000) + "SELECT x FROM r" + _READS, "resource_limit", id="too-many-rows"
    ),
    pytest.param(
        "SELECT 'a' LIKE '" + "%a" * 2000 + "' FROM clienti", "resource_limit", id="like-pattern-too-long"
    ),
    # Depth
    pytest.param(
        "SELECT " + "(" * 10_000 + "1" + ")" * 10_000, "resource_limit", id="ten-thousand-parentheses"
    ),
    pytest.param("SELECT " + "1 + " * 2000 + "1 FROM clienti", "resource_limit", id="deep-expression"),
    pytest.param(
        "SELECT * FROM " + "(SELECT * FROM " * 300 + "clienti" + ")" * 300,
        "resource_limit",
        id="deep-subqueries",
    ),
    pytest.param(
        " UNION ".join(["SELECT 1 FROM clienti"] * 100), "resource_limit", id="compound-select-of-a-hundred"
    ),
    # Output the engine cannot hand back as text
    pytest.param("SELECT CAST(x'ff' AS TEXT) FROM clienti", "runtime_error", id="invalid-utf8-result"),
]

# Just under the default caps of one result (20,000 rows, 8 MB): the largest result the scoring process
# holds while it compares it. `{table}` as below.
UNDER_THE_RESULT_CAPS = (
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 19999) SELECT printf('%390d', n) FROM r"
    " WHERE EXISTS (SELECT 1 FROM `{table}`)"
)

# Memory bombs by kind, each with its dialect: if nothing stopped them, each would hold hundreds of megabytes
# or more in the sandbox's child. `{table}` is a table of the question's database (the more rows the better).
_ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000000000) "
_READS_TABLE = " WHERE EXISTS (SELECT 1 FROM `{table}`)"
_CROSS_JOIN = " FROM `{table}` a, `{table}` b, `{table}` c, `{table}` d"
MEMORY_BOMBS = {
    # MySQL's GROUP_CONCAT is the portal's own aggregate: it keeps a group's values in Python until the end.
    "group-concat-mysql": ("mysql", _ENDLESS + "SELECT GROUP_CONCAT(n ORDER BY n) FROM r" + _READS_TABLE),
    "group-concat-distinct-mysql": (
        "mysql",
        _ENDLESS + "SELECT GROUP_CONCAT(DISTINCT n) FROM r" + _READS_TABLE,
    ),
    "group-concat-sqlite": (
        "sqlite",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 100000) "
        "SELECT length(group_concat(printf('%1000d', n))) FROM r" + _READS_TABLE,
    ),
    "zeroblob": ("sqlite", "SELECT zeroblob(999999999) FROM `{table}`"),
    "randomblob": ("sqlite", "SELECT randomblob(999999999) FROM `{table}`"),
    "sorted-zeroblobs": (
        "sqlite",
        _ENDLESS + "SELECT zeroblob(3999000) || n FROM r" + _READS_TABLE + " ORDER BY random()",
    ),
    "cross-join-random-blobs": ("sqlite", "SELECT randomblob(999999)" + _CROSS_JOIN + " ORDER BY random()"),
    "cross-join-wide-text": (
        "sqlite",
        "SELECT printf('%.*c', 3000000, 'x')" + _CROSS_JOIN + " ORDER BY random()",
    ),
    "cross-join-mysql": (
        "mysql",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100000) "
        "SELECT * FROM r, `{table}` a, `{table}` b, `{table}` c ORDER BY RAND()",
    ),
    "recursive-union": (
        "sqlite",
        "WITH RECURSIVE r(n, b) AS (SELECT 1, randomblob(100000) UNION SELECT n + 1, randomblob(100000) FROM r) "
        "SELECT count(*) FROM r" + _READS_TABLE,
    ),
    "distinct-blobs": ("sqlite", _ENDLESS + "SELECT DISTINCT randomblob(100000) FROM r" + _READS_TABLE),
}
