"""Run untrusted programs under limits and return an :class:`Outcome` for every run.

Every submission, mutant, agent-written test, generator and validator runs here, so the figures
(validity, mutation_score, cov_at_k, the ledger) are only as trustworthy as this module. Three
backends, chosen best-first and recorded in every outcome:

``bwrap``
    bubblewrap: read-only root (``--ro-bind / /``), a fresh ``/dev`` and ``/proc``, a private
    ``/tmp``, only the work dir writable, new network, pid, ipc and uts namespaces. Run by root,
    the program itself runs as the unprivileged uid/gid 65534 (``nobody``) with no capabilities,
    so file permissions and ``RLIMIT_NPROC`` bite. Home directories that ``nobody`` cannot
    enter (``/root`` is 0700) are hidden behind an empty tmpfs, and only what the run needs (the
    interpreter, the program, ``ro_binds``) is bound back read-only. The work dir is made
    world-writable (mode ``o+rwx``) so ``nobody`` can write there; the caller, root, can read
    everything the program writes. Run by an unprivileged user, bwrap uses a user namespace and
    the program keeps the caller's uid.
``unshare``
    util-linux ``unshare``: new network and pid namespaces (``-n -p -f --mount-proc``) plus
    rlimits; the program keeps the caller's uid.
``plain``
    rlimits only, no isolation; the first plain session of a process logs a warning through
    :mod:`logging` (later ones log at debug level), and every outcome says ``plain``.

Limits (``Limits`` in :mod:`suitebench.run.outcome`):

* memory by a cgroup (v1 ``memory.limit_in_bytes`` + ``memsw``, v2 ``memory.max``) where one is
  writable; a run is ``memory`` only when the kernel's ``oom_kill`` counter of its group rose --
  never guessed from exit code 137. Without a writable cgroup, ``RLIMIT_AS`` is set instead and
  the run is reported honestly as whatever the program did when an allocation failed (usually
  ``runtime_error`` or ``signaled``); the outcome's message says that the limit was
  ``RLIMIT_AS`` only. ``peak_memory_kb`` is the group's peak above the sandbox's own baseline on
  cgroup v1, else the largest ``ru_maxrss`` of the run's processes.
* processes by a pids cgroup (``pids.max``) where writable, else ``RLIMIT_NPROC`` (which counts
  every process of the uid on the host and which the kernel does not apply to root).
* CPU by ``RLIMIT_CPU`` with soft < hard: SIGXCPU, the hard-limit SIGKILL, or a CPU time over
  the limit at exit are ``timeout`` with ``timeout_kind="cpu"``; the wall-clock watchdog kills
  the run's whole process tree at the wall limit (``timeout_kind="wall"``).
* output: stdout and stderr are each capped at ``output_bytes`` *while reading*; a stream over
  its cap is cut at the cap, flagged truncated, and the run is killed as ``output_limit``;
  ``RLIMIT_FSIZE`` (SIGXFSZ) is ``output_limit`` too. Output stays bytes, exactly.
* stack unlimited by default (judge semantics).

Nothing outlives a run: the in-sandbox runner is the child subreaper and kills and reaps every
process a run leaves behind (a double-forked ``setsid`` daemon included) before it reports; the
namespace teardown (bwrap, unshare) and the cgroup sweep at session end are further nets.

Speed: a :class:`Session` (what :func:`run_batch` uses) starts the sandbox and a small runner
inside it once -- ``_runner.c``, compiled once per machine into ``~/.cache/suitebench`` (or
``$XDG_CACHE_HOME``), else ``_runner.py`` on the same interpreter with ``-I -S``; set
``SUITEBENCH_RUNNER=python`` to force the latter -- and the runner forks each run with its own
limits, so a run costs about what a bare ``subprocess.run`` costs. The memory and pids cgroups
are per session; the coordinator reads and resets their counters between the session's runs,
which are sequential.

What the program can see under bwrap: the whole file system read-only, minus ``/tmp`` and home
directories ``nobody`` cannot enter. ``/tmp`` is private: a tmpfs of at most half the memory
limit (its files are memory, charged to the run), emptied of the program's files after every
run so each run of a session starts from the same empty ``/tmp``. Bound back read-only:
``ro_binds``, the program (``argv[0]``) and absolute paths named in ``argv``, and the
interpreter Python programs run with. When the program runs as ``nobody``, ``ro_binds``
themselves are made ``o+r`` (``o+x`` for directories): their contents must be readable by
others (a file created with mode 0600 is not).

Harness failures are outcomes, not exceptions: an unknown or unavailable backend, a program
that cannot be executed, ``require_isolation=True`` without a backend that isolates the network,
or a runner that died all give ``Status.SANDBOX_ERROR`` with the reason in ``message``.

``env=None`` gives the program a small clean environment (``PATH``, ``HOME`` = the work dir,
``TMPDIR``, ``LANG``/``LC_ALL`` = ``C.UTF-8``), not the coordinator's: untrusted code never sees
the caller's secrets.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import os
import resource
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

from suitebench.run.cgroups import RunCgroup
from suitebench.run.cgroups import describe as describe_cgroups
from suitebench.run.layout import (
    DEFAULT_PATH,
    NOBODY,
    START_TIMEOUT,
    available_backends,
    backend_prefix,
    build_layout,
    detect_backend,
    drops_to_nobody,
    hides_files,
    interpreter,
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

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]

_RUNNER_SOURCE = Path(__file__).with_name("_runner.py").read_text()
_START_TIMEOUT = START_TIMEOUT
_REPLY_GRACE = 30.0  # beyond the wall limit before the coordinator gives up on a runner
_DEFAULT_PATH = DEFAULT_PATH
_ENTER_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


_plain_warned = False  # the plain backend warns once per process, then logs at debug level


class SandboxError(RuntimeError):
    """The sandbox itself could not be started (reported as a ``sandbox_error`` outcome)."""


_probe = probe  # the names the rest of this module (and its tests) use
_interpreter = interpreter
_drops_to_nobody = drops_to_nobody
_runner_env = runner_env


def _program_env(env: Mapping[str, str] | None, cwd: Path) -> dict[str, str]:
    if env is not None:
        return dict(env)
    return {
        "PATH": os.environ.get("PATH", _DEFAULT_PATH),
        "HOME": str(cwd),
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }


def _rlimits(
    limits: Limits, *, cgroup_memory: bool, cgroup_pids: bool
) -> list[tuple[int, int, int]]:
    """The per-run rlimits (resource, soft, hard; -1 = unlimited) the runner sets before exec."""
    soft_cpu = max(1, math.ceil(limits.effective_cpu))
    out = [
        (resource.RLIMIT_CPU, soft_cpu, soft_cpu + 1),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if limits.stack_unlimited:
        out.append((resource.RLIMIT_STACK, -1, -1))
    if limits.memory_mb is not None and not cgroup_memory:
        out.append((resource.RLIMIT_AS, limits.memory_mb * MiB, limits.memory_mb * MiB))
    if not cgroup_pids:
        out.append((resource.RLIMIT_NPROC, limits.processes, limits.processes))
    return out


def _encode_config(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    uid: int | None,
    wall: float,
    output_bytes: int,
    rlimits: Sequence[tuple[int, int, int]],
    *,
    clean_tmp: bool = False,
) -> bytes:
    """The runner's binary config (the protocol is documented in ``_runner.c``)."""

    def s(text: str) -> bytes:
        raw = os.fsencode(text)
        return struct.pack(">I", len(raw)) + raw

    parts = [struct.pack(">I", len(argv)), *(s(a) for a in argv)]
    parts += [struct.pack(">I", len(env)), *(s(f"{k}={v}") for k, v in env.items())]
    parts.append(s(str(cwd)))
    ids = -1 if uid is None else uid
    parts.append(struct.pack(">qqqq", ids, ids, round(wall * 1e6), output_bytes))
    parts.append(struct.pack(">I", len(rlimits)))
    parts += [struct.pack(">Iqq", r, soft, hard) for r, soft, hard in rlimits]
    parts.append(struct.pack(">I", 1 if clean_tmp else 0))
    return b"".join(parts)


