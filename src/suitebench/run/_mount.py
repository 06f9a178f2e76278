"""Build a sandbox's file system layout in a fresh mount namespace, then exec the runner in it.

The ``unshare`` backend's equivalent of bubblewrap's mounts, where ``_mount.c`` (the same job,
same arguments, and the faster start) cannot be compiled. Started by ``unshare --mount ...`` as
``python -I -S -c <this source> ROOT CWD N KIND PATH EXTRA ... RUNNER-ARGV...``: the standard
library only. The N triples are the operations of :func:`suitebench.run.layout.unshare_ops`,
parents before children. A tmpfs at ``ROOT`` becomes the new root: every operation happens
under it, then it is remounted read-only, and the runner is exec'd chrooted into it with
``CWD`` as its directory. Exit status 125 and a message on stderr if a mount fails.
"""

from __future__ import annotations

import ctypes
import os
import sys

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
# Flags a remount must keep (a user namespace may not clear them on mounts it inherited).
_KEEP = (
    (os.ST_NOSUID, MS_NOSUID),
    (os.ST_NODEV, MS_NODEV),
    (os.ST_NOEXEC, MS_NOEXEC),
)
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}

_libc = ctypes.CDLL(None, use_errno=True)


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    ok = _libc.mount(
        None if src is None else os.fsencode(src),
        os.fsencode(target),
        None if fstype is None else fstype.encode(),
        ctypes.c_ulong(flags),
        data.encode() if data else None,
    )
    if ok != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {src or fstype} on {target}: {os.strerror(err)}")


def _bind(src: str, target: str, *, read_only: bool) -> None:
    if os.path.isdir(src):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "a"):
            pass
    _mount(src, target, None, MS_BIND | MS_REC)
    if read_only:
        st = os.statvfs(target)
        keep = sum(ms for st_flag, ms in _KEEP if st.f_flag & st_flag)
        _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | keep)


_PTS = "newinstance,ptmxmode=0666,mode=0620"


def _dev(target: str, shm_size: str) -> None:
    """A fresh /dev; its shm is bounded like /tmp (else a program could fill the memory
    cgroup with it and be killed rather than told ENOSPC)."""
    os.makedirs(target, exist_ok=True)
    _mount("dev", target, "tmpfs", MS_NOSUID, "mode=0755")
    for node in DEV_NODES:
        if os.path.exists(f"/dev/{node}"):
            _bind(f"/dev/{node}", f"{target}/{node}", read_only=False)
    os.mkdir(f"{target}/shm")
    size = f",size={shm_size}" if shm_size else ""
    _mount("shm", f"{target}/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777" + size)
    for name, link in DEV_LINKS.items():
        os.symlink(link, f"{target}/{name}")
    # Terminals of its own (pty tests of TUI programs), as bwrap's --dev gives.
    os.mkdir(f"{target}/pts")
    _mount("devpts", f"{target}/pts", "devpts", MS_NOSUID | MS_NOEXEC, _PTS)
    os.symlink("pts/ptmx", f"{target}/ptmx")


def build(root: str, ops: list[tuple[str, str, str]]) -> None:
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("suitebench", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for kind, path, extra in ops:
        target = root + path
        if kind in ("ro", "rw"):
            _bind(path, target, read_only=kind == "ro")
        elif kind == "dir":
            os.makedirs(target, mode=0o755, exist_ok=True)
        elif kind == "symlink":
            os.symlink(extra, target)
        elif kind == "dev":
            _dev(target, extra)
        elif kind == "proc":  # unshare --mount-proc mounted this pid namespace's own /proc
            _bind("/proc", target, read_only=False)
        elif kind == "tmp":
            os.makedirs(target, exist_ok=True)
            size = f",size={extra}" if extra else ""
            _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777" + size)
        else:
            raise OSError(0, f"unknown operation {kind}")
    _mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def main() -> None:
    root, cwd, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    flat = sys.argv[4 : 4 + 3 * count]
    ops = [(flat[i], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3)]
    argv = sys.argv[4 + 3 * count :]
    os.umask(0o022)
    try:
        build(root, ops)
        os.chroot(root)
        os.chdir(cwd)
    except OSError as exc:
        sys.stderr.write(f"suitebench sandbox layout: {exc}\n")
        sys.exit(125)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
