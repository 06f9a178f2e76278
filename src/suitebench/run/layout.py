"""The backends and what a sandboxed program sees of the file system under each of them.

A run sees the *layout*: the system's read-only directories, a minimal ``/etc``, a fresh
``/dev`` and ``/proc``, a private ``/tmp`` and ``/dev/shm``, the run's work dir (the only
writable place), and read-only the paths the run needs: the runner, the interpreter's
installation, the program (``argv[0]``, its installation when it lives in a ``bin/``
directory, and absolute paths named in ``argv``) and the caller's ``ro_binds``. Nothing else
exists inside: not the user's home, not the working tree, not the problem or instance
directory, not the store, not the build cache entries of other programs.

``bwrap`` builds the layout on an empty root; ``unshare`` builds the same layout in its fresh
mount namespace (``_mount.c``, else ``_mount.py``: mount(2) calls, then chroot) and runs the
runner there; ``plain`` cannot hide anything (see ``docs/architecture.md``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from suitebench.run.outcome import Backend

NOBODY = 65534
START_TIMEOUT = 60.0  # seconds for a sandbox to come up on a loaded machine
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_ROOT = Path("/")

# The system's read-only directories (symlinks such as Debian's /bin -> usr/bin are kept as
# symlinks).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The part of /etc that programs really need: the dynamic linker's cache, user and group names,
# name-service order and hosts (for ``localhost``), the time zone, Debian's alternatives (``cc``,
# ``awk``, ``java`` are symlinks through /etc/alternatives).
ETC_ENTRIES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "localtime",
    "timezone",
    "alternatives",
)

TOOLS: dict[Backend, str] = {}  # absolute paths of bwrap and unshare, found by probe()


def is_root() -> bool:
    return os.geteuid() == 0


def drops_to_nobody(backend: Backend) -> bool:
    """Whether the program runs as uid 65534: under bwrap and unshare when we are root."""
    return backend in (Backend.BWRAP, Backend.UNSHARE) and is_root()


def isolates_network(backend: Backend) -> bool:
    return backend in (Backend.BWRAP, Backend.UNSHARE)


def hides_files(backend: Backend) -> bool:
    """Whether the backend shows the program only its layout (not the whole file system)."""
    return backend in (Backend.BWRAP, Backend.UNSHARE)


def runner_env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", DEFAULT_PATH), "LANG": "C.UTF-8"}


class HasBinDir(Protocol):
    """An interpreter whose ``bin/`` a sandboxed program should find first (a venv's)."""

    @property
    def bin_dir(self) -> str: ...


def sandbox_path(python: HasBinDir | None = None) -> str:
    """PATH inside the sandbox: the venv's bin first (``python`` is the suite's interpreter;
    none: the running interpreter's), then the system's."""
    first = python.bin_dir if python is not None else str(Path(sys.executable).parent)
    return os.pathsep.join([first, "/usr/local/bin", "/usr/bin", "/bin"])


# ----------------------------------------------------------------------------------------------
# The layout


@dataclass
class Layout:
    """Every mount of a sandbox, backend-independent.

    ``ro`` and ``rw`` are absolute real paths bound at the same path; ``dirs`` are the
    directories created (mode 0755) so that bound paths can be reached; ``symlinks`` map a path
    to its link text.
    """

    cwd: Path
    system: list[Path] = field(default_factory=list)  # bound read-only, whole
    symlinks: dict[Path, str] = field(default_factory=dict)
    etc: list[Path] = field(default_factory=list)  # bound read-only
    ro: list[Path] = field(default_factory=list)
    dirs: list[Path] = field(default_factory=list)
    # The bound of the private /tmp and of the private /dev/shm, each (tmpfs pages count
    # against the memory cgroup: a full tmpfs is ENOSPC rather than a memory kill).
    tmp_size: int | None = None


def _covered(path: Path, roots: set[Path]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies under one (a set: a batch binds a tree per
    program, and pairwise checks of their parents cost a second at a hundred trees)."""
    return path in roots or not roots.isdisjoint(path.parents)


def refuse_a_replaced_place(path: Path, real: Path | None = None) -> None:
    """:class:`HiddenPath` for a directory (or a path yet to be made) under ``/dev`` or
    ``/proc``, not a device: a store, a build cache or a temporary directory on ``/dev/shm``
    would have every program's tree missing in its run (the package not found: every test an
    error, V = 0).  ``real``: the path resolved, when the caller has it."""
    real = Path(os.path.realpath(path)) if real is None else real
    for place in (Path("/dev"), Path("/proc")):
        if place in real.parents and (real.is_dir() or not real.exists()):
            raise HiddenPath(
                f"{path} lies in {place}, which the sandbox replaces with its own: a program "
                "run there would not see it. Keep the store (--store), its build cache and "
                "the temporary directory (TMPDIR) out of /dev and /proc."
            )


def build_layout(
    cwd: Path,
    ro_binds: Sequence[Path],
    auto: Sequence[Path],
    *,
    tmp_size: int | None = None,
) -> Layout:
    """The layout of one sandbox: ``ro_binds`` (the caller's) and ``auto`` (the runner, the
    interpreter, the program) read-only, ``cwd`` writable."""
    lay = Layout(cwd=cwd, tmp_size=tmp_size)
    for name in SYSTEM_DIRS:
        p = Path(name)
        if p.is_symlink():
            lay.symlinks[p] = os.readlink(p)
        elif p.is_dir():
            lay.system.append(p)
    for name in ETC_ENTRIES:
        p = Path("/etc") / name
        if p.is_symlink():
            lay.symlinks[p] = os.readlink(p)
        elif p.exists():
            lay.etc.append(p)
    system = {*lay.system, Path("/dev"), Path("/proc")}
    wanted = dict.fromkeys([*ro_binds, *auto])
    refuse_a_replaced_place(cwd)
    ro: list[Path] = []
    for p in wanted:
        real = Path(os.path.realpath(p))
        # The root itself is never bound: it would show the whole file system (``ls /`` names
        # it on its command line).
        if real == _ROOT:
            continue
        refuse_a_replaced_place(p, real)  # (else skipped below as covered by /dev: hidden)
        if not p.exists() or _covered(p, system) or p in lay.symlinks or p in lay.etc:
            continue
        ro.append(p)
    # A path inside another bound path needs no bind of its own, unless the other one is the
    # writable work dir (then it is bound read-only on top of it).
    bound = set(ro)
    lay.ro = sorted((p for p in ro if bound.isdisjoint(p.parents)), key=lambda q: len(q.parts))
    real_trees = {*lay.system, *lay.ro, cwd}
    dirs: set[Path] = set()
    for p in [*lay.ro, cwd]:
        for a in reversed(p.parents):
            if a == Path("/") or a in (Path("/tmp"), Path("/etc")):
                continue
            if _covered(a, real_trees):
                break
            dirs.add(a)
    lay.dirs = sorted(dirs, key=lambda q: (len(q.parts), str(q)))
    return lay


def open_for_nobody(path: Path) -> None:
    """Let uid 65534 read a bound path itself (o+r, o+x on directories and executables)."""
    with contextlib.suppress(OSError):
        st = path.stat()
        mode = stat.S_IMODE(st.st_mode)
        want = mode | stat.S_IROTH
        if stat.S_ISDIR(st.st_mode) or mode & stat.S_IXUSR:
            want |= stat.S_IXOTH
        if want != mode:
            path.chmod(want)


def bwrap_mounts(lay: Layout) -> list[str]:
    """bubblewrap's mount arguments for a layout, parents before children, root read-only."""
    ops: list[tuple[int, int, list[str]]] = []  # (depth, order within a depth, args)

    def add(p: Path, rank: int, args: list[str]) -> None:
        ops.append((len(p.parts), rank, args))

    for p in lay.system:
        add(p, 0, ["--ro-bind", str(p), str(p)])
    for p, target in lay.symlinks.items():
        add(p, 2, ["--symlink", target, str(p)])
    add(Path("/dev"), 0, ["--dev", "/dev"])
    add(Path("/proc"), 0, ["--proc", "/proc"])
    size = [] if lay.tmp_size is None else ["--size", str(lay.tmp_size)]
    add(Path("/tmp"), 0, [*size, "--perms", "1777", "--tmpfs", "/tmp"])
    # ``--dev`` leaves /dev/shm root's and 0755: POSIX semaphores (multiprocessing's SemLock)
    # and shm_open need it writable by the program, and bounded like /tmp.
    add(Path("/dev/shm"), 0, [*size, "--perms", "1777", "--tmpfs", "/dev/shm"])
    add(Path("/etc"), 0, ["--perms", "0755", "--dir", "/etc"])
    for p in lay.etc:
        add(p, 1, ["--ro-bind", str(p), str(p)])
    for d in lay.dirs:
        add(d, 0, ["--perms", "0755", "--dir", str(d)])
    for p in lay.ro:  # (deeper than the work dir when inside it, so bound on top of it)
        add(p, 1, ["--ro-bind", str(p), str(p)])
    add(lay.cwd, 2, ["--bind", str(lay.cwd), str(lay.cwd)])
    ops.sort(key=lambda o: (o[0], o[1]))
    args = [a for _, _, op in ops for a in op]
    return [*args, "--remount-ro", "/"]


def unshare_ops(lay: Layout) -> list[list[str]]:
    """The layout as mount operations ``[kind, path, extra]``, parents before children: what
    ``_mount.c`` (or ``_mount.py``) does in the ``unshare`` backend's fresh mount namespace
    (bubblewrap's mounts, without bubblewrap)."""
    ops: list[tuple[int, int, list[str]]] = []

    def add(p: Path, rank: int, op: list[str]) -> None:
        ops.append((len(p.parts), rank, op))

    for p in lay.system:
        add(p, 0, ["ro", str(p), ""])
    for p, target in lay.symlinks.items():
        add(p, 2, ["symlink", str(p), target])
    size = "" if lay.tmp_size is None else str(lay.tmp_size)
    add(Path("/dev"), 0, ["dev", "/dev", size])  # the size of its private shm
    add(Path("/proc"), 0, ["proc", "/proc", ""])
    add(Path("/tmp"), 0, ["tmp", "/tmp", size])
    add(Path("/etc"), 0, ["dir", "/etc", ""])
    for p in lay.etc:
        add(p, 1, ["ro", str(p), ""])
    for d in lay.dirs:
        add(d, 0, ["dir", str(d), ""])
    for p in lay.ro:
        add(p, 1, ["ro", str(p), ""])
    add(lay.cwd, 2, ["rw", str(lay.cwd), ""])
    ops.sort(key=lambda o: (o[0], o[1]))
    return [op for _, _, op in ops]


_MOUNT_SOURCE = Path(__file__).with_name("_mount.py").read_text()


# ----------------------------------------------------------------------------------------------
# Backends


def mount_argv(lay: Layout, helper: Sequence[str] | None = None) -> list[str]:
    """How the ``unshare`` backend builds ``lay``: the compiled ``_mount.c`` (``helper``) or
    ``_mount.py``, with the layout as arguments; the runner's argv is appended."""
    ops = unshare_ops(lay)
    cmd = list(helper) if helper else [interpreter(), "-I", "-S", "-c", _MOUNT_SOURCE]
    cmd += [_UNSHARE_ROOT, str(lay.cwd), str(len(ops))]
    return cmd + [a for op in ops for a in op]


def backend_prefix(
    backend: Backend,
    *,
    layout: Layout | None,
    network: bool,
    mount_helper: Sequence[str] | None = None,
) -> list[str]:
    """The command that enters the sandbox; the runner's own argv is appended to it.
    ``mount_helper`` is the compiled ``_mount.c`` (the unshare backend's layout builder)."""
    if backend is Backend.PLAIN:
        return []
    if backend is Backend.UNSHARE:
        cmd = [TOOLS.get(backend, "unshare"), "--kill-child", "--fork", "--pid", "--mount-proc"]
        cmd += ["--mount", "--uts", "--ipc"]
        if not network:
            cmd.append("--net")
        if not is_root():
            cmd.append("--map-root-user")
        if layout is not None:
            cmd += mount_argv(layout, mount_helper)
        return cmd
    cmd = [TOOLS.get(backend, "bwrap")]
    if is_root():
        # Privileged mode, no user namespace: the runner keeps only what it needs to drop each
        # program to nobody, to give each run a new IPC namespace (CAP_SYS_ADMIN, gone with the
        # drop to nobody) and to kill what the program leaves behind.
        cmd += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
        if not network:
            cmd.append("--unshare-net")
        cmd += ["--cap-drop", "ALL"]
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_SYS_ADMIN"):
            cmd += ["--cap-add", cap]
    else:
        cmd.append("--unshare-all")
        if network:
            cmd.append("--share-net")
    # The runner is pid 1 (no bwrap reaper inside, whose command line names the host's paths).
    cmd += ["--as-pid-1", "--die-with-parent", "--new-session"]
    if layout is not None:
        cmd += bwrap_mounts(layout)
        cmd += ["--chdir", str(layout.cwd)]
    return cmd


# The unshare backend's new root: a mount point that exists on every system and that nobody
# uses while the namespace lives (the mount is private to the namespace).
_UNSHARE_ROOT = "/mnt"


@functools.cache
def probe(backend: Backend) -> str | None:
    """Start the backend once around ``true``; None if it works, else the reason it does not."""
    if backend is Backend.PLAIN:
        return None
    tool = "bwrap" if backend is Backend.BWRAP else "unshare"
    path = shutil.which(tool)
    if path is None:
        return f"{tool} not found on PATH"
    TOOLS[backend] = path  # sessions use the very binary that was probed
    with tempfile.TemporaryDirectory(prefix="suitebench-probe-") as tmp:
        lay = build_layout(Path(os.path.realpath(tmp)), [], [])
        cmd = backend_prefix(backend, layout=lay, network=False)
        cmd += ["/bin/sh", "-c", "exit 0"]
        try:
            res = subprocess.run(
                cmd, capture_output=True, timeout=START_TIMEOUT, env=runner_env(), cwd=tmp
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{tool} failed to start: {exc}"
    if res.returncode != 0:
        detail = res.stderr.decode(errors="replace").strip().splitlines()
        return f"{tool} failed: {detail[-1] if detail else f'exit {res.returncode}'}"
    return None


def available_backends() -> dict[Backend, str | None]:
    """Every backend, best first, with None if it works here or the reason it does not."""
    return {b: probe(b) for b in Backend}


def best_backend() -> Backend:
    """The best backend that works here (``plain`` always does)."""
    for b, reason in available_backends().items():
        if reason is None:
            return b
    return Backend.PLAIN


# A backend asked for by name for a whole process and the workers it starts: how the command
# line's ``--backend`` reaches code that runs programs without taking a backend (builds, the
# local pool's workers). Nothing else sets it.
BACKEND_ENV = "SUITEBENCH_BACKEND"


class SandboxUnavailable(RuntimeError):
    """No backend that isolates untrusted code works here and none was asked for by name, or
    the backend asked for does not work: nothing may run (the message says what to install)."""


class HiddenPath(SandboxUnavailable):
    """A path the sandbox must show its program lies where the sandbox puts its own (``/dev``,
    ``/proc``): bound there it would be hidden, and the program would run without it."""


def named_backend() -> Backend | None:
    """The backend ``$SUITEBENCH_BACKEND`` names, or None when it is unset."""
    name = os.environ.get(BACKEND_ENV, "").strip()
    if not name:
        return None
    try:
        return Backend(name)
    except ValueError:
        known = ", ".join(map(str, Backend))
        raise SandboxUnavailable(
            f"${BACKEND_ENV}={name!r} is not a backend (known: {known})"
        ) from None


def detect_backend() -> Backend:
    """The backend a run that names none uses here: the one ``$SUITEBENCH_BACKEND`` names,
    else the best available. Whatever records or keys outcomes by backend asks this, so the
    backend recorded is the one that ran (a name that is no backend is refused when a run
    starts, by :func:`choose_backend`)."""
    try:
        named = named_backend()
    except SandboxUnavailable:
        named = None
    return best_backend() if named is None else named


def unsandboxed_refusal(backends: Mapping[Backend, str | None]) -> str:
    """Why nothing runs, what each isolating backend lacks, and the three ways out."""
    missing = "; ".join(f"{b}: {why}" for b, why in backends.items() if why is not None)
    return (
        "no sandbox backend isolates untrusted code here "
        f"({missing}); plain would run it without network or pid isolation (rlimits only), "
        "able to read and write whatever this user may. Install bubblewrap "
        "(Debian/Ubuntu: apt-get install bubblewrap), or run as a user who may create user "
        "namespaces (for unshare), or pass --backend plain or --allow-unsandboxed to run it "
        f"with rlimits only (${BACKEND_ENV}=plain for code without a command line)"
    )


def choose_backend(
    requested: Backend | str | None = None, allow_unsandboxed: bool = False
) -> Backend:
    """The one place that decides where untrusted code runs.

    A backend asked for by name (``requested``, else ``$SUITEBENCH_BACKEND``) is used if it
    works. Otherwise the best one that works is used, but never ``plain`` by accident: on a
    machine without bwrap or a usable unshare this raises :class:`SandboxUnavailable` unless
    ``allow_unsandboxed``. A hostile suite or submission under plain can rewrite reference
    solutions, write under the caller's home and reach local servers.
    """
    if requested is not None:
        try:
            named: Backend | None = Backend(requested)
        except ValueError:
            known = ", ".join(map(str, Backend))
            raise SandboxUnavailable(f"unknown backend {requested!r} (known: {known})") from None
    else:
        named = named_backend()
    if named is not None:
        reason = probe(named)
        if reason is not None:
            raise SandboxUnavailable(f"backend {named} unavailable: {reason}")
        return named
    backends = available_backends()
    best = next((b for b, why in backends.items() if why is None), Backend.PLAIN)
    if best is Backend.PLAIN and not allow_unsandboxed:
        raise SandboxUnavailable(unsandboxed_refusal(backends))
    return best


# ----------------------------------------------------------------------------------------------
# What a run needs to see


def interpreter() -> str:
    """The interpreter the Python runner is started with (absolute)."""
    return os.path.realpath(sys.executable) if sys.executable else "/usr/bin/python3"


def interpreter_paths() -> list[Path]:
    """Our own interpreter's installation: Python programs run with it by absolute path."""
    interp = Path(interpreter())
    return [Path(sys.prefix), Path(sys.base_prefix), interp.parent.parent]


def resolve_argv0(argv0: str, env: Mapping[str, str], cwd: Path) -> Path | None:
    if "/" in argv0:
        p = Path(argv0) if os.path.isabs(argv0) else cwd / argv0
        return Path(os.path.realpath(p))
    found = shutil.which(argv0, path=env.get("PATH", DEFAULT_PATH))
    return Path(os.path.realpath(found)) if found else None


def program_paths(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> list[Path]:
    """What the program itself needs to see: its executable (the whole installation when it
    lives in a ``bin/`` directory, as interpreters and compilers do) and absolute paths on its
    command line (a script, an input file)."""
    out: list[Path] = []
    argv0 = resolve_argv0(argv[0], env, cwd)
    if argv0 is not None and argv0.exists():
        install = argv0.parent.parent
        out.append(install if argv0.parent.name == "bin" and install != _ROOT else argv0)
    out += [Path(a) for a in argv[1:] if os.path.isabs(a) and os.path.exists(a)]
    return out


# ----------------------------------------------------------------------------------------------
# Version-manager shims (pyenv, rbenv, nodenv, ...)
#
# A shim is a small script in ``~/.pyenv/shims`` that asks the version manager which real
# interpreter to run; the manager lives in a home directory the sandbox does not show. So a
# shim directory on PATH is replaced by the ``bin/`` directories of the installations it would
# pick here, and those installations are shown read-only, like the interpreter.

_SHIM_EXEC = re.compile(rb'exec "([^"]+)" exec "\$program"')


def _shim_manager(path: Path) -> str | None:
    """The version manager a shim script execs (``.../libexec/pyenv``), or None."""
    if path.parent.name != "shims":
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(2048)
    except OSError:
        return None
    m = _SHIM_EXEC.search(head) if head.startswith(b"#!") else None
    return os.fsdecode(m.group(1)) if m else None


@functools.cache
def _manager_answer(manager: str, args: tuple[str, ...], cwd: str, version: str) -> str | None:
    """The manager's answer, asked up to three times: a version manager's script can fail
    for a moment (seen once under load: ``pyenv prefix`` answered nothing, and the sandbox's
    ``python3`` became the system's)."""
    env = {k: v for k, v in os.environ.items() if k != "PYENV_VERSION"}
    if version:
        env["PYENV_VERSION"] = version
    for _ in range(3):
        try:
            res = subprocess.run(
                [manager, *args], capture_output=True, timeout=30, cwd=cwd, env=env, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        text = res.stdout.decode(errors="replace").strip()
        if res.returncode == 0 and text:
            return text
    return None


def _ask_manager(manager: str, *args: str) -> str | None:
    """The manager's answer for the caller's directory and PYENV_VERSION-style setting."""
    return _manager_answer(manager, args, os.getcwd(), os.environ.get("PYENV_VERSION", ""))


def resolve_shim(path: Path) -> Path | None:
    """The real executable a shim would run here (``pyenv which python3``), or None."""
    manager = _shim_manager(path)
    if manager is None:
        return None
    found = _ask_manager(manager, "which", path.name)
    return Path(found) if found and os.path.isabs(found) else None


def unshim_path(path: str) -> tuple[str, list[Path]]:
    """PATH with each shim directory replaced by the real ``bin/`` directories it would pick,
    and the installations those belong to (to be shown read-only)."""
    entries: list[str] = []
    roots: list[Path] = []
    for entry in path.split(os.pathsep):
        d = Path(entry)
        shim = next((p for p in _shim_candidates(d)), None) if d.name == "shims" else None
        manager = _shim_manager(shim) if shim is not None else None
        if manager is None:
            entries.append(entry)
            continue
        prefixes = _ask_manager(manager, "prefix") or ""
        for prefix in prefixes.split(os.pathsep):
            if prefix and os.path.isabs(prefix) and Path(prefix, "bin").is_dir():
                entries.append(str(Path(prefix, "bin")))
                roots.append(Path(prefix))
    return os.pathsep.join(dict.fromkeys(entries)), roots


def _shim_candidates(d: Path) -> Iterable[Path]:
    """A few scripts of a shims directory (any one tells which manager owns it)."""
    try:
        with os.scandir(d) as it:
            for n, e in enumerate(it):
                if n > 20:
                    return
                if e.is_file():
                    yield Path(e.path)
    except OSError:
        return
