"""Containment: real hostile programs through every sandbox backend available here.

Each test runs for each backend (bwrap, unshare, plain) that works on this machine and is
skipped, with the reason, for one that does not. Hostile programs are small C programs compiled
once per session, or shell. No test sends traffic anywhere but a server it starts itself on
127.0.0.1, and none asserts speed: time bounds are generous ceilings against hangs.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from suitebench.run import layout, protocol, sandbox
from suitebench.run.cgroups import usable_parent
from suitebench.run.outcome import Backend, Limits, Status

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

SOURCES: dict[str, str] = {
    # Connects to 127.0.0.1:argv[1]; prints the outcome (errno on failure), then the
    # interfaces it can see.
    "netprobe": r"""
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(atoi(argv[1]));
    a.sin_addr.s_addr = htonl(0x7f000001);
    if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) puts("connected");
    else printf("failed %d %s\n", errno, strerror(errno));
    FILE *f = fopen("/proc/net/dev", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        if (++n > 2) {
            *strchr(line, ':') = 0;
            printf("if %s\n", line + strspn(line, " "));
        }
    return 0;
}
""",
    # Tries to fork argv[1] times; children sleep. Prints how many forks succeeded.
    "forkcount": r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int want = atoi(argv[1]), ok = 0;
    for (int i = 0; i < want; i++) {
        pid_t p = fork();
        if (p == 0) { sleep(60); _exit(0); }
        if (p > 0) ok++;
    }
    printf("%d\n", ok);
    return 0;
}
""",
    # The classic: every process forks forever.
    "forkbomb": r"""
#include <unistd.h>
int main(void) { for (;;) fork(); }
""",
    # Touches memory 1 MiB at a time, forever.
    "membomb": r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    for (size_t mb = 0;; mb++) {
        char *p = malloc(1 << 20);
        if (!p) { fprintf(stderr, "malloc failed after %zu MiB\n", mb); return 3; }
        memset(p, 1, 1 << 20);
    }
}
""",
    # Prints to the stream named in argv[1] forever.
    "printforever": r"""
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    FILE *f = strcmp(argv[1], "stderr") == 0 ? stderr : stdout;
    char buf[4096];
    memset(buf, 'y', sizeof buf);
    for (;;) fwrite(buf, 1, sizeof buf, f);
}
""",
    "spin": r"""
int main(void) { volatile unsigned long x = 0; for (;;) x++; }
""",
    # Double fork + setsid: the grandchild becomes a daemon that execs sleep under a marker name.
    "daemonize": r"""
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            execl("/bin/sleep", argv[1], "60", (char *)0);
            _exit(1);
        }
        _exit(0);
    }
    return 0;
}
""",
    # Reads n, then n integers; prints the maximum subarray sum. Bug: an int accumulator
    # overflows, and n == 0 reads past the end.
    "maxsub": r"""
#include <stdio.h>
int main(void) {
    int n;
    if (scanf("%d", &n) != 1) return 2;
    static int a[1000];
    for (int i = 0; i < n; i++) scanf("%d", &a[i]);
    int best = a[0], cur = 0;
    for (int i = 0; i < n; i++) {
        cur = cur + a[i] > a[i] ? cur + a[i] : a[i];
        if (cur > best) best = cur;
    }
    if (n > 500) { int *p = 0; *p = 1; }
    printf("%d\n", best);
    return 0;
}
""",
    # Recursion deep enough to need far more than the default 8 MiB stack.
    "deeprec": r"""
#include <stdio.h>
long depth(long n) {
    volatile char pad[128];
    pad[0] = (char)n;
    return n == 0 ? pad[0] : 1 + depth(n - 1);
}
int main(void) { printf("%ld\n", depth(1000000)); return 0; }
""",
    # Writes argv[1] bytes to the file argv[2].
    "bigfile": r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    FILE *f = fopen(argv[2], "w");
    if (!f) return 4;
    for (long i = 0; i < n; i++) fputc('x', f);
    return fclose(f) == 0 ? 0 : 5;
}
""",
    "nullderef": r"""
int main(void) { volatile int *p = 0; return *p; }
""",
}


