"""Memory and process limits through cgroups (v1 or v2), whichever is writable here.

Why a cgroup and not an rlimit: a memory kill must be *reported as memory* from the kernel's own
counter (v1 ``memory.oom_control`` ``oom_kill``, v2 ``memory.events`` ``oom_kill``), never guessed
from exit code 137, which a CPU-limit SIGKILL produces too. ``RLIMIT_AS`` only makes allocations
fail, so a program under it dies with its own error and the harness cannot tell it from a bug.
Likewise ``pids.max`` bounds the processes of one sandbox exactly, where ``RLIMIT_NPROC`` counts
every process of a uid on the host (and does not apply to root at all).

A :class:`RunCgroup` is created per sandbox session (one batch of runs of one program), below the
cgroup this process already lives in, so the caller's own limits keep applying to everything the
sandbox does. The sandbox process is attached once when it starts (attaching costs milliseconds on
v1, so never per run); runs inside a session are sequential, so the coordinator reads and resets
the counters between runs. :meth:`RunCgroup.close` kills whatever is still in the group and
removes it.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
_PREFIX = "suitebench-"
_counter = itertools.count()
_lock = threading.Lock()
_usable_cache: dict[str, Path | None] = {}


class CgroupVersion(StrEnum):
    """Which cgroup interface a controller was found through."""

    V1 = "v1"
    V2 = "v2"


@dataclass(frozen=True)
class ControllerInfo:
    """What ``suitebench doctor`` reports about one controller (memory or pids)."""

    controller: str
    version: CgroupVersion | None  # None: not mounted anywhere
    parent: str | None  # where our groups are created
    writable: bool
    reason: str = ""


def _own_paths() -> dict[str, str]:
    """Map controller name (v1) or "" (the v2 unified line) to this process's cgroup path."""
    out: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, ctrls, path = parts
        if ctrls == "":
            out[""] = path
        for c in ctrls.split(","):
            if c:
                out[c] = path
    return out


def _candidate_parent(controller: str) -> tuple[CgroupVersion, Path] | None:
    """The directory our groups for ``controller`` would be created in, v1 preferred if mounted."""
    own = _own_paths()
    v1_mount = CGROUP_ROOT / controller
    if (v1_mount / "cgroup.procs").exists() and controller in own:
        return CgroupVersion.V1, v1_mount / own[controller].lstrip("/")
    v2_root = CGROUP_ROOT
    for cand in (v2_root, v2_root / "unified"):
        ctl = cand / "cgroup.controllers"
        if ctl.exists():
            with contextlib.suppress(OSError):
                if controller in ctl.read_text().split():
                    return CgroupVersion.V2, cand / own.get("", "/").lstrip("/")
    return None


def _v2_enable(parent: Path, controller: str) -> bool:
    """Make ``controller`` available to children of ``parent`` (v2 ``subtree_control``)."""
    try:
        if controller in (parent / "cgroup.subtree_control").read_text().split():
            return True
        (parent / "cgroup.subtree_control").write_text(f"+{controller}")
        return True
    except OSError:
        return False


