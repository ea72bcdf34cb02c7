"""Capacity: scored submissions per minute per worker, and what each submission costs Redis and PostgreSQL.

    .venv/bin/python -m benchmarks.capacity [--submissions 200] [--no-score-speed]

Needs PostgreSQL and Redis on this machine; one scratch portal (benchmarks/loadkit.py: gunicorn with 3
workers, rq workers, on 127.0.0.1) on the demo benchmark. Two rounds, with 1 rq worker and then 2: the
workers are suspended (rq's own `suspend`), N public submissions (each question's gold as its prediction,
a whole model card) are uploaded through the API one after another, the workers are resumed and timed
until every submission is scored. Around each round it reads:

- Redis: `INFO` (commandstats, total_net_input_bytes / total_net_output_bytes, total_connections_received,
  used_memory), for the uploads and the scoring apart; less the script's own `INFO` and `CLIENT LIST`.
  The counters are the whole server's: the script says how many clients of other databases were connected;
- PostgreSQL: pg_stat_database (transactions, sessions, rows) and pg_stat_user_tables (rows per table) of
  the scratch database, less the script's own queries, once every session's counters are flushed (an
  idle backend flushes within 10 s); and the size of the submission tables (pg_total_relation_size);
- CPU time of each process tree, from /proc: the rq workers with their work-horses and sandboxes, gunicorn,
  the PostgreSQL server, the Redis server (the last two serve other users of this machine too).

The rate is the steady one: (N - 1) submissions over the time from the first to the last scored_at.
With the Termite archive present (as benchmarks.score_speed finds it), it then runs
`benchmarks.score_speed` on the archive and on the demo (figures only, never SQL) and estimates a real
submission's job from the demo's: the job measured here, less the demo's scoring, plus the archive's.
Loopback only; at most 2 x N uploads; stops by itself.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import redis

from benchmarks.loadkit import REDIS, ROOT, Portal
from benchmarks.portal_load import prepare, upload

# An idle backend flushes its statistics within PGSTAT_IDLE_INTERVAL, 10 s.
PG_SETTLE_SECONDS = 12
TICKS = os.sysconf("SC_CLK_TCK")
SCORE_SPEED_ROWS = {
    "warm": "MySQL predictions, warm (production)",
    "suites": "MySQL, warm, with test suites (TS-EA)",
}


# --- CPU time of process trees, from /proc --------------------------------------------------------------


def _processes() -> dict[int, tuple[int, str, float]]:
    """pid -> (parent pid, command name, CPU seconds of it and of its children it has waited for)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        # After the command name: state, ppid, ..., utime stime cutime cstime at 11..14.
        ticks = sum(int(value) for value in fields[11:15])
        table[int(entry.name)] = (int(fields[1]), text[text.index("(") + 1 : text.rindex(")")], ticks / TICKS)
    return table


def _tree_seconds(table: dict[int, tuple[int, str, float]], roots: list[int]) -> float:
    children = defaultdict(list)
    for pid, (parent, _name, _seconds) in table.items():
        children[parent].append(pid)
    seconds, stack = 0.0, [pid for pid in roots if pid in table]
    while stack:
        pid = stack.pop()
        seconds += table[pid][2]
        stack.extend(children[pid])
    return seconds


def cpu_seconds(trees: dict[str, Callable[[], list[int]]]) -> dict[str, float]:
    table = _processes()
    return {name: _tree_seconds(table, roots()) for name, roots in trees.items()}


def server_roots(command: str) -> Callable[[], list[int]]:
    """The processes named `command` whose parent is not: a server and, below it, its children."""

    def roots() -> list[int]:
        table = _processes()
        return [
            pid
            for pid, (parent, name, _s) in table.items()
            if name == command and table.get(parent, (0, ""))[1] != command
        ]

    return roots


# --- Redis and PostgreSQL counters ---------------------------------------------------------------------


@dataclass
class RedisCounters:
    calls: Counter
    net_in: int
    net_out: int
    connections: int
    used_memory: int
    foreign_clients: int  # connected to another database of the server: their traffic is in the figures

    def __sub__(self, other: RedisCounters) -> RedisCounters:
        return RedisCounters(
            calls=self.calls - other.calls,
            net_in=self.net_in - other.net_in,
            net_out=self.net_out - other.net_out,
            connections=self.connections - other.connections,
            used_memory=self.used_memory - other.used_memory,
            foreign_clients=max(self.foreign_clients, other.foreign_clients),
        )


OWN_REDIS_COMMANDS = {"info", "client|list"}


