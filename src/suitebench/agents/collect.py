"""Copy an agent's output out of its workspace without ever following a link on the host.

The workspace is written by untrusted code, and the harness reads it outside the sandbox (as
root, under bubblewrap): a symbolic link the agent left there points wherever it likes, and a
host-side copy that follows it reads the reference source, the mutants, the store or
``/etc/shadow`` on the agent's behalf -- a differential test against the reference then scores
above the reference suite itself. So every path is opened one component at a time beneath a
directory descriptor with ``O_NOFOLLOW`` (the top directory and each component of the output's
own path too), and only what is a regular file or a directory *there* is copied:

* a symbolic link, anywhere, is refused (and its target recorded: a link to a held-out path is a
  leak attempt the trajectory audit reports);
* a regular file with more links than the collected tree holds (a hard link: it may be the same
  inode as a file outside the workspace) is refused; links that all lie inside the tree are
  copied;
* fifos, sockets and device nodes are refused (opening them could block or read a device);
* at most ``max_files`` files and ``max_bytes`` bytes are copied, ``max_depth`` levels deep: a
  workspace of huge or countless files must not fill the disk or stall the run.

Every refusal is a :class:`Refusal` in the :class:`Collection`, which the harness records in
``agent.json`` as ``collect.refused``. Nothing is silently skipped except the names the caller
asks to ignore (``__pycache__``, the brief).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

MAX_FILES = 20_000
MAX_BYTES = 512 * 1024 * 1024
MAX_DEPTH = 48
MAX_LISTED = 200  # refusals listed one by one; the rest are counted

Reason = Literal[
    "symbolic link",
    "hard link",
    "special file",
    "not a file",
    "over the file cap",
    "over the size cap",
    "too deep",
    "unreadable",
    "changed while collected",
]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Refusal:
    """One entry of the workspace that was not collected, and why."""

    path: str  # relative to the workspace root
    reason: Reason
    target: str | None = None  # a symbolic link's target, as the agent wrote it

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "reason": self.reason}
        if self.target is not None:
            out["target"] = self.target
        return out


@dataclass
class Collection:
    """What one collection copied (relative paths under ``dest``) and what it refused."""

    dest: Path
    files: list[str] = field(default_factory=list)
    bytes: int = 0
    refused: list[Refusal] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": len(self.files),
            "bytes": self.bytes,
            "refused": [r.to_dict() for r in self.refused[:MAX_LISTED]],
            "refused_total": len(self.refused),
        }


def merge(collections: list[Collection]) -> dict[str, Any]:
    """One ``collect`` record for a round: every collection's counts and refusals together."""
    refused = [r for c in collections for r in c.refused]
    return {
        "files": sum(len(c.files) for c in collections),
        "bytes": sum(c.bytes for c in collections),
        "refused": [r.to_dict() for r in refused[:MAX_LISTED]],
        "refused_total": len(refused),
    }


@dataclass
class _Limits:
    max_files: int
    max_bytes: int
    max_depth: int


@dataclass
class _Walk:
    """State of one collection. Hard-linked files wait until the walk is done, when it is known
    how many of each inode's links lie inside the tree."""

    root_fd: int
    out: Collection
    limits: _Limits
    ignore: frozenset[str]
    linked: dict[tuple[int, int], list[tuple[tuple[str, ...], Path]]] = field(default_factory=dict)


def _rel(parts: tuple[str, ...]) -> str:
    return "/".join(parts) if parts else "."


@contextmanager
def _fd(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


def _open_dir_beneath(root_fd: int, parts: tuple[str, ...]) -> int:
    """A descriptor of ``parts`` beneath ``root_fd``, no component followed if it is a link
    (``OSError`` ``ELOOP``/``ENOTDIR`` then)."""
    fd = os.dup(root_fd)
    for name in parts:
        try:
            nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = nxt
    return fd


def _refused(w: _Walk, dir_fd: int, parts: tuple[str, ...]) -> bool:
    """Record why the entry ``parts[-1]`` of ``dir_fd`` (not a directory) cannot be collected;
    False when it is a regular file, which may be."""
    name = parts[-1]
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        w.out.refused.append(Refusal(_rel(parts), "unreadable"))
        return True
    if stat.S_ISLNK(st.st_mode):
        try:
            target: str | None = os.readlink(name, dir_fd=dir_fd)
        except OSError:
            target = None
        w.out.refused.append(Refusal(_rel(parts), "symbolic link", target))
        return True
    if not stat.S_ISREG(st.st_mode):
        w.out.refused.append(Refusal(_rel(parts), "special file"))
        return True
    return False


def _copy_file(
    w: _Walk, dir_fd: int, parts: tuple[str, ...], dest: Path, *, links_inside: int | None = None
) -> None:
    """Copy the regular file ``parts[-1]`` of ``dir_fd`` to ``dest``, read from a descriptor
    opened with ``O_NOFOLLOW``: the inode checked (``fstat``) is the one read, whatever the
    name points at by then. A file with more than one link waits for :func:`_copy_linked`
    (``links_inside`` None), which copies it only if it has no more than ``links_inside``."""
    lim = w.limits
    where = _rel(parts)
    if len(w.out.files) >= lim.max_files:
        w.out.refused.append(Refusal(where, "over the file cap"))
        return
    try:
        src = os.open(parts[-1], _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        reason: Reason = "symbolic link" if exc.errno == errno.ELOOP else "unreadable"
        w.out.refused.append(Refusal(where, reason))
        return
    with _fd(src):
        st = os.fstat(src)
        if not stat.S_ISREG(st.st_mode):
            w.out.refused.append(Refusal(where, "special file"))
            return
        if st.st_nlink > (links_inside or 1):
            if links_inside is None:
                w.linked.setdefault((st.st_dev, st.st_ino), []).append((parts, dest))
            else:
                w.out.refused.append(Refusal(where, "hard link"))
            return
        budget = lim.max_bytes - w.out.bytes
        if st.st_size > budget:
            w.out.refused.append(Refusal(where, "over the size cap"))
            return
        dest.parent.mkdir(parents=True, exist_ok=True)
        mode = stat.S_IMODE(st.st_mode) & 0o777 | 0o600
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        written = 0
        with _fd(os.open(dest, flags, mode)) as out:
            while chunk := os.read(src, _CHUNK):
                written += len(chunk)
                if written > budget:  # it grew after the fstat
                    break
                os.write(out, chunk)
        if written > budget:
            dest.unlink()
            w.out.refused.append(Refusal(where, "over the size cap"))
            return
        os.chmod(dest, mode)
        os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))
    w.out.files.append(dest.relative_to(w.out.dest).as_posix())
    w.out.bytes += written