_REPLY = struct.Struct(">iiQQQIIIQQI")


def _runner_source_path(name: str) -> Path:
    return Path(__file__).with_name(name)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "suitebench"


@functools.cache
def _c_runner() -> Path | None:
    """The compiled C runner, built once per machine and cached by a hash of its source.

    None when ``SUITEBENCH_RUNNER=python`` asks for the Python runner or no C compiler works.
    """
    if os.environ.get("SUITEBENCH_RUNNER", "").lower() == "python":
        return None
    src = _runner_source_path("_runner.c")
    try:
        code = src.read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(code).hexdigest()[:16]
    target = _cache_dir() / f"runner-{digest}"
    if os.access(target, os.X_OK) and _runner_starts(target):
        return target
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        log.info("no C compiler: the sandbox uses the slower Python runner")
        return None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        res = subprocess.run(
            [cc, "-O2", "-o", str(tmp), str(src)],
            capture_output=True,
            timeout=120,
            env=_runner_env(),
            check=False,
        )
        if res.returncode != 0:
            log.warning("cannot build the C runner, using the Python one: %s", res.stderr[-500:])
            return None
        tmp.chmod(0o755)
        os.replace(tmp, target)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("cannot build the C runner, using the Python one: %s", exc)
        return None
    if not _runner_starts(target):
        log.warning("the C runner %s does not start (noexec cache?): using the Python one", target)
        return None
    return target


