"""The agent's only way out: a gateway that lets connections reach the model endpoint alone.

The agent's sandbox has no network (a fresh network namespace with only loopback). Inside it,
the launcher (``_launcher.py``) listens on ``127.0.0.1:PORT`` and relays each connection to a
Unix socket bound read-only into the sandbox; that socket is served here, outside, by
:class:`ModelGateway`, which opens at most one kind of TCP connection: to the endpoint's host
and port.

* ``http://`` endpoints are relayed transparently: the agent is given a base URL on
  ``127.0.0.1`` with the endpoint's own port (a loopback endpoint keeps its exact URL) and every
  byte it sends goes to the endpoint. An absolute-form proxy request naming another host is
  refused.
* ``https://`` endpoints keep their URL; the agent gets ``HTTPS_PROXY=http://127.0.0.1:PORT``
  and the gateway accepts only ``CONNECT host:port`` for the endpoint's host and port (TLS stays
  end to end; the gateway never sees the key or the traffic). An agent that ignores
  ``HTTPS_PROXY`` has no network at all: the design fails closed.

Every connection is counted and every refusal is recorded with the target asked for, so a run's
``agent.json`` says what the agent tried to reach. Through an ``http://`` endpoint the gateway
also counts the model calls the endpoint answered (``model_calls``: POST requests whose
response came back), read off the HTTP/1.1 framing of the relayed bytes. That count does not
depend on the agent's transcript, which an agent stopped at its time limit may not have
written out; through ``https://`` the traffic is opaque and the count is ``None``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_HEAD_LIMIT = 16384
_HEAD_TIMEOUT = 30.0


class EndpointError(ValueError):
    """A model endpoint URL that cannot be used (names the URL and what was expected)."""


@dataclass(frozen=True)
class Endpoint:
    """A model endpoint: the base URL an OpenAI- or Anthropic-compatible client is given."""

    url: str
    scheme: str
    host: str
    port: int

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EndpointError(
                f"model endpoint {url!r}: expected http://HOST[:PORT]/... or https://HOST/..."
            )
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(url.rstrip("/"), parts.scheme, parts.hostname, port)

    @property
    def authority(self) -> str:
        return f"{self.host}:{self.port}"

    def inner_url(self) -> str:
        """The base URL the agent uses inside the sandbox."""
        if self.scheme == "https":
            return self.url
        parts = urlsplit(self.url)
        return urlunsplit(("http", f"127.0.0.1:{self.inner_port}", parts.path, parts.query, ""))

    @property
    def inner_port(self) -> int:
        """The loopback port the launcher listens on inside the sandbox: the endpoint's own for
        ``http`` (a loopback endpoint keeps its exact URL), except below 1024, which the agent's
        unprivileged uid cannot bind."""
        if self.scheme == "http" and self.port >= 1024:
            return self.port
        return 3128 if self.scheme == "https" else 18080


@dataclass
class GatewayStats:
    """What went through the gateway during one run (``model_calls``: ``None`` when the
    traffic was TLS the gateway cannot read)."""

    connections: int = 0
    refused: list[str] = field(default_factory=list)
    bytes_up: int = 0
    bytes_down: int = 0
    model_calls: int | None = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "connections": self.connections,
            "refused": list(self.refused),
            "bytes_to_endpoint": self.bytes_up,
            "bytes_from_endpoint": self.bytes_down,
            "model_calls": self.model_calls,
        }


def with_relayed_calls(
    usage: Mapping[str, Any], gateway: Mapping[str, Any] | None
) -> dict[str, Any]:
    """An agent run's usage with ``model_calls`` as the gateway counted them, where it could.

    The transcript's own count is what the agent wrote down before it stopped; an agent killed
    at its time limit has often been served calls it never recorded."""
    calls = (gateway or {}).get("model_calls")
    return {**usage} if calls is None else {**usage, "model_calls": calls}


class _HttpFramer:
    """One direction of an HTTP/1.1 connection, split into messages as bytes arrive.

    :meth:`feed` returns the start line of every message head completed by the bytes; bodies
    (``Content-Length`` or chunked) are skipped without being kept. A response without either
    runs to the end of the connection. Anything unparsable stops the framing (the relay goes
    on; only the count is lost)."""

    def __init__(self, *, responses: bool) -> None:
        self.responses = responses
        self.buf = b""
        self.state = "head"  # head | body | chunk-size | chunk-data | trailer | rest | lost
        self.left = 0

    def feed(self, data: bytes) -> list[str]:
        heads: list[str] = []
        if self.state in ("rest", "lost"):
            return heads
        self.buf += data
        while self.buf:
            if self.state == "head":
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    if len(self.buf) > _HEAD_LIMIT:
                        self.state, self.buf = "lost", b""
                    break
                head, self.buf = self.buf[:end].decode("latin-1"), self.buf[end + 4 :]
                start, *fields = head.lstrip("\r\n").split("\r\n")
                heads.append(start)
                self._body(start, fields)
            elif self.state in ("body", "chunk-data"):
                n = min(self.left, len(self.buf))
                self.buf, self.left = self.buf[n:], self.left - n
                if self.left == 0:
                    self.state = "head" if self.state == "body" else "chunk-size"
            elif self.state in ("chunk-size", "trailer"):
                end = self.buf.find(b"\r\n")
                if end < 0:
                    break
                line, self.buf = self.buf[:end], self.buf[end + 2 :]
                if self.state == "trailer":
                    self.state = "head" if not line else "trailer"
                    continue
                if not line.strip():
                    continue  # the CRLF after a chunk's data
                try:
                    size = int(line.split(b";", 1)[0], 16)
                except ValueError:
                    self.state, self.buf = "lost", b""
                    break
                self.state, self.left = ("trailer", 0) if size == 0 else ("chunk-data", size)
            else:
                self.buf = b""
        return heads

    def _body(self, start: str, fields: list[str]) -> None:
        headers = {}
        for f in fields:
            name, _, value = f.partition(":")
            headers[name.strip().lower()] = value.strip().lower()
        if "chunked" in headers.get("transfer-encoding", ""):
            self.state = "chunk-size"
            return
        if "content-length" in headers:
            try:
                self.left = int(headers["content-length"])
            except ValueError:
                self.state = "lost"
                return
            self.state = "body" if self.left else "head"
            return
        status = start.split()[1] if len(start.split()) > 1 else ""
        bodiless = status.startswith("1") or status in ("204", "304")
        self.state = "rest" if self.responses and not bodiless else "head"


class _CallCounter:
    """Pairs one connection's requests with their responses (HTTP/1.1 answers in order) and
    counts the POSTs -- the model calls -- that were answered."""

    def __init__(self) -> None:
        self.up = _HttpFramer(responses=False)
        self.down = _HttpFramer(responses=True)
        self.methods: deque[str] = deque()

    def sent(self, data: bytes) -> None:
        self.methods.extend(h.split(" ", 1)[0].upper() for h in self.up.feed(data))

    def answered(self, data: bytes) -> int:
        calls = 0
        for head in self.down.feed(data):
            status = head.split()[1] if len(head.split()) > 1 else ""
            if status.startswith("1") or not self.methods:
                continue  # 100 Continue: the real answer is still to come
            calls += self.methods.popleft() == "POST"
        return calls


def _split_authority(target: str, default_port: int) -> tuple[str, int] | None:
    host, sep, port = target.rpartition(":")
    if not sep:
        return target.strip("[]").lower(), default_port
    try:
        return host.strip("[]").lower(), int(port)
    except ValueError:
        return None


class ModelGateway:
    """Serve a Unix socket whose connections may reach ``endpoint`` and nothing else.

    Use as a context manager; :attr:`socket_dir` is what the sandbox binds read-only and
    :attr:`socket_path` what the launcher connects to.
    """

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.stats = GatewayStats(model_calls=0 if endpoint.scheme == "http" else None)
        self._lock = threading.Lock()
        self._dir = tempfile.TemporaryDirectory(prefix="suitebench-gateway-")
        self.socket_dir = Path(self._dir.name)
        os.chmod(self.socket_dir, 0o755)
        self.socket_path = self.socket_dir / "model.sock"
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.socket_path))
        # The agent may run as an unprivileged uid: connecting needs write permission.
        os.chmod(self.socket_path, 0o666)
        self._server.listen(64)
        self._closed = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def __enter__(self) -> ModelGateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        self._thread.join(timeout=5)
        self._dir.cleanup()

    # -- serving ---------------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self.stats.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _refuse(self, conn: socket.socket, target: str, status: str = "403 Forbidden") -> None:
        with self._lock:
            self.stats.refused.append(target)
        body = f"suitebench gateway: only {self.endpoint.authority} is reachable\n".encode()
        head = f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        with contextlib.suppress(OSError):
            conn.sendall(head.encode() + body)
        conn.close()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(_HEAD_TIMEOUT)
        head = b""
        try:
            while b"\r\n" not in head and len(head) < _HEAD_LIMIT:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                head += chunk
        except OSError:
            conn.close()
            return
        conn.settimeout(None)
        line = head.split(b"\r\n", 1)[0].decode("latin-1", errors="replace")
        words = line.split()
        ep = self.endpoint
        if len(words) >= 2 and words[0].upper() == "CONNECT":
            target = _split_authority(words[1], 443)
            if target != (ep.host.lower(), ep.port):
                self._refuse(conn, words[1])
                return
            upstream = self._connect(conn, words[1])
            if upstream is None:
                return
            with self._lock:
                self.stats.model_calls = None  # a tunnel's calls cannot be counted
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            rest = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
            self._relay(conn, upstream, rest, None)
            return
        if len(words) >= 2 and "://" in words[1]:  # an absolute-form (proxy) request
            parts = urlsplit(words[1])
            asked = (parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80))
            if asked != (ep.host.lower(), ep.port):
                self._refuse(conn, words[1])
                return
        if ep.scheme != "http":
            self._refuse(conn, line[:200] or "(empty request)", "400 Bad Request")
            return
        upstream = self._connect(conn, ep.authority)
        if upstream is not None:
            self._relay(conn, upstream, head, _CallCounter())

    def _connect(self, conn: socket.socket, label: str) -> socket.socket | None:
        try:
            up = socket.create_connection((self.endpoint.host, self.endpoint.port), timeout=30)
            up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # relay, do not batch
            return up
        except OSError as exc:
            body = f"suitebench gateway: cannot reach {label}: {exc}\n".encode()
            head = f"HTTP/1.1 502 Bad Gateway\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            with contextlib.suppress(OSError):
                conn.sendall(head + body)
            conn.close()
            return None

    def _relay(
        self,
        conn: socket.socket,
        upstream: socket.socket,
        first: bytes,
        counter: _CallCounter | None,
    ) -> None:
        upstream.settimeout(None)

        def note_sent(data: bytes) -> None:
            # Before the bytes go out: the answer must never be read before its request.
            with self._lock:
                self.stats.bytes_up += len(data)
                if counter is not None:
                    counter.sent(data)

        if first:
            note_sent(first)
            upstream.sendall(first)

        def pump(src: socket.socket, dst: socket.socket, up: bool) -> None:
            try:
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    if up:
                        note_sent(data)
                    dst.sendall(data)
                    if not up:
                        with self._lock:
                            self.stats.bytes_down += len(data)
                            if counter is not None and self.stats.model_calls is not None:
                                self.stats.model_calls += counter.answered(data)
            except OSError:
                pass
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

        other = threading.Thread(target=pump, args=(upstream, conn, False), daemon=True)
        other.start()
        pump(conn, upstream, True)
        other.join()
        conn.close()
        upstream.close()
