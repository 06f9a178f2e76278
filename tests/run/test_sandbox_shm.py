"""A sandboxed program's /dev/shm: writable, bounded and private to each run.

Python's ``multiprocessing`` locks are POSIX semaphores, files in /dev/shm: a test that starts a
``multiprocessing.Pool`` fails with ``PermissionError`` where /dev/shm is not writable by the
program, and then a mutant its real suite kills survives. Each test runs for every backend with
the C and the Python runner (``backend`` in conftest.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from suitebench.run import sandbox
from suitebench.run.outcome import Backend, Limits, Status

POOL = (
    "import multiprocessing as m; p = m.Pool(2); print(sum(p.map(abs, [-1, -2, 3]))); "
    "p.close(); p.join()"
)


def test_multiprocessing_pool_runs_in_the_sandbox(work: Path, backend: Backend) -> None:
    out = sandbox.run([os.path.realpath(sys.executable), "-c", POOL], cwd=work, backend=backend)
    assert out.status is Status.OK and out.stdout == b"6\n", out


def test_dev_shm_is_sticky_and_writable_by_the_program(work: Path, backend: Backend) -> None:
    if not sandbox.hides_files(backend):
        pytest.skip(f"{backend} shows the host's /dev/shm")
    script = "stat -c %a /dev/shm; echo x > /dev/shm/mine && cat /dev/shm/mine"
    out = sandbox.run(["sh", "-c", script], cwd=work, backend=backend)
    assert out.status is Status.OK and out.stdout == b"1777\nx\n", out


def test_batch_runs_each_start_with_an_empty_dev_shm(work: Path, backend: Backend) -> None:
    if not sandbox.hides_files(backend):
        pytest.skip(f"{backend} shows the host's /dev/shm")
    script = (
        "ls -A /dev/shm; echo y > /dev/shm/sem.left; mkdir /dev/shm/d; echo z > /dev/shm/d/f; "
        "chmod 000 /dev/shm/d; echo end"
    )
    outs = sandbox.run_batch(["sh", "-c", script], [b"", b"", b""], cwd=work, backend=backend)
    assert all(o.status is Status.OK for o in outs), outs
    assert [o.stdout for o in outs] == [b"end\n"] * 3, outs


def test_dev_shm_is_bounded_like_tmp(work: Path, backend: Backend) -> None:
    """Half the memory limit, as /tmp: filling it is ENOSPC (the program's own error), not a
    kill by the memory cgroup."""
    if not sandbox.hides_files(backend):
        pytest.skip(f"{backend} shows the host's /dev/shm")
    script = "for i in 1 2 3 4 5 6; do head -c 8000000 /dev/zero > /dev/shm/f$i || exit 9; done"
    full = sandbox.run(["sh", "-c", script], cwd=work, backend=backend, limits=Limits(memory_mb=32))
    assert full.status is Status.RUNTIME_ERROR and full.exit_code == 9, full
    assert b"No space left" in full.stderr, full
    ok = sandbox.run(["sh", "-c", script], cwd=work, backend=backend, limits=Limits(memory_mb=128))
    assert ok.status is Status.OK, ok
