"""The in-sandbox runner: fork+exec one program many times, each run under its own limits.

Starting a sandbox (bubblewrap, namespaces, a cgroup) costs more than running a short judge
program, so a session starts this runner once inside the sandbox and sends it one stdin per run.
It is started as ``python -I -S -c <this file>`` with an absolute interpreter path and must
therefore use the standard library only and import nothing of suitebench.

Per run it forks a child that becomes its own process group, gets the run's rlimits, drops to the
unprivileged uid (when the sandbox runs as root), and execs the program with pipes for stdin,
stdout and stderr. The runner writes stdin and reads output without deadlock (one ``poll`` loop),
caps each output stream while reading, enforces the wall-clock limit, and after the program's
main process ends kills everything the run left behind: it is the child subreaper, so every
descendant -- a double-forked ``setsid`` daemon included -- is re-parented to it and is killed
and reaped before the run is reported. It reports raw facts; the coordinator decides the status.

The protocol on the runner's stdin/stdout is the one ``_runner.c`` (the fast twin of this file,
used whenever a C compiler is available) documents at its top; this file is the fallback.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import resource
import select
import signal
import struct
import sys
import time
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
CLONE_NEWIPC = 0x08000000
CHUNK = 65536

_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, arg: int) -> None:
    _libc.prctl(option, arg, 0, 0, 0)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _checked(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _read_exact(fd: int, n: int) -> bytes | None:
    parts = []
    while n > 0:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _rd_u32(fd: int) -> int:
    raw = _read_exact(fd, 4)
    if raw is None:
        raise EOFError
    return int(struct.unpack(">I", raw)[0])


def _rd_i64(fd: int) -> int:
    raw = _read_exact(fd, 8)
    if raw is None:
        raise EOFError
    return int(struct.unpack(">q", raw)[0])


def _rd_str(fd: int) -> str:
    raw = _read_exact(fd, _rd_u32(fd))
    if raw is None:
        raise EOFError
    return raw.decode("utf-8", "surrogateescape")


def read_config(fd: int) -> dict[str, Any]:
    """The binary config of the protocol, as the dict :class:`Runner` takes."""
    argv = [_rd_str(fd) for _ in range(_rd_u32(fd))]
    env = dict(_rd_str(fd).partition("=")[::2] for _ in range(_rd_u32(fd)))
    cwd = _rd_str(fd)
    uid, gid = _rd_i64(fd), _rd_i64(fd)
    wall_us, cap = _rd_i64(fd), _rd_i64(fd)
    rlimits = [(_rd_u32(fd), _rd_i64(fd), _rd_i64(fd)) for _ in range(_rd_u32(fd))]
    flags = _rd_u32(fd)
    raw = _read_exact(fd, _rd_u32(fd))
    if raw is None:
        raise EOFError
    return {
        "argv": argv,
        "env": env,
        "cwd": cwd,
        "uid": None if uid < 0 else uid,
        "gid": None if gid < 0 else gid,
        "wall": wall_us / 1e6,
        "output_bytes": cap,
        "rlimits": rlimits,
        "clean_tmp": bool(flags & 1),
        "new_ipc": bool(flags & 2),
        "seccomp": raw,
    }


def encode_reply(h: dict[str, Any], out: bytes, err: bytes) -> bytes:
    exec_error = (h["exec_error"] or "").encode()
    flags = int(h["stdout_truncated"]) | int(h["stderr_truncated"]) << 1
    killed = {None: 0, "wall": 1, "output": 2}[h["killed"]]
    head = struct.pack(
        ">iiQQQIIIQQI",
        -1 if h["exit_code"] is None else h["exit_code"],
        h["signal"] or 0,
        int(h["wall"] * 1e9),
        int(h["cpu"] * 1e9),
        h["maxrss_kb"],
        killed,
        h["leftovers"],
        flags,
        len(out),
        len(err),
        len(exec_error),
    )
    return head + exec_error + out + err


def _descendants(root: int) -> list[int]:
    """Every live descendant of ``root``, found through /proc (the namespace's or the host's)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may contain spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) < 2:
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    out: list[int] = []
    stack = [root]
    while stack:
        for kid in children.get(stack.pop(), ()):
            out.append(kid)
            stack.append(kid)
    return out


