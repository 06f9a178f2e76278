"""``agent batch``: several agents on several instances, in parallel, scored, resumable."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from suitebench.data import INSTANCES_DIR

from ..cli_helpers import run_suitebench


def batch(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_suitebench("agent", "batch", *args, store=home / "s.sqlite", timeout=900, cwd=home)


def test_batch_runs_every_pair_in_parallel_scores_them_and_resumes(tmp_path: Path) -> None:
    home = tmp_path
    targets = []
    for name in ("rpn-c", "wordfreq-py"):
        shutil.copytree(INSTANCES_DIR / name, home / "data" / name)
        targets.append(str(home / "data" / name))
    agents = home / "agents"
    agents.mkdir()
    (agents / "lazy.sh").write_text(
        "date +%s.%N > started.txt\nsleep 3\ndate +%s.%N > ended.txt\n"
        "echo 'def test_nothing(): pass' > tests/test_lazy.py\n"
    )
    (agents / "broken.sh").write_text(
        "date +%s.%N > started.txt\nsleep 3\ndate +%s.%N > ended.txt\n"
        "echo 'def test_fails(): assert False' > tests/test_broken.py\nexit 1\n"
    )
    out = home / "batch"
    common = ["--out", str(out), "--time-limit", "60", "--parallel", "2"]
    agent_args = ["--agent-cmd", f"lazy=sh {agents / 'lazy.sh'}"]
    agent_args += ["--agent-cmd", f"broken=sh {agents / 'broken.sh'}"]
    first = batch(home, "suite", *targets, *agent_args, *common)
    assert first.returncode == 0, first.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["total"] == 4 and summary["finished"] == 4
    rows = {(r["target"], r["agent"]): r for r in summary["runs"]}
    assert set(rows) == {(t, a) for t in ("rpn", "wordfreq") for a in ("lazy", "broken")}
    assert rows[("rpn", "lazy")]["score"]["valid"] == 1
    assert rows[("rpn", "broken")]["score"]["valid"] == 0
    assert rows[("rpn", "broken")]["status"] == "runtime_error"
    assert not any(r["resumed"] for r in summary["runs"])
    assert "4/4 runs finished" in first.stdout

    # Two agents at a time: some runs overlapped in time.
    spans = []
    for d in sorted(p for p in out.iterdir() if p.is_dir()):
        ws = d / "workspace"
        spans.append(
            (float((ws / "started.txt").read_text()), float((ws / "ended.txt").read_text()))
        )
    assert any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1 :])

    # A re-run repeats nothing finished; a run left half-done is cleared and run again.
    started = {
        d.name: json.loads((d / "agent.json").read_text())["started"]
        for d in out.iterdir()
        if d.is_dir()
    }
    half = out / "rpn-c--lazy"
    record = json.loads((half / "agent.json").read_text())
    del record["finished"]
    (half / "agent.json").write_text(json.dumps(record))
    (half / "workspace" / "leftover.txt").write_text("from the killed batch")
    second = batch(home, "suite", *targets, *agent_args, *common)
    assert second.returncode == 0, second.stderr
    summary = json.loads((out / "summary.json").read_text())
    resumed = {r["run"]: r["resumed"] for r in summary["runs"]}
    assert resumed == {
        "rpn-c--lazy": False,
        "rpn-c--broken": True,
        "wordfreq-py--lazy": True,
        "wordfreq-py--broken": True,
    }
    for name, when in started.items():
        now = json.loads((out / name / "agent.json").read_text())
        assert now.get("finished")
        if name != "rpn-c--lazy":
            assert now["started"] == when
    assert not (half / "workspace" / "leftover.txt").exists()
