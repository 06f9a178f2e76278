"""Trajectory analysis: action classes (TestSuiteBench App. A.4), executable and mutant creation
attempts (its Table 3), the leak audit over held-out paths (Auditors §7), per transcript format."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from suitebench.agents.harness import AgentSpec, RunOptions, run_agent
from suitebench.agents.scoring import ScoreContext
from suitebench.agents.trajectory import (
    Action,
    analyse_run,
    classify,
    executable_attempt,
    leaks,
    mutant_attempt,
    read_actions,
    read_usage,
)
from suitebench.data import INSTANCES_DIR

from ..cli_helpers import run_suitebench


def sh(command: str) -> Action:
    return Action("shell", command)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat spec.md", "read"),
        ("nl -ba spec.md | sed -n '10,40p'", "read"),
        ("head -50 spec.md && tail -5 spec.md", "read"),
        ("ls -la", "search"),
        ("find . -name '*.py'", "search"),
        ("grep -n 'exit status' spec.md", "search"),
        ("cat <<'EOF' > tests/test_a.py\nimport subprocess\nEOF", "write"),
        ("echo 'def test(): pass' >> tests/test_b.py", "write"),
        ("sed -i 's/3/4/' tests/test_a.py", "write"),
        ("mkdir -p tests/unit", "write"),
        ("python -m pytest -q tests", "execute"),
        ("cd tests && python -m pytest -x", "execute"),
        ("ls && python -m pytest -q tests || true", "execute"),
        ("./executable < in.txt", "execute"),
        ("gcc -O2 -o impl impl.c", "execute"),
        ("python -m pytest tests 2>&1 | tail -20", "execute"),
        ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "other"),
        ("cd tests", "other"),
    ],
)
def test_shell_actions_are_classified_as_the_paper_does(command: str, expected: str) -> None:
    assert classify(sh(command)) == expected


def test_file_tool_actions_keep_their_class() -> None:
    assert classify(Action("read", "", "/w/spec.md")) == "read"
    assert classify(Action("search", "Operators", ".")) == "search"
    assert classify(Action("write", "", "/w/tests/test_x.py")) == "write"
    assert classify(Action("webfetch", "https://x")) == "other"


@pytest.mark.parametrize(
    "command",
    [
        "cat <<'EOF' > impl.c\nint main(void) { return 0; }\nEOF",
        "gcc -O2 -o executable rpn.c",
        "cp impl.py executable && chmod +x executable",
        "printf '#!/bin/sh\\n' > build.sh",
    ],
)
def test_building_an_own_program_under_test_is_an_executable_attempt(command: str) -> None:
    assert executable_attempt(sh(command))


@pytest.mark.parametrize(
    "command",
    [
        "cat <<'EOF' > tests/test_cli.py\nrun(['./executable'])\nEOF",
        "python -m pytest tests",
        "./executable < input.txt",
    ],
)
def test_using_the_executable_is_not_creating_one(command: str) -> None:
    assert not executable_attempt(sh(command))


def test_mutant_attempts_are_actions_mentioning_mutation() -> None:
    assert mutant_attempt(sh("mkdir mutants && cp impl.c mutants/m1.c"))
    assert mutant_attempt(sh("python mutate.py impl.c"))
    assert mutant_attempt(Action("write", "", "/w/mutation_check.py"))
    assert not mutant_attempt(sh("python -m pytest tests"))


def test_leak_audit_flags_actions_naming_held_out_paths() -> None:
    actions = [
        sh("cat spec.md"),
        sh("ls /data/rpn-c/mutants"),
        Action("read", "", "/data/rpn-c/src/rpn.c"),
        sh("cat /store/builds/x/tree/rpn.c"),
    ]
    found = leaks(actions, ["/data/rpn-c", "/store/builds", "/"])
    assert [(f["action"], f["path"]) for f in found] == [
        (1, "/data/rpn-c"),
        (2, "/data/rpn-c"),
        (3, "/store/builds"),
    ]


def test_codex_and_opencode_transcripts_are_read_into_actions_and_usage(tmp_path: Path) -> None:
    codex = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": {"type": "command_execution", "command": "ls"}},
        {
            "type": "item.completed",
            "item": {"type": "file_change", "changes": [{"path": "tests/t.py", "kind": "add"}]},
        },
        {"type": "turn.completed", "usage": {"input_tokens": 900, "output_tokens": 40}},
        {"type": "turn.completed", "usage": {"input_tokens": 100, "output_tokens": 10}},
    ]
    d = tmp_path / "codex"
    d.mkdir()
    (d / "transcript.txt").write_text("\n".join(json.dumps(e) for e in codex) + "\n")
    assert [classify(a) for a in read_actions("codex", d)] == ["search", "write"]
    assert read_usage("codex", d)["tokens"] == {"input": 1000, "output": 50}

    opencode = [
        {"type": "tool_use", "part": {"tool": "read", "state": {"input": {"filePath": "spec.md"}}}},
        {"type": "tool_use", "part": {"tool": "bash", "state": {"input": {"command": "pytest"}}}},
        {"type": "tool_use", "part": {"tool": "list", "state": {"input": {"path": "."}}}},
        {"type": "step_finish", "part": {"tokens": {"input": 70, "output": 7}, "cost": 0.5}},
    ]
    d = tmp_path / "opencode"
    d.mkdir()
    (d / "transcript.txt").write_text("garbage line\n" + "\n".join(map(json.dumps, opencode)))
    assert [classify(a) for a in read_actions("opencode", d)] == ["read", "execute", "search"]
    usage = read_usage("opencode", d)
    assert usage["tokens"] == {"input": 70, "output": 7} and usage["cost_usd"] == 0.5


def test_trajectories_command_reports_classes_attempts_and_leaks_per_run(
    home: Path, ctx: ScoreContext
) -> None:
    inst = home / "data" / "rpn-c"
    shutil.copytree(INSTANCES_DIR / "rpn-c", inst)
    # Scripted agents that log their actions as JSON lines in $SUITEBENCH_ACTIONS.
    log = 'act() { printf \'{"command": "%s"}\\n\' "$1" >> "$SUITEBENCH_ACTIONS"; sh -c "$1"; }\n'
    honest = home / "agents" / "honest.sh"
    honest.parent.mkdir()
    honest.write_text(
        log
        + textwrap.dedent(
            """\
            act "cat spec.md > /dev/null"
            act "echo 'def test_ok(): pass' > tests/test_ok.py"
            act "python -m pytest -q tests"
            """
        )
    )
    snoop = home / "agents" / "snoop.sh"
    snoop.write_text(
        log
        + textwrap.dedent(
            f"""\
            act "ls {inst}/mutants || true"
            act "mkdir -p mutants && cp spec.md mutants/m1.md"
            act "echo 'def test_ok(): pass' > tests/test_ok.py"
            """
        )
    )
    runs = home / "runs"
    for name, script in (("honest", honest), ("snoop", snoop)):
        opts = RunOptions(time_limit=60, score=False)
        run_agent("suite", inst, AgentSpec(command=f"sh {script}"), runs / name, opts, ctx)

    snooped = analyse_run(runs / "snoop")
    assert snooped.actions == 3
    assert snooped.classes["search"] == 1 and snooped.classes["write"] == 2
    assert snooped.mutant_attempt
    assert [leak["path"] for leak in snooped.leaks] == [str(inst)]
    fair = analyse_run(runs / "honest")
    # `cat spec.md > /dev/null` reads: a redirection to /dev/null writes no file.
    assert fair.classes == {"read": 1, "search": 0, "write": 1, "execute": 1, "other": 0}
    assert fair.leaks == [] and not fair.mutant_attempt

    res = run_suitebench("--json", "agent", "trajectories", runs, timeout=120)
    assert res.returncode == 0, res.stderr
    reports = {Path(r["run"]).name: r for r in json.loads(res.stdout)}
    assert set(reports) == {"honest", "snoop"}
    assert len(reports["snoop"]["leaks"]) == 1 and reports["honest"]["leaks"] == []
    human = run_suitebench("agent", "trajectories", runs, timeout=120)
    assert "2 runs: 0 with executable creation, 1 with mutant creation, 1 leaks (1 runs)" in (
        human.stdout
    )