def _remove_tree(path: str) -> None:
    """rm -rf that also enters directories their owner made unreadable."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    import stat as _stat

    if _stat.S_ISDIR(st.st_mode):
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
        with contextlib.suppress(OSError):
            for n in os.listdir(path):
                _remove_tree(os.path.join(path, n))
        with contextlib.suppress(OSError):
            os.rmdir(path)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


class Runner:
    def __init__(self, config: dict[str, Any]) -> None:
        self.argv: list[str] = config["argv"]
        self.env: dict[str, str] = config["env"]
        self.cwd: str = config["cwd"]
        self.uid: int | None = config.get("uid")
        self.gid: int | None = config.get("gid")
        self.wall: float = float(config["wall"])
        self.cap: int = int(config["output_bytes"])
        self.rlimits: list[tuple[int, int, int]] = []
        for res, soft, hard in config["rlimits"]:
            inf = resource.RLIM_INFINITY
            self.rlimits.append((res, inf if soft < 0 else soft, inf if hard < 0 else hard))
        self.clean_tmp: bool = bool(config.get("clean_tmp"))
        self.new_ipc: bool = bool(config.get("new_ipc"))
        bpf: bytes = config.get("seccomp") or b""
        self._bpf = ctypes.create_string_buffer(bpf, len(bpf) or 1)
        self.filter = _SockFprog(len(bpf) // 8, ctypes.addressof(self._bpf)) if bpf else None
        try:
            self.initial = frozenset(os.listdir(self.cwd))
        except OSError:
            self.initial = frozenset()
        self.runs = 0
        self.me = os.getpid()
        self.cpu = 0.0
        self.maxrss = 0

    # -- the child ------------------------------------------------------------------------
    def _child(self, fds: tuple[int, int, int], err_w: int) -> None:
        try:
            os.setpgid(0, 0)
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            for res, soft, hard in self.rlimits:
                resource.setrlimit(res, (soft, hard))
            os.umask(0o022)
            if self.new_ipc:  # a run never sees IPC objects an earlier run left
                _checked(_libc.unshare(CLONE_NEWIPC), "unshare(CLONE_NEWIPC)")
            if self.gid is not None:
                os.setgroups([])
                os.setresgid(self.gid, self.gid, self.gid)
            if self.uid is not None:
                os.setresuid(self.uid, self.uid, self.uid)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid, which clears it
            if self.filter is not None:  # run/syscalls.py: kept across exec
                _checked(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
                ptr = ctypes.byref(self.filter)
                _checked(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ptr, 0, 0), "seccomp")
            with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")  # the program, not the runner, is the first OOM victim
            if os.getppid() != self.me:
                os._exit(127)
            os.chdir(self.cwd)
            os.execvpe(self.argv[0], self.argv, self.env)
        except BaseException as exc:
            with contextlib.suppress(BaseException):
                os.write(err_w, f"{type(exc).__name__}: {exc}".encode(errors="replace"))
        os._exit(127)

    # -- cleanup --------------------------------------------------------------------------
    def _account(self, ru: resource.struct_rusage) -> None:
        self.cpu += ru.ru_utime + ru.ru_stime
        self.maxrss = max(self.maxrss, ru.ru_maxrss)

    def _reap_nohang(self) -> bool:
        """Reap exited descendants; True when none are left at all."""
        while True:
            try:
                pid, _, ru = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                return False
            self._account(ru)

    def _kill_leftovers(self, pgid: int) -> int:
        """Kill and reap every process the run left; returns how many were found alive."""
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
        found: set[int] = set()
        while not self._reap_nohang():
            pids = _descendants(self.me)
            for pid in pids:
                found.add(pid)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.001)
        return len(found)

    def _clean_tmp(self) -> None:
        """Empty the private /tmp and /dev/shm of the program's files, as the program's uid (it
        owns them): a run's POSIX semaphores and shared memory are files in /dev/shm, and a run
        that dies holding them must not hand them to the next."""
        if not self.clean_tmp:
            return
        for where in ("/tmp", "/dev/shm"):
            try:
                names = [
                    n
                    for n in os.listdir(where)
                    if self.uid is None or os.lstat(f"{where}/{n}").st_uid == self.uid
                ]
            except OSError:
                continue
            self._remove_as_program(where, names)

    def _clean_cwd(self) -> None:
        """Give the next run the work dir the session started with: every entry an earlier run
        added is removed (a later run must not find what an earlier one left, e.g. a marker
        file; ``$HOME`` is the work dir unless the caller says otherwise).  Done before each
        run but the first, so that the last run's files stay for the caller to read."""
        try:
            names = [n for n in os.listdir(self.cwd) if n not in self.initial]
        except OSError:
            return
        self._remove_as_program(self.cwd, names)

    def _remove_as_program(self, where: str, names: list[str]) -> None:
        """Remove ``names`` under ``where`` as the program's uid (it owns them, and as root a
        link it planted is unlinked, never followed)."""
        if not names:
            return
        pid = os.fork()
        if pid == 0:
            try:
                if self.gid is not None:
                    os.setgroups([])
                    os.setresgid(self.gid, self.gid, self.gid)
                if self.uid is not None:
                    os.setresuid(self.uid, self.uid, self.uid)
                for n in names:
                    _remove_tree(os.path.join(where, n))
            finally:
                os._exit(0)
        os.waitpid(pid, 0)

    # -- one run ----------------------------------------------------------------------------
    def run(self, stdin: bytes) -> tuple[dict[str, Any], bytes, bytes]:
        """One run of the program on ``stdin``: its raw facts, stdout and stderr."""
        if self.runs:
            self._clean_cwd()
        self.runs += 1
        pid, t0, (in_w, out_r, err_r), exec_error = self._spawn()
        deadline = t0 + self.wall
        try:
            pidfd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None
        io = _Streams(in_w, out_r, err_r, stdin, self.cap, pidfd)
        killed, status = self._wait(pid, io, deadline)
        wall = time.monotonic() - t0
        if status is None:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            _, status, ru = os.wait4(pid, 0)
            self._account(ru)
        io.close_stdin()
        if pidfd is not None:
            os.close(pidfd)
        leftovers = self._kill_leftovers(pid)
        self._clean_tmp()
        # Every writer is gone now: drain what is left in the pipes, still capped.
        if io.drain() and killed is None:
            killed = "output"
        os.close(out_r)
        os.close(err_r)
        header: dict[str, Any] = {
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "wall": wall,
            "cpu": self.cpu,
            "maxrss_kb": self.maxrss,
            "killed": killed,
            "leftovers": leftovers,
            "stdout_truncated": io.truncated[out_r],
            "stderr_truncated": io.truncated[err_r],
            "stdout_len": len(io.bufs[out_r]),
            "stderr_len": len(io.bufs[err_r]),
            "exec_error": exec_error.decode(errors="replace") or None,
        }
        return header, bytes(io.bufs[out_r]), bytes(io.bufs[err_r])

    def _spawn(self) -> tuple[int, float, tuple[int, int, int], bytes]:
        """Fork the program's child with fresh pipes: its pid, its start time, the coordinator's
        ends of stdin/stdout/stderr, and why its exec failed (empty when it did not)."""
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        exec_r, exec_w = os.pipe()
        self.cpu = 0.0
        self.maxrss = 0
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.close(exec_r)
            self._child((in_r, out_w, err_w), exec_w)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        for fd in (in_r, out_w, err_w, exec_w):
            os.close(fd)
        exec_error = b""
        while chunk := os.read(exec_r, 4096):
            exec_error += chunk
        os.close(exec_r)
        return pid, t0, (in_w, out_r, err_r), exec_error

    def _wait(self, pid: int, io: _Streams, deadline: float) -> tuple[str | None, int | None]:
        """Feed and read the run until its main process ends, its wall time is up or an output
        goes over the cap: why it was stopped (None, "wall", "output") and its wait status."""
        killed: str | None = None
        status: int | None = None
        while status is None:
            now = time.monotonic()
            if now >= deadline:
                killed = "wall"
                break
            timeout_ms = max(1, int((deadline - now) * 1000) + 1)
            if io.pidfd is None:
                timeout_ms = min(timeout_ms, 5)
            io.poll(timeout_ms)
            if io.truncated[io.out_r] or io.truncated[io.err_r]:
                killed = "output"
                break
            wpid, st, ru = os.wait4(pid, os.WNOHANG)
            if wpid == pid:
                status = st
                self._account(ru)
        return killed, status


