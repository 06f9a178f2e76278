"""The workspace's disk quota: an agent that fills it is stopped and the record says so, what it
left stays within the quota, and the workspace ends on the disk with nothing left mounted."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from suitebench.agents.harness import AgentSpec, RunOptions, run_agent
from suitebench.agents.quota import used_bytes
from suitebench.agents.scoring import ScoreContext

from .test_agent_containment import instance

MiB = 1024 * 1024
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the tmpfs quota needs root")


def agent(home: Path, name: str, body: str) -> str:
    path = home / "agents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return f"sh {path}"


def mounted(path: Path) -> bool:
    return any(
        line.split()[1] == str(path) for line in Path("/proc/mounts").read_text().splitlines()
    )


@needs_root
def test_an_agent_that_fills_its_workspace_is_stopped_at_the_quota(
    home: Path, ctx: ScoreContext
) -> None:
    inst = instance(home)
    # 100 files of 8 MiB (800 MiB) against a 16 MiB quota, then a long sleep: only the quota
    # can end it before its 120 s limit.
    cmd = agent(
        home,
        "fill.sh",
        """\
        echo 'def test_nothing():' > tests/test_a.py
        echo '    pass' >> tests/test_a.py
        i=0
        while [ $i -lt 100 ]; do head -c 8388608 /dev/zero > big$i; i=$((i+1)); done
        echo all written
        sleep 600
        """,
    )
    out = home / "runs" / "fill"
    opts = RunOptions(time_limit=120, disk_limit_mb=16, score=False)
    started = time.monotonic()
    record = run_agent("suite", inst, AgentSpec(command=cmd), out, opts, ctx)
    assert time.monotonic() - started < 60  # stopped by the quota, not the 120 s limit
    assert record["disk_limit"] is True
    assert record["stopped_by_limit"] is False
    assert "16 MiB quota" in (out / "transcript.stderr.txt").read_text()
    # Past the cap every write fails at once (ENOSPC), so the loop may end before the
    # launcher's next look (4 a second); the sleep after it never does.
    assert record["disk"]["mechanism"] == "tmpfs"
    ws = out / "workspace"
    assert not mounted(ws)  # the tmpfs is gone, its contents copied onto the disk
    data = sum(f.stat().st_size for f in ws.rglob("*") if f.is_file() and not f.is_symlink())
    assert 14 * MiB < data <= 16 * MiB  # about two 8 MiB files: 16 MiB, no more
    # On ext4 the copy's directories take a 4 KiB block each (on the tmpfs, nothing).
    assert used_bytes(ws) <= 16 * MiB + 64 * 1024
    assert (ws / "tests" / "test_a.py").is_file()


@needs_root
def test_a_file_deleted_while_open_still_counts(home: Path, ctx: ScoreContext) -> None:
    inst = instance(home)
    # The space a deleted but open file takes is invisible to anything that walks the tree;
    # the tmpfs counts it all the same.
    cmd = agent(
        home,
        "hide.sh",
        """\
        exec 3> hidden
        rm hidden
        head -c 67108864 /dev/zero >&3
        echo wrote the hidden file
        sleep 600
        """,
    )
    out = home / "runs" / "hide"
    opts = RunOptions(time_limit=120, disk_limit_mb=16, score=False)
    record = run_agent("suite", inst, AgentSpec(command=cmd), out, opts, ctx)
    assert record["disk_limit"] is True
    assert record["wall_time"] < 60
    assert not mounted(out / "workspace")


@needs_root
def test_a_run_within_its_quota_records_its_use(home: Path, ctx: ScoreContext) -> None:
    inst = instance(home)
    cmd = agent(home, "small.sh", "head -c 1048576 /dev/zero > one-mib\n")
    out = home / "runs" / "small"
    opts = RunOptions(time_limit=60, disk_limit_mb=16, score=False)
    record = run_agent("suite", inst, AgentSpec(command=cmd), out, opts, ctx)
    assert record["status"] == "ok"
    assert record["disk_limit"] is False
    # 1 MiB written, plus the spec and the briefs (a few KiB each, in 4 KiB pages).
    assert 1.0 <= record["disk"]["used_mb"] < 1.2
    assert (out / "workspace" / "one-mib").stat().st_size == MiB
    assert not mounted(out / "workspace")
