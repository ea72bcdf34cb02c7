"""The public leaderboard under load: 1,000 scored submissions, gunicorn on PostgreSQL, Redis cache.

    .venv/bin/python -m benchmarks.leaderboard_load [--submissions 1000] [--users 20] [--seconds 15]
        [--changes-per-second 1] [--turns 3]

Needs PostgreSQL and Redis on this machine (BENCH_POSTGRES_URL, BENCH_REDIS_URL); makes and drops a
scratch database. Prints, in one run:

- for the leaderboard page (its first page and the page of every row) and its JSON export, anonymous:
  one cold request (empty cache), then requests per second and p50/p99 latency with `--users` concurrent
  clients, and the bytes of each answer as sent and uncompressed;
- four lines of the first page, loaded in `--turns` turns each (anonymous, signed-in, anonymous with
  churn, signed-in with churn, and again) so that a drift of the machine's speed weighs on each alike,
  and compared with the first: anonymous again; `--users` signed-in visitors, each a distinct user with
  a session of their own; and both while new public submissions are scored and published at
  `--changes-per-second` ("churn": each one changes the ranking, which drops the cached page). The
  capacity target is 10,000 submissions a day, about one every 9 s; a run of a few seconds needs more
  for the changes to weigh, so the default is one a second;
- the cold render: the time of one request on an empty cache, several times, for each page.

Every client sends `Accept-Encoding: gzip, deflate, br` as browsers do. Every load is made by Debian's
`wrk` (C: the load costs the server almost none of the machine's two cores), when it is installed, and by
Python threads (`loadkit.hammer`, which take about one core themselves); a signed-in visitor's cookie goes
with each request (wrk: the visitors in turn), and each client's lines are compared with its own anonymous
line. Loopback only.
"""

from __future__ import annotations

import argparse
import gzip
import random
import statistics
import threading
import time
import urllib.request
from collections.abc import Callable
from http.cookies import SimpleCookie

from benchmarks.loadkit import Load, Portal, WrkLoad, hammer, wrk, wrk_installed
from tests.leaderboard.scored import QUESTIONS, scored_fields

# What a browser sends; the server picks the encodings it has among them.
BROWSER = {"Accept-Encoding": "gzip, deflate, br"}
COLD_RENDERS = 5


def scored_submission(rng: random.Random, n: int, *, version, users, teams):
    """A public submission scored on the demo's 23 questions: its EA, breakdowns and per-question verdicts
    (`outcomes`, and the EA verdicts kept of them, which the rank rule reads) agree, as the scorer writes
    them."""
    # Django is set up by `Portal`, after this module is imported.
    from django.utils import timezone

    from leaderboard.models import Submission

    fields = scored_fields(rng.randint(0, QUESTIONS))
    fields["scores"]["version"] = version.label
    return Submission(
        user=users[n % len(users)],
        version=version,
        model_name=f"Modello {n}",
        team=teams[n % len(teams)],
        predictions={},
        file_name="p.jsonl",
        file_sha256="0" * 64,
        file_format="jsonl",
        scorer_version="1.0.0",
        scored_at=timezone.now(),
        spider_dev_ea=rng.uniform(50, 90),
        weights=rng.choice(["open", "closed"]),
        approach=rng.choice(["prompting", "fine-tuning"]),
        **fields,
    )


class Seeded:
    """The demo as a sealed version (production's case), 50 researchers in 37 teams and `count` of their
    scored public submissions; `submission()` makes one more, numbered after them."""

    def __init__(self, count: int):
        from evaluation.services import demo_benchmark_load
        from leaderboard.models import Submission
        from termite_site.accounts.models import Team, User

        self.version = demo_benchmark_load(kind="sealed")
        self.users = User.objects.bulk_create(
            User(username=f"ricercatore{n}", email=f"r{n}@example.org", password="!") for n in range(50)
        )
        self.teams = Team.objects.bulk_create(Team(name=f"Gruppo {n}", slug=f"gruppo-{n}") for n in range(37))
        self.rng = random.Random(7)
        self.made = 0
        Submission.objects.bulk_create((self.submission() for _ in range(count)), batch_size=500)

    def submission(self):
        self.made += 1
        return scored_submission(
            self.rng, self.made, version=self.version, users=self.users, teams=self.teams
        )

    def sessions(self, count: int) -> list[str]:
        """The session cookies (`name=value`) of `count` distinct researchers (at most 50), each signed in
        with a session of their own."""
        from django.conf import settings
        from django.test import Client

        cookies = []
        for user in self.users[:count]:
            client = Client()
            client.force_login(user)
            cookies.append(
                f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
            )
        return cookies


