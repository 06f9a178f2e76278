"""A :class:`Session`: one sandbox around the runner, for many sequential runs of one program.

The session enters the backend (:mod:`suitebench.run.layout`) with the run's layout, joins the
session's memory and pids cgroups (:mod:`suitebench.run.cgroups`) before anything of the
sandbox starts, starts the runner (:mod:`suitebench.run.protocol`) once, then sends it one
stdin per run and turns each reply into an :class:`Outcome`. The cgroups' counters are read and
reset between runs, which are sequential.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import select
import shutil
import signal
import stat
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suitebench.run import interrupt, jvm
from suitebench.run.cgroups import RunCgroup
from suitebench.run.layout import (
    DEFAULT_PATH,
    NOBODY,
    START_TIMEOUT,
    Layout,
    SandboxUnavailable,
    available_backends,
    backend_prefix,
    build_layout,
    choose_backend,
    drops_to_nobody,
    hides_files,
    interpreter_paths,
    isolates_network,
    open_for_nobody,
    probe,
    program_paths,
    resolve_shim,
    runner_env,
    unshim_path,
)
from suitebench.run.outcome import Backend, Limits, MiB, Outcome, Status
from suitebench.run.protocol import (
    REPLY,
    classify,
    encode_config,
    mount_helper,
    rlimits,
    runner_argv,
)
from suitebench.run.syscalls import FilterUnavailable, program_filter

log = logging.getLogger(__name__)

_REPLY_GRACE = 30.0  # beyond the wall limit before the coordinator gives up on a runner
_ENTER_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'

STREAM_ABOVE = 1 << 20  # outputs longer than this go to a run's stdout_sink, if it has one
StdoutSink = Callable[[bytes], None]

_plain_warned = False  # the plain backend warns once per process, then logs at debug level


class SandboxError(RuntimeError):
    """The sandbox itself could not be started (reported as a ``sandbox_error`` outcome)."""


def _program_env(env: Mapping[str, str] | None, cwd: Path) -> dict[str, str]:
    if env is not None:
        return dict(env)
    return {
        "PATH": os.environ.get("PATH", DEFAULT_PATH),
        "HOME": str(cwd),
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }


@dataclass
class _Started:
    proc: subprocess.Popen[bytes]
    cgroup: RunCgroup
    base_memory: int
    errlog: Any


class Session:
    """One sandbox around the runner, for many sequential runs of one program.

    Use as a context manager; :meth:`run` is equal, run by run, to :func:`run`. If the runner
    dies mid-session (it should not), the run in flight is a ``sandbox_error`` and the next run
    starts a fresh sandbox.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path,
        env: Mapping[str, str] | None = None,
        limits: Limits = Limits(),
        backend: Backend | None = None,
        ro_binds: Sequence[str | Path] = (),
        require_isolation: bool = False,
    ) -> None:
        if not argv:
            raise ValueError("argv is empty: nothing to run")
        self.argv = [str(a) for a in argv]
        # A JVM gets its heap bound from the memory limit, room for its own threads, no
        # RLIMIT_AS (it reserves far more address space than it uses) and its OutOfMemoryError
        # read as the memory verdict (run/jvm.py).
        self.jvm = jvm.is_jvm_run(self.argv)
        if self.jvm:
            self.argv = jvm.with_heap(self.argv, limits.memory_mb)
        self.cwd = Path(os.path.realpath(cwd))
        self.limits = limits
        self.env = _program_env(env, self.cwd)
        self.ro_binds = [Path(os.path.realpath(p)) for p in ro_binds]
        self.error: str | None = None
        try:
            # No backend named: plain only when asked for by name (``$SUITEBENCH_BACKEND``),
            # never because nothing better works here.
            self.backend = choose_backend() if backend is None else Backend(backend)
        except SandboxUnavailable as exc:
            self.backend = Backend.PLAIN  # never started: every run is this sandbox_error
            self.error = str(exc)
            return
        except ValueError:
            self.backend = Backend.PLAIN
            self.error = f"unknown backend {backend!r} (known: {', '.join(map(str, Backend))})"
            return
        if backend is not None and (reason := probe(self.backend)) is not None:
            self.error = f"backend {self.backend} unavailable: {reason}"
        elif require_isolation and not isolates_network(self.backend):
            usable = [str(b) for b, r in available_backends().items() if r is None]
            self.error = (
                f"require_isolation: backend {self.backend} does not isolate the network "
                f"(available here: {', '.join(usable)})"
            )
        elif not self.cwd.is_dir():
            self.error = f"work dir {self.cwd} does not exist"
        self._shim_roots: list[Path] = []
        if hides_files(self.backend):
            self._unshim()

    def _unshim(self) -> None:
        """Version-manager shims (pyenv's ``python3``) cannot work inside, where the manager is
        not visible: run the real executable they would pick, and show its installation."""
        if "PATH" in self.env:
            path, self._shim_roots = unshim_path(self.env["PATH"])
            self.env = {**self.env, "PATH": path}
        argv0 = self.argv[0]
        if "/" in argv0:
            real = resolve_shim(Path(argv0) if os.path.isabs(argv0) else self.cwd / argv0)
            if real is not None:
                self.argv[0] = str(real)
        elif self._shim_roots:
            # The runner looks a bare name up on its own PATH (the caller's, shims and all).
            found = shutil.which(argv0, path=self.env["PATH"])
            if found and any(r in Path(found).parents for r in self._shim_roots):
                self.argv[0] = found

    _started: _Started | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        s, self._started = self._started, None
        if s is None:
            return
        interrupt.forget(s.proc)
        with contextlib.suppress(OSError):
            if s.proc.stdin is not None:
                s.proc.stdin.close()
        try:
            s.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(s.proc.pid, signal.SIGKILL)
            s.proc.wait()
        with contextlib.suppress(OSError):
            if s.proc.stdout is not None:
                s.proc.stdout.close()
        s.cgroup.close()
        s.errlog.close()

    def _start(self) -> _Started:
        """Start the sandbox with the runner inside, in the session's cgroups, and wait until
        the runner is ready; the cgroup limits are set then (above what the runner uses)."""
        limits = self.limits
        if self.jvm:
            limits = dataclasses.replace(limits, processes=limits.processes + jvm.JVM_THREADS)
        cg = RunCgroup(memory=limits.memory_mb is not None, pids=True)
        as_nobody = drops_to_nobody(self.backend)
        if as_nobody:
            self._open_cwd_for_nobody()
        runner_cmd, runner_needs = runner_argv()
        layout = self._layout(limits, as_nobody, runner_needs)
        helper = mount_helper() if self.backend is Backend.UNSHARE else None
        cmd = backend_prefix(
            self.backend,
            layout=layout,
            network=limits.network,
            mount_helper=None if helper is None else [str(helper)],
        )
        cmd += runner_cmd
        try:
            seccomp = program_filter()
        except FilterUnavailable as exc:
            cg.close()
            raise SandboxError(str(exc)) from exc
        config = encode_config(
            self.argv,
            self.env,
            self.cwd,
            NOBODY if as_nobody else None,
            limits.effective_wall,
            limits.output_bytes,
            rlimits(limits, cgroup_memory=cg.has_memory or self.jvm, cgroup_pids=cg.has_pids),
            clean_tmp=hides_files(self.backend),
            new_ipc=hides_files(self.backend),
            seccomp=seccomp,
        )
        if procs_files := cg.procs_files():
            # Join the session's cgroups before anything of the sandbox starts, so every process
            # of it is counted; a shell does it because preexec_fn is unsafe with threads.
            cmd = ["/bin/sh", "-c", _ENTER_CGROUP, "sh", *procs_files, "--", *cmd]
        started = self._popen(cmd, cg)
        self._handshake(started, config, limits)
        if self.backend is Backend.PLAIN:
            self._warn_plain()
        return started

    def _open_cwd_for_nobody(self) -> None:
        """Make the work dir world-writable, for a program run as nobody."""
        with contextlib.suppress(OSError):
            mode = self.cwd.stat().st_mode
            if mode & 0o007 != 0o007:
                self.cwd.chmod(stat.S_IMODE(mode) | 0o777)

    def _layout(self, limits: Limits, as_nobody: bool, runner_needs: list[Path]) -> Layout | None:
        """What the program sees, under a backend that hides files: the work dir, the paths
        handed in (opened for nobody when it runs as nobody), and what the runner, the
        interpreter and the program need; None under one that hides nothing."""
        if not hides_files(self.backend):
            return None
        auto = [*runner_needs, *interpreter_paths(), *self._shim_roots]
        auto += program_paths(self.argv, self.env, self.cwd)
        auto = [Path(os.path.realpath(p)) for p in auto]
        auto = [p for p in auto if p != self.cwd and self.cwd not in p.parents]
        if as_nobody:
            for p in self.ro_binds:
                open_for_nobody(p)
        return build_layout(
            self.cwd,
            self.ro_binds,
            auto,
            tmp_size=None if limits.memory_mb is None else limits.memory_mb * MiB // 2,
        )

    def _popen(self, cmd: list[str], cg: RunCgroup) -> _Started:
        """Start the sandbox's command, its stderr kept in a file for the error messages."""
        errlog = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the session
        try:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errlog,
                cwd=str(self.cwd),
                env=runner_env(),
                start_new_session=True,
            )
        except OSError as exc:
            cg.close()
            errlog.close()
            raise SandboxError(f"cannot start the {self.backend} sandbox: {exc}") from exc
        interrupt.remember(proc)
        return _Started(proc, cg, 0, errlog)

    def _handshake(self, started: _Started, config: bytes, limits: Limits) -> None:
        """Send the runner its config and wait for it to be ready, then set the cgroup limits
        above what the sandbox uses already; a failure closes the session and says why."""
        cg = started.cgroup
        try:
            self._send(started, config)
            ready = self._read_exact(started, 4, time.monotonic() + START_TIMEOUT)
            if ready != b"RDY1":
                raise SandboxError(f"runner answered {ready!r} instead of ready")
            started.base_memory = cg.memory_usage()
            mem = None
            if limits.memory_mb is not None:
                mem = limits.memory_mb * MiB + started.base_memory
            cg.set_limits(memory_bytes=mem, pids_max=limits.processes + cg.pids_current())
        except (SandboxError, OSError) as exc:
            self._started = started
            detail = self._stderr_tail(started)
            self.close()
            raise SandboxError(f"{exc}{': ' + detail if detail else ''}") from exc

    def _warn_plain(self) -> None:
        """Warn, the first time in the process, that the plain backend isolates nothing."""
        global _plain_warned
        level = logging.DEBUG if _plain_warned else logging.WARNING
        _plain_warned = True
        log.log(
            level,
            "plain backend: %s runs without network or pid isolation (rlimits only)",
            self.argv[0],
        )

    # -- protocol ---------------------------------------------------------------------------
    @staticmethod
    def _send(s: _Started, data: bytes) -> None:
        assert s.proc.stdin is not None
        s.proc.stdin.write(data)
        s.proc.stdin.flush()

    @staticmethod
    def _read_exact(s: _Started, n: int, deadline: float, sink: StdoutSink | None = None) -> bytes:
        """``n`` bytes from the runner; with ``sink``, each piece goes to it instead (and
        nothing is kept)."""
        assert s.proc.stdout is not None
        fd = s.proc.stdout.fileno()
        parts: list[bytes] = []
        while n > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxError("the runner stopped answering")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, min(n, 1 << 20))
            if not chunk:
                raise SandboxError("the runner ended unexpectedly")
            if sink is None:
                parts.append(chunk)
            else:
                sink(chunk)
            n -= len(chunk)
        return b"".join(parts)

    def _receive(
        self, s: _Started, timeout: float, sink: StdoutSink | None = None
    ) -> tuple[dict[str, Any], bytes, bytes]:
        deadline = time.monotonic() + timeout
        fields = REPLY.unpack(self._read_exact(s, REPLY.size, deadline))
        code, sig, wall_ns, cpu_ns, maxrss, killed, leftovers, flags, n_out, n_err, n_ee = fields
        exec_error = self._read_exact(s, n_ee, deadline).decode(errors="replace")
        stream = sink is not None and n_out > STREAM_ABOVE
        out = self._read_exact(s, n_out, deadline, sink if stream else None)
        err = self._read_exact(s, n_err, deadline)
        header = {
            "exit_code": None if code < 0 else code,
            "signal": sig or None,
            "wall": wall_ns / 1e9,
            "cpu": cpu_ns / 1e9,
            "maxrss_kb": maxrss,
            "killed": {0: None, 1: "wall", 2: "output"}.get(killed, "?"),
            "leftovers": leftovers,
            "stdout_truncated": bool(flags & 1),
            "stderr_truncated": bool(flags & 2),
            "exec_error": exec_error or None,
        }
        return header, out, err

    @staticmethod
    def _stderr_tail(s: _Started) -> str:
        try:
            s.errlog.seek(0)
            text: str = s.errlog.read()[-2000:].decode(errors="replace").strip()
        except OSError:
            return ""
        return text

    # -- runs -------------------------------------------------------------------------------
    def _error(self, message: str) -> Outcome:
        return Outcome(
            Status.SANDBOX_ERROR, backend=self.backend, limits=self.limits, message=message
        )

    def run(self, stdin: bytes = b"", *, stdout_sink: StdoutSink | None = None) -> Outcome:
        """One run of the program on ``stdin`` inside this session's sandbox.

        With ``stdout_sink``, an output longer than ``STREAM_ABOVE`` bytes is handed to it
        piece by piece as it arrives and is not kept (the outcome's ``stdout`` is then empty):
        a caller that only digests outputs never holds one that ran to the output limit.
        """
        if self.error is not None:
            return self._error(self.error)
        interrupt.check()  # Ctrl-C: no new run (run/interrupt.py)
        if self._started is None:
            try:
                self._started = self._start()
            except SandboxError as exc:
                interrupt.check()
                return self._error(str(exc))
        s = self._started
        cg = s.cgroup
        base = cg.memory_usage() if cg.has_memory else 0
        can_peak = cg.reset_peak()
        try:
            self._send(s, struct.pack(">Q", len(stdin)) + stdin)
            h, out, err = self._receive(s, self.limits.effective_wall + _REPLY_GRACE, stdout_sink)
        except (SandboxError, OSError) as exc:
            detail = self._stderr_tail(s)
            self.close()
            interrupt.check()  # the sandbox was killed by Ctrl-C: no outcome at all
            return self._error(f"{exc}{': ' + detail if detail else ''}")
        interrupt.check()
        oom = cg.new_oom_kills()
        peak = cg.peak() if can_peak else None
        cg.drop_page_cache()
        if h.get("exec_error"):
            return self._error(f"cannot execute {self.argv[0]!r}: {h['exec_error']}")
        status, kind, message = classify(h, self.limits, oom_kills=oom, cgroup_memory=cg.has_memory)
        if (
            self.jvm
            and status is Status.RUNTIME_ERROR
            and (why := jvm.out_of_memory(h["exit_code"], err))
        ):
            status, message = Status.MEMORY, why
        peak_kb = int(h["maxrss_kb"]) or None
        if peak is not None:
            peak_kb = max(0, peak - base) // 1024
        return Outcome(
            status,
            exit_code=h["exit_code"],
            signal=h["signal"],
            wall_time=round(float(h["wall"]), 6),
            cpu_time=round(float(h["cpu"]), 6),
            peak_memory_kb=peak_kb,
            stdout=out,
            stderr=err,
            stdout_truncated=bool(h["stdout_truncated"]),
            stderr_truncated=bool(h["stderr_truncated"]),
            backend=self.backend,
            limits=self.limits,
            timeout_kind=kind,
            message=message,
        )
