"""State the kernel keeps outside the file system never carries from one run to the next.

A test that could leave a mark on the reference's runs (which come first) and read it on a
mutant's run would fail exactly where the mutant behaves otherwise, and decoys cannot catch it
(a decoy behaves like the reference). Each channel of ``docs/threat-model.md`` ("State the kernel
keeps") is tried here as a program would use it, on every backend with the C and the Python
runner (``backend`` in conftest.py): the keyring and the page-cache probes are refused by the
seccomp filter (plain included), and System V and POSIX IPC objects die with their run's IPC
namespace (bwrap and unshare; plain documents that it cannot).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from pathlib import Path

import pytest

from suitebench.run import cgroups, sandbox
from suitebench.run.outcome import Backend, Status

PY = os.path.realpath(sys.executable)

# Each line prints one call's errno (0: it worked), as the program sees it.
SYSCALLS = r"""
import ctypes, errno, mmap, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    r = libc.syscall(nr, *args)
    return 0 if r >= 0 else ctypes.get_errno()
KEY_SPEC_USER_KEYRING = -4
print("add_key", call(248, b"user", b"suitebench-probe", b"x", 1, KEY_SPEC_USER_KEYRING))
print("keyctl", call(250, 0, KEY_SPEC_USER_KEYRING, 0))  # KEYCTL_GET_KEYRING_ID
print("request_key", call(249, b"user", b"suitebench-probe", 0, 0))
fd = os.open("/bin/sh", os.O_RDONLY)
buf = bytearray(4096)
def pread(flags):
    try:
        os.preadv(fd, [buf], 0, flags)
        return 0
    except OSError as exc:
        return exc.errno
print("preadv2", pread(0))
print("preadv2_nowait", pread(os.RWF_NOWAIT))
m = mmap.mmap(fd, 4096, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
page = ctypes.addressof(ctypes.c_char.from_buffer(m))
vec = ctypes.create_string_buffer(1)
print("mincore", call(27, ctypes.c_void_p(page), 4096, vec))
print("cachestat", call(451, fd, 0, 0, 0))
print("madvise_pageout", call(28, ctypes.c_void_p(page), 4096, 21))  # MADV_PAGEOUT
print("madvise_dontneed", call(28, ctypes.c_void_p(page), 4096, 4))  # still allowed
print("fadvise_dontneed", os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED) or 0)
print("io_uring_setup", call(425, 1, ctypes.create_string_buffer(120)))
"""


def _errnos(out: sandbox.Outcome) -> dict[str, int]:
    assert out.status is Status.OK, out
    return {k: int(v) for k, v in (line.split() for line in out.stdout.decode().splitlines())}


def test_the_keyring_and_the_page_cache_probes_are_refused(work: Path, backend: Backend) -> None:
    got = _errnos(sandbox.run([PY, "-c", SYSCALLS], cwd=work, backend=backend))
    assert got == {
        # the keyring is not namespaced: refused as Docker's default profile does
        "add_key": 1,
        "keyctl": 1,
        "request_key": 1,
        # an ordinary read works; "only if cached" is unsupported, as on a file system
        # without it
        "preadv2": 0,
        "preadv2_nowait": 95,  # EOPNOTSUPP
        "mincore": 38,  # ENOSYS
        "cachestat": 38,
        "madvise_pageout": 22,  # EINVAL, as a kernel without it answers
        "madvise_dontneed": 0,  # the program's own memory: allowed
        "fadvise_dontneed": 0,  # advice: it succeeds, and drops nothing
        "io_uring_setup": 38,
    }


# The second run of a session looks for what the first left: a System V segment, semaphore
# set and message queue, and a POSIX message queue.
IPC = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT, IPC_EXCL = 0o1000, 0o2000
key = 0x5b1e
if sys.stdin.read() == "leave":
    assert libc.shmget(key, 4096, IPC_CREAT | 0o600) >= 0
    assert libc.semget(key, 1, IPC_CREAT | 0o600) >= 0
    assert libc.msgget(key, IPC_CREAT | 0o600) >= 0
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    assert rt.mq_open(b"/suitebench-left", os.O_CREAT | os.O_RDWR, 0o600, None) >= 0
    print("left")
else:
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    print("shm", libc.shmget(key, 0, 0) >= 0)
    print("sem", libc.semget(key, 0, 0) >= 0)
    print("msg", libc.msgget(key, 0) >= 0)
    print("mq", rt.mq_open(b"/suitebench-left", os.O_RDONLY) >= 0)
"""


def test_ipc_objects_die_with_their_run(work: Path, backend: Backend) -> None:
    if not sandbox.hides_files(backend):
        pytest.skip(f"{backend} shares the host's IPC namespace (documented)")
    outs = sandbox.run_batch([PY, "-c", IPC], [b"leave", b"look"], cwd=work, backend=backend)
    assert [o.status for o in outs] == [Status.OK, Status.OK], outs
    assert outs[0].stdout == b"left\n"
    assert outs[1].stdout == b"shm False\nsem False\nmsg False\nmq False\n", outs[1]


def test_pid_1_names_no_host_path(work: Path, backend: Backend) -> None:
    """The command line of pid 1 (once bwrap's own, with every mount of the layout) says
    nothing of the host's folders beyond what the program sees bound anyway."""
    if not sandbox.hides_files(backend):
        pytest.skip(f"{backend} runs in the host's pid namespace")
    out = sandbox.run(["cat", "/proc/1/cmdline"], cwd=work, backend=backend)
    assert out.status is Status.OK, out
    assert b"--bind" not in out.stdout and b"bwrap" not in out.stdout, out.stdout[:300]
    assert str(work).encode() not in out.stdout
    assert b".cache" not in out.stdout  # the compiled runner's home


def _cached_pages(path: Path) -> int:
    """How many of the file's pages are in the page cache (``mincore`` on a mapping of it,
    which reads nothing; a ``preadv2(RWF_NOWAIT)`` probe would miss pages marked for
    read-ahead)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
    libc.mmap.argtypes += [ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = path.stat().st_size
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        vec = ctypes.create_string_buffer((size + mmap.PAGESIZE - 1) // mmap.PAGESIZE)
        try:
            assert libc.mincore(addr, size, vec) == 0, os.strerror(ctypes.get_errno())
        finally:
            libc.munmap(addr, size)
        return sum(b & 1 for b in vec.raw)
    finally:
        os.close(fd)


def test_the_pages_a_run_read_first_leave_the_page_cache_with_it(
    work: Path, backend: Backend
) -> None:
    """A run that reads a file nobody had cached leaves none of its pages cached: a later run
    timing its reads learns nothing (bench/page_cache_channel.py measures the bits)."""
    if not cgroups.RunCgroup(memory=True, pids=False).has_memory:
        pytest.skip("no writable memory cgroup: pages are charged nowhere (documented)")
    data = work / "data.bin"
    data.write_bytes(os.urandom(64 * 4096))
    fd = os.open(data, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    assert _cached_pages(data) == 0  # the premise: nothing of it is cached
    out = sandbox.run(["cat", str(data)], cwd=work, backend=backend)
    assert out.status is Status.OK and len(out.stdout) == 64 * 4096, out
    assert _cached_pages(data) == 0
