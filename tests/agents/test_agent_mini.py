"""mini-swe-agent, really run: the preset drives it end to end, contained, against a scripted
OpenAI-compatible server on 127.0.0.1 whose replies are its shell actions."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from suitebench.agents.fakeserver import FakeChatServer
from suitebench.agents.harness import AgentSpec, RunOptions, run_agent
from suitebench.agents.scoring import ScoreContext
from suitebench.agents.trajectory import analyse_run
from suitebench.data import INSTANCES_DIR, PROBLEMS_DIR

pytestmark = pytest.mark.slow

WRITE_TEST = textwrap.dedent(
    """\
    THOUGHT: I write two focused tests from the spec.

    ```mswea_bash_command
    cat <<'EOF' > tests/test_rpn.py
    import subprocess

    def rpn(text):
        return subprocess.run(["./executable"], input=text, capture_output=True, text=True)

    def test_addition():
        assert rpn("1 2 +\\n").stdout.strip() == "3"

    def test_large_values_stay_64_bit():
        assert rpn("3000000000 1 +\\n").stdout.strip() == "3000000001"
    EOF
    ```
    """
)
RUN_TESTS = "THOUGHT: run them.\n\n```mswea_bash_command\npython -m pytest -q tests\n```\n"
FINISH = (
    "THOUGHT: done.\n\n```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```\n"
)


def test_mini_swe_agent_writes_runs_and_submits_a_suite_that_is_scored(
    home: Path, ctx: ScoreContext
) -> None:
    inst = home / "data" / "rpn-c"
    shutil.copytree(INSTANCES_DIR / "rpn-c", inst)
    with FakeChatServer([WRITE_TEST, RUN_TESTS, FINISH], api_key="sk-test") as server:
        spec = AgentSpec(
            preset="mini-swe-agent",
            model="scripted-model",
            endpoint=server.base_url,
            api_key="sk-test",
        )
        out = home / "runs" / "mini"
        opts = RunOptions(time_limit=300, with_executable=True)
        record = run_agent("suite", inst, spec, out, opts, ctx)
        requests = list(server.requests)

    assert record["status"] == "ok", (out / "transcript.txt").read_text()[-3000:]
    assert record["exit_code"] == 0 and record["stopped_by_limit"] is False
    # The model saw the brief, then the output of the tests it ran inside the sandbox.
    assert len(requests) == 3
    first = json.dumps(requests[0]["messages"])
    assert "Test-suite task" in first and "tests/" in first
    observation = json.dumps(requests[2]["messages"][-1])
    assert "2 passed" in observation
    # Usage as the agent reports it; every model call went through the gateway.
    assert record["model_calls"] == 3
    assert record["tokens"]["input"] > 0 and record["tokens"]["output"] > 0
    assert record["gateway"]["connections"] >= 1 and record["gateway"]["refused"] == []
    trajectory = json.loads((out / "trajectory.json").read_text())
    assert trajectory["info"]["exit_status"] == "Submitted"

    results = json.loads((out / "results.json").read_text())
    assert results["validity"] == 1.0
    assert "c01" in {m["id"] for m in results["mutants"] if m["status"] == "killed"}

    report = analyse_run(out)
    assert report.actions == 3
    assert report.classes == {"read": 0, "search": 0, "write": 1, "execute": 1, "other": 1}
    assert report.leaks == [] and not report.executable_attempt


def test_gen_wrongs_drafts_through_the_model_endpoint_and_eval_hack_kills_them(
    home: Path, ctx: ScoreContext
) -> None:
    prob = home / "data" / "maxsum"
    shutil.copytree(PROBLEMS_DIR / "maxsum", prob)
    wrong = textwrap.dedent(
        """\
        ```cpp
        #include <cstdio>
        int main() {  // keeps the sum in an int
            int n, s = 0, x, mx = 0, p = 1;
            std::scanf("%d", &n);
            for (int i = 1; i <= n; i++) {
                std::scanf("%d", &x);
                s += x;
                if (i == 1 || x > mx) { mx = x; p = i; }
            }
            std::printf("%d %d\\n", s, p);
        }
        ```
        """
    )
    script = home / "agents" / "wrongs.sh"
    script.parent.mkdir(parents=True)
    script.write_text(
        "python3 scripts/gen_wrongs.py --n 1 > drafted.txt 2>&1\n"
        "printf '3\\n1000000000 1000000000 1000000000\\n' > workspace/final/01.txt\n"
        "python3 scripts/eval_hack.py workspace/final/01.txt > eval.txt 2>&1\n"
    )
    with FakeChatServer([wrong]) as server:
        spec = AgentSpec(command=f"sh {script}", model="weak-coder", endpoint=server.base_url)
        out = home / "runs" / "wrongs"
        record = run_agent("inputs", prob, spec, out, RunOptions(time_limit=120, budget=1), ctx)
        asked = json.dumps(server.requests)
    ws = out / "workspace"
    assert "wrote workspace/wrongs/wrong_01.cpp" in (ws / "drafted.txt").read_text()
    assert "Max and sum" in asked  # the statement went to the model, nothing else held out
    evaluation = (ws / "eval.txt").read_text()
    assert "wrong_01.cpp: KILLED (WA)" in evaluation
    assert record["score"]["certified"] >= 1