@pytest.fixture(scope="session")
def bins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("hostile")
    for name, src in SOURCES.items():
        (d / f"{name}.c").write_text(src)
        subprocess.run(["gcc", "-O1", "-o", str(d / name), str(d / f"{name}.c")], check=True)
    return d


def _run(
    bins: Path, work: Path, backend: Backend, argv: list[str], **kw: object
) -> sandbox.Outcome:
    return sandbox.run(argv, cwd=work, backend=backend, ro_binds=[bins], **kw)  # type: ignore[arg-type]


def _processes_named(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


@pytest.fixture
def tcp_server() -> Iterator[tuple[int, list[object]]]:
    """A server on the host's 127.0.0.1 that records every connection it accepts."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, addr = srv.accept()
            except OSError:
                continue
            accepted.append(addr)
            conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], accepted
    stop.set()
    t.join()
    srv.close()


# -- network ------------------------------------------------------------------------------------


def test_no_network_reach_and_only_loopback(
    bins: Path, work: Path, backend: Backend, tcp_server: tuple[int, list[object]]
) -> None:
    """The sandboxed program's connect to a server on the host's 127.0.0.1 fails on its own
    side (its loopback is not the host's: refused or unreachable, at once), while the same
    program run outside the sandbox reaches that server, which then has seen exactly one
    connection. connect() returns only once the attempt is decided, so a slow attempt cannot
    pass for a blocked one; the control shows the server would have seen it."""
    if not sandbox.isolates_network(backend):
        pytest.skip("plain does not isolate the network (by design; it warns)")
    port, accepted = tcp_server
    out = _run(bins, work, backend, [str(bins / "netprobe"), str(port)])
    assert out.status is Status.OK, out
    lines = out.stdout_text().splitlines()
    assert lines[0].startswith("failed "), lines
    code = lines[0].split()[1]
    assert errno.errorcode[int(code)] in ("ECONNREFUSED", "ENETUNREACH"), lines
    assert [ln for ln in lines if ln.startswith("if ")] == ["if lo"]
    assert out.backend == backend
    control = subprocess.run(
        [str(bins / "netprobe"), str(port)], capture_output=True, text=True, timeout=30
    )
    assert control.stdout.splitlines()[0] == "connected", control
    deadline = time.monotonic() + 10
    while not accepted and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(accepted) == 1  # the control's connection, and nothing from the sandbox


def test_network_true_keeps_the_network(
    bins: Path, work: Path, backend: Backend, tcp_server: tuple[int, list[object]]
) -> None:
    port, accepted = tcp_server
    out = _run(
        bins, work, backend, [str(bins / "netprobe"), str(port)], limits=Limits(network=True)
    )
    assert out.stdout_text().splitlines()[0] == "connected", out
    deadline = time.monotonic() + 5
    while not accepted and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(accepted) == 1


def test_require_isolation_refuses_plain(work: Path) -> None:
    marker = work / "ran"
    out = sandbox.run(
        ["sh", "-c", f"touch {marker}"], cwd=work, backend=Backend.PLAIN, require_isolation=True
    )
    assert out.status is Status.SANDBOX_ERROR
    assert "require_isolation" in out.message
    assert not marker.exists()


def test_require_isolation_allows_isolating_backend(work: Path, backend: Backend) -> None:
    if not sandbox.isolates_network(backend):
        pytest.skip("plain is refused, tested above")
    out = sandbox.run(["sh", "-c", "echo ok"], cwd=work, backend=backend, require_isolation=True)
    assert out.status is Status.OK and out.stdout == b"ok\n"


# -- files --------------------------------------------------------------------------------------


def test_bwrap_writes_only_in_work_dir(work: Path, tmp_path: Path) -> None:
    if sandbox.available_backends()[Backend.BWRAP] is not None:
        pytest.skip(f"bwrap: {sandbox.available_backends()[Backend.BWRAP]}")
    outside = tmp_path / "outside.txt"
    host_tmp = Path("/tmp") / f"suitebench-test-{uuid.uuid4().hex}"
    host_tmp.write_text("host secret")
    try:
        script = (
            f"echo inside > inside.txt; echo x > {outside} && echo wrote-outside; "
            "echo x > /etc/suitebench-probe && echo wrote-etc; "
            f"cat {host_tmp} 2>/dev/null && echo saw-host-tmp; echo done"
        )
        out = sandbox.run(["sh", "-c", script], cwd=work, backend=Backend.BWRAP)
    finally:
        host_tmp.unlink()
    assert out.status is Status.OK, out
    assert out.stdout == b"done\n"
    assert (work / "inside.txt").read_text() == "inside\n"
    assert not outside.exists()
    assert not Path("/etc/suitebench-probe").exists()


def test_bwrap_program_is_unprivileged(work: Path) -> None:
    if sandbox.available_backends()[Backend.BWRAP] is not None:
        pytest.skip(f"bwrap: {sandbox.available_backends()[Backend.BWRAP]}")
    if os.geteuid() != 0:
        pytest.skip("the uid drop applies when the coordinator runs as root")
    out = sandbox.run(["id", "-u"], cwd=work, backend=Backend.BWRAP)
    assert out.stdout == b"65534\n"


# -- processes ----------------------------------------------------------------------------------


def _needs_process_limit(backend: Backend) -> None:
    if usable_parent("pids") is None and (os.geteuid() == 0 and backend is not Backend.BWRAP):
        pytest.skip("no pids cgroup and RLIMIT_NPROC does not apply to root")


def test_process_limit_bounds_forks(bins: Path, work: Path, backend: Backend) -> None:
    _needs_process_limit(backend)
    limits = Limits(processes=8, wall_time=20)
    out = _run(bins, work, backend, [str(bins / "forkcount"), "100"], limits=limits)
    assert out.status is Status.OK, out
    assert 0 < int(out.stdout) <= 8


def test_fork_bomb_is_contained(bins: Path, work: Path, backend: Backend) -> None:
    _needs_process_limit(backend)
    marker = f"sbx-bomb-{uuid.uuid4().hex[:12]}"
    prog = work / marker
    shutil.copy(bins / "forkbomb", prog)
    t0 = time.monotonic()
    out = _run(bins, work, backend, [str(prog)], limits=Limits(wall_time=1.5, processes=32))
    elapsed = time.monotonic() - t0
    assert out.status is Status.TIMEOUT, out
    assert elapsed < 60
    assert _processes_named(marker) == []


def test_daemon_is_gone_after_run(bins: Path, work: Path, backend: Backend) -> None:
    marker = f"sbx-daemon-{uuid.uuid4().hex[:12]}"
    out = _run(bins, work, backend, [str(bins / "daemonize"), marker])
    assert out.status is Status.OK, out
    assert _processes_named(marker) == []


# -- memory -------------------------------------------------------------------------------------


def test_memory_bomb(bins: Path, work: Path, backend: Backend) -> None:
    limits = Limits(memory_mb=64, wall_time=20)
    out = _run(bins, work, backend, [str(bins / "membomb")], limits=limits)
    if usable_parent("memory") is not None:
        assert out.status is Status.MEMORY, out
        assert out.peak_memory_kb is None or out.peak_memory_kb <= 80 * 1024
    else:
        # RLIMIT_AS only: honest, the program's own failure is what is reported.
        assert out.status is Status.RUNTIME_ERROR and "RLIMIT_AS" in out.message, out


def test_cpu_time_limit_is_not_a_memory_kill(bins: Path, work: Path, backend: Backend) -> None:
    """The hard CPU limit ends in SIGKILL (exit 137 in a shell), which is *not* memory."""
    out = _run(bins, work, backend, [str(bins / "spin")], limits=Limits(cpu_time=1, wall_time=30))
    assert out.status is Status.TIMEOUT and out.timeout_kind == "cpu", out
    assert out.signal == signal.SIGXCPU and out.cpu_time >= 0.5
    # A program that ignores SIGXCPU meets the hard limit's SIGKILL: still a CPU timeout.
    stubborn = sandbox.run(
        ["sh", "-c", "trap '' XCPU; while :; do :; done"],
        cwd=work,
        backend=backend,
        limits=Limits(cpu_time=1, wall_time=30, memory_mb=64),
    )
    assert stubborn.status is Status.TIMEOUT and stubborn.timeout_kind == "cpu", stubborn
    assert stubborn.signal == signal.SIGKILL


def test_peak_memory_reported(bins: Path, work: Path, backend: Backend) -> None:
    script = "x = bytearray(48 * 1024 * 1024); x[::4096] = b'1' * len(x[::4096])"
    out = _run(bins, work, backend, [os.path.realpath(sys.executable), "-I", "-S", "-c", script])
    assert out.status is Status.OK, out
    assert out.peak_memory_kb is not None and 40 * 1024 <= out.peak_memory_kb <= 200 * 1024


# -- time ---------------------------------------------------------------------------------------


def test_sleep_hits_wall_limit(work: Path, backend: Backend) -> None:
    t0 = time.monotonic()
    out = sandbox.run(["sleep", "30"], cwd=work, backend=backend, limits=Limits(wall_time=1))
    assert out.status is Status.TIMEOUT and out.timeout_kind == "wall", out
    assert 0.9 <= out.wall_time < 10
    assert time.monotonic() - t0 < 25


def test_extra_time_extends_the_limit(work: Path, backend: Backend) -> None:
    # 0.5 s alone would stop a 1 s sleep; the extra time's 10 s leave room for a
    # sandbox that takes seconds to start on a loaded machine (2.5 s in all was once too few)
    limits = Limits(wall_time=0.5, extra_time=10.0)
    out = sandbox.run(["sleep", "1"], cwd=work, backend=backend, limits=limits)
    assert out.status is Status.OK, out


# -- output -------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_print_forever_hits_output_limit(
    bins: Path, work: Path, backend: Backend, stream: str
) -> None:
    cap = 256 * 1024
    out = _run(
        bins,
        work,
        backend,
        [str(bins / "printforever"), stream],
        limits=Limits(output_bytes=cap, wall_time=30),
    )
    assert out.status is Status.OUTPUT_LIMIT, out
    data = out.stdout if stream == "stdout" else out.stderr
    assert data == b"y" * cap
    assert getattr(out, f"{stream}_truncated") is True
    other = "stderr" if stream == "stdout" else "stdout"
    assert getattr(out, f"{other}_truncated") is False


def test_output_at_cap_is_not_truncated(work: Path, backend: Backend) -> None:
    out = sandbox.run(
        ["head", "-c", "1000", "/dev/zero"],
        cwd=work,
        backend=backend,
        limits=Limits(output_bytes=1000),
    )
    assert out.status is Status.OK and out.stdout == b"\0" * 1000 and not out.stdout_truncated


def test_file_size_limit_is_output_limit(bins: Path, work: Path, backend: Backend) -> None:
    limits = Limits(file_size_bytes=100_000)
    out = _run(bins, work, backend, [str(bins / "bigfile"), "500000", "f.txt"], limits=limits)
    assert out.status is Status.OUTPUT_LIMIT and out.signal == signal.SIGXFSZ, out
    ok = _run(bins, work, backend, [str(bins / "bigfile"), "50000", "g.txt"], limits=limits)
    assert ok.status is Status.OK and (work / "g.txt").stat().st_size == 50000


def test_non_utf8_bytes_come_back_exact(work: Path, backend: Backend) -> None:
    raw = bytes(range(256)) * 4
    out = sandbox.run(["cat"], cwd=work, backend=backend, stdin=raw)
    assert out.status is Status.OK
    assert out.stdout == raw
    err = sandbox.run(["sh", "-c", "printf '\\377\\376\\000\\200' >&2"], cwd=work, backend=backend)
    assert err.stderr == b"\xff\xfe\x00\x80"


def test_large_stdin_and_stdout_no_deadlock(work: Path, backend: Backend) -> None:
    data = os.urandom(4 * 1024 * 1024)
    out = sandbox.run(["cat"], cwd=work, backend=backend, stdin=data, limits=Limits(wall_time=30))
    assert out.status is Status.OK, out
    assert out.stdout == data


def test_program_that_ignores_stdin(work: Path, backend: Backend) -> None:
    out = sandbox.run(["true"], cwd=work, backend=backend, stdin=b"x" * (1 << 20))
    assert out.status is Status.OK


# -- exit codes and signals ---------------------------------------------------------------------


def test_exit_codes_and_signals(bins: Path, work: Path, backend: Backend) -> None:
    ok = sandbox.run(["sh", "-c", "exit 0"], cwd=work, backend=backend)
    assert (ok.status, ok.exit_code, ok.signal) == (Status.OK, 0, None)
    re = sandbox.run(["sh", "-c", "exit 42"], cwd=work, backend=backend)
    assert (re.status, re.exit_code, re.signal) == (Status.RUNTIME_ERROR, 42, None)
    seg = _run(bins, work, backend, [str(bins / "nullderef")])
    assert (seg.status, seg.exit_code, seg.signal) == (Status.SIGNALED, None, signal.SIGSEGV)
    term = sandbox.run(["sh", "-c", "kill -TERM $$"], cwd=work, backend=backend)
    assert (term.status, term.signal) == (Status.SIGNALED, signal.SIGTERM)
    # SIGKILL with hardly any CPU used is a plain signal, not a CPU timeout or a memory kill.
    kill = sandbox.run(["sh", "-c", "kill -KILL $$"], cwd=work, backend=backend)
    assert (kill.status, kill.signal) == (Status.SIGNALED, signal.SIGKILL)


def test_stack_is_unlimited_by_default(bins: Path, work: Path, backend: Backend) -> None:
    deep = _run(bins, work, backend, [str(bins / "deeprec")], limits=Limits(wall_time=20))
    assert deep.status is Status.OK and deep.stdout == b"1000000\n", deep
    small = _run(
        bins,
        work,
        backend,
        [str(bins / "deeprec")],
        limits=Limits(wall_time=20, stack_unlimited=False),
    )
    if small.status is Status.OK:
        pytest.skip("the inherited stack limit is already large enough here")
    assert small.status is Status.SIGNALED and small.signal == signal.SIGSEGV, small


def test_missing_program_is_sandbox_error(work: Path, backend: Backend) -> None:
    out = sandbox.run(["./no-such-program"], cwd=work, backend=backend)
    assert out.status is Status.SANDBOX_ERROR
    assert "no-such-program" in out.message


def test_outcome_records_backend_and_limits(work: Path, backend: Backend) -> None:
    limits = Limits(wall_time=3, memory_mb=128)
    out = sandbox.run(["true"], cwd=work, backend=backend, limits=limits)
    assert out.backend == backend and out.limits == limits
    again = sandbox.Outcome.from_dict(out.to_dict())
    assert again == out


def test_default_env_hides_callers_secrets(work: Path, backend: Backend) -> None:
    os.environ["SUITEBENCH_TEST_SECRET"] = "hunter2"
    try:
        out = sandbox.run(["env"], cwd=work, backend=backend)
        explicit = sandbox.run(["env"], cwd=work, backend=backend, env={"ONLY": "this"})
    finally:
        del os.environ["SUITEBENCH_TEST_SECRET"]
    assert b"hunter2" not in out.stdout and b"PATH=" in out.stdout
    assert explicit.stdout.decode().split() == ["ONLY=this"]


# -- batches ------------------------------------------------------------------------------------


def _comparable(o: sandbox.Outcome) -> tuple[object, ...]:
    return (o.status, o.exit_code, o.signal, o.stdout, o.stderr, o.timeout_kind, o.backend)


def test_run_batch_equals_run(bins: Path, work: Path, backend: Backend) -> None:
    big = "600 " + " ".join(["1"] * 600)
    stdins = [
        b"5\n1 -2 3 4 -1\n",
        b"3\n-5 -1 -7\n",
        b"2\n2000000000 2000000000\n",  # int overflow: the bug
        big.encode(),  # crashes (n > 500)
        b"",  # no input: runtime error
        b"1\n7\n",
    ]
    limits = Limits(wall_time=5, memory_mb=64)
    argv = [str(bins / "maxsub")]
    batch = sandbox.run_batch(
        argv, stdins, cwd=work, backend=backend, limits=limits, ro_binds=[bins]
    )
    single = [
        sandbox.run(argv, cwd=work, stdin=s, backend=backend, limits=limits, ro_binds=[bins])
        for s in stdins
    ]
    assert [_comparable(o) for o in batch] == [_comparable(o) for o in single]
    assert [o.status for o in batch] == [
        Status.OK,
        Status.OK,
        Status.OK,
        Status.SIGNALED,
        Status.RUNTIME_ERROR,
        Status.OK,
    ]
    assert batch[0].stdout == b"7\n" and batch[1].stdout == b"-1\n"
    assert batch[2].stdout != b"4000000000\n"  # the int overflow gives a wrong answer


def test_run_batch_isolates_runs(bins: Path, work: Path, backend: Backend) -> None:
    """A timeout, a daemon and an output flood in one run do not leak into the next."""
    marker = f"sbx-batch-{uuid.uuid4().hex[:12]}"
    script = (
        'read what; case "$what" in '
        "spin) while :; do :; done ;; "
        f"daemon) {bins / 'daemonize'} {marker}; echo daemon ;; "
        "flood) yes ;; "
        '*) echo "got $what" ;; esac'
    )
    done: list[tuple[int, int]] = []
    outs = sandbox.run_batch(
        ["sh", "-c", script],
        [b"spin\n", b"hello\n", b"daemon\n", b"flood\n", b"bye\n"],
        cwd=work,
        backend=backend,
        limits=Limits(wall_time=1, output_bytes=10_000),
        ro_binds=[bins],
        progress=lambda d, t: done.append((d, t)),
    )
    assert [o.status for o in outs] == [
        Status.TIMEOUT,
        Status.OK,
        Status.OK,
        Status.OUTPUT_LIMIT,
        Status.OK,
    ], outs
    assert outs[1].stdout == b"got hello\n" and outs[4].stdout == b"got bye\n"
    assert _processes_named(marker) == []
    assert done[-1] == (5, 5) and len(done) == 5


def test_unavailable_backend_is_sandbox_error(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    layout.probe.cache_clear()
    try:
        out = sandbox.run(["/bin/true"], cwd=work, backend=Backend.BWRAP)
        assert out.status is Status.SANDBOX_ERROR and "bwrap" in out.message
    finally:
        monkeypatch.undo()
        layout.probe.cache_clear()


def test_python_programs_run_with_our_interpreter(work: Path, backend: Backend) -> None:
    """Python submissions run with a fixed interpreter by absolute path, stdlib and all."""
    script = "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix]))"
    out = sandbox.run([sys.executable, "-c", script], cwd=work, backend=backend)
    assert out.status is Status.OK, out
    assert json.loads(out.stdout) == [sys.prefix, sys.base_prefix]
    (work / "sol.py").write_text("import sys\nprint(sum(map(int, sys.stdin.read().split())))\n")
    sol = sandbox.run(
        [os.path.realpath(sys.executable), "sol.py"], cwd=work, backend=backend, stdin=b"1 2 39"
    )
    assert sol.status is Status.OK and sol.stdout == b"42\n", sol


def test_bwrap_private_tmp_is_bounded(work: Path) -> None:
    if sandbox.available_backends()[Backend.BWRAP] is not None:
        pytest.skip(f"bwrap: {sandbox.available_backends()[Backend.BWRAP]}")
    script = "for i in 1 2 3 4 5 6; do head -c 8000000 /dev/zero > /tmp/f$i || exit 9; done"
    out = sandbox.run(
        ["sh", "-c", script], cwd=work, backend=Backend.BWRAP, limits=Limits(memory_mb=32)
    )
    assert out.status is Status.RUNTIME_ERROR and out.exit_code == 9, out  # ENOSPC, not OOM
    ok = sandbox.run(
        ["sh", "-c", script], cwd=work, backend=Backend.BWRAP, limits=Limits(memory_mb=128)
    )
    assert ok.status is Status.OK, ok


def test_batch_runs_each_start_with_a_clean_private_tmp(work: Path, backend: Backend) -> None:
    if not sandbox.hides_files(backend):
        pytest.skip(f"{backend} has no private /tmp")
    script = (
        "ls -A /tmp; mkdir /tmp/left; echo x > /tmp/left/f; chmod 000 /tmp/left; "
        "echo y > /tmp/junk; ls /tmp/left 2>/dev/null; echo end"
    )
    outs = sandbox.run_batch(["sh", "-c", script], [b"", b"", b""], cwd=work, backend=backend)
    assert all(o.status is Status.OK for o in outs), outs
    assert outs[0].stdout == outs[1].stdout == outs[2].stdout
    assert b"left" not in outs[0].stdout and b"junk" not in outs[0].stdout
    fresh = sandbox.run(["sh", "-c", script], cwd=work, backend=backend)
    assert fresh.stdout == outs[2].stdout


def _my_children() -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        with contextlib.suppress(OSError):
            kids += [int(x) for x in (task / "children").read_text().split()]
    return kids


def test_nothing_of_ours_is_left_running_or_unreaped(
    bins: Path, work: Path, backend: Backend
) -> None:
    before = _my_children()
    marker = f"sbx-left-{uuid.uuid4().hex[:12]}"
    _run(bins, work, backend, [str(bins / "daemonize"), marker])
    sandbox.run(["sh", "-c", "sleep 20 & sleep 20 & exit 0"], cwd=work, backend=backend)
    sandbox.run(["sleep", "20"], cwd=work, backend=backend, limits=Limits(wall_time=0.5))
    assert _my_children() == before  # no zombie, no live sandbox process of ours
    assert _processes_named(marker) == []


def test_a_program_cannot_take_the_batch_down(work: Path, backend: Backend) -> None:
    """Killing its parent (the runner) ends one run at most; the next run gets a new sandbox."""
    script = 'read x; [ "$x" = kill ] && kill -9 $PPID; sleep 0.2; echo "$x"'
    outs = sandbox.run_batch(
        ["sh", "-c", script], [b"one\n", b"kill\n", b"two\n"], cwd=work, backend=backend
    )
    assert outs[0].stdout == b"one\n" and outs[2].stdout == b"two\n"
    assert outs[0].status is Status.OK and outs[2].status is Status.OK
    if outs[1].status is Status.SANDBOX_ERROR:
        # Only where the program shares the runner's uid and pid namespace (plain).
        assert backend is Backend.PLAIN and "runner" in outs[1].message
    else:
        assert outs[1].stdout == b"kill\n"


def test_unknown_backend_is_sandbox_error(work: Path) -> None:
    out = sandbox.run(["true"], cwd=work, backend="docker")  # type: ignore[arg-type]
    assert out.status is Status.SANDBOX_ERROR and "docker" in out.message


def test_missing_work_dir_is_sandbox_error(tmp_path: Path) -> None:
    out = sandbox.run(["true"], cwd=tmp_path / "nope")
    assert out.status is Status.SANDBOX_ERROR and "nope" in out.message


def test_broken_runner_cache_is_rebuilt_or_avoided(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cached runner that does not execute (garbage, a noexec mount) never breaks runs."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SUITEBENCH_RUNNER", raising=False)
    protocol.c_runner.cache_clear()
    try:
        first = protocol.c_runner()
        assert first is not None and first.is_relative_to(tmp_path / "cache")
        first.write_bytes(b"\x7fELF garbage")
        protocol.c_runner.cache_clear()
        rebuilt = protocol.c_runner()
        assert rebuilt == first and protocol.runner_starts(first)
        # No compiler and a broken cache: the Python runner takes over.
        first.write_bytes(b"\x7fELF garbage")
        monkeypatch.setenv("PATH", "/nonexistent")
        protocol.c_runner.cache_clear()
        assert protocol.c_runner() is None
        out = sandbox.run(["/bin/echo", "still fine"], cwd=work)
        assert out.status is Status.OK and out.stdout == b"still fine\n"
    finally:
        monkeypatch.undo()
        protocol.c_runner.cache_clear()


def test_program_that_closes_stdin_and_keeps_running(work: Path, backend: Backend) -> None:
    out = sandbox.run(
        ["sh", "-c", "exec 0<&-; sleep 0.3; echo done"],
        cwd=work,
        backend=backend,
        stdin=b"x" * (4 << 20),
        limits=Limits(wall_time=10),
    )
    assert out.status is Status.OK and out.stdout == b"done\n", out
