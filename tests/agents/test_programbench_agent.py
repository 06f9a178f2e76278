"""An agent's suite for a ProgramBench task is written, collected and run in its workspace.

The task is ``tests/fixtures/instances/programbench-numtool`` (see its README): the agent
writes ``eval/tests/`` and a fixture under ``eval/fixtures/`` its test reads by a path relative
to the working directory, as ProgramBench's ``eval/run.sh`` runs a branch.  Its one test checks
``max`` of all-negative numbers: valid on the reference, it kills m2 (max starts from 0) and no
other of the 5 mutants, so V = 1/1 and M = 1/5.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from suitebench.agents.harness import AgentSpec, RunOptions, run_agent
from suitebench.agents.scoring import ScoreContext

from .test_harness import agent_script

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TASK = FIXTURES / "instances" / "programbench-numtool"
SUBMISSION = FIXTURES / "submissions" / "numtool-compile"


@pytest.mark.slow
def test_an_agent_writes_eval_and_its_tests_run_in_their_workspace(
    home: Path, ctx: ScoreContext
) -> None:
    task = home / "data" / "numtool"
    shutil.copytree(TASK, task)
    cmd = agent_script(
        home,
        "suite.sh",
        """\
        ls -A eval > seen.txt
        mkdir -p eval/fixtures
        printf -- '-7\\n-3\\n-11\\n' > eval/fixtures/negatives.txt
        cat > eval/tests/test_agent.py <<'PY'
        import subprocess

        def test_max_of_negatives():
            out = subprocess.run(["./executable", "max", "eval/fixtures/negatives.txt"],
                                 capture_output=True, text=True)
            assert out.stdout == "-3\\n"
        PY
        """,
    )
    out = home / "runs" / "one"
    record = run_agent("suite", task, AgentSpec(command=cmd), out, RunOptions(time_limit=60), ctx)
    assert record["status"] == "ok", record
    ws = out / "workspace"
    assert (ws / "seen.txt").read_text().split() == ["tests"]  # eval/tests/, empty
    assert "`eval/tests/`" in (ws / "AGENTS.md").read_text()
    results = json.loads((out / "results.json").read_text())
    assert [t["id"] for t in results["tests"]] == [
        "tests/agent/eval/tests/test_agent.py::test_max_of_negatives"
    ]
    assert results["validity"] == 1.0
    killed = [m["id"] for m in results["mutants"] if m["status"] == "killed"]
    assert killed == ["m2"] and results["mutation_score"] == pytest.approx(1 / 5)
    assert (out / "tests" / "agent" / "eval" / "fixtures" / "negatives.txt").is_file()


@pytest.mark.slow
def test_a_code_task_left_as_a_submission_zip_is_unpacked_and_scored(
    home: Path, ctx: ScoreContext
) -> None:
    """The agent leaves only ``submission.zip`` (``submission/compile.sh`` and numtool.c that
    starts max from 0): it is unpacked, built by its compile.sh and fails test_max_negative
    alone of the task's 7 valid tests, R = 6/7."""
    task = home / "data" / "numtool"
    shutil.copytree(TASK, task)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for file in sorted(SUBMISSION.iterdir()):
            info = zipfile.ZipInfo(f"submission/{file.name}")
            info.external_attr = (0o100755 if file.suffix == ".sh" else 0o100644) << 16
            zf.writestr(info, file.read_bytes())
    encoded = base64.b64encode(buffer.getvalue()).decode()
    cmd = agent_script(home, "code.sh", f"echo {encoded} | base64 -d > submission.zip\n")
    out = home / "runs" / "code"
    record = run_agent("code", task, AgentSpec(command=cmd), out, RunOptions(time_limit=60), ctx)
    assert record["score"]["build_status"] == "ok", record
    assert (record["score"]["passed"], record["score"]["total"]) == (6, 7)
