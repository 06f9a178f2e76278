"""The system calls a sandboxed program may not make: state the kernel keeps between runs.

Every run is meant to start from a fresh state. Files are private or reset and processes die
with their run, but the kernel keeps some state outside the file system, in places no mount or
uid change closes. A test that could write there on the reference's runs (which come first) and
read it back on a mutant's run would fail exactly where the mutant behaves otherwise: a full
kill without a word of the spec. Two defences close those places:

* a new IPC namespace for every run (System V shared memory, semaphores and message queues,
  POSIX message queues), made by the runner between fork and exec (``_runner.c``), so a run
  never sees what an earlier run of its session left;
* the seccomp filter built here, installed by the runner in every program it starts (and
  inherited by every process the program starts): the calls below fail with the errno given,
  the way a kernel without them would answer.

The filter is built with libseccomp (``pyseccomp``, ctypes bindings of the system's
``libseccomp.so.2``) and handed to the runner as compiled BPF; nothing here writes BPF by hand.
:data:`REFUSED` is the whole policy; ``docs/threat-model.md`` ("State the kernel keeps") says
what each line closes and which test shows it.
"""

from __future__ import annotations

import errno
import functools
import tempfile
from dataclasses import dataclass

RWF_NOWAIT = 0x8  # preadv2/pwritev2: "only if the data is in the page cache"
MADV_COLD = 20
MADV_PAGEOUT = 21


class FilterUnavailable(RuntimeError):
    """libseccomp (or its bindings) is missing: no sandbox may start without the filter."""


@dataclass(frozen=True)
class Refusal:
    """One refused system call: its name, the errno it returns, and (optionally) only when
    argument ``arg`` has all of ``mask``'s bits set, or equals ``value``."""

    name: str
    errno: int
    why: str
    arg: int | None = None
    mask: int | None = None
    value: int | None = None


REFUSED: tuple[Refusal, ...] = (
    # The kernel keyring is not namespaced: a key added by one run is there for every later
    # process of the same uid, in any sandbox (Docker's default profile refuses these too).
    Refusal("add_key", errno.EPERM, "keyring"),
    Refusal("keyctl", errno.EPERM, "keyring"),
    Refusal("request_key", errno.EPERM, "keyring"),
    # The page cache is one per kernel. Cheap probes of whether a page is cached:
    Refusal("mincore", errno.ENOSYS, "page cache probe"),
    Refusal("cachestat", errno.ENOSYS, "page cache probe"),
    Refusal("preadv2", errno.EOPNOTSUPP, "page cache probe", arg=5, mask=RWF_NOWAIT),
    Refusal("pwritev2", errno.EOPNOTSUPP, "page cache probe", arg=5, mask=RWF_NOWAIT),
    # ... and ways to drop a page from it (reading one still caches it: see the threat model).
    # fadvise is advice: doing nothing is a valid answer, so it succeeds and does nothing.
    Refusal("fadvise64", 0, "page cache eviction"),
    Refusal("madvise", errno.EINVAL, "page cache eviction", arg=2, value=MADV_PAGEOUT),
    Refusal("madvise", errno.EINVAL, "page cache eviction", arg=2, value=MADV_COLD),
    Refusal("process_madvise", errno.ENOSYS, "page cache eviction"),
    # io_uring runs reads and writes (RWF_NOWAIT included) where seccomp does not look.
    Refusal("io_uring_setup", errno.ENOSYS, "bypasses the filter"),
    Refusal("io_uring_enter", errno.ENOSYS, "bypasses the filter"),
    Refusal("io_uring_register", errno.ENOSYS, "bypasses the filter"),
)


@functools.cache
def program_filter() -> bytes:
    """The compiled seccomp filter (BPF, native architecture) every sandboxed program gets.

    Raises :class:`FilterUnavailable` when libseccomp cannot be loaded: a sandbox never starts
    without it.
    """
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # the bindings, or libseccomp.so.2 itself
        raise FilterUnavailable(
            f"the seccomp filter needs libseccomp ({exc}): install Debian's libseccomp2 "
            "and the Python package pyseccomp"
        ) from exc
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for r in REFUSED:
        action = seccomp.ERRNO(r.errno)
        if r.arg is None:
            f.add_rule(action, r.name)
        elif r.mask is not None:
            f.add_rule(action, r.name, seccomp.Arg(r.arg, seccomp.MASKED_EQ, r.mask, r.mask))
        else:
            f.add_rule(action, r.name, seccomp.Arg(r.arg, seccomp.EQ, r.value))
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.seek(0)
        bpf = out.read()
    if not bpf or len(bpf) % 8:
        raise FilterUnavailable(f"libseccomp exported {len(bpf)} bytes, not a BPF program")
    return bpf