class RedisMeter:
    def __init__(self, url: str):
        self.client = redis.Redis.from_url(url)
        self.db = self.client.connection_pool.connection_kwargs.get("db", 0)
        first, second = self.read(), self.read()
        # What one reading costs on the wire, taken off every interval between two readings.
        self.own_in, self.own_out = second.net_in - first.net_in, second.net_out - first.net_out

    def read(self) -> RedisCounters:
        with self.client.pipeline(transaction=False) as pipe:
            pipe.info("all")
            pipe.client_list()
            info, clients = pipe.execute()
        calls = Counter(
            {
                key.removeprefix("cmdstat_"): value["calls"]
                for key, value in info.items()
                if key.startswith("cmdstat_") and key.removeprefix("cmdstat_") not in OWN_REDIS_COMMANDS
            }
        )
        return RedisCounters(
            calls=calls,
            net_in=info["total_net_input_bytes"],
            net_out=info["total_net_output_bytes"],
            connections=info["total_connections_received"],
            used_memory=info["used_memory"],
            foreign_clients=sum(int(client["db"]) != self.db for client in clients),
        )

    def between(self, before: RedisCounters, after: RedisCounters) -> RedisCounters:
        delta = after - before
        delta.net_in -= self.own_in
        delta.net_out -= self.own_out
        return delta


@dataclass
class PgCounters:
    transactions: int
    sessions: int
    inserted: int
    updated: int
    deleted: int
    # Table name -> rows inserted, updated, deleted.
    tables: dict[str, tuple[int, int, int]] = field(default_factory=dict)


class PgMeter:
    """The scratch database's statistics, less what this script's own queries add (one transaction each:
    Django runs them in autocommit, on one connection kept open throughout)."""

    def __init__(self):
        from django.db import connection

        self.connection = connection
        self.own_queries = 0
        # Every query of this process: the readings and the polling (the ORM's too).
        connection.execute_wrappers.append(self._count)
        connection.ensure_connection()

    def _count(self, execute, sql, params, many, context):
        self.own_queries += 1
        return execute(sql, params, many, context)

    def query(self, sql: str) -> list[tuple]:
        with self.connection.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchall()

    def read(self) -> tuple[PgCounters, int]:
        """The counters, and how many of the script's own queries ran before this reading."""
        own = self.own_queries
        ((transactions, sessions, inserted, updated, deleted),) = self.query(
            "SELECT xact_commit + xact_rollback, sessions, tup_inserted, tup_updated, tup_deleted"
            " FROM pg_stat_database WHERE datname = current_database()"
        )
        tables = {
            name: (ins, upd, dele)
            for name, ins, upd, dele in self.query(
                "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables"
            )
        }
        return PgCounters(transactions, sessions, inserted, updated, deleted, tables), own

    def connections(self) -> int:
        return self.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")[0][0]


# --- one round -----------------------------------------------------------------------------------------


@dataclass
class Round:
    workers: int
    n: int
    uploads: list[float]  # seconds each
    rate_per_minute: float  # steady: (n - 1) over first to last scored_at
    drain_seconds: float  # from resuming the workers to the last scored
    job_seconds: list[float]  # claim to scored, per submission
    redis_upload: RedisCounters
    redis_scoring: RedisCounters
    memory_queued: int  # Redis memory with the n jobs queued, over the memory before
    memory_after: int  # after scoring: finished jobs and their results, until rq's result_ttl
    pg: PgCounters
    peak_pg_connections: int
    cpu_upload: dict[str, float]
    cpu_scoring: dict[str, float]


