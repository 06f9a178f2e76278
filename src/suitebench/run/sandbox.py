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
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suitebench.run.cgroups import RunCgroup
from suitebench.run.cgroups import describe as describe_cgroups
from suitebench.run.outcome import Backend, Limits, MiB, Outcome, Status

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]

NOBODY = 65534
_RUNNER_SOURCE = Path(__file__).with_name("_runner.py").read_text()
_START_TIMEOUT = 60.0  # seconds for a sandbox to come up on a loaded machine
_REPLY_GRACE = 30.0  # beyond the wall limit before the coordinator gives up on a runner
_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_ENTER_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


_TOOLS: dict[Backend, str] = {}  # absolute paths of bwrap and unshare, found by _probe
_plain_warned = False  # the plain backend warns once per process, then logs at debug level


class SandboxError(RuntimeError):
    """The sandbox itself could not be started (reported as a ``sandbox_error`` outcome)."""


# ----------------------------------------------------------------------------------------------
# Backends


def _interpreter() -> str:
    """The interpreter the runner is started with: absolute, no site, isolated (-I -S)."""
    return os.path.realpath(sys.executable) if sys.executable else "/usr/bin/python3"


def _is_root() -> bool:
    return os.geteuid() == 0


def _drops_to_nobody(backend: Backend) -> bool:
    return backend is Backend.BWRAP and _is_root()