def first_visits(url: str, sessions: list[str]) -> list[dict[str, str]]:
    """Each signed-in visitor's `Cookie` header after one visit to `url`: their session and the cookies the
    site set then (the CSRF token's), which a browser sends back; a client that did not would be given a
    new CSRF token with every answer, which no browser costs the site."""
    visitors = []
    for session in sessions:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers={"Cookie": session}), timeout=60
        ) as answer:
            cookies = SimpleCookie()
            for header in answer.headers.get_all("Set-Cookie") or []:
                cookies.load(header)
        visitors.append({"Cookie": "; ".join([session, *(f"{m.key}={m.value}" for m in cookies.values())])})
    return visitors


class Churn:
    """While open, a thread stores a new public scored submission every `1 / per_second` seconds and then
    says the ranking changed (`leaderboard_changed`), as the scoring worker does: each change drops the
    cached pages, so the next visitors wait for a render. The first change comes `first_in` seconds after
    it opens (one interval by default); once closed, `next_in` says when the next one was due, for a churn
    loaded in turns to go on where its last turn stopped."""

    def __init__(self, seeded: Seeded, *, per_second: float, first_in: float | None = None):
        self.seeded = seeded
        self.interval = 1 / per_second
        self.next_in = self.interval if first_in is None else first_in
        self.changes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def __enter__(self) -> Churn:
        self._due = time.monotonic() + self.next_in
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.next_in = max(0.0, self._due - time.monotonic())

    def _run(self) -> None:
        from django.db import connection

        from leaderboard.services import leaderboard_changed

        try:
            while not self._stop.wait(max(0.0, self._due - time.monotonic())):
                self.seeded.submission().save()
                leaderboard_changed(version=self.seeded.version)
                self.changes += 1
                self._due += self.interval
        finally:
            connection.close()  # this thread's own: the scratch database is dropped at the end


def cold_request(url: str) -> tuple[float, int]:
    """The time of one request on an empty cache, and the size of its answer uncompressed."""
    from django.core.cache import cache

    cache.clear()
    started = time.perf_counter()
    request = urllib.request.Request(url, headers=BROWSER)
    with urllib.request.urlopen(request, timeout=60) as response:
        body = response.read()
        encoding = response.headers.get("Content-Encoding")
    elapsed = time.perf_counter() - started
    return elapsed, len(gzip.decompress(body) if encoding == "gzip" else body)


