"""Real use, bounded: 50 people browsing while 20 submissions are uploaded and scored by 2 workers.

    .venv/bin/python -m benchmarks.portal_load [--users 50] [--submissions 20] [--workers 2] [--seconds 30]

Needs PostgreSQL and Redis on this machine; makes and drops a scratch database. Browsing clients cycle
through the home page, the leaderboard, its JSON export and the metrics page while uploads go through the
API with a token. Prints throughput and latency of the browsing, the upload latency, how long scoring all
submissions took, and how many ended scored (the target: all of them). Loopback only.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import urllib.error
import urllib.request
import uuid

from benchmarks.loadkit import Portal, hammer

BROWSING = ["/", "/leaderboard/", "/api/v1/leaderboard", "/metrics/"]


def prepare() -> tuple[str, bytes]:
    """Load the demo benchmark; a confirmed account (create_user's are) and its API token; a file of the
    demo's gold, each question's own gold query as its prediction."""
    from evaluation.services import demo_benchmark_load
    from leaderboard.demo import demo_gold
    from termite_site.accounts.models import User
    from termite_site.accounts.services import api_token_create

    demo_benchmark_load(kind="sealed")  # the sealed rule, production's case
    user = User.objects.create_user("carico", "carico@example.org", "not-used-" + uuid.uuid4().hex)
    lines = [json.dumps({"question_id": qid, "sql": sql}) for qid, sql in demo_gold().items()]
    return api_token_create(user=user, name="load")[1], "\n".join(lines).encode()


def upload(url: str, token: str, predictions: bytes, n: int) -> tuple[int, float]:
    """One public submission through the API, with a whole model card (a public one needs it, see
    leaderboard.model_card.PUBLIC_REQUIRED); (its id, seconds). Anything but 201 stops the benchmark."""
    from tests.demo import PUBLIC_CARD

    boundary = uuid.uuid4().hex
    fields = {"model_name": f"Carico {n}", "public": "true", **PUBLIC_CARD}
    parts = [
        *(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in fields.items()
        ),
        f'--{boundary}\r\nContent-Disposition: form-data; name="predictions"; filename="p.jsonl"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode()
        + predictions
        + b"\r\n",
        f"--{boundary}--\r\n".encode(),
    ]
    request = urllib.request.Request(
        f"{url}/api/v1/submissions",
        data=b"".join(parts),
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": f"multipart/form-data; boundary={boundary}",
        },
    )
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, body = response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        status, body = refused.code, json.loads(refused.read() or b"{}")
    if status != 201:
        raise SystemExit(f"upload {n} answered {status}, not 201: {body}")
    return body["id"], time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    with Portal("portal_load") as portal:
        token, predictions = prepare()
        portal.start_web(workers=3)
        portal.start_workers(args.workers)
        uploads: list[tuple[int, float]] = []

        def submit_all() -> None:
            for n in range(args.submissions):
                uploads.append(upload(portal.url, token, predictions, n))
                time.sleep(args.seconds / (2 * args.submissions))  # spread over the first half

        started = time.monotonic()
        uploader = threading.Thread(target=submit_all)
        uploader.start()
        browsing = hammer(portal.url, BROWSING, users=args.users, seconds=args.seconds)
        uploader.join()

        from leaderboard.models import Submission

        deadline = time.monotonic() + 300
        while (
            time.monotonic() < deadline
            and Submission.objects.exclude(status__in=["scored", "failed"]).exists()
        ):
            time.sleep(0.5)
        finished = time.monotonic() - started
        states = dict.fromkeys(["queued", "running", "scored", "failed"], 0)
        for status in Submission.objects.values_list("status", flat=True):
            states[status] += 1
        waits = sorted(
            (scored - created).total_seconds()
            for created, scored in Submission.objects.filter(status="scored").values_list(
                "created_at", "scored_at"
            )
        )
        times = sorted(seconds for _id, seconds in uploads)
        print(
            f"{args.users} browsing clients for {args.seconds:.0f} s, {args.submissions} uploads, {args.workers} rq workers,"
        )
        print("gunicorn 3 workers, PostgreSQL, Redis; 127.0.0.1")
        print(browsing.line("browsing (home, leaderboard, ...)"))
        print(
            f"{'uploads (API, 23 predictions each)':<34} {len(times):>6} req  p50 {1000 * times[len(times) // 2]:.1f} ms  max {1000 * times[-1]:.1f} ms"
        )
        if waits:
            print(
                f"{'upload to scored':<34} {len(waits):>6} subs p50 {waits[len(waits) // 2]:.2f} s  max {waits[-1]:.2f} s"
            )
        print(f"states {finished:.1f} s after the first upload: {states}")
        if states["scored"] != args.submissions:
            raise SystemExit("not every submission ended scored")


if __name__ == "__main__":
    main()