class _Streams:
    """One run's pipes, seen from the runner: the stdin still to write, and stdout and stderr
    read into buffers that keep at most the cap each (one ``poll`` loop, no deadlock)."""

    def __init__(
        self, in_w: int, out_r: int, err_r: int, stdin: bytes, cap: int, pidfd: int | None
    ) -> None:
        self.in_w, self.out_r, self.err_r = in_w, out_r, err_r
        self.cap = cap
        self.pidfd = pidfd
        self.bufs = {out_r: bytearray(), err_r: bytearray()}
        self.truncated = {out_r: False, err_r: False}
        self.open_out = {out_r, err_r}
        for fd in (in_w, out_r, err_r):
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
        self.pending = memoryview(stdin)
        if not self.pending:
            os.close(in_w)
            self.in_w = -1
        self.poller = select.poll()
        for fd in self.open_out:
            self.poller.register(fd, select.POLLIN)
        if self.in_w >= 0:
            self.poller.register(self.in_w, select.POLLOUT)
        if pidfd is not None:
            self.poller.register(pidfd, select.POLLIN)

    def read_from(self, fd: int) -> bool:
        """Read what is there; False at EOF. Over the cap: keep the cap, flag, stop."""
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return True
        if not data:
            return False
        buf = self.bufs[fd]
        room = self.cap - len(buf)
        if len(data) > room:
            buf += data[: max(room, 0)]
            self.truncated[fd] = True
        else:
            buf += data
        return True

    def poll(self, timeout_ms: int) -> None:
        """Wait up to ``timeout_ms`` for the pipes, then write and read what they allow."""
        for fd, ev in self.poller.poll(timeout_ms):
            if fd == self.pidfd:
                continue
            if fd == self.in_w:
                self._write_stdin(ev)
            elif not self.read_from(fd):
                self.poller.unregister(fd)
                self.open_out.discard(fd)

    def _write_stdin(self, ev: int) -> None:
        """Write the next piece of stdin; close it once all is written or the reader left."""
        if ev & (select.POLLERR | select.POLLHUP):
            self.pending = self.pending[:0]
        else:
            try:
                self.pending = self.pending[os.write(self.in_w, self.pending[:CHUNK]) :]
            except BlockingIOError:
                pass
            except OSError:
                self.pending = self.pending[:0]
        if not self.pending:
            self.poller.unregister(self.in_w)
            os.close(self.in_w)
            self.in_w = -1

    def close_stdin(self) -> None:
        """Close stdin if it is still open."""
        if self.in_w >= 0:
            os.close(self.in_w)

    def drain(self) -> bool:
        """Read the still open outputs to their end, blocking, still capped; True when one of
        them went over the cap."""
        over = False
        for fd in list(self.open_out):
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
            while self.read_from(fd) and not self.truncated[fd]:
                pass
            if self.truncated[fd]:
                over = True
        return over


def main() -> None:
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    try:
        runner = Runner(read_config(0))
    except EOFError:
        return
    _write_all(1, b"RDY1")
    while True:
        raw = _read_exact(0, 8)
        if raw is None:
            break
        stdin = _read_exact(0, struct.unpack(">Q", raw)[0])
        if stdin is None:
            break
        header, out, err = runner.run(stdin)
        _write_all(1, encode_reply(header, out, err))
    sys.exit(0)


if __name__ == "__main__":
    main()