def _minus(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {name: after[name] - before[name] for name in after}


def run_round(
    portal: Portal,
    workers: list,
    web,
    *,
    count: int,
    n: int,
    token: str,
    predictions: bytes,
    meters: tuple[RedisMeter, PgMeter],
) -> Round:
    from rq import Worker
    from rq.suspension import resume, suspend

    from leaderboard.models import Submission

    redis_meter, pg_meter = meters
    # Fresh workers, started suspended: an idle one already waiting on the queue would not see the
    # suspension before it took a job.
    for process in workers:
        portal.stop(process)
    suspend(redis_meter.client)
    workers[:] = portal.start_workers(count)
    deadline = time.monotonic() + 180
    while [w.get_state() for w in Worker.all(connection=redis_meter.client)] != ["suspended"] * count:
        if time.monotonic() > deadline:
            raise SystemExit(f"the {count} workers did not start")
        time.sleep(0.5)
    trees = {
        "workers": lambda: [p.pid for p in workers],
        "web": lambda: [web.pid],
        "PostgreSQL": server_roots("postgres"),
        "Redis": server_roots("redis-server"),
    }
    time.sleep(PG_SETTLE_SECONDS)
    pg_before, own_before = pg_meter.read()
    cpu0, redis0 = cpu_seconds(trees), redis_meter.read()

    ids, times = [], []
    for number in range(n):
        submission_id, seconds = upload(portal.url, token, predictions, number)
        ids.append(submission_id)
        times.append(seconds)
    cpu1, redis1 = cpu_seconds(trees), redis_meter.read()

    resumed = time.monotonic()
    resume(redis_meter.client)
    peak = 0
    deadline = resumed + 600
    while Submission.objects.filter(pk__in=ids, status__in=["queued", "running"]).exists():
        if time.monotonic() > deadline:
            raise SystemExit("scoring did not end within 10 minutes")
        peak = max(peak, pg_meter.connections())
        time.sleep(0.5)
    drain = time.monotonic() - resumed
    cpu2, redis2 = cpu_seconds(trees), redis_meter.read()
    states = Counter(Submission.objects.filter(pk__in=ids).values_list("status", flat=True))
    if states["scored"] != n:
        raise SystemExit(f"not every submission ended scored: {dict(states)}")
    time.sleep(PG_SETTLE_SECONDS)
    pg_after, own_after = pg_meter.read()

    stamps = list(Submission.objects.filter(pk__in=ids).values_list("started_at", "scored_at"))
    scored = sorted(end for _start, end in stamps)
    own = own_after - own_before  # the script's queries from the first reading to the last, exclusive
    return Round(
        workers=count,
        n=n,
        uploads=times,
        rate_per_minute=60 * (n - 1) / (scored[-1] - scored[0]).total_seconds(),
        drain_seconds=drain,
        job_seconds=[(end - start).total_seconds() for start, end in stamps],
        redis_upload=redis_meter.between(redis0, redis1),
        redis_scoring=redis_meter.between(redis1, redis2),
        memory_queued=redis1.used_memory - redis0.used_memory,
        memory_after=redis2.used_memory - redis0.used_memory,
        pg=PgCounters(
            transactions=pg_after.transactions - pg_before.transactions - own,
            sessions=pg_after.sessions - pg_before.sessions,
            inserted=pg_after.inserted - pg_before.inserted,
            updated=pg_after.updated - pg_before.updated,
            deleted=pg_after.deleted - pg_before.deleted,
            tables={
                name: tuple(a - b for a, b in zip(row, pg_before.tables.get(name, (0, 0, 0)), strict=True))
                for name, row in pg_after.tables.items()
            },
        ),
        peak_pg_connections=peak,
        cpu_upload=_minus(cpu1, cpu0),
        cpu_scoring=_minus(cpu2, cpu1),
    )


# --- the figures ---------------------------------------------------------------------------------------


def _kb(value: float) -> str:
    return f"{value / 1024:.1f} KB"


def report(rounds: list[Round], stored: dict[str, int], questions: int, total: int) -> None:
    rows: list[tuple[str, Callable[[Round], str]]] = [
        ("scored per minute (steady)", lambda r: f"{r.rate_per_minute:.0f}"),
        ("  per worker", lambda r: f"{r.rate_per_minute / r.workers:.0f}"),
        ("  wall per job, per worker", lambda r: f"{1000 * 60 * r.workers / r.rate_per_minute:.0f} ms"),
        ("  claim to scored, p50", lambda r: f"{1000 * statistics.median(r.job_seconds):.0f} ms"),
        ("  resume to all scored", lambda r: f"{r.drain_seconds:.1f} s"),
        ("upload (API, one client), p50", lambda r: f"{1000 * statistics.median(r.uploads):.0f} ms"),
        *(
            (f"CPU per submission: {name}", lambda r, name=name: _cpu(r, name))
            for name in ("workers", "web", "PostgreSQL", "Redis")
        ),
        (
            "Redis commands (upload + scoring)",
            lambda r: (
                f"{_per(r.redis_upload.calls.total(), r):.1f} + {_per(r.redis_scoring.calls.total(), r):.1f}"
            ),
        ),
        (
            "Redis bytes in / out",
            lambda r: (
                f"{_kb(_per(r.redis_upload.net_in + r.redis_scoring.net_in, r))}"
                f" / {_kb(_per(r.redis_upload.net_out + r.redis_scoring.net_out, r))}"
            ),
        ),
        (
            "Redis connections opened",
            lambda r: f"{_per(r.redis_upload.connections + r.redis_scoring.connections, r):.2f}",
        ),
        ("Redis memory per queued job", lambda r: _kb(_per(r.memory_queued, r))),
        ("  per finished job (result_ttl)", lambda r: _kb(_per(r.memory_after, r))),
        ("PostgreSQL transactions", lambda r: f"{_per(r.pg.transactions, r):.1f}"),
        (
            "  rows inserted / updated / deleted",
            lambda r: (
                f"{_per(r.pg.inserted, r):.1f} / {_per(r.pg.updated, r):.1f} / {_per(r.pg.deleted, r):.1f}"
            ),
        ),
        ("  sessions (connections opened)", lambda r: f"{_per(r.pg.sessions, r):.2f}"),
        ("  peak connections while scoring", lambda r: f"{r.peak_pg_connections}"),
    ]
    header = f"{'per submission unless said':<38}" + "".join(
        f"{f'{r.workers} worker' + 's' * (r.workers > 1):>18}" for r in rounds
    )
    print(header)
    for label, cell in rows:
        print(f"{label:<38}" + "".join(f"{cell(r):>18}" for r in rounds))
    size = sum(stored.values())
    print(
        f"PostgreSQL bytes stored per submission: {_kb(size / total)} ("
        + ", ".join(f"{name} {_kb(value / total)}" for name, value in stored.items())
        + f"; {total} submissions of {questions} predictions, with their scores and outcomes)"
    )
    first = rounds[0]
    print(
        "Redis commands per submission, 1 worker: "
        + ", ".join(
            f"{name} {_per(calls, first):.2f}"
            for name, calls in (first.redis_upload.calls + first.redis_scoring.calls).most_common()
            if _per(calls, first) >= 0.05
        )
    )
    print(
        "PostgreSQL rows per submission by table, 1 worker (inserted/updated/deleted): "
        + ", ".join(
            f"{name} {'/'.join(f'{_per(v, first):.1f}' for v in row)}"
            for name, row in sorted(first.pg.tables.items())
            if any(_per(v, first) >= 0.05 for v in row)
        )
    )
    foreign = max(max(r.redis_upload.foreign_clients, r.redis_scoring.foreign_clients) for r in rounds)
    print(
        f"Redis clients on other databases seen during the rounds (their traffic is counted too): {foreign}"
    )


def _per(value: float, r: Round) -> float:
    return value / r.n


def _cpu(r: Round, name: str) -> str:
    upload, scoring = _per(r.cpu_upload[name], r), _per(r.cpu_scoring[name], r)
    return f"{1000 * upload:.0f} + {1000 * scoring:.0f} ms"


def score_speed(archive: Path | None) -> dict[str, float]:
    """Run benchmarks.score_speed on the archive (None: the demo), relay its lines, return its warm rows."""
    env = dict(os.environ)
    env["TERMITE_ARCHIVE"] = str(archive) if archive else "/nonexistent/no-archive.zip"
    output = subprocess.run(
        [sys.executable, "-m", "benchmarks.score_speed"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    print(f"--- python -m benchmarks.score_speed ({'archive' if archive else 'demo'}):")
    print(output.rstrip())
    found = {}
    for key, label in SCORE_SPEED_ROWS.items():
        match = re.search(rf"^{re.escape(label)}\s+([0-9.]+) s", output, re.MULTILINE)
        if match:
            found[key] = float(match[1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=200, help="uploads per round")
    parser.add_argument("--no-score-speed", action="store_true", help="skip benchmarks.score_speed")
    args = parser.parse_args()
    rounds = []
    with Portal("capacity") as portal:
        token, predictions = prepare()
        from leaderboard.demo import demo_gold
        from leaderboard.models import Submission

        questions = len(demo_gold())
        web = portal.start_web(workers=3)
        meters = (RedisMeter(REDIS), PgMeter())
        workers: list = []
        try:
            for count in (1, 2):
                rounds.append(
                    run_round(
                        portal,
                        workers,
                        web,
                        count=count,
                        n=args.submissions,
                        token=token,
                        predictions=predictions,
                        meters=meters,
                    )
                )
        finally:
            from rq.suspension import resume

            resume(meters[0].client)
        stored = {
            table: meters[1].query(f"SELECT pg_total_relation_size('{table}')")[0][0]
            for table in ("leaderboard_submission", "leaderboard_scoring")
        }
        total = Submission.objects.count()
    print(
        f"capacity, {date.today()}, {os.cpu_count()} cores: the demo benchmark, {args.submissions} public "
        f"submissions of {questions} predictions per round, uploaded while the workers were suspended; "
        "CPU per submission = upload + scoring"
    )
    report(rounds, stored, questions, total)
    if args.no_score_speed:
        return
    from benchmarks.score_speed import DEFAULT_ARCHIVE

    archive = Path(os.environ.get("TERMITE_ARCHIVE", DEFAULT_ARCHIVE))
    if not archive.is_file():
        print("no Termite archive: the real benchmark's scoring time was not measured")
        return
    real, demo = score_speed(archive), score_speed(None)
    key = "suites" if "suites" in real and "suites" in demo else "warm"
    job = 60 / rounds[0].rate_per_minute
    estimate = job - demo[key] + real[key]
    print(
        f"estimate for the real benchmark, 1 worker: the demo's job {job:.3f} s - its scoring {demo[key]:.3f} s"
        f" + the archive's {real[key]:.3f} s ({SCORE_SPEED_ROWS[key]}) = {estimate:.3f} s a job,"
        f" {60 / estimate:.0f} scored per minute per worker"
    )


if __name__ == "__main__":
    main()