@functools.cache
def _probe(backend: Backend) -> str | None:
    """Start the backend once around ``true``; None if it works, else the reason it does not."""
    if backend is Backend.PLAIN:
        return None
    tool = "bwrap" if backend is Backend.BWRAP else "unshare"
    path = shutil.which(tool)
    if path is None:
        return f"{tool} not found on PATH"
    _TOOLS[backend] = path  # sessions use the very binary that was probed
    with tempfile.TemporaryDirectory(prefix="suitebench-probe-") as tmp:
        cmd = _backend_prefix(backend, cwd=Path(tmp), binds=[], network=False)
        cmd += ["/bin/sh", "-c", "exit 0"]
        try:
            res = subprocess.run(
                cmd, capture_output=True, timeout=_START_TIMEOUT, env=_runner_env(), cwd=tmp
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{tool} failed to start: {exc}"
    if res.returncode != 0:
        detail = res.stderr.decode(errors="replace").strip().splitlines()
        return f"{tool} failed: {detail[-1] if detail else f'exit {res.returncode}'}"
    return None


def available_backends() -> dict[Backend, str | None]:
    """Every backend, best first, with None if it works here or the reason it does not."""
    return {b: _probe(b) for b in Backend}


def detect_backend() -> Backend:
    """The best backend available here (``plain`` always is)."""
    for b, reason in available_backends().items():
        if reason is None:
            return b
    return Backend.PLAIN


def isolates_network(backend: Backend) -> bool:
    return backend in (Backend.BWRAP, Backend.UNSHARE)


# ----------------------------------------------------------------------------------------------
# Command lines


def _hidden_ancestor(path: Path) -> Path | None:
    """The topmost ancestor of ``path`` that uid 65534 cannot enter (outside /tmp), if any."""
    if path.parts[:2] == ("/", "tmp"):
        return None
    current = Path("/")
    for part in path.parts[1:-1] if path.is_file() else path.parts[1:]:
        current = current / part
        try:
            st = current.stat()
        except OSError:
            return None
        if stat.S_ISDIR(st.st_mode) and not st.st_mode & stat.S_IXOTH:
            return current
    return None


def _open_for_nobody(path: Path) -> None:
    """Let uid 65534 read a bound path itself (o+r, o+x on directories and executables)."""
    with contextlib.suppress(OSError):
        st = path.stat()
        mode = stat.S_IMODE(st.st_mode)
        want = mode | stat.S_IROTH
        if stat.S_ISDIR(st.st_mode) or mode & stat.S_IXUSR:
            want |= stat.S_IXOTH
        if want != mode:
            path.chmod(want)


def _bwrap_layout(
    cwd: Path,
    ro_binds: Sequence[Path],
    auto: Sequence[Path],
    *,
    as_nobody: bool,
    tmp_size: int | None = None,
) -> list[str]:
    """Mount arguments after the read-only root: private /tmp, hidden homes, binds, work dir.

    Files in the private /tmp are memory, so ``tmp_size`` (half the memory limit) bounds it.
    """
    args = ["--dev", "/dev", "--proc", "/proc"]
    if tmp_size is not None:
        args += ["--size", str(tmp_size)]
    args += ["--perms", "1777", "--tmpfs", "/tmp"]
    binds: dict[Path, str] = {}
    hidden: set[Path] = set()
    for p in auto:
        hid = _hidden_ancestor(p) if as_nobody else None
        if hid is not None:
            hidden.add(hid)
        if hid is not None or p.parts[:2] == ("/", "tmp"):
            binds.setdefault(p, "--ro-bind")
    for p in ro_binds:
        binds[p] = "--ro-bind"
        if as_nobody and (hid := _hidden_ancestor(p)) is not None:
            hidden.add(hid)
    if as_nobody and (hid := _hidden_ancestor(cwd)) is not None:
        hidden.add(hid)
    binds[cwd] = "--bind"
    tmpfs = [Path("/tmp")]
    for h in sorted(hidden, key=lambda q: len(q.parts)):
        if not any(h != o and o in h.parents for o in hidden):
            args += ["--tmpfs", str(h)]
            tmpfs.append(h)
    # bwrap gives the mount points it creates on a tmpfs the modes of the source's parents
    # (often 0700); nobody must be able to walk down to every bound path.
    dirs: set[Path] = set()
    for p in binds:
        for t in tmpfs:
            if t in p.parents:
                dirs.update(a for a in p.parents if t in a.parents)
    for d in sorted(dirs, key=lambda q: len(q.parts)):
        args += ["--perms", "0755", "--dir", str(d)]
    ordered = sorted(binds.items(), key=lambda kv: (len(kv[0].parts), kv[1] == "--bind"))
    for p, how in ordered:
        args += [how, str(p), str(p)]
    return args


def _backend_prefix(
    backend: Backend,
    *,
    cwd: Path,
    binds: Sequence[str],
    network: bool,
) -> list[str]:
    """The command that enters the sandbox; the runner's own argv is appended to it."""
    if backend is Backend.PLAIN:
        return []
    if backend is Backend.UNSHARE:
        cmd = [_TOOLS.get(backend, "unshare"), "--kill-child", "--fork", "--pid", "--mount-proc"]
        if not network:
            cmd.append("--net")
        if not _is_root():
            cmd.append("--map-root-user")
        return cmd
    cmd = [_TOOLS.get(backend, "bwrap")]
    if _is_root():
        # Privileged mode, no user namespace: the runner keeps only what it needs to drop each
        # program to nobody and to kill what the program leaves behind.
        cmd += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
        if not network:
            cmd.append("--unshare-net")
        cmd += ["--cap-drop", "ALL"]
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_KILL"]
    else:
        cmd.append("--unshare-all")
        if network:
            cmd.append("--share-net")
    cmd += ["--die-with-parent", "--new-session", "--ro-bind", "/", "/"]
    cmd += list(binds)
    cmd += ["--chdir", str(cwd)]
    return cmd


def _runner_env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", _DEFAULT_PATH), "LANG": "C.UTF-8"}


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


def _resolve_argv0(argv0: str, env: Mapping[str, str], cwd: Path) -> Path | None:
    if "/" in argv0:
        p = Path(argv0) if os.path.isabs(argv0) else cwd / argv0
        return Path(os.path.realpath(p))
    found = shutil.which(argv0, path=env.get("PATH", _DEFAULT_PATH))
    return Path(os.path.realpath(found)) if found else None


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


def _interpreter_paths() -> list[Path]:
    """Our own interpreter's installation: Python programs run with it by absolute path."""
    interp = Path(_interpreter())
    return [Path(sys.prefix), Path(sys.base_prefix), interp.parent.parent]


def _program_paths(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> list[Path]:
    """What the program itself needs to see: its executable (the whole installation when it
    lives in a ``bin/`` directory, as interpreters and compilers do) and absolute paths on its
    command line (a script, an input file)."""
    out: list[Path] = []
    argv0 = _resolve_argv0(argv[0], env, cwd)
    if argv0 is not None and argv0.exists():
        out.append(argv0.parent.parent if argv0.parent.name == "bin" else argv0)
    out += [Path(a) for a in argv[1:] if os.path.isabs(a) and os.path.exists(a)]
    return out


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
        binds: list[str] = []
        runner_argv, runner_needs = _runner_argv()
        if self.backend is Backend.BWRAP:
            auto = [*runner_needs, *_interpreter_paths()]
            auto += _program_paths(self.argv, self.env, self.cwd)
            auto = [Path(os.path.realpath(p)) for p in auto]
            # A path inside another bound path needs no bind of its own.
            auto = [p for p in auto if not any(q in p.parents for q in auto)]
            auto = [p for p in auto if p != self.cwd and self.cwd not in p.parents]
            if as_nobody:
                for p in self.ro_binds:
                    _open_for_nobody(p)
            binds = _bwrap_layout(
                self.cwd,
                self.ro_binds,
                auto,
                as_nobody=as_nobody,
                tmp_size=None if limits.memory_mb is None else limits.memory_mb * MiB // 2,
            )
        cmd = _backend_prefix(self.backend, cwd=self.cwd, binds=binds, network=limits.network)
        cmd += runner_argv
        config = _encode_config(
            self.argv,
            self.env,
            self.cwd,
            NOBODY if as_nobody else None,
            limits.effective_wall,
            limits.output_bytes,
            _rlimits(limits, cgroup_memory=cg.has_memory, cgroup_pids=cg.has_pids),
            clean_tmp=self.backend is Backend.BWRAP,
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