def _sweep_stale(parent: Path) -> None:
    """Remove empty groups left by a coordinator that died without cleaning up."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for d in entries:
        if not d.name.startswith(_PREFIX) or not d.is_dir():
            continue
        try:
            owner = int(d.name[len(_PREFIX) :].split("-", 1)[0])
        except ValueError:
            continue
        if owner == os.getpid() or Path(f"/proc/{owner}").exists():
            continue
        with contextlib.suppress(OSError):
            _kill_members(d, timeout=1.0)
            d.rmdir()


def usable_parent(controller: str) -> Path | None:
    """The parent directory for our groups of ``controller``, if we can create groups there.

    Probed once per process by creating and removing a group (the only honest writability test).
    """
    with _lock:
        if controller in _usable_cache:
            return _usable_cache[controller]
        found = _candidate_parent(controller)
        result: Path | None = None
        if found is not None:
            version, parent = found
            probe = parent / f"{_PREFIX}{os.getpid()}-probe-{next(_counter)}"
            try:
                if version is CgroupVersion.V2 and not _v2_enable(parent, controller):
                    raise OSError(errno.EACCES, "controller not delegated")
                probe.mkdir()
                if controller == "pids":
                    marker = "pids.max"
                elif version is CgroupVersion.V1:
                    marker = "memory.limit_in_bytes"
                else:
                    marker = "memory.max"
                ok = (probe / marker).exists()
                probe.rmdir()
                if ok:
                    result = parent
                    _sweep_stale(parent)
            except OSError:
                with contextlib.suppress(OSError):
                    probe.rmdir()
        _usable_cache[controller] = result
        return result


def describe() -> list[ControllerInfo]:
    """Memory and pids controllers: version, where our groups go, whether that is writable."""
    out = []
    for controller in ("memory", "pids"):
        found = _candidate_parent(controller)
        if found is None:
            out.append(ControllerInfo(controller, None, None, False, "not mounted"))
            continue
        version, parent = found
        usable = usable_parent(controller)
        reason = "" if usable else "cannot create a child group (no permission or not delegated)"
        out.append(ControllerInfo(controller, version, str(parent), usable is not None, reason))
    return out


def _read_small(path: str | Path) -> str:
    """A small control file's text, read with one ``open``/``read``/``close`` (sessions read
    several per run: pathlib's and io's layers cost more than the reads themselves)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 1 << 16).decode()
    finally:
        os.close(fd)


