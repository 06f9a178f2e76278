"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and offline demos.

It answers ``POST /v1/chat/completions`` (and ``GET /v1/models``) from a script: a list of
:class:`Scripted` replies served in order, or a directory of reply files, or a function of the
request. A scripted reply can be a normal completion, an HTTP error (429 with ``Retry-After``,
500, 404 for an unknown model), a raw body that is not a completion (malformed JSON), or a
stall (the answer comes ``delay`` seconds late, after the client has given up). Every request
received is kept in :attr:`FakeChatServer.requests`, so a test can assert exactly what was
sent. The server binds port 0 on the loopback interface only and runs in a daemon thread::

    with FakeChatServer(["===INPUT===\\n1\\n5\\n"]) as server:
        client = ModelClient("m", base_url=server.base_url, api_key="k")

Reply files (``load_script(dir)``), in name order: ``*.txt`` is a completion whose text is the
file, ``*.json`` is a :class:`Scripted` as an object (``{"status": 429, "headers":
{"retry-after": "0"}}``, ``{"body": "not json"}``, ``{"delay": 3, "text": "late"}``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from suitebench.model.errors import FormatError

__all__ = ["FakeChatServer", "Scripted", "completion_body", "load_script"]


@dataclass(frozen=True)
class Scripted:
    """One scripted answer. ``text`` gives a chat completion; ``status`` other than 200 an
    OpenAI-style error object (``error_message``); ``body`` replaces the body verbatim;
    ``delay`` stalls before answering; ``usage`` overrides the token counts (by default the
    number of whitespace-separated words of the prompt and of the text)."""

    text: str | None = None
    status: int = 200
    body: str | bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    error_message: str = "scripted error"
    usage: Mapping[str, int] | None = None
    finish_reason: str = "stop"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], file: Path | str = "<script>") -> Scripted:
        allowed = set(cls.__dataclass_fields__)
        unknown = set(data) - allowed
        if unknown:
            raise FormatError(file, sorted(unknown)[0], f"one of {', '.join(sorted(allowed))}")
        try:
            return cls(**data)
        except TypeError as exc:
            raise FormatError(file, "(object)", f"a scripted reply: {exc}") from None


Reply = Scripted | str
Responder = Callable[[dict[str, Any]], Reply]


def load_script(directory: str | Path) -> list[Scripted]:
    """The reply files of ``directory`` in name order (``*.txt`` text, ``*.json`` objects)."""
    root = Path(directory)
    out: list[Scripted] = []
    for f in sorted(root.iterdir(), key=lambda p: p.name):
        if f.suffix == ".txt":
            out.append(Scripted(text=f.read_text(encoding="utf-8")))
        elif f.suffix == ".json":
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise FormatError(f, "(syntax)", f"valid JSON: {exc}") from None
            if not isinstance(data, dict):
                raise FormatError(f, "(root)", "a JSON object describing one reply")
            out.append(Scripted.from_dict(data, f))
    return out


def _words(messages: Iterable[Any]) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in messages if isinstance(m, dict))


def completion_body(request: Mapping[str, Any], reply: Scripted, n: int) -> dict[str, Any]:
    """The JSON of a chat completion answering ``request`` with ``reply.text``."""
    text = reply.text or ""
    usage = dict(reply.usage or {})
    usage.setdefault("prompt_tokens", _words(request.get("messages", [])))
    usage.setdefault("completion_tokens", len(text.split()))
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": str(request.get("model", "")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": usage,
    }


class FakeChatServer:
    """The scripted server. ``replies`` are served in order (a plain string is a completion
    with that text); when they run out, ``responder(request)`` answers if given, else a 500
    saying the script is exhausted. ``models``, if given, is the set of model names served
    (others get a 404 ``model_not_found``); ``api_key``, if given, is required as a bearer
    token (others get a 401)."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        responder: Responder | None = None,
        models: Iterable[str] | None = None,
        api_key: str | None = None,
    ) -> None:
        self._script = [Scripted(text=r) if isinstance(r, str) else r for r in replies]
        self._responder = responder
        self._models = set(models) if models is not None else None
        self._api_key = api_key
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.served = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def add(self, *replies: Reply) -> None:
        """Append replies to the script (served after the ones already queued)."""
        with self._lock:
            self._script += [Scripted(text=r) if isinstance(r, str) else r for r in replies]

    def _next(self, request: dict[str, Any]) -> Scripted:
        with self._lock:
            self.requests.append(request)
            n = self.served
            self.served += 1
            if n < len(self._script):
                return self._script[n]
        if self._responder is not None:
            r = self._responder(request)
            return Scripted(text=r) if isinstance(r, str) else r
        return Scripted(status=500, error_message=f"fake server: no scripted reply #{n + 1}")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, headers: Mapping[str, str] = {}) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a stall it timed out on)

            def _error(self, status: int, message: str, code: str | None = None) -> None:
                err = {"message": message, "type": "invalid_request_error", "code": code}
                self._send(status, json.dumps({"error": err}).encode())

            def _authorized(self) -> bool:
                if server._api_key is None:
                    return True
                if self.headers.get("Authorization") == f"Bearer {server._api_key}":
                    return True
                self._error(401, "Incorrect API key provided", "invalid_api_key")
                return False

            def do_GET(self) -> None:
                if not self._authorized():
                    return
                if self.path.rstrip("/").endswith("/models"):
                    names = sorted(server._models or ())
                    data = [{"id": m, "object": "model", "owned_by": "fake"} for m in names]
                    self._send(200, json.dumps({"object": "list", "data": data}).encode())
                else:
                    self._error(404, f"no route {self.path}")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self._authorized():
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._error(404, f"no route {self.path}")
                    return
                try:
                    request = json.loads(raw)
                except ValueError:
                    self._error(400, "the request body is not JSON")
                    return
                model = str(request.get("model", ""))
                if server._models is not None and model not in server._models:
                    server.requests.append(request)
                    self._error(404, f"The model `{model}` does not exist", "model_not_found")
                    return
                reply = server._next(request)
                if reply.delay > 0 and server._closing.wait(reply.delay):
                    return
                if reply.body is not None:
                    body = reply.body.encode() if isinstance(reply.body, str) else reply.body
                    self._send(reply.status, body, reply.headers)
                elif reply.status != 200:
                    err = {"message": reply.error_message, "type": "server_error", "code": None}
                    self._send(reply.status, json.dumps({"error": err}).encode(), reply.headers)
                else:
                    body = json.dumps(completion_body(request, reply, server.served)).encode()
                    self._send(200, body, reply.headers)

        return Handler

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeChatServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
