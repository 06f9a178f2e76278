"""Runs inside the agent's sandbox (``python -I -S -c <this file> CONFIG``): start the model
relay, then the agent, and exit with the agent's status.

The sandbox has no network but a loopback interface. When a model endpoint is configured, this
launcher listens on ``127.0.0.1:PORT`` and relays every connection, byte for byte, to a Unix
socket bound read-only into the sandbox; outside, the harness's gateway decides where (if
anywhere) a connection may go. With a disk quota (``disk``), it watches the workspace and ends
the run when it is full: its own exit ends it, since the runner then kills every process the run
left. Standard library only: it runs on the bare interpreter.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time


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


def _used(root: str) -> int:
    seen = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if st.st_ino not in seen:
                seen.add(st.st_ino)
                total += st.st_blocks * 512
    return total


def _full(disk: dict) -> bool:
    if disk["tmpfs"]:
        st = os.statvfs(".")
        return st.f_bavail * st.f_frsize < disk["slack"] or st.f_favail == 0
    return _used(".") >= disk["limit"]


def _watch(disk: dict) -> None:
    """End the run when the workspace is full (checked 4 times a second on a tmpfs, where it is
    one system call; else every second)."""
    pause = 0.25 if disk["tmpfs"] else 1.0
    while True:
        time.sleep(pause)
        try:
            full = _full(disk)
        except OSError:
            continue
        if full:
            mib = disk["limit"] // (1024 * 1024)
            sys.stderr.write(f"suitebench launcher: the workspace reached its {mib} MiB quota\n")
            sys.stderr.flush()
            os._exit(disk["exit"])


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
    if cfg.get("disk"):
        threading.Thread(target=_watch, args=(cfg["disk"],), daemon=True).start()
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
