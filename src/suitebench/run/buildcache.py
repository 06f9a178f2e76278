"""The build cache both kinds of program share: entries, their records, a lock per entry, what a
finished build's outcome means, and sealing a finished entry.

A build cache entry is ``cache_dir/<program_id>/`` with its record ``built.json`` (a
:class:`~suitebench.run.program.Built`) written last: an entry without its record is a build
that died halfway and is built again. A second build of the same program is a dictionary
look-up (this process) or a read of the record (another one); the record's paths follow the
entry when the cache was moved. :mod:`suitebench.run.toolchain` builds a :class:`Program` in a
temporary directory and renames it into place; :mod:`suitebench.run.tree` builds a source tree
in place (its build script may bake absolute paths in) under the entry's lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from suitebench.run.outcome import Limits, Outcome, Status
from suitebench.run.program import Built

RECORD = "built.json"
SCRATCH = ".suitebench-scratch"  # compiler temp files, toolchain caches: removed after a build
STALE_SECONDS = 3600.0

_memo: dict[tuple[str, str], Built] = {}
_memo_lock = threading.Lock()
_swept: set[Path] = set()


def recall(cache: Path, pid: str) -> Built | None:
    """The build of ``pid`` this process made or found before, while its entry is there."""
    with _memo_lock:
        hit = _memo.get((str(cache), pid))
    if hit is not None and (cache / pid / RECORD).exists():
        return hit
    return None


def remember(cache: Path, pid: str, built: Built) -> None:
    with _memo_lock:
        _memo[(str(cache), pid)] = dataclasses.replace(built, cached=True)


def load_cached(final: Path, pid: str, workdir: Path | None = None) -> Built | None:
    """The record of the entry ``final``, or None when there is none (or another program's).
    Paths in it follow the entry (``workdir``: where the built files are, default the entry)
    if it was built where the cache used to be."""
    try:
        d = json.loads((final / RECORD).read_text())
    except (OSError, ValueError):
        return None
    if d.get("program_id") != pid:
        return None
    built = Built.from_dict(d)
    here = final if workdir is None else workdir
    old = d.get("workdir", "")
    argv = tuple(a.replace(old, str(here)) if old else a for a in built.argv)
    return dataclasses.replace(built, workdir=here, cached=True, argv=argv)


def write_record(final: Path, built: Built) -> None:
    """The entry's record, written whole or not at all (the last step of a build)."""
    partial = final / f"{RECORD}.part"
    partial.write_text(json.dumps(built.to_dict(), sort_keys=True, indent=1))
    os.replace(partial, final / RECORD)


@contextlib.contextmanager
def entry_lock(cache: Path, pid: str) -> Iterator[None]:
    """One builder per entry at a time (threads, processes, concurrent runs): a lock file
    beside the entry."""
    with open(cache / f"{pid}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def sweep_stale(cache: Path) -> None:
    """Remove build directories a killed process left behind (once per cache per process)."""
    with _memo_lock:
        if cache in _swept:
            return
        _swept.add(cache)
    now = time.time()
    for p in cache.glob(".build-*"):
        with contextlib.suppress(OSError):
            if now - p.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(p, ignore_errors=True)


def verdict(
    outcome: Outcome, limits: Limits, *, tail: int | None = None
) -> tuple[Status, str, bool]:
    """What a build command's outcome means: its status (``ok``, ``build_error``, or
    ``sandbox_error`` when the harness failed), its message (the command's output, the last
    ``tail`` characters of it if given) and whether it may be cached. A build that ran out of
    time or memory may succeed with more, and limits are not part of a program's identity."""
    text = (outcome.stderr + outcome.stdout).decode("utf-8", "replace").strip()
    if tail is not None:
        text = text[-tail:]
    if outcome.status is Status.OK:
        return Status.OK, text, True
    if outcome.status is Status.SANDBOX_ERROR:
        return (
            Status.SANDBOX_ERROR,
            f"build could not run: {outcome.message}\n{text}".strip(),
            False,
        )
    if outcome.status is Status.TIMEOUT:
        message = f"build timed out after {outcome.wall_time:.1f}s\n{text}".strip()
        return Status.BUILD_ERROR, message, False
    if outcome.status is Status.MEMORY:
        message = f"build ran out of memory ({limits.memory_mb} MiB)\n{text}".strip()
        return Status.BUILD_ERROR, message, False
    how = (
        f"exit code {outcome.exit_code}"
        if outcome.exit_code is not None
        else f"{outcome.status} (signal {outcome.signal})"
    )
    return Status.BUILD_ERROR, f"build failed ({how})\n{text}".strip(), True


def seal(root: Path) -> None:
    """Make a finished build ours and read-only to everybody else.

    The sandboxed build may have run as an unprivileged user who then owns what it wrote; a
    later untrusted run as that same user must not be able to change a cached artifact. So
    (when we can) ownership returns to us, write permission is ours alone, and everything stays
    readable (and executable where it was) for the sandboxed runs.
    """
    uid, gid = os.geteuid(), os.getegid()
    paths = [root]
    for dirpath, dirnames, filenames in os.walk(root):
        paths.extend(Path(dirpath) / d for d in dirnames)
        paths.extend(Path(dirpath) / f for f in filenames)
    for p in paths:
        with contextlib.suppress(OSError):
            st = p.lstat()
            if st.st_uid != uid and uid == 0:
                os.lchown(p, uid, gid)
            if stat.S_ISLNK(st.st_mode):
                continue
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                p.chmod(0o755)
            else:
                p.chmod((mode & ~0o022 & ~0o7000) | 0o644 | (0o111 if mode & 0o111 else 0))