def _runner_starts(binary: Path) -> bool:
    """The binary executes here (a cache on a noexec mount, or built elsewhere, would not):
    without a config it exits 3 at once."""
    try:
        res = subprocess.run(
            [str(binary)], stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 3


def _runner_argv() -> tuple[list[str], list[Path]]:
    """How to start the runner inside the sandbox, and the paths it needs to see."""
    binary = _c_runner()
    if binary is not None:
        return [str(binary)], [binary]
    return [_interpreter(), "-I", "-S", "-c", _RUNNER_SOURCE], []


# ----------------------------------------------------------------------------------------------
# Sessions


def _classify(
    h: dict[str, Any], limits: Limits, *, oom_kills: int, cgroup_memory: bool
) -> tuple[Status, str | None, str]:
    """Status, timeout kind and message from the runner's facts and the cgroup's counters."""
    sig, code, cpu = h["signal"], h["exit_code"], float(h["cpu"])
    if oom_kills > 0:
        return Status.MEMORY, None, f"killed by the memory cgroup ({limits.memory_mb} MiB)"
    if h["killed"] == "output":
        return Status.OUTPUT_LIMIT, None, f"output over {limits.output_bytes} bytes"
    if sig == signal.SIGXFSZ:
        return Status.OUTPUT_LIMIT, None, f"file size over {limits.file_size_bytes} bytes"
    if h["killed"] == "wall":
        return Status.TIMEOUT, "wall", f"wall time over {limits.effective_wall:g} s"
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.effective_cpu):
        return Status.TIMEOUT, "cpu", f"CPU time over {limits.effective_cpu:g} s"
    if cpu > limits.effective_cpu:
        how = f"signal {sig}" if sig else f"exit {code}"
        msg = f"CPU time {cpu:.3f} s over {limits.effective_cpu:g} s (ended by {how})"
        return Status.TIMEOUT, "cpu", msg
    note = ""
    if limits.memory_mb is not None and not cgroup_memory:
        note = (
            f"memory limited by RLIMIT_AS only ({limits.memory_mb} MiB): an allocation failure "
            "shows as the program's own error"
        )
    if sig is not None:
        return Status.SIGNALED, None, note
    if code == 0:
        return Status.OK, None, ""
    return Status.RUNTIME_ERROR, None, note


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
        self.cwd = Path(os.path.realpath(cwd))
        self.limits = limits
        self.env = _program_env(env, self.cwd)
        self.ro_binds = [Path(os.path.realpath(p)) for p in ro_binds]
        self.error: str | None = None
        try:
            self.backend = detect_backend() if backend is None else Backend(backend)
        except ValueError:
            self.backend = Backend.PLAIN
            self.error = f"unknown backend {backend!r} (known: {', '.join(map(str, Backend))})"
            return
        if backend is not None and (reason := _probe(self.backend)) is not None:
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
        limits = self.limits
        cg = RunCgroup(memory=limits.memory_mb is not None, pids=True)
        as_nobody = _drops_to_nobody(self.backend)
        if as_nobody:
            with contextlib.suppress(OSError):
                mode = self.cwd.stat().st_mode
                if mode & 0o007 != 0o007:
                    self.cwd.chmod(stat.S_IMODE(mode) | 0o777)
        runner_argv, runner_needs = _runner_argv()
        layout = None
        if hides_files(self.backend):
            auto = [*runner_needs, *interpreter_paths(), *self._shim_roots]
            auto += program_paths(self.argv, self.env, self.cwd)
            auto = [Path(os.path.realpath(p)) for p in auto]
            auto = [p for p in auto if p != self.cwd and self.cwd not in p.parents]
            if as_nobody:
                for p in self.ro_binds:
                    open_for_nobody(p)
            layout = build_layout(
                self.cwd,
                self.ro_binds,
                auto,
                tmp_size=None if limits.memory_mb is None else limits.memory_mb * MiB // 2,
            )
        cmd = backend_prefix(self.backend, layout=layout, network=limits.network)
        cmd += runner_argv
        config = _encode_config(
            self.argv,
            self.env,
            self.cwd,
            NOBODY if as_nobody else None,
            limits.effective_wall,
            limits.output_bytes,
            _rlimits(limits, cgroup_memory=cg.has_memory, cgroup_pids=cg.has_pids),
            clean_tmp=hides_files(self.backend),
        )
        if procs_files := cg.procs_files():
            # Join the session's cgroups before anything of the sandbox starts, so every process
            # of it is counted; a shell does it because preexec_fn is unsafe with threads.
            cmd = ["/bin/sh", "-c", _ENTER_CGROUP, "sh", *procs_files, "--", *cmd]
        errlog = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the session
        try:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errlog,
                cwd=str(self.cwd),
                env=_runner_env(),
                start_new_session=True,
            )
        except OSError as exc:
            cg.close()
            errlog.close()
            raise SandboxError(f"cannot start the {self.backend} sandbox: {exc}") from exc
        started = _Started(proc, cg, 0, errlog)
        try:
            self._send(started, config)
            ready = self._read_exact(started, 4, time.monotonic() + _START_TIMEOUT)
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
        if self.backend is Backend.PLAIN:
            global _plain_warned
            level = logging.DEBUG if _plain_warned else logging.WARNING
            _plain_warned = True
            log.log(
                level,
                "plain backend: %s runs without network or pid isolation (rlimits only)",
                self.argv[0],
            )
        return started

    # -- protocol ---------------------------------------------------------------------------
    @staticmethod
    def _send(s: _Started, data: bytes) -> None:
        assert s.proc.stdin is not None
        s.proc.stdin.write(data)
        s.proc.stdin.flush()

    @staticmethod
    def _read_exact(s: _Started, n: int, deadline: float) -> bytes:
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
            parts.append(chunk)
            n -= len(chunk)
        return b"".join(parts)

    def _receive(self, s: _Started, timeout: float) -> tuple[dict[str, Any], bytes, bytes]:
        deadline = time.monotonic() + timeout
        fields = _REPLY.unpack(self._read_exact(s, _REPLY.size, deadline))
        code, sig, wall_ns, cpu_ns, maxrss, killed, leftovers, flags, n_out, n_err, n_ee = fields
        exec_error = self._read_exact(s, n_ee, deadline).decode(errors="replace")
        out = self._read_exact(s, n_out, deadline)
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

    def run(self, stdin: bytes = b"") -> Outcome:
        """One run of the program on ``stdin`` inside this session's sandbox."""
        if self.error is not None:
            return self._error(self.error)
        if self._started is None:
            try:
                self._started = self._start()
            except SandboxError as exc:
                return self._error(str(exc))
        s = self._started
        cg = s.cgroup
        base = cg.memory_usage() if cg.has_memory else 0
        can_peak = cg.reset_peak()
        try:
            self._send(s, struct.pack(">Q", len(stdin)) + stdin)
            h, out, err = self._receive(s, self.limits.effective_wall + _REPLY_GRACE)
        except (SandboxError, OSError) as exc:
            detail = self._stderr_tail(s)
            self.close()
            return self._error(f"{exc}{': ' + detail if detail else ''}")
        oom = cg.new_oom_kills()
        if h.get("exec_error"):
            return self._error(f"cannot execute {self.argv[0]!r}: {h['exec_error']}")
        status, kind, message = _classify(
            h, self.limits, oom_kills=oom, cgroup_memory=cg.has_memory
        )
        peak_kb = int(h["maxrss_kb"]) or None
        if can_peak and (peak := cg.peak()) is not None:
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