def _walk(w: _Walk, dir_fd: int, parts: tuple[str, ...], dest: Path, depth: int) -> None:
    """Depth-first, one open descriptor per level; ``parts`` is relative to the workspace."""
    if depth > w.limits.max_depth:
        w.out.refused.append(Refusal(_rel(parts), "too deep"))
        return
    dest.mkdir(parents=True, exist_ok=True)
    with os.scandir(dir_fd) as it:
        names = sorted(e.name for e in it)
    for name in names:
        if name in w.ignore:
            continue
        sub = (*parts, name)
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                w.out.refused.append(Refusal(_rel(sub), "unreadable"))
            elif not _refused(w, dir_fd, sub):
                _copy_file(w, dir_fd, sub, dest / name)
            continue
        with _fd(child):
            _walk(w, child, sub, dest / name, depth + 1)


def _copy_linked(w: _Walk) -> None:
    """Hard-linked files: copied when every link of the inode lies inside the collected tree
    (the agent linked its own files), refused when one lies elsewhere -- it may be any file on
    the same file system."""
    for paths in sorted(w.linked.values()):
        for parts, dest in paths:
            try:
                parent = _open_dir_beneath(w.root_fd, parts[:-1])
            except OSError:
                w.out.refused.append(Refusal(_rel(parts), "changed while collected"))
                continue
            with _fd(parent):
                _copy_file(w, parent, parts, dest, links_inside=len(paths))


def _parts(rel: str) -> tuple[str, ...]:
    return tuple(p for p in Path(rel).parts if p not in ("", "."))


def _refuse_path(w: _Walk, parts: tuple[str, ...]) -> None:
    """The first component of ``parts`` that is not a directory (a link, a file) is refused."""
    for i in range(len(parts)):
        with _fd(_open_dir_beneath(w.root_fd, parts[:i])) as parent:
            try:
                st = os.stat(parts[i], dir_fd=parent, follow_symlinks=False)
            except OSError:
                return
            if not stat.S_ISDIR(st.st_mode):
                _refused(w, parent, parts[: i + 1])
                return


def collect_tree(
    root: Path,
    rel: str,
    dest: Path,
    *,
    ignore: frozenset[str] = frozenset(),
    max_files: int = MAX_FILES,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
) -> Collection:
    """Copy the directory ``root/rel`` to ``dest`` (which must be new or empty; it is left
    empty when ``rel`` is missing or refused). ``root`` is the workspace directory, which the
    harness made and the agent cannot replace; everything beneath it is the agent's."""
    out = Collection(dest)
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise FileExistsError(f"{dest}: the collection's destination is not empty")
    parts = _parts(rel)
    with _fd(os.open(root, _DIR_FLAGS)) as root_fd:
        w = _Walk(root_fd, out, _Limits(max_files, max_bytes, max_depth), ignore)
        try:
            top = _open_dir_beneath(root_fd, parts)
        except FileNotFoundError:
            return out
        except OSError:
            _refuse_path(w, parts)
            return out
        with _fd(top):
            _walk(w, top, parts, dest, 0)
        _copy_linked(w)
    out.files.sort()
    return out


def take_file(root: Path, rel: str, dest: Path, *, max_bytes: int = MAX_BYTES) -> Collection:
    """Move the single file ``root/rel`` (a preset's trajectory, the actions log) to ``dest``:
    copied on the same terms as a tree (a second link is outside it by definition), then its
    name removed from the workspace whatever it was, so that the next round starts without
    it."""
    parts = _parts(rel)
    out = Collection(dest.parent)
    with _fd(os.open(root, _DIR_FLAGS)) as root_fd:
        w = _Walk(root_fd, out, _Limits(1, max_bytes, 0), frozenset())
        try:
            parent = _open_dir_beneath(root_fd, parts[:-1])
        except FileNotFoundError:
            return out
        except OSError:
            _refuse_path(w, parts[:-1])
            return out
        with _fd(parent):
            try:
                st = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                return out
            if stat.S_ISDIR(st.st_mode):
                w.out.refused.append(Refusal(rel, "not a file"))
                return out
            if not _refused(w, parent, parts):
                dest.unlink(missing_ok=True)
                _copy_file(w, parent, parts, dest, links_inside=1)
            os.unlink(parts[-1], dir_fd=parent)
    return out
