"""Runs inside the agent's sandbox (``python -I -S -c <this file> CONFIG``): start the model
relay, then the agent, and exit with the agent's status.

The sandbox has no network but a loopback interface. When a model endpoint is configured, this
launcher listens on ``127.0.0.1:PORT`` and relays every connection, byte for byte, to a Unix
socket bound read-only into the sandbox; outside, the harness's gateway decides where (if
anywhere) a connection may go. Standard library only: it runs on the bare interpreter.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _relay(conn: socket.socket, path: str) -> None:
    try:
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        up.connect(path)
    except OSError as exc:
        sys.stderr.write(f"suitebench launcher: model relay unavailable: {exc}\n")
        conn.close()
        return
    other = threading.Thread(target=_pump, args=(up, conn), daemon=True)
    other.start()
    _pump(conn, up)
    other.join()
    conn.close()
    up.close()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # relay, do not batch
        threading.Thread(target=_relay, args=(conn, path), daemon=True).start()


def main() -> None:
    cfg = json.loads(sys.argv[1])
    for d in cfg.get("make_dirs", []):
        os.makedirs(d, exist_ok=True)
    relay = cfg.get("relay")
    if relay:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            try:
                listener.bind(("127.0.0.1", int(relay["port"])))
            except OSError:
                # unshare's fresh network namespace has loopback down; root in it may raise it.
                try:
                    subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True)
                except OSError:
                    pass
                listener.bind(("127.0.0.1", int(relay["port"])))
        except OSError as exc:
            sys.stderr.write(f"suitebench launcher: cannot listen on 127.0.0.1: {exc}\n")
            sys.exit(125)
        listener.listen(64)
        threading.Thread(target=_serve, args=(listener, relay["socket"]), daemon=True).start()
    try:
        proc = subprocess.Popen(cfg["argv"], env=os.environ.copy())
    except OSError as exc:
        sys.stderr.write(f"suitebench launcher: cannot start the agent: {exc}\n")
        sys.exit(127)

    def forward(signum: int, _frame: object) -> None:
        try:
            proc.send_signal(signum)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    code = proc.wait()
    sys.exit(code if code >= 0 else 128 - code)


main()
