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
``agent.json`` says what the agent tried to reach.
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
import threading
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
    """What went through the gateway during one run."""

    connections: int = 0
    refused: list[str] = field(default_factory=list)
    bytes_up: int = 0
    bytes_down: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "connections": self.connections,
            "refused": list(self.refused),
            "bytes_to_endpoint": self.bytes_up,
            "bytes_from_endpoint": self.bytes_down,
        }


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
        self.stats = GatewayStats()
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
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            rest = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
            self._relay(conn, upstream, rest)
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
            self._relay(conn, upstream, head)

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

    def _relay(self, conn: socket.socket, upstream: socket.socket, first: bytes) -> None:
        upstream.settimeout(None)
        if first:
            upstream.sendall(first)
            with self._lock:
                self.stats.bytes_up += len(first)

        def pump(src: socket.socket, dst: socket.socket, up: bool) -> None:
            try:
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    dst.sendall(data)
                    with self._lock:
                        if up:
                            self.stats.bytes_up += len(data)
                        else:
                            self.stats.bytes_down += len(data)
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