# ----------------------------------------------------------------------------------------------
# Public API


def run(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    stdin: bytes = b"",
    env: Mapping[str, str] | None = None,
    limits: Limits = Limits(),
    backend: Backend | None = None,
    ro_binds: Sequence[str | Path] = (),
    require_isolation: bool = False,
) -> Outcome:
    """One sandboxed run of ``argv`` in ``cwd`` (the only writable directory).

    ``ro_binds`` are extra paths made visible read-only (paths under /tmp are hidden by the
    bubblewrap backend's private /tmp otherwise). ``require_isolation=True`` refuses to run
    without network isolation: the outcome is ``sandbox_error`` and nothing runs.
    """
    (outcome,) = run_batch(
        argv,
        [stdin],
        cwd=cwd,
        env=env,
        limits=limits,
        backend=backend,
        ro_binds=ro_binds,
        require_isolation=require_isolation,
    )
    return outcome


def run_batch(
    argv: Sequence[str],
    stdins: Sequence[bytes],
    *,
    cwd: str | Path,
    env: Mapping[str, str] | None = None,
    limits: Limits = Limits(),
    backend: Backend | None = None,
    ro_binds: Sequence[str | Path] = (),
    require_isolation: bool = False,
    progress: Progress | None = None,
) -> list[Outcome]:
    """Many runs of one program, one per stdin, in one sandbox: equal, run by run, to :func:`run`.

    The sandbox start-up (namespaces, cgroup, runner) is paid once per batch; each run still gets
    a fresh process, its own limits, and a clean slate (everything it left is killed first).
    Runs share the work dir, as they would calling :func:`run` one after another.
    """
    outcomes: list[Outcome] = []
    with Session(
        argv,
        cwd=cwd,
        env=env,
        limits=limits,
        backend=backend,
        ro_binds=ro_binds,
        require_isolation=require_isolation,
    ) as session:
        for i, data in enumerate(stdins):
            outcomes.append(session.run(data))
            if progress is not None:
                progress(i + 1, len(stdins))
    return outcomes


