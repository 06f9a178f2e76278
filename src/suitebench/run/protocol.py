"""The in-sandbox runner, seen from the coordinator: how it is built and started, the binary
protocol it speaks (documented in ``_runner.c``), and how the facts it reports become a status.

The runner is ``_runner.c``, compiled once per machine into ``~/.cache/suitebench`` (or
``$XDG_CACHE_HOME``), else ``_runner.py`` on the same interpreter with ``-I -S``; set
``SUITEBENCH_RUNNER=python`` to force the latter.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import os
import resource
import shutil
import signal
import struct
import subprocess
import threading
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from suitebench.run.layout import interpreter, runner_env
from suitebench.run.outcome import Limits, MiB, Status

log = logging.getLogger(__name__)

RUNNER_SOURCE = Path(__file__).with_name("_runner.py").read_text()


def rlimits(
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


def encode_config(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    uid: int | None,
    wall: float,
    output_bytes: int,
    rlimits: Sequence[tuple[int, int, int]],
    *,
    clean_tmp: bool = False,
    new_ipc: bool = False,
    seccomp: bytes = b"",
) -> bytes:
    """The runner's binary config (the protocol is documented in ``_runner.c``): with
    ``new_ipc`` every run gets a new IPC namespace, and ``seccomp`` is the compiled filter
    (:mod:`suitebench.run.syscalls`) every program is started under (empty: none)."""

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
    parts.append(struct.pack(">I", (1 if clean_tmp else 0) | (2 if new_ipc else 0)))
    parts.append(struct.pack(">I", len(seccomp)) + seccomp)
    return b"".join(parts)


REPLY = struct.Struct(">iiQQQIIIQQI")


def runner_source_path(name: str) -> Path:
    return Path(__file__).with_name(name)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "suitebench"


@functools.cache
def c_runner() -> Path | None:
    """The compiled C runner, built once per machine and cached by a hash of its source.

    None when ``SUITEBENCH_RUNNER=python`` asks for the Python runner or no C compiler works.
    """
    if os.environ.get("SUITEBENCH_RUNNER", "").lower() == "python":
        return None
    return _compiled("_runner.c", "runner")


@functools.cache
def mount_helper() -> Path | None:
    """The compiled ``_mount.c`` (the unshare backend's layout builder), or None to use
    ``_mount.py`` (also when ``SUITEBENCH_RUNNER=python`` asks for no compiled helpers)."""
    if os.environ.get("SUITEBENCH_RUNNER", "").lower() == "python":
        return None
    return _compiled("_mount.c", "mount")


# One compile at a time in a process: ``functools.cache`` lets two threads that ask at once
# both compute, and on a fresh machine a score's pool asks from every thread together.
_COMPILING = threading.Lock()


def _compiled(source: str, name: str) -> Path | None:
    """``source`` compiled once per machine into the cache, named by a hash of the source;
    None if no C compiler works or the binary does not start here."""
    with _COMPILING:
        return _compile(source, name)


def _compile(source: str, name: str) -> Path | None:
    src = runner_source_path(source)
    try:
        code = src.read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(code).hexdigest()[:16]
    target = cache_dir() / f"{name}-{digest}"
    if os.access(target, os.X_OK) and runner_starts(target):
        return target
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        log.info("no C compiler: the sandbox uses the slower Python %s", name)
        return None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        res = subprocess.run(
            [cc, "-O2", "-o", str(tmp), str(src)],
            capture_output=True,
            timeout=120,
            env=runner_env(),
            check=False,
        )
        if res.returncode != 0:
            log.warning("cannot build the C %s, using the Python one: %s", name, res.stderr[-500:])
            return None
        tmp.chmod(0o755)
        os.replace(tmp, target)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("cannot build the C %s, using the Python one: %s", name, exc)
        return None
    if not runner_starts(target):
        log.warning(
            "the C %s %s does not start (noexec cache?): using the Python one", name, target
        )
        return None
    return target


def runner_starts(binary: Path) -> bool:
    """The binary executes here (a cache on a noexec mount, or built elsewhere, would not):
    without a config it exits 3 at once."""
    try:
        res = subprocess.run(
            [str(binary)], stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 3


def runner_argv() -> tuple[list[str], list[Path]]:
    """How to start the runner inside the sandbox, and the paths it needs to see."""
    binary = c_runner()
    if binary is not None:
        return [str(binary)], [binary]
    return [interpreter(), "-I", "-S", "-c", RUNNER_SOURCE], []


def classify(
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