def settle(url: str, headers: dict[str, str], *, within: float = 180) -> None:
    """Wait until `url` answers at once (in 0.1 s): gunicorn's workers have worked through what a load
    left them (a sync worker still renders the requests whose clients gave up) and the page is cached,
    so that each load starts as the first did."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        started = time.perf_counter()
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=within) as answer:
            answer.read()
        if time.perf_counter() - started < 0.1:
            return
    raise RuntimeError(f"{url} still slow after {within:.0f} s")


def clients(base_url: str, *, users: int, seconds: float) -> dict[str, Callable[[str], Load | WrkLoad]]:
    """What loads an anonymous endpoint, by name, Python threads last: wrk when it is installed (when it
    is not, it says so), and Python threads."""
    loaders: dict[str, Callable[[str], Load | WrkLoad]] = {}
    if wrk_installed():
        loaders["wrk"] = lambda path: wrk(base_url + path, users=users, seconds=seconds, headers=BROWSER)
    else:
        print("wrk is not installed (Debian's package `wrk`): the Python clients alone load each endpoint")
    loaders["Python"] = lambda path: hammer(base_url, [path], users=users, seconds=seconds, headers=BROWSER)
    return loaders


def in_turns(
    loads: dict[str, Callable[[float], Load | WrkLoad]], *, seconds: float, turns: int
) -> dict[str, Load | WrkLoad]:
    """Each of `loads` for `seconds` in all, in `turns` turns taken in order, merged into one line each."""
    merged: dict[str, Load | WrkLoad] = {}
    for _turn in range(turns):
        for name, load in loads.items():
            part = load(seconds / turns)
            merged[name] = part if name not in merged else _merged(merged[name], part)
    return merged


def _merged(first: Load | WrkLoad, second: Load | WrkLoad) -> Load | WrkLoad:
    if isinstance(first, Load) and isinstance(second, Load):
        return first.merged_with(second)
    if isinstance(first, WrkLoad) and isinstance(second, WrkLoad):
        return first.merged_with(second)
    raise TypeError("the turns of one line are loaded by one client")


def row(name: str, client: str, cold: str, load: Load | WrkLoad, size: str) -> str:
    return (
        f"| `{name}` | {client} | {cold} | {load.requests_per_second:.1f} | "
        f"{1000 * load.percentile(50):.0f} ms | {1000 * load.percentile(99):.0f} ms | "
        f"{load.bytes_per_request / 1000:,.1f} KB | {size} | {load.errors} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--changes-per-second", type=float, default=1.0)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    with Portal("leaderboard_load") as portal:
        seeded = Seeded(args.submissions)
        portal.start_web(workers=3)
        first_page = "/leaderboard/"
        pages = {
            first_page: first_page,
            "/leaderboard/?all=1": "/leaderboard/?all=1",
            "/api/v1/leaderboard": f"/api/v1/leaderboard?version={seeded.version.label}",
        }
        print(f"{args.submissions} scored public submissions, gunicorn 3 workers, PostgreSQL, Redis cache")
        print(f"{args.users} concurrent clients, {args.seconds:.0f} s per load, 127.0.0.1, {BROWSER}")
        table = []
        sizes = {}
        anonymous: dict[str, Load | WrkLoad] = {}  # of each endpoint, its Python line (loaded last)
        loaders = clients(portal.url, users=args.users, seconds=args.seconds)
        for name, path in pages.items():
            cold, size = cold_request(portal.url + path)
            sizes[name] = f"{size / 1000:,.1f} KB"
            for client, load_with in loaders.items():
                anonymous[name] = load = load_with(path)
                print(load.line(f"{name} ({client})"))
                table.append(row(name, client, f"{1000 * cold:.0f} ms", load, sizes[name]))

        def visit(client: str, visitors: list[dict[str, str]], seconds: float) -> Load | WrkLoad:
            if client == "wrk":
                return wrk(
                    portal.url + first_page,
                    users=args.users,
                    seconds=seconds,
                    headers=BROWSER,
                    visitors=visitors,
                )
            return hammer(
                portal.url,
                [first_page],
                users=args.users,
                seconds=seconds,
                headers=BROWSER,
                visitors=visitors,
            )

        # Before churn adds any row.
        for name, shown in (
            (first_page, f"the first 100 of {args.submissions} rows"),
            ("/leaderboard/?all=1", f"all {args.submissions} rows"),
        ):
            times = sorted(cold_request(portal.url + pages[name])[0] for _ in range(COLD_RENDERS))
            print(
                f"cold render (empty cache) of {name} ({shown}): median "
                f"{1000 * statistics.median(times):.0f} ms, best {1000 * times[0]:.0f} ms, worst "
                f"{1000 * times[-1]:.0f} ms of {COLD_RENDERS}"
            )
        # After the cold requests above: this visit warms the page too, as the anonymous loads found it.
        signed_in = first_visits(portal.url + first_page, seeded.sessions(args.users))
        print(
            f"churn: a new public scored submission every {1 / args.changes_per_second:g} s, each dropping the "
            "cached ranking (the capacity target, 10,000 a day, is one every 9 s)"
        )
        # The lines compared are loaded in turns (`--turns` of each, `--seconds` in all per line): the Python
        # clients' rate drifts over a run, by a quarter between runs minutes apart (the machine's two cores
        # are shared by both sides), and in turns a drift weighs on every line alike. Each client's lines
        # are compared with its own anonymous line.
        changes: dict[str, int] = {}
        next_change_in: dict[str, float] = {}  # per line: its churn goes on where its last turn stopped

        def churned(
            line: str, client: str, visitors: list[dict[str, str]]
        ) -> Callable[[float], Load | WrkLoad]:
            def load(seconds: float) -> Load | WrkLoad:
                churn = Churn(seeded, per_second=args.changes_per_second, first_in=next_change_in.get(line))
                with churn:
                    answered = visit(client, visitors, seconds)
                changes[line] = changes.get(line, 0) + churn.changes
                next_change_in[line] = churn.next_in
                return answered

            return load

        def plain(client: str, visitors: list[dict[str, str]]) -> Callable[[float], Load | WrkLoad]:
            return lambda seconds: visit(client, visitors, seconds)

        signed = f"{len(signed_in)} signed-in users"
        lines: dict[str, Callable[[float], Load | WrkLoad]] = {}
        for client in loaders:
            lines[f"{client}, anonymous"] = plain(client, [])
            lines[f"{client}, {signed}"] = plain(client, signed_in)
            lines[f"{client}, anonymous, churn"] = churned(f"{client}, anonymous, churn", client, [])
            lines[f"{client}, {signed}, churn"] = churned(f"{client}, {signed}, churn", client, signed_in)
        settle(portal.url + first_page, BROWSER)
        others = in_turns(lines, seconds=args.seconds, turns=args.turns)
        for line, load in others.items():
            client = line.split(",", 1)[0]
            base = others[f"{client}, anonymous"]
            shown = f"{line}: {changes[line]} changes" if line in changes else line
            print(load.line(f"{first_page} ({shown})"))
            if load is not base:
                print(
                    f"    against the anonymous page loaded in turns with it ({client}): throughput "
                    f"{load.requests_per_second / base.requests_per_second:.3f}x, "
                    f"p99 {load.percentile(99) / base.percentile(99):.2f}x"
                )
            table.append(row(first_page, shown, "", load, sizes[first_page]))

        print()
        print(
            "| endpoint | client | empty cache | requests/s | p50 | p99 | sent per answer (wrk: with headers) "
            "| uncompressed | errors |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        print("\n".join(table))


if __name__ == "__main__":
    main()