@dataclass(frozen=True)
class Tool:
    """A compiler or interpreter found on this machine (for ``suitebench doctor``)."""

    name: str
    path: str | None
    version: str


def _tool_version(path: str, args: Sequence[str]) -> str:
    try:
        res = subprocess.run(
            [path, *args], capture_output=True, timeout=20, env=_runner_env(), check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    text = (res.stdout or res.stderr).decode(errors="replace").strip()
    return text.splitlines()[0] if text else ""


def file_view(backend: Backend) -> str:
    """What a program sees of the file system under ``backend``, in one sentence."""
    if not hides_files(backend):
        return (
            "the whole file system, as the caller's user (nothing hidden: plain isolates "
            "nothing but limits)"
        )
    lay = build_layout(Path("/nonexistent-work-dir"), [], [])
    system = [str(p) for p in [*lay.system, *lay.symlinks] if p.parent == Path("/")]
    etc = [p.name for p in [*lay.etc, *lay.symlinks] if p.parent == Path("/etc")]
    return (
        f"read-only {' '.join(sorted(system))}, /etc/{{{','.join(sorted(etc))}}}, the "
        "interpreter, the program and ro_binds; a fresh /dev and /proc, a private /tmp; the "
        "work dir writable; nothing else"
    )


def describe_environment() -> dict[str, Any]:
    """What isolation, cgroups, compilers and interpreters exist here, and which are used."""
    backends = available_backends()
    chosen = detect_backend()
    tools: list[Tool] = []
    for name, args in (
        ("gcc", ["--version"]),
        ("g++", ["--version"]),
        ("rustc", ["--version"]),
        ("go", ["version"]),
    ):
        path = shutil.which(name)
        tools.append(Tool(name, path, _tool_version(path, args) if path else ""))
    interp = _interpreter()
    tools.append(Tool("python", interp, _tool_version(interp, ["--version"])))
    cgroups = describe_cgroups()
    writable = {c.controller: c.writable for c in cgroups}
    binary = _c_runner()
    return {
        "backends": {
            str(b): {"available": r is None, "reason": r or ""} for b, r in backends.items()
        },
        "backend": str(chosen),
        "network_isolation": isolates_network(chosen),
        "hides_files": hides_files(chosen),
        "file_view": file_view(chosen),
        "runs_as": "nobody (65534)" if _drops_to_nobody(chosen) else f"uid {os.geteuid()}",
        "runner": f"C ({binary})" if binary else "Python (no C compiler)",
        "memory_limit_by": "cgroup" if writable.get("memory") else "RLIMIT_AS",
        "process_limit_by": "pids cgroup" if writable.get("pids") else "RLIMIT_NPROC",
        "cgroups": [
            {
                "controller": c.controller,
                "version": str(c.version) if c.version else None,
                "parent": c.parent,
                "writable": c.writable,
                "reason": c.reason,
            }
            for c in cgroups
        ],
        "tools": [{"name": t.name, "path": t.path, "version": t.version} for t in tools],
    }
