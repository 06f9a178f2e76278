"""Hide the other programs of a batch from the one under test, and what they left in IPC
objects (inside the sandbox).

A batch runs many programs under test in one sandbox, so every program's build tree is bound
into it.  A test of one mutant must not see another mutant's build (the suite's author is not
to see the mutants).  Before a forked child runs its program's tests it enters a user and mount
namespace of its own and covers every other program's tree with an empty read-only tmpfs, then
enters a second pair of namespaces so that those covers are locked (a mount made in a more
privileged namespace cannot be undone from a less privileged one).  The batch's parent makes
itself non-dumpable, so a child cannot reach the parent's view through ``/proc/<pid>/root``.

Where user namespaces are not available (the ``plain`` backend, a kernel that forbids them) the
child runs as before and :func:`hide_others` says so; what the batch's parent itself runs (a
suite's module-level code collected once, a conftest configured once) sees every tree of its
batch.  Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_BIND = 4096
_PR_SET_DUMPABLE = 4

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _own_namespaces(uid: int, gid: int, *, ipc: bool = False) -> None:
    """A new user and mount namespace in which this process keeps its uid and gid (and with
    ``ipc``, a new IPC namespace: no System V or POSIX IPC object of an earlier program of the
    batch reaches this one, as none of an earlier run reaches a run of the sandbox)."""
    flags = _CLONE_NEWUSER | _CLONE_NEWNS | (_CLONE_NEWIPC if ipc else 0)
    _check(_lib().unshare(flags), "unshare")
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"{gid} {gid} 1")


def make_parent_private() -> None:
    """The batch's parent: no child may look through ``/proc/<parent>/root``."""
    try:
        _lib().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _cover_root(own: list[str], others: list[str], keep: list[str]) -> str | None:
    """One directory to cover instead of every other tree: the deepest common ancestor of all
    programs' trees (the build cache), when nothing the run needs (``keep``) lies under it."""
    common = os.path.commonpath([*own, *others]) if others else None
    if common is None or common == "/" or common in own or common in others:
        return None
    inside = common.rstrip("/") + "/"
    if any(k == common or k.startswith(inside) or inside.startswith(k + "/") for k in keep):
        return None
    return common


def hide_others(
    paths: list[str], own: list[str] | None = None, keep: list[str] | None = None
) -> str | None:
    """Cover ``paths`` (the other programs' trees) for this process and its children, keeping
    ``own`` (this program's trees) visible; one cover over their common ancestor when nothing
    in ``keep`` lies under it (a mount a program costs milliseconds).  None when done, else why
    it could not be."""
    uid, gid = os.geteuid(), os.getegid()
    try:
        if not paths:  # nothing to hide: the new IPC namespace alone
            _lib().prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
            _own_namespaces(uid, gid, ipc=True)
            return None
        # The parent is not dumpable, nor then is this fresh child, whose /proc/self is then
        # root's: it could not write its own id maps.
        _lib().prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
        flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        root = _cover_root(own or [], paths, keep or [])
        _own_namespaces(uid, gid, ipc=True)
        if root is not None:
            # Held in this namespace (a bind's source must be in the caller's namespace).
            held = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in own or []]
            # One empty tmpfs over the build cache, this program's trees bound back into it.
            _check(
                _lib().mount(
                    b"none", os.fsencode(root), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=64k"
                ),
                f"mount over {root}",
            )
            for path, fd in zip(own or [], held, strict=True):
                os.makedirs(path, exist_ok=True)
                source = os.fsencode(f"/proc/self/fd/{fd}")
                _check(_lib().mount(source, os.fsencode(path), None, _MS_BIND, None), "bind")
                os.close(fd)
            _check(
                _lib().mount(None, os.fsencode(root), None, _MS_REMOUNT | flags, None),
                f"read-only {root}",
            )
        else:
            for path in paths:
                if os.path.isdir(path):
                    _check(
                        _lib().mount(b"none", os.fsencode(path), b"tmpfs", flags, b"size=4k"),
                        f"mount over {path}",
                    )
        _own_namespaces(uid, gid)  # lock the covers
    except OSError as exc:
        return str(exc)
    return None
