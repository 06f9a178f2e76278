"""``agent run`` end to end with scripted agents (small shell programs the tests write) on the
bundled instances and problems: workspace, contained run, collection, scoring, agent.json."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from suitebench.agents.harness import AgentSpec, RunOptions, run_agent
from suitebench.agents.scoring import ScoreContext
from suitebench.data import IMPLEMENTATIONS_DIR, INSTANCES_DIR, PROBLEMS_DIR

from ..cli_helpers import run_suitebench

RPN_TESTS = textwrap.dedent(
    """\
    import subprocess

    def rpn(text):
        return subprocess.run(["./executable"], input=text, capture_output=True, text=True)

    def test_addition():
        assert rpn("1 2 +\\n").stdout.strip() == "3"

    def test_large_numbers_stay_64_bit():
        assert rpn("3000000000 1 +\\n").stdout.strip() == "3000000001"
    """
)


def copy_instance(home: Path, name: str) -> Path:
    dest = home / "data" / name
    shutil.copytree(INSTANCES_DIR / name, dest)
    return dest


def agent_script(home: Path, name: str, body: str) -> str:
    """A scripted agent: a shell program outside the workspace, run as ``sh SCRIPT``."""
    path = home / "agents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("set -u\n" + textwrap.dedent(body), encoding="utf-8")
    return f"sh {path}"


def test_suite_task_collects_and_scores_the_tests_the_agent_wrote(
    home: Path, ctx: ScoreContext
) -> None:
    inst = copy_instance(home, "rpn-c")
    cmd = agent_script(
        home,
        "suite.sh",
        f"""\
        ls -A > seen.txt
        test -e executable && echo has-executable >> seen.txt
        cat > tests/test_agent.py <<'PY'
        {textwrap.indent(RPN_TESTS, "        ").strip()}
        PY
        echo wrote the suite
        """,
    )
    out = home / "runs" / "one"
    record = run_agent("suite", inst, AgentSpec(command=cmd), out, RunOptions(time_limit=60), ctx)

    assert record["status"] == "ok" and record["exit_code"] == 0
    assert record["stopped_by_limit"] is False
    assert record["wall_time"] > 0
    ws = out / "workspace"
    assert (ws / "AGENTS.md").read_text() == (ws / "CLAUDE.md").read_text()
    assert "pytest" in (ws / "AGENTS.md").read_text()
    assert (ws / "spec.md").read_bytes() == (inst / "spec.md").read_bytes()
    # Only the spec and the brief: no source, no reference tests, no mutants, no executable.
    assert (ws / "seen.txt").read_text().split() == [
        ".suitebench-agent",
        "AGENTS.md",
        "CLAUDE.md",
        "seen.txt",
        "spec.md",
        "tests",
    ]
    assert "wrote the suite" in (out / "transcript.txt").read_text()

    results = json.loads((out / "results.json").read_text())
    assert (out / "tests" / "test_agent.py").is_file()
    assert results["validity"] == 1.0
    killed = {m["id"] for m in results["mutants"] if m["status"] == "killed"}
    assert "c01" in killed  # values stored as int: the 64-bit test catches it
    assert record["score"]["mutation_score"] == results["mutation_score"]
    assert record["score"]["killed"] == len(killed)
    assert (out / "kills.csv").is_file() and (out / "mutation-report.json").is_file()
    saved = json.loads((out / "agent.json").read_text())
    assert saved["score"] == record["score"]
    assert saved["containment"]["held_out_visible"] == []


def test_with_executable_gives_the_reference_program_inside_the_sandbox(
    home: Path, ctx: ScoreContext
) -> None:
    inst = copy_instance(home, "rpn-c")
    cmd = agent_script(
        home,
        "oracle.sh",
        """\
        printf '6 7 *\\n' | ./executable > product.txt
        got=$(cat product.txt)
        cat > tests/test_product.py <<PY
        import subprocess
        def test_product():
            run = subprocess.run(["./executable"], input=b"6 7 *\\\\n", capture_output=True)
            assert run.stdout.decode().strip() == "$got"
        PY
        """,
    )
    out = home / "runs" / "exe"
    opts = RunOptions(time_limit=60, with_executable=True)
    record = run_agent("suite", inst, AgentSpec(command=cmd), out, opts, ctx)
    assert record["with_executable"] is True
    assert (out / "workspace" / "product.txt").read_text().strip() == "42"
    assert "provided as `./executable`" in (out / "workspace" / "AGENTS.md").read_text()
    assert record["score"]["valid"] == 1


def test_a_crashing_agent_still_has_its_output_collected_and_scored(
    home: Path, ctx: ScoreContext
) -> None:
    inst = copy_instance(home, "rpn-c")
    cmd = agent_script(
        home,
        "crash.sh",
        f"""\
        cat > tests/test_agent.py <<'PY'
        {textwrap.indent(RPN_TESTS, "        ").strip()}
        PY
        echo about to fail >&2
        exit 3
        """,
    )
    out = home / "runs" / "crash"
    record = run_agent("suite", inst, AgentSpec(command=cmd), out, RunOptions(time_limit=60), ctx)
    assert record["status"] == "runtime_error" and record["exit_code"] == 3
    assert record["stopped_by_limit"] is False
    assert "about to fail" in (out / "transcript.stderr.txt").read_text()
    assert record["score"]["valid"] == 2


def test_inputs_task_lays_out_appendix_d1_and_audits_the_final_inputs(
    home: Path, ctx: ScoreContext
) -> None:
    prob = home / "data" / "maxsum"
    shutil.copytree(PROBLEMS_DIR / "maxsum", prob)
    cmd = agent_script(
        home,
        "inputs.sh",
        """\
        find docs scripts workspace -type f | sort > layout.txt
        printf '3\\n999999998 1000000000 999999999\\n' > workspace/hacks/big.txt
        python3 scripts/eval_hack.py workspace/hacks/big.txt > eval.txt
        printf 'import sys\\ns = int(sys.stdin.read())\\nprint(1)\\nprint(s)\\n' > workspace/gen.py
        python3 scripts/write_generator.py workspace/gen.py --seeds 2 > gen.txt
        python3 scripts/gen_wrongs.py --n 1 > wrongs.txt; echo "exit $?" >> wrongs.txt
        cp workspace/hacks/big.txt workspace/final/01.txt
        python3 -c 'print(41); print(*[7] * 40, 1)' > workspace/final/02.txt
        printf '1\\n-5\\n' > workspace/final/03.txt
        """,
    )
    out = home / "runs" / "inputs"
    opts = RunOptions(time_limit=120, wrongs=False, budget=3)
    record = run_agent("inputs", prob, AgentSpec(command=cmd), out, opts, ctx)
    ws = out / "workspace"
    layout = (ws / "layout.txt").read_text().split()
    for f in (
        "docs/statement.txt",
        "docs/ref.c",  # the first reference, as the paper shows the first of its references
        "scripts/eval_hack.py",
        "scripts/write_generator.py",
        "scripts/gen_wrongs.py",
    ):
        assert f in layout
    assert not any("submissions" in f or f.startswith("tests") for f in layout)
    assert "LEGAL" in (ws / "eval.txt").read_text()
    assert "2/2 outputs run OK" in (ws / "gen.txt").read_text()
    wrongs = (ws / "wrongs.txt").read_text()
    assert "DISABLED" in wrongs and "exit 2" in wrongs
    brief = (ws / "AGENTS.md").read_text()
    assert "DISABLED this run" in brief and "01.txt ... 03.txt" in brief

    results = json.loads((out / "results.json").read_text())
    assert "agent" in results["arms"]
    assert record["score"]["inputs"] == 3
    # ~3 x 10^9 overflows an int accumulator, forty tied 7s catch the wrong tie-break, n = 1 the
    # crash. nondet.c picks a random one of the tied maxima after the first: with forty ties
    # its four runs agree on one wrong answer (and so get certified) with odds of 1 / 39^3, not
    # the certainty of two ties -- and the big input has one maximum (three gave it 1 / 8).
    ledger = (out / "ledger.csv").read_text()
    for bug in ("overflow", "tiebreak", "n1crash"):
        assert f"submissions/accepted/{bug}" in ledger
    assert record["score"]["certified"] == 3


def test_code_task_scores_r_of_the_implementation_the_agent_built(
    home: Path, ctx: ScoreContext
) -> None:
    inst = copy_instance(home, "rpn-c")
    candidate = home / "candidate"
    shutil.copytree(inst / "src", candidate)
    diff = IMPLEMENTATIONS_DIR / "rpn-candidate.diff"
    subprocess.run(["patch", "-p1", "-d", str(candidate), "-i", str(diff)], check=True)
    cmd = agent_script(home, "code.sh", f"cp -r {candidate}/. .\n")
    out = home / "runs" / "code"
    opts = RunOptions(time_limit=60, extra_binds=[candidate])  # the agent is given the code
    record = run_agent("code", inst, AgentSpec(command=cmd), out, opts, ctx)
    assert "build.sh" in (out / "workspace" / "AGENTS.md").read_text()
    score = record["score"]
    assert score["build_status"] == "ok"
    assert score["total"] == 24 and score["passed"] == 22  # the candidate's two known bugs
    results = json.loads((out / "results.json").read_text())
    assert results["reference_pass_rate"] == pytest.approx(22 / 24)


def test_rounds_feed_back_sections_of_surviving_mutants_never_the_mutants(
    home: Path, ctx: ScoreContext
) -> None:
    inst = copy_instance(home, "rpn-c")
    more = textwrap.dedent(
        """\
        import subprocess

        def rpn(text):
            return subprocess.run(["./executable"], input=text, capture_output=True, text=True)

        def test_subtraction_order():
            assert rpn("5 3 -\\n").stdout.strip() == "2"

        def test_division_order():
            assert rpn("8 2 /\\n").stdout.strip() == "4"
        """
    )
    cmd = agent_script(
        home,
        "rounds.sh",
        f"""\
        if grep -q '## Round 1' AGENTS.md; then
          cp AGENTS.md brief-round1.md
          cat > tests/test_more.py <<'PY'
        {textwrap.indent(more, "        ").strip()}
        PY
        else
          cat > tests/test_agent.py <<'PY'
        {textwrap.indent(RPN_TESTS, "        ").strip()}
        PY
        fi
        """,
    )
    out = home / "runs" / "rounds"
    opts = RunOptions(time_limit=60, rounds=1)
    record = run_agent("suite", inst, AgentSpec(command=cmd), out, opts, ctx)
    per_round = record["mutation_score_per_round"]
    assert len(per_round) == 2 and per_round[1] > per_round[0]
    brief = (out / "workspace" / "brief-round1.md").read_text()
    assert "- Operators" in brief
    mutant_ids = [m["id"] for m in json.loads((out / "results.json").read_text())["mutants"]]
    assert not any(mid in brief for mid in mutant_ids)
    assert "diff" not in brief
    assert (out / "rounds" / "0" / "results.json").is_file()
    assert json.loads((out / "results.json").read_text())["mutation_score"] == per_round[1]
    assert (out / "tests" / "test_more.py").is_file()


def test_cli_agent_run_prints_the_score_and_writes_agent_json(home: Path) -> None:
    inst = copy_instance(home, "wordfreq-py")
    cmd = agent_script(
        home,
        "wf.sh",
        """\
        cat > tests/test_wf.py <<'PY'
        import subprocess

        def test_counts_words():
            out = subprocess.run(["./executable"], input="b a b\\n", capture_output=True, text=True)
            assert out.stdout.split()[:2] == ["b", "2"]
        PY
        """,
    )
    out = home / "runs" / "cli"
    args = ["agent", "run", "suite", str(inst), "--agent-cmd", cmd, "--time-limit", "60"]
    res = run_suitebench(*args, "--out", out, store=home / "s.sqlite", timeout=600)
    assert res.returncode == 0, res.stderr
    assert "suite by agent-cmd: ok" in res.stdout
    assert "M = " in res.stdout
    record = json.loads((out / "agent.json").read_text())
    assert record["target_id"] == "wordfreq"
    assert record["score"]["tests"] == 1


def test_code_task_for_a_python_package_and_a_build_that_fails(
    home: Path, ctx: ScoreContext
) -> None:
    inst = copy_instance(home, "intervals-pkg")
    written = home / "written" / "intervals"
    shutil.copytree(inst / "src" / "intervals", written)  # what a perfect agent would write
    cmd = agent_script(home, "pkg.sh", f"cp -r {written} ./intervals\n")
    out = home / "runs" / "pkg"
    opts = RunOptions(time_limit=60, extra_binds=[written])
    record = run_agent("code", inst, AgentSpec(command=cmd), out, opts, ctx)
    assert "package `intervals/`" in (out / "workspace" / "AGENTS.md").read_text()
    assert record["score"]["reference_pass_rate"] == 1.0
    assert (out / "implementation" / "intervals" / "core.py").is_file()
    assert not (out / "implementation" / "AGENTS.md").exists()

    rpn = copy_instance(home, "rpn-c")
    broken = agent_script(
        home,
        "broken.sh",
        "printf 'int main( {\\n' > rpn.c\nprintf 'gcc -o executable rpn.c\\n' > build.sh\n",
    )
    out = home / "runs" / "broken"
    record = run_agent("code", rpn, AgentSpec(command=broken), out, RunOptions(time_limit=60), ctx)
    assert record["status"] == "ok"  # the agent ended well; its program does not build
    assert record["score"]["build_status"] == "build_error"
    assert record["score"]["passed"] == 0 and record["score"]["reference_pass_rate"] == 0.0
