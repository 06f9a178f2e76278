"""Containment: the agent sees nothing held out, writes nowhere but its workspace, reaches the
model endpoint and nothing else on the network, is stopped at its time limit with its partial
output collected, and leaves nothing running."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import shutil
import socket
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from suitebench.agents.contain import ContainmentError
from suitebench.agents.gateway import Endpoint, ModelGateway
from suitebench.agents.harness import AgentSpec, RunOptions, run_agent
from suitebench.agents.scoring import ScoreContext
from suitebench.agents.workspace import held_out_files
from suitebench.data import INSTANCES_DIR


class CountingServer:
    """An HTTP server on 127.0.0.1 (port 0) that counts the requests it gets."""

    def __init__(self, reply: bytes = b"secret") -> None:
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                outer.requests.append(f"{self.command} {self.path}")
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                self.send_response(200)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def servers() -> Iterator[tuple[CountingServer, CountingServer]]:
    model, secret = CountingServer(b"model says hi"), CountingServer(b"the secret")
    yield model, secret
    model.close()
    secret.close()


def instance(home: Path) -> Path:
    dest = home / "data" / "rpn-c"
    shutil.copytree(INSTANCES_DIR / "rpn-c", dest)
    return dest


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def script(home: Path, name: str, body: str) -> Path:
    path = home / "agents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_an_agent_probing_for_mutants_and_held_out_files_finds_nothing(
    home: Path, ctx: ScoreContext
) -> None:
    inst = instance(home)
    before = tree_digest(inst)
    outside = home / "outside.txt"
    probe = script(
        home,
        "probe.sh",
        f"""\
        exec > probe.txt 2>&1
        echo "== find"
        find / -path /proc -prune -o -name 'c0*.diff' -print 2>/dev/null | grep -F {inst} || true
        find /tmp -name '*.diff' 2>/dev/null
        echo "== read"
        cat {inst}/mutants/c01.diff || true
        cat {inst}/src/rpn.c || true
        cat {inst}/tests/test_numbers.py || true
        ls {inst} || true
        ls {home / ".suitebench"} || true
        echo "== write"
        touch {inst}/pwned && echo wrote-instance
        echo x > {outside} && echo wrote-outside
        echo "== done"
        """,
    )
    out = home / "runs" / "probe"
    record = run_agent(
        "suite", inst, AgentSpec(command=f"sh {probe}"), out, RunOptions(time_limit=60), ctx
    )
    seen = (out / "workspace" / "probe.txt").read_text()
    assert "== done" in seen  # the agent ran to its end
    assert "@@" not in seen and "int main" not in seen and "def test_" not in seen
    assert "c01.diff" not in seen.split("== read")[0]  # find turned up no mutant
    assert "wrote-instance" not in seen and "wrote-outside" not in seen
    assert not outside.exists()
    assert tree_digest(inst) == before  # the instance directory got nothing
    containment = record["containment"]
    assert containment["held_out_visible"] == []
    assert containment["held_out_files_probed"] >= 18  # the instance's files, mutants, store


def test_the_network_reaches_the_model_endpoint_and_nothing_else(
    home: Path, ctx: ScoreContext, servers: tuple[CountingServer, CountingServer]
) -> None:
    model, secret = servers
    inst = instance(home)
    agent = script(
        home,
        "net.py",
        f"""\
        import json, os, socket, urllib.request

        def try_(label, fn):
            try:
                return label, fn()
            except Exception as exc:
                return label, "failed: " + type(exc).__name__

        def raw(port, data):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(data)
            reply = s.recv(200).decode(errors="replace")
            s.close()
            return reply

        base = os.environ["SUITEBENCH_ENDPOINT"]
        relay = {model.port}
        CONNECT = b"CONNECT 127.0.0.1:{secret.port} HTTP/1.1\\r\\n\\r\\n"
        ABSOLUTE = b"GET http://127.0.0.1:{secret.port}/ HTTP/1.1\\r\\n\\r\\n"
        results = dict([
            try_("model", lambda: urllib.request.urlopen(base + "/x", timeout=5).read().decode()),
            try_("secret_direct", lambda: urllib.request.urlopen(
                "http://127.0.0.1:{secret.port}/", timeout=5).read().decode()),
            try_("secret_connect", lambda: raw(relay, CONNECT)),
            try_("secret_absolute", lambda: raw(relay, ABSOLUTE)),
        ])
        open("net.json", "w").write(json.dumps(results))
        """,
    )
    out = home / "runs" / "net"
    spec = AgentSpec(command=f"python3 {agent}", endpoint=f"http://127.0.0.1:{model.port}/v1")
    record = run_agent("suite", inst, spec, out, RunOptions(time_limit=60), ctx)
    got = json.loads((out / "workspace" / "net.json").read_text())
    assert got["model"] == "model says hi"
    assert got["secret_direct"].startswith("failed")
    assert "403" in got["secret_connect"]
    assert "403" in got["secret_absolute"]
    assert secret.requests == []  # the other server on 127.0.0.1 got nothing
    assert model.requests == ["GET /v1/x"]
    gateway = record["gateway"]
    assert gateway["connections"] == 3
    assert sorted(gateway["refused"]) == sorted(
        [f"127.0.0.1:{secret.port}", f"http://127.0.0.1:{secret.port}/"]
    )


def test_a_hanging_agent_is_stopped_at_the_limit_with_its_partial_output_collected(
    home: Path, ctx: ScoreContext
) -> None:
    inst = instance(home)
    hang = script(
        home,
        "hang.sh",
        """\
        cat > tests/test_partial.py <<'PY'
        import subprocess

        def test_addition():
            out = subprocess.run(["./executable"], input="2 2 +\\n", capture_output=True, text=True)
            assert out.stdout.strip() == "4"
        PY
        setsid sh -c 'while :; do date +%s%N >> ticker.txt; sleep 0.1; done' &
        echo started the ticker, now hanging
        sleep 600
        """,
    )
    out = home / "runs" / "hang"
    started = time.monotonic()
    record = run_agent(
        "suite", inst, AgentSpec(command=f"sh {hang}"), out, RunOptions(time_limit=3), ctx
    )
    assert time.monotonic() - started < 120  # stopped, then scored: not the agent's 600 s
    assert record["stopped_by_limit"] is True
    assert record["status"] == "timeout"
    assert 3 <= record["wall_time"] < 30
    assert "now hanging" in (out / "transcript.txt").read_text()
    assert (out / "tests" / "test_partial.py").is_file()
    assert record["score"]["valid"] == 1
    ticker = out / "workspace" / "ticker.txt"
    size = ticker.stat().st_size
    time.sleep(1.0)
    assert ticker.stat().st_size == size  # nothing it started is left running


def test_an_agent_that_exits_leaves_no_daemon_behind(home: Path, ctx: ScoreContext) -> None:
    inst = instance(home)
    daemon = script(
        home,
        "daemon.sh",
        """\
        setsid sh -c 'while :; do date +%s%N >> ticker.txt; sleep 0.1; done' > /dev/null 2>&1 &
        sleep 0.5
        """,
    )
    out = home / "runs" / "daemon"
    opts = RunOptions(time_limit=30, score=False)
    record = run_agent("suite", inst, AgentSpec(command=f"sh {daemon}"), out, opts, ctx)
    assert record["status"] == "ok"
    ticker = out / "workspace" / "ticker.txt"
    size = ticker.stat().st_size
    assert size > 0
    time.sleep(1.0)
    assert ticker.stat().st_size == size


def test_a_run_that_would_expose_held_out_files_is_refused(home: Path, ctx: ScoreContext) -> None:
    inst = instance(home)
    marker = home / "agents" / "ran"
    agent = script(home, "naive.sh", f"touch {marker}\n")
    out = home / "runs" / "refused"
    opts = RunOptions(time_limit=30, extra_binds=[inst / "mutants"])  # a careless --bind
    with pytest.raises(ContainmentError) as err:
        run_agent("suite", inst, AgentSpec(command=f"sh {agent}"), out, opts, ctx)
    assert "c01.diff" in str(err.value)
    assert not marker.exists()
    assert not (out / "agent.json").exists()


def test_gateway_tunnels_connect_only_to_the_endpoint(
    servers: tuple[CountingServer, CountingServer],
) -> None:
    model, secret = servers
    endpoint = Endpoint.parse(f"http://127.0.0.1:{model.port}/v1")
    with ModelGateway(endpoint) as gw:
        assert os.stat(gw.socket_path).st_mode & 0o666 == 0o666

        def ask(data: bytes) -> bytes:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(gw.socket_path))
            s.sendall(data)
            chunks = []
            while chunk := s.recv(4096):
                chunks.append(chunk)
            s.close()
            return b"".join(chunks)

        tunnel = ask(
            f"CONNECT 127.0.0.1:{model.port} HTTP/1.1\r\n\r\n".encode()
            + b"GET /through HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        assert tunnel.startswith(b"HTTP/1.1 200 Connection established")
        assert tunnel.endswith(b"model says hi")
        refused = ask(f"CONNECT 127.0.0.1:{secret.port} HTTP/1.1\r\n\r\n".encode())
        assert refused.startswith(b"HTTP/1.1 403")
        stats = gw.stats.to_dict()
    assert model.requests == ["GET /through"]
    assert secret.requests == []
    assert stats["refused"] == [f"127.0.0.1:{secret.port}"]
    assert stats["connections"] == 2


def test_https_endpoint_keeps_its_url_and_goes_through_the_connect_proxy() -> None:
    ep = Endpoint.parse("https://api.example.com/v1")
    assert ep.authority == "api.example.com:443"
    assert ep.inner_url() == "https://api.example.com/v1"
    loop = Endpoint.parse("http://localhost:8000/v1/")
    assert loop.inner_url() == "http://127.0.0.1:8000/v1"
    assert loop.inner_port == 8000
    # A privileged port cannot be bound by the agent's unprivileged uid inside the sandbox.
    low = Endpoint.parse("http://model-host/v1")
    assert low.authority == "model-host:80"
    assert low.inner_url() == "http://127.0.0.1:18080/v1"


def test_pools_and_tests_outside_the_problem_directory_are_held_out_too(
    home: Path, ctx: ScoreContext
) -> None:
    from suitebench.data import PROBLEMS_DIR

    prob = home / "data" / "maxsum"
    shutil.copytree(PROBLEMS_DIR / "maxsum", prob)
    shutil.move(prob / "submissions", home / "pool")  # the pool lives beside the problem
    toml = (prob / "problem.toml").read_text()
    (prob / "problem.toml").write_text(
        toml.replace('"submissions/accepted/*"', '"../../pool/accepted/*"').replace(
            '"submissions/rejected/*"', '"../../pool/rejected/*"'
        )
    )
    agent = script(home, "look.sh", f"cat {home / 'pool' / 'accepted' / 'overflow.c'} > got.txt\n")
    out = home / "runs" / "pool"
    opts = RunOptions(time_limit=30, score=False)
    record = run_agent("inputs", prob, AgentSpec(command=f"sh {agent}"), out, opts, ctx)
    assert str(home / "pool" / "accepted" / "overflow.c") in record["held_out"]
    assert (out / "workspace" / "got.txt").read_text() == ""


def test_an_https_endpoint_brings_the_ca_certificates_and_the_proxy(
    home: Path, ctx: ScoreContext
) -> None:
    inst = instance(home)
    agent = script(home, "env.sh", 'echo "$HTTPS_PROXY $OPENAI_BASE_URL" > env.txt\n')
    out = home / "runs" / "https"
    spec = AgentSpec(command=f"sh {agent}", endpoint="https://127.0.0.1:9443/v1")
    record = run_agent("suite", inst, spec, out, RunOptions(time_limit=30, score=False), ctx)
    if Path("/etc/ssl").is_dir():
        assert "/etc/ssl" in record["containment"]["ro_binds"]
    # The endpoint keeps its URL; the agent reaches it through the gateway's CONNECT proxy.
    got = (out / "workspace" / "env.txt").read_text().split()
    assert got == ["http://127.0.0.1:3128", "https://127.0.0.1:9443/v1"]
    assert record["gateway"]["connections"] == 0


def test_a_link_to_a_system_file_in_the_users_tree_is_not_held_out(
    home: Path, ctx: ScoreContext
) -> None:
    """Issue 44: a link to /etc/passwd anywhere in the working directory made ``agent run``
    refuse, naming /etc/passwd as held out. A link is held-out material only where it leads
    into held-out material."""
    inst = instance(home)
    (home / "notes").mkdir()
    (home / "notes" / "passwd").symlink_to("/etc/passwd")
    (home / "hostname").symlink_to("/etc/hostname")
    agent = script(home, "hello.sh", "echo hello > hello.txt\n")
    out = home / "runs" / "links"
    opts = RunOptions(time_limit=30, score=False)
    record = run_agent("suite", inst, AgentSpec(command=f"sh {agent}"), out, opts, ctx)
    assert record["status"] == "ok"
    assert record["containment"]["held_out_visible"] == []
    assert (out / "workspace" / "hello.txt").read_text() == "hello\n"


def test_held_out_files_follow_links_only_into_held_out_material(tmp_path: Path) -> None:
    inst = instance(tmp_path)
    user = tmp_path / "user"
    user.mkdir()
    (user / "mine.txt").write_text("my notes\n")
    (user / "passwd").symlink_to("/etc/passwd")
    (user / "ref.c").symlink_to(inst / "src" / "rpn.c")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "helpers.py").write_text("def helper(): ...\n")
    (shared / "outside.txt").write_text("not the user's\n")
    (user / "outside.txt").symlink_to(shared / "outside.txt")
    (inst / "tests" / "helpers.py").symlink_to(shared / "helpers.py")
    (inst / "tests" / "group").symlink_to("/etc/group")

    users = held_out_files([user, inst], links_out=False)
    assert user / "mine.txt" in users
    assert inst / "src" / "rpn.c" in users  # a link into the instance is the instance's file
    assert Path("/etc/passwd") not in users and Path("/etc/group") not in users
    assert shared / "outside.txt" not in users  # the user's tree holds only what is in it

    strict = held_out_files([inst])
    assert shared / "helpers.py" in strict  # the instance's tests link it: held out
    assert Path("/etc/group") not in strict  # a system file is no instance's material


def test_an_agent_keeps_nothing_in_the_kernel_for_a_later_agent(
    home: Path, ctx: ScoreContext
) -> None:
    """An agent that stores a key in the keyring, or leaves a System V segment, while one run
    is scored could hand held-out material to the next agent run (threat model, "State the
    kernel keeps"). The agent's process and everything it starts run under the sandbox's
    filter and in an IPC namespace of their own: the key is refused, and the next run finds no
    segment."""
    inst = instance(home)
    body = """\
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        key = libc.syscall(248, b"user", b"suitebench-agent-carry", b"x", 1, -4)
        err = ctypes.get_errno()
        seg = libc.shmget(0x5b1f, 0, 0)
        made = libc.shmget(0x5b1f, 64, 0o1000 | 0o666)
        open("kernel.txt", "w").write(f"{key} {err} {seg} {made}\\n")
        """
    carry = script(home, "carry.py", body)
    seen = []
    for n in range(2):
        out = home / "runs" / f"carry{n}"
        cmd = f"{os.path.realpath(sys.executable)} {carry}"
        run_agent("suite", inst, AgentSpec(command=cmd), out, RunOptions(time_limit=60), ctx)
        seen.append((out / "workspace" / "kernel.txt").read_text().split())
    for key, err, found, made in seen:
        assert (key, err) == ("-1", "1")  # add_key: EPERM
        assert found == "-1" and int(made) >= 0  # no segment from the run before; one made
