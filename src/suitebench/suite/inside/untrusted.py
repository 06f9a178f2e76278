"""Reading what a sandboxed program left behind, as its adversary would have it read.

A run's output directory is writable by the programs under test (their event logs, exit
records and logs go there), so anything in it may have been replaced by the time the host reads
it: a symbolic link to a file only the host may read (its contents would end up in a run's log
and in the results), a FIFO (an open would block), a device.  :func:`read_bytes` opens the
path without following a link and without blocking, and reads it only if it is a regular file;
anything else reads as absent, as a file the program never wrote.  Standard library only:
the batch's fork server uses it too, inside the sandbox (:mod:`.batch.forking`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["read_bytes", "read_text"]

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def read_bytes(path: Path) -> bytes | None:
    """The bytes of the regular file at ``path``, or None where there is none: missing, a
    link (never followed), a FIFO, a device, a directory."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:  # missing, or a link (ELOOP)
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_text(path: Path) -> str | None:
    """:func:`read_bytes` as UTF-8 text (undecodable bytes replaced), or None."""
    data = read_bytes(path)
    return None if data is None else data.decode("utf-8", errors="replace")
