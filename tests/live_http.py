"""A local HTTP server for tests of the live backends and the LLM client (never the internet).

``ScriptedServer`` listens on 127.0.0.1 on a free port in a thread. Each route (a path)
answers with a function of the request, or with a list of canned answers served in turn
(the last one repeats). Every request is recorded so tests can check what was asked.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    """Answer a request of a hand-written stand-in server with ``payload`` as JSON."""
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def chat_completion(model: str, message: dict, finish: str, usage: tuple[int, int], cid: str = "x") -> dict:
    """An OpenAI-compatible chat completion body with ``usage`` = (prompt, completion) tokens."""
    return {"id": cid, "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Answer:
    status: int = 200
    body: Any = None                      # dict/list -> JSON, str/bytes -> as is
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> tuple[bytes, str]:
        if isinstance(self.body, (dict, list)):
            return json.dumps(self.body).encode(), "application/json"
        if isinstance(self.body, str):
            return self.body.encode(), "text/plain; charset=utf-8"
        return self.body or b"", "application/octet-stream"


Route = Callable[[Request], Answer] | list[Answer] | Answer


class ScriptedServer:
    def __init__(self, routes: dict[str, Route] | None = None):
        self.routes: dict[str, Route] = dict(routes or {})
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self):
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(self.command, parts.path,
                                  {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()},
                                  {k.lower(): v for k, v in self.headers.items()},
                                  self.rfile.read(length) if length else b"")
                answer = server._answer(request)
                payload, content_type = answer.encoded()
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.headers.get("Content-Type", content_type))
                for key, value in answer.headers.items():
                    if key != "Content-Type":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _handle

            def log_message(self, *args):  # keep test output clean
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _answer(self, request: Request) -> Answer:
        with self._lock:
            self.requests.append(request)
            route = self.routes.get(request.path)
            if route is None:
                return Answer(404, {"error": f"no route {request.path}"})
            if isinstance(route, Answer):
                return route
            if isinstance(route, list):
                return route.pop(0) if len(route) > 1 else route[0]
        return route(request)

    def hits(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
