"""Memory and process limits through cgroups: the limit is the program's, and nothing is left.

Skipped where no cgroup is writable (the sandbox then falls back to rlimits, tested in
test_sandbox.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from suitebench.run import sandbox
from suitebench.run.cgroups import RunCgroup, usable_parent
from suitebench.run.outcome import Limits, MiB, Status

needs_memory_cgroup = pytest.mark.skipif(
    usable_parent("memory") is None, reason="no writable memory cgroup here"
)

TOUCH = "import sys\nx = bytearray(int(sys.argv[1]) << 20)\nx[::4096] = b'1' * len(x[::4096])\n"


def _ours(parent: Path | None) -> list[str]:
    if parent is None:
        return []
    return [p.name for p in parent.iterdir() if p.name.startswith(f"suitebench-{os.getpid()}-")]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "touch.py").write_text(TOUCH)
    return tmp_path


@needs_memory_cgroup
def test_run_cgroup_limits_and_cleanup() -> None:
    cg = RunCgroup(memory=True, pids=True)
    try:
        assert cg.memory_dir is not None and cg.memory_dir.is_dir()
        cg.set_limits(memory_bytes=100 * MiB, pids_max=7)
        limit_file = cg.memory_dir / "memory.limit_in_bytes"
        if limit_file.exists():
            assert int(limit_file.read_text()) == 100 * MiB
        else:
            assert int((cg.memory_dir / "memory.max").read_text()) == 100 * MiB
        if cg.pids_dir is not None:
            assert (cg.pids_dir / "pids.max").read_text().strip() == "7"
        # A process put into the group is killed by close(), and the groups disappear.
        files = cg.procs_files()
        script = 'while [ "$1" != -- ]; do echo $$ > "$1"; shift; done; shift; exec "$@"'
        proc = subprocess.Popen(["/bin/sh", "-c", script, "sh", *files, "--", "sleep", "60"])
        deadline = time.monotonic() + 10
        while proc.pid not in [int(x) for x in Path(files[0]).read_text().split()]:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        dirs = [d for d in (cg.memory_dir, cg.pids_dir) if d is not None]
    finally:
        cg.close()
    assert proc.wait(timeout=10) == -9
    assert not any(d.exists() for d in dirs)


@needs_memory_cgroup
def test_limit_is_the_programs_not_the_sandboxes(work: Path) -> None:
    """The sandbox's own footprint is added on top: 48 MiB fit in 64, 120 MiB do not."""
    py = os.path.realpath(sys.executable)
    limits = Limits(memory_mb=64, wall_time=30)
    runs = sandbox.run_batch([py, "-I", "-S", "touch.py", "48"], [b""], cwd=work, limits=limits)
    assert runs[0].status is Status.OK, runs[0]
    over = sandbox.run([py, "-I", "-S", "touch.py", "120"], cwd=work, limits=limits)
    assert over.status is Status.MEMORY, over
    assert over.peak_memory_kb is not None and over.peak_memory_kb <= 70 * 1024


@needs_memory_cgroup
def test_memory_kill_then_normal_run_in_one_batch(work: Path) -> None:
    """A memory kill is counted for its run only; the next run in the session is clean."""
    py = os.path.realpath(sys.executable)
    script = "import sys\nn = int(sys.stdin.read())\n" + TOUCH.split("\n", 1)[1].replace(
        "int(sys.argv[1])", "n"
    )
    (work / "eat.py").write_text(script + "print(n)\n")
    outs = sandbox.run_batch(
        [py, "-I", "-S", "eat.py"],
        [b"8", b"200", b"8", b"200", b"16"],
        cwd=work,
        limits=Limits(memory_mb=64, wall_time=30),
    )
    assert [o.status for o in outs] == [
        Status.OK,
        Status.MEMORY,
        Status.OK,
        Status.MEMORY,
        Status.OK,
    ], outs
    assert outs[4].stdout == b"16\n"
    assert outs[0].peak_memory_kb is not None and outs[4].peak_memory_kb is not None
    assert outs[4].peak_memory_kb > outs[0].peak_memory_kb


def test_no_memory_limit_means_none(work: Path) -> None:
    py = os.path.realpath(sys.executable)
    out = sandbox.run(
        [py, "-I", "-S", "touch.py", "150"], cwd=work, limits=Limits(memory_mb=None, wall_time=30)
    )
    assert out.status is Status.OK, out


def test_no_groups_left_after_runs(work: Path) -> None:
    before_mem, before_pids = _ours(usable_parent("memory")), _ours(usable_parent("pids"))
    for b, reason in sandbox.available_backends().items():
        if reason is None:
            sandbox.run_batch(["sh", "-c", "sleep 5 & echo x"], [b"", b""], cwd=work, backend=b)
    assert _ours(usable_parent("memory")) == before_mem
    assert _ours(usable_parent("pids")) == before_pids
