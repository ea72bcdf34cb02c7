"""A small OpenAI-compatible chat server on 127.0.0.1, for the protocol runner's tests.

`/v1/chat/completions` answers each request with what the test's `respond` function returns for it
(deterministic: a function of the request and of how many times that conversation was asked before). The
stub records every request, how often each conversation was asked, and the most requests it had in flight
at once. It listens on loopback only: no test sends a packet anywhere else.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering: a slow model


def answer(content: str, *, total_tokens: int | None = 10, delay: float = 0.0) -> Reply:
    """A well-formed chat completion saying `content`; `total_tokens` None leaves `usage` out."""
    data: dict = {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
    }
    if total_tokens is not None:
        data["usage"] = {"prompt_tokens": 0, "completion_tokens": total_tokens, "total_tokens": total_tokens}
    return Reply(body=json.dumps(data).encode(), delay=delay)


def failure(status: int, **headers: str) -> Reply:
    return Reply(
        status=status, body=json.dumps({"error": {"message": "stub failure"}}).encode(), headers=headers
    )


MALFORMED = Reply(body=b"{not json")
NO_CHOICES = Reply(body=json.dumps({"choices": []}).encode())


@dataclass(frozen=True)
class Request:
    payload: dict
    headers: dict[str, str]
    asked_before: int  # how many times this same conversation was asked earlier

    @property
    def messages(self) -> list[dict]:
        return self.payload["messages"]

    @property
    def last(self) -> str:
        return self.messages[-1]["content"]

    @property
    def is_first_turn(self) -> bool:
        return (
            len(self.messages) == 1
            and self.last.startswith("Considera il seguente database:")
            and "Traduci" not in self.last
        )


Respond = Callable[[Request], Reply]


class OpenAIStub:
    def __init__(self, respond: Respond) -> None:
        self.respond = respond
        self.requests: list[Request] = []
        self.asked: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with stub._lock:
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                try:
                    reply = stub._reply(self.path, body, dict(self.headers))
                    time.sleep(reply.delay)
                finally:
                    # Before the answer is sent: once it is, the client may send its next request.
                    with stub._lock:
                        stub.in_flight -= 1
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _reply(self, path: str, body: bytes, headers: dict[str, str]) -> Reply:
        if path != "/v1/chat/completions":
            return failure(404)
        payload = json.loads(body)
        key = json.dumps(payload["messages"], sort_keys=True)
        with self._lock:
            request = Request(payload=payload, headers=headers, asked_before=self.asked[key])
            self.asked[key] += 1
            self.requests.append(request)
        return self.respond(request)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1/chat/completions"

    def questions_asked(self) -> Counter[str]:
        """How many times each question (the last line of its turn) was asked."""
        return Counter(r.last.rsplit("\n", 1)[-1] for r in self.requests if not r.is_first_turn)

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
