"""What containment costs an agent, side by side in one run.

1. Start-up: a trivial agent (``true``) started bare with ``subprocess.run`` vs through
   ``run_contained`` (the held-out probe, the sandbox, the launcher) with and without the model
   gateway.
2. Model calls: N small HTTP POSTs to a local server made directly vs from inside the sandbox
   through the launcher's relay, the Unix socket and the gateway (what every model call of a
   contained agent goes through). A real model answers in hundreds of milliseconds or more;
   this measures what the relay adds per call.

Usage: python bench/agent_overhead.py [--calls 200] [--starts 5]
"""

from __future__ import annotations

import argparse
import http.server
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

from suitebench.agents.contain import AgentLimits, run_contained
from suitebench.agents.gateway import Endpoint
from suitebench.agents.presets import custom_command

CALLER = textwrap.dedent(
    """\
    import http.client, sys, time
    host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    conn = http.client.HTTPConnection(host, port, timeout=30)
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
    t = time.perf_counter()
    for _ in range(n):
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        conn.getresponse().read()
    print(time.perf_counter() - t)
    """
)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 65536  # headers and body leave in one write (no Nagle / delayed-ACK stall)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"choices": [{"message": {"content": "ok"}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--starts", type=int, default=5)
    args = ap.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    endpoint = Endpoint.parse(f"http://127.0.0.1:{port}/v1")
    base = Path(tempfile.mkdtemp(prefix="suitebench-bench-"))
    caller = base / "caller.py"
    caller.write_text(CALLER)
    caller.chmod(0o644)
    base.chmod(0o755)
    limits = AgentLimits(time_limit=120)

    def workspace(i: int) -> Path:
        ws = base / f"ws{i}"
        ws.mkdir()
        return ws

    t = time.perf_counter()
    for _ in range(args.starts):
        subprocess.run(["/bin/sh", "-c", "true"], check=True)
    bare = (time.perf_counter() - t) / args.starts
    t = time.perf_counter()
    for i in range(args.starts):
        run_contained(custom_command("true"), workspace(i), limits=limits)
    contained = (time.perf_counter() - t) / args.starts
    t = time.perf_counter()
    for i in range(args.starts):
        run_contained(custom_command("true"), workspace(100 + i), limits=limits, endpoint=endpoint)
    gated = (time.perf_counter() - t) / args.starts
    print(f"start-up, mean of {args.starts}:")
    print(f"  bare subprocess              {1000 * bare:8.1f} ms")
    print(f"  contained (probe + sandbox)  {1000 * contained:8.1f} ms  ({contained / bare:.0f}x)")
    print(f"  contained + model gateway    {1000 * gated:8.1f} ms  ({gated / bare:.0f}x)")

    direct = subprocess.run(
        [sys.executable, str(caller), "127.0.0.1", str(port), str(args.calls)],
        capture_output=True,
        text=True,
        check=True,
    )
    direct_s = float(direct.stdout)
    cmd = custom_command(f"python3 {caller} 127.0.0.1 {endpoint.inner_port} {args.calls}")
    relayed = run_contained(cmd, workspace(999), limits=limits, endpoint=endpoint)
    relay_s = float(relayed.outcome.stdout.decode())
    per_direct = 1000 * direct_s / args.calls
    per_relay = 1000 * relay_s / args.calls
    print(f"{args.calls} model calls on one keep-alive connection:")
    print(f"  direct                       {per_direct:8.3f} ms per call")
    print(
        f"  through relay + gateway      {per_relay:8.3f} ms per call  "
        f"({per_relay / per_direct:.1f}x, +{per_relay - per_direct:.3f} ms)"
    )
    server.shutdown()
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("agent_overhead", main))