def _write_small(path: str | Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _read_int(path: str | Path) -> int | None:
    try:
        text = _read_small(path).strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _read_keyed(path: str | Path, key: str) -> int:
    try:
        for line in _read_small(path).splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
    except (OSError, ValueError):
        pass
    return 0


def _members(group: Path) -> list[int]:
    try:
        return [int(x) for x in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_members(group: Path, *, timeout: float) -> bool:
    """SIGKILL every process in ``group`` until it is empty; True if it emptied in time."""
    deadline = time.monotonic() + timeout
    while True:
        pids = _members(group)
        if not pids:
            return True
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)


class RunCgroup:
    """The memory and pids groups of one sandbox session.

    ``memory_bytes``/``pids_max`` are applied by :meth:`set_limits` once the session's own
    footprint (the sandbox and its runner, which live in the group too) is known, so the program
    gets its full allowance on top of that baseline.
    """

    def __init__(self, *, memory: bool, pids: bool) -> None:
        self.memory_dir: Path | None = None
        self.pids_dir: Path | None = None
        self.memory_version: CgroupVersion | None = None
        name = f"{_PREFIX}{os.getpid()}-{next(_counter)}-{os.urandom(3).hex()}"
        if memory and (parent := usable_parent("memory")) is not None:
            with contextlib.suppress(OSError):
                (parent / name).mkdir()
                self.memory_dir = parent / name
                self.memory_version = (
                    CgroupVersion.V1
                    if (self.memory_dir / "memory.limit_in_bytes").exists()
                    else CgroupVersion.V2
                )
        if pids and (parent := usable_parent("pids")) is not None:
            target = parent / name
            if self.memory_dir is not None and target == self.memory_dir:
                self.pids_dir = target  # v2: one group carries both controllers
            else:
                with contextlib.suppress(OSError):
                    target.mkdir()
                    self.pids_dir = target
        self._oom_seen = 0
        # the files read or written around every run, as plain strings (see _read_small)
        m = self.memory_dir
        v1 = self.memory_version is CgroupVersion.V1
        self._usage_file = (
            "" if m is None else str(m / ("memory.usage_in_bytes" if v1 else "memory.current"))
        )
        self._oom_file = (
            "" if m is None else str(m / ("memory.oom_control" if v1 else "memory.events"))
        )
        self._peak_file = str(m / "memory.max_usage_in_bytes") if m is not None and v1 else ""
        self._stat_file = "" if m is None else str(m / "memory.stat")

    @property
    def has_memory(self) -> bool:
        return self.memory_dir is not None

    @property
    def has_pids(self) -> bool:
        return self.pids_dir is not None

    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files a starting process writes its pid into (once)."""
        dirs = {d for d in (self.memory_dir, self.pids_dir) if d is not None}
        return [str(d / "cgroup.procs") for d in sorted(dirs)]

    def attach_self(self) -> None:
        """Move the calling process into the groups (used in the sandbox child before exec)."""
        me = str(os.getpid()).encode()
        for f in self.procs_files():
            fd = os.open(f, os.O_WRONLY)
            try:
                os.write(fd, me)
            finally:
                os.close(fd)

    def memory_usage(self) -> int:
        if self.memory_dir is None:
            return 0
        return _read_int(self._usage_file) or 0

    def pids_current(self) -> int:
        if self.pids_dir is None:
            return 0
        return _read_int(self.pids_dir / "pids.current") or len(_members(self.pids_dir))

    def set_limits(self, *, memory_bytes: int | None, pids_max: int | None) -> None:
        """Apply the limits; v1 sets ``memsw`` too so swap cannot stretch the memory limit."""
        if self.memory_dir is not None and memory_bytes is not None:
            d = self.memory_dir
            if self.memory_version is CgroupVersion.V1:
                (d / "memory.limit_in_bytes").write_text(str(memory_bytes))
                if (d / "memory.memsw.limit_in_bytes").exists():
                    with contextlib.suppress(OSError):
                        (d / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
            else:
                (d / "memory.max").write_text(str(memory_bytes))
                if (d / "memory.swap.max").exists():
                    with contextlib.suppress(OSError):
                        (d / "memory.swap.max").write_text("0")
        if self.pids_dir is not None and pids_max is not None:
            (self.pids_dir / "pids.max").write_text(str(pids_max))
        self._oom_seen = self.oom_kills()

    def oom_kills(self) -> int:
        """The kernel's count of OOM kills inside the group: the reliable MLE signal."""
        if self.memory_dir is None:
            return 0
        return _read_keyed(self._oom_file, "oom_kill")

    def new_oom_kills(self) -> int:
        """OOM kills since the last call (or since the limits were set)."""
        now = self.oom_kills()
        delta, self._oom_seen = now - self._oom_seen, now
        return delta

    def file_pages(self) -> int:
        """Bytes of file pages (the page cache) charged to the group: those its runs read first."""
        if self.memory_dir is None:
            return 0
        try:
            stat = _read_small(self._stat_file)
        except OSError:
            return 0
        total = 0
        for line in stat.splitlines():
            key, _, value = line.partition(" ")
            if key in ("inactive_file", "active_file"):
                total += int(value)
        return total

    def drop_page_cache(self) -> None:
        """Evict every page the group brought into the page cache (a page is charged to the
        group of the process that first read it): what a run read first leaves with it, so no
        later run can time a read to learn it (docs/threat-model.md, "State the kernel keeps").
        Nothing to do, and nothing paid, when the run read no file nobody else had read; else
        v1 ``memory.force_empty``, v2 ``memory.reclaim`` of the file pages (the runner's own
        memory stays: there is nothing to swap it to)."""
        pages = self.file_pages()
        if not pages or self.memory_dir is None:
            return
        with contextlib.suppress(OSError):  # v2: EAGAIN when not all of it could go
            if self.memory_version is CgroupVersion.V1:
                _write_small(self.memory_dir / "memory.force_empty", "0")
            else:
                _write_small(self.memory_dir / "memory.reclaim", f"{pages} swappiness=0")

    def reset_peak(self) -> bool:
        """Start a new peak measurement; False where the kernel cannot reset it (v2)."""
        if self.memory_dir is None or not self._peak_file:
            return False
        try:
            _write_small(self._peak_file, "0")
        except OSError:
            return False
        return True

    def peak(self) -> int | None:
        """Peak memory charged to the group since the last reset (v1), in bytes."""
        if self.memory_dir is None or not self._peak_file:
            return None
        return _read_int(self._peak_file)

    def kill_all(self, timeout: float = 5.0) -> bool:
        ok = True
        for d in {self.memory_dir, self.pids_dir}:
            if d is not None:
                ok = _kill_members(d, timeout=timeout) and ok
        return ok

    def close(self) -> None:
        """Kill what is left and remove the groups (rmdir retries while zombies drain)."""
        self.kill_all()
        for d in {self.memory_dir, self.pids_dir}:
            if d is None:
                continue
            for _ in range(200):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    _kill_members(d, timeout=0.1)
                    time.sleep(0.005)
        self.memory_dir = self.pids_dir = None
